package unstructured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Doc is what the patch helpers take and give back: raw JSON, an
// unstructured object, or an unstructured object's map. The apply helpers
// return the type they were given.
type Doc interface {
	[]byte | *apiunstructured.Unstructured | map[string]any
}

// docJSON encodes d. what names the argument in errors.
func docJSON[T Doc](d T, what string) ([]byte, error) {
	switch v := any(d).(type) {
	case []byte:
		if len(bytes.TrimSpace(v)) == 0 {
			return nil, fmt.Errorf("%s: empty document", what)
		}
		return v, nil
	case *apiunstructured.Unstructured:
		if v == nil || v.Object == nil {
			return nil, fmt.Errorf("%s: nil object", what)
		}
		data, err := json.Marshal(v.Object)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return data, nil
	case map[string]any:
		if v == nil {
			return nil, fmt.Errorf("%s: nil object", what)
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return data, nil
	}
	return nil, fmt.Errorf("%s: unsupported type %T", what, d) // unreachable: Doc is closed
}

// docFrom decodes data into a T.
func docFrom[T Doc](data []byte) (T, error) {
	var zero T
	switch any(zero).(type) {
	case []byte:
		return any(data).(T), nil
	case *apiunstructured.Unstructured:
		m, err := decodeObject(data)
		if err != nil {
			return zero, err
		}
		return any(&apiunstructured.Unstructured{Object: m}).(T), nil
	default:
		m, err := decodeObject(data)
		if err != nil {
			return zero, err
		}
		return any(m).(T), nil
	}
}

// checkObjectJSON checks that data is one valid JSON object.
func checkObjectJSON(data []byte, what string) error {
	if !json.Valid(data) {
		return fmt.Errorf("%s: invalid JSON", what)
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); t[0] != '{' {
		return fmt.Errorf("%s: expected a JSON object", what)
	}
	return nil
}

// decodeObject decodes a JSON object into unstructured form (integers as
// int64, other numbers as float64).
func decodeObject(data []byte) (map[string]any, error) {
	var v any
	if err := utiljson.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, found %s", typeName(v))
	}
	return m, nil
}

// MergePatch returns the JSON merge patch (RFC 7386) that turns original
// into modified, as for a PATCH with content type
// application/merge-patch+json. Both must be JSON objects. Lists are
// replaced whole, which is what merge patch can express. json-patch
// compares numbers as written, so 1 and 1.0 count as a change. An empty
// patch is "{}".
func MergePatch[T Doc](original, modified T) ([]byte, error) {
	o, err := docJSON(original, "original")
	if err != nil {
		return nil, fmt.Errorf("unstructured: merge patch: %w", err)
	}
	m, err := docJSON(modified, "modified")
	if err != nil {
		return nil, fmt.Errorf("unstructured: merge patch: %w", err)
	}
	// json-patch assumes valid input (it panics on some invalid JSON) and
	// gives non-RFC results for arrays, so check for two objects first.
	if err := checkObjectJSON(o, "original"); err != nil {
		return nil, fmt.Errorf("unstructured: merge patch: %w", err)
	}
	if err := checkObjectJSON(m, "modified"); err != nil {
		return nil, fmt.Errorf("unstructured: merge patch: %w", err)
	}
	p, err := jsonpatch.CreateMergePatch(o, m)
	if err != nil {
		return nil, fmt.Errorf("unstructured: merge patch: %w", err)
	}
	return p, nil
}

// ApplyMergePatch applies a JSON merge patch (RFC 7386) to doc and returns
// the result as a new value of doc's type; doc is not modified. Like the
// API server, which uses the same library, json-patch also drops nulls
// from maps inside lists of the patch.
func ApplyMergePatch[T Doc](doc T, patch []byte) (T, error) {
	var zero T
	d, err := docJSON(doc, "document")
	if err != nil {
		return zero, fmt.Errorf("unstructured: apply merge patch: %w", err)
	}
	out, err := jsonpatch.MergePatch(d, patch)
	if err != nil {
		return zero, fmt.Errorf("unstructured: apply merge patch: %w", err)
	}
	res, err := docFrom[T](out)
	if err != nil {
		return zero, fmt.Errorf("unstructured: apply merge patch: result: %w", err)
	}
	return res, nil
}

// ApplyJSONPatch applies a JSON patch (RFC 6902) to doc and returns the
// result as a new value of doc's type; doc is not modified. json-patch's
// defaults apply (negative list indexes count from the end; removing a
// missing path is an error).
func ApplyJSONPatch[T Doc](doc T, patch []byte) (T, error) {
	var zero T
	d, err := docJSON(doc, "document")
	if err != nil {
		return zero, fmt.Errorf("unstructured: apply JSON patch: %w", err)
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return zero, fmt.Errorf("unstructured: apply JSON patch: %w", err)
	}
	out, err := p.Apply(d)
	if err != nil {
		return zero, fmt.Errorf("unstructured: apply JSON patch: %w", err)
	}
	res, err := docFrom[T](out)
	if err != nil {
		return zero, fmt.Errorf("unstructured: apply JSON patch: result: %w", err)
	}
	return res, nil
}

// jsonOp is one RFC 6902 operation. Value is omitted for "remove" only: a
// null value is the four bytes "null" and is kept.
type jsonOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// JSONPatch returns a JSON patch (RFC 6902) that turns original into
// modified, as for a PATCH with content type application/json-patch+json.
//
// The patch uses add, remove and replace only. Objects are compared key by
// key, recursively, in sorted key order. Lists are compared element by
// element: elements at the same index are diffed recursively, extra
// elements of modified are added at the end in ascending order, and extra
// elements of original are removed from the end in descending order (so
// each index is valid when its operation runs). An insertion at the front
// of a list therefore shows up as a replace of every element and one add;
// the patch is correct but not minimal. Numbers are compared by value, so
// 1 and 1.0 are equal. A change of type, or of a scalar at the root, is a
// replace (at path "" for the root). A value under an empty key "" is
// replaced whole, since json-patch (and so the API server) cannot step
// through an empty reference token. Keys are escaped as JSON pointers
// (RFC 6901): "~" as "~0" and "/" as "~1". The same inputs always give the
// same bytes; no change gives "[]".
func JSONPatch[T Doc](original, modified T) ([]byte, error) {
	o, err := docJSON(original, "original")
	if err != nil {
		return nil, fmt.Errorf("unstructured: JSON patch: %w", err)
	}
	m, err := docJSON(modified, "modified")
	if err != nil {
		return nil, fmt.Errorf("unstructured: JSON patch: %w", err)
	}
	a, err := decodeExact(o)
	if err != nil {
		return nil, fmt.Errorf("unstructured: JSON patch: original: %w", err)
	}
	b, err := decodeExact(m)
	if err != nil {
		return nil, fmt.Errorf("unstructured: JSON patch: modified: %w", err)
	}
	ops := []jsonOp{}
	if err := diffJSON("", a, b, &ops); err != nil {
		return nil, fmt.Errorf("unstructured: JSON patch: %w", err)
	}
	out, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("unstructured: JSON patch: %w", err)
	}
	return out, nil
}

// decodeExact decodes one JSON value keeping numbers as written.
func decodeExact(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// diffJSON appends to ops the operations that turn a into b at path.
func diffJSON(path string, a, b any, ops *[]jsonOp) error {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + "/" + escapePointer(k)
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inB:
				*ops = append(*ops, jsonOp{Op: "remove", Path: p})
			case !inA:
				if err := appendOp(ops, "add", p, y); err != nil {
					return err
				}
			case k == "":
				// json-patch, which the API server uses too, cannot step
				// through an empty reference token ("/a//b"), so a value
				// under an empty key is replaced whole.
				if !jsonEqual(x, y) {
					if err := appendOp(ops, "replace", p, y); err != nil {
						return err
					}
				}
			default:
				if err := diffJSON(p, x, y, ops); err != nil {
					return err
				}
			}
		}
		return nil
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		n := min(len(av), len(bv))
		for i := range n {
			if err := diffJSON(path+"/"+strconv.Itoa(i), av[i], bv[i], ops); err != nil {
				return err
			}
		}
		for i := n; i < len(bv); i++ {
			if err := appendOp(ops, "add", path+"/"+strconv.Itoa(i), bv[i]); err != nil {
				return err
			}
		}
		for i := len(av) - 1; i >= n; i-- {
			*ops = append(*ops, jsonOp{Op: "remove", Path: path + "/" + strconv.Itoa(i)})
		}
		return nil
	}
	if jsonEqual(a, b) {
		return nil
	}
	return appendOp(ops, "replace", path, b)
}

func appendOp(ops *[]jsonOp, op, path string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return err
	}
	*ops = append(*ops, jsonOp{Op: op, Path: path, Value: raw})
	return nil
}

// pointerEscaper escapes a key as a JSON pointer token (RFC 6901): "~"
// first, so the "~" of "~1" is not escaped again.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func escapePointer(key string) string { return pointerEscaper.Replace(key) }

// jsonEqual compares decoded JSON values, numbers by value.
func jsonEqual(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !jsonEqual(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !jsonEqual(av[i], bv[i]) {
				return false
			}
		}
		return true
	case json.Number:
		bv, ok := b.(json.Number)
		if !ok {
			return false
		}
		if av == bv {
			return true
		}
		x, okA := new(big.Rat).SetString(string(av))
		y, okB := new(big.Rat).SetString(string(bv))
		return okA && okB && x.Cmp(y) == 0
	case string, bool, nil:
		return a == b
	}
	return false
}

// ThreeWayMergePatch computes a JSON merge patch (RFC 7386) for a
// client-side apply of a resource that has no strategic-merge schema, such
// as a custom resource:
//
//   - lastApplied is the configuration applied last time (the
//     last-applied-configuration annotation); it may be empty, as on the
//     first apply;
//   - modified is the configuration to apply now;
//   - live is the object as the server has it.
//
// The patch deletes (sets to null) every field that lastApplied has,
// modified no longer has, and live still has; and it sets every field of
// modified whose live value differs or is missing. Fields that only live
// has (defaults, fields other clients set, status) are left alone. Maps
// are merged recursively; lists and scalars are set whole, as merge patch
// requires. A null in modified deletes the field. Changes that someone
// else made to fields in lastApplied are overwritten, not reported as
// conflicts. An empty patch is "{}".
//
// Applied to live with ApplyMergePatch, the patch yields an object that
// agrees with modified on every field modified sets.
func ThreeWayMergePatch(lastApplied, modified, live []byte) ([]byte, error) {
	var last map[string]any
	if len(bytes.TrimSpace(lastApplied)) > 0 {
		v, err := decodeExact(lastApplied)
		if err != nil {
			return nil, fmt.Errorf("unstructured: three-way merge patch: last applied: %w", err)
		}
		if last, _ = v.(map[string]any); last == nil && v != nil {
			return nil, fmt.Errorf("unstructured: three-way merge patch: last applied: expected a JSON object, found %s", typeName(v))
		}
	}
	mod, err := decodeMap(modified, "modified")
	if err != nil {
		return nil, err
	}
	cur, err := decodeMap(live, "live")
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(threeWay(last, mod, cur))
	if err != nil {
		return nil, fmt.Errorf("unstructured: three-way merge patch: %w", err)
	}
	return out, nil
}

func decodeMap(data []byte, what string) (map[string]any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("unstructured: three-way merge patch: %s: empty document", what)
	}
	v, err := decodeExact(data)
	if err != nil {
		return nil, fmt.Errorf("unstructured: three-way merge patch: %s: %w", what, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("unstructured: three-way merge patch: %s: expected a JSON object, found %s", what, typeName(v))
	}
	return m, nil
}

// threeWay builds the merge patch for one level of maps. last may be nil.
func threeWay(last, mod, live map[string]any) map[string]any {
	patch := map[string]any{}
	for k := range last {
		if _, ok := mod[k]; ok {
			continue
		}
		if _, ok := live[k]; ok {
			patch[k] = nil
		}
	}
	for k, mv := range mod {
		lv, inLive := live[k]
		if mv == nil {
			if inLive {
				patch[k] = nil
			}
			continue
		}
		if mm, ok := mv.(map[string]any); ok {
			if lm, ok := lv.(map[string]any); ok {
				lastSub, _ := last[k].(map[string]any)
				if sub := threeWay(lastSub, mm, lm); len(sub) > 0 {
					patch[k] = sub
				}
				continue
			}
		}
		if !inLive || !jsonEqual(mv, lv) {
			patch[k] = mv
		}
	}
	return patch
}
