package cli

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GVKExtension is the OpenAPI extension that names the kinds a schema or
// an operation is for.
const GVKExtension = "x-kubernetes-group-version-kind"

// ExtensionNamesGVK reports whether the decoded value of a GVKExtension
// (one object or a list of them, with string keys as JSON decodes them or
// any keys as YAML does) names gvk.
func ExtensionNamesGVK(ext any, gvk schema.GroupVersionKind) bool {
	match := func(v any) bool {
		get := func(string) any { return nil }
		switch m := v.(type) {
		case map[string]any:
			get = func(k string) any { return m[k] }
		case map[any]any:
			get = func(k string) any { return m[k] }
		}
		return get("group") == gvk.Group && get("version") == gvk.Version && get("kind") == gvk.Kind
	}
	if l, ok := ext.([]any); ok {
		return slices.ContainsFunc(l, match)
	}
	return match(ext)
}
