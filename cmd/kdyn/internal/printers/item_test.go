package printers

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStripManagedFieldsJSON(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"middle", `{"metadata":{"name":"a","managedFields":[{"manager":"x","fieldsV1":{"f:data":{}}}],"uid":"u"},"data":{}}`, `{"metadata":{"name":"a","uid":"u"},"data":{}}`},
		{"last", `{"metadata":{"name":"a","managedFields":[{"manager":"x"}]}}`, `{"metadata":{"name":"a"}}`},
		{"first", `{"metadata":{"managedFields":[],"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{"only", `{"metadata":{"managedFields":[{"a":"managedFields"}]}}`, `{"metadata":{}}`},
		{"none", `{"metadata":{"name":"a"},"managedFields":1}`, `{"metadata":{"name":"a"},"managedFields":1}`},
		{"spaced", "{\"metadata\": {\"name\": \"a\", \"managedFields\" : [ {\"m\":1} ] , \"uid\":\"u\"}}", "{\"metadata\": {\"name\": \"a\",  \"uid\":\"u\"}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(StripManagedFieldsJSON([]byte(tt.in)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if !json.Valid([]byte(got)) {
				t.Fatalf("invalid JSON: %s", got)
			}
		})
	}
}
