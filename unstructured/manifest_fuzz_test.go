package unstructured

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecodeManifests feeds arbitrary bytes to the manifest decoder. It must
// never panic, every object it yields must have a string apiVersion and
// kind and survive apimachinery's DeepCopy and JSON encoding, every error
// must be a *DocumentError with a positive document number, and
// DecodeManifests must agree with Manifests.
//
// The seed corpus is in testdata/fuzz/FuzzDecodeManifests; inputs the
// fuzzer found failing are kept there too.
func FuzzDecodeManifests(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Secret\n"))
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"A"}]}{"kind":"B"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var objs, errs int
		for doc, err := range Manifests(bytes.NewReader(data), "fuzz") {
			if doc.Index < 1 || doc.Line < 1 || doc.Item < 0 {
				t.Fatalf("bad position %+v (error %v)", doc, err)
			}
			if err != nil {
				var de *DocumentError
				if !errors.As(err, &de) {
					t.Fatalf("error is %T: %v", err, err)
				}
				if doc.Object != nil {
					t.Fatalf("object beside error %v", err)
				}
				_ = err.Error()
				errs++
				continue
			}
			objs++
			obj := doc.Object
			if obj == nil || obj.GetAPIVersion() == "" || obj.GetKind() == "" {
				t.Fatalf("object without type: %v", obj)
			}
			obj.DeepCopy()
			if _, err := json.Marshal(obj.Object); err != nil {
				t.Fatalf("object does not encode: %v", err)
			}
		}
		got, err := DecodeManifests(bytes.NewReader(data), "fuzz")
		var de DocumentErrors
		if len(got) != objs || (errs == 0) != (err == nil) || (err != nil && (!errors.As(err, &de) || len(de) != errs)) {
			t.Fatalf("DecodeManifests: %d objects, error %v; Manifests: %d objects, %d errors", len(got), err, objs, errs)
		}
	})
}
