package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/integration/testenv"
)

// clusterServer is the server address the admin kubeconfig of env names.
func clusterServer(t *testing.T, env *testenv.Env) string {
	t.Helper()
	b, err := os.ReadFile(env.KubeconfigPath(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	var kc struct {
		Clusters []struct {
			Cluster struct{ Server string }
		}
	}
	if err := yaml.Unmarshal(b, &kc); err != nil || len(kc.Clusters) != 1 || kc.Clusters[0].Cluster.Server == "" {
		t.Fatalf("kubeconfig %s: %v (%d clusters)", env.KubeconfigPath(testenv.Admin), err, len(kc.Clusters))
	}
	return kc.Clusters[0].Cluster.Server
}

const clusterInfoHint = "\nTo further debug and diagnose cluster problems, use 'kdyn cluster-info dump'.\n"

// TestClusterInfoPrintsControlPlane: cluster-info names the server the
// kubeconfig names, then the services of the namespace labelled
// kubernetes.io/cluster-service=true (kube-system's by default, which has
// none here), with their proxy path or load balancer, then the hint.
func TestClusterInfoPrintsControlPlane(t *testing.T) {
	env := testenv.Shared(t)
	server := clusterServer(t, env)
	if server != env.Host() {
		t.Fatalf("kubeconfig server %q, control plane %q", server, env.Host())
	}
	r := kdyn(t, env, "cluster-info").must(t)
	if want := "Kubernetes control plane is running at " + server + "\n" + clusterInfoHint; r.stdout != want || r.stderr != "" {
		t.Fatalf("cluster-info:\n%s\nstderr: %s\nwant:\n%s", r.stdout, r.stderr, want)
	}

	ns := mfNamespace(t, env)
	svcs := `apiVersion: v1
kind: Service
metadata: {name: dns, labels: {kubernetes.io/cluster-service: "true", kubernetes.io/name: KubeDNS}}
spec: {ports: [{name: dns-tcp, port: 53}]}
---
apiVersion: v1
kind: Service
metadata: {name: secure, labels: {kubernetes.io/cluster-service: "true"}}
spec: {ports: [{port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: unlabelled}
spec: {ports: [{port: 80}]}
`
	kdynAs(t, env, testenv.Admin, svcs, "create", "-n", ns, "-f", "-").must(t)
	r = kdyn(t, env, "cluster-info", "-n", ns).must(t)
	want := "Kubernetes control plane is running at " + server + "\n" +
		"KubeDNS is running at " + server + "/api/v1/namespaces/" + ns + "/services/dns:dns-tcp/proxy\n" +
		"secure is running at " + server + "/api/v1/namespaces/" + ns + "/services/https:secure:/proxy\n" + clusterInfoHint
	if r.stdout != want {
		t.Fatalf("cluster-info -n %s:\n%s\nwant:\n%s", ns, r.stdout, want)
	}

	// A user who may not list services: the hint, then the server's
	// refusal.
	r = kdynAs(t, env, testenv.Nobody, "", "cluster-info")
	if r.code != 1 || r.stdout != clusterInfoHint || !strings.HasPrefix(r.stderr, "Error from server (Forbidden): services is forbidden: ") {
		t.Fatalf("cluster-info as nobody: exit %d\nstdout: %q\nstderr: %q", r.code, r.stdout, r.stderr)
	}
}

// clusterDumpNamespace makes a namespace with a pod p (an init container
// and a container, not scheduled: this control plane has no nodes) and a
// service s, for dump to find.
func clusterDumpNamespace(t *testing.T, env *testenv.Env) string {
	t.Helper()
	ns := mfNamespace(t, env)
	objs := `apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: p}}
spec:
  initContainers: [{name: setup, image: busybox}]
  containers: [{name: app, image: busybox}]
---
apiVersion: v1
kind: Service
metadata: {name: s}
spec: {ports: [{port: 80}], selector: {app: p}}
`
	kdynAs(t, env, testenv.Admin, objs, "create", "-n", ns, "-f", "-").must(t)
	return ns
}

// dumpedList is one list of a dump, as much as the tests read of it.
type dumpedList struct {
	Kind  string
	Items []struct {
		Metadata struct {
			Name, Namespace string
			ManagedFields   []any
		}
	}
}

// TestClusterInfoDumpStdout: dump --namespaces NS writes the nodes, then
// NS's seven lists (JSON, the pod among them, no managedFields), then the
// logs of the pod's init container and container.
func TestClusterInfoDumpStdout(t *testing.T) {
	env := testenv.Shared(t)
	ns := clusterDumpNamespace(t, env)
	r := kdyn(t, env, "cluster-info", "dump", "--namespaces", ns).must(t)
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var kinds []string
	var pods dumpedList
	for len(kinds) < 8 {
		var l dumpedList
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("list %d: %v\n%s", len(kinds)+1, err, r.stdout)
		}
		kinds = append(kinds, l.Kind)
		if l.Kind == "PodList" {
			pods = l
		}
		for _, it := range l.Items {
			if it.Metadata.ManagedFields != nil {
				t.Errorf("%s item %s kept its managedFields", l.Kind, it.Metadata.Name)
			}
		}
	}
	if got, want := strings.Join(kinds, " "), "NodeList EventList ReplicationControllerList ServiceList DaemonSetList DeploymentList ReplicaSetList PodList"; got != want {
		t.Fatalf("lists %s, want %s", got, want)
	}
	if len(pods.Items) != 1 || pods.Items[0].Metadata.Name != "p" || pods.Items[0].Metadata.Namespace != ns {
		t.Fatalf("PodList items %+v, want pod p of %s", pods.Items, ns)
	}
	// The pod runs nowhere, so its containers' logs are empty: each is an
	// empty section between its START and END lines.
	rest := r.stdout[dec.InputOffset():]
	var want strings.Builder
	want.WriteString("\n")
	for _, c := range []string{"setup", "app"} {
		want.WriteString("==== START logs for container " + c + " of pod " + ns + "/p ====\n")
		want.WriteString("==== END logs for container " + c + " of pod " + ns + "/p ====\n")
	}
	if rest != want.String() {
		t.Fatalf("after the lists:\n%s\nwant:\n%s", rest, want.String())
	}
}

// TestClusterInfoDumpDirectory: dump --output-directory writes kubectl's
// tree (nodes.json, NS/LIST.json, NS/POD/logs.txt) of JSON files readable
// by their owner only, and -o yaml writes .yaml files.
func TestClusterInfoDumpDirectory(t *testing.T) {
	env := testenv.Shared(t)
	ns := clusterDumpNamespace(t, env)
	dir := filepath.Join(t.TempDir(), "dump")
	r := kdyn(t, env, "cluster-info", "dump", "--namespaces", ns, "--output-directory", dir).must(t)
	if r.stdout != "Cluster info dumped to "+dir+"\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
	files := []string{"nodes.json"}
	for _, l := range []string{"events", "replication-controllers", "services", "daemonsets", "deployments", "replicasets", "pods"} {
		files = append(files, filepath.Join(ns, l+".json"))
	}
	for _, f := range files {
		p := filepath.Join(dir, f)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, fi.Mode().Perm())
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var l dumpedList
		if err := json.Unmarshal(b, &l); err != nil || !strings.HasSuffix(l.Kind, "List") {
			t.Fatalf("%s: %v (kind %q)\n%s", f, err, l.Kind, b)
		}
		switch f {
		case filepath.Join(ns, "pods.json"):
			if len(l.Items) != 1 || l.Items[0].Metadata.Name != "p" {
				t.Errorf("%s: items %+v, want pod p", f, l.Items)
			}
		case filepath.Join(ns, "services.json"):
			if len(l.Items) != 1 || l.Items[0].Metadata.Name != "s" {
				t.Errorf("%s: items %+v, want service s", f, l.Items)
			}
		}
	}
	logs, err := os.ReadFile(filepath.Join(dir, ns, "p", "logs.txt"))
	if err != nil || !strings.HasPrefix(string(logs), "==== START logs for container setup of pod "+ns+"/p ====\n") {
		t.Fatalf("p's logs: %v\n%s", err, logs)
	}

	r = kdyn(t, env, "cluster-info", "dump", "--namespaces", ns, "-o", "yaml", "--output-directory", dir).must(t)
	b, err := os.ReadFile(filepath.Join(dir, ns, "pods.yaml"))
	if err != nil || !strings.HasPrefix(string(b), "---\napiVersion: v1\nitems:\n") || !strings.Contains(string(b), "kind: PodList\n") {
		t.Fatalf("pods.yaml: %v\n%s", err, b)
	}
}

// TestTopMetricsNotAvailable: this control plane serves no metrics API,
// so top node and top pod fail as kubectl does.
func TestTopMetricsNotAvailable(t *testing.T) {
	env := testenv.Shared(t)
	for _, args := range [][]string{{"top", "node"}, {"top", "pod"}, {"top", "pod", "-A", "--containers"}} {
		r := kdyn(t, env, args...)
		if r.code != 1 || r.stdout != "" || r.stderr != "error: Metrics API not available\n" {
			t.Errorf("%q: exit %d\nstdout: %q\nstderr: %q", args, r.code, r.stdout, r.stderr)
		}
	}
	r := kdyn(t, env, "top", "node", "--exit-codes")
	if r.code != 3 {
		t.Errorf("top node --exit-codes: exit %d, want 3 (not found)", r.code)
	}
}
