package informer

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// The recovery rules, as transitions of the state machine alone: no
// source, no goroutine, no clock step.
func TestTransitions(t *testing.T) {
	boom := errors.New("boom")
	live := watch.NewFake()
	tests := []struct {
		name      string
		streaming bool // streaming lists allowed
		off       bool // and given up earlier
		from      state
		o         outcome
		want      state
		wantOff   bool
	}{
		{name: "a list syncs, then watches from its resourceVersion",
			from: listing{}, o: outcome{rv: "10"}, want: watching{rv: "10"}},
		{name: "a failed list backs off, then lists again",
			from: listing{consistent: true}, o: outcome{err: boom}, want: backingOff{again: listing{consistent: true}}},
		{name: "a 429 carries its Retry-After into the backoff",
			from: listing{}, o: outcome{err: boom, retryAfter: 2 * time.Second}, want: backingOff{again: listing{}, retryAfter: 2 * time.Second}},
		{name: "a streaming list goes on as the watch",
			streaming: true, from: streaming{}, o: outcome{rv: "7", live: live}, want: watching{rv: "7", live: live}},
		{name: "a one-shot streaming list watches on from its bookmark",
			streaming: true, from: streaming{}, o: outcome{rv: "7"}, want: watching{rv: "7"}},
		{name: "a server without streaming lists: list and watch, for good",
			streaming: true, from: streaming{consistent: true}, o: outcome{err: errStreamingUnsupported, unsupported: true},
			want: listing{consistent: true}, wantOff: true},
		{name: "a failed streaming list backs off, then streams again",
			streaming: true, from: streaming{}, o: outcome{err: boom}, want: backingOff{again: streaming{}}},
		{name: "a watch that ended resumes from the last resourceVersion",
			streaming: true, from: watching{rv: "7"}, o: outcome{rv: "12"}, want: watching{rv: "12"}},
		{name: "a 410 streams again, consistent, without a resourceVersion",
			streaming: true, from: watching{rv: "7"}, o: outcome{rv: "9", gone: true}, want: streaming{consistent: true}},
		{name: "a 410 lists again, consistent, when streaming is off",
			from: watching{rv: "7"}, o: outcome{gone: true}, want: listing{consistent: true}},
		{name: "a 410 lists again once streaming was given up",
			streaming: true, off: true, from: watching{rv: "7"}, o: outcome{gone: true}, want: listing{consistent: true}, wantOff: true},
		{name: "a failed watch backs off, then watches from the last resourceVersion it saw",
			from: watching{rv: "7", live: live}, o: outcome{rv: "8", err: boom}, want: backingOff{again: watching{rv: "8"}}},
		{name: "a backoff returns to the state that failed",
			from: backingOff{again: watching{rv: "8"}}, o: outcome{}, want: watching{rv: "8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReflector[*unstructured.Unstructured](nil, nil, reflectorOptions{streaming: tt.streaming})
			r.streamingOff = tt.off
			got := r.next(tt.from, tt.o)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(listing{}, streaming{}, watching{}, backingOff{}), cmp.Comparer(func(a, b watch.Interface) bool { return a == b })); diff != "" {
				t.Errorf("next(%v) (-want +got):\n%s", tt.from, diff)
			}
			if r.streamingOff != tt.wantOff {
				t.Errorf("streaming given up = %v, want %v", r.streamingOff, tt.wantOff)
			}
		})
	}
}

// The first state syncs: streaming when allowed, else listing; neither
// consistent (the watch cache may answer).
func TestStartState(t *testing.T) {
	for _, streamingOn := range []bool{false, true} {
		r := newReflector[*unstructured.Unstructured](nil, nil, reflectorOptions{streaming: streamingOn})
		var want state = listing{}
		if streamingOn {
			want = streaming{}
		}
		if got := r.sync(false); got != want {
			t.Errorf("streaming=%v: start %v, want %v", streamingOn, got, want)
		}
	}
}

// A success starts the backoff sequence over; a failure does not.
func TestTransitionsResetTheBackoffOnSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newReflector[*unstructured.Unstructured](nil, nil, reflectorOptions{})
		r.backoff.jitter = func() float64 { return 0 }
		first := r.backoff.delay()
		if second := r.backoff.delay(); second <= first {
			t.Fatalf("delays %v then %v: not growing", first, second)
		}
		r.next(listing{}, outcome{err: errors.New("boom")})
		if d := r.backoff.delay(); d <= first {
			t.Fatalf("a failure reset the backoff: %v", d)
		}
		r.next(listing{}, outcome{rv: "1"})
		if d := r.backoff.delay(); d != first {
			t.Fatalf("after a successful list the backoff is %v, want %v", d, first)
		}
		r.backoff.delay()
		r.next(watching{rv: "1"}, outcome{rv: "2", healthy: true})
		if d := r.backoff.delay(); d != first {
			t.Fatalf("after a healthy watch the backoff is %v, want %v", d, first)
		}
	})
}
