package wire

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDecodePartialObjectMetadataMatchesEncodingJSON(t *testing.T) {
	docs := []string{
		`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","generateName":"a-","namespace":"ns","uid":"u1","resourceVersion":"12","generation":3,
		  "creationTimestamp":"2026-12-02T15:16:04Z","deletionTimestamp":"2026-12-02T16:00:00Z","deletionGracePeriodSeconds":30,
		  "labels":{"app":"web","tier":"fe"},"annotations":{"x":"y"},"finalizers":["f1","f2"],
		  "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u0","controller":true,"blockOwnerDeletion":false}],
		  "managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","time":"2026-12-02T15:16:04Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{}}}}]}}`,
		`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b"},"data":{"k":"v"}}`,
		`{"kind":"X","apiVersion":"v1"}`,
	}
	for _, d := range docs {
		var want metav1.PartialObjectMetadata
		if err := json.Unmarshal([]byte(d), &want); err != nil {
			t.Fatal(err)
		}
		got, err := DecodePartialObjectMetadata([]byte(d), true)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, *got); diff != "" {
			t.Errorf("(-encoding/json +fast):\n%s", diff)
		}
		stripped, _ := DecodePartialObjectMetadata([]byte(d), false)
		if stripped.ManagedFields != nil {
			t.Error("managedFields kept")
		}
	}
}
