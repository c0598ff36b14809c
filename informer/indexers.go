package informer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/runtime"
)

// LabelIndex indexes objects by the value of one label (objects without the
// label are not indexed).
func LabelIndex[T Object](key string) IndexFunc[T] {
	return func(obj T) ([]string, error) {
		if v, ok := obj.GetLabels()[key]; ok {
			return []string{v}, nil
		}
		return nil, nil
	}
}

// OwnerUIDIndexName is the conventional name of the OwnerUIDIndex.
const OwnerUIDIndexName = "ownerUID"

// OwnerUIDIndex indexes objects by the UIDs of their owner references —
// what a garbage collector uses to find an owner's dependents.
func OwnerUIDIndex[T Object]() IndexFunc[T] {
	return func(obj T) ([]string, error) {
		refs := obj.GetOwnerReferences()
		if len(refs) == 0 {
			return nil, nil
		}
		out := make([]string, 0, len(refs))
		for _, r := range refs {
			out = append(out, string(r.UID))
		}
		return out, nil
	}
}

// GJSONIndex indexes objects by the values a gjson path selects, e.g.
// "spec.nodeName" or "spec.containers.#.image" (each value is an index
// value; strings as they are, other values as JSON). Plain dotted paths,
// with "#" for every element of an array, are evaluated on the decoded
// object directly; other gjson syntax encodes the object to JSON first.
func GJSONIndex[T Object](path string) IndexFunc[T] {
	segs, simple := simplePath(path)
	return func(obj T) ([]string, error) {
		if u, ok := any(obj).(runtime.Unstructured); ok && simple {
			var out []string
			walk(u.UnstructuredContent(), segs, &out)
			return out, nil
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encode for gjson index: %w", err)
		}
		r := gjson.GetBytes(b, path)
		if !r.Exists() {
			return nil, nil
		}
		if r.IsArray() {
			var out []string
			for _, e := range r.Array() {
				out = append(out, resultString(e))
			}
			return out, nil
		}
		return []string{resultString(r)}, nil
	}
}

func resultString(r gjson.Result) string {
	if r.Type == gjson.String {
		return r.Str
	}
	return r.Raw
}

// simplePath splits a gjson path made only of plain keys and "#".
func simplePath(path string) ([]string, bool) {
	if path == "" || strings.ContainsAny(path, `\*?|@()[]{}!=<>%,"`) {
		return nil, false
	}
	segs := strings.Split(path, ".")
	for _, s := range segs {
		if s == "" {
			return nil, false
		}
	}
	return segs, true
}

func walk(v any, segs []string, out *[]string) {
	if len(segs) == 0 {
		switch t := v.(type) {
		case nil:
		case string:
			*out = append(*out, t)
		case map[string]any, []any:
			if b, err := json.Marshal(t); err == nil {
				*out = append(*out, string(b))
			}
		default:
			*out = append(*out, fmt.Sprint(t))
		}
		return
	}
	switch t := v.(type) {
	case map[string]any:
		if next, ok := t[segs[0]]; ok {
			walk(next, segs[1:], out)
		}
	case []any:
		if segs[0] == "#" {
			for _, e := range t {
				walk(e, segs[1:], out)
			}
		} else if n, err := strconv.Atoi(segs[0]); err == nil && n >= 0 && n < len(t) {
			walk(t[n], segs[1:], out)
		}
	}
}
