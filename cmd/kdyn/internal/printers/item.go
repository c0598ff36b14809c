package printers

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Item is one object to print: its compact JSON, decoded only when a
// printer needs the object.
type Item struct {
	raw []byte
	obj *unstructured.Unstructured
}

// ItemFromRaw wraps an object's compact JSON.
func ItemFromRaw(raw []byte) *Item { return &Item{raw: raw} }

// ItemFromObject wraps a decoded object.
func ItemFromObject(obj *unstructured.Unstructured) *Item { return &Item{obj: obj} }

// ItemFromRawObject wraps a value's compact JSON and its decoded form, for
// values that are not Kubernetes objects (a watch event has no kind) and
// so cannot be decoded from raw.
func ItemFromRawObject(raw []byte, obj *unstructured.Unstructured) *Item {
	return &Item{raw: raw, obj: obj}
}

// Raw returns the object's JSON.
func (it *Item) Raw() ([]byte, error) {
	if it.raw == nil {
		b, err := json.Marshal(it.obj.Object)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", it.obj.GetName(), err)
		}
		it.raw = b
	}
	return it.raw, nil
}

// Object returns the decoded object.
func (it *Item) Object() (*unstructured.Unstructured, error) {
	if it.obj == nil {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(it.raw); err != nil {
			return nil, fmt.Errorf("decode object: %w", err)
		}
		it.obj = u
	}
	return it.obj, nil
}

// Printer writes objects. Begin is called once, with single=true when the
// objects are printed alone rather than as a List (a command that names
// exactly one object, or one that prints its objects one after the other
// as kubectl's rollout history does), then Print once per object, then
// Finish.
type Printer interface {
	Begin(single bool) error
	Print(it *Item) error
	Finish() error
}

// StripManagedFieldsJSON removes metadata.managedFields from an object's
// JSON in place, without decoding it (and so keeping the order of the other
// members). kubectl hides managedFields in -o json and yaml.
func StripManagedFieldsJSON(b []byte) []byte {
	r := gjson.GetBytes(b, "metadata.managedFields")
	if !r.Exists() || r.Index <= 0 {
		return b
	}
	end := r.Index + len(r.Raw)
	key := bytes.LastIndex(b[:r.Index], []byte(`"managedFields"`))
	if key < 0 {
		return b
	}
	// Take a following comma, or else a preceding one.
	j := end
	for j < len(b) && isSpace(b[j]) {
		j++
	}
	start := key
	if j < len(b) && b[j] == ',' {
		end = j + 1
	} else {
		i := key - 1
		for i >= 0 && isSpace(b[i]) {
			i--
		}
		if i >= 0 && b[i] == ',' {
			start = i
		}
	}
	return append(b[:start], b[end:]...)
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }
