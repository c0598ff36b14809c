package informer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kdyn/kdyn/dynamic/fake"
)

// followLog records what Follow hands to its funcs, one line per call,
// and says done at the line stopAt.
type followLog struct {
	mu     sync.Mutex
	lines  []string
	stopAt string
	fail   map[string]error // a line whose func returns an error
}

func (l *followLog) add(line string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	return line == l.stopAt, l.fail[line]
}

func (l *followLog) got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func objects(items []*unstructured.Unstructured) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s@%s", it.GetName(), it.GetResourceVersion())
	}
	return b.String()
}

// funcs records lists and events; pages too when pages is set.
func (l *followLog) funcs(pages bool) FollowFuncs[*unstructured.Unstructured] {
	fns := FollowFuncs[*unstructured.Unstructured]{
		Listed: func(items []*unstructured.Unstructured) (bool, error) {
			return l.add("listed " + objects(items))
		},
		Event: func(typ watch.EventType, obj *unstructured.Unstructured) (bool, error) {
			return l.add(fmt.Sprintf("%s %s@%s", typ, obj.GetName(), obj.GetResourceVersion()))
		},
	}
	if pages {
		fns.Page = func(items []*unstructured.Unstructured, first, last bool) (bool, error) {
			return l.add(fmt.Sprintf("page first=%v last=%v %s", first, last, objects(items)))
		}
	}
	return fns
}

// startFollow runs Follow on src, in the test's bubble; the returned
// channel gets its result. The test's cleanup cancels it and checks that
// it has returned by the time every other goroutine of the bubble is
// blocked.
func startFollow(t *testing.T, src Source[*unstructured.Unstructured], opts FollowOptions, fns FollowFuncs[*unstructured.Unstructured]) (<-chan error, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	res := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		res <- Follow(ctx, src, opts, fns)
	}()
	t.Cleanup(func() {
		cancel()
		waitClosed(t, exited, "Follow did not return after cancel")
	})
	return res, cancel
}

// followResult checks that Follow has returned by the time every other
// goroutine of the bubble is blocked, without letting time pass, and
// returns its result.
func followResult(t *testing.T, res <-chan error) error {
	t.Helper()
	synctest.Wait()
	select {
	case err := <-res:
		return err
	default:
		t.Fatal("Follow did not return")
		return nil
	}
}

// expectCanceled cancels Follow's context and checks that Follow returns
// its error.
func expectCanceled(t *testing.T, res <-chan error, cancel context.CancelFunc) {
	t.Helper()
	cancel()
	if err := followResult(t, res); !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow = %v, want context.Canceled", err)
	}
}

func TestFollowResumesFromLastResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil, cm("a", "5"), cm("b", "6"))
		w1 := src.addWatch(nil)
		w2 := src.addWatch(nil)
		log := &followLog{stopAt: "MODIFIED a@21"}
		opts := FollowOptions{ListOptions: metav1.ListOptions{
			LabelSelector: "app=web", FieldSelector: "metadata.name!=x",
			ResourceVersion: "99", ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 3, // Follow's own
		}}
		res, _ := startFollow(t, src, opts, log.funcs(false))
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.ResourceVersion != "10" || !o.AllowWatchBookmarks || o.TimeoutSeconds == nil ||
			*o.TimeoutSeconds < 300 || *o.TimeoutSeconds > 600 || o.LabelSelector != "app=web" || o.FieldSelector != "metadata.name!=x" || o.ResourceVersionMatch != "" {
			t.Fatalf("first watch options = %+v", o)
		}
		w1.Add(cm("c", "11"))
		w1.Delete(cm("b", "12"))
		w1.Action(watch.Bookmark, bookmark("20", false))
		w1.Stop() // the server ends the stream
		src.waitCall(t, "watch")
		if o := src.lastWatch(); o.ResourceVersion != "20" {
			t.Fatalf("resumed from %q, want the bookmark's 20", o.ResourceVersion)
		}
		w2.Modify(cm("a", "21"))
		if err := followResult(t, res); err != nil {
			t.Fatalf("Follow = %v, want nil (done)", err)
		}
		want := []string{"listed a@5 b@6", "ADDED c@11", "DELETED b@12", "MODIFIED a@21"}
		if diff := cmp.Diff(want, log.got()); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		// Every list is a consistent read: not the watch cache's "0".
		l := src.listCalls[0]
		if l.ResourceVersion != "" || l.ResourceVersionMatch != "" || l.Limit != 500 || l.LabelSelector != "app=web" {
			t.Errorf("list options = %+v", l)
		}
	})
}

func TestFollowRelistsOnGone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		watch func(*scriptedSource)
	}{
		{"410 when the watch opens", func(s *scriptedSource) { s.addWatch(apierrors.NewResourceExpired("too old resource version: 10 (25)")) }},
		{"410 Gone when the watch opens", func(s *scriptedSource) {
			s.addWatch(&apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonGone, Message: "gone"}})
		}},
		{"410 as an ERROR event", func(s *scriptedSource) { s.addWatch(nil).Error(gone()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newScriptedSource()
				src.addList("10", "", nil, cm("a", "5"), cm("b", "6"))
				tc.watch(src)
				src.addList("30", "", nil, cm("a", "25"), cm("c", "26"))
				w := src.addWatch(nil)
				log := &followLog{stopAt: "ADDED d@31"}
				res, _ := startFollow(t, src, FollowOptions{}, log.funcs(false))
				src.waitCall(t, "list")
				src.waitCall(t, "watch")
				src.waitCall(t, "list") // at once: no backoff
				src.waitCall(t, "watch")
				if o := src.lastWatch(); o.ResourceVersion != "30" {
					t.Fatalf("watch after the relist from %q, want 30", o.ResourceVersion)
				}
				w.Add(cm("d", "31"))
				if err := followResult(t, res); err != nil {
					t.Fatal(err)
				}
				want := []string{"listed a@5 b@6", "listed a@25 c@26", "ADDED d@31"}
				if diff := cmp.Diff(want, log.got()); diff != "" {
					t.Errorf("calls (-want +got):\n%s", diff)
				}
				if relist := src.listCalls[1]; relist.ResourceVersion != "" || relist.Limit != 500 {
					t.Errorf("relist options = %+v", relist)
				}
			})
		})
	}
}

func TestFollowRetriesOtherFailuresWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("", "", apierrors.NewInternalError(errors.New("etcd is away")))
		src.addList("10", "", nil, cm("a", "5"))
		src.addWatch(apierrors.NewServiceUnavailable("apiserver is shutting down"))
		src.addWatch(nil).Error(&apierrors.NewTimeoutError("slow", 1).ErrStatus)
		w := src.addWatch(nil)
		var mu sync.Mutex
		var retried []string
		opts := FollowOptions{
			InitialBackoff: 100 * time.Millisecond,
			MaxBackoff:     300 * time.Millisecond,
			OnError: func(err error) error {
				mu.Lock()
				retried = append(retried, string(apierrors.ReasonForError(err)))
				mu.Unlock()
				return nil
			},
		}
		log := &followLog{stopAt: "MODIFIED a@11"}
		res, _ := startFollow(t, src, opts, log.funcs(false))
		src.waitCall(t, "list")
		src.wantBackoffOf(t, "list", 100*time.Millisecond)
		src.waitCall(t, "watch")
		// A successful list starts the sequence over.
		src.wantBackoffOf(t, "watch", 100*time.Millisecond)
		src.wantBackoffOf(t, "watch", 200*time.Millisecond)
		if o := src.lastWatch(); o.ResourceVersion != "10" {
			t.Fatalf("watch after failures from %q, want the list's 10", o.ResourceVersion)
		}
		w.Modify(cm("a", "11"))
		if err := followResult(t, res); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		want := []string{"InternalError", "ServiceUnavailable", "Timeout"}
		if diff := cmp.Diff(want, retried); diff != "" {
			t.Errorf("OnError (-want +got):\n%s", diff)
		}
	})
}

func TestFollowBackoffIsCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		boom := errors.New("connection refused")
		for range 4 {
			src.addList("", "", boom)
		}
		src.addList("10", "", nil)
		src.addWatch(nil)
		res, cancel := startFollow(t, src, FollowOptions{InitialBackoff: 100 * time.Millisecond, MaxBackoff: 300 * time.Millisecond}, FollowFuncs[*unstructured.Unstructured]{})
		src.waitCall(t, "list")
		for _, base := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond} {
			src.wantBackoffOf(t, "list", base)
		}
		src.waitCall(t, "watch")
		expectCanceled(t, res, cancel)
	})
}

func TestFollowEndsOnTerminalErrors(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, se := range []*apierrors.StatusError{
		apierrors.NewBadRequest("unknown field selector"),
		apierrors.NewUnauthorized("token expired"),
		apierrors.NewForbidden(gr, "", errors.New("RBAC says no")),
		apierrors.NewNotFound(gr, ""),
	} {
		for _, at := range []string{"list", "watch", "event"} {
			t.Run(fmt.Sprintf("%d at %s", se.ErrStatus.Code, at), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					src := newScriptedSource()
					switch at {
					case "list":
						src.addList("", "", se)
					case "watch":
						src.addList("10", "", nil)
						src.addWatch(se)
					case "event":
						src.addList("10", "", nil)
						src.addWatch(nil).Error(&se.ErrStatus)
					}
					retried := 0
					opts := FollowOptions{OnError: func(error) error { retried++; return nil }}
					res, _ := startFollow(t, src, opts, FollowFuncs[*unstructured.Unstructured]{})
					err := followResult(t, res)
					var got *apierrors.StatusError
					if !errors.As(err, &got) || got.ErrStatus.Code != se.ErrStatus.Code {
						t.Fatalf("Follow = %v (%T), want the server's %d", err, err, se.ErrStatus.Code)
					}
					if retried != 0 {
						t.Errorf("OnError called %d times for an error that ends Follow", retried)
					}
				})
			})
		}
	}
}

func TestFollowFailFast(t *testing.T) {
	boom := apierrors.NewInternalError(errors.New("etcd is away"))
	t.Run("the first list", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := newScriptedSource()
			src.addList("", "", boom)
			res, _ := startFollow(t, src, FollowOptions{FailFast: true}, FollowFuncs[*unstructured.Unstructured]{})
			if err := followResult(t, res); !errors.Is(err, boom) {
				t.Fatalf("Follow = %v, want the list's error", err)
			}
		})
	})
	t.Run("not a relist", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := newScriptedSource()
			src.addList("10", "", nil)
			src.addWatch(nil).Error(gone())
			src.addList("", "", boom)
			src.addList("30", "", nil)
			src.addWatch(nil)
			res, cancel := startFollow(t, src, FollowOptions{FailFast: true}, FollowFuncs[*unstructured.Unstructured]{})
			src.waitCall(t, "list")
			src.waitCall(t, "watch")
			src.waitCall(t, "list")
			src.wantBackoff(t, "list")
			src.waitCall(t, "watch")
			expectCanceled(t, res, cancel)
		})
	})
}

func TestFollowContextCancel(t *testing.T) {
	for _, at := range []string{"watching", "backing off", "listing"} {
		t.Run(at, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newScriptedSource()
				switch at {
				case "watching":
					src.addList("10", "", nil)
					src.addWatch(nil)
				case "backing off":
					src.addList("", "", errors.New("connection refused"))
				}
				res, cancel := startFollow(t, src, FollowOptions{}, FollowFuncs[*unstructured.Unstructured]{})
				switch at {
				case "watching":
					src.waitCall(t, "list")
					src.waitCall(t, "watch")
				case "backing off":
					src.waitCall(t, "list")
					src.noCall(t) // waiting out the backoff
				case "listing":
					src.waitCall(t, "list(blocked)")
				}
				expectCanceled(t, res, cancel)
			})
		})
	}
}

func TestFollowFuncsEndIt(t *testing.T) {
	failed := errors.New("the condition can never be met")
	t.Run("Listed done", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := newScriptedSource()
			src.addList("10", "", nil, cm("a", "5"))
			log := &followLog{stopAt: "listed a@5"}
			res, _ := startFollow(t, src, FollowOptions{}, log.funcs(false))
			if err := followResult(t, res); err != nil {
				t.Fatal(err)
			}
			if n := len(src.watchCalls); n != 0 {
				t.Errorf("%d watches after Listed said done", n)
			}
		})
	})
	t.Run("Page done", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := newScriptedSource()
			src.addList("10", "next", nil, cm("a", "5"))
			log := &followLog{stopAt: "page first=true last=false a@5"}
			res, _ := startFollow(t, src, FollowOptions{}, log.funcs(true))
			if err := followResult(t, res); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{log.stopAt}, log.got()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("Event fails", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := newScriptedSource()
			src.addList("10", "", nil)
			w := src.addWatch(nil)
			w.Add(cm("a", "11"))
			w.Add(cm("b", "12"))
			log := &followLog{fail: map[string]error{"ADDED a@11": failed}}
			res, _ := startFollow(t, src, FollowOptions{}, log.funcs(false))
			if err := followResult(t, res); !errors.Is(err, failed) {
				t.Fatalf("Follow = %v, want the func's error", err)
			}
			if diff := cmp.Diff([]string{"listed ", "ADDED a@11"}, log.got()); diff != "" {
				t.Errorf("calls after the func failed (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("OnError ends it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := newScriptedSource()
			src.addList("", "", errors.New("connection refused"))
			opts := FollowOptions{OnError: func(err error) error { return fmt.Errorf("giving up: %w", err) }}
			res, _ := startFollow(t, src, opts, FollowFuncs[*unstructured.Unstructured]{})
			if err := followResult(t, res); err == nil || !strings.Contains(err.Error(), "giving up: connection refused") {
				t.Fatalf("Follow = %v, want OnError's error", err)
			}
		})
	})
}

func TestFollowPages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "p2", nil, cm("a", "5"), cm("b", "6"))
		src.addList("", "", nil, cm("c", "7"))
		src.addWatch(nil).Error(gone())
		src.addList("30", "", nil, cm("a", "25"))
		log := &followLog{stopAt: "listed a@25"}
		res, _ := startFollow(t, src, FollowOptions{PageSize: 2}, log.funcs(true))
		if err := followResult(t, res); err != nil {
			t.Fatal(err)
		}
		want := []string{
			"page first=true last=false a@5 b@6", "page first=false last=true c@7", "listed a@5 b@6 c@7",
			"page first=true last=true a@25", "listed a@25",
		}
		if diff := cmp.Diff(want, log.got()); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		if first, next := src.listCalls[0], src.listCalls[1]; first.Limit != 2 || first.Continue != "" || next.Limit != 2 || next.Continue != "p2" {
			t.Errorf("list pages: %+v then %+v", first, next)
		}
	})

	t.Run("one request", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := newScriptedSource()
			src.addList("10", "", nil, cm("a", "5"))
			log := &followLog{stopAt: "listed a@5"}
			res, _ := startFollow(t, src, FollowOptions{PageSize: -1}, log.funcs(false))
			if err := followResult(t, res); err != nil {
				t.Fatal(err)
			}
			if l := src.listCalls[0]; l.Limit != 0 {
				t.Errorf("list limit %d, want none", l.Limit)
			}
		})
	})
}

func TestFollowFromResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		w := src.addWatch(nil)
		src.addList("50", "", nil, cm("a", "45"))
		src.addWatch(nil)
		log := &followLog{stopAt: "listed a@45"}
		opts := FollowOptions{ResourceVersion: "42", FailFast: true, ListOptions: metav1.ListOptions{TimeoutSeconds: ptr.To[int64](7)}}
		res, _ := startFollow(t, src, opts, log.funcs(false))
		src.waitCall(t, "watch") // no list first
		if o := src.lastWatch(); o.ResourceVersion != "42" || o.TimeoutSeconds == nil || *o.TimeoutSeconds != 7 {
			t.Fatalf("watch options = %+v, want from 42 for 7 s", o)
		}
		w.Modify(cm("a", "43"))
		w.Error(gone())
		if err := followResult(t, res); err != nil {
			t.Fatal(err)
		}
		want := []string{"MODIFIED a@43", "listed a@45"}
		if diff := cmp.Diff(want, log.got()); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})
}

// TestFollowFakeServer follows the in-memory fake server through watches
// it ends every second (TimeoutSeconds) and a gap longer than its history,
// on synctest's clock: every change comes once, in order, and the gap
// comes as a list.
func TestFollowFakeServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
		c := fake.NewClient()
		var mu sync.Mutex
		watches, down := 0, false
		c.Intercept(func(_ context.Context, a fake.Action) error {
			mu.Lock()
			defer mu.Unlock()
			if a.Verb != "watch" {
				return nil
			}
			watches++
			if down {
				return apierrors.NewServiceUnavailable("the server is restarting")
			}
			return nil
		})
		ri := c.Resource(cms).Namespace("ns")
		write := func(name, v string) {
			t.Helper()
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "namespace": "ns"}, "data": map[string]any{"v": v}}}
			if _, err := ri.Apply(context.Background(), name, obj, metav1.ApplyOptions{FieldManager: "test"}); err != nil {
				t.Fatal(err)
			}
		}
		write("a", "0")
		var (
			fmu   sync.Mutex // guards got and lists, written by Follow's funcs
			got   []string
			lists int
		)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			opts := FollowOptions{ListOptions: metav1.ListOptions{TimeoutSeconds: ptr.To[int64](1)}}
			done <- Follow(ctx, NewResourceSource(ri, SourceOptions{}), opts, FollowFuncs[*unstructured.Unstructured]{
				Listed: func(items []*unstructured.Unstructured) (bool, error) {
					fmu.Lock()
					defer fmu.Unlock()
					lists++
					got = append(got, "listed "+objects(items))
					return false, nil
				},
				Event: func(typ watch.EventType, obj *unstructured.Unstructured) (bool, error) {
					v, _, _ := unstructured.NestedString(obj.Object, "data", "v")
					fmu.Lock()
					defer fmu.Unlock()
					got = append(got, fmt.Sprintf("%s %s=%s", typ, obj.GetName(), v))
					return v == "last", nil
				},
			})
		}()
		synctest.Wait()
		want := []string{"listed a@" + c.Objects(cms)[0].GetResourceVersion()}
		// Changes across many watches, each ended by the server after 1 s.
		for i := range 10 {
			time.Sleep(300 * time.Millisecond)
			write("a", fmt.Sprint(i+1))
			want = append(want, fmt.Sprintf("MODIFIED a=%d", i+1))
		}
		synctest.Wait() // the last change is delivered before watches fail
		mu.Lock()
		if watches < 3 {
			t.Errorf("%d watches over 3 s of 1 s watches", watches)
		}
		down = true
		mu.Unlock()
		// While watches fail, more changes than the fake's history holds
		// (1000): the next watch is a 410, and Follow lists.
		time.Sleep(1100 * time.Millisecond) // the current watch ends
		for i := range 1001 {
			write("b", fmt.Sprint(i))
		}
		mu.Lock()
		down = false
		mu.Unlock()
		synctest.Wait()
		time.Sleep(time.Minute) // past any backoff
		fmu.Lock()
		if lists != 2 {
			t.Fatalf("%d lists, want a relist after the gap", lists)
		}
		fmu.Unlock()
		want = append(want, "listed a@"+c.Objects(cms)[0].GetResourceVersion()+" b@"+c.Objects(cms)[1].GetResourceVersion())
		write("a", "last")
		want = append(want, "MODIFIED a=last")
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		fmu.Lock()
		defer fmu.Unlock()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})
}
