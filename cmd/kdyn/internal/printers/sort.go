package printers

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SortKey compiles a --sort-by expression: a kubectl JSONPath
// ("{.metadata.name}" or ".metadata.name") or, when it starts with neither
// "{" nor ".", a gjson path ("metadata.creationTimestamp").
func SortKey(expr string) (func(*unstructured.Unstructured) string, error) {
	e := strings.TrimSpace(expr)
	if e == "" {
		return nil, fmt.Errorf("--sort-by needs an expression")
	}
	if strings.HasPrefix(e, "{") || strings.HasPrefix(e, ".") {
		rel, err := RelaxedJSONPath(e)
		if err != nil {
			return nil, err
		}
		j, err := ParseJSONPath("sort", rel)
		if err != nil {
			return nil, err
		}
		return func(u *unstructured.Unstructured) string {
			v := ColumnValue(j, u.Object)
			if v == "<none>" {
				return ""
			}
			return v
		}, nil
	}
	return func(u *unstructured.Unstructured) string {
		raw, err := u.MarshalJSON()
		if err != nil {
			return ""
		}
		return gjson.GetBytes(raw, e).String()
	}, nil
}

// LessValue orders sort keys: numerically when both are numbers, else as
// strings (RFC 3339 timestamps order correctly as strings).
func LessValue(a, b string) bool {
	fa, ea := strconv.ParseFloat(a, 64)
	fb, eb := strconv.ParseFloat(b, 64)
	if ea == nil && eb == nil {
		return fa < fb
	}
	return a < b
}
