package fastjson

import (
	"reflect"
	"strings"
	"testing"
)

// withoutManagedFields is the reference: decode everything, then delete
// metadata.managedFields of the object at depth (1 or 2, via "object").
func withoutManagedFields(data []byte, depth int) (map[string]any, error) {
	m, err := DecodeObject(data)
	if err != nil {
		return nil, err
	}
	obj := m
	if depth == 2 {
		for _, v := range m {
			if o, ok := v.(map[string]any); ok {
				if md, ok := o["metadata"].(map[string]any); ok {
					delete(md, "managedFields")
				}
			}
		}
		return m, nil
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	return m, nil
}

func TestOmitManagedFields(t *testing.T) {
	obj := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":[{"manager":"m","fieldsV1":{"f:data":{".":{},"f:k":{}}}}],"labels":{"x":"y"}},"data":{"k":"v"},"spec":{"template":{"metadata":{"managedFields":[1]}}}}`
	got, err := DecodeObjectSharedOmittingManagedFields([]byte(obj), 1)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := withoutManagedFields([]byte(obj), 1)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if _, kept := got["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["managedFields"]; !kept {
		t.Fatal("a nested template's metadata lost its managedFields")
	}
	frame := `{"type":"MODIFIED","object":` + obj + `}`
	got, err = DecodeObjectSharedOmittingManagedFields([]byte(frame), 2)
	if err != nil {
		t.Fatal(err)
	}
	want, _ = withoutManagedFields([]byte(frame), 2)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("frame: got %v\nwant %v", got, want)
	}
	// Depth 1 on a frame leaves the object's managedFields alone.
	got, _ = DecodeObjectSharedOmittingManagedFields([]byte(frame), 1)
	if _, ok := got["object"].(map[string]any)["metadata"].(map[string]any)["managedFields"]; !ok {
		t.Fatal("depth 1 omitted a depth-2 managedFields")
	}
	// Syntax errors inside the omitted value are still errors.
	for _, bad := range []string{
		`{"metadata":{"managedFields":[1,]}}`,
		`{"metadata":{"managedFields":[{"a":}]}}`,
		`{"metadata":{"managedFields":[`,
		`{"metadata":{"managedFields":"` + strings.Repeat("x", 10),
	} {
		if _, err := DecodeObjectSharedOmittingManagedFields([]byte(bad), 1); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := DecodeObjectSharedOmittingManagedFields([]byte(obj), 3); err == nil {
		t.Error("depth 3 accepted")
	}
}

func FuzzOmitManagedFields(f *testing.F) {
	f.Add([]byte(`{"metadata":{"managedFields":[{"a":1}],"name":"x"}}`), uint8(1))
	f.Add([]byte(`{"object":{"metadata":{"managedFields":[],"name":"x"}},"type":"ADDED"}`), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, d uint8) {
		depth := int(d%2) + 1
		got, err := DecodeObjectSharedOmittingManagedFields(data, depth)
		want, wantErr := withoutManagedFields(data, depth)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("omitting: %v; reference: %v", err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("omitting: %v; reference: %v", got, want)
		}
	})
}
