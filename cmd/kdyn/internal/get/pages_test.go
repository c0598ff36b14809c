package get

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEachListItemFillsKindAndStrips(t *testing.T) {
	page := []byte(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"continue":"c1"},"items":[
		{"metadata":{"name":"a","managedFields":[{"manager":"m"}]},"data":{"k":"v"}},
		{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}},
		{}]}`)
	var got []string
	cont, err := eachListItem(page, false, func(raw []byte) bool {
		got = append(got, string(raw))
		return true
	})
	if err != nil || cont != "c1" {
		t.Fatalf("continue %q, %v", cont, err)
	}
	want := []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if _, err := eachListItem([]byte(`{"items":[`), false, func([]byte) bool { return true }); err == nil {
		t.Fatal("invalid JSON accepted")
	}
}
