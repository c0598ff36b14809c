package dynamic

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/internal/fastjson"
)

// DecodeObject decodes one object from JSON in a single pass, with
// apimachinery's number rule (integers as int64, others as float64). Keys
// and short values are interned process-wide, so decoded objects share
// them ("apiVersion", label keys, "v1", namespaces).
func DecodeObject(data []byte) (*unstructured.Unstructured, error) {
	m, err := fastjson.DecodeObjectShared(data)
	if err != nil {
		return nil, errorf("decode object: %w", err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// DecodeList decodes a list from JSON in a single pass. Items whose
// apiVersion and kind are both empty get them from the list (kind without
// its "List" suffix), and Items is never nil, as with apimachinery's
// decoder.
func DecodeList(data []byte) (*unstructured.UnstructuredList, error) {
	l := &unstructured.UnstructuredList{}
	err := decodeList(data, func(fields map[string]any, n int) {
		l.Object = fields
		// Never nil, as apimachinery's decoder leaves it: an empty list
		// equals client-go's.
		l.Items = make([]unstructured.Unstructured, 0, n)
	}, func(obj map[string]any) error {
		l.Items = append(l.Items, unstructured.Unstructured{Object: obj})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if l.Object == nil {
		l.Object = map[string]any{}
	}
	return l, nil
}

// DecodeListFunc decodes a list from JSON in a single pass, calling meta
// with the list's metadata and then each for every item (apiVersion and
// kind filled in from the list when both are empty, as in DecodeList). An
// error from each stops decoding and is returned.
func DecodeListFunc(data []byte, meta func(metav1.ListMeta), each func(*unstructured.Unstructured) error) error {
	return decodeList(data, func(fields map[string]any, _ int) {
		if meta == nil {
			return
		}
		l := unstructured.UnstructuredList{Object: fields}
		meta(metav1.ListMeta{ResourceVersion: l.GetResourceVersion(), Continue: l.GetContinue(), RemainingItemCount: l.GetRemainingItemCount()})
	}, func(obj map[string]any) error {
		return each(&unstructured.Unstructured{Object: obj})
	})
}

func decodeList(data []byte, fields func(list map[string]any, items int), item func(map[string]any) error) error {
	var items []map[string]any
	list, err := fastjson.DecodeListShared(data, func(i int, obj map[string]any) error {
		items = append(items, obj)
		return nil
	})
	if err != nil {
		return errorf("decode list: %w", err)
	}
	apiVersion, _ := list["apiVersion"].(string)
	listKind, _ := list["kind"].(string)
	kind := strings.TrimSuffix(listKind, "List")
	fields(list, len(items))
	for i, obj := range items {
		// As apimachinery's UnstructuredJSONScheme: an item whose kind and
		// apiVersion are both empty (or absent, or not strings) takes the
		// list's.
		if k, _ := obj["kind"].(string); k == "" {
			if av, _ := obj["apiVersion"].(string); av == "" {
				obj["apiVersion"] = apiVersion
				obj["kind"] = kind
			}
		}
		if err := item(obj); err != nil {
			return err
		}
		items[i] = nil
	}
	return nil
}
