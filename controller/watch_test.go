package controller

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/informer"
)

// queued records what watches queue, as "key" or "key (initial)".
type queued struct {
	mu   sync.Mutex
	keys []string
}

func (q *queued) Add(k string) { q.mu.Lock(); q.keys = append(q.keys, k); q.mu.Unlock() }
func (q *queued) AddInitial(k string) {
	q.mu.Lock()
	q.keys = append(q.keys, k+" (initial)")
	q.mu.Unlock()
}

// take waits until want has been queued, in any order, and removes it.
func (q *queued) take(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		q.mu.Lock()
		have := slices.Clone(q.keys)
		q.mu.Unlock()
		rest := slices.Clone(have)
		missing := false
		for _, w := range want {
			i := slices.Index(rest, w)
			if i < 0 {
				missing = true
				break
			}
			rest = slices.Delete(rest, i, i+1)
		}
		if !missing {
			q.mu.Lock()
			q.keys = q.keys[len(have):]
			q.keys = append(rest, q.keys...)
			q.mu.Unlock()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queued %q, want %q among them", have, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// none checks that nothing more was queued.
func (q *queued) none(t *testing.T) {
	t.Helper()
	time.Sleep(100 * time.Millisecond)
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.keys) > 0 {
		t.Fatalf("also queued %q", q.keys)
	}
}

var (
	widgets    = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	widgetKind = schema.GroupKind{Group: "example.com", Kind: "Widget"}
)

func object(apiVersion, kind, ns, name string, owner *metav1.OwnerReference, ann map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	if owner != nil {
		u.SetOwnerReferences([]metav1.OwnerReference{*owner})
	}
	u.SetAnnotations(ann)
	return u
}

func controllerRef(apiVersion, kind, name string) *metav1.OwnerReference {
	yes := true
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("u-" + name), Controller: &yes}
}

// For, Owns and Watches turn a primary resource, an owned one (watched
// metadata-only) and a mapped one into keys: the initial lists behind real
// changes, an update that moves the owner to both owners, a delete to the
// owner the object had.
func TestWatchesQueueKeys(t *testing.T) {
	c := fake.NewClient(
		object("example.com/v1", "Widget", "prod", "w1", nil, nil),
		object("v1", "ConfigMap", "prod", "cm1", controllerRef("example.com/v1", "Widget", "w1"), nil),
		object("v1", "ConfigMap", "prod", "other", controllerRef("apps/v1", "Deployment", "w1"), nil),
		object("v1", "ConfigMap", "prod", "wrong-group", controllerRef("other.io/v1", "Widget", "w1"), nil),
		object("v1", "Secret", "prod", "s1", nil, map[string]string{"widget": "w2"}),
	)
	f := informer.NewFactory(c, informer.FactoryOptions{})
	q := &queued{}
	for _, w := range []Watch[string]{
		For(f.ForResource(widgets, informer.InformerOptions{})),
		Owns(f.ForResourceMetadata(configMaps, informer.InformerOptions{}), widgetKind),
		Watches(f.ForResource(secrets, informer.InformerOptions{}), func(s *unstructured.Unstructured) []string {
			if w := s.GetAnnotations()["widget"]; w != "" {
				return []string{s.GetNamespace() + "/" + w}
			}
			return nil
		}),
	} {
		if err := w.register(q); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := f.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	q.take(t, "prod/w1 (initial)", "prod/w1 (initial)", "prod/w2 (initial)")
	q.none(t)

	cms := c.Resource(configMaps).Namespace("prod")
	cm, err := cms.Get(ctx, "cm1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.SetOwnerReferences([]metav1.OwnerReference{*controllerRef("example.com/v2", "Widget", "w3")})
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	q.take(t, "prod/w3", "prod/w1")
	q.none(t)
	if err := cms.Delete(ctx, "cm1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	q.take(t, "prod/w3")
	if _, err := c.Resource(widgets).Namespace("prod").Create(ctx, object("example.com/v1", "Widget", "prod", "w4", nil, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Resource(widgets).Namespace("prod").Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	q.take(t, "prod/w4", "prod/w1")
	q.none(t)
}

// A zero Watch, or one with a nil mapping, is an error naming it.
func TestWatchRefusesZeroWatches(t *testing.T) {
	ctrl, err := New("w", func(context.Context, string) (Result, error) { return Result{}, nil }, Options[string]{})
	if err != nil {
		t.Fatal(err)
	}
	err = ctrl.Watch(Watch[string]{})
	if err == nil || !strings.Contains(err.Error(), "watch 0") {
		t.Fatalf("zero Watch: %v", err)
	}
	f := informer.NewFactory(fake.NewClient(), informer.FactoryOptions{})
	err = ctrl.Watch(Watches[*unstructured.Unstructured, string](f.ForResource(secrets, informer.InformerOptions{}), nil))
	if err == nil || !strings.Contains(err.Error(), "nil source or mapping") {
		t.Fatalf("nil mapping: %v", err)
	}
}

// fakeSet hands WatchesSet's handler to the test, which sends events.
type fakeSet struct{ h func(informer.Event) }

func (s *fakeSet) AddHandler(h func(informer.Event)) error { s.h = h; return nil }

// WatchesSet queues the keys of an initial list's events behind real
// changes, and gives the mapping every event, deletes of every kind
// included.
func TestWatchesSetQueuesKeys(t *testing.T) {
	set := &fakeSet{}
	q := &queued{}
	var seen []string
	w := WatchesSet(set, func(e informer.Event) []string {
		seen = append(seen, string(e.Type)+" "+e.Object.GetName())
		if e.Type == "DELETED" && !e.ShardMove {
			return []string{"owner-of-" + e.Object.GetName()}
		}
		return []string{e.Object.GetName()}
	})
	if err := w.register(q); err != nil {
		t.Fatal(err)
	}
	meta := func(name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	set.h(informer.Event{Type: "ADDED", GVR: configMaps, Object: meta("a"), InInitialList: true})
	set.h(informer.Event{Type: "ADDED", GVR: configMaps, Object: meta("b")})
	set.h(informer.Event{Type: "MODIFIED", GVR: configMaps, Object: meta("a"), Old: meta("a")})
	set.h(informer.Event{Type: "DELETED", GVR: configMaps, Object: meta("b"), FinalStateUnknown: true, ResourceGone: true})
	set.h(informer.Event{Type: "DELETED", GVR: configMaps, Object: meta("c"), ShardMove: true})
	q.take(t, "a (initial)", "b", "a", "owner-of-b", "c")
	q.none(t)
	if want := []string{"ADDED a", "ADDED b", "MODIFIED a", "DELETED b", "DELETED c"}; !slices.Equal(seen, want) {
		t.Fatalf("the mapping saw %q, want %q", seen, want)
	}
	if err := WatchesSet[string](nil, nil).register(q); err == nil {
		t.Fatal("a nil set was accepted")
	}
}
