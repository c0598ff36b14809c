package cluster_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// infoCluster has four kube-system services labelled
// kubernetes.io/cluster-service=true (one named by kubernetes.io/name, one
// on port 443, one behind a load balancer, one without ports), one in
// default, a node, and in default a pod p1 with an init container and two
// containers, of which app and init have logs.
func infoCluster(t *testing.T) *fakeCluster {
	svc := func(ns, name string, labels m, spec m, status m) map[string]any {
		md := m{"name": name, "namespace": ns, "labels": labels}
		o := obj(md, m{"kind": "Service", "apiVersion": "v1", "spec": spec})
		if status != nil {
			o["status"] = status
		}
		return o
	}
	cs := m{"kubernetes.io/cluster-service": "true"}
	return &fakeCluster{t: t,
		objects: map[string][]map[string]any{
			"/v1/services": {
				svc("kube-system", "kube-dns", m{"kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"},
					m{"ports": []any{m{"name": "dns", "port": 53, "protocol": "UDP"}, m{"name": "dns-tcp", "port": 53}}}, nil),
				svc("kube-system", "lb", cs, m{"type": "LoadBalancer", "ports": []any{m{"name": "a", "port": 80}, m{"name": "b", "port": 8080}}},
					m{"loadBalancer": m{"ingress": []any{m{"hostname": "lb.example.com"}}}}),
				svc("kube-system", "metrics", cs, m{"ports": []any{m{"name": "web", "port": 443}}}, nil),
				svc("kube-system", "plain", cs, m{"clusterIP": "None"}, nil),
				svc("default", "web", cs, m{"ports": []any{m{"port": 80}}}, nil),
			},
			"/v1/nodes": {{"metadata": m{"name": "n1", "managedFields": []any{m{"manager": "kubelet"}}}, "status": m{}}},
			"/v1/pods": {{"metadata": m{"name": "p1", "namespace": "default", "managedFields": []any{m{"manager": "kdyn"}}},
				"spec": m{"initContainers": []any{m{"name": "init"}}, "containers": []any{m{"name": "app"}, m{"name": "side"}}}}},
			"/v1/namespaces": {{"metadata": m{"name": "default"}}, {"metadata": m{"name": "kube-system"}}, {"metadata": m{"name": "other"}}},
		},
		logs: map[string]string{"default/p1/init": "", "default/p1/app": "app line 1\n<b>&</b>\n"},
	}
}

// TestClusterInfo: the control plane's address, then each cluster
// service's (its kubernetes.io/name, a load balancer's addresses, a proxy
// path named after the first port), then the hint naming the command, as
// kubectl prints them; -n lists another namespace's.
func TestClusterInfo(t *testing.T) {
	c := infoCluster(t)
	srv, kc := c.start()
	r := c.run(kc, "cluster-info")
	want := "Kubernetes control plane is running at " + srv.URL + "\n" +
		"CoreDNS is running at " + srv.URL + "/api/v1/namespaces/kube-system/services/kube-dns:dns/proxy\n" +
		"lb is running at http://lb.example.com:80 http://lb.example.com:8080 \n" +
		"metrics is running at " + srv.URL + "/api/v1/namespaces/kube-system/services/https:metrics:web/proxy\n" +
		"plain is running at " + srv.URL + "/api/v1/namespaces/kube-system/services/plain/proxy\n" +
		"\nTo further debug and diagnose cluster problems, use 'kdyn cluster-info dump'.\n"
	if r.Code != 0 || r.Stderr != "" {
		t.Errorf("cluster-info: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if diff := cmp.Diff(want, r.Stdout); diff != "" {
		t.Errorf("cluster-info (-want +got):\n%s", diff)
	}
	if !c.asked("/api/v1/namespaces/kube-system/services?labelSelector=kubernetes.io%2Fcluster-service%3Dtrue") {
		t.Errorf("cluster-info did not list kube-system's cluster services by label: %q", c.requests)
	}

	r = c.run(kc, "cluster-info", "-n", "default")
	want = "Kubernetes control plane is running at " + srv.URL + "\n" +
		"web is running at " + srv.URL + "/api/v1/namespaces/default/services/web/proxy\n" +
		"\nTo further debug and diagnose cluster problems, use 'kdyn cluster-info dump'.\n"
	if diff := cmp.Diff(want, r.Stdout); diff != "" || r.Code != 0 {
		t.Errorf("cluster-info -n default: exit %d (-want +got):\n%s", r.Code, diff)
	}

	// The server's refusal: the hint still, then the error.
	r = c.run(kc, "cluster-info", "-n", "forbidden")
	if r.Code != 1 || r.Stdout != "\nTo further debug and diagnose cluster problems, use 'kdyn cluster-info dump'.\n" ||
		r.Stderr != "Error from server (Forbidden): services is forbidden\n" {
		t.Errorf("cluster-info with a bad namespace: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// TestClusterInfoDumpStdout: the lists in kubectl's order, each a typed
// list in the server's member order without managedFields (an empty one's
// items null), then each pod's logs between START and END lines, a log the
// server refuses in kubectl's words.
func TestClusterInfoDumpStdout(t *testing.T) {
	c := infoCluster(t)
	_, kc := c.start()
	r := c.run(kc, "cluster-info", "dump")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("dump: exit %d, stderr %q", r.Code, r.Stderr)
	}
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	var kinds []string
	for dec.More() {
		var l struct {
			Kind  string
			Items []map[string]any
		}
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("list %d: %v\n%s", len(kinds)+1, err, r.Stdout)
		}
		kinds = append(kinds, l.Kind)
		if len(kinds) == 15 {
			break
		}
	}
	want := []string{"NodeList"}
	for range 2 { // kube-system, then default
		want = append(want, "EventList", "ReplicationControllerList", "ServiceList", "DaemonSetList", "DeploymentList", "ReplicaSetList", "PodList")
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("lists (-want +got):\n%s", diff)
	}
	for _, s := range []string{
		"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {\n            \"metadata\": {\n                \"name\": \"n1\"\n            },\n            \"status\": {}\n        }\n    ],\n    \"kind\": \"NodeList\",\n    \"metadata\": {\n        \"resourceVersion\": \"7\"\n    }\n}\n",
		"{\n    \"apiVersion\": \"v1\",\n    \"items\": null,\n    \"kind\": \"EventList\",",
		"==== START logs for container init of pod default/p1 ====\n==== END logs for container init of pod default/p1 ====\n" +
			"==== START logs for container app of pod default/p1 ====\napp line 1\n<b>&</b>\n==== END logs for container app of pod default/p1 ====\n" +
			"==== START logs for container side of pod default/p1 ====\nRequest log error: the server rejected our request for an unknown reason (get pods p1)\n==== END logs for container side of pod default/p1 ====\n",
	} {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("dump lacks %q:\n%s", s, r.Stdout)
		}
	}
	if !strings.HasSuffix(r.Stdout, "==== END logs for container side of pod default/p1 ====\n") || strings.Contains(r.Stdout, "managedFields") {
		t.Errorf("dump does not end with p1's logs, or keeps managedFields:\n%s", r.Stdout)
	}

	// YAML: documents separated as kubectl's printer separates them.
	r = c.run(kc, "cluster-info", "dump", "-o", "yaml", "--namespaces", "default")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "apiVersion: v1\nitems:\n- metadata:\n    name: n1\n  status: {}\nkind: NodeList\n") ||
		strings.Count(r.Stdout, "---\n") != 7 || !strings.Contains(r.Stdout, "---\napiVersion: v1\nitems: null\nkind: EventList\n") {
		t.Errorf("dump -o yaml: exit %d, stderr %q\n%s", r.Code, r.Stderr, r.Stdout)
	}
}

// TestClusterInfoDumpDirectory: --output-directory gets kubectl's tree,
// each file readable by its owner only, and the command says where.
func TestClusterInfoDumpDirectory(t *testing.T) {
	c := infoCluster(t)
	_, kc := c.start()
	dir := filepath.Join(t.TempDir(), "state")
	r := c.run(kc, "cluster-info", "dump", "-A", "--output-directory", dir)
	if r.Code != 0 || r.Stderr != "" || r.Stdout != "Cluster info dumped to "+dir+"\n" {
		t.Fatalf("dump: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	var files []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: mode %v, want 0700", rel, fi.Mode().Perm())
			}
			return nil
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", rel, fi.Mode().Perm())
		}
		files = append(files, rel)
		if strings.HasSuffix(rel, ".json") {
			b, err := os.ReadFile(p)
			if err != nil || !json.Valid(b) {
				t.Errorf("%s: not JSON (%v)", rel, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, ns := range []string{"default", "kube-system", "other"} {
		for _, f := range []string{"daemonsets", "deployments", "events", "pods", "replicasets", "replication-controllers", "services"} {
			want = append(want, ns+"/"+f+".json")
		}
	}
	want = append(want, "default/p1/logs.txt", "nodes.json")
	sort.Strings(want)
	sort.Strings(files)
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}

	// Files someone else left there are replaced, never written through:
	// a loose file becomes the owner's alone, a link's target is untouched.
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	nodes := filepath.Join(dir, "nodes.json")
	logs := filepath.Join(dir, "default", "p1", "logs.txt")
	if err := os.Chmod(nodes, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(logs); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, logs); err != nil {
		t.Fatal(err)
	}
	if r := c.run(kc, "cluster-info", "dump", "-A", "--output-directory", dir); r.Code != 0 {
		t.Fatalf("dump again: exit %d, %s", r.Code, r.Stderr)
	}
	for _, f := range []string{nodes, logs} {
		if fi, err := os.Lstat(f); err != nil || fi.Mode() != 0o600 {
			t.Errorf("%s after a second dump: %v, %v; want a regular file of mode 0600", f, fi.Mode(), err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "theirs" {
		t.Errorf("the dump wrote through a link: %q", b)
	}
	// a namespace that would leave the directory is refused
	if r := c.run(kc, "cluster-info", "dump", "--namespaces", "..", "--output-directory", dir); r.Code == 0 || !strings.Contains(r.Stderr, `invalid namespace "..": [may not be '..']`) {
		t.Errorf("dump --namespaces ..: exit %d, %q", r.Code, r.Stderr)
	}

	// Another format: its extension, or .txt for a template.
	r = c.run(kc, "cluster-info", "dump", "--namespaces", "other", "-o", "jsonpath={.kind}", "--output-directory", dir)
	b, err := os.ReadFile(filepath.Join(dir, "other", "services.txt"))
	if r.Code != 0 || err != nil || string(b) != "ServiceList" {
		t.Errorf("dump -o jsonpath: exit %d, stderr %q; services.txt %q (%v)", r.Code, r.Stderr, b, err)
	}
}

// TestClusterInfoDumpRefusals: the output formats kubectl refuses, in its
// words.
func TestClusterInfoDumpRefusals(t *testing.T) {
	c := infoCluster(t)
	_, kc := c.start()
	for _, tt := range []struct {
		args   []string
		stdout string
		stderr string
	}{
		{[]string{"-o", "wide"}, "", "error: unable to match a printer suitable for the output format \"wide\", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,yaml\n"},
		{[]string{"-o", "name"}, "", "error: list types are not supported by name printing: *v1.NodeList\n"},
		{[]string{"-o", "go-template"}, "", "error: template format specified but no template given\n"},
		{[]string{"--pod-running-timeout=0"}, "", "error: --pod-running-timeout must be higher than zero\n"},
	} {
		r := c.run(kc, append([]string{"cluster-info", "dump"}, tt.args...)...)
		if r.Code != 1 || r.Stdout != tt.stdout || r.Stderr != tt.stderr {
			t.Errorf("dump %q: exit %d, stdout %q, stderr %q; want stderr %q", tt.args, r.Code, r.Stdout, r.Stderr, tt.stderr)
		}
	}
}
