// Package applyset_test proves that kdyn's ApplySets are kubectl's: the
// same ids (kubectl's own function on the parents of kdyn's golden file),
// the same parent labels and annotations byte for byte (but for the
// tooling value) and member labels when each tool applies the same
// manifests to the same parent on the real control plane, and each tool
// refusing the other's set as KEP-3659's tooling rule says. kubectl v0.37.2
// runs with KUBECTL_APPLYSET=true, which enables its --applyset.
package applyset_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubectlapply "k8s.io/kubectl/pkg/cmd/apply"

	"github.com/kdyn/kdyn/bench/cli"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

var bins cli.Binaries

func TestMain(m *testing.M) {
	os.Exit(func() int {
		flag.Parse()
		if !testing.Short() {
			dir, err := os.MkdirTemp("", "applyset-bench-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer os.RemoveAll(dir)
			if bins, err = cli.BuildBinaries(context.Background(), dir, func(string, ...any) {}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return testenv.Main(m, testenv.Options{})
	}())
}

// goldenCase is one parent of kdyn's id golden file.
type goldenCase struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Group     string `json:"group"`
	ID        string `json:"id"`
}

// kdyn's ids (its unit test keeps them in a golden file) are those of
// kubectl's own ApplySet.ID.
func TestIDsAreKubectls(t *testing.T) {
	root, _, err := cli.Modules()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "cmd", "kdyn", "internal", "apply", "testdata", "applyset-ids.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 5 {
		t.Fatalf("only %d parents in the golden file", len(cases))
	}
	for _, c := range cases {
		ref := &kubectlapply.ApplySetParentRef{Name: c.Name, Namespace: c.Namespace, RESTMapping: &meta.RESTMapping{
			GroupVersionKind: schema.GroupVersionKind{Group: c.Group, Version: "v1", Kind: c.Kind},
		}}
		got := kubectlapply.NewApplySet(ref, kubectlapply.ApplySetTooling{Name: "kubectl", Version: "v1.37.2"}, nil, nil).ID()
		if got != c.ID {
			t.Errorf("%+v: kubectl's id is %s", c, got)
		}
	}
}

// tool runs kdyn or kubectl (with KUBECTL_APPLYSET=true) as the admin.
type tool struct {
	name, bin, cache string
	env              *testenv.Env
}

type result struct {
	stdout, stderr string
	code           int
}

func (tl tool) run(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), tl.bin, append([]string{"--kubeconfig", tl.env.KubeconfigPath(testenv.Admin), "--cache-dir", tl.cache}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL_APPLYSET=true", "HOME="+filepath.Dir(tl.cache))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func (tl tool) must(t *testing.T, args ...string) result {
	t.Helper()
	r := tl.run(t, args...)
	if r.code != 0 {
		t.Fatalf("%s %v: exit %d\n%s\n%s", tl.name, args, r.code, r.stdout, r.stderr)
	}
	return r
}

func tools(t *testing.T, env *testenv.Env) (kdyn, kubectl tool) {
	dir := t.TempDir()
	for _, d := range []string{"kdyn", "kubectl"} {
		if err := os.MkdirAll(filepath.Join(dir, d, "cache"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tool{name: "kdyn", bin: bins.Kdyn, cache: filepath.Join(dir, "kdyn", "cache"), env: env},
		tool{name: "kubectl", bin: bins.Kubectl, cache: filepath.Join(dir, "kubectl", "cache"), env: env}
}

var seq int

func name(prefix string) string {
	seq++
	return fmt.Sprintf("%s-%d-%d", prefix, seq, time.Now().UnixNano()%1_000_000)
}

func write(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func client(t *testing.T, env *testenv.Env) *dynamic.DynamicClient {
	c, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func get(t *testing.T, env *testenv.Env, gvr schema.GroupVersionResource, ns, n string) *unstructured.Unstructured {
	t.Helper()
	ri := dynamic.ResourceInterface(client(t, env).Resource(gvr))
	if ns != "" {
		ri = client(t, env).Resource(gvr).Namespace(ns)
	}
	obj, err := ri.Get(t.Context(), n, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// applySetMeta returns the applyset.kubernetes.io/ labels and annotations
// of obj, keyed "label k" and "annotation k".
func applySetMeta(obj *unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for k, v := range obj.GetLabels() {
		if strings.HasPrefix(k, "applyset.kubernetes.io/") {
			out["label "+k] = v
		}
	}
	for k, v := range obj.GetAnnotations() {
		if strings.HasPrefix(k, "applyset.kubernetes.io/") {
			out["annotation "+k] = v
		}
	}
	return out
}

var (
	cmGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// fixture is what a comparison needs on the server: member namespaces, a
// namespaced Gadget CRD for custom members and a cluster-scoped, labelled
// ClusterSet CRD for custom parents.
type fixture struct {
	ns1, ns2, group string
	gadgets, sets   schema.GroupVersionResource
}

func newFixture(t *testing.T, env *testenv.Env, kdyn, kubectl tool) *fixture {
	fx := &fixture{ns1: name("as"), ns2: name("as")}
	fx.group = fx.ns1 + ".bench.kdyn.example"
	fx.gadgets = schema.GroupVersionResource{Group: fx.group, Version: "v1", Resource: "gadgets"}
	fx.sets = schema.GroupVersionResource{Group: fx.group, Version: "v1", Resource: "clustersets"}
	crd := func(plural, kind, scope, labels string) string {
		return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.%[2]s
  labels: {%[5]s}
spec:
  group: %[2]s
  scope: %[4]s
  names: {plural: %[1]s, singular: %[6]s, kind: %[3]s}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, plural, fx.group, kind, scope, labels, strings.ToLower(kind))
	}
	kdyn.must(t, "apply", "-f", write(t, strings.Join([]string{
		fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", fx.ns1),
		fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", fx.ns2),
		crd("gadgets", "Gadget", "Namespaced", ""),
		crd("clustersets", "ClusterSet", "Cluster", `applyset.kubernetes.io/is-parent-type: "true"`),
	}, "---\n")))
	// A CRD's kinds reach discovery a moment after the create returns: wait
	// until each tool can list both, so no apply below races discovery.
	for _, tl := range []tool{kdyn, kubectl} {
		for _, res := range []string{"gadgets." + fx.group, "clustersets." + fx.group} {
			deadline := time.Now().Add(time.Minute)
			for r := tl.run(t, "get", res, "-A"); r.code != 0; r = tl.run(t, "get", res, "-A") {
				if time.Now().After(deadline) {
					t.Fatalf("%s cannot list %s a minute after its CRD was applied:\n%s", tl.name, res, r.stderr)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	return fx
}

// members are the manifests of one apply: ConfigMaps and Gadgets, each
// "name@namespace" ("" namespace: none in the manifest).
func (fx *fixture) members(cms, gadgets []string) string {
	var docs []string
	add := func(apiVersion, kind, spec string) {
		n, ns, _ := strings.Cut(spec, "@")
		d := fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n", apiVersion, kind, n)
		if ns != "" {
			d += "  namespace: " + ns + "\n"
		}
		docs = append(docs, d)
	}
	for _, s := range cms {
		add("v1", "ConfigMap", s)
	}
	for _, s := range gadgets {
		add(fx.group+"/v1", "Gadget", s)
	}
	return strings.Join(docs, "---\n")
}

// clean deletes what one run left: the listed objects and the parent.
func clean(t *testing.T, env *testenv.Env, objs ...[3]string) {
	t.Helper()
	c := client(t, env)
	for _, o := range objs {
		gvr := schema.ParseGroupResource(o[0]).WithVersion("v1")
		ri := dynamic.ResourceInterface(c.Resource(gvr))
		if o[1] != "" {
			ri = c.Resource(gvr).Namespace(o[1])
		}
		if err := ri.Delete(t.Context(), o[2], metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// TestParentsAreKubectls applies the same manifests to the same parent
// with kdyn and then (after deleting everything) with kubectl, twice each
// (the second time with members removed, so both prune and rewrite the
// parent's lists), and compares the parent's ApplySet labels and
// annotations and the members' labels: byte for byte but for the tooling
// value.
func TestParentsAreKubectls(t *testing.T) {
	env := testenv.Shared(t)
	kdyn, kubectl := tools(t, env)
	fx := newFixture(t, env, kdyn, kubectl)
	for _, tc := range []struct {
		name      string
		ref       string // --applyset
		nsFlag    bool   // give -n ns1 (namespaced parents need it)
		parentGVR schema.GroupVersionResource
		parentNS  string
		custom    bool
		v1, v2    string
		members   [][3]string // resource, namespace, name: everything to delete between tools
	}{
		{
			name: "secret parent", ref: "web", nsFlag: true, parentGVR: secretGVR, parentNS: fx.ns1,
			v1:      fx.members([]string{"a", "b"}, []string{"g1", "g2"}),
			v2:      fx.members([]string{"a"}, []string{"g1"}),
			members: [][3]string{{"configmaps", fx.ns1, "a"}, {"configmaps", fx.ns1, "b"}, {"gadgets." + fx.group, fx.ns1, "g1"}, {"gadgets." + fx.group, fx.ns1, "g2"}, {"secrets", fx.ns1, "web"}},
		},
		{
			name: "configmap parent", ref: "configmaps/web", nsFlag: true, parentGVR: cmGVR, parentNS: fx.ns1,
			v1:      fx.members([]string{"c", "d"}, nil),
			v2:      fx.members(nil, []string{"g3"}),
			members: [][3]string{{"configmaps", fx.ns1, "c"}, {"configmaps", fx.ns1, "d"}, {"gadgets." + fx.group, fx.ns1, "g3"}, {"configmaps", fx.ns1, "web"}},
		},
		{
			name: "cluster-scoped custom parent", ref: "clustersets." + fx.group + "/platform", parentGVR: fx.sets, custom: true,
			v1:      fx.members([]string{"m@" + fx.ns1, "m@" + fx.ns2}, []string{"g@" + fx.ns2}),
			v2:      fx.members([]string{"m@" + fx.ns1}, nil),
			members: [][3]string{{"configmaps", fx.ns1, "m"}, {"configmaps", fx.ns2, "m"}, {"gadgets." + fx.group, fx.ns2, "g"}, {"clustersets." + fx.group, "", "platform"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parentName := tc.ref[strings.LastIndex(tc.ref, "/")+1:]
			type snapshot struct{ v1, v2 map[string]string }
			shots := map[string]*snapshot{}
			memberLabels := map[string]map[string]string{}
			for _, tl := range []tool{kdyn, kubectl} {
				if tc.custom {
					// kubectl (and so kdyn) uses an existing custom parent
					// only when it already carries the set's metadata; the
					// tooling is each tool's.
					id := kubectlID(parentName, tc.parentNS, "ClusterSet", fx.group)
					kdyn.must(t, "apply", "-f", write(t, fmt.Sprintf(
						"apiVersion: %s/v1\nkind: ClusterSet\nmetadata:\n  name: %s\n  labels: {applyset.kubernetes.io/id: %s}\n  annotations: {applyset.kubernetes.io/tooling: %s/v0, applyset.kubernetes.io/contains-group-kinds: \"\"}\n",
						fx.group, parentName, id, tl.name)), "--field-manager=setup")
				}
				args := []string{"apply", "--prune", "--applyset=" + tc.ref}
				if tc.nsFlag {
					args = append(args, "-n", fx.ns1)
				}
				s := &snapshot{}
				tl.must(t, append(args, "-f", write(t, tc.v1))...)
				s.v1 = applySetMeta(get(t, env, tc.parentGVR, tc.parentNS, parentName))
				r := tl.must(t, append(args, "-f", write(t, tc.v2))...)
				if !strings.Contains(r.stdout, " pruned") {
					t.Errorf("%s pruned nothing:\n%s", tl.name, r.stdout)
				}
				s.v2 = applySetMeta(get(t, env, tc.parentGVR, tc.parentNS, parentName))
				for _, m := range tc.members {
					gvr := schema.ParseGroupResource(m[0]).WithVersion("v1")
					if obj := get(t, env, gvr, m[1], m[2]); obj != nil && m[2] != parentName {
						memberLabels[tl.name+" "+m[0]+" "+m[1]+"/"+m[2]] = obj.GetLabels()
					}
				}
				shots[tl.name] = s
				clean(t, env, tc.members...)
			}
			kd, kc := shots["kdyn"], shots["kubectl"]
			for _, step := range []struct {
				name   string
				kd, kc map[string]string
			}{{"after the first apply", kd.v1, kc.v1}, {"after the prune", kd.v2, kc.v2}} {
				const tooling = "annotation applyset.kubernetes.io/tooling"
				if !strings.HasPrefix(step.kd[tooling], "kdyn/") || !strings.HasPrefix(step.kc[tooling], "kubectl/") {
					t.Errorf("%s: tooling kdyn %q, kubectl %q", step.name, step.kd[tooling], step.kc[tooling])
				}
				delete(step.kd, tooling)
				delete(step.kc, tooling)
				if diff := cmp.Diff(step.kc, step.kd); diff != "" {
					t.Errorf("%s: parent labels and annotations (-kubectl +kdyn):\n%s", step.name, diff)
				}
				t.Logf("%s: %v", step.name, step.kd)
			}
			for k, v := range memberLabels {
				if tl, rest, _ := strings.Cut(k, " "); tl == "kdyn" {
					if diff := cmp.Diff(memberLabels["kubectl "+rest], v); diff != "" {
						t.Errorf("labels of %s (-kubectl +kdyn):\n%s", rest, diff)
					}
				}
			}
		})
	}
}

func kubectlID(n, ns, kind, group string) string {
	ref := &kubectlapply.ApplySetParentRef{Name: n, Namespace: ns, RESTMapping: &meta.RESTMapping{
		GroupVersionKind: schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind},
	}}
	return kubectlapply.NewApplySet(ref, kubectlapply.ApplySetTooling{Name: "kubectl"}, nil, nil).ID()
}

// TestEachRefusesTheOthersSet: kubectl refuses kdyn's set and kdyn
// refuses kubectl's, before either applies or prunes anything (KEP-3659:
// tooling must not mutate a set another tool manages; kubectl has no
// override, nor has kdyn).
func TestEachRefusesTheOthersSet(t *testing.T) {
	env := testenv.Shared(t)
	kdyn, kubectl := tools(t, env)
	fx := newFixture(t, env, kdyn, kubectl)
	first := write(t, fx.members([]string{"a", "b"}, nil))
	second := write(t, fx.members([]string{"c"}, nil))
	for _, tc := range []struct {
		owner, other tool
		want         string
	}{
		{kdyn, kubectl, `error: ApplySet parent object "secrets./set-by-kdyn" already exists and is managed by tooling "kdyn" instead of "kubectl"`},
		{kubectl, kdyn, `error: ApplySet parent object secret/set-by-kubectl -n ` + fx.ns1 + ` already exists and is managed by tooling "kubectl" instead of "kdyn"`},
	} {
		parent := "set-by-" + tc.owner.name
		tc.owner.must(t, "apply", "--prune", "--applyset="+parent, "-n", fx.ns1, "-f", first)
		before := applySetMeta(get(t, env, secretGVR, fx.ns1, parent))
		r := tc.other.run(t, "apply", "--prune", "--applyset="+parent, "-n", fx.ns1, "-f", second)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Fatalf("%s on %s's set: exit %d, stderr:\n%s\nwant:\n%s", tc.other.name, tc.owner.name, r.code, r.stderr, tc.want)
		}
		t.Logf("%s on %s's set: %s", tc.other.name, tc.owner.name, strings.TrimSpace(r.stderr))
		if get(t, env, cmGVR, fx.ns1, "c") != nil {
			t.Errorf("%s applied an object to %s's set", tc.other.name, tc.owner.name)
		}
		if get(t, env, cmGVR, fx.ns1, "a") == nil || get(t, env, cmGVR, fx.ns1, "b") == nil {
			t.Errorf("%s pruned a member of %s's set", tc.other.name, tc.owner.name)
		}
		if diff := cmp.Diff(before, applySetMeta(get(t, env, secretGVR, fx.ns1, parent))); diff != "" {
			t.Errorf("%s changed %s's parent:\n%s", tc.other.name, tc.owner.name, diff)
		}
		if tc.other.name == "kdyn" {
			r := kdyn.run(t, "diff", "--prune", "--applyset="+parent, "-n", fx.ns1, "-f", second)
			if r.code != 2 || !strings.Contains(r.stderr, `managed by tooling "kubectl" instead of "kdyn"`) {
				t.Errorf("kdyn diff --prune on kubectl's set: exit %d\n%s", r.code, r.stderr)
			}
		}
		// Its own tool carries on with it.
		tc.owner.must(t, "apply", "--prune", "--applyset="+parent, "-n", fx.ns1, "-f", second)
		if get(t, env, cmGVR, fx.ns1, "a") != nil || get(t, env, cmGVR, fx.ns1, "c") == nil {
			t.Errorf("%s did not prune its own set", tc.owner.name)
		}
		clean(t, env, [3]string{"configmaps", fx.ns1, "c"}, [3]string{"secrets", fx.ns1, parent})
	}
}
