package cluster_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

type m = map[string]any

// metricsCluster serves the metrics API with three nodes (big-node with
// allocatable, capacity and swap; extra-node with no status and no
// metrics; kwok-node-0, a large simulated node) and the metrics of two of
// them and of a node that does not exist (ghost); and pods' metrics in
// default (p1, pod-1..3) and other (pod-1..3), each of pod-N's two
// containers using N0m and 5m of CPU and (4-N)Mi and 1500Ki of memory.
// The same objects made on a real control plane (the metrics API as CRDs)
// give kubectl v1.37.2 the outputs the tests expect.
func metricsCluster(t *testing.T) *fakeCluster {
	node := func(name string, labels m, status m) m {
		md := m{"name": name}
		if labels != nil {
			md["labels"] = labels
		}
		o := m{"kind": "Node", "apiVersion": "v1", "metadata": md}
		if status != nil {
			o["status"] = status
		}
		return o
	}
	nodeMetrics := func(name string, labels m, usage m) m {
		md := m{"name": name}
		if labels != nil {
			md["labels"] = labels
		}
		return obj(md, m{"timestamp": "2026-12-05T10:00:00Z", "window": "20s", "usage": usage})
	}
	var pods []map[string]any
	podMetrics := func(ns, name string, labels m, containers ...any) {
		md := m{"name": name, "namespace": ns}
		if labels != nil {
			md["labels"] = labels
		}
		pods = append(pods, obj(md, m{"timestamp": "2026-12-05T10:00:00Z", "window": "20s", "containers": containers}))
	}
	container := func(name, cpu, memory string, extra ...string) any {
		u := m{"cpu": cpu, "memory": memory}
		if len(extra) == 2 {
			u[extra[0]] = extra[1]
		}
		return m{"name": name, "usage": u}
	}
	for _, ns := range []string{"default", "other"} {
		if ns == "default" {
			podMetrics(ns, "p1", nil, container("app", "1m", "2Mi"), container("side", "0", "0"))
		}
		podMetrics(ns, "pod-1", m{"app": "a1"}, container("zeta", "10m", "3Mi"), container("alpha", "5m", "1500Ki", "swap", "3Mi"))
		podMetrics(ns, "pod-2", m{"app": "a0"}, container("zeta", "20m", "2Mi"), container("alpha", "5m", "1500Ki", "swap", "3Mi"))
		podMetrics(ns, "pod-3", m{"app": "a1"}, container("zeta", "30m", "1Mi"), container("alpha", "5m", "1500Ki", "swap", "3Mi"))
	}
	return &fakeCluster{t: t, metrics: true, objects: map[string][]map[string]any{
		"/v1/nodes": {
			node("big-node", m{"pool": "b"}, m{
				"allocatable": m{"cpu": "4", "memory": "8Gi"},
				"capacity":    m{"cpu": "8", "memory": "16Gi"},
				"nodeInfo":    m{"swap": m{"capacity": 1073741824}},
			}),
			node("extra-node", m{"pool": "b"}, nil),
			node("kwok-node-0", nil, m{
				"allocatable": m{"cpu": "1k", "memory": "1Ti", "pods": "1M"},
				"capacity":    m{"cpu": "1k", "memory": "1Ti", "pods": "1M"},
			}),
		},
		"metrics.k8s.io/v1beta1/nodes": {
			nodeMetrics("big-node", m{"pool": "b"}, m{"cpu": "250m", "memory": "3Gi", "swap": "10Mi"}),
			nodeMetrics("ghost", nil, m{"cpu": "2", "memory": "100Mi"}),
			nodeMetrics("kwok-node-0", m{"pool": "a"}, m{"cpu": "250m", "memory": "1536Mi"}),
		},
		"metrics.k8s.io/v1beta1/pods": pods,
		"/v1/pods": {
			{"kind": "Pod", "apiVersion": "v1", "metadata": m{"name": "p1", "namespace": "default"}},
			{"kind": "Pod", "apiVersion": "v1", "metadata": m{"name": "web", "namespace": "default"}},
		},
	}}
}

// table turns a test's table, written with · for each space, into text.
func table(lines ...string) string {
	return strings.ReplaceAll(strings.Join(lines, "\n")+"\n", "·", " ")
}

// tableCase is a top command and the table it prints.
type tableCase struct {
	args []string
	want string
}

// expectTables runs each case against the fake cluster and checks that
// it prints its table, and nothing on stderr.
func (c *fakeCluster) expectTables(t *testing.T, kc string, tests []tableCase) {
	t.Helper()
	for _, tt := range tests {
		r := c.run(kc, tt.args...)
		if r.Code != 0 || r.Stderr != "" {
			t.Errorf("%q: exit %d, stderr %q", tt.args, r.Code, r.Stderr)
		}
		if diff := cmp.Diff(tt.want, r.Stdout); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestTopNodeMatchesKubectl: top node prints kubectl's table, byte for
// byte: usage against allocatable (or capacity), a node with metrics but
// no Node gets no percentages, a node without metrics a line of
// <unknown>, swap where the node reports it; sorted by name, CPU or
// memory, with ties in kubectl's order.
func TestTopNodeMatchesKubectl(t *testing.T) {
	c := metricsCluster(t)
	_, kc := c.start()
	tests := []tableCase{
		{[]string{"top", "node"}, table(
			"NAME··········CPU(cores)···CPU(%)······MEMORY(bytes)···MEMORY(%)···",
			"big-node······250m·········6%··········3072Mi··········37%·········",
			"ghost·········2000m········100Mi·······",
			"kwok-node-0···250m·········0%··········1536Mi··········0%··········",
			"extra-node····<unknown>····<unknown>···<unknown>·······<unknown>···")},
		{[]string{"top", "node", "--sort-by=cpu"}, table(
			"NAME··········CPU(cores)···CPU(%)······MEMORY(bytes)···MEMORY(%)···",
			"ghost·········2000m········100Mi·······",
			"big-node······250m·········6%··········3072Mi··········37%·········",
			"kwok-node-0···250m·········0%··········1536Mi··········0%··········",
			"extra-node····<unknown>····<unknown>···<unknown>·······<unknown>···")},
		{[]string{"top", "nodes", "--sort-by=memory", "--no-headers"}, table(
			"big-node······250m········6%··········3072Mi···37%···",
			"kwok-node-0···250m········0%··········1536Mi···0%····",
			"ghost·········2000m·······100Mi·······",
			"extra-node····<unknown>···<unknown>···<unknown>···<unknown>···")},
		{[]string{"top", "node", "--show-capacity"}, table(
			"NAME··········CPU(cores)···CPU(%)······MEMORY(bytes)···MEMORY(%)···",
			"big-node······250m·········3%··········3072Mi··········18%·········",
			"ghost·········2000m········100Mi·······",
			"kwok-node-0···250m·········0%··········1536Mi··········0%··········",
			"extra-node····<unknown>····<unknown>···<unknown>·······<unknown>···")},
		{[]string{"top", "no", "--show-swap"}, table(
			"NAME··········CPU(cores)···CPU(%)······MEMORY(bytes)···MEMORY(%)···SWAP(bytes)···SWAP(%)···",
			"big-node······250m·········6%··········3072Mi··········37%·········10Mi··········0%········",
			"ghost·········2000m········100Mi·······0Mi·············",
			"kwok-node-0···250m·········0%··········1536Mi··········0%··········<unknown>·····<unknown>···",
			"extra-node····<unknown>····<unknown>···<unknown>·······<unknown>···<unknown>·····<unknown>···")},
		{[]string{"top", "node", "-l", "pool=b"}, table(
			"NAME·········CPU(cores)···CPU(%)······MEMORY(bytes)···MEMORY(%)···",
			"big-node·····250m·········6%··········3072Mi··········37%·········",
			"extra-node···<unknown>····<unknown>···<unknown>·······<unknown>···")},
		{[]string{"top", "node", "big-node"}, table(
			"NAME·······CPU(cores)···CPU(%)···MEMORY(bytes)···MEMORY(%)···",
			"big-node···250m·········6%·······3072Mi··········37%·········")},
	}
	c.expectTables(t, kc, tests)
}

// TestTopPodMatchesKubectl: top pod prints kubectl's tables: pods' totals
// or each container (--containers), with their namespace (-A), sorted (ties
// as kubectl leaves them), with a sum line, selected by label or field.
func TestTopPodMatchesKubectl(t *testing.T) {
	c := metricsCluster(t)
	_, kc := c.start()
	tests := []tableCase{
		{[]string{"top", "pod"}, table(
			"NAME····CPU(cores)···MEMORY(bytes)···",
			"p1······1m···········2Mi·············",
			"pod-1···15m··········4Mi·············",
			"pod-2···25m··········3Mi·············",
			"pod-3···35m··········2Mi·············")},
		{[]string{"top", "pod", "--containers"}, table(
			"POD·····NAME····CPU(cores)···MEMORY(bytes)···",
			"p1······app·····1m···········2Mi·············",
			"p1······side····0m···········0Mi·············",
			"pod-1···alpha···5m···········1Mi·············",
			"pod-1···zeta····10m··········3Mi·············",
			"pod-2···alpha···5m···········1Mi·············",
			"pod-2···zeta····20m··········2Mi·············",
			"pod-3···alpha···5m···········1Mi·············",
			"pod-3···zeta····30m··········1Mi·············")},
		{[]string{"top", "pods", "-A", "--sort-by=cpu"}, table(
			"NAMESPACE···NAME····CPU(cores)···MEMORY(bytes)···",
			"default·····pod-3···35m··········2Mi·············",
			"other·······pod-3···35m··········2Mi·············",
			"default·····pod-2···25m··········3Mi·············",
			"other·······pod-2···25m··········3Mi·············",
			"default·····pod-1···15m··········4Mi·············",
			"other·······pod-1···15m··········4Mi·············",
			"default·····p1······1m···········2Mi·············")},
		{[]string{"top", "po", "--sort-by=memory", "--containers"}, table(
			"POD·····NAME····CPU(cores)···MEMORY(bytes)···",
			"pod-1···zeta····10m··········3Mi·············",
			"pod-1···alpha···5m···········1Mi·············",
			"pod-2···zeta····20m··········2Mi·············",
			"pod-2···alpha···5m···········1Mi·············",
			"pod-3···alpha···5m···········1Mi·············",
			"pod-3···zeta····30m··········1Mi·············",
			"p1······app·····1m···········2Mi·············",
			"p1······side····0m···········0Mi·············")},
		{[]string{"top", "pod", "--sum"}, table(
			"NAME····CPU(cores)···MEMORY(bytes)···",
			"p1······1m···········2Mi·············",
			"pod-1···15m··········4Mi·············",
			"pod-2···25m··········3Mi·············",
			"pod-3···35m··········2Mi·············",
			"········________·····________········",
			"········76m··········12Mi············")},
		{[]string{"top", "pod", "-A", "--containers", "--sum", "-l", "app=a0"}, table(
			"NAMESPACE···POD·····NAME····CPU(cores)···MEMORY(bytes)···",
			"default·····pod-2···alpha···5m···········1Mi·············",
			"default·····pod-2···zeta····20m··········2Mi·············",
			"other·······pod-2···alpha···5m···········1Mi·············",
			"other·······pod-2···zeta····20m··········2Mi·············",
			"····························________·····________········",
			"····························50m··········6Mi·············")},
		{[]string{"top", "pod", "--no-headers", "--sum"}, table(
			"p1······1m·········2Mi········",
			"pod-1···15m········4Mi········",
			"pod-2···25m········3Mi········",
			"pod-3···35m········2Mi········",
			"········________···________···",
			"········76m········12Mi·······")},
		{[]string{"top", "pod", "--show-swap", "--containers", "-n", "other", "--sort-by=cpu"}, table(
			"POD·····NAME····CPU(cores)···MEMORY(bytes)···SWAP(bytes)···",
			"pod-3···zeta····30m··········1Mi·············0Mi···········",
			"pod-3···alpha···5m···········1Mi·············3Mi···········",
			"pod-2···zeta····20m··········2Mi·············0Mi···········",
			"pod-2···alpha···5m···········1Mi·············3Mi···········",
			"pod-1···zeta····10m··········3Mi·············0Mi···········",
			"pod-1···alpha···5m···········1Mi·············3Mi···········")},
		{[]string{"top", "pod", "--field-selector", "metadata.name=p1"}, table(
			"NAME···CPU(cores)···MEMORY(bytes)···",
			"p1·····1m···········2Mi·············")},
		{[]string{"top", "pod", "pod-2", "--containers"}, table(
			"POD·····NAME····CPU(cores)···MEMORY(bytes)···",
			"pod-2···alpha···5m···········1Mi·············",
			"pod-2···zeta····20m··········2Mi·············")},
	}
	c.expectTables(t, kc, tests)
}

// TestTopErrors: kubectl's refusals and messages, on standard error with
// exit code 1: the metrics API not served (without asking it anything),
// bad flags and arguments, no metrics, no pods.
func TestTopErrors(t *testing.T) {
	served := metricsCluster(t)
	_, kc := served.start()
	unserved := metricsCluster(t)
	unserved.metrics = false
	_, unservedKC := unserved.start()
	tests := []struct {
		kc     string
		args   []string
		code   int
		stderr string
	}{
		{unservedKC, []string{"top", "node"}, 1, "error: Metrics API not available\n"},
		{unservedKC, []string{"top", "pod", "-A"}, 1, "error: Metrics API not available\n"},
		{unservedKC, []string{"top", "pod", "--exit-codes"}, 3, "error: Metrics API not available\n"},
		{kc, []string{"top", "node", "a", "b"}, 1, "error: node [NAME | -l label]\nSee 'kdyn top node -h' for help and examples\n"},
		{kc, []string{"top", "pod", "a", "b"}, 1, "error: pod [NAME | -l label]\nSee 'kdyn top pod -h' for help and examples\n"},
		{kc, []string{"top", "node", "--sort-by=disk"}, 1, "error: --sort-by accepts only cpu or memory\n"},
		{kc, []string{"top", "pod", "--sort-by=disk", "--exit-codes"}, 2, "error: --sort-by accepts only cpu or memory\n"},
		{kc, []string{"top", "node", "x", "-l", "a=b"}, 1, "error: only one of NAME or --selector can be provided\n"},
		{kc, []string{"top", "pod", "x", "--field-selector", "a=b"}, 1, "error: only one of NAME or selector can be provided\n"},
		{kc, []string{"top", "node", "-l", "pool=none"}, 1, "error: metrics not available yet\n"},
		{kc, []string{"top", "node", "nope"}, 1, "Error from server (NotFound): nodes.metrics.k8s.io \"nope\" not found\n"},
		{kc, []string{"top", "pod", "-n", "empty"}, 0, "No resources found in empty namespace.\n"},
		{kc, []string{"top", "pod", "-A", "-l", "app=none"}, 0, "No resources found\n"},
		{kc, []string{"top", "x"}, 1, "error: unknown command \"x\"\nSee 'kdyn top -h' for help and examples\n"},
	}
	for _, tt := range tests {
		r := clitest.Run(root.Main, append([]string{"--kubeconfig", tt.kc, "--cache-dir", t.TempDir()}, tt.args...)...)
		if r.Code != tt.code || r.Stderr != tt.stderr || r.Stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", tt.args, r.Code, r.Stdout, r.Stderr, tt.code, tt.stderr)
		}
	}
	if unserved.asked("/apis/metrics.k8s.io") || unserved.asked("/api/v1/nodes") {
		t.Errorf("top asked the server for metrics or nodes although the metrics API is not served: %q", unserved.requests)
	}

	// top alone prints its help on standard error and fails, as kubectl's
	// command groups do.
	r := clitest.Run(root.Main, "--kubeconfig", kc, "top")
	if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "Available Commands:\n  node        Display resource (CPU/memory) usage of nodes\n  pod         Display resource (CPU/memory) usage of pods\n") ||
		!strings.HasSuffix(r.Stderr, "Use \"kdyn top <command> --help\" for more information about a given command.\n") {
		t.Errorf("top: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
