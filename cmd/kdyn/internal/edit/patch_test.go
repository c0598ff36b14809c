package edit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

func TestDefaultPatchType(t *testing.T) {
	for _, tc := range []struct {
		group string
		state patchCRDState
		want  types.PatchType
	}{
		{"", patchCRDUnknown, types.StrategicMergePatchType},
		{"apps", patchCRDUnknown, types.StrategicMergePatchType},
		{"batch", patchCRDExists, types.StrategicMergePatchType}, // no dot: cannot be a CRD
		{"example.com", patchCRDExists, types.MergePatchType},
		{"example.com", patchCRDMissing, types.StrategicMergePatchType}, // aggregated API
		{"example.com", patchCRDUnknown, types.MergePatchType},
		{"rbac.authorization.k8s.io", patchCRDMissing, types.StrategicMergePatchType},
		{"rbac.authorization.k8s.io", patchCRDUnknown, types.StrategicMergePatchType},
		{"gateway.networking.k8s.io", patchCRDExists, types.MergePatchType},
		{"cluster.x-k8s.io", patchCRDUnknown, types.MergePatchType},
	} {
		t.Run(tc.group+"/"+string(rune('0'+tc.state)), func(t *testing.T) {
			if got := defaultPatchType(tc.group, tc.state); got != tc.want {
				t.Errorf("defaultPatchType(%q, %v) = %s, want %s", tc.group, tc.state, got, tc.want)
			}
		})
	}
}

func TestValidatePatchFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    patchOptions
		want string // error substring; "" = valid
	}{
		{"ok", patchOptions{patch: "{}"}, ""},
		{"none", patchOptions{}, "must specify --patch or --patch-file containing the contents of the patch"},
		{"both", patchOptions{patch: "{}", patchFile: "x"}, "cannot specify --patch and --patch-file together"},
		{"bad type", patchOptions{patch: "{}", patchType: "xml"}, `--type must be one of [apply json merge strategic], not "xml"`},
		{"type case", patchOptions{patch: "{}", patchType: "JSON"}, ""},
		{"bad subresource", patchOptions{patch: "{}", subresource: "log"}, `invalid subresource value: "log". Must be one of [status scale]`},
		{"apply without manager", patchOptions{patch: "{}", patchType: "apply"}, "--field-manager"},
		{"apply", patchOptions{patch: "{}", patchType: "apply", fieldManager: "m"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validatePatchFlags(&tc.o)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
			if _, ok := err.(*cli.UsageError); !ok {
				t.Errorf("error %T is not a usage error", err)
			}
		})
	}
}

func TestReadPatch(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`{"spec":{"replicas":2}}`, `{"spec":{"replicas":2}}`},
		{"spec:\n  replicas: 2\n", `{"spec":{"replicas":2}}`},
		{"- op: remove\n  path: /a\n", `[{"op":"remove","path":"/a"}]`},
	} {
		typ := ""
		if strings.HasPrefix(tc.in, "-") {
			typ = "json"
		}
		got, err := readPatch(&patchOptions{patch: tc.in, patchType: typ}, nil)
		if err != nil {
			t.Fatalf("readPatch(%q): %v", tc.in, err)
		}
		if string(got) != tc.want {
			t.Errorf("readPatch(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if _, err := readPatch(&patchOptions{patch: "a: [b"}, nil); err == nil || !strings.Contains(err.Error(), "unable to parse") {
		t.Errorf("bad YAML: err = %v", err)
	}
	if _, err := readPatch(&patchOptions{patchFile: "-"}, strings.NewReader("data:\n  x: y\n")); err != nil {
		t.Errorf("--patch-file -: %v", err)
	}
}

// A patch no patch type accepts, or one --type does not, is refused before
// anything is sent, naming what is wrong.
func TestReadPatchShape(t *testing.T) {
	for _, tc := range []struct {
		patch, typ, want string
	}{
		{"notjson", "", `not "notjson"`},
		{"42", "merge", "not 42"},
		{`[{"op":"remove","path":"/a"}]`, "", "add --type=json"},
		{`[{"op":"remove","path":"/a"}]`, "merge", "a merge patch is an object"},
		{`{"spec":{}}`, "json", "is a list of operations"},
	} {
		_, err := readPatch(&patchOptions{patch: tc.patch, patchType: tc.typ}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("readPatch(%q, --type=%s) error = %v, want %q", tc.patch, tc.typ, err, tc.want)
		}
		if _, ok := err.(*cli.UsageError); !ok {
			t.Errorf("readPatch(%q): error %T is not a usage error", tc.patch, err)
		}
	}
	if _, err := readPatch(&patchOptions{patch: `{"spec":{}}`, patchType: "Apply"}, nil); err != nil {
		t.Errorf("an object as an apply patch: %v", err)
	}
}

func TestFillApplyTypeMeta(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	got, err := fillApplyTypeMeta([]byte(`{"data":{"a":"1"}}`), live)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap"}`, string(got)); diff != "" {
		t.Error(diff)
	}
	same := []byte(`{"apiVersion":"v2","kind":"X"}`)
	if got, _ := fillApplyTypeMeta(same, live); string(got) != string(same) {
		t.Errorf("a complete patch was changed: %s", got)
	}
	if _, err := fillApplyTypeMeta([]byte(`[1]`), live); err == nil {
		t.Error("a list was accepted as an apply patch")
	}
}

func TestPatchChanged(t *testing.T) {
	obj := func(rv, val, mfTime string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "x", "resourceVersion": rv, "managedFields": []any{map[string]any{"time": mfTime}}},
			"data":     map[string]any{"a": val},
		}}
	}
	for _, tc := range []struct {
		name          string
		before, after *unstructured.Unstructured
		dry, want     bool
	}{
		{"same rv", obj("1", "a", "t1"), obj("1", "a", "t1"), false, false},
		{"new rv", obj("1", "a", "t1"), obj("2", "b", "t2"), false, true},
		{"dry same", obj("1", "a", "t1"), obj("1", "a", "t2"), true, false},
		{"dry changed", obj("1", "a", "t1"), obj("1", "b", "t1"), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := patchChanged(tc.before, tc.after, tc.dry); got != tc.want {
				t.Errorf("patchChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
