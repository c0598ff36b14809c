package apply

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

// applySetIDCase is one parent of testdata/applyset-ids.json. bench's
// applyset test reads the same file and checks every id against kubectl's
// own computation (k8s.io/kubectl/pkg/cmd/apply.ApplySet.ID).
type applySetIDCase struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Group     string `json:"group"`
	ID        string `json:"id"`
}

var applySetIDParents = []applySetIDCase{
	{Name: "web", Namespace: "prod", Kind: "Secret"},
	{Name: "web", Namespace: "prod", Kind: "ConfigMap"},
	{Name: "web", Namespace: "staging", Kind: "Secret"},
	{Name: "platform", Kind: "ClusterSet", Group: "sets.example.com"},
	{Name: "team-a", Namespace: "team-a", Kind: "Bundle", Group: "apps.example.com"},
	{Name: "a.b", Namespace: "c", Kind: "Secret"},
	{Name: "x", Namespace: "", Kind: "Namespace"},
}

func TestApplySetID(t *testing.T) {
	var got []applySetIDCase
	for _, c := range applySetIDParents {
		c.ID = applySetID(c.Name, c.Namespace, schema.GroupKind{Group: c.Group, Kind: c.Kind})
		if !strings.HasPrefix(c.ID, "applyset-") || !strings.HasSuffix(c.ID, "-v1") || len(c.ID) != len("applyset-")+43+len("-v1") {
			t.Errorf("%+v: id %q is not applyset-<43 base64url characters>-v1", c, c.ID)
		}
		if strings.ContainsAny(c.ID, "+/=") {
			t.Errorf("%+v: id %q is not URL-safe base64 without padding", c, c.ID)
		}
		got = append(got, c)
	}
	// The KEP's input is "<name>.<namespace>.<kind>.<group>": a dot in a
	// name can make two parents' inputs equal; the format is the KEP's.
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	clitest.AssertGolden(t, "applyset-ids.json", string(b)+"\n")
	// One value worked out apart, with Python's hashlib and base64:
	// urlsafe_b64encode(sha256(b"web.prod.Secret.").digest()).rstrip("=").
	if want := "applyset-urL2h4aVg3a_edRtK9aAR8zrSuhnmBmUjQFVaar2EI4-v1"; got[0].ID != want {
		t.Errorf("id of secret web in prod = %s, want %s", got[0].ID, want)
	}
}

func mapping(group, version, resource, kind string, namespaced bool) *meta.RESTMapping {
	scope := meta.RESTScopeRoot
	if namespaced {
		scope = meta.RESTScopeNamespace
	}
	return &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Group: group, Version: version, Resource: resource},
		GroupVersionKind: schema.GroupVersionKind{Group: group, Version: version, Kind: kind},
		Scope:            scope,
	}
}

var (
	secretMapping = mapping("", "v1", "secrets", "Secret", true)
	cmMapping     = mapping("", "v1", "configmaps", "ConfigMap", true)
	setMapping    = mapping("sets.example.com", "v1", "clustersets", "ClusterSet", false)
)

// The parent's server-side apply configuration, as kubectl's
// buildParentPatch makes it: superset before applying, latest after
// pruning; additional-namespaces always present, without the parent's own.
func TestParentPatch(t *testing.T) {
	gk := func(s string) schema.GroupKind { return schema.ParseGroupKind(s) }
	ns := func(s ...string) nsSet {
		out := nsSet{}
		for _, n := range s {
			out[n] = struct{}{}
		}
		return out
	}
	var b strings.Builder
	for _, tc := range []struct {
		name   string
		parent parentRef
	}{
		{"namespaced", parentRef{name: "web", namespace: "prod", mapping: secretMapping}},
		{"cluster-scoped", parentRef{name: "platform", mapping: setMapping}},
	} {
		a := newApplySet(tc.parent)
		a.tooling = "kdyn/v9.9.9"
		a.current = gkSet{gk("ConfigMap"): {}, gk("Deployment.apps"): {}}
		a.currentNS = ns("prod", "other")
		a.updated = gkSet{gk("ConfigMap"): {}, gk("Gadget.example.com"): {}}
		a.updatedNS = ns("prod", "team")
		for _, mode := range []struct {
			name string
			m    parentMode
		}{{"superset", parentSuperset}, {"latest", parentLatest}} {
			js, err := json.MarshalIndent(a.parentPatch(mode.m).Object, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("# " + tc.name + ", " + mode.name + "\n" + string(js) + "\n")
		}
		empty := newApplySet(tc.parent)
		empty.tooling = "kdyn/v9.9.9"
		js, _ := json.MarshalIndent(empty.parentPatch(parentLatest).Object, "", "  ")
		b.WriteString("# " + tc.name + ", empty set\n" + string(js) + "\n")
	}
	clitest.AssertGolden(t, "applyset-parent-patch.golden", b.String())
}

func TestToolingBase(t *testing.T) {
	for in, want := range map[string]string{
		"kubectl/v1.37.2":                   "kubectl",
		"kdyn/v0.0.0-dev":                   "kdyn",
		"kubectl/v0.0.0-master+$Format:%H$": "kubectl",
		"example.com/tool/v2":               "example.com/tool",
		"helm":                              "helm",
	} {
		if got := toolingBase(in); got != want {
			t.Errorf("toolingBase(%q) = %q, want %q", in, got, want)
		}
	}
}

// readParent accepts only a parent kdyn may use, with kubectl's checks.
func TestReadParent(t *testing.T) {
	p := parentRef{name: "web", namespace: "prod", mapping: secretMapping}
	id := p.id()
	parent := func(labels, annotations map[string]string) *unstructured.Unstructured {
		u := clitest.Obj("v1", "Secret", "web")
		u.SetNamespace("prod")
		u.SetLabels(labels)
		u.SetAnnotations(annotations)
		return u
	}
	good := map[string]string{
		applySetToolingAnnotation:    "kdyn/v0.1.0",
		applySetGKsAnnotation:        "ConfigMap,Deployment.apps",
		applySetNamespacesAnnotation: "a,,b",
	}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for k, v := range good {
			out[k] = v
		}
		if v == "-" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		wantErr     string
		otherTool   bool
	}{
		{"good", map[string]string{applySetIDLabel: id}, good, "", false},
		{"kubectl's set", map[string]string{applySetIDLabel: id}, with(applySetToolingAnnotation, "kubectl/v1.37.2"),
			`is managed by tooling "kubectl" instead of "kdyn"`, true},
		{"no tooling", map[string]string{applySetIDLabel: id}, with(applySetToolingAnnotation, "-"),
			`is missing required annotation "applyset.kubernetes.io/tooling"`, false},
		{"no id", nil, good, "does not have required label applyset.kubernetes.io/id", false},
		{"wrong id", map[string]string{applySetIDLabel: "applyset-x-v1"}, good, "has incorrect value for label", false},
		{"no kinds", map[string]string{applySetIDLabel: id}, with(applySetGKsAnnotation, "-"), "contains-group-kinds", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newApplySet(p)
			err := a.readParent(parent(tc.labels, tc.annotations))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff("ConfigMap,Deployment.apps", a.current.String()); diff != "" {
					t.Errorf("kinds (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]string{"a", "b", "prod"}, a.currentNS.sorted()); diff != "" {
					t.Errorf("namespaces (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			var ote *otherToolError
			if got := errors.As(err, &ote); got != tc.otherTool {
				t.Errorf("errors.As(err, *otherToolError) = %v", got)
			}
		})
	}
	a := newApplySet(p)
	if err := a.readParent(parent(map[string]string{applySetIDLabel: id}, with(applySetGKsAnnotation, "-"))); err == nil {
		t.Fatal("a parent without kinds was accepted")
	}
	legacy := with(applySetGKsAnnotation, "-")
	legacy[applySetGRsAnnotation] = "configmaps,deployments.apps"
	if err := a.readParent(parent(map[string]string{applySetIDLabel: id}, legacy)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]schema.GroupResource{{Resource: "configmaps"}, {Group: "apps", Resource: "deployments"}}, a.legacyGRs); diff != "" {
		t.Errorf("legacy resources (-want +got):\n%s", diff)
	}
}

func TestParseGroupKinds(t *testing.T) {
	if s := parseGroupKinds(""); len(s) != 0 {
		t.Errorf("empty annotation: %v", s)
	}
	s := parseGroupKinds("Widget.example.com,ConfigMap,Deployment.apps")
	if got := s.String(); got != "ConfigMap,Deployment.apps,Widget.example.com" {
		t.Errorf("round trip: %q", got)
	}
	if _, ok := s[schema.GroupKind{Group: "example.com", Kind: "Widget"}]; !ok {
		t.Errorf("Widget.example.com not parsed as kind Widget of group example.com: %v", s)
	}
}

// labelMembers labels every object and refuses one that sets the label
// itself, naming it.
func TestLabelMembers(t *testing.T) {
	a := newApplySet(parentRef{name: "web", namespace: "prod", mapping: secretMapping})
	entries := cli.ReadStream(strings.NewReader(`apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  labels: {app: web}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  labels:
    applyset.kubernetes.io/part-of: applyset-other-v1
`), "app.yaml")
	a.labelMembers(entries)
	if got := entries[0].Object().GetLabels(); got[applySetPartOfLabel] != a.parent.id() || got["app"] != "web" {
		t.Errorf("labels of a: %v", got)
	}
	if err := entries[1].Err(); err == nil || !strings.Contains(err.Error(), `ApplySet label "applyset.kubernetes.io/part-of" already set in input data`) ||
		!strings.Contains(err.Error(), "configmap/b") {
		t.Errorf("b: error %v", err)
	}
}

func TestNamespacesAnnotation(t *testing.T) {
	s := nsSet{"b": {}, "a": {}, "prod": {}}
	if got := s.annotation("prod"); got != "a,b" {
		t.Errorf("annotation = %q", got)
	}
	if got := (nsSet{"prod": {}}).annotation("prod"); got != "" {
		t.Errorf("annotation = %q", got)
	}
}
