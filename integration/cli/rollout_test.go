package cli_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

var (
	rdStatefulSetGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	rdDaemonSetGVR   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	rdReplicaSetGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	rdRevisionGVR    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
)

// rdTemplate is a pod template with labels and one container's image.
func rdTemplate(labels map[string]any, image string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": labels},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}},
	}
}

// rdWorkload creates a Deployment, StatefulSet or DaemonSet named name
// running image, selecting app=name.
func rdWorkload(t *testing.T, c *dynamic.DynamicClient, gvr schema.GroupVersionResource, kind, ns, name, image string) *unstructured.Unstructured {
	t.Helper()
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": rdTemplate(map[string]any{"app": name}, image),
	}
	if kind != "DaemonSet" {
		spec["replicas"] = int64(2)
	}
	if kind == "StatefulSet" {
		spec["serviceName"] = name
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	got, err := c.Resource(gvr).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// rdOwnedBy is a controller owner reference to owner.
func rdOwnedBy(owner *unstructured.Unstructured) []any {
	return []any{map[string]any{
		"apiVersion": owner.GetAPIVersion(), "kind": owner.GetKind(), "name": owner.GetName(),
		"uid": string(owner.GetUID()), "controller": true, "blockOwnerDeletion": true,
	}}
}

// rdReplicaSet creates the ReplicaSet of revision rev of deployment d, as
// the deployment controller would: owned by d, with the revision
// annotation and a pod-template-hash label.
func rdReplicaSet(t *testing.T, c *dynamic.DynamicClient, d *unstructured.Unstructured, rev int, image, cause string) {
	t.Helper()
	hash := fmt.Sprintf("h%d", rev)
	labels := map[string]any{"app": d.GetName(), "pod-template-hash": hash}
	ann := map[string]any{"deployment.kubernetes.io/revision": fmt.Sprint(rev)}
	if cause != "" {
		ann["kubernetes.io/change-cause"] = cause
	}
	rs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{
			"name": d.GetName() + "-" + hash, "namespace": d.GetNamespace(), "labels": labels,
			"annotations": ann, "ownerReferences": rdOwnedBy(d),
		},
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"matchLabels": labels},
			"template": rdTemplate(labels, image),
		},
	}}
	if _, err := c.Resource(rdReplicaSetGVR).Namespace(d.GetNamespace()).Create(t.Context(), rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// rdControllerRevision creates revision rev of a StatefulSet or DaemonSet,
// as their controllers do: its data is the strategic merge patch that
// restores the template, with the defaults the server gives a template
// (found by a dry-run update of the owner with that image).
func rdControllerRevision(t *testing.T, c *dynamic.DynamicClient, gvr schema.GroupVersionResource, owner *unstructured.Unstructured, rev int, image, cause string) {
	t.Helper()
	live := ocGet(t, c, gvr, owner.GetNamespace(), owner.GetName())
	if err := unstructured.SetNestedField(live.Object, rdTemplate(map[string]any{"app": owner.GetName()}, image), "spec", "template"); err != nil {
		t.Fatal(err)
	}
	defaulted, err := c.Resource(gvr).Namespace(owner.GetNamespace()).Update(t.Context(), live, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, _, _ := unstructured.NestedMap(defaulted.Object, "spec", "template")
	tmpl["$patch"] = "replace"
	md := map[string]any{
		"name": fmt.Sprintf("%s-%d", owner.GetName(), rev), "namespace": owner.GetNamespace(),
		"labels": map[string]any{"app": owner.GetName()}, "ownerReferences": rdOwnedBy(owner),
	}
	if cause != "" {
		md["annotations"] = map[string]any{"kubernetes.io/change-cause": cause}
	}
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": md,
		"revision": int64(rev),
		"data":     map[string]any{"spec": map[string]any{"template": tmpl}},
	}}
	if _, err := c.Resource(rdRevisionGVR).Namespace(owner.GetNamespace()).Create(t.Context(), cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// rdImage is the first container's image of a workload's template.
func rdImage(t *testing.T, c *dynamic.DynamicClient, gvr schema.GroupVersionResource, ns, name string) string {
	t.Helper()
	obj := ocGet(t, c, gvr, ns, name)
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	return containers[0].(map[string]any)["image"].(string)
}

// TestRolloutStatus follows each kind's rollout with kubectl's progress
// lines until the status a test writes completes it; the readiness rules
// hold "done" back while a Deployment's Available condition is missing.
func TestRolloutStatus(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	rdWorkload(t, c, ocDeployGVR, "Deployment", ns, "web", "nginx:1.27")
	rdWorkload(t, c, rdStatefulSetGVR, "StatefulSet", ns, "db", "nginx:1.27")
	rdWorkload(t, c, rdDaemonSetGVR, "DaemonSet", ns, "agent", "nginx:1.27")

	// Deployment: watched through two status writes.
	ch := ocStart(t, env, "-n", ns, "rollout", "status", "deployment/web", "--timeout=30s")
	ocWatching(t, ch)
	rdSetStatus(t, env, ns, "deploy/web", `{"status":{"observedGeneration":1,"replicas":2,"updatedReplicas":1,"availableReplicas":1,"readyReplicas":1}}`)
	ocStillRunning(t, ch, 500*time.Millisecond)
	start := time.Now()
	rdSetStatus(t, env, ns, "deploy/web", rdDeploymentStatus(1, 2, 2))
	r := ocResult(t, ch).must(t)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("rollout status saw the end %s after it was written", d)
	}
	for _, want := range []string{
		"Waiting for deployment spec update to be observed...\n",
		`Waiting for deployment "web" rollout to finish: 1 out of 2 new replicas have been updated...` + "\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.HasSuffix(r.stdout, "deployment \"web\" successfully rolled out\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	// kubectl's counts are done, readiness is not (Available=False).
	rdSetStatus(t, env, ns, "deploy/web", `{"status":{"conditions":[{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable"},{"type":"Available","status":"False","reason":"MinimumReplicasUnavailable"}]}}`)
	r = kdyn(t, env, "-n", ns, "rollout", "status", "deploy/web", "--watch=false").must(t)
	ocStdout(t, r, "Waiting for deployment \"web\" rollout to finish: Deployment not Available...\n")
	rdSetStatus(t, env, ns, "deploy/web", `{"status":{"conditions":[{"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded"}]}}`)
	kdyn(t, env, "-n", ns, "rollout", "status", "deploy/web").mfExpect(t, 1, `deployment "web" exceeded its progress deadline`)

	// StatefulSet.
	rdSetStatus(t, env, ns, "sts/db", `{"status":{"observedGeneration":1,"replicas":2,"readyReplicas":1,"currentReplicas":2,"updatedReplicas":2,"currentRevision":"db-1","updateRevision":"db-1"}}`)
	ch = ocStart(t, env, "-n", ns, "rollout", "status", "sts/db", "--timeout=30s")
	ocWatching(t, ch)
	rdSetStatus(t, env, ns, "sts/db", `{"status":{"readyReplicas":2,"availableReplicas":2}}`)
	r = ocResult(t, ch).must(t)
	ocStdout(t, r, "Waiting for 1 pods to be ready...\npartitioned roll out complete: 2 new pods have been updated...\n")

	// DaemonSet.
	rdSetStatus(t, env, ns, "ds/agent", `{"status":{"observedGeneration":1,"desiredNumberScheduled":3,"currentNumberScheduled":3,"updatedNumberScheduled":3,"numberAvailable":1,"numberReady":1,"numberMisscheduled":0}}`)
	ch = ocStart(t, env, "-n", ns, "rollout", "status", "daemonset/agent", "--timeout=30s")
	ocWatching(t, ch)
	rdSetStatus(t, env, ns, "ds/agent", `{"status":{"numberAvailable":3,"numberReady":3}}`)
	r = ocResult(t, ch).must(t)
	ocStdout(t, r, "Waiting for daemon set \"agent\" rollout to finish: 1 of 3 updated pods are available...\ndaemon set \"agent\" successfully rolled out\n")

	// Timeout, and a kind without rollouts.
	kdyn(t, env, "-n", ns, "--exit-codes", "rollout", "status", "deploy/web", "--timeout=1s").mfExpect(t, 1, "exceeded its progress deadline")
	rdSetStatus(t, env, ns, "sts/db", `{"status":{"readyReplicas":1,"availableReplicas":1}}`)
	kdyn(t, env, "-n", ns, "--exit-codes", "rollout", "status", "sts/db", "--timeout=1s").mfExpect(t, 7, "timed out waiting for the condition")
	ocConfigMap(t, c, ns, "cm", nil, nil)
	kdyn(t, env, "-n", ns, "rollout", "status", "cm/cm").mfExpect(t, 1, `no status viewer has been implemented for ConfigMap`)
}

// TestRolloutRestartHistoryUndo: for each kind, restart stamps the pod
// template, history lists the revisions the test made as the controllers
// would (ReplicaSets, ControllerRevisions) and describes one, and undo
// restores the previous revision's template, then skips when it matches.
func TestRolloutRestartHistoryUndo(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	for _, tc := range []struct {
		kind, typ, kindName string
		gvr                 schema.GroupVersionResource
	}{
		{"Deployment", "deployment", "deployment.apps", ocDeployGVR},
		{"StatefulSet", "statefulset", "statefulset.apps", rdStatefulSetGVR},
		{"DaemonSet", "daemonset", "daemonset.apps", rdDaemonSetGVR},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			name := strings.ToLower(tc.kind)
			obj := rdWorkload(t, c, tc.gvr, tc.kind, ns, name, "nginx:1.27")
			ref := tc.typ + "/" + name

			// restart
			before := time.Now().Add(-time.Second)
			r := kdyn(t, env, "-n", ns, "rollout", "restart", ref).must(t)
			ocStdout(t, r, tc.kindName+"/"+name+" restarted\n")
			got := ocGet(t, c, tc.gvr, ns, name)
			stamp, _, _ := unstructured.NestedString(got.Object, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
			at, err := time.Parse(time.RFC3339, stamp)
			if err != nil || at.Before(before.Truncate(time.Second)) || at.After(time.Now()) {
				t.Errorf("restartedAt %q (%v)", stamp, err)
			}
			if got.GetGeneration() != 2 {
				t.Errorf("generation %d after restart, want 2", got.GetGeneration())
			}

			// history: no revisions yet, then two.
			r = kdyn(t, env, "-n", ns, "rollout", "history", ref).must(t)
			ocStdout(t, r, tc.kindName+"/"+name+" \nNo rollout history found.\n")
			if tc.kind == "Deployment" {
				rdReplicaSet(t, c, obj, 1, "nginx:1.26", "")
				rdReplicaSet(t, c, obj, 2, "nginx:1.27", "kdyn set image app=nginx:1.27")
			} else {
				rdControllerRevision(t, c, tc.gvr, obj, 1, "nginx:1.26", "")
				rdControllerRevision(t, c, tc.gvr, obj, 2, "nginx:1.27", "kdyn set image app=nginx:1.27")
			}
			r = kdyn(t, env, "-n", ns, "rollout", "history", ref).must(t)
			ocStdout(t, r, tc.kindName+"/"+name+" \nREVISION  CHANGE-CAUSE\n1         <none>\n2         kdyn set image app=nginx:1.27\n\n")
			r = kdyn(t, env, "-n", ns, "rollout", "history", ref, "--revision=1").must(t)
			if !strings.HasPrefix(r.stdout, tc.kindName+"/"+name+" with revision #1\nPod Template:\n  Labels:\tapp="+name+"\n") ||
				!strings.Contains(r.stdout, "  Containers:\n   app:\n    Image:\tnginx:1.26\n    Port:\t<none>\n    Host Port:\t<none>\n    Environment:\t<none>\n    Mounts:\t<none>\n  Volumes:\t<none>\n") {
				t.Errorf("history --revision=1:\n%s", r.stdout)
			}
			r = kdyn(t, env, "-n", ns, "rollout", "history", ref, "--revision=2", "-o", "jsonpath={.spec.template.spec.containers[0].image}").must(t)
			ocStdout(t, r, "nginx:1.27")
			kdyn(t, env, "-n", ns, "rollout", "history", ref, "--revision=7").mfExpect(t, 1, "unable to find the specified revision")

			// undo: to the revision before the latest (1).
			kdyn(t, env, "-n", ns, "rollout", "undo", ref, "--dry-run=server").must(t)
			if img := rdImage(t, c, tc.gvr, ns, name); img != "nginx:1.27" {
				t.Fatalf("a server dry run changed the image to %s", img)
			}
			// A client dry run describes the template it would restore.
			r = kdyn(t, env, "-n", ns, "rollout", "undo", ref, "--dry-run=client").must(t)
			if !strings.Contains(r.stdout, "Pod Template:\n") || !strings.Contains(r.stdout, "    Image:\tnginx:1.26\n") || !strings.HasSuffix(r.stdout, "\n (dry run)\n") {
				t.Errorf("undo --dry-run=client:\n%s", r.stdout)
			}
			if img := rdImage(t, c, tc.gvr, ns, name); img != "nginx:1.27" {
				t.Fatalf("a client dry run changed the image to %s", img)
			}
			r = kdyn(t, env, "-n", ns, "rollout", "undo", ref).must(t)
			ocStdout(t, r, tc.kindName+"/"+name+" rolled back\n")
			if img := rdImage(t, c, tc.gvr, ns, name); img != "nginx:1.26" {
				t.Errorf("image %s after undo, want revision 1's nginx:1.26", img)
			}
			got = ocGet(t, c, tc.gvr, ns, name)
			if labels, _, _ := unstructured.NestedStringMap(got.Object, "spec", "template", "metadata", "labels"); labels["pod-template-hash"] != "" {
				t.Errorf("the rollback kept the pod-template-hash label: %v", labels)
			}
			r = kdyn(t, env, "-n", ns, "rollout", "undo", ref, "--to-revision=1").must(t)
			ocStdout(t, r, tc.kindName+"/"+name+" skipped rollback (current template already matches revision 1)\n")
			kdyn(t, env, "-n", ns, "rollout", "undo", ref, "--to-revision=9").mfExpect(t, 1, "unable to find specified revision 9 in history")
			r = kdyn(t, env, "-n", ns, "rollout", "undo", ref, "--to-revision=2").must(t)
			ocStdout(t, r, tc.kindName+"/"+name+" rolled back\n")
			if img := rdImage(t, c, tc.gvr, ns, name); img != "nginx:1.27" {
				t.Errorf("image %s after undo to 2", img)
			}
		})
	}
	// A paused deployment is neither restarted nor rolled back.
	kdyn(t, env, "-n", ns, "patch", "deploy/deployment", "-p", `{"spec":{"paused":true}}`).must(t)
	kdyn(t, env, "-n", ns, "rollout", "restart", "deploy/deployment").mfExpect(t, 1, "can't restart paused deployment (run rollout resume first)")
	kdyn(t, env, "-n", ns, "rollout", "undo", "deploy/deployment").mfExpect(t, 1, "you cannot rollback a paused deployment")
}
