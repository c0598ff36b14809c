package examples_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

var eventsGVR = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}

// TestGCReplicas runs two replicas of examples/gc with leader election:
// exactly one acts (prints its synced line, deletes orphans, records
// Events, reports leading in its metrics); killed without a goodbye, the
// other takes over and collects the next orphans; no orphan is deleted
// twice or missed. The leader's /metrics are scraped and checked against
// what the test did.
func TestGCReplicas(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	ns := newNamespace(t, c, "gc-ha")
	// An object nothing owns stays cached throughout (the replicas watch
	// this namespace only, which has no kube-root-ca.crt here: no
	// controller manager runs).
	if _, err := c.Resource(cmGVR).Namespace(ns).Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "bystander"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	args := func(id string) []string {
		// --namespace: other tests' objects in the shared control plane
		// (a dependent whose owner their cleanup deleted first) are not
		// this test's orphans.
		return []string{"--kubeconfig", env.KubeconfigPath(testenv.Admin), "--namespace", ns, "--delete", "--resync", "2s",
			"--leader-elect", "--lease-namespace", ns, "--identity", id,
			"--lease-duration", "3s", "--renew-deadline", "2s", "--retry-period", "500ms",
			"--metrics-bind-address", "127.0.0.1:0"}
	}
	replicas := map[string]*proc{"r1": start(t, "gc", args("r1")...), "r2": start(t, "gc", args("r2")...)}
	leaderID := waitLeader(t, replicas, "")
	leader := replicas[leaderID]
	standbyID := "r1"
	if leaderID == "r1" {
		standbyID = "r2"
	}
	standby := replicas[standbyID]

	orphans := makeOrphans(t, c, ns, "first", 4)
	for _, name := range orphans {
		leader.waitLine(t, "the deletion of "+name, isDeletion(ns, name))
	}
	// The leader's metrics match what it did; the standby's say it does
	// not lead, and its readiness fails.
	checkLeaderMetrics(t, env, metricsAddr(t, leader), len(orphans))
	standbyMetrics := scrape(t, env, metricsAddr(t, standby))
	if v := standbyMetrics[`leader_election_master_status{name="kdyn-example-gc"}`]; v != 0 {
		t.Errorf("the standby reports leader_election_master_status %v", v)
	}
	// A cold standby (the Manager's default) fills no cache until it leads.
	if v := sum(standbyMetrics, "informer_list_starts_total") + sum(standbyMetrics, "informer_watch_starts_total"); v != 0 {
		t.Errorf("the standby started %v lists and watches: a cold standby fills no cache", v)
	}
	if code := httpStatus(t, "https://"+metricsAddr(t, standby)+"/readyz"); code != http.StatusInternalServerError {
		t.Errorf("the standby's /readyz answered %d", code)
	}
	if code := httpStatus(t, "https://"+metricsAddr(t, leader)+"/readyz"); code != http.StatusOK {
		t.Errorf("the leader's /readyz answered %d", code)
	}
	eventually(t, "an OrphanDeleted Event for each orphan", func() (bool, string) {
		return eventsFor(t, c, ns, "OrphanDeleted", orphans)
	})

	// Kill the leader: no release. The standby leads within the lease
	// duration and a retry, then collects the next orphans.
	killed := time.Now()
	leader.kill(t)
	if got := waitLeader(t, map[string]*proc{standbyID: standby}, "r"); got != standbyID {
		t.Fatalf("leader %q after the kill", got)
	}
	t.Logf("the standby took over %v after the kill", time.Since(killed).Round(time.Millisecond))
	more := makeOrphans(t, c, ns, "second", 3)
	for _, name := range more {
		standby.waitLine(t, "the deletion of "+name, isDeletion(ns, name))
	}
	// Every orphan was deleted exactly once, by one replica or the other.
	time.Sleep(3 * time.Second) // two resyncs: a double delete would show
	deleted := map[string]int{}
	for _, p := range replicas {
		for _, line := range p.output() {
			if strings.HasPrefix(line, "deleted ConfigMap/"+ns+"/") {
				name := strings.TrimPrefix(line, "deleted ConfigMap/"+ns+"/")
				name, _, _ = strings.Cut(name, " ")
				deleted[name]++
			}
		}
	}
	for _, name := range append(orphans, more...) {
		if deleted[name] != 1 {
			t.Errorf("orphan %s deleted %d times", name, deleted[name])
		}
	}
	if len(deleted) != len(orphans)+len(more) {
		t.Errorf("deleted %v; want exactly the %d orphans", deleted, len(orphans)+len(more))
	}
}

// waitLeader waits until one of replicas prints its synced line (only a
// leader does) and returns its name; with prefix, one whose name starts
// with it.
func waitLeader(t *testing.T, replicas map[string]*proc, prefix string) string {
	t.Helper()
	var leader string
	eventually(t, "a replica to lead", func() (bool, string) {
		var leading []string
		for id, p := range replicas {
			for _, line := range p.output() {
				if strings.HasPrefix(line, "synced ") && strings.HasPrefix(id, prefix) {
					leading = append(leading, id)
					break
				}
			}
		}
		if len(leading) > 1 {
			t.Fatalf("two replicas lead: %v", leading)
		}
		if len(leading) == 1 {
			leader = leading[0]
			return true, ""
		}
		return false, "no synced line yet"
	})
	return leader
}

// makeOrphans creates an owner ConfigMap and n dependents, then deletes
// the owner; it returns the dependents' names.
func makeOrphans(t *testing.T, c *dynamic.DynamicClient, ns, prefix string, n int) []string {
	t.Helper()
	cms := c.Resource(cmGVR).Namespace(ns)
	owner, err := cms.Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": prefix + "-owner"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-dependent-%d", prefix, i)
		names = append(names, name)
		_, err := cms.Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "name": owner.GetName(), "uid": string(owner.GetUID())}}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := cms.Delete(t.Context(), owner.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return names
}

// isDeletion matches the line of a dependent's deletion.
func isDeletion(ns, name string) func(string) bool {
	return func(s string) bool { return strings.HasPrefix(s, "deleted ConfigMap/"+ns+"/"+name+" ") }
}

// eventsFor reports whether ns holds an Event of reason regarding each of
// names.
func eventsFor(t *testing.T, c *dynamic.DynamicClient, ns, reason string, names []string) (bool, string) {
	l, err := c.Resource(eventsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	seen := map[string]bool{}
	for _, e := range l.Items {
		if r, _, _ := unstructured.NestedString(e.Object, "reason"); r != reason {
			continue
		}
		name, _, _ := unstructured.NestedString(e.Object, "regarding", "name")
		ctrl, _, _ := unstructured.NestedString(e.Object, "reportingController")
		if ctrl == "kdyn.io/example-gc" {
			seen[name] = true
		}
	}
	for _, n := range names {
		if !seen[n] {
			return false, fmt.Sprintf("no %s Event for %s (have %v)", reason, n, seen)
		}
	}
	return true, ""
}

var addrLine = regexp.MustCompile(`serving metrics and probes.*"address": "([^"]+)"`)

// metricsAddr is the address a replica serves its metrics on, from its
// log.
func metricsAddr(t *testing.T, p *proc) string {
	t.Helper()
	var addr string
	eventually(t, p.name+"'s metrics address", func() (bool, string) {
		p.mu.Lock()
		m := addrLine.FindStringSubmatch(p.stderr.String())
		p.mu.Unlock()
		if m == nil {
			return false, "not logged yet"
		}
		addr = m[1]
		return true, ""
	})
	return addr
}

// metricsHTTP reaches the replicas' secure metrics serving, whose
// certificate is self-signed.
var metricsHTTP = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := metricsHTTP.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// scrape reads /metrics into series → value ("name{labels}" as printed).
// The replicas serve their metrics securely (the examples' default): the
// admin token is authorized to read them.
func scrape(t *testing.T, env *testenv.Env, addr string) map[string]float64 {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+env.AdminToken())
	resp, err := metricsHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// sum adds the series of family whose labels contain every one of want.
func sum(series map[string]float64, family string, want ...string) float64 {
	var total float64
	for s, v := range series {
		name, labels, _ := strings.Cut(s, "{")
		if name != family {
			continue
		}
		ok := true
		for _, w := range want {
			if !strings.Contains(labels, w) {
				ok = false
			}
		}
		if ok {
			total += v
		}
	}
	return total
}

// checkLeaderMetrics checks that every family is exported, with values
// that match what the leader did: deleted orphans DELETEs, and the like.
func checkLeaderMetrics(t *testing.T, env *testenv.Env, addr string, orphans int) {
	t.Helper()
	m := scrape(t, env, addr)
	checks := []struct {
		what string
		got  float64
		ok   func(float64) bool
	}{
		{"rest_client_requests_total DELETE 200 (one per orphan)", sum(m, "rest_client_requests_total", `method="DELETE"`, `code="200"`), func(v float64) bool { return v == float64(orphans) }},
		{"rest_client_requests_total GET 200", sum(m, "rest_client_requests_total", `method="GET"`, `code="200"`), func(v float64) bool { return v > 0 }},
		{"rest_client_request_duration_seconds_count", sum(m, "rest_client_request_duration_seconds_count"), func(v float64) bool { return v > 0 }},
		{"rest_client_rate_limiter_duration_seconds_count", sum(m, "rest_client_rate_limiter_duration_seconds_count"), func(v float64) bool { return v > 0 }},
		{"workqueue_adds_total gc", sum(m, "workqueue_adds_total", `name="gc"`), func(v float64) bool { return v >= float64(orphans) }},
		{"workqueue_queue_duration_seconds_count gc", sum(m, "workqueue_queue_duration_seconds_count", `name="gc"`), func(v float64) bool { return v >= float64(orphans) }},
		{"workqueue_work_duration_seconds_count gc", sum(m, "workqueue_work_duration_seconds_count", `name="gc"`), func(v float64) bool { return v >= float64(orphans) }},
		{"workqueue_depth gc", m[`workqueue_depth{name="gc"}`], func(v float64) bool { return v >= 0 }},
		{"workqueue_unfinished_work_seconds gc", m[`workqueue_unfinished_work_seconds{name="gc"}`], func(v float64) bool { return v >= 0 }},
		{"workqueue_longest_running_processor_seconds gc", m[`workqueue_longest_running_processor_seconds{name="gc"}`], func(v float64) bool { return v >= 0 }},
		{"controller_runtime_reconcile_total gc success", sum(m, "controller_runtime_reconcile_total", `controller="gc"`, `result="success"`), func(v float64) bool { return v >= float64(orphans) }},
		{"controller_runtime_max_concurrent_reconciles gc", m[`controller_runtime_max_concurrent_reconciles{controller="gc"}`], func(v float64) bool { return v == 2 }},
		{"informer_objects configmaps.v1", m[`informer_objects{resource="configmaps.v1"}`], func(v float64) bool { return v > 0 }},
		{"informer_cache_bytes configmaps.v1 (at least 100 bytes an object)", m[`informer_cache_bytes{resource="configmaps.v1"}`] / m[`informer_objects{resource="configmaps.v1"}`], func(v float64) bool { return v >= 100 }},
		{"informer_list_starts_total", sum(m, "informer_list_starts_total"), func(v float64) bool { return v > 0 }},
		{"informer_watch_events_total configmaps DELETED", sum(m, "informer_watch_events_total", `resource="configmaps.v1"`, `type="DELETED"`), func(v float64) bool { return v >= float64(orphans) }},
		{"informer_last_sync_timestamp_seconds configmaps", m[`informer_last_sync_timestamp_seconds{resource="configmaps.v1"}`], func(v float64) bool { return v > float64(time.Now().Add(-time.Hour).Unix()) }},
		{"informer_event_delivery_lag_seconds_count", sum(m, "informer_event_delivery_lag_seconds_count"), func(v float64) bool { return v > 0 }},
		{"leader_election_master_status", m[`leader_election_master_status{name="kdyn-example-gc"}`], func(v float64) bool { return v == 1 }},
	}
	for _, c := range checks {
		if !c.ok(c.got) {
			t.Errorf("%s = %v", c.what, c.got)
		}
	}
}

// kill ends the process with SIGKILL (no goodbye); its exit is expected.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.mu.Lock()
	p.err = nil // killed on purpose
	p.mu.Unlock()
}
