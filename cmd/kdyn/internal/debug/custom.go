package debug

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// containerFields are the members of a core/v1 Container. kubectl reads
// --custom into that type, so anything else in the file is dropped.
var containerFields = []string{
	"name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
	"resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices",
	"livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
	"terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
}

// mergeKeys are the container's lists that a strategic merge patch merges
// element by element, and the member that identifies an element; the
// container's other lists are replaced whole.
var mergeKeys = map[string]string{
	"ports":         "containerPort",
	"env":           "name",
	"volumeMounts":  "mountPath",
	"volumeDevices": "devicePath",
}

// readCustom reads the partial container of --custom (JSON or YAML) as
// kubectl reads it into a Container: members it does not have are dropped,
// and so are nulls and the zero values it would leave out (false, "", 0,
// empty lists).
func readCustom(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("must pass a container spec json file for custom profile: %w", err)
	}
	j, err := yaml.YAMLToJSON(b)
	var spec map[string]any
	if err == nil {
		d := json.NewDecoder(bytes.NewReader(j))
		d.UseNumber()
		err = d.Decode(&spec)
		if err == nil && spec == nil {
			err = errors.New("not a container: null")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s does not contain a valid container spec: %w", path, err)
	}
	for k, v := range spec {
		if !slices.Contains(containerFields, k) || isZero(v) {
			delete(spec, k)
		}
	}
	dropNulls(spec)
	return spec, nil
}

// checkCustom refuses what --custom may not change, in kubectl's words.
func checkCustom(custom map[string]any) error {
	for _, k := range []string{"name", "command", "image", "lifecycle", "volumeDevices"} {
		if _, ok := custom[k]; ok {
			return errors.New("name, command, image, lifecycle and volume devices are not modifiable via custom profile")
		}
	}
	return nil
}

// isZero reports whether v is a value a Container member leaves out when
// empty.
func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// dropNulls removes null members from the maps in v, recursively.
func dropNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range x {
			dropNulls(e)
		}
	}
}

// mergeCustom merges the custom container into c, as a strategic merge
// patch of a Container does: maps merged member by member, the lists of
// mergeKeys element by element (by their key), other lists and values
// replaced.
func mergeCustom(c, custom map[string]any) error {
	for k, v := range custom {
		if key, ok := mergeKeys[k]; ok {
			merged, err := mergeList(list(c[k]), list(v), key)
			if err != nil {
				return err
			}
			c[k] = merged
			continue
		}
		c[k] = mergeValue(c[k], v)
	}
	return nil
}

// mergeValue is patch merged into original: maps member by member, the
// rest replaced.
func mergeValue(original, patch any) any {
	pm, ok := patch.(map[string]any)
	om, ok2 := original.(map[string]any)
	if !ok || !ok2 {
		return clone(patch)
	}
	for k, v := range pm {
		om[k] = mergeValue(om[k], v)
	}
	return om
}

// clone deep-copies a JSON value (apimachinery's DeepCopyJSONValue), so
// that a merged container shares nothing with the custom profile applied
// to the next.
func clone(v any) any { return runtime.DeepCopyJSONValue(v) }

// keyOf returns the merge key's value of a list element.
func keyOf(e any, key string) (string, bool) {
	m, ok := e.(map[string]any)
	if !ok {
		return "", false
	}
	v, ok := m[key]
	if !ok {
		return "", false
	}
	return fmt.Sprint(v), true
}

// mergeList merges the patch's elements into the original's by key, then
// orders them as strategic merge patch does: the patch's elements in the
// patch's order, with the original's other elements put back among them
// where they stood in the original list.
func mergeList(original, patch []any, key string) ([]any, error) {
	pos := map[string]int{}
	for i, e := range original {
		if k, ok := keyOf(e, key); ok {
			pos[k] = i
		}
	}
	inPatch := map[string]bool{}
	var patched []any
	for _, e := range patch {
		k, ok := keyOf(e, key)
		if !ok {
			return nil, fmt.Errorf("map: %v does not contain declared merge key: %s", e, key)
		}
		inPatch[k] = true
		if i, found := pos[k]; found {
			patched = append(patched, mergeValue(original[i], e))
		} else {
			patched = append(patched, clone(e))
		}
	}
	var serverOnly []any
	for _, e := range original {
		if k, ok := keyOf(e, key); !ok || !inPatch[k] {
			serverOnly = append(serverOnly, e)
		}
	}
	// kubectl's mergeSortedSlice: a server-only element goes before a
	// patch element that came after it in the original list.
	index := func(e any) int {
		k, ok := keyOf(e, key)
		if i, found := pos[k]; ok && found {
			return i
		}
		return -1
	}
	out := make([]any, 0, len(serverOnly)+len(patched))
	i, j := 0, 0
	for i < len(serverOnly) || j < len(patched) {
		switch {
		case j >= len(patched):
			out = append(out, serverOnly[i])
			i++
		case i >= len(serverOnly):
			out = append(out, patched[j])
			j++
		default:
			li, ri := index(serverOnly[i]), index(patched[j])
			if li >= 0 && ri >= 0 && li < ri {
				out = append(out, serverOnly[i])
				i++
			} else {
				out = append(out, patched[j])
				j++
			}
		}
	}
	return out, nil
}
