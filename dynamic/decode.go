package dynamic

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// DecodeObject decodes one object from JSON.
func DecodeObject(data []byte) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, errorf("decode object: %w", err)
	}
	return u, nil
}

// DecodeList decodes a list from JSON. Items without apiVersion and kind
// get them from the list (kind without its "List" suffix).
func DecodeList(data []byte) (*unstructured.UnstructuredList, error) {
	l := &unstructured.UnstructuredList{}
	if err := l.UnmarshalJSON(data); err != nil {
		return nil, errorf("decode list: %w", err)
	}
	return l, nil
}

func decodeWatchObject(data []byte) (runtime.Object, error) {
	return DecodeObject(data)
}
