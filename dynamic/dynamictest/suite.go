package dynamictest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
)

// ConfigMaps is the GVR of core/v1 ConfigMaps, the namespaced resource the
// suite uses.
var ConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// Namespaces is the GVR of core/v1 Namespaces, the cluster-scoped resource
// the suite uses.
var Namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// DefaultTimeout bounds each wait when Env.Timeout is zero.
const DefaultTimeout = 10 * time.Second

const (
	// runLabel marks every object of one Run, for cleanup.
	runLabel = "dynamictest.kdyn.dev/run"
	// testLabel marks the objects of one subtest, for its selectors.
	testLabel = "dynamictest.kdyn.dev/test"
	// fieldManager is the field manager of the suite's apply patches.
	fieldManager = "dynamictest"
)

// Env is what the suite runs against.
type Env struct {
	// Client is the client under test. Required.
	Client dynamic.Interface
	// Namespace is the namespace the suite creates ConfigMaps in. Required.
	// On a real server it must exist; it need not be empty, since the suite
	// selects its own objects by label. The fake needs no Namespace object.
	Namespace string
	// Timeout bounds each wait for an event or a deletion. Zero means
	// DefaultTimeout.
	Timeout time.Duration
}

// suite is one Run.
type suite struct {
	env Env
	// run is this Run's random id, in names and labels.
	run string
}

// Run runs the behaviour suite as subtests of t.
func Run(t *testing.T, env Env) {
	t.Helper()
	if env.Client == nil {
		t.Fatal("dynamictest: Env.Client is required")
	}
	if env.Namespace == "" {
		t.Fatal("dynamictest: Env.Namespace is required")
	}
	if env.Timeout <= 0 {
		env.Timeout = DefaultTimeout
	}
	s := &suite{env: env, run: utilrand.String(6)}
	t.Cleanup(s.cleanup(t))

	t.Run("ConfigMaps", func(t *testing.T) {
		t.Run("CreateGetUpdateDelete", s.testCRUD)
		t.Run("SystemFields", s.testSystemFields)
		t.Run("CreateWithResourceVersion", s.testCreateWithResourceVersion)
		t.Run("GenerateName", s.testGenerateName)
		t.Run("NameRequired", s.testNameRequired)
		t.Run("AlreadyExists", s.testAlreadyExists)
		t.Run("NotFound", s.testNotFound)
		t.Run("Conflict", s.testConflict)
		t.Run("UnconditionalUpdate", s.testUnconditionalUpdate)
		t.Run("ResourceVersionIncreases", s.testResourceVersionIncreases)
		t.Run("NoOpWritesKeepResourceVersion", s.testNoOpWrites)
		t.Run("NamespaceMismatch", s.testNamespaceMismatch)
		t.Run("DeletePreconditions", s.testDeletePreconditions)
		t.Run("Finalizers", s.testFinalizers)
		t.Run("DeleteCollection", s.testDeleteCollection)
	})
	t.Run("List", func(t *testing.T) {
		t.Run("LabelSelector", s.testListLabelSelector)
		t.Run("FieldSelector", s.testListFieldSelector)
		t.Run("UnsupportedFieldSelector", s.testListUnsupportedField)
		t.Run("Pagination", s.testListPagination)
		t.Run("Empty", s.testListEmpty)
	})
	t.Run("Watch", func(t *testing.T) {
		t.Run("LaterChanges", s.testWatchLaterChanges)
		t.Run("InitialEventsWithoutResourceVersion", s.testWatchInitialEvents)
		t.Run("SendInitialEventsBookmark", s.testWatchInitialEventsBookmark)
		t.Run("SelectorTransitions", s.testWatchSelectorTransitions)
		t.Run("StopClosesChannel", s.testWatchStop)
	})
	t.Run("Patch", func(t *testing.T) {
		t.Run("Merge", s.testMergePatch)
		t.Run("JSON", s.testJSONPatch)
		t.Run("JSONTestFails", s.testJSONPatchTestFails)
		t.Run("StaleResourceVersion", s.testPatchStaleResourceVersion)
		t.Run("Apply", s.testApply)
	})
	t.Run("Namespaces", func(t *testing.T) {
		t.Run("CreateGetListDelete", s.testNamespaces)
	})
}

// cleanup deletes the ConfigMaps of this Run. t.Context() is done by then,
// so it has a context of its own.
func (s *suite) cleanup(t *testing.T) func() {
	return func() {
		ctx := s.cleanupCtx(t)
		sel := metav1.ListOptions{LabelSelector: runLabel + "=" + s.run}
		if err := s.configMaps().DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
			t.Logf("dynamictest: cleanup of ConfigMaps labelled %s=%s: %v", runLabel, s.run, err)
		}
	}
}

// ctx is a subtest's context, bounded by the timeout.
func (s *suite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), s.env.Timeout)
	t.Cleanup(cancel)
	return ctx
}

// cleanupCtx is a context for t.Cleanup functions, which run after
// t.Context() is done.
func (s *suite) cleanupCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), s.env.Timeout)
	t.Cleanup(cancel)
	return ctx
}

func (s *suite) configMaps() dynamic.ResourceInterface {
	return s.env.Client.Resource(ConfigMaps).Namespace(s.env.Namespace)
}

// name returns a unique object name for this Run.
func (s *suite) name(what string) string {
	return fmt.Sprintf("kdyn-dt-%s-%s-%s", s.run, what, utilrand.String(5))
}

// testID returns a fresh value for testLabel, for one subtest's selectors.
func (s *suite) testID() string { return s.run + "-" + utilrand.String(5) }

// configMap builds a ConfigMap of this Run.
func (s *suite) configMap(name, test string, labels, data map[string]string) *unstructured.Unstructured {
	l := map[string]any{runLabel: s.run}
	if test != "" {
		l[testLabel] = test
	}
	for k, v := range labels {
		l[k] = v
	}
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": name, "labels": l},
		"data":       d,
	}}
}

func (s *suite) create(t *testing.T, ctx context.Context, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := s.configMaps().Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create ConfigMap %q: %v", obj.GetName(), err)
	}
	return out
}

func (s *suite) get(t *testing.T, ctx context.Context, name string) *unstructured.Unstructured {
	t.Helper()
	out, err := s.configMaps().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get ConfigMap %q: %v", name, err)
	}
	return out
}

func data(t *testing.T, obj *unstructured.Unstructured) map[string]string {
	t.Helper()
	d, _, err := unstructured.NestedStringMap(obj.Object, "data")
	if err != nil {
		t.Fatalf("data of %q: %v", obj.GetName(), err)
	}
	if d == nil {
		d = map[string]string{}
	}
	return d
}

func wantData(t *testing.T, what string, obj *unstructured.Unstructured, want map[string]string) {
	t.Helper()
	if got := data(t, obj); !mapsEqual(got, want) {
		t.Errorf("%s: data = %v, want %v", what, got, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// rv parses a resourceVersion. Clients must treat them as opaque, but
// both etcd and the fake issue increasing integers, which the suite
// checks.
func rv(t *testing.T, obj interface{ GetResourceVersion() string }) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q is not an integer: %v", obj.GetResourceVersion(), err)
	}
	return n
}

// wantStatus checks that err is a StatusError with the given reason, and
// returns its status.
func wantStatus(t *testing.T, what string, err error, reason metav1.StatusReason) metav1.Status {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, reason)
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		t.Fatalf("%s: error %v (%T) is not an API status error, want %s", what, err, err, reason)
	}
	st := se.Status()
	if st.Reason != reason {
		t.Fatalf("%s: error reason %q (code %d, %v), want %s", what, st.Reason, st.Code, err, reason)
	}
	return st
}

// wantCode checks that err is a StatusError with the given HTTP code, and
// returns its status.
func wantCode(t *testing.T, what string, err error, code int32) metav1.Status {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want code %d", what, code)
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		t.Fatalf("%s: error %v (%T) is not an API status error, want code %d", what, err, err, code)
	}
	st := se.Status()
	if st.Code != code {
		t.Fatalf("%s: error code %d (%v), want %d", what, st.Code, err, code)
	}
	return st
}

// wantDetails checks the resource and name a StatusError names.
func wantDetails(t *testing.T, what string, st metav1.Status, resource, name string) {
	t.Helper()
	if st.Details == nil {
		t.Fatalf("%s: status has no details: %+v", what, st)
	}
	if st.Details.Kind != resource || st.Details.Name != name {
		t.Errorf("%s: details name %s %q, want %s %q", what, st.Details.Kind, st.Details.Name, resource, name)
	}
}

func names(items []unstructured.Unstructured) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.GetName())
	}
	return out
}

// next reads one event, skipping bookmarks unless keepBookmarks. It fails
// the test when the channel closes or nothing arrives in time.
func (s *suite) next(t *testing.T, w watch.Interface, keepBookmarks bool) watch.Event {
	t.Helper()
	timer := time.NewTimer(s.env.Timeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch channel closed, want an event")
			}
			if ev.Type == watch.Error {
				t.Fatalf("watch ERROR event: %v", apierrors.FromObject(ev.Object))
			}
			if ev.Type == watch.Bookmark && !keepBookmarks {
				continue
			}
			return ev
		case <-timer.C:
			t.Fatalf("no watch event within %v", s.env.Timeout)
		case <-t.Context().Done():
			t.Fatal("test context done while waiting for a watch event")
		}
	}
}

// wantEvent reads the next non-bookmark event and checks its type and
// object name.
func (s *suite) wantEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) *unstructured.Unstructured {
	t.Helper()
	ev := s.next(t, w, false)
	u, ok := ev.Object.(*unstructured.Unstructured)
	if !ok {
		t.Fatalf("%s event object is %T, want *unstructured.Unstructured", ev.Type, ev.Object)
	}
	if ev.Type != typ || u.GetName() != name {
		t.Fatalf("event %s %q, want %s %q", ev.Type, u.GetName(), typ, name)
	}
	return u
}

// eventually polls cond until it returns true, up to the timeout.
func (s *suite) eventually(t *testing.T, ctx context.Context, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(s.env.Timeout)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %v", what, s.env.Timeout)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func sortedCopy(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}
