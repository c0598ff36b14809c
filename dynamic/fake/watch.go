package fake

import (
	"context"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// watcher is one watch. Writers hand it changes under Client.mu and never
// block on it: its channel is buffered, and a watcher that falls behind is
// ended with an ERROR event, as a real server drops a slow watcher.
type watcher struct {
	c         *Client
	gvr       schema.GroupVersionResource
	namespace string
	labels    labels.Selector
	fields    fields.Selector
	// minRV: changes at or below it are not delivered (a watch from a
	// resourceVersion the server has not reached yet).
	minRV uint64
	// result has one slot more than limit, kept for the ERROR event.
	result chan watch.Event
	limit  int

	// stopped and lastRV are guarded by c.mu.
	stopped bool
	lastRV  uint64

	// Set before the watcher is returned; read by Stop only.
	stopCtx func() bool
	timer   *time.Timer
}

var _ watch.Interface = (*watcher)(nil)

// ResultChan returns the events. It is closed when the watch ends: Stop,
// the context of the Watch call done, TimeoutSeconds passed, or an ERROR
// event sent.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch. It is safe to call more than once.
func (w *watcher) Stop() {
	w.end()
	if w.stopCtx != nil {
		w.stopCtx()
	}
	if w.timer != nil {
		w.timer.Stop()
	}
}

func (w *watcher) end() {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.stopLocked()
}

func (w *watcher) stopLocked() {
	if w.stopped {
		return
	}
	w.stopped = true
	delete(w.c.watchers, w)
	close(w.result)
}

func (w *watcher) matches(obj *unstructured.Unstructured) bool {
	return matches(obj, w.namespace, w.labels, w.fields)
}

// eventFor is what this watcher sees of a change. An object that stops
// matching the selectors is DELETED (with its previous content and the
// change's resourceVersion) and one that starts matching is ADDED, as the
// API server's watch cache does.
func (w *watcher) eventFor(ch change) (watch.Event, bool) {
	now := ch.typ != watch.Deleted && w.matches(ch.obj)
	before := ch.prev != nil && w.matches(ch.prev)
	switch {
	case ch.typ == watch.Deleted && before:
		return watch.Event{Type: watch.Deleted, Object: ch.obj.DeepCopy()}, true
	case ch.typ == watch.Deleted:
		return watch.Event{}, false
	case now && before:
		return watch.Event{Type: watch.Modified, Object: ch.obj.DeepCopy()}, true
	case now:
		return watch.Event{Type: watch.Added, Object: ch.obj.DeepCopy()}, true
	case before:
		gone := ch.prev.DeepCopy()
		gone.SetResourceVersion(strconv.FormatUint(ch.rv, 10))
		return watch.Event{Type: watch.Deleted, Object: gone}, true
	}
	return watch.Event{}, false
}

// changeLocked delivers one change, if the watcher wants it.
func (w *watcher) changeLocked(ch change) {
	if w.stopped || ch.gvr != w.gvr || ch.rv <= w.minRV {
		return
	}
	if ev, ok := w.eventFor(ch); ok {
		w.sendLocked(ev, ch.rv)
	}
}

func (w *watcher) sendLocked(ev watch.Event, rv uint64) {
	if len(w.result) >= w.limit {
		st := tooOldResourceVersion(w.lastRV, w.c.rv)
		st.ErrStatus.Message += fmt.Sprintf(": the fake ended this watch because its consumer fell %d events behind", w.limit)
		w.result <- watch.Event{Type: watch.Error, Object: &st.ErrStatus}
		w.stopLocked()
		return
	}
	w.result <- ev
	w.lastRV = rv
}

// bookmark is a BOOKMARK event's object: only kind and resourceVersion, and
// the initial-events-end annotation after initial events.
func bookmark(res resource, rv uint64, initialEventsEnd bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(res.info.GVR.GroupVersion().String())
	u.SetKind(res.info.Kind)
	u.SetResourceVersion(strconv.FormatUint(rv, 10))
	if initialEventsEnd {
		u.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return u
}

// watchLocked starts a watch. Its start follows the API server:
//   - sendInitialEvents (the default for resourceVersion "" and "0"): ADDED
//     for every matching object, then, with allowWatchBookmarks, a BOOKMARK
//     marking the end of initial events, then changes;
//   - a resourceVersion: the changes after it, replayed from history, or an
//     ERROR (410 Expired) when history no longer reaches back that far;
//   - else: changes from now.
func (c *Client) watchLocked(res resource, namespace string, req listRequest) (*watcher, error) {
	w := &watcher{c: c, gvr: res.info.GVR, namespace: namespace, labels: req.labels, fields: req.fields}
	var initial []watch.Event
	ended := false
	switch {
	case req.opts.SendInitialEvents != nil && *req.opts.SendInitialEvents:
		if req.rv > c.rv {
			return nil, tooLargeResourceVersion(req.rv, c.rv)
		}
		stored := c.objects[w.gvr]
		for _, k := range sortedKeys(stored) {
			if obj := stored[k]; w.matches(obj) {
				initial = append(initial, watch.Event{Type: watch.Added, Object: obj.DeepCopy()})
			}
		}
		if req.opts.AllowWatchBookmarks {
			initial = append(initial, watch.Event{Type: watch.Bookmark, Object: bookmark(res, c.rv, true)})
		}
	case req.rv > c.rv:
		w.minRV = req.rv
	case req.rv > 0 && req.rv < c.compacted:
		st := tooOldResourceVersion(req.rv, c.compacted+1)
		initial = append(initial, watch.Event{Type: watch.Error, Object: &st.ErrStatus})
		ended = true
	case req.rv > 0:
		for _, ch := range c.history {
			if ch.rv <= req.rv || ch.gvr != w.gvr {
				continue
			}
			if ev, ok := w.eventFor(ch); ok {
				initial = append(initial, ev)
			}
		}
	}
	w.result = make(chan watch.Event, len(initial)+c.watchBuffer+1)
	w.limit = cap(w.result) - 1
	for _, ev := range initial {
		w.result <- ev
	}
	w.lastRV = max(req.rv, c.rv)
	if ended {
		w.stopped = true
		close(w.result)
		return w, nil
	}
	c.watchers[w] = struct{}{}
	return w, nil
}

// arm ends the watch when ctx is done or timeout passes (0: never). It
// must run before the watcher is handed out.
func (w *watcher) arm(ctx context.Context, timeout time.Duration) {
	w.stopCtx = context.AfterFunc(ctx, w.end)
	if timeout > 0 {
		w.timer = time.AfterFunc(timeout, w.end)
	}
}
