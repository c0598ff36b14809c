package kubeconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// ErrNoConfig is returned (wrapped) by Resolve when no kubeconfig file
// defines anything, none was named explicitly, and the process is not
// running in a cluster.
var ErrNoConfig = errors.New("kubeconfig: no configuration found")

// NotFoundError reports a context, cluster or user name that the
// kubeconfig does not define, with the names it does define.
type NotFoundError struct {
	// Kind is "context", "cluster" or "user".
	Kind string
	// Name is the missing name.
	Name string
	// ReferencedBy says what asked for it, e.g. `context "dev" in
	// /home/me/.kube/config` or "--cluster"; empty when unknown.
	ReferencedBy string
	// Available lists the defined names of that kind, sorted.
	Available []string
}

// Error returns e.g. `kubeconfig: context "dev" refers to cluster "gone",
// which is not defined; defined clusters: kind, prod`; a --context,
// --cluster or --user that names nothing is worded as kubectl words it:
// `kubeconfig: context was not found for specified context: dev; defined
// contexts: main`.
func (e *NotFoundError) Error() string {
	var b strings.Builder
	b.WriteString("kubeconfig: ")
	// kubectl's words for a flag that names nothing, which scripts look
	// for.
	switch {
	case e.Kind == "context" && e.ReferencedBy == "--context":
		fmt.Fprintf(&b, "context was not found for specified context: %s", e.Name)
	case e.Kind == "cluster" && e.ReferencedBy == "--cluster":
		fmt.Fprintf(&b, "no server found for cluster %q", e.Name)
	case e.Kind == "user" && e.ReferencedBy == "--user":
		fmt.Fprintf(&b, "auth info %q does not exist", e.Name)
	case e.ReferencedBy != "":
		fmt.Fprintf(&b, "%s refers to %s %q, which is not defined", e.ReferencedBy, e.Kind, e.Name)
	default:
		fmt.Fprintf(&b, "%s %q is not defined", e.Kind, e.Name)
	}
	if len(e.Available) == 0 {
		fmt.Fprintf(&b, "; no %ss are defined", e.Kind)
	} else {
		fmt.Fprintf(&b, "; defined %ss: %s", e.Kind, strings.Join(e.Available, ", "))
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// describe names an entry and its file for error messages.
func describe(kind, name, source string) string {
	if source == "" {
		return fmt.Sprintf("%s %q", kind, name)
	}
	return fmt.Sprintf("%s %q in %s", kind, name, source)
}

// typeError rewrites a JSON type error from decoding the kubeconfig j into
// the place of the bad value, as other kubeconfig errors name places
// (`users["alice"].user.token`, `contexts[0].name`), and what belongs
// there. It returns "" when the place cannot be found in j.
func typeError(j []byte, e *json.UnmarshalTypeError) string {
	if e.Field == "" || e.Type == nil {
		return ""
	}
	var doc any
	if json.Unmarshal(j, &doc) != nil {
		return ""
	}
	place, ok := locate(doc, reflect.TypeFor[fileConfig](), strings.Split(e.Field, "."), e.Value, e.Type)
	if !ok {
		return ""
	}
	msg := fmt.Sprintf("%s: %s where %s belongs", strings.TrimPrefix(place, "."), article(e.Value), want(e.Type))
	if e.Type.Kind() == reflect.String && (e.Value == "number" || e.Value == "bool") {
		// YAML reads unquoted 0123, 0x1F, y, no or true as numbers and
		// bools.
		msg += " (YAML read an unquoted value as a " + e.Value + "; quote it)"
	}
	return msg
}

// locate finds, below v (decoded into Go type t), the first value at the
// field path fields (JSON names; lists along the way are searched element
// by element where t has a slice) whose JSON type is value and whose Go
// type is target, and returns its place.
func locate(v any, t reflect.Type, fields []string, value string, target reflect.Type) (string, bool) {
	t, target = deref(t), deref(target)
	if l, ok := v.([]any); ok && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && (len(fields) > 0 || t != target) {
		for i, el := range l {
			if p, ok := locate(el, t.Elem(), fields, value, target); ok {
				idx := fmt.Sprintf("[%d]", i)
				if m, ok := el.(map[string]any); ok {
					if name, ok := m["name"].(string); ok && name != "" && (len(fields) == 0 || fields[0] != "name") {
						idx = fmt.Sprintf("[%q]", name)
					}
				}
				return idx + p, true
			}
		}
		return "", false
	}
	if len(fields) == 0 {
		return "", t == target && jsonType(v) == value
	}
	m, ok := v.(map[string]any)
	if !ok || t.Kind() != reflect.Struct {
		return "", false
	}
	f, ok := jsonField(t, fields[0])
	if !ok {
		return "", false
	}
	next, ok := m[fields[0]]
	if !ok {
		return "", false
	}
	p, ok := locate(next, f.Type, fields[1:], value, target)
	return "." + fields[0] + p, ok
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonField returns the field of struct type t whose JSON name is name.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// jsonType names v's JSON type as json.UnmarshalTypeError.Value does.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// article names a JSON type of a value in words.
func article(value string) string {
	switch value {
	case "array":
		return "a list"
	case "object":
		return "a mapping"
	case "number":
		return "a number"
	case "bool":
		return "a bool"
	case "string":
		return "a string"
	}
	return value
}

// want names in words what a Go type of the kubeconfig's schema takes.
func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Pointer:
		return want(t.Elem())
	}
	return t.String()
}
