package unstructured

import (
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Query runs the gjson path on obj, for example
// Query(pod, "spec.containers.#.image") for every container image, or
// Query(pod, `status.conditions.#(type=="Ready").status`).
// See https://github.com/tidwall/gjson/blob/master/SYNTAX.md for the syntax.
//
// Cost: each call encodes the whole object to JSON once (the same work as
// json.Marshal(obj.Object)) and then scans the bytes. To run several paths
// on one object use QueryMany; to query raw bytes you already have (a
// response body, a watch event) use QueryRaw, which encodes nothing.
//
// A nil object, or one that cannot be encoded (it holds a value that is not
// JSON, such as NaN), yields a Result for which Exists reports false.
func Query(obj *apiunstructured.Unstructured, path string) gjson.Result {
	raw, ok := objectJSON(obj)
	if !ok {
		return gjson.Result{}
	}
	return gjson.GetBytes(raw, path)
}

// QueryMany runs several gjson paths on obj, encoding it once. The results
// are in the order of paths. A nil or unencodable object yields results
// for which Exists reports false.
func QueryMany(obj *apiunstructured.Unstructured, paths ...string) []gjson.Result {
	raw, ok := objectJSON(obj)
	if !ok {
		return make([]gjson.Result, len(paths))
	}
	return gjson.GetManyBytes(raw, paths...)
}

// QueryRaw runs the gjson path on raw JSON without decoding it into a map.
// Invalid JSON gives undefined (but never panicking) results; check it
// with gjson.ValidBytes first when the input is untrusted.
func QueryRaw(raw []byte, path string) gjson.Result {
	return gjson.GetBytes(raw, path)
}

// objectJSON encodes obj's content.
func objectJSON(obj *apiunstructured.Unstructured) ([]byte, bool) {
	if obj == nil || obj.Object == nil {
		return nil, false
	}
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, false
	}
	return raw, true
}

// ValidPath reports whether path is worth handing to gjson, for checking a
// command-line flag before any object is fetched. gjson itself accepts any
// string (a malformed path just matches nothing), so this catches the
// mistakes that would otherwise look like missing data: an empty path, a
// bracket, brace or parenthesis that is not closed or not opened (outside
// double-quoted strings, honouring backslash escapes), an unterminated
// string, and a trailing backslash.
func ValidPath(path string) error {
	if path == "" {
		return fmt.Errorf("unstructured: invalid query path: empty")
	}
	closing := map[byte]byte{'(': ')', '[': ']', '{': '}'}
	var stack []int // offsets of open brackets
	inString := -1  // offset of the opening quote, or -1
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '\\' {
			if i+1 >= len(path) {
				return fmt.Errorf("unstructured: invalid query path %q: trailing backslash", path)
			}
			i++
			continue
		}
		if inString >= 0 {
			if c == '"' {
				inString = -1
			}
			continue
		}
		switch c {
		case '"':
			inString = i
		case '(', '[', '{':
			stack = append(stack, i)
		case ')', ']', '}':
			if len(stack) == 0 {
				return fmt.Errorf("unstructured: invalid query path %q: unbalanced %q at offset %d", path, c, i)
			}
			open := stack[len(stack)-1]
			if closing[path[open]] != c {
				return fmt.Errorf("unstructured: invalid query path %q: %q at offset %d closes %q at offset %d", path, c, i, path[open], open)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if inString >= 0 {
		return fmt.Errorf("unstructured: invalid query path %q: unterminated string at offset %d", path, inString)
	}
	if len(stack) > 0 {
		open := stack[len(stack)-1]
		return fmt.Errorf("unstructured: invalid query path %q: unclosed %q at offset %d", path, path[open], open)
	}
	return nil
}
