package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// Helpers of the manifest-command tests (apply, create, replace, delete,
// diff) are prefixed mf.

var mfSeq atomic.Int64

var mfCMGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// mfName returns a DNS-label name unique to this run: prefix-<n>-<time>.
func mfName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, mfSeq.Add(1), time.Now().UnixNano()%1_000_000)
}

// mfStdin runs kdyn as admin with stdin.
func mfStdin(t *testing.T, env *testenv.Env, stdin string, args ...string) result {
	t.Helper()
	return kdynAs(t, env, testenv.Admin, stdin, args...)
}

// mfNamespace creates a namespace with kdyn apply and returns its name.
func mfNamespace(t *testing.T, env *testenv.Env) string {
	t.Helper()
	ns := mfName("mf")
	mfStdin(t, env, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n", "apply", "-f", "-").must(t)
	return ns
}

// mfWrite writes a manifest file in the test's directory.
func mfWrite(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mfClient(t *testing.T, env *testenv.Env) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mfGet returns a ConfigMap, or nil when it does not exist.
func mfGet(t *testing.T, env *testenv.Env, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := mfClient(t, env).Resource(mfCMGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func mfConfigMap(name, ns string, data map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", name)
	if ns != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", ns)
	}
	if len(data) > 0 {
		b.WriteString("data:\n")
		for k, v := range data {
			fmt.Fprintf(&b, "  %s: %q\n", k, v)
		}
	}
	return b.String()
}

// mfCRD is a namespaced CRD of kind Gadget in group, with short name sn.
func mfCRD(group, sn string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, shortNames: [%[2]s]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, group, sn)
}

// mfExpect checks the exit code and that stderr contains every want.
func (r result) mfExpect(t *testing.T, code int, want ...string) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	return r
}

func (r result) mfStdout(t *testing.T, want ...string) result {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("stdout lacks %q:\n%s\nstderr:\n%s", w, r.stdout, r.stderr)
		}
	}
	return r
}

// TestApplyCRDAndCustomResourceInOneFile applies a file in which a custom
// object comes before its CRD: the CRD is applied first, kdyn waits for it
// to be Established, then applies the object; get then finds the new type
// through the warm discovery cache without --refresh-discovery.
func TestApplyCRDAndCustomResourceInOneFile(t *testing.T) {
	env := testenv.Shared(t)
	kdyn(t, env, "get", "namespaces").must(t) // warm the discovery cache
	ns := mfName("mfcrd")
	group := ns + ".kdyn.example"
	sn := "gd" + strings.ReplaceAll(ns[len("mfcrd-"):], "-", "")
	file := mfWrite(t, "all.yaml", fmt.Sprintf(`apiVersion: %s/v1
kind: Gadget
metadata:
  name: g1
  namespace: %s
spec:
  size: 3
---
%s---
apiVersion: v1
kind: Namespace
metadata:
  name: %s
`, group, ns, mfCRD(group, sn), ns))
	r := kdyn(t, env, "apply", "-f", file).must(t)
	// Namespaces and CRDs first, in file order, then the rest.
	want := "customresourcedefinition.apiextensions.k8s.io/gadgets." + group + " created\n" +
		"namespace/" + ns + " created\n" +
		"gadget." + group + "/g1 created\n"
	if r.stdout != want {
		t.Fatalf("apply output:\n%s\nwant:\n%s\nstderr:\n%s", r.stdout, want, r.stderr)
	}
	r = kdyn(t, env, "get", sn, "-n", ns, "-o", "name").must(t)
	if strings.TrimSpace(r.stdout) != "gadget."+group+"/g1" {
		t.Fatalf("get by the new short name: %q", r.stdout)
	}
	// Applying again changes nothing and needs no wait.
	kdyn(t, env, "apply", "-f", file).must(t).mfStdout(t, "gadget."+group+"/g1 unchanged")
}

// TestApplyRightAfterCRDOfAnotherCommand: a custom object applied by a
// command of its own right after the command that created its CRD (the
// way scripts do it, one file each) waits for the CRD to be served, which
// may take a moment after it was created, instead of failing with "no
// matches for kind". Repeated, as the moment varies.
func TestApplyRightAfterCRDOfAnotherCommand(t *testing.T) {
	env := testenv.Shared(t)
	kdyn(t, env, "get", "namespaces").must(t) // warm the discovery cache
	ns := mfNamespace(t, env)
	for i := range 3 {
		group := fmt.Sprintf("%s-%d.kdyn.example", ns, i)
		crd := mfWrite(t, fmt.Sprintf("crd%d.yaml", i), mfCRD(group, fmt.Sprintf("gdr%d%s", i, strings.ReplaceAll(ns, "-", ""))))
		cr := mfWrite(t, fmt.Sprintf("cr%d.yaml", i), fmt.Sprintf("apiVersion: %s/v1\nkind: Gadget\nmetadata: {name: g, namespace: %s}\n", group, ns))
		kdyn(t, env, "apply", "-f", crd).must(t)
		kdyn(t, env, "apply", "-f", cr).must(t).mfStdout(t, "gadget."+group+"/g created")
	}
	// a CRD the server will not serve (its list kind is another's) is
	// waited for and named, instead of "no matches"
	group := ns + "-0.kdyn.example"
	clash := mfWrite(t, "clash.yaml", fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: things, singular: thing, kind: Thing, listKind: GadgetList}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`, group))
	kdyn(t, env, "apply", "-f", clash).must(t)
	thing := mfWrite(t, "thing.yaml", fmt.Sprintf("apiVersion: %s/v1\nkind: Thing\nmetadata: {name: t, namespace: %s}\n", group, ns))
	kdyn(t, env, "apply", "-f", thing).mfExpect(t, 1, `CustomResourceDefinition "things.`+group+`" was not accepted`)

	// a kind no CRD defines still fails at once
	bad := mfWrite(t, "bad.yaml", "apiVersion: nothing.kdyn.example/v1\nkind: Nothing\nmetadata: {name: n}\n")
	kdyn(t, env, "apply", "-f", bad).mfExpect(t, 1, "ensure CRDs are installed first")
}

// TestApplyServerSideTwice: the second apply of the same manifest is a
// no-op on the server (same resourceVersion), owned by field manager kdyn.
func TestApplyServerSideTwice(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	file := mfWrite(t, "cm.yaml", mfConfigMap("twice", "", map[string]string{"k": "v"}))
	kdyn(t, env, "apply", "--server-side", "-f", file, "-n", ns).must(t).mfStdout(t, "configmap/twice serverside-applied")
	first := mfGet(t, env, ns, "twice")
	kdyn(t, env, "apply", "--server-side", "-f", file, "-n", ns).must(t).mfStdout(t, "configmap/twice serverside-applied")
	second := mfGet(t, env, ns, "twice")
	if first.GetResourceVersion() != second.GetResourceVersion() {
		t.Errorf("second apply changed the object: resourceVersion %s → %s", first.GetResourceVersion(), second.GetResourceVersion())
	}
	mf := second.GetManagedFields()
	if len(mf) != 1 || mf[0].Manager != "kubectl" || mf[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("managedFields: %+v", mf)
	}
	// A manifest copied from the server (managedFields, resourceVersion,
	// uid...) applies too: kdyn strips what the server owns.
	live := kdyn(t, env, "get", "cm", "twice", "-n", ns, "-o", "yaml").must(t).stdout
	kdyn(t, env, "apply", "--server-side", "-f", mfWrite(t, "live.yaml", live)).must(t)
}

// TestApplyClientSide: created / unchanged / configured, the last-applied
// annotation, and three-way merge: a key removed from the manifest is
// removed, a label another client added is kept.
func TestApplyClientSide(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	file := mfWrite(t, "cm.yaml", mfConfigMap("csa", ns, map[string]string{"a": "1", "b": "2"}))
	kdyn(t, env, "apply", "--server-side=false", "-f", file).must(t).mfStdout(t, "configmap/csa created\n")
	obj := mfGet(t, env, ns, "csa")
	var cfg map[string]any
	if err := json.Unmarshal([]byte(obj.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]), &cfg); err != nil {
		t.Fatalf("last-applied annotation: %v (%v)", err, obj.GetAnnotations())
	}
	if d, _ := cfg["data"].(map[string]any); d["a"] != "1" || d["b"] != "2" {
		t.Errorf("last-applied configuration: %v", cfg)
	}
	if mf := obj.GetManagedFields(); len(mf) == 0 || mf[0].Manager != "kubectl-client-side-apply" {
		t.Errorf("managedFields: %+v", mf)
	}
	kdyn(t, env, "apply", "--server-side=false", "-f", file).must(t).mfStdout(t, "configmap/csa unchanged\n")

	// Someone else adds a label.
	obj.SetLabels(map[string]string{"added-by": "other"})
	if _, err := mfClient(t, env).Resource(mfCMGVR).Namespace(ns).Update(t.Context(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The manifest drops b and changes a.
	if err := os.WriteFile(file, []byte(mfConfigMap("csa", ns, map[string]string{"a": "10"})), 0o644); err != nil {
		t.Fatal(err)
	}
	kdyn(t, env, "apply", "--server-side=false", "-f", file).must(t).mfStdout(t, "configmap/csa configured\n")
	obj = mfGet(t, env, ns, "csa")
	data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
	if len(data) != 1 || data["a"] != "10" {
		t.Errorf("data after configure: %v", data)
	}
	if obj.GetLabels()["added-by"] != "other" {
		t.Errorf("the other client's label was lost: %v", obj.GetLabels())
	}
	// Dry runs report without changing anything.
	if err := os.WriteFile(file, []byte(mfConfigMap("csa", ns, map[string]string{"a": "11"})), 0o644); err != nil {
		t.Fatal(err)
	}
	kdyn(t, env, "apply", "--server-side=false", "-f", file, "--dry-run=server").must(t).mfStdout(t, "configmap/csa configured (server dry run)")
	kdyn(t, env, "apply", "--server-side=false", "-f", file, "--dry-run=client").must(t).mfStdout(t, "configmap/csa configured (dry run)")
	if v, _, _ := unstructured.NestedString(mfGet(t, env, ns, "csa").Object, "data", "a"); v != "10" {
		t.Errorf("a dry run changed the object: a=%s", v)
	}
	kdyn(t, env, "apply", "--server-side=false", "--force-conflicts", "-f", file).mfExpect(t, 1, "--force-conflicts only works with --server-side")
}

// TestApplyConflict: two field managers set one field; the second fails
// with the server's conflict and a hint, until --force-conflicts.
func TestApplyConflict(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	kdyn(t, env, "apply", "--server-side", "-n", ns, "--field-manager", "team-a", "-f", mfWrite(t, "a.yaml", mfConfigMap("shared", "", map[string]string{"owner": "a"}))).must(t)
	b := mfWrite(t, "b.yaml", mfConfigMap("shared", "", map[string]string{"owner": "b"}))
	kdyn(t, env, "apply", "--server-side", "-n", ns, "--field-manager", "team-b", "-f", b).
		mfExpect(t, 1, "Error from server (Conflict): error when applying configmap/shared ("+b+": document 1): Apply failed with 1 conflict", `conflict with "team-a"`, ".data.owner", "--force-conflicts")
	kdyn(t, env, "--exit-codes", "apply", "--server-side", "-n", ns, "--field-manager", "team-b", "-f", b).mfExpect(t, 4)
	kdyn(t, env, "apply", "--server-side", "-n", ns, "--field-manager", "team-b", "--force-conflicts", "-f", b).must(t)
	if v, _, _ := unstructured.NestedString(mfGet(t, env, ns, "shared").Object, "data", "owner"); v != "b" {
		t.Errorf("owner = %q after --force-conflicts", v)
	}
}

// TestApplyBadDocument: document 2 of 3 does not parse: nothing is
// applied — every document is read before any is sent — and the error is
// kubectl's ("error parsing FILE: …"), exit code 1. (kubectl would have
// applied document 1.)
func TestApplyBadDocument(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	content := mfConfigMap("one", ns, nil) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: two\n---\n" + mfConfigMap("three", ns, nil)
	file := mfWrite(t, "manifest.yaml", content)
	for _, args := range [][]string{{"apply", "-f", file}, {"apply", "--fail-fast", "-f", file}, {"create", "-f", file}, {"replace", "-f", file}} {
		r := kdyn(t, env, args...).mfExpect(t, 1, "error: error parsing "+file+": error converting YAML to JSON")
		if r.stdout != "" {
			t.Fatalf("%q printed %q", args, r.stdout)
		}
		if mfGet(t, env, ns, "one") != nil || mfGet(t, env, ns, "three") != nil {
			t.Fatalf("%q applied documents of a manifest with a bad one", args)
		}
	}

	// A document the server rejects is named too, and the others applied.
	bad := mfWrite(t, "invalid.yaml", mfConfigMap("Not_Valid", ns, nil)+"---\n"+mfConfigMap("four", ns, nil))
	kdyn(t, env, "apply", "-f", bad).mfExpect(t, 1, "Error from server (Invalid): error when applying configmap/Not_Valid ("+bad+": document 1)")
	if mfGet(t, env, ns, "four") == nil {
		t.Fatal("the document after the invalid one was not applied")
	}
	// A kind the server does not have.
	unknown := mfWrite(t, "unknown.yaml", "apiVersion: nowhere.example/v1\nkind: Nothing\nmetadata:\n  name: thing\n")
	kdyn(t, env, "apply", "-n", ns, "-f", unknown).mfExpect(t, 1, "error: "+unknown+": document 1: nothing.nowhere.example/thing:", "ensure CRDs are installed first")
	kdyn(t, env, "--exit-codes", "apply", "-n", ns, "-f", unknown).mfExpect(t, 3)
	kdyn(t, env, "apply", "-f", filepath.Join(t.TempDir(), "missing.yaml")).mfExpect(t, 1, "does not exist")
}

// TestApplyDryRunAndOutput: --dry-run=server and client change nothing;
// -o prints the objects.
func TestApplyDryRunAndOutput(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	file := mfWrite(t, "cm.yaml", mfConfigMap("dry", ns, map[string]string{"k": "v"})+"---\n"+mfConfigMap("dry2", ns, nil))
	kdyn(t, env, "apply", "--server-side", "-f", file, "--dry-run=server").must(t).mfStdout(t, "configmap/dry serverside-applied (server dry run)")
	kdyn(t, env, "apply", "--server-side", "-f", file, "--dry-run=client").must(t).mfStdout(t, "configmap/dry serverside-applied (dry run)")
	if mfGet(t, env, ns, "dry") != nil {
		t.Fatal("a dry run created the object")
	}
	r := kdyn(t, env, "apply", "--server-side", "-f", file, "-o", "json").must(t)
	var list struct {
		Kind  string
		Items []map[string]any
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || list.Kind != "List" || len(list.Items) != 2 {
		t.Fatalf("-o json: %v\n%s", err, r.stdout)
	}
	r = kdyn(t, env, "apply", "--server-side", "-f", file, "-o", "name").must(t)
	if r.stdout != "configmap/dry\nconfigmap/dry2\n" {
		t.Fatalf("-o name: %q", r.stdout)
	}
	one := mfWrite(t, "one.yaml", mfConfigMap("dry", ns, map[string]string{"k": "v"}))
	r = kdyn(t, env, "apply", "--server-side", "-f", one, "-o", "yaml").must(t)
	if !strings.HasPrefix(r.stdout, "apiVersion: v1\ndata:\n  k: v\nkind: ConfigMap\n") || !strings.Contains(r.stdout, "resourceVersion:") {
		t.Fatalf("-o yaml of one object:\n%s", r.stdout)
	}
}

// TestApplyNamespaces: objects without a namespace get -n; a conflicting
// namespace is refused; a namespace on a cluster-scoped object is ignored.
func TestApplyNamespaces(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	other := mfNamespace(t, env)
	file := mfWrite(t, "cm.yaml", mfConfigMap("placed", ns, nil))
	kdyn(t, env, "apply", "--server-side", "-n", other, "-f", file).mfExpect(t, 1,
		fmt.Sprintf(`the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.`, ns, other, ns))
	kdyn(t, env, "apply", "--server-side", "-n", ns, "-f", file).must(t)
	role := mfName("mf-role")
	cr := mfWrite(t, "role.yaml", fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\n  namespace: %s\nrules: []\n", role, ns))
	kdyn(t, env, "apply", "--server-side", "-f", cr).must(t).mfStdout(t, "clusterrole.rbac.authorization.k8s.io/"+role+" serverside-applied")
	kdyn(t, env, "delete", "clusterrole", role).must(t)
}

// TestCreate: created, then AlreadyExists; generateName; dry runs.
func TestCreate(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	file := mfWrite(t, "cm.yaml", mfConfigMap("made", ns, map[string]string{"k": "v"}))
	kdyn(t, env, "create", "-f", file, "--dry-run=server").must(t).mfStdout(t, "configmap/made created (server dry run)")
	if mfGet(t, env, ns, "made") != nil {
		t.Fatal("create --dry-run=server created the object")
	}
	kdyn(t, env, "create", "-f", file).must(t).mfStdout(t, "configmap/made created\n")
	kdyn(t, env, "create", "-f", file).mfExpect(t, 1, `Error from server (AlreadyExists): error when creating configmap/made (`+file+`: document 1): configmaps "made" already exists`)
	kdyn(t, env, "--exit-codes", "create", "-f", file).mfExpect(t, 4)
	gen := mfWrite(t, "gen.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: gen-\n")
	r := kdyn(t, env, "create", "-n", ns, "-f", gen).must(t)
	if !regexp.MustCompile(`^configmap/gen-[a-z0-9]{5} created\n$`).MatchString(r.stdout) {
		t.Fatalf("create with generateName: %q", r.stdout)
	}
	r = kdyn(t, env, "create", "-n", ns, "-f", gen, "-o", "name", "--save-config").must(t)
	name := strings.TrimPrefix(strings.TrimSpace(r.stdout), "configmap/")
	if _, ok := mfGet(t, env, ns, name).GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; !ok {
		t.Error("--save-config did not record the configuration")
	}
}

// TestReplace: replace fills in the live resourceVersion; a stale one is a
// conflict; a missing object is NotFound; --force deletes and recreates.
func TestReplace(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	kdyn(t, env, "create", "-f", mfWrite(t, "cm.yaml", mfConfigMap("rep", ns, map[string]string{"k": "v1", "gone": "x"}))).must(t)
	before := mfGet(t, env, ns, "rep")
	file := mfWrite(t, "cm2.yaml", mfConfigMap("rep", ns, map[string]string{"k": "v2"}))
	kdyn(t, env, "replace", "-f", file).must(t).mfStdout(t, "configmap/rep replaced\n")
	after := mfGet(t, env, ns, "rep")
	if data, _, _ := unstructured.NestedStringMap(after.Object, "data"); len(data) != 1 || data["k"] != "v2" {
		t.Errorf("data after replace: %v", data)
	}
	stale := mfWrite(t, "stale.yaml", strings.Replace(mfConfigMap("rep", ns, map[string]string{"k": "v3"}), "  name: rep\n", "  name: rep\n  resourceVersion: \""+before.GetResourceVersion()+"\"\n", 1))
	kdyn(t, env, "replace", "-f", stale).mfExpect(t, 1, "Error from server (Conflict): error when replacing configmap/rep")
	kdyn(t, env, "replace", "-f", mfWrite(t, "missing.yaml", mfConfigMap("missing", ns, nil))).mfExpect(t, 1, `Error from server (NotFound)`, `configmaps "missing" not found`)

	r := kdyn(t, env, "replace", "--force", "-f", file).must(t)
	if want := "configmap \"rep\" deleted from " + ns + " namespace\nconfigmap/rep replaced\n"; r.stdout != want {
		t.Fatalf("replace --force:\n%s\nwant:\n%s", r.stdout, want)
	}
	if recreated := mfGet(t, env, ns, "rep"); recreated.GetUID() == after.GetUID() {
		t.Error("replace --force kept the object's UID")
	}
	// --force on an object that does not exist creates it.
	kdyn(t, env, "replace", "--force", "-f", mfWrite(t, "new.yaml", mfConfigMap("fresh", ns, nil))).must(t).mfStdout(t, "configmap/fresh replaced")
}

// mfRemoveFinalizers clears an object's finalizers so that a deletion the
// garbage collector would finish can complete without one.
func mfRemoveFinalizers(t *testing.T, env *testenv.Env, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := mfClient(t, env).Resource(gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// TestApplySubresource: apply --server-side --subresource=status writes the
// status of an object, as kubectl's test/cmd apply.sh does.
func TestApplySubresource(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
	mfStdin(t, env, pod, "apply", "-f", "-", "-n", ns).must(t)
	status := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nstatus:\n  conditions:\n  - type: Ready\n    status: \"False\"\n"
	mfStdin(t, env, status, "apply", "--server-side", "--subresource=status", "--field-manager=my-field-manager", "-f", "-", "-n", ns).must(t)
	r := kdyn(t, env, "get", "pod", "p", "-n", ns, "-o", "jsonpath={.status.conditions[0].type}={.status.conditions[0].status}").must(t)
	if r.stdout != "Ready=False" {
		t.Errorf("status after apply --subresource=status: %q", r.stdout)
	}
	r = mfStdin(t, env, status, "apply", "--subresource=status", "-f", "-", "-n", ns)
	if r.code == 0 || !strings.Contains(r.stderr, "--subresource can only be specified for --server-side") {
		t.Errorf("client-side apply --subresource: exit %d, %q", r.code, r.stderr)
	}
}
