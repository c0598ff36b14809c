package dynamictest

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func (s *suite) testWatchLaterChanges(t *testing.T) {
	ctx := s.ctx(t)
	test := s.testID()
	sel := testLabel + "=" + test + ",watched=yes"
	s.create(t, ctx, s.configMap(s.name("wpre"), test, map[string]string{"watched": "yes"}, nil))
	list, err := s.configMaps().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	w, err := s.configMaps().Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	defer w.Stop()

	// Not selected: no event.
	s.create(t, ctx, s.configMap(s.name("wother"), test, map[string]string{"watched": "no"}, nil))
	name := s.name("w")
	created := s.create(t, ctx, s.configMap(name, test, map[string]string{"watched": "yes"}, map[string]string{"v": "1"}))
	got := s.get(t, ctx, name)
	got.Object["data"] = map[string]any{"v": "2"}
	updated, err := s.configMaps().Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if err := s.configMaps().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("Delete: %v", err)
	}

	added := s.wantEvent(t, w, watch.Added, name)
	if added.GetResourceVersion() != created.GetResourceVersion() {
		t.Errorf("ADDED resourceVersion %s, want the created %s", added.GetResourceVersion(), created.GetResourceVersion())
	}
	modified := s.wantEvent(t, w, watch.Modified, name)
	if modified.GetResourceVersion() != updated.GetResourceVersion() {
		t.Errorf("MODIFIED resourceVersion %s, want the updated %s", modified.GetResourceVersion(), updated.GetResourceVersion())
	}
	wantData(t, "MODIFIED object", modified, map[string]string{"v": "2"})
	deleted := s.wantEvent(t, w, watch.Deleted, name)
	if rv(t, deleted) <= rv(t, modified) {
		t.Errorf("DELETED resourceVersion %s, want more than %s", deleted.GetResourceVersion(), modified.GetResourceVersion())
	}
}

func (s *suite) testWatchInitialEvents(t *testing.T) {
	ctx := s.ctx(t)
	test := s.testID()
	sel := testLabel + "=" + test
	a, b := s.name("wia"), s.name("wib")
	s.create(t, ctx, s.configMap(a, test, nil, nil))
	s.create(t, ctx, s.configMap(b, test, nil, nil))

	// Without a resourceVersion a watch starts with the current state.
	w, err := s.configMaps().Watch(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	defer w.Stop()
	seen := map[string]bool{}
	for range 2 {
		ev := s.next(t, w, false)
		u, _ := ev.Object.(*unstructured.Unstructured)
		if ev.Type != watch.Added || u == nil {
			t.Fatalf("initial event %s %T, want ADDED", ev.Type, ev.Object)
		}
		seen[u.GetName()] = true
	}
	if !seen[a] || !seen[b] {
		t.Errorf("initial ADDED events for %v, want %s and %s", seen, a, b)
	}
	c := s.name("wic")
	s.create(t, ctx, s.configMap(c, test, nil, nil))
	s.wantEvent(t, w, watch.Added, c)
}

func (s *suite) testWatchInitialEventsBookmark(t *testing.T) {
	ctx := s.ctx(t)
	test := s.testID()
	sel := testLabel + "=" + test
	a, b := s.name("wba"), s.name("wbb")
	s.create(t, ctx, s.configMap(a, test, nil, nil))
	last := s.create(t, ctx, s.configMap(b, test, nil, nil))

	yes := true
	w, err := s.configMaps().Watch(ctx, metav1.ListOptions{
		LabelSelector:        sel,
		SendInitialEvents:    &yes,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		t.Fatalf("Watch with sendInitialEvents: %v", err)
	}
	defer w.Stop()
	seen := map[string]bool{}
	for range 2 {
		ev := s.next(t, w, false)
		u, _ := ev.Object.(*unstructured.Unstructured)
		if ev.Type != watch.Added || u == nil {
			t.Fatalf("initial event %s %T, want ADDED", ev.Type, ev.Object)
		}
		seen[u.GetName()] = true
	}
	if !seen[a] || !seen[b] {
		t.Errorf("initial ADDED events for %v, want %s and %s", seen, a, b)
	}
	ev := s.next(t, w, true)
	if ev.Type != watch.Bookmark {
		t.Fatalf("event after the initial ones is %s, want BOOKMARK", ev.Type)
	}
	obj, ok := ev.Object.(metav1.Object)
	if !ok {
		t.Fatalf("BOOKMARK object %T has no metadata", ev.Object)
	}
	if v := obj.GetAnnotations()[metav1.InitialEventsAnnotationKey]; v != "true" {
		t.Errorf("BOOKMARK annotation %s = %q, want \"true\"", metav1.InitialEventsAnnotationKey, v)
	}
	if rv(t, obj) < rv(t, last) {
		t.Errorf("BOOKMARK resourceVersion %s, want at least the last write's %s", obj.GetResourceVersion(), last.GetResourceVersion())
	}
}

func (s *suite) testWatchSelectorTransitions(t *testing.T) {
	ctx := s.ctx(t)
	test := s.testID()
	name := s.name("wsel")
	created := s.create(t, ctx, s.configMap(name, test, map[string]string{"phase": "out"}, nil))
	w, err := s.configMaps().Watch(ctx, metav1.ListOptions{
		LabelSelector:   testLabel + "=" + test + ",phase=in",
		ResourceVersion: created.GetResourceVersion(),
	})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	defer w.Stop()

	setPhase := func(phase string) {
		t.Helper()
		patch := []byte(`{"metadata":{"labels":{"phase":"` + phase + `"}}}`)
		if _, err := s.configMaps().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("Patch phase=%s: %v", phase, err)
		}
	}
	setPhase("in")
	if u := s.wantEvent(t, w, watch.Added, name); u.GetLabels()["phase"] != "in" {
		t.Errorf("ADDED object has phase %q, want in", u.GetLabels()["phase"])
	}
	setPhase("out")
	s.wantEvent(t, w, watch.Deleted, name)
	setPhase("in")
	s.wantEvent(t, w, watch.Added, name)
}

func (s *suite) testWatchStop(t *testing.T) {
	ctx := s.ctx(t)
	w, err := s.configMaps().Watch(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + s.testID()})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	w.Stop()
	w.Stop() // twice is fine
	timer := time.NewTimer(s.env.Timeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if ev.Type != watch.Bookmark {
				t.Fatalf("event %s after Stop on a watch that selects nothing", ev.Type)
			}
		case <-timer.C:
			t.Fatalf("the channel is still open %v after Stop", s.env.Timeout)
		}
	}
}
