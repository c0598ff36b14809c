package cli_test

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/integration/testenv"
)

// Helpers of the ApplySet tests (apply --prune --applyset, diff --prune)
// are prefixed as.

const (
	asIDLabel     = "applyset.kubernetes.io/id"
	asPartOf      = "applyset.kubernetes.io/part-of"
	asTooling     = "applyset.kubernetes.io/tooling"
	asKinds       = "applyset.kubernetes.io/contains-group-kinds"
	asNamespaces  = "applyset.kubernetes.io/additional-namespaces"
	asParentType  = "applyset.kubernetes.io/is-parent-type"
	asKdynTooling = "kdyn/v0.0.0-dev" // the test binary is built without -X rest.Version
)

var asSecretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// asID is the KEP's id, computed here independently of kdyn.
func asID(name, ns, kind, group string) string {
	sum := sha256.Sum256([]byte(name + "." + ns + "." + kind + "." + group))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// asGet returns an object, or nil when it does not exist.
func asGet(t *testing.T, env *testenv.Env, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	ri := mfClient(t, env).Resource(gvr)
	var obj *unstructured.Unstructured
	var err error
	if ns == "" {
		obj, err = ri.Get(t.Context(), name, metav1.GetOptions{})
	} else {
		obj, err = ri.Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// asParentMeta returns the ApplySet labels and annotations of a parent.
func asParentMeta(t *testing.T, obj *unstructured.Unstructured) map[string]string {
	t.Helper()
	if obj == nil {
		t.Fatal("the parent does not exist")
	}
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

func asWantParent(id, tooling, kinds, namespaces string) map[string]string {
	return map[string]string{
		"label " + asIDLabel:         id,
		"annotation " + asTooling:    tooling,
		"annotation " + asKinds:      kinds,
		"annotation " + asNamespaces: namespaces,
	}
}

func asCheckParent(t *testing.T, got, want map[string]string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("parent labels and annotations:\n got %v\nwant %v", got, want)
	}
}

// asGadgetCRD installs a namespaced Gadget CRD (group unique to the test)
// outside any set and returns its group.
func asGadgetCRD(t *testing.T, env *testenv.Env, ns string) string {
	t.Helper()
	group := ns + ".kdyn.example"
	sn := "gd" + strings.ReplaceAll(ns[strings.Index(ns, "-")+1:], "-", "")
	kdyn(t, env, "apply", "-f", mfWrite(t, "crd.yaml", mfCRD(group, sn))).must(t)
	// Served (and in discovery) only once Established: a command naming
	// the resource right after the apply would race it.
	kdyn(t, env, "wait", "--for=condition=Established", "crd/gadgets."+group).must(t)
	return group
}

func asCM(name string, labels map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", name)
	if len(labels) > 0 {
		b.WriteString("  labels:\n")
		for k, v := range labels {
			fmt.Fprintf(&b, "    %s: %s\n", k, v)
		}
	}
	return b.String()
}

func asGadget(group, name string) string {
	return fmt.Sprintf("apiVersion: %s/v1\nkind: Gadget\nmetadata:\n  name: %s\nspec:\n  size: 1\n", group, name)
}

func asDocs(docs ...string) string { return strings.Join(docs, "---\n") }

// TestApplySetPrune: a Secret parent in the namespace of -n; members of
// built-in and custom kinds; prune deletes exactly the members the
// manifests no longer declare (never objects without the label or of
// another set); diff --prune and --dry-run=server show the same without
// deleting; the parent's labels and annotations are kubectl's.
func TestApplySetPrune(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	group := asGadgetCRD(t, env, ns)
	gadgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	id := asID("web", ns, "Secret", "")

	// Objects that look like members but are not: no label, another set.
	other := asCM("other-set", map[string]string{asPartOf: asID("other", ns, "Secret", "")})
	mfStdin(t, env, asDocs(asCM("outside", nil), other), "apply", "--server-side", "-n", ns, "-f", "-").must(t)

	v1 := mfWrite(t, "v1.yaml", asDocs(asCM("a", nil), asCM("b", nil), asGadget(group, "g1"), asGadget(group, "g2")))
	r := kdyn(t, env, "apply", "--server-side", "-n", ns, "-f", v1, "--prune", "--applyset=web").must(t)
	r.mfStdout(t, "configmap/a serverside-applied", "configmap/b serverside-applied", "gadget."+group+"/g1 serverside-applied")
	if strings.Contains(r.stdout, "pruned") {
		t.Fatalf("the first apply pruned something:\n%s", r.stdout)
	}
	asCheckParent(t, asParentMeta(t, asGet(t, env, asSecretGVR, ns, "web")), asWantParent(id, asKdynTooling, "ConfigMap,Gadget."+group, ""))
	if got := mfGet(t, env, ns, "a").GetLabels()[asPartOf]; got != id {
		t.Fatalf("member label %q, want %q", got, id)
	}
	if got := asGet(t, env, gadgets, ns, "g1").GetLabels()[asPartOf]; got != id {
		t.Fatalf("custom member label %q, want %q", got, id)
	}

	v2 := mfWrite(t, "v2.yaml", asDocs(asCM("a", nil), asGadget(group, "g1")))
	// diff --prune shows the members that would go, as removals, and
	// exits 1; nothing changes.
	r = kdyn(t, env, "diff", "-n", ns, "-f", v2, "--prune", "--applyset=web")
	if r.code != 1 {
		t.Fatalf("diff --prune: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"diff -u -N live/v1.ConfigMap." + ns + ".b merged/v1.ConfigMap." + ns + ".b",
		"diff -u -N live/" + group + ".v1.Gadget." + ns + ".g2 merged/" + group + ".v1.Gadget." + ns + ".g2",
		"-  name: b",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("diff --prune lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, notWant := range []string{"outside", "other-set", ".a merged"} {
		if strings.Contains(r.stdout, notWant) {
			t.Fatalf("diff --prune shows %q:\n%s", notWant, r.stdout)
		}
	}
	// A server dry run prints what it would prune and deletes nothing.
	kdyn(t, env, "apply", "--server-side", "-n", ns, "-f", v2, "--prune", "--applyset=web", "--dry-run=server").must(t).
		mfStdout(t, "configmap/b pruned (server dry run)", "gadget."+group+"/g2 pruned (server dry run)")
	if mfGet(t, env, ns, "b") == nil || asGet(t, env, gadgets, ns, "g2") == nil {
		t.Fatal("--dry-run=server deleted a member")
	}
	asCheckParent(t, asParentMeta(t, asGet(t, env, asSecretGVR, ns, "web")), asWantParent(id, asKdynTooling, "ConfigMap,Gadget."+group, ""))
	kdyn(t, env, "apply", "--server-side", "-n", ns, "-f", v2, "--prune", "--applyset=web", "--dry-run=client").must(t).
		mfStdout(t, "configmap/b pruned (dry run)")

	r = kdyn(t, env, "apply", "--server-side", "-n", ns, "-f", v2, "--prune", "--applyset=web").must(t)
	r.mfStdout(t, "configmap/b pruned\n", "gadget."+group+"/g2 pruned\n")
	if mfGet(t, env, ns, "b") != nil || asGet(t, env, gadgets, ns, "g2") != nil {
		t.Fatal("a member no longer declared was not pruned")
	}
	for _, name := range []string{"a", "outside", "other-set"} {
		if mfGet(t, env, ns, name) == nil {
			t.Fatalf("configmap %s was pruned", name)
		}
	}
	kdyn(t, env, "diff", "-n", ns, "-f", v2, "--prune", "--applyset=web").must(t)

	// Only ConfigMaps now: the parent lists ConfigMap alone, and a Gadget
	// member left over is still pruned because the parent listed its kind.
	v3 := mfWrite(t, "v3.yaml", asCM("a", nil))
	kdyn(t, env, "apply", "--server-side", "-n", ns, "-f", v3, "--prune", "--applyset=web").must(t).mfStdout(t, "gadget."+group+"/g1 pruned")
	asCheckParent(t, asParentMeta(t, asGet(t, env, asSecretGVR, ns, "web")), asWantParent(id, asKdynTooling, "ConfigMap", ""))

	// Completion offers the parent types and the Secrets that are parents.
	r = kdyn(t, env, "__complete", "-n", ns, "apply", "--server-side", "--applyset", "").must(t)
	for _, want := range []string{"configmaps/\n", "secrets/\n", "web\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("--applyset completion lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "outside") {
		t.Fatalf("--applyset completion offers a Secret that is no parent:\n%s", r.stdout)
	}
	kdyn(t, env, "__complete", "-n", ns, "apply", "--server-side", "--applyset", "configmaps/o").must(t).mfStdout(t, "configmaps/outside\n", "configmaps/other-set\n")

	// A ConfigMap parent: another set, another id.
	kdyn(t, env, "apply", "--server-side", "-n", ns, "-f", mfWrite(t, "c.yaml", asCM("c", nil)), "--prune", "--applyset=configmaps/web").must(t)
	asCheckParent(t, asParentMeta(t, mfGet(t, env, ns, "web")), asWantParent(asID("web", ns, "ConfigMap", ""), asKdynTooling, "ConfigMap", ""))
	if mfGet(t, env, ns, "a") == nil {
		t.Fatal("the ConfigMap set pruned a member of the Secret set")
	}
}

// TestApplySetFlags: the flag combinations kubectl refuses, and a
// namespaced parent without -n.
func TestApplySetFlags(t *testing.T) {
	env := testenv.Shared(t)
	file := mfWrite(t, "a.yaml", asCM("a", nil))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--applyset=web", "-n", "x"}, "--applyset requires --prune"},
		{[]string{"--prune", "-n", "x"}, "all resources selected for prune without explicitly passing --all"},
		{[]string{"--prune", "--all", "-l", "a=b", "-n", "x"}, "cannot set --all and --selector at the same time"},
		{[]string{"--prune", "--applyset=web", "--all", "-n", "x"}, "--all is incompatible with --applyset"},
		{[]string{"--prune", "--applyset=web", "--prune-allowlist=core/v1/Pod", "-n", "x"}, "--prune-allowlist is incompatible with --applyset"},
		{[]string{"--prune", "--all", "--server-side", "-n", "x"}, "doesn't currently work on objects created by server-side apply"},
		{[]string{"--prune", "--all", "--prune-allowlist=Pod", "-n", "x"}, "invalid --prune-allowlist entry"},
		{[]string{"--prune", "--applyset=web", "-l", "a=b", "-n", "x"}, "--selector is incompatible with --applyset"},
		{[]string{"--prune", "--applyset=web"}, "is namespaced: give its namespace with -n"},
		{[]string{"--prune", "--applyset=nosuchthings/web", "-n", "x"}, "invalid --applyset"},
		{[]string{"--prune", "--applyset=deployments.apps/web", "-n", "x"}, `resource "deployments.apps" is not permitted as an ApplySet parent`},
	} {
		kdyn(t, env, append([]string{"apply", "-f", file}, tc.args...)...).mfExpect(t, 1, tc.want)
	}
}

// TestApplySetClusterScopedParent: a custom resource parent (its CRD
// labelled applyset.kubernetes.io/is-parent-type) that is cluster-scoped:
// the id has no namespace, every member namespace is listed in
// additional-namespaces, and pruning follows them.
func TestApplySetClusterScopedParent(t *testing.T) {
	env := testenv.Shared(t)
	ns1, ns2 := mfNamespace(t, env), mfNamespace(t, env)
	group := ns1 + ".sets.kdyn.example"
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clustersets.%[1]s
  labels:
    %[2]s: "true"
spec:
  group: %[1]s
  scope: Cluster
  names: {plural: clustersets, singular: clusterset, kind: ClusterSet}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, group, asParentType)
	kdyn(t, env, "apply", "-f", mfWrite(t, "crd.yaml", crd)).must(t)
	kdyn(t, env, "wait", "--for=condition=Established", "crd/clustersets."+group).must(t)
	ref := "clustersets." + group + "/platform"
	file := func(nss ...string) string {
		var docs []string
		for _, ns := range nss {
			docs = append(docs, strings.Replace(asCM("m", nil), "  name: m\n", "  name: m\n  namespace: "+ns+"\n", 1))
		}
		return mfWrite(t, "m.yaml", asDocs(docs...))
	}
	// A custom resource parent is not created for you.
	kdyn(t, env, "apply", "-f", file(ns1), "--prune", "--applyset="+ref).mfExpect(t, 1, "a custom resource parent must be created first")
	if mfGet(t, env, ns1, "m") != nil {
		t.Fatal("objects were applied although the parent was refused")
	}
	// A CRD without the label does not make parents.
	plain := asGadgetCRD(t, env, ns1)
	kdyn(t, env, "apply", "-f", file(ns1), "--prune", "--applyset=gadgets."+plain+"/x", "-n", ns1).
		mfExpect(t, 1, `resource "gadgets.`+plain+`" is not permitted as an ApplySet parent`)

	// As kubectl, kdyn uses an existing parent only when it carries the
	// set's id label and the tooling and group-kinds annotations: whoever
	// creates a custom resource parent writes them.
	id := asID("platform", "", "ClusterSet", group)
	bare := fmt.Sprintf("apiVersion: %s/v1\nkind: ClusterSet\nmetadata:\n  name: bare\n", group)
	kdyn(t, env, "apply", "-f", mfWrite(t, "bare.yaml", bare)).must(t)
	kdyn(t, env, "apply", "-f", file(ns1), "--prune", "--applyset=clustersets."+group+"/bare").
		mfExpect(t, 1, `already exists and is missing required annotation "applyset.kubernetes.io/tooling"`)
	parent := fmt.Sprintf("apiVersion: %s/v1\nkind: ClusterSet\nmetadata:\n  name: platform\n  labels: {%s: %s}\n  annotations: {%s: %s, %s: \"\"}\n",
		group, asIDLabel, id, asTooling, asKdynTooling, asKinds)
	kdyn(t, env, "apply", "-f", mfWrite(t, "p.yaml", parent)).must(t)
	clustersets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "clustersets"}
	kdyn(t, env, "apply", "-f", file(ns1, ns2), "--prune", "--applyset="+ref).must(t)
	nsList := []string{ns1, ns2}
	if ns2 < ns1 {
		nsList = []string{ns2, ns1}
	}
	asCheckParent(t, asParentMeta(t, asGet(t, env, clustersets, "", "platform")), asWantParent(id, asKdynTooling, "ConfigMap", strings.Join(nsList, ",")))
	kdyn(t, env, "apply", "-f", file(ns1), "--prune", "--applyset="+ref).must(t).mfStdout(t, "configmap/m pruned")
	if mfGet(t, env, ns2, "m") != nil || mfGet(t, env, ns1, "m") == nil {
		t.Fatal("prune across namespaces deleted the wrong ConfigMap")
	}
	asCheckParent(t, asParentMeta(t, asGet(t, env, clustersets, "", "platform")), asWantParent(id, asKdynTooling, "ConfigMap", ns1))
}

// TestApplySetOtherTooling: kdyn refuses, before applying anything, a
// parent that another tool manages or that is not a parent at all (bench
// shows the same with kubectl itself).
func TestApplySetOtherTooling(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	parent := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: theirs
  labels:
    %s: %s
  annotations:
    %s: kubectl/v1.37.2
    %s: ConfigMap
    %s: ""
`, asIDLabel, asID("theirs", ns, "Secret", ""), asTooling, asKinds, asNamespaces)
	mfStdin(t, env, parent+"---\n"+asCM("plain", nil), "apply", "-n", ns, "-f", "-").must(t)
	file := mfWrite(t, "a.yaml", asCM("a", nil))
	kdyn(t, env, "apply", "-n", ns, "-f", file, "--prune", "--applyset=theirs").
		mfExpect(t, 1, `ApplySet parent object secret/theirs -n `+ns+` already exists and is managed by tooling "kubectl" instead of "kdyn"`)
	kdyn(t, env, "diff", "-n", ns, "-f", file, "--prune", "--applyset=theirs").mfExpect(t, 2, `managed by tooling "kubectl"`)
	kdyn(t, env, "apply", "-n", ns, "-f", file, "--prune", "--applyset=configmaps/plain").
		mfExpect(t, 1, `is missing required annotation "applyset.kubernetes.io/tooling"`)
	if mfGet(t, env, ns, "a") != nil {
		t.Fatal("an object was applied although the set was refused")
	}
	// An object that sets the part-of label itself is refused, as kubectl
	// refuses it.
	labelled := mfWrite(t, "l.yaml", asCM("l", map[string]string{asPartOf: "x"}))
	kdyn(t, env, "apply", "-n", ns, "-f", labelled, "--prune", "--applyset=mine").
		mfExpect(t, 1, `ApplySet label "applyset.kubernetes.io/part-of" already set in input data`, "l.yaml: document 1")
}

// asGrant gives the nobody user rules in ns and waits until RBAC lets it
// list ConfigMaps there.
func asGrant(t *testing.T, env *testenv.Env, ns, rules string) {
	t.Helper()
	rbac := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: applyset-test
rules:
%s---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: applyset-test
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: applyset-test}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: %s}
`, rules, testenv.NobodyUserName)
	mfStdin(t, env, rbac, "apply", "-n", ns, "-f", "-").must(t)
	for i := 0; ; i++ {
		if kdynAs(t, env, testenv.Nobody, "", "get", "configmaps", "-n", ns).code == 0 {
			return
		}
		if i == 50 {
			t.Fatal("RBAC did not let nobody list ConfigMaps")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestApplySetFailureHalfway: a user allowed some kinds and not others.
// When an object cannot be applied, nothing is pruned; when a member
// cannot be pruned, the others still are; each time the summary on stderr
// names what was applied, pruned and left, the exit code is 1, and the
// parent keeps listing the kinds of before and after.
func TestApplySetFailureHalfway(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	asGrant(t, env, ns, `- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, create, patch, update, delete]
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, create, patch, update]
- apiGroups: [""]
  resources: [serviceaccounts]
  verbs: [get, list]
`)
	id := asID("web", ns, "Secret", "")
	secret := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: old-secret\nstringData: {k: \"1\"}\n"
	kdyn(t, env, "apply", "-n", ns, "-f", mfWrite(t, "v1.yaml", asDocs(asCM("a", nil), asCM("old", nil), secret)), "--prune", "--applyset=web").must(t)

	// 1. A ServiceAccount nobody may not create: applied a and new, not
	// the ServiceAccount; nothing pruned; old and old-secret left.
	sa := "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n"
	v2 := mfWrite(t, "v2.yaml", asDocs(asCM("a", nil), asCM("new", nil), sa))
	r := kdynAs(t, env, testenv.Nobody, "", "apply", "-n", ns, "-f", v2, "--prune", "--applyset=web")
	r.mfExpect(t, 1, "Error from server (Forbidden): error when applying serviceaccount/robot (", "v2.yaml: document 3)")
	want := fmt.Sprintf(`ApplySet secret/web -n %[1]s: apply --prune did not finish: nothing was pruned because not every object was applied
  applied (2):
    configmap/a -n %[1]s
    configmap/new -n %[1]s
  not applied (1):
    serviceaccount/robot -n %[1]s
  pruned (0)
  left in the set, not pruned (2):
    configmap/old -n %[1]s
    secret/old-secret -n %[1]s
  The parent lists the kinds and namespaces of the previous apply and of this one, so the next apply --prune that succeeds prunes what is left.
`, ns)
	if !strings.HasSuffix(r.stderr, want) {
		t.Fatalf("summary:\n%s\nwant it to end with:\n%s", r.stderr, want)
	}
	if mfGet(t, env, ns, "old") == nil || mfGet(t, env, ns, "new") == nil {
		t.Fatal("configmap old was pruned or new not applied")
	}
	asCheckParent(t, asParentMeta(t, asGet(t, env, asSecretGVR, ns, "web")), asWantParent(id, asKdynTooling, "ConfigMap,Secret,ServiceAccount", ""))

	// 2. Pruning a Secret nobody may not delete: the ConfigMaps are
	// pruned, the Secret is left, the parent still lists Secret.
	v3 := mfWrite(t, "v3.yaml", asCM("a", nil))
	r = kdynAs(t, env, testenv.Nobody, "", "apply", "-n", ns, "-f", v3, "--prune", "--applyset=web")
	r.mfExpect(t, 1, "Error from server (Forbidden): error when pruning secret/old-secret -n "+ns+": ")
	r.mfStdout(t, "configmap/new pruned\n", "configmap/old pruned\n")
	for _, w := range []string{
		"apply --prune did not finish: some members could not be pruned\n",
		"  applied (1):\n    configmap/a -n " + ns + "\n",
		"  pruned (2):\n    configmap/new -n " + ns + "\n    configmap/old -n " + ns + "\n",
		"  left in the set, not pruned (1):\n    secret/old-secret -n " + ns + ": Error from server (Forbidden): ",
	} {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("summary lacks %q:\n%s", w, r.stderr)
		}
	}
	if asGet(t, env, asSecretGVR, ns, "old-secret") == nil {
		t.Fatal("the Secret was deleted")
	}
	asCheckParent(t, asParentMeta(t, asGet(t, env, asSecretGVR, ns, "web")), asWantParent(id, asKdynTooling, "ConfigMap,Secret,ServiceAccount", ""))

	// 3. The admin finishes the job: the Secret is pruned, the parent
	// lists ConfigMap alone.
	kdyn(t, env, "apply", "-n", ns, "-f", v3, "--prune", "--applyset=web").must(t).mfStdout(t, "secret/old-secret pruned")
	asCheckParent(t, asParentMeta(t, asGet(t, env, asSecretGVR, ns, "web")), asWantParent(id, asKdynTooling, "ConfigMap", ""))
}
