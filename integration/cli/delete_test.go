package cli_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// mfConfigMaps creates ConfigMaps with kdyn create, with labels.
func mfConfigMaps(t *testing.T, env *testenv.Env, ns string, labels string, names ...string) {
	t.Helper()
	var docs []string
	for _, n := range names {
		doc := mfConfigMap(n, ns, nil)
		if labels != "" {
			doc = strings.Replace(doc, "metadata:\n", "metadata:\n  labels: {"+labels+"}\n", 1)
		}
		docs = append(docs, doc)
	}
	mfStdin(t, env, strings.Join(docs, "---\n"), "create", "-f", "-").must(t)
}

func TestDeleteByName(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	mfConfigMaps(t, env, ns, "", "a", "b", "c", "d")
	r := kdyn(t, env, "delete", "-n", ns, "configmap", "a", "b").must(t)
	if want := fmt.Sprintf("configmap \"a\" deleted from %[1]s namespace\nconfigmap \"b\" deleted from %[1]s namespace\n", ns); r.stdout != want {
		t.Fatalf("delete output:\n%s\nwant:\n%s", r.stdout, want)
	}
	if mfGet(t, env, ns, "a") != nil || mfGet(t, env, ns, "b") != nil {
		t.Fatal("objects still there after delete (which waits by default)")
	}
	kdyn(t, env, "delete", "-n", ns, "cm/c", "configmaps/d", "-o", "name").must(t).mfStdout(t, "configmap/c\nconfigmap/d\n")

	// Not found: kubectl's message, exit 1 (3 with --exit-codes); the
	// other names are still deleted.
	mfConfigMaps(t, env, ns, "", "e")
	kdyn(t, env, "delete", "-n", ns, "cm", "missing", "e").mfExpect(t, 1, `Error from server (NotFound): configmaps "missing" not found`).
		mfStdout(t, `configmap "e" deleted`)
	kdyn(t, env, "--exit-codes", "delete", "-n", ns, "cm", "missing").mfExpect(t, 3)
	kdyn(t, env, "delete", "-n", ns, "cm", "missing", "--ignore-not-found").must(t)

	// Usage errors.
	kdyn(t, env, "delete", "-n", ns, "cm").mfExpect(t, 1, "error: resource(s) were provided, but no name was specified")
	kdyn(t, env, "delete").mfExpect(t, 1, "you must give the objects to delete")
	kdyn(t, env, "--exit-codes", "delete", "-n", ns, "cm", "x", "--all").mfExpect(t, 2)
	kdyn(t, env, "delete", "-n", ns, "nosuchtype", "x").mfExpect(t, 1, `the server doesn't have a resource type "nosuchtype"`)
}

func TestDeleteBySelectorAndAll(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	other := mfNamespace(t, env)
	run := mfName("run")
	mfConfigMaps(t, env, ns, "app: web, run: "+run, "web1", "web2")
	mfConfigMaps(t, env, ns, "app: db", "db1")
	mfConfigMaps(t, env, other, "app: web, run: "+run, "web3")

	r := kdyn(t, env, "delete", "-n", ns, "cm", "-l", "app=web").must(t)
	if !strings.Contains(r.stdout, `configmap "web1" deleted`) || !strings.Contains(r.stdout, `configmap "web2" deleted`) || strings.Contains(r.stdout, "db1") {
		t.Fatalf("delete -l:\n%s", r.stdout)
	}
	if mfGet(t, env, other, "web3") == nil {
		t.Fatal("delete -l -n reached another namespace")
	}
	// Nothing left to select: no error.
	kdyn(t, env, "delete", "-n", ns, "cm", "-l", "app=web").must(t).mfStdout(t, "No resources found")
	// -A with a selector unique to this test.
	kdyn(t, env, "delete", "-A", "cm", "-l", "run="+run).must(t).mfStdout(t, `configmap "web3" deleted from `+other+` namespace`)
	// --all in one namespace.
	kdyn(t, env, "delete", "-n", ns, "cm", "--all").must(t).mfStdout(t, `configmap "db1" deleted from `+ns+` namespace`)
	if mfGet(t, env, ns, "db1") != nil {
		t.Fatal("--all left an object")
	}
	kdyn(t, env, "delete", "-n", ns, "cm", "--all", "-l", "app=web").mfExpect(t, 1, "cannot set --all and --selector at the same time")
}

func TestDeleteFromFile(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	group := mfName("mfdel") + ".kdyn.example"
	sn := "gd" + strings.ReplaceAll(strings.TrimSuffix(group, ".kdyn.example")[len("mfdel-"):], "-", "")
	file := mfWrite(t, "app.yaml", mfCRD(group, sn)+"---\n"+
		fmt.Sprintf("apiVersion: %s/v1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: %s\n---\n", group, ns)+
		mfConfigMap("conf", ns, nil))
	kdyn(t, env, "apply", "-f", file).must(t)
	r := kdyn(t, env, "delete", "-f", file, "--timeout=60s").must(t)
	// The custom object and the ConfigMap go before the CRD.
	want := fmt.Sprintf("gadget.%[1]s \"g\" deleted from %[2]s namespace\nconfigmap \"conf\" deleted from %[2]s namespace\ncustomresourcedefinition.apiextensions.k8s.io \"gadgets.%[1]s\" deleted\n", group, ns)
	if r.stdout != want {
		t.Fatalf("delete -f:\n%s\nwant:\n%s", r.stdout, want)
	}
	r = kdyn(t, env, "delete", "-f", file).mfExpect(t, 1, `Error from server (NotFound): error when deleting configmap/conf (`+file+`: document 3): configmaps "conf" not found`)
	kdyn(t, env, "delete", "-f", mfWrite(t, "cm.yaml", mfConfigMap("conf", ns, nil)), "--ignore-not-found").must(t)
}

func TestDeleteDryRunAndForce(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	mfConfigMaps(t, env, ns, "", "keep", "gone")
	kdyn(t, env, "delete", "-n", ns, "cm", "keep", "--dry-run=server").must(t).mfStdout(t, `configmap "keep" deleted from `+ns+` namespace (server dry run)`)
	kdyn(t, env, "delete", "-n", ns, "cm", "keep", "--dry-run=client").must(t).mfStdout(t, `configmap "keep" deleted from `+ns+` namespace (dry run)`)
	if mfGet(t, env, ns, "keep") == nil {
		t.Fatal("a dry run deleted the object")
	}
	kdyn(t, env, "delete", "-n", ns, "cm", "missing", "--dry-run=client").mfExpect(t, 1, `configmaps "missing" not found`)
	kdyn(t, env, "delete", "-n", ns, "cm", "gone", "--force").mfExpect(t, 0, "Warning: Immediate deletion").
		mfStdout(t, `configmap "gone" force deleted from `+ns+` namespace`)
	kdyn(t, env, "delete", "-n", ns, "cm", "keep", "--force", "--grace-period=5").mfExpect(t, 1, "--force and --grace-period greater than 0 cannot be specified together")
	kdyn(t, env, "delete", "-n", ns, "cm", "keep", "--now", "--grace-period=5").mfExpect(t, 1, "--now and --grace-period cannot be specified together")
	kdyn(t, env, "delete", "-n", ns, "cm", "keep", "--cascade=sideways").mfExpect(t, 1, `invalid --cascade value "sideways"`)
}

// TestDeleteCascade shows what the server does with foreground and orphan
// deletion when, as here, no garbage collector runs: it marks the object
// (deletionTimestamp) and adds the foregroundDeletion or orphan finalizer,
// which only the garbage collector would remove. So --wait times out, with
// a message naming the finalizer, instead of hanging.
func TestDeleteCascade(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	mfConfigMaps(t, env, ns, "", "fg", "orph", "bg")
	for _, tc := range []struct {
		name, cascade, finalizer string
	}{
		{"fg", "foreground", "foregroundDeletion"},
		{"orph", "orphan", "orphan"},
	} {
		kdyn(t, env, "delete", "-n", ns, "cm", tc.name, "--cascade="+tc.cascade, "--wait=false").must(t).mfStdout(t, `configmap "`+tc.name+`" deleted`)
		obj := mfGet(t, env, ns, tc.name)
		if obj == nil || obj.GetDeletionTimestamp() == nil || len(obj.GetFinalizers()) != 1 || obj.GetFinalizers()[0] != tc.finalizer {
			t.Fatalf("%s: the server should keep the object with deletionTimestamp and finalizer %s: %v", tc.cascade, tc.finalizer, obj)
		}
		kdyn(t, env, "delete", "-n", ns, "cm", tc.name, "--cascade="+tc.cascade, "--timeout=1s").
			mfExpect(t, 1, fmt.Sprintf(`error: timed out after 1s waiting for configmap %q in namespace %q to be deleted: deletion pending since`, tc.name, ns), "held by finalizers "+tc.finalizer)
		kdyn(t, env, "--exit-codes", "delete", "-n", ns, "cm", tc.name, "--cascade="+tc.cascade, "--timeout=1s").mfExpect(t, 7)
		// What the garbage collector would do: remove the finalizer; the
		// wait then ends.
		mfRemoveFinalizers(t, env, mfCMGVR, ns, tc.name)
		if mfGet(t, env, ns, tc.name) != nil {
			t.Fatalf("%s: still there without its finalizer", tc.name)
		}
	}
	// A background deletion of an object pending foreground deletion makes
	// the server drop the foregroundDeletion finalizer: it is gone at once.
	mfConfigMaps(t, env, ns, "", "switch")
	kdyn(t, env, "delete", "-n", ns, "cm", "switch", "--cascade=foreground", "--wait=false").must(t)
	kdyn(t, env, "delete", "-n", ns, "cm", "switch", "--timeout=10s").must(t)
	if mfGet(t, env, ns, "switch") != nil {
		t.Fatal("background deletion after foreground left the object")
	}
	// Background: gone at once.
	kdyn(t, env, "delete", "-n", ns, "cm", "bg", "--cascade=background", "--timeout=10s").must(t)
	if mfGet(t, env, ns, "bg") != nil {
		t.Fatal("background deletion left the object")
	}
}

// TestDeleteInteractive: delete -i lists what it found and deletes only
// when stdin answers y, in kubectl's words.
func TestDeleteInteractive(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	mfConfigMaps(t, env, ns, "deletetest: \"true\"", "one", "two")
	r := mfStdin(t, env, "n\n", "delete", "configmaps", "-i", "-l", "deletetest=true", "-n", ns).must(t)
	want := "You are about to delete the following 2 resource(s):\nconfigmap/one\nconfigmap/two\nDo you want to continue? (y/N): deletion is cancelled\n"
	if r.stdout != want {
		t.Errorf("answer n: %q, want %q", r.stdout, want)
	}
	if got := kdyn(t, env, "get", "cm", "-l", "deletetest=true", "-n", ns, "-o", "name").must(t).stdout; got != "configmap/one\nconfigmap/two\n" {
		t.Errorf("after n: %q", got)
	}
	r = mfStdin(t, env, "y\n", "delete", "configmaps", "--interactive", "-l", "deletetest=true", "-n", ns).must(t)
	if !strings.HasSuffix(r.stdout, "(y/N): configmap \"one\" deleted from "+ns+" namespace\nconfigmap \"two\" deleted from "+ns+" namespace\n") {
		t.Errorf("answer y: %q", r.stdout)
	}
	r = mfStdin(t, env, "y\n", "delete", "configmap", "gone", "-i", "-n", ns)
	if r.code != 1 || !strings.Contains(r.stderr, `configmaps "gone" not found`) || strings.Contains(r.stdout, "continue") {
		t.Errorf("a missing object: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
}
