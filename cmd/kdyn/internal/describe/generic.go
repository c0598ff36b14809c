package describe

import (
	"slices"
	"strings"
	"unicode"

	"github.com/fatih/camelcase"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// describeGeneric is kubectl's description of an object of a kind without
// a describer of its own: the metadata kubectl lists first, then every
// field but those (and managedFields) in sorted order, nested by indent.
func describeGeneric(w *writer, obj *unstructured.Unstructured) {
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.write(0, "Namespace:\t%s\n", obj.GetNamespace())
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	fields(w, 0, obj.Object, "", ".metadata.managedFields", ".metadata.name", ".metadata.namespace", ".metadata.labels", ".metadata.annotations")
}

// fields writes content's members sorted by name, skipping the paths in
// skip (".metadata.name", ...); maps and lists nest one level deeper, each
// list element of a map at that level.
func fields(w *writer, level int, content map[string]any, path string, skip ...string) {
	for _, k := range sortedKeys(content) {
		p := path + "." + k
		if slices.Contains(skip, p) {
			continue
		}
		switch v := content[k].(type) {
		case map[string]any:
			w.write(level, "%s:\n", label(k))
			fields(w, level+1, v, p, skip...)
		case []any:
			w.write(level, "%s:\n", label(k))
			for _, item := range v {
				if m, ok := item.(map[string]any); ok {
					fields(w, level+1, m, p, skip...)
				} else {
					w.write(level+1, "%v\n", item)
				}
			}
		default:
			w.write(level, "%s:\t%v\n", label(k), v)
		}
	}
}

// acronyms are written in capitals in labels.
var acronyms = []string{"API", "URL", "UID", "GUID"}

// label turns a field name into kubectl's label: "resourceVersion" is
// "Resource Version", "apiVersion" "API Version", "podIPs" "Pod IPs". A
// name with characters other than letters and '-' is kept as it is.
func label(field string) string {
	if strings.IndexFunc(field, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) >= 0 {
		return field
	}
	parts := camelcase.Split(field)
	var merged []string
	for i := 0; i < len(parts); i++ {
		// "IPs" stays one word: a run of capitals before a capitalized word.
		if i < len(parts)-1 && len(parts[i]) >= 2 && isUpper(parts[i]) && parts[i+1] != "" && unicode.IsUpper(rune(parts[i+1][0])) {
			merged = append(merged, parts[i]+parts[i+1])
			i++
			continue
		}
		merged = append(merged, parts[i])
	}
	var out []string
	for _, p := range merged {
		switch {
		case p == "_":
			continue
		case slices.Contains(acronyms, strings.ToUpper(p)):
			p = strings.ToUpper(p)
		case strings.ToLower(p) == p:
			p = strings.ToUpper(p[:1]) + p[1:]
		}
		out = append(out, p)
	}
	return strings.Join(out, " ")
}

func isUpper(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) && !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}
