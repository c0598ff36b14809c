package informer

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kdyn/kdyn/internal/wire"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

var listWatch = Options[*unstructured.Unstructured]{DisableStreaming: true}

func TestListThenWatchResumesFromLastResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil, cm("a", "5"), cm("b", "6"))
		w1 := src.addWatch(nil)
		w2 := src.addWatch(nil)
		rec := newRecorder()
		inf := startInformer(t, src, listWatch, rec)
		src.waitCall(t, "list")
		rec.expect(t, "add a@5 initial=true", "add b@6 initial=true")
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.ResourceVersion != "10" || !o.AllowWatchBookmarks || o.TimeoutSeconds == nil ||
			*o.TimeoutSeconds < 300 || *o.TimeoutSeconds > 600 || o.SendInitialEvents != nil {
			t.Fatalf("first watch options = %+v", o)
		}
		w1.Add(cm("c", "11"))
		w1.Modify(cm("a", "12"))
		rec.expect(t, "add c@11 initial=false", "update a 5->12")
		w1.Stop() // the server ends the stream
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.ResourceVersion != "12" || o.SendInitialEvents != nil {
			t.Fatalf("resumed watch options = %+v, want resourceVersion 12", o)
		}
		// A bookmark advances the resourceVersion without an event.
		w2.Action(watch.Bookmark, bookmark("20", false))
		w2.Delete(cm("b", "21"))
		rec.expect(t, "delete b@21 unknown=false")
		if !inf.HasSynced() || inf.LastSyncResourceVersion() != "10" {
			t.Fatalf("synced=%v rv=%q", inf.HasSynced(), inf.LastSyncResourceVersion())
		}
		if keys := inf.Store().Keys(); len(keys) != 2 || keys[0] != "ns/a" || keys[1] != "ns/c" {
			t.Fatalf("cache = %v", keys)
		}
	})
}

func TestBookmarksAdvanceResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil)
		w1 := src.addWatch(nil)
		src.addWatch(nil)
		startInformer(t, src, listWatch, nil)
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		w1.Action(watch.Bookmark, bookmark("99", false))
		w1.Stop()
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.ResourceVersion != "99" {
			t.Fatalf("resumed from %q, want the bookmark's 99", o.ResourceVersion)
		}
	})
}

func gone() *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 10 (50)"}
}

func TestGoneRelistsWithTombstones(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil, cm("a", "5"), cm("b", "6"), cm("keep", "7"))
		w1 := src.addWatch(nil)
		src.addList("60", "", nil, cm("a", "55"), cm("keep", "7"), cm("c", "56"))
		src.addWatch(nil)
		rec := newRecorder()
		inf := startInformer(t, src, listWatch, rec)
		rec.expect(t, "add a@5 initial=true", "add b@6 initial=true", "add keep@7 initial=true")
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		w1.Error(gone())
		src.waitCall(t, "list")
		// "keep" is unchanged: no event. b vanished while we were away.
		rec.expect(t, "update a 5->55", "add c@56 initial=false", "delete b@6 unknown=true")
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.ResourceVersion != "60" {
			t.Fatalf("watch after relist from %q", o.ResourceVersion)
		}
		if inf.LastSyncResourceVersion() != "60" || inf.Store().Len() != 3 {
			t.Fatalf("rv %q, %d objects", inf.LastSyncResourceVersion(), inf.Store().Len())
		}
		// The first list asks the watch cache (resourceVersion 0, as client-go
		// does); the relist after a 410 asks for a consistent list.
		src.mu.Lock()
		first, relist := src.listCalls[0], src.listCalls[1]
		src.mu.Unlock()
		if first.ResourceVersion != "0" || relist.ResourceVersion != "" || first.Limit != 500 || relist.Limit != 500 {
			t.Fatalf("list options: first %+v, relist %+v", first, relist)
		}
	})
}

func TestGoneOnWatchOpenRelists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil)
		src.addWatch(apierrors.NewResourceExpired("too old"))
		src.addList("20", "", nil, cm("x", "15"))
		src.addWatch(nil)
		rec := newRecorder()
		startInformer(t, src, listWatch, rec)
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		src.waitCall(t, "list")
		rec.expect(t, "add x@15 initial=false")
	})
}

func TestExpiredContinueRestartsList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "tok", nil, cm("a", "5"))
		src.addList("", "", apierrors.NewResourceExpired("continue expired"))
		src.addList("30", "", nil, cm("a", "25"), cm("b", "26"))
		src.addWatch(nil)
		rec := newRecorder()
		inf := startInformer(t, src, listWatch, rec)
		rec.expect(t, "add a@5 initial=true", "update a 5->25", "add b@26 initial=true")
		src.waitCall(t, "list")
		src.waitCall(t, "list")
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		src.mu.Lock()
		second, third := src.listCalls[1], src.listCalls[2]
		src.mu.Unlock()
		if second.Continue != "tok" || third.Continue != "" || third.Limit != 500 {
			t.Fatalf("list calls: %+v then %+v", second, third)
		}
		if inf.LastSyncResourceVersion() != "30" {
			t.Fatalf("rv %q", inf.LastSyncResourceVersion())
		}
	})
}

func TestBackoffTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		boom := errors.New("connection refused")
		for i := 0; i < 7; i++ {
			src.addList("", "", nil)
			src.lists[len(src.lists)-1].err = boom
		}
		src.addList("1", "", nil)
		src.addWatch(nil)
		var errs []error
		opts := listWatch
		opts.OnWatchError = func(err error) { errs = append(errs, err) }
		startInformer(t, src, opts, nil)
		want := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond,
			12800 * time.Millisecond, 25600 * time.Millisecond, 30 * time.Second}
		src.waitCall(t, "list")
		for _, base := range want {
			src.wantBackoffOf(t, "list", base)
		}
		src.waitCall(t, "watch")
		if len(errs) != 7 {
			t.Fatalf("%d errors reported", len(errs))
		}
	})
}

func TestBackoffResetsAfterHealthyPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackoff(0, 0)
		b.jitter = func() float64 { return 0 }
		for _, want := range []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond} {
			if d := b.delay(); d != want {
				t.Fatalf("delay %v, want %v", d, want)
			}
		}
		time.Sleep(3 * time.Minute)
		if d := b.delay(); d != 800*time.Millisecond {
			t.Fatalf("after a healthy period: %v", d)
		}
	})
}

func TestTooManyRequestsWaitsRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("", "", apierrors.NewTooManyRequests("slow down", 7))
		src.addList("1", "", nil)
		src.addWatch(nil)
		startInformer(t, src, listWatch, nil)
		src.waitCall(t, "list")
		if d := src.nextCall(t, "list"); d != 7*time.Second {
			t.Fatalf("the list after the 429 came %v later, want the Retry-After, 7s", d)
		}
	})
}

func TestStreamingListWithEndBookmark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		w := src.addWatch(nil)
		rec := newRecorder()
		inf := startInformer(t, src, Options[*unstructured.Unstructured]{}, rec)
		src.waitCall(t, "watch")
		o := src.lastWatch()
		if o.SendInitialEvents == nil || !*o.SendInitialEvents || o.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan || !o.AllowWatchBookmarks || o.ResourceVersion != "" {
			t.Fatalf("streaming watch options = %+v", o)
		}
		w.Add(cm("a", "5"))
		w.Add(cm("b", "6"))
		rec.expect(t, "add a@5 initial=true", "add b@6 initial=true")
		if inf.HasSynced() {
			t.Fatal("synced before the end bookmark")
		}
		w.Action(watch.Bookmark, bookmark("7", true))
		waitUntil(t, inf.HasSynced)
		// The same stream continues as the watch.
		w.Modify(cm("a", "8"))
		rec.expect(t, "update a 5->8")
		if inf.LastSyncResourceVersion() != "7" {
			t.Fatalf("rv %q", inf.LastSyncResourceVersion())
		}
		// On reconnect, initial events are not asked for again.
		src.addWatch(nil)
		w.Stop()
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.SendInitialEvents != nil || o.ResourceVersion != "8" {
			t.Fatalf("reconnect options = %+v", o)
		}
	})
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatal("condition not met")
	}
}

func TestStreamingWithoutEndBookmarkFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		w := src.addWatch(nil)
		src.addList("10", "", nil, cm("a", "5"), cm("b", "6"))
		src.addWatch(nil)
		rec := newRecorder()
		inf := startInformer(t, src, Options[*unstructured.Unstructured]{InitialEventsTimeout: 3 * time.Second}, rec)
		src.waitCall(t, "watch")
		w.Add(cm("a", "5"))
		rec.expect(t, "add a@5 initial=true")
		// Silence past the timeout, counted from the last event: fall back
		// to list+watch.
		time.Sleep(3*time.Second - time.Nanosecond)
		src.noCall(t)
		time.Sleep(time.Nanosecond)
		src.waitCall(t, "list")
		rec.expect(t, "add b@6 initial=true")
		src.waitCall(t, "watch")
		waitUntil(t, inf.HasSynced)
		if o := src.lastWatch(); o.SendInitialEvents != nil || o.ResourceVersion != "10" {
			t.Fatalf("watch after fallback = %+v", o)
		}
	})
}

func TestStreamingRefusedFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addWatch(apierrors.NewBadRequest("sendInitialEvents is not supported"))
		src.addList("10", "", nil, cm("a", "5"))
		src.addWatch(nil)
		rec := newRecorder()
		startInformer(t, src, Options[*unstructured.Unstructured]{}, rec)
		src.waitCall(t, "watch")
		src.waitCall(t, "list")
		rec.expect(t, "add a@5 initial=true")
		src.waitCall(t, "watch")
	})
}

func TestIdleDeadlineRewatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil)
		w1 := src.addWatch(nil)
		src.addWatch(nil)
		opts := listWatch
		opts.IdleTimeout = 90 * time.Second
		startInformer(t, src, opts, nil)
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		time.Sleep(30 * time.Second)
		w1.Action(watch.Bookmark, bookmark("11", false))
		// The bookmark re-armed the idle deadline: the re-watch comes 90 s
		// after it, not 90 s after the watch was opened (nor when the
		// deadline for the watch's answer would have passed).
		time.Sleep(90*time.Second - time.Nanosecond)
		src.noCall(t)
		time.Sleep(time.Nanosecond)
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.ResourceVersion != "11" {
			t.Fatalf("re-watch from %q", o.ResourceVersion)
		}
	})
}

func TestForbiddenSurfacesInWaitForSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("", "", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("no")))
		inf := startInformer(t, src, listWatch, nil)
		err := inf.WaitForSync(t.Context())
		if !apierrors.IsForbidden(err) {
			t.Fatalf("WaitForSync = %v, want Forbidden", err)
		}
	})
}

func TestMalformedFrameRewatchesFromLastGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil)
		w1 := src.addWatch(nil)
		src.addWatch(nil)
		rec := newRecorder()
		startInformer(t, src, listWatch, rec)
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		w1.Add(cm("a", "11"))
		rec.expect(t, "add a@11 initial=false")
		w1.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonInternalError, Message: "unable to decode an event from the watch stream"})
		// After a backoff, not at once: the same object would fail again.
		src.wantBackoff(t, "watch")
		if o := src.lastWatch(); o.ResourceVersion != "11" {
			t.Fatalf("re-watch from %q, want 11", o.ResourceVersion)
		}
	})
}

// wantBackoff checks that the next call, want, is not made at once but
// after the first backoff (0.8 s, up to a quarter more).
func (s *scriptedSource) wantBackoff(t *testing.T, want string) {
	t.Helper()
	s.wantBackoffOf(t, want, backoffInitial)
}

// wantBackoffOf checks that the next call, want, is not made at once but
// after a backoff of base, up to a quarter more (the jitter).
func (s *scriptedSource) wantBackoffOf(t *testing.T, want string, base time.Duration) {
	t.Helper()
	s.noCall(t)
	if d := s.nextCall(t, want); d < base || d > base+base/4 {
		t.Fatalf("%s after %v, want a backoff of %v..%v", want, d, base, base+base/4)
	}
}

// A watch that ends at once without an event (a server or proxy closing
// every watch) is retried after a backoff, not in a tight loop.
func TestShortEmptyWatchBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil)
		w1 := src.addWatch(nil)
		src.addWatch(nil)
		var mu sync.Mutex
		var errs []error
		opts := listWatch
		opts.OnWatchError = func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
		startInformer(t, src, opts, nil)
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		w1.Stop()
		src.wantBackoff(t, "watch")
		mu.Lock()
		defer mu.Unlock()
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "without an event") {
			t.Fatalf("reported errors %v", errs)
		}
	})
}

// blockingSource never answers a watch until its context ends, like a
// server that accepted the request and went silent.
type blockingSource struct {
	*scriptedSource
	opened chan struct{}
}

func (b *blockingSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	b.opened <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestUnansweredWatchIsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &blockingSource{scriptedSource: newScriptedSource(), opened: make(chan struct{}, 10)}
		src.addList("10", "", nil)
		opts := listWatch
		opts.IdleTimeout = 40 * time.Second
		var errs []error
		var mu sync.Mutex
		opts.OnWatchError = func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
		startInformer(t, src, opts, nil)
		<-src.opened
		reported := func() int { mu.Lock(); defer mu.Unlock(); return len(errs) }
		time.Sleep(40*time.Second - time.Nanosecond)
		waitUntil(t, func() bool { return reported() == 0 })
		time.Sleep(time.Nanosecond)
		waitUntil(t, func() bool { return reported() == 1 })
		if !strings.Contains(errs[0].Error(), "did not answer the watch request within 40s") {
			t.Fatalf("error = %v", errs[0])
		}
		// After the backoff, a new watch is tried.
		start := time.Now()
		select {
		case <-src.opened:
		case <-time.After(time.Hour):
			t.Fatal("no new watch after the unanswered one")
		}
		if d := time.Since(start); d < backoffInitial || d > backoffInitial+backoffInitial/4 {
			t.Fatalf("new watch after %v, want a backoff of %v..%v", d, backoffInitial, backoffInitial+backoffInitial/4)
		}
	})
}

// frame is one JSON watch frame as the server writes it.
func frame(t *testing.T, typ watch.EventType, obj *unstructured.Unstructured) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": typ, "object": obj.Object})
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// A watch from kdyn's rest package is read in the reflector's goroutine
// (wire.EventReader): a streaming list, its watch, the end of the stream,
// and the idle deadline, which must end a read that is waiting.
func TestStreamsAreReadInTheReflectorGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		frames, gone := src.addStream(t)
		frames2, gone2 := src.addStream(t)
		src.addWatch(nil)
		rec := newRecorder()
		opts := Options[*unstructured.Unstructured]{IdleTimeout: 90 * time.Second}
		inf := startInformer(t, src, opts, rec)
		src.waitCall(t, "watch")
		frames <- frame(t, watch.Added, cm("a", "5"))
		frames <- frame(t, watch.Bookmark, bookmark("7", true))
		rec.expect(t, "add a@5 initial=true")
		waitUntil(t, inf.HasSynced)
		frames <- frame(t, watch.Modified, cm("a", "8"))
		rec.expect(t, "update a 5->8")
		close(frames) // the server ends the stream
		<-gone
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.SendInitialEvents != nil || o.ResourceVersion != "8" {
			t.Fatalf("reconnect options = %+v", o)
		}
		time.Sleep(30 * time.Second)
		frames2 <- frame(t, watch.Modified, cm("a", "9"))
		rec.expect(t, "update a 8->9")
		// Only this watch's idle deadline, re-armed by the frame, ends it:
		// neither the deadlines for the answers nor the one for the
		// initial events, which were stopped.
		time.Sleep(90*time.Second - time.Nanosecond)
		src.noCall(t)
		time.Sleep(time.Nanosecond)
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.ResourceVersion != "9" {
			t.Fatalf("re-watch after the idle deadline from %q, want 9", o.ResourceVersion)
		}
		// The silent stream was stopped: the server saw its connection close.
		waitClosed(t, gone2, "the stream past its idle deadline was not closed")
	})
}

// A streaming list's watch that ends right after the end bookmark is not
// a "short watch without an event": it delivered the initial events, so the
// informer re-watches at once and reports nothing.
func TestStreamEndingAfterItsBookmarkRewatchesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		w := src.addWatch(nil)
		src.addWatch(nil)
		var mu sync.Mutex
		var errs []error
		opts := Options[*unstructured.Unstructured]{OnWatchError: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }}
		inf := startInformer(t, src, opts, nil)
		src.waitCall(t, "watch")
		w.Add(cm("a", "5"))
		w.Action(watch.Bookmark, bookmark("7", true))
		waitUntil(t, inf.HasSynced)
		w.Stop()
		src.waitCall(t, "watch") // at once: no backoff
		if o := src.lastWatch(); o.ResourceVersion != "7" || o.SendInitialEvents != nil {
			t.Fatalf("re-watch options = %+v", o)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(errs) != 0 {
			t.Fatalf("reported %v", errs)
		}
	})
}

// oneShotFeed is the scripted source as a feed whose streaming lists are
// one-shot, as the wire layer reports those that came gzip-compressed or
// over a connection of their own.
type oneShotFeed struct{ *scriptedSource }

func (f oneShotFeed) list(ctx context.Context, opts metav1.ListOptions, _ wire.Known, each func(*unstructured.Unstructured, []byte) error) (ListPage, error) {
	return f.List(ctx, opts, func(u *unstructured.Unstructured) error { return each(u, nil) })
}

func (f oneShotFeed) probeShard(ctx context.Context, opts metav1.ListOptions) (ListPage, int, error) {
	return countedList[*unstructured.Unstructured](ctx, f, opts)
}

func (f oneShotFeed) watch(ctx context.Context, opts metav1.ListOptions, _ wire.Known) (wire.Stream, error) {
	w, err := f.Watch(ctx, opts)
	return wire.Stream{Interface: w, OneShot: opts.SendInitialEvents != nil}, err
}

// A one-shot streaming list ends at its initial-events-end bookmark, and
// the reflector watches on, plain, from the bookmark: each later event
// would be a gzip block of its own, or the watch would hold a connection
// alone.
func TestOneShotStreamingListWatchesOnPlain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		first := src.addWatch(nil)
		next := src.addWatch(nil)
		rec := newRecorder()
		inf := startInformer(t, oneShotFeed{src}, Options[*unstructured.Unstructured]{}, rec)
		src.waitCall(t, "watch")
		first.Add(cm("a", "5"))
		first.Action(watch.Bookmark, bookmark("7", true))
		waitUntil(t, inf.HasSynced)
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.SendInitialEvents != nil || o.ResourceVersion != "7" || !o.AllowWatchBookmarks {
			t.Fatalf("the watch after the one-shot stream: %+v, want a plain watch from 7", o)
		}
		waitUntil(t, first.IsStopped)
		next.Modify(cm("a", "8"))
		rec.expect(t, "add a@5 initial=true", "update a 5->8")
	})
}
