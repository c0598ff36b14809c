package edit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// patchLocally computes what a patch would make of obj without the server,
// for patch --dry-run=client, as kubectl does: a JSON patch or a JSON merge
// patch applied by json-patch. A strategic merge patch can be computed
// here only where it means the same as a merge patch — no lists and no
// "$" directives, the lists being what strategic merge treats by their
// keys, which only the type's schema knows; a server-side apply patch
// never. For those, --dry-run=server asks the server.
func patchLocally(obj *unstructured.Unstructured, pt types.PatchType, patch []byte, gvk string) (*unstructured.Unstructured, error) {
	switch pt {
	case types.JSONPatchType:
		return kunstructured.ApplyJSONPatch(obj, patch)
	case types.MergePatchType:
		return kunstructured.ApplyMergePatch(obj, patch)
	case types.StrategicMergePatchType:
		var doc any
		if err := json.Unmarshal(patch, &doc); err != nil {
			return nil, err
		}
		if mergeEquivalent(doc) {
			return kunstructured.ApplyMergePatch(obj, patch)
		}
		return nil, schemaError{fmt.Errorf("a strategic merge patch with lists or $ directives cannot be computed locally for %s (how lists merge is in the type's schema): use --dry-run=server, or --type merge", gvk)}
	}
	return nil, errors.New("a server-side apply patch (--type apply) cannot be computed locally: use --dry-run=server")
}

// errNeedsSchema marks a strategic merge patch that only the type's schema
// (the server's) can apply: errors.Is finds it in a schemaError.
var errNeedsSchema = errors.New("the patch needs the type's schema")

// schemaError is an error that is errNeedsSchema, in its own words.
type schemaError struct{ error }

func (schemaError) Is(target error) bool { return target == errNeedsSchema }

// mergeEquivalent reports whether a strategic merge patch means what the
// same JSON merge patch means: objects all the way down, with no list and
// no key starting with "$".
func mergeEquivalent(v any) bool {
	switch x := v.(type) {
	case []any:
		return false
	case map[string]any:
		for k, e := range x {
			if strings.HasPrefix(k, "$") || !mergeEquivalent(e) {
				return false
			}
		}
	}
	return true
}

// sameJSON reports whether two objects encode to the same JSON.
func sameJSON(a, b *unstructured.Unstructured) (bool, error) {
	x, err := json.Marshal(a.Object)
	if err != nil {
		return false, err
	}
	y, err := json.Marshal(b.Object)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}
