package unstructured

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// This file adds path-string field access to the map of an unstructured
// object. apimachinery's NestedString, NestedInt64, NestedBool, NestedFloat64,
// NestedSlice, NestedStringSlice, NestedMap, NestedStringMap, SetNestedField
// and RemoveNestedField (package k8s.io/apimachinery/pkg/apis/meta/v1/unstructured)
// already cover field lists that name map keys only; use them when that is
// enough. What is added here: one path string (as taken from a flag or a
// config file), escaped dots in keys, and list indexes.

// component is one parsed element of a field path.
type component struct {
	key     string // the map key (unescaped), or the digits of an index
	index   int    // the list index; -1 when the component cannot be an index
	bracket bool   // written as [N]: it must address a list
	end     int    // offset in the path just after this component
}

// fieldPath is a parsed field path. text is the path without a leading dot.
type fieldPath struct {
	text  string
	comps []component
}

// parsePath splits a field path into components. See Get for the syntax.
func parsePath(path string) (*fieldPath, error) {
	text := strings.TrimPrefix(path, ".")
	skew := len(path) - len(text) // offsets in errors count from path's start
	if text == "" {
		return nil, fmt.Errorf("unstructured: invalid path %q: empty path", path)
	}
	p := &fieldPath{text: text}
	i := 0
	for {
		if text[i] == '[' {
			j := strings.IndexByte(text[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("unstructured: invalid path %q: unclosed '[' at offset %d", path, i+skew)
			}
			digits := text[i+1 : i+j]
			n := parseIndex(digits)
			if n < 0 {
				return nil, fmt.Errorf("unstructured: invalid path %q: list index %q at offset %d is not a non-negative integer", path, digits, i+skew)
			}
			i += j + 1
			p.comps = append(p.comps, component{key: digits, index: n, bracket: true, end: i})
		} else {
			var key strings.Builder
			for i < len(text) && text[i] != '.' && text[i] != '[' {
				if text[i] == '\\' {
					if i+1 >= len(text) {
						return nil, fmt.Errorf("unstructured: invalid path %q: trailing backslash", path)
					}
					i++
				}
				key.WriteByte(text[i])
				i++
			}
			if key.Len() == 0 {
				return nil, fmt.Errorf("unstructured: invalid path %q: empty field name at offset %d", path, i+skew)
			}
			k := key.String()
			p.comps = append(p.comps, component{key: k, index: parseIndex(k), end: i})
		}
		if i == len(text) {
			return p, nil
		}
		switch text[i] {
		case '.':
			i++
			if i == len(text) {
				return nil, fmt.Errorf("unstructured: invalid path %q: empty field name at offset %d", path, i+skew)
			}
		case '[':
		default:
			return nil, fmt.Errorf("unstructured: invalid path %q: expected '.' or '[' after ']' at offset %d", path, i+skew)
		}
	}
}

// parseIndex returns the list index that s spells, or -1.
func parseIndex(s string) int {
	if s == "" || len(s) > 9 {
		return -1
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// prefix is the path up to and including component i, as written; for
// i < 0 (the root object) it is empty.
func (p *fieldPath) prefix(i int) string {
	if i < 0 {
		return ""
	}
	return p.text[:p.comps[i].end]
}

// String is the full path with a leading dot, for error messages.
func (p *fieldPath) String() string { return "." + p.text }

// typeErr reports that the value at component i was not of the wanted kind.
func (p *fieldPath) typeErr(i int, want string, found any) error {
	if i < 0 {
		return fmt.Errorf("unstructured: %s: expected %s at the root, found %s", p, want, typeName(found))
	}
	return fmt.Errorf("unstructured: %s: expected %s at %q, found %s", p, want, p.prefix(i), typeName(found))
}

// typeName names the JSON kind of v, or its Go type when it is not a JSON value.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "map"
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "bool"
	case int64:
		return "int64"
	case float64:
		return "float64"
	case json.Number:
		return "number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// Get returns the value at path in obj, without copying it: maps and
// slices in the result are shared with obj.
//
// A path is a dot-separated list of map keys, for example
// "spec.template.spec.containers". An optional leading dot is ignored.
// A backslash escapes the next character, so keys containing dots are
// written "metadata.labels.app\.kubernetes\.io/name" (in a Go string
// literal, double the backslashes or use a raw string). List elements are
// addressed by index, either as a bracket "spec.containers[0].image" or as
// a dotted number "spec.containers.0.image"; a dotted number is a map key
// when the value at that point is a map (for example a ConfigMap's
// "data.0"), and a bracket always requires a list.
//
// found is false, with a nil error, when a key is missing, a list index is
// out of range, or a value on the way is null. The error is non-nil when
// the path is malformed or a value on the way has the wrong type; it names
// the full path and the element that was wrong, for example
// `unstructured: .spec.replicas.x: expected map at "spec.replicas", found int64`.
func Get(obj map[string]any, path string) (value any, found bool, err error) {
	p, err := parsePath(path)
	if err != nil {
		return nil, false, err
	}
	return p.get(obj)
}

func (p *fieldPath) get(obj map[string]any) (any, bool, error) {
	var cur any = obj
	for i, c := range p.comps {
		if cur == nil {
			return nil, false, nil
		}
		switch v := cur.(type) {
		case map[string]any:
			if c.bracket {
				return nil, false, p.typeErr(i-1, "list", v)
			}
			next, ok := v[c.key]
			if !ok {
				return nil, false, nil
			}
			cur = next
		case []any:
			if c.index < 0 {
				return nil, false, p.typeErr(i-1, "map", v)
			}
			if c.index >= len(v) {
				return nil, false, nil
			}
			cur = v[c.index]
		default:
			return nil, false, p.typeErr(i-1, containerWanted(c), v)
		}
	}
	return cur, true, nil
}

// containerWanted names the kind of container that component c addresses.
func containerWanted(c component) string {
	switch {
	case c.bracket:
		return "list"
	case c.index >= 0:
		return "map or list"
	default:
		return "map"
	}
}

// Set stores value at path in obj, creating missing maps on the way (and a
// list, for a bracket index "[0]" under a missing key). A null on the way
// is replaced as if missing. For lists, an index equal to the list's
// length appends; a larger index is an error. The path syntax is Get's.
//
// value is stored as a JSON-compatible copy, so the object stays valid for
// apimachinery's DeepCopy and JSON encoding: Go integers become int64,
// float32 becomes float64, map[string]any and []any are copied, and other
// types (structs, []string, map[string]string, ...) are converted through
// encoding/json. An error is returned when that conversion fails.
func Set(obj map[string]any, path string, value any) error {
	if obj == nil {
		return fmt.Errorf("unstructured: set %s: nil object", "."+strings.TrimPrefix(path, "."))
	}
	p, err := parsePath(path)
	if err != nil {
		return err
	}
	v, err := toJSONValue(value)
	if err != nil {
		return fmt.Errorf("unstructured: set %s: %w", p, err)
	}
	_, err = p.set(obj, 0, v)
	return err
}

// set stores value under cur at components i.. and returns the container
// to store in the parent (a list may have grown).
func (p *fieldPath) set(cur any, i int, value any) (any, error) {
	c := p.comps[i]
	last := i == len(p.comps)-1
	child := func(existing any, ok bool) (any, error) {
		if last {
			return value, nil
		}
		if !ok || existing == nil {
			if p.comps[i+1].bracket {
				existing = []any{}
			} else {
				existing = map[string]any{}
			}
		}
		return p.set(existing, i+1, value)
	}
	switch v := cur.(type) {
	case map[string]any:
		if c.bracket {
			return nil, p.typeErr(i-1, "list", v)
		}
		existing, ok := v[c.key]
		next, err := child(existing, ok)
		if err != nil {
			return nil, err
		}
		v[c.key] = next
		return v, nil
	case []any:
		if c.index < 0 {
			return nil, p.typeErr(i-1, "map", v)
		}
		switch {
		case c.index < len(v):
			next, err := child(v[c.index], true)
			if err != nil {
				return nil, err
			}
			v[c.index] = next
			return v, nil
		case c.index == len(v):
			next, err := child(nil, false)
			if err != nil {
				return nil, err
			}
			return append(v, next), nil
		default:
			return nil, fmt.Errorf("unstructured: %s: index %d out of range for %q (length %d)", p, c.index, p.prefix(i-1), len(v))
		}
	default:
		return nil, p.typeErr(i-1, containerWanted(c), v)
	}
}

// Remove deletes the value at path from obj: a map key is deleted, a list
// element is cut out (later elements move down; the list is copied, so
// other holders of the old slice are not affected). removed is false, with
// a nil error, when there was nothing to remove. The path syntax is Get's.
func Remove(obj map[string]any, path string) (removed bool, err error) {
	p, err := parsePath(path)
	if err != nil {
		return false, err
	}
	parentPath := &fieldPath{text: p.text, comps: p.comps[:len(p.comps)-1]}
	var parent any = obj
	if len(parentPath.comps) > 0 {
		v, found, err := parentPath.get(obj)
		if err != nil || !found {
			// The error names the full path: report it with p's text.
			if err != nil {
				return false, err
			}
			return false, nil
		}
		parent = v
	}
	i := len(p.comps) - 1
	c := p.comps[i]
	switch v := parent.(type) {
	case nil:
		return false, nil
	case map[string]any:
		if c.bracket {
			return false, p.typeErr(i-1, "list", v)
		}
		if _, ok := v[c.key]; !ok {
			return false, nil
		}
		delete(v, c.key)
		return true, nil
	case []any:
		if c.index < 0 {
			return false, p.typeErr(i-1, "map", v)
		}
		if c.index >= len(v) {
			return false, nil
		}
		shorter := make([]any, 0, len(v)-1)
		shorter = append(shorter, v[:c.index]...)
		shorter = append(shorter, v[c.index+1:]...)
		if i == 0 {
			// Unreachable: the root is a map.
			return false, nil
		}
		if _, err := (&fieldPath{text: p.text, comps: p.comps[:i]}).set(obj, 0, shorter); err != nil {
			return false, err
		}
		return true, nil
	default:
		return false, p.typeErr(i-1, containerWanted(c), v)
	}
}

// toJSONValue converts v to the value types that unstructured objects hold
// (map[string]any, []any, string, int64, float64, bool, nil), copying maps
// and slices.
func toJSONValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool, int64:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v is not a JSON number", x)
		}
		return x, nil
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint:
		return uintValue(uint64(x))
	case uint64:
		return uintValue(x)
	case float32:
		return toJSONValue(float64(x))
	case json.Number:
		var out any
		if err := utiljson.Unmarshal([]byte(x), &out); err != nil {
			return nil, fmt.Errorf("invalid number %q", string(x))
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := toJSONValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := toJSONValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out, nil
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out, nil
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var out any
		if err := utiljson.Unmarshal(data, &out); err != nil {
			return nil, err
		}
		return out, nil
	}
}

func uintValue(u uint64) (any, error) {
	if u > math.MaxInt64 {
		return nil, fmt.Errorf("%d overflows int64", u)
	}
	return int64(u), nil
}

// GetString returns the string at path (see Get). found is false when the
// field is missing or null; a value of another type is an error.
func GetString(obj map[string]any, path string) (string, bool, error) {
	v, found, err := getTyped(obj, path)
	if !found || err != nil {
		return "", found, err
	}
	s, ok := v.(string)
	if !ok {
		return "", false, wrongType(path, "string", v)
	}
	return s, true, nil
}

// GetBool returns the bool at path (see Get). found is false when the field
// is missing or null; a value of another type is an error.
func GetBool(obj map[string]any, path string) (bool, bool, error) {
	v, found, err := getTyped(obj, path)
	if !found || err != nil {
		return false, found, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, false, wrongType(path, "bool", v)
	}
	return b, true, nil
}

// GetInt64 returns the integer at path (see Get). It accepts int64 (what
// JSON decoding into an unstructured object yields for integers), other Go
// integer types, json.Number, and a float64 with an integral value in
// range. found is false when the field is missing or null.
func GetInt64(obj map[string]any, path string) (int64, bool, error) {
	v, found, err := getTyped(obj, path)
	if !found || err != nil {
		return 0, found, err
	}
	switch x := v.(type) {
	case int64:
		return x, true, nil
	case int:
		return int64(x), true, nil
	case int32:
		return int64(x), true, nil
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true, nil
		}
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x), true, nil
		}
	}
	return 0, false, wrongType(path, "integer", v)
}

// GetFloat64 returns the number at path (see Get) as a float64. Integers
// are accepted too, since JSON decoding turns 1.0 into int64(1). found is
// false when the field is missing or null.
func GetFloat64(obj map[string]any, path string) (float64, bool, error) {
	v, found, err := getTyped(obj, path)
	if !found || err != nil {
		return 0, found, err
	}
	switch x := v.(type) {
	case float64:
		return x, true, nil
	case int64:
		return float64(x), true, nil
	case int:
		return float64(x), true, nil
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f, true, nil
		}
	}
	return 0, false, wrongType(path, "number", v)
}

// GetMap returns the map at path (see Get), shared with obj. found is false
// when the field is missing or null.
func GetMap(obj map[string]any, path string) (map[string]any, bool, error) {
	v, found, err := getTyped(obj, path)
	if !found || err != nil {
		return nil, found, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false, wrongType(path, "map", v)
	}
	return m, true, nil
}

// GetSlice returns the list at path (see Get), shared with obj. found is
// false when the field is missing or null.
func GetSlice(obj map[string]any, path string) ([]any, bool, error) {
	v, found, err := getTyped(obj, path)
	if !found || err != nil {
		return nil, found, err
	}
	s, ok := v.([]any)
	if !ok {
		return nil, false, wrongType(path, "list", v)
	}
	return s, true, nil
}

// GetStringSlice returns a copy of the list of strings at path (see Get).
// found is false when the field is missing or null; a list holding a
// non-string is an error naming the element.
func GetStringSlice(obj map[string]any, path string) ([]string, bool, error) {
	s, found, err := GetSlice(obj, path)
	if !found || err != nil {
		return nil, found, err
	}
	out := make([]string, len(s))
	for i, e := range s {
		str, ok := e.(string)
		if !ok {
			return nil, false, fmt.Errorf("unstructured: .%s[%d]: expected string, found %s", strings.TrimPrefix(path, "."), i, typeName(e))
		}
		out[i] = str
	}
	return out, true, nil
}

// getTyped is Get with null reported as not found.
func getTyped(obj map[string]any, path string) (any, bool, error) {
	v, found, err := Get(obj, path)
	if err != nil || !found || v == nil {
		return nil, false, err
	}
	return v, true, nil
}

func wrongType(path, want string, found any) error {
	return fmt.Errorf("unstructured: .%s: expected %s, found %s", strings.TrimPrefix(path, "."), want, typeName(found))
}
