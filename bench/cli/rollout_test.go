package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// These tests compare kdyn rollout status|history|undo|restart with
// kubectl v0.37.2's on the real control plane. It runs no controller
// manager, so the test plays the controllers: it writes the ReplicaSets
// (a Deployment's revisions, numbered by their
// deployment.kubernetes.io/revision annotation) and ControllerRevisions (a
// StatefulSet's or DaemonSet's) that kubectl reads, owned by the workload,
// and sets each workload's status through the status subresource.

var (
	roStatefulSetGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	roDaemonSetGVR   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	roReplicaSetGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	roRevisionGVR    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
)

// roKind is one of the kinds with rollouts.
type roKind struct {
	kind, typ string
	gvr       schema.GroupVersionResource
}

var (
	roDeployment  = roKind{"Deployment", "deployment", vbDeployGVR}
	roStatefulSet = roKind{"StatefulSet", "statefulset", roStatefulSetGVR}
	roDaemonSet   = roKind{"DaemonSet", "daemonset", roDaemonSetGVR}
	roKinds       = []roKind{roDeployment, roStatefulSet, roDaemonSet}
)

// roTemplate is a pod template labelled app=app running image. A rich one
// has most of what kubectl's pod template description shows: annotations,
// a service account, an init container, ports, command and args,
// resources, environment of each source, mounts, volumes, a node selector
// and tolerations.
func roTemplate(app, image string, rich bool) map[string]any {
	container := map[string]any{"name": "app", "image": image}
	spec := map[string]any{"containers": []any{container}}
	md := map[string]any{"labels": map[string]any{"app": app}}
	if !rich {
		return map[string]any{"metadata": md, "spec": spec}
	}
	md["labels"].(map[string]any)["tier"] = "web"
	md["annotations"] = map[string]any{"team": "a", "note": "two\nlines"}
	container["ports"] = []any{
		map[string]any{"containerPort": int64(8080), "name": "http"},
		map[string]any{"containerPort": int64(9090), "protocol": "UDP", "hostPort": int64(9090)},
	}
	container["command"] = []any{"/bin/server"}
	container["args"] = []any{"--port=8080", "--verbose"}
	container["resources"] = map[string]any{
		"limits":   map[string]any{"memory": "128Mi", "cpu": "500m"},
		"requests": map[string]any{"cpu": "100m"},
	}
	container["env"] = []any{
		map[string]any{"name": "MODE", "value": "prod"},
		map[string]any{"name": "MULTI", "value": "a\nb"},
		map[string]any{"name": "PASSWORD", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db", "key": "password"}}},
		map[string]any{"name": "LEVEL", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "cfg", "key": "level", "optional": true}}},
		map[string]any{"name": "NODE", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "spec.nodeName"}}},
		map[string]any{"name": "MEM", "valueFrom": map[string]any{"resourceFieldRef": map[string]any{"resource": "limits.memory", "containerName": "app"}}},
	}
	container["volumeMounts"] = []any{
		map[string]any{"name": "data", "mountPath": "/var/data"},
		map[string]any{"name": "conf", "mountPath": "/etc/app", "readOnly": true, "subPath": "app"},
	}
	spec["serviceAccountName"] = "robot"
	spec["initContainers"] = []any{map[string]any{"name": "init", "image": "busybox:1.36", "command": []any{"sh", "-c", "echo ready"}}}
	spec["volumes"] = []any{
		map[string]any{"name": "data", "emptyDir": map[string]any{}},
		map[string]any{"name": "conf", "configMap": map[string]any{"name": "cfg"}},
	}
	spec["nodeSelector"] = map[string]any{"disk": "ssd"}
	spec["tolerations"] = []any{
		map[string]any{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
		map[string]any{"operator": "Exists"},
		map[string]any{"key": "slow", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(30)},
	}
	return map[string]any{"metadata": md, "spec": spec}
}

// roWorkload creates a workload of kind k named name with template tmpl
// (selecting app=name), 2 replicas where the kind has replicas, and
// strategy, when set, as its update strategy type.
func roWorkload(t *testing.T, c dynamic.Interface, k roKind, ns, name string, tmpl map[string]any, strategy string) *unstructured.Unstructured {
	t.Helper()
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": tmpl,
	}
	if k != roDaemonSet {
		spec["replicas"] = int64(2)
	}
	if k == roStatefulSet {
		spec["serviceName"] = name
	}
	if strategy != "" {
		key := "updateStrategy"
		if k == roDeployment {
			key = "strategy"
		}
		spec[key] = map[string]any{"type": strategy}
	}
	return vbCreate(t, c, k.gvr, ns, map[string]any{
		"apiVersion": "apps/v1", "kind": k.kind,
		"metadata": map[string]any{"name": name},
		"spec":     spec,
	})
}

// roOwnedBy is a controller owner reference to owner.
func roOwnedBy(owner *unstructured.Unstructured) []any {
	return []any{map[string]any{
		"apiVersion": owner.GetAPIVersion(), "kind": owner.GetKind(), "name": owner.GetName(),
		"uid": string(owner.GetUID()), "controller": true, "blockOwnerDeletion": true,
	}}
}

// roHistory makes obj's rollout history as its controller would, revision
// i+1 running images[i] (the first one with a rich template) with change
// cause causes[i] (none when ""), and gives obj the last revision's
// template: for a Deployment, ReplicaSets with the revision annotation and
// a pod-template-hash label (and the Deployment the revision annotation of
// the last); for a StatefulSet or DaemonSet, ControllerRevisions whose
// data is the strategic merge patch that restores the template as the
// server defaults it, encoded as the controllers encode it.
func roHistory(t *testing.T, c dynamic.Interface, k roKind, obj *unstructured.Unstructured, images, causes []string) *unstructured.Unstructured {
	t.Helper()
	ns, name := obj.GetNamespace(), obj.GetName()
	rc := c.Resource(k.gvr).Namespace(ns)
	for i, image := range images {
		rev := i + 1
		tmpl := roTemplate(name, image, i == 0)
		ann := map[string]any{}
		if causes[i] != "" {
			ann["kubernetes.io/change-cause"] = causes[i]
		}
		if k == roDeployment {
			hash := fmt.Sprintf("%d5f7c9d", rev)
			tmpl["metadata"].(map[string]any)["labels"].(map[string]any)["pod-template-hash"] = hash
			ann["deployment.kubernetes.io/revision"] = fmt.Sprint(rev)
			ann["deployment.kubernetes.io/desired-replicas"] = "2"
			ann["deployment.kubernetes.io/max-replicas"] = "3"
			replicas := int64(0)
			if rev == len(images) {
				replicas = 2
			}
			vbCreate(t, c, roReplicaSetGVR, ns, map[string]any{
				"apiVersion": "apps/v1", "kind": "ReplicaSet",
				"metadata": map[string]any{
					"name": name + "-" + hash, "labels": tmpl["metadata"].(map[string]any)["labels"],
					"annotations": ann, "ownerReferences": roOwnedBy(obj),
				},
				"spec": map[string]any{
					"replicas": replicas,
					"selector": map[string]any{"matchLabels": map[string]any{"app": name, "pod-template-hash": hash}},
					"template": tmpl,
				},
			})
			continue
		}
		// The server's defaults of the template: a dry-run update of the
		// owner with it.
		live, err := rc.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(live.Object, tmpl, "spec", "template"); err != nil {
			t.Fatal(err)
		}
		defaulted, err := rc.Update(t.Context(), live, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatal(err)
		}
		data, _, _ := unstructured.NestedMap(defaulted.Object, "spec", "template")
		data["$patch"] = "replace"
		crName := roRevisionName(k, name, rev)
		md := map[string]any{
			"name":   crName,
			"labels": map[string]any{"app": name, "controller-revision-hash": strings.TrimPrefix(crName, name+"-")}, "ownerReferences": roOwnedBy(obj),
		}
		if len(ann) > 0 {
			md["annotations"] = ann
		}
		vbCreate(t, c, roRevisionGVR, ns, map[string]any{
			"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": md,
			"revision": int64(rev),
			"data":     map[string]any{"spec": map[string]any{"template": data}},
		})
	}
	// The workload runs the last revision.
	live, err := rc.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(live.Object, roTemplate(name, images[len(images)-1], len(images) == 1), "spec", "template"); err != nil {
		t.Fatal(err)
	}
	if k == roDeployment {
		live.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": fmt.Sprint(len(images))})
	}
	got, err := rc.Update(t.Context(), live, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// roPatch merge-patches an object (or its status, with subresources
// "status").
func roPatch(t *testing.T, c dynamic.Interface, gvr schema.GroupVersionResource, ns, name string, patch map[string]any, subresources ...string) *unstructured.Unstructured {
	t.Helper()
	got, err := c.Resource(gvr).Namespace(ns).Patch(t.Context(), name, types.MergePatchType, mustJSON(t, patch), metav1.PatchOptions{}, subresources...)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// roStatus sets a workload's status as its controller would, from a JSON
// object of status fields (observedGeneration is the object's generation
// unless given).
func roStatus(t *testing.T, c dynamic.Interface, k roKind, obj *unstructured.Unstructured, status string) {
	t.Helper()
	var fields map[string]any
	if err := json.Unmarshal([]byte(status), &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["observedGeneration"]; !ok {
		fields["observedGeneration"] = obj.GetGeneration()
	}
	roPatch(t, c, k.gvr, obj.GetNamespace(), obj.GetName(), map[string]any{"status": fields}, "status")
}

// Statuses of finished rollouts, which kdyn's readiness rules also find
// done (kdyn holds "successfully rolled out" back while they do not: a
// deliberate difference not compared here).
const (
	roDeploymentDone = `{"replicas":2,"updatedReplicas":2,"readyReplicas":2,"availableReplicas":2,"conditions":[` +
		`{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"},` +
		`{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable"}]}`
	roDaemonSetDone = `{"desiredNumberScheduled":3,"currentNumberScheduled":3,"updatedNumberScheduled":3,"numberAvailable":3,"numberReady":3,"numberMisscheduled":0}`
)

// roRevisionName is the name of a StatefulSet's or DaemonSet's
// ControllerRevision: the owner's name and a hash, as the controllers name
// them (the hash here is only unique per kind and revision).
func roRevisionName(k roKind, name string, rev int) string {
	if k == roStatefulSet {
		return fmt.Sprintf("%s-%d7b8c6f4", name, rev)
	}
	return fmt.Sprintf("%s-%d9d4f5b8", name, rev)
}

func roStatefulSetDone(obj *unstructured.Unstructured, rev int) string {
	r := roRevisionName(roStatefulSet, obj.GetName(), rev)
	return fmt.Sprintf(`{"replicas":2,"readyReplicas":2,"availableReplicas":2,"currentReplicas":2,"updatedReplicas":2,"currentRevision":%q,"updateRevision":%q}`, r, r)
}

// roDone sets the status of a finished rollout of revision rev.
func roDone(t *testing.T, c dynamic.Interface, k roKind, obj *unstructured.Unstructured, rev int) {
	t.Helper()
	switch k {
	case roDeployment:
		roStatus(t, c, k, obj, roDeploymentDone)
	case roStatefulSet:
		roStatus(t, c, k, obj, roStatefulSetDone(obj, rev))
	default:
		roStatus(t, c, k, obj, roDaemonSetDone)
	}
}

// roConfigMap creates a ConfigMap named cm, a kind without rollouts.
func roConfigMap(t *testing.T, c dynamic.Interface, ns string) {
	t.Helper()
	vbCreate(t, c, vbCMGVR, ns, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm"}})
}

// TestRolloutStatusMatchesKubectl: rollout status --watch=false prints
// kubectl's line for finished rollouts and for each way of being in
// progress, of the three kinds; --revision pins a Deployment's revision;
// a rollout past its deadline, a strategy without rollouts and a kind
// without a status viewer fail with kubectl's words and exit code.
func TestRolloutStatusMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	c := vbClient(t, env)
	ns := vbNamespace(t, c)
	p := newPair(t, env, testenv.Admin)
	type wl struct {
		k              roKind
		name, strategy string
		status         string // "" leaves the status alone: not observed yet
	}
	workloads := []wl{
		{k: roDeployment, name: "updated", status: `{"replicas":2,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1}`},
		{k: roDeployment, name: "old", status: `{"replicas":3,"updatedReplicas":2,"readyReplicas":3,"availableReplicas":3}`},
		{k: roDeployment, name: "available", status: `{"replicas":2,"updatedReplicas":2,"readyReplicas":1,"availableReplicas":1}`},
		{k: roDeployment, name: "unseen"},
		{k: roDeployment, name: "stuck", status: `{"replicas":2,"updatedReplicas":1,"conditions":[{"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded"}]}`},
		{k: roDeployment, name: "norev", status: roDeploymentDone},
		{k: roStatefulSet, name: "notready", status: `{"replicas":2,"readyReplicas":1,"currentReplicas":2,"updatedReplicas":2}`},
		{k: roStatefulSet, name: "partial", status: `{"replicas":2,"readyReplicas":2,"currentReplicas":1,"updatedReplicas":1}`},
		{k: roStatefulSet, name: "unseen"},
		{k: roStatefulSet, name: "ondelete", strategy: "OnDelete", status: `{"replicas":2,"readyReplicas":2}`},
		{k: roDaemonSet, name: "updated", status: `{"desiredNumberScheduled":3,"currentNumberScheduled":3,"updatedNumberScheduled":1,"numberAvailable":3,"numberReady":3}`},
		{k: roDaemonSet, name: "available", status: `{"desiredNumberScheduled":3,"currentNumberScheduled":3,"updatedNumberScheduled":3,"numberAvailable":1,"numberReady":1}`},
		{k: roDaemonSet, name: "unseen"},
		{k: roDaemonSet, name: "ondelete", strategy: "OnDelete", status: roDaemonSetDone},
	}
	var cases []same
	for _, w := range workloads {
		obj := roWorkload(t, c, w.k, ns, w.name, roTemplate(w.name, "nginx:1.27", false), w.strategy)
		if w.status != "" {
			roStatus(t, c, w.k, obj, w.status)
		}
		cases = append(cases, same{args: []string{"rollout", "status", w.k.typ + "/" + w.name, "--watch=false"}, stderr: true})
	}
	// Finished rollouts with a history: with and without --watch=false,
	// and pinned to a revision (which only a Deployment checks).
	for _, k := range roKinds {
		obj := roWorkload(t, c, k, ns, "done", roTemplate("done", "nginx:1.26", true), "")
		obj = roHistory(t, c, k, obj, []string{"nginx:1.26", "nginx:1.27"}, []string{"", ""})
		roDone(t, c, k, obj, 2)
		ref := k.typ + "/done"
		cases = append(cases,
			same{args: []string{"rollout", "status", ref, "--watch=false"}, stderr: true},
			same{args: []string{"rollout", "status", ref}, stderr: true},
			same{args: []string{"rollout", "status", ref, "--revision=2"}, stderr: true},
			same{args: []string{"rollout", "status", ref, "--revision=1", "--watch=false"}, stderr: true},
		)
	}
	roConfigMap(t, c, ns)
	cases = append(cases,
		same{args: []string{"rollout", "status", "deployment/norev", "--revision=1"}, stderr: true},
		same{args: []string{"rollout", "status", "deploy", "done", "--revision=7", "--watch=false"}, stderr: true},
		same{args: []string{"rollout", "status", "cm/cm"}, stderr: true},
	)
	for _, c := range cases {
		c.args = append([]string{"-n", ns}, c.args...)
		p.check(t, c)
	}
}

// roHistories makes, in ns, a workload "web" of each kind with two
// revisions (the first with a rich template, the second with a change
// cause) and a finished rollout of the second, and a workload "bare" of
// each kind without history; and a ConfigMap "cm".
func roHistories(t *testing.T, c dynamic.Interface, ns string) {
	t.Helper()
	for _, k := range roKinds {
		obj := roWorkload(t, c, k, ns, "web", roTemplate("web", "nginx:1.26", true), "")
		obj = roHistory(t, c, k, obj, []string{"nginx:1.26", "nginx:1.27"}, []string{"", "kubectl set image app=nginx:1.27"})
		roDone(t, c, k, obj, 2)
		roWorkload(t, c, k, ns, "bare", roTemplate("bare", "nginx:1.27", false), "")
	}
	roConfigMap(t, c, ns)
}

// TestRolloutHistoryMatchesKubectl: rollout history lists a workload's
// revisions with their change causes and describes one revision's pod
// template as kubectl does, for the three kinds (a Deployment's
// ReplicaSets, a StatefulSet's or DaemonSet's ControllerRevisions); prints
// the revisions with -o yaml, json, name and go-template (and the workload
// with --template alone); and refuses a revision that
// does not exist and a kind without history.
func TestRolloutHistoryMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	c := vbClient(t, env)
	ns := vbNamespace(t, c)
	p := newPair(t, env, testenv.Admin)
	roHistories(t, c, ns)
	var cases []same
	for _, k := range roKinds {
		web, bare := k.typ+"/web", k.typ+"/bare"
		for _, args := range [][]string{
			{web},
			{web, "--revision=1"},
			{web, "--revision=2"},
			{web, "--revision=3"},
			{web, "-o", "yaml"},
			{web, "-o", "json"},
			{web, "-o", "name"},
			// --template without -o prints the workload, not its revisions.
			{web, "--template={{.kind}}/{{.metadata.name}}:"},
			{web, "-o", "go-template", "--template={{.kind}}/{{.metadata.name}}:"},
			{web, "--revision=1", "-o", "yaml"},
			{web, "--revision=2", "-o", "json"},
			{web, "--revision=3", "-o", "json"},
			{bare},
			{bare, "--revision=1"},
			{bare, "-o", "yaml"},
		} {
			c := same{args: append([]string{"rollout", "history"}, args...), stderr: true}
			if slices.Contains(args, "json") {
				c.norm = normJSONOrder
			}
			cases = append(cases, c)
		}
	}
	cases = append(cases,
		same{args: []string{"rollout", "history", "deployment", "web"}, stderr: true},
		same{args: []string{"rollout", "history", "cm/cm"}, stderr: true},
		same{args: []string{"rollout", "history", "deploy/web", "--revision=-1"}, stderr: true},
	)
	for _, c := range cases {
		c.args = append([]string{"-n", ns}, c.args...)
		p.check(t, c)
	}
}

// normJSONOrder re-encodes a stream of JSON documents with their members
// sorted. kubectl prints rollout history's typed objects in its Go
// structs' member order, which for a StatefulSet or DaemonSet at a
// revision is not the server's either; kdyn prints them sorted, as kubectl
// prints every object it reads as a map (get -o json). So -o json is
// compared for everything but the order of members; -o yaml, which sorts
// in both, byte for byte.
func normJSONOrder(b []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	var out bytes.Buffer
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			if err == io.EOF {
				return out.Bytes()
			}
			return b // not JSON (an error message): compare as is
		}
		enc, _ := json.MarshalIndent(v, "", "    ")
		out.Write(enc)
		out.WriteByte('\n')
	}
}

// roTwins compares real writes: kubectl runs in nsK, kdyn in nsD (each
// with the same objects), and the namespaces are normalized away.
func roTwins(t *testing.T, p *pair, nsK, nsD string, cases []same) {
	t.Helper()
	for _, c := range cases {
		norm := c.norm
		c.norm = func(b []byte) []byte {
			b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(nsK), []byte("NS")), []byte(nsD), []byte("NS"))
			if norm != nil {
				b = norm(b)
			}
			return b
		}
		c.kdynArgs = append([]string{"-n", nsD}, c.args...)
		c.args = append([]string{"-n", nsK}, c.args...)
		p.check(t, c)
	}
}

// TestRolloutUndoMatchesKubectl: rollout undo's client dry run describes
// the pod template it would restore, as kubectl's does; real rollbacks
// (each tool on its own copy of the objects) print kubectl's summaries and
// leave the same objects; a revision that does not exist, a workload
// without history, a paused Deployment and a kind without rollbacks fail
// with kubectl's words.
func TestRolloutUndoMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	c := vbClient(t, env)
	nsK, nsD := vbNamespace(t, c), vbNamespace(t, c)
	p := newPair(t, env, testenv.Admin)
	for _, ns := range []string{nsK, nsD} {
		roHistories(t, c, ns)
		paused := roWorkload(t, c, roDeployment, ns, "paused", roTemplate("paused", "nginx:1.26", true), "")
		paused = roHistory(t, c, roDeployment, paused, []string{"nginx:1.26", "nginx:1.27"}, []string{"", ""})
		roPatch(t, c, vbDeployGVR, ns, "paused", map[string]any{"spec": map[string]any{"paused": true}})
	}
	var dry, real []same
	for _, k := range roKinds {
		web, bare := k.typ+"/web", k.typ+"/bare"
		for _, args := range [][]string{
			{web},
			{web, "--to-revision=1"},
			{web, "--to-revision=2"},
			{web, "--to-revision=5"},
			{web, "-o", "name"},
			{bare},
		} {
			dry = append(dry, same{args: append([]string{"rollout", "undo", "--dry-run=client"}, args...), stderr: true})
		}
		for _, args := range [][]string{
			{web, "--to-revision=5"},
			{web},
			{web, "--to-revision=1"},
			{web, "--to-revision=2", "-o", "name"},
			{bare},
		} {
			real = append(real, same{args: append([]string{"rollout", "undo"}, args...), stderr: true})
		}
		real = append(real, same{args: []string{"get", web, "-o", "yaml"}, norm: normServerFields})
	}
	dry = append(dry,
		same{args: []string{"rollout", "undo", "cm/cm", "--dry-run=client"}, stderr: true},
		same{args: []string{"rollout", "undo", "deploy/paused", "--dry-run=client"}, stderr: true},
	)
	real = append(real,
		same{args: []string{"rollout", "undo", "cm/cm"}, stderr: true},
		same{args: []string{"rollout", "undo", "deploy/paused"}},
	)
	for _, c := range dry {
		c.args = append([]string{"-n", nsK}, c.args...)
		p.check(t, c)
	}
	roTwins(t, p, nsK, nsD, real)
}

// restartedAt is the restart's stamp, the time of the run: it differs
// between the two tools' runs, so it is normalized away.
var restartedAt = regexp.MustCompile(`(kubectl\.kubernetes\.io/restartedAt"?:\s*)"?[0-9T:Z+-]+"?`)

func normRestart(b []byte) []byte {
	return normServerFields(restartedAt.ReplaceAll(b, []byte(`${1}"TIME"`)))
}

// TestRolloutRestartMatchesKubectl: rollout restart (each tool on its own
// copy of the objects) prints kubectl's summary, and with -o yaml or json
// the restarted object as kubectl does (the restartedAt stamp aside); a
// paused Deployment and a kind without restarts fail with kubectl's words;
// --dry-run, which kubectl's restart does not have, is refused by both.
func TestRolloutRestartMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	c := vbClient(t, env)
	nsK, nsD := vbNamespace(t, c), vbNamespace(t, c)
	p := newPair(t, env, testenv.Admin)
	for _, ns := range []string{nsK, nsD} {
		for _, k := range roKinds {
			for _, name := range []string{"web", "yaml", "json"} {
				roWorkload(t, c, k, ns, name, roTemplate(name, "nginx:1.27", name == "yaml"), "")
			}
		}
		roWorkload(t, c, roDeployment, ns, "paused", roTemplate("paused", "nginx:1.27", false), "")
		roPatch(t, c, vbDeployGVR, ns, "paused", map[string]any{"spec": map[string]any{"paused": true}})
		roConfigMap(t, c, ns)
	}
	var cases []same
	for _, k := range roKinds {
		cases = append(cases,
			same{args: []string{"rollout", "restart", k.typ + "/web"}, stderr: true},
			same{args: []string{"rollout", "restart", k.typ, "yaml", "-o", "yaml"}, norm: normRestart, stderr: true},
			same{args: []string{"rollout", "restart", k.typ + "/json", "-o", "json"}, norm: normRestart, stderr: true},
			same{args: []string{"rollout", "restart", k.typ + "/web", "--dry-run=client", "-o", "yaml"}},
		)
	}
	cases = append(cases,
		same{args: []string{"rollout", "restart", "deploy/paused"}, stderr: true},
		same{args: []string{"rollout", "restart", "cm/cm"}, stderr: true},
	)
	roTwins(t, p, nsK, nsD, cases)
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
