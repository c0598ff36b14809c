package mutate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/rest"
)

// testPod is a pod in namespace ns: with a controller of kind (apps/v1)
// and name when kind is set, phase, an emptyDir volume, the mirror
// annotation, or a deletion that started ago when ago > 0.
type testPod struct {
	name, kind, owner, phase string
	emptyDir, mirror         bool
	deletedAgo               time.Duration
}

func (p testPod) object(now time.Time) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": p.name, "namespace": "ns"},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}},
	}}
	if p.kind != "" {
		obj.Object["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{
			"apiVersion": "apps/v1", "kind": p.kind, "name": p.owner, "uid": "u1", "controller": true,
		}}
	}
	if p.phase != "" {
		obj.Object["status"] = map[string]any{"phase": p.phase}
	}
	if p.emptyDir {
		obj.Object["spec"].(map[string]any)["volumes"] = []any{
			map[string]any{"name": "conf", "configMap": map[string]any{"name": "c"}},
			map[string]any{"name": "scratch", "emptyDir": map[string]any{}},
		}
	}
	if p.mirror {
		obj.SetAnnotations(map[string]string{mirrorPodAnnotation: "hash"})
	}
	if p.deletedAgo > 0 {
		obj.Object["metadata"].(map[string]any)["deletionTimestamp"] = now.Add(-p.deletedAgo).UTC().Format(time.RFC3339)
	}
	return obj
}

// daemonSets answers for the DaemonSet "ds" and refuses every other name
// as not found.
func daemonSets(_, name string) error {
	if name == "ds" {
		return nil
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "daemonsets"}, name)
}

func TestPodVerdicts(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		pod     testPod
		filters podFilters
		want    podVerdict
	}{
		{testPod{name: "rs", kind: "ReplicaSet", owner: "web"}, podFilters{}, okay},
		{testPod{name: "bare"}, podFilters{}, errVerdict(unmanagedFatal)},
		{testPod{name: "bare"}, podFilters{force: true}, warnVerdict(true, unmanagedWarning)},
		{testPod{name: "done", phase: "Succeeded"}, podFilters{}, okay},
		{testPod{name: "failed", phase: "Failed", emptyDir: true}, podFilters{}, okay},
		{testPod{name: "ds", kind: "DaemonSet", owner: "ds"}, podFilters{}, errVerdict(daemonSetFatal)},
		{testPod{name: "ds", kind: "DaemonSet", owner: "ds"}, podFilters{ignoreDaemonSets: true}, warnVerdict(false, daemonSetWarning)},
		{testPod{name: "ds-done", kind: "DaemonSet", owner: "ds", phase: "Succeeded"}, podFilters{}, okay},
		// An orphan: its DaemonSet is gone; --force lets it go (no later
		// rule keeps the warning, as in kubectl).
		{testPod{name: "orphan", kind: "DaemonSet", owner: "gone"}, podFilters{}, errVerdict(`daemonsets.apps "gone" not found`)},
		{testPod{name: "orphan", kind: "DaemonSet", owner: "gone"}, podFilters{force: true}, okay},
		{testPod{name: "mirror", mirror: true}, podFilters{}, skip},
		{testPod{name: "scratch", kind: "ReplicaSet", owner: "web", emptyDir: true}, podFilters{}, errVerdict(localStorageFatal)},
		// The emptyDir warning is replaced by the next rule's verdict.
		{testPod{name: "scratch", kind: "ReplicaSet", owner: "web", emptyDir: true}, podFilters{deleteEmptyDir: true}, okay},
		{testPod{name: "scratch", emptyDir: true}, podFilters{deleteEmptyDir: true, force: true}, warnVerdict(true, unmanagedWarning)},
		{testPod{name: "scratch", emptyDir: true}, podFilters{deleteEmptyDir: true}, errVerdict(unmanagedFatal)},
		{testPod{name: "leaving", deletedAgo: time.Minute}, podFilters{skipWaitSeconds: 30}, skip},
		{testPod{name: "leaving", deletedAgo: 10 * time.Second}, podFilters{skipWaitSeconds: 30, force: true}, warnVerdict(true, unmanagedWarning)},
		{testPod{name: "leaving", deletedAgo: time.Minute, kind: "ReplicaSet", owner: "web"}, podFilters{}, okay},
	} {
		f := tc.filters
		f.now, f.daemonSet = now, daemonSets
		if got := f.verdict(tc.pod.object(now)); got != tc.want {
			t.Errorf("%+v with %+v: %+v, want %+v", tc.pod, tc.filters, got, tc.want)
		}
	}
}

func TestJudgedPodsMessages(t *testing.T) {
	now := time.Now()
	pods := []testPod{
		{name: "a"},
		{name: "ds", kind: "DaemonSet", owner: "ds"},
		{name: "b"},
		{name: "web", kind: "ReplicaSet", owner: "web"},
		{name: "scratch", kind: "ReplicaSet", owner: "web", emptyDir: true},
		{name: "mirror", mirror: true},
	}
	var objs []*unstructured.Unstructured
	for _, p := range pods {
		objs = append(objs, p.object(now))
	}
	names := func(objs []*unstructured.Unstructured) string {
		var s []string
		for _, o := range objs {
			s = append(s, o.GetName())
		}
		return strings.Join(s, ",")
	}

	refused := podFilters{now: now, daemonSet: daemonSets}.judge(objs)
	if got := refused.warnings(); got != "" {
		t.Errorf("warnings = %q, want none", got)
	}
	want := "[cannot delete Pods that declare no controller (use --force to override): ns/a, ns/b, " +
		"cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): ns/ds, " +
		"cannot delete Pods with local storage (use --delete-emptydir-data to override): ns/scratch]"
	if err := refused.errors(); err == nil || err.Error() != want {
		t.Errorf("errors = %v\nwant   %s", err, want)
	}
	if got := names(refused.deletable()); got != "web" {
		t.Errorf("deletable = %s, want web", got)
	}

	allowed := podFilters{now: now, daemonSet: daemonSets, force: true, ignoreDaemonSets: true, deleteEmptyDir: true}.judge(objs)
	if err := allowed.errors(); err != nil {
		t.Errorf("errors = %v, want none", err)
	}
	if got, want := allowed.warnings(), "deleting Pods that declare no controller: ns/a, ns/b; ignoring DaemonSet-managed Pods: ns/ds"; got != want {
		t.Errorf("warnings = %q\nwant       %q", got, want)
	}
	if got := names(allowed.deletable()); got != "a,b,web,scratch" {
		t.Errorf("deletable = %s, want a,b,web,scratch", got)
	}
}

func TestFinalMessage(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))
	one := utilerrors.NewAggregate([]error{errors.New("cannot delete X: ns/a")})
	two := utilerrors.NewAggregate([]error{errors.New("cannot delete X: ns/a"), errors.New("cannot delete Y: ns/b")})
	for _, tc := range []struct {
		errs []error
		want string
	}{
		// One node: a list one a line without "error: ", anything else as
		// kubectl words an error.
		{[]error{one}, "cannot delete X: ns/a\n"},
		{[]error{two}, "cannot delete X: ns/a\ncannot delete Y: ns/b\n"},
		{[]error{utilerrors.NewAggregate([]error{forbidden})}, "Error from server (Forbidden): " + forbidden.Error() + "\n"},
		{[]error{errors.New("context deadline exceeded")}, "error: context deadline exceeded"},
		{[]error{forbidden}, "Error from server (Forbidden): " + forbidden.Error()},
		// Several nodes: one a line, lists in brackets.
		{[]error{one, two, forbidden}, "cannot delete X: ns/a\n[cannot delete X: ns/a, cannot delete Y: ns/b]\nError from server (Forbidden): " + forbidden.Error() + "\n"},
	} {
		if got := finalMessage(tc.errs, cli.ErrorMessage); got != tc.want {
			t.Errorf("finalMessage(%v) =\n%q\nwant\n%q", tc.errs, got, tc.want)
		}
	}
}

func TestCheckNodeArgs(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		selector *string // nil: not given
		want     string  // part of the usage error; "" for none
	}{
		{nil, nil, "USAGE: drain NODE [flags]\nSee 'kdyn drain -h'"},
		{[]string{"n1"}, nil, ""},
		{nil, ptr("pool=a"), ""},
		{[]string{"n1"}, ptr("pool=a"), "cannot specify both a node name and a --selector option"},
		{nil, ptr(""), "You must provide one or more resources by argument or filename."},
		{nil, ptr("  "), "You must provide one or more resources"},
	} {
		root := &cobra.Command{Use: "kdyn"}
		cmd := &cobra.Command{Use: "drain NODE"}
		root.AddCommand(cmd)
		var sel string
		cmd.Flags().StringVarP(&sel, "selector", "l", "", "")
		if tc.selector != nil {
			if err := cmd.Flags().Set("selector", *tc.selector); err != nil {
				t.Fatal(err)
			}
		}
		err := checkNodeArgs(cmd, tc.args, sel)
		var ue *cli.UsageError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q %v: %v", tc.args, tc.selector, err)
		case tc.want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q %v: %v, want a usage error with %q", tc.args, tc.selector, err, tc.want)
		}
	}
}

func ptr(s string) *string { return &s }

func TestCordonChange(t *testing.T) {
	node := func(unschedulable bool) *unstructured.Unstructured {
		n := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n"}}}
		if unschedulable {
			n.Object["spec"] = map[string]any{"unschedulable": true}
		}
		return n
	}
	for _, tc := range []struct {
		cordon, was bool
		want        Result
	}{
		{true, false, Result{Op: "cordoned", Changed: true}},
		{true, true, Result{Op: "already cordoned"}},
		{false, true, Result{Op: "uncordoned", Changed: true}},
		{false, false, Result{Op: "already uncordoned"}},
	} {
		n := node(tc.was)
		got, err := cordonChange(tc.cordon)(n)
		if err != nil || got.Op != tc.want.Op || got.Changed != tc.want.Changed {
			t.Errorf("cordon=%v on unschedulable=%v: %+v, %v; want %+v", tc.cordon, tc.was, got, err, tc.want)
		}
		if now, _, _ := unstructured.NestedBool(n.Object, "spec", "unschedulable"); now != tc.cordon {
			t.Errorf("cordon=%v: unschedulable is %v", tc.cordon, now)
		}
	}
}

// fakePodServer answers a pod's GET with get (status, body) and its
// eviction POST with evict, counting the evictions.
func fakePodServer(t *testing.T, get func() (int, string), evict func(n int) (int, string)) *drainer {
	t.Helper()
	var mu sync.Mutex
	evictions := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var code int
		var body string
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/ns/pods/p/eviction":
			evictions++
			code, body = evict(evictions)
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/namespaces/ns/pods/p":
			code, body = get()
		default:
			code, body = http.StatusTeapot, `{}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	client, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut clitest.LockedBuffer
	printer, err := cli.NewResultPrinter(&out, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return &drainer{drainOptions: &drainOptions{gracePeriod: -1, timeout: time.Minute},
		f: cli.NewFactory(&cli.GlobalFlags{}, cli.IOStreams{Out: &out, ErrOut: &errOut}), client: client,
		out: &out, errOut: &errOut, printer: printer, retryDelay: time.Millisecond, interval: time.Millisecond}
}

const (
	podJSON     = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u1"}}`
	deletingPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u1","deletionTimestamp":"2026-01-01T00:00:00Z"}}`
	evicted     = `{"kind":"Status","apiVersion":"v1","status":"Success","code":201}`
	budget      = `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","code":429}`
	terminating = `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"p\" is forbidden: unable to create new content in namespace ns because it is being terminated","reason":"Forbidden","details":{"name":"p","kind":"pods","causes":[{"reason":"NamespaceTerminating","message":"namespace ns is being terminated","field":"metadata.namespace"}]},"code":403}`
	notFound    = `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"p\" not found","reason":"NotFound","code":404}`
)

// TestEvictOne: an eviction a disruption budget refuses is tried again
// (and said so), then the pod is waited for until it is gone; a pod
// already deleting in a terminating namespace is waited for; a pod
// replaced by another of its name counts as gone; a refusal past the
// deadline ends in kubectl's words.
func TestEvictOne(t *testing.T) {
	gv := schema.GroupVersion{Group: "policy", Version: "v1"}
	pod := func(js string) *unstructured.Unstructured {
		obj, err := dynamic.DecodeObject([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	for _, tc := range []struct {
		name            string
		pod             string
		get             func() (int, string)
		evict           func(n int) (int, string)
		cancelled       bool
		wantErr         string
		wantOut, wantEr string
	}{{
		name: "budget, then evicted", pod: podJSON,
		get: seq([]string{podJSON, notFound}),
		evict: func(n int) (int, string) {
			if n == 1 {
				return 429, budget
			}
			return 201, evicted
		},
		wantOut: "evicting pod ns/p\nevicting pod ns/p\npod/p evicted\n",
		wantEr:  "error when evicting pods/\"p\" -n \"ns\" (will retry after 1ms): Cannot evict pod as it would violate the pod's disruption budget.\n",
	}, {
		name: "terminating namespace, pod deleting", pod: deletingPod,
		get:     seq([]string{deletingPod, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u2"}}`}),
		evict:   func(int) (int, string) { return 403, terminating },
		wantOut: "evicting pod ns/p\npod/p evicted\n",
	}, {
		name: "already gone", pod: podJSON,
		get:     seq([]string{notFound}),
		evict:   func(int) (int, string) { return 404, notFound },
		wantOut: "evicting pod ns/p\n",
	}, {
		name: "past the deadline", pod: podJSON, cancelled: true,
		get:     seq([]string{podJSON}),
		evict:   func(int) (int, string) { return 429, budget },
		wantOut: "evicting pod ns/p\n",
		wantErr: `error when evicting pods/"p" -n "ns": global timeout reached: 1m0s`,
	}, {
		name: "refused", pod: podJSON,
		get: seq([]string{podJSON}),
		evict: func(int) (int, string) {
			return 403, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no","reason":"Forbidden","code":403}`
		},
		wantOut: "evicting pod ns/p\n",
		wantErr: `error when evicting pods/"p" -n "ns": no`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := fakePodServer(t, tc.get, tc.evict)
			deadline, cancel := context.WithCancel(t.Context())
			if tc.cancelled {
				cancel()
			}
			defer cancel()
			err := d.evictOne(t.Context(), deadline, pod(tc.pod), gv)
			if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if got := d.out.(*clitest.LockedBuffer).String(); got != tc.wantOut {
				t.Errorf("stdout %q, want %q", got, tc.wantOut)
			}
			if got := d.errOut.(*clitest.LockedBuffer).String(); got != tc.wantEr {
				t.Errorf("stderr %q, want %q", got, tc.wantEr)
			}
		})
	}
}

// seq answers with each body in turn (200, or 404 for a Status), the
// last one from then on.
func seq(bodies []string) func() (int, string) {
	i := 0
	return func() (int, string) {
		b := bodies[min(i, len(bodies)-1)]
		i++
		if strings.Contains(b, `"NotFound"`) {
			return 404, b
		}
		return 200, b
	}
}

// TestDrainErrorsExitCodes: with --exit-codes, a drain given up at
// --timeout exits as a timeout, through the list of a node's errors.
func TestDrainErrorsExitCodes(t *testing.T) {
	for _, err := range []error{
		&timeoutError{"error when evicting pods/\"p\" -n \"ns\": global timeout reached: 1s"},
		fmt.Errorf("error when waiting for pod %q in namespace %q to terminate: %w", "p", "ns", context.DeadlineExceeded),
	} {
		if got := cli.ExitCode(utilerrors.NewAggregate([]error{err}), true); got != cli.ExitTimeout {
			t.Errorf("ExitCode(%v) = %d, want %d", err, got, cli.ExitTimeout)
		}
	}
	// A wrapped server error is worded as its wrapper, not as the server's.
	wrapped := fmt.Errorf("error when evicting pods/%q -n %q: %w", "p", "ns", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("no")))
	if got, want := finalMessage([]error{utilerrors.NewAggregate([]error{wrapped})}, cli.ErrorMessage), wrapped.Error()+"\n"; got != want {
		t.Errorf("finalMessage = %q, want %q", got, want)
	}
}
