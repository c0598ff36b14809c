package cli_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/integration/testenv"
)

var deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// deployment is a Deployment manifest; strategy and volume are YAML
// fragments of its spec and pod spec, extra goes into metadata.
func deployment(ns, name, selector, strategy, volume, extra string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s
  namespace: %[1]s
%[6]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[3]s}
  strategy:
%[4]s
  template:
    metadata:
      labels: {app: %[3]s}
    spec:
      containers:
      - name: main
        image: registry.k8s.io/pause:3.10
        volumeMounts: [{name: data, mountPath: /data}]
      volumes:
      - name: data
%[5]s
`, ns, name, selector, strategy, volume, extra)
}

func getDeployment(t *testing.T, env *testenv.Env, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := mfClient(t, env).Resource(deployGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestApplyStrategicMerge: client-side apply of a built-in kind sends a
// strategic merge patch, as kubectl's: a strategy that becomes Recreate
// drops the defaulted rollingUpdate (retainKeys), a volume's source is
// replaced, a container another client added is kept (lists merge by
// key); a manifest with a stale resourceVersion is refused (Conflict);
// --force deletes and creates an object the server will not patch, and
// puts the old one back when the new one is invalid.
func TestApplyStrategicMerge(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	const rolling = "    type: RollingUpdate"
	const recreate = "    type: Recreate"
	file := mfWrite(t, "d.yaml", deployment(ns, "web", "web", rolling, "        emptyDir: {}", ""))
	kdyn(t, env, "apply", "-f", file).must(t).mfStdout(t, "deployment.apps/web created\n")
	live := getDeployment(t, env, ns, "web")
	if _, ok, _ := unstructured.NestedMap(live.Object, "spec", "strategy", "rollingUpdate"); !ok {
		t.Fatalf("the server did not default rollingUpdate: %v", live.Object["spec"])
	}

	// Another client adds a sidecar container.
	containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	containers = append(containers, map[string]any{"name": "sidecar", "image": "registry.k8s.io/pause:3.10"})
	if err := unstructured.SetNestedSlice(live.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if _, err := mfClient(t, env).Resource(deployGVR).Namespace(ns).Update(t.Context(), live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	after := deployment(ns, "web", "web", recreate, "        hostPath: {path: /tmp}", "")
	if err := os.WriteFile(file, []byte(after), 0o644); err != nil {
		t.Fatal(err)
	}
	// A client dry run computes the same patch locally.
	dry := kdyn(t, env, "apply", "-f", file, "--dry-run=client", "-o", "json").must(t)
	if strings.Contains(dry.stdout, "rollingUpdate") || strings.Contains(dry.stdout, "emptyDir") || !strings.Contains(dry.stdout, "sidecar") {
		t.Fatalf("client dry run:\n%s", dry.stdout)
	}
	kdyn(t, env, "apply", "-f", file).must(t).mfStdout(t, "deployment.apps/web configured\n")
	live = getDeployment(t, env, ns, "web")
	strategy, _, _ := unstructured.NestedMap(live.Object, "spec", "strategy")
	if strategy["type"] != "Recreate" || strategy["rollingUpdate"] != nil {
		t.Errorf("strategy after apply: %v", strategy)
	}
	volumes, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "volumes")
	if len(volumes) != 1 || volumes[0].(map[string]any)["emptyDir"] != nil || volumes[0].(map[string]any)["hostPath"] == nil {
		t.Errorf("volumes after apply: %v", volumes)
	}
	containers, _, _ = unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	if len(containers) != 2 {
		t.Errorf("containers after apply (the sidecar should stay): %v", containers)
	}

	// A stale resourceVersion in the manifest: Conflict, nothing changed.
	stale := deployment(ns, "web", "web2", recreate, "        hostPath: {path: /tmp}", `  resourceVersion: "1"`)
	if err := os.WriteFile(file, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	kdyn(t, env, "apply", "-f", file).mfExpect(t, 1, "Error from server (Conflict)")
	uid := getDeployment(t, env, ns, "web").GetUID()

	// --force: the selector is immutable (and the version stale), so the
	// object is deleted and created from the manifest.
	kdyn(t, env, "apply", "-f", file, "--force", "--grace-period=0").must(t)
	live = getDeployment(t, env, ns, "web")
	if live.GetUID() == uid {
		t.Fatal("--force did not create the object again")
	}
	if sel, _, _ := unstructured.NestedString(live.Object, "spec", "selector", "matchLabels", "app"); sel != "web2" {
		t.Fatalf("selector after --force: %q", sel)
	}

	// --force with a manifest the server finds invalid: the old object is
	// created again and the error is reported.
	bad := deployment(ns, "web", "web3", recreate, "        hostPath: {path: /tmp}", "")
	bad = strings.Replace(bad, "replicas: 1", "replicas: -1", 1)
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	kdyn(t, env, "apply", "-f", file, "--force").mfExpect(t, 1, "Invalid value")
	live = getDeployment(t, env, ns, "web")
	if sel, _, _ := unstructured.NestedString(live.Object, "spec", "selector", "matchLabels", "app"); sel != "web2" {
		t.Fatalf("the old object was not put back: selector %q", sel)
	}
	kdyn(t, env, "apply", "-f", file, "--force", "--server-side").mfExpect(t, 1, "--force cannot be used with --server-side")
}

// A null in the manifest means "no value" on create as on update: the
// create sends the object without it (a null quantity would be stored as
// 0), and the last-applied annotation keeps the manifest as written.
func TestApplyCreateDropsNulls(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	manifest := deployment(ns, "nulls", "nulls", "    type: Recreate", "        emptyDir: {}", "")
	manifest = strings.Replace(manifest, "        volumeMounts:", "        resources: {requests: {memory: 64Mi, cpu: null}}\n        volumeMounts:", 1)
	file := mfWrite(t, "d.yaml", manifest)
	for _, want := range []string{"created", "unchanged"} {
		kdyn(t, env, "apply", "-f", file).must(t).mfStdout(t, "deployment.apps/nulls "+want+"\n")
		live := getDeployment(t, env, ns, "nulls")
		containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
		req, _, _ := unstructured.NestedMap(containers[0].(map[string]any), "resources", "requests")
		if _, ok := req["cpu"]; ok || req["memory"] != "64Mi" {
			t.Fatalf("after %s: requests %v", want, req)
		}
		if !strings.Contains(live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"], `"cpu":null`) {
			t.Fatalf("the last-applied annotation lost the null: %s", live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"])
		}
	}
}
