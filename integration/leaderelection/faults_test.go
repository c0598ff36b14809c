package leaderelection_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/leaderelection"
	"github.com/kdyn/kdyn/rest"
)

// running is an elector running in this process, with the times its
// OnStartedLeading was called and saw its context cancelled.
type running struct {
	e       *leaderelection.Elector
	started chan time.Time
	stopped chan time.Time
	done    chan struct{} // closed when Run has returned, with err set
	err     error
	cancel  context.CancelFunc
}

func runElector(t *testing.T, cfg *rest.Config, lease, id string) *running {
	t.Helper()
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &running{started: make(chan time.Time, 1), stopped: make(chan time.Time, 1), done: make(chan struct{})}
	r.e, err = leaderelection.New(client, leaderelection.Config{
		Namespace: "default", Name: lease, Identity: id,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.Callbacks{OnStartedLeading: func(ctx context.Context) {
			r.started <- time.Now()
			<-ctx.Done()
			r.stopped <- time.Now()
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		r.err = r.e.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			t.Errorf("%s: Run did not return", id)
		}
	})
	return r
}

func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("no %s within %v", what, d)
		var zero T
		return zero
	}
}

// TestFailingRenewalsStopTheLeaderFirst puts the fault proxy between the
// leader and the server and breaks its renewals in four ways; another
// candidate, talking to the server directly, takes over once the lease
// expires. The leader's context must be cancelled within RenewDeadline of
// the fault, and before the other candidate starts leading.
func TestFailingRenewalsStopTheLeaderFirst(t *testing.T) {
	env := testenv.Shared(t)
	for _, tc := range []struct {
		name   string
		inject func(p *faultproxy.Proxy, leasePath string)
		check  func(err error) error // of the leader's Run error, beyond ErrLeadershipLost
	}{
		{
			name: "500 for every PUT of the lease",
			inject: func(p *faultproxy.Proxy, path string) {
				p.Respond5xx(http.StatusInternalServerError, -1, faultproxy.Method(http.MethodPut, faultproxy.PathPrefix(path)))
			},
			check: func(err error) error {
				if !apierrors.IsInternalError(err) {
					return errors.New("does not wrap the server's 500 StatusError")
				}
				return nil
			},
		},
		{
			name: "connection cut before every PUT of the lease",
			inject: func(p *faultproxy.Proxy, path string) {
				p.CutBeforeForward(-1, faultproxy.Method(http.MethodPut, faultproxy.PathPrefix(path)))
			},
		},
		{
			name:   "server unreachable",
			inject: func(p *faultproxy.Proxy, _ string) { p.Down(time.Minute) },
		},
		{
			name:   "every response stalled",
			inject: func(p *faultproxy.Proxy, _ string) { p.Stall(true) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := faultproxy.NewForTest(t, faultproxy.Options{Upstream: env.Host(), UpstreamCAData: env.CAData()})
			lease := fmt.Sprintf("le-faults-%d", rand.IntN(1_000_000))
			// sentAt: when the leader sent each renewTime it wrote, on
			// this process's monotonic clock
			var mu sync.Mutex
			sentAt := map[int64]time.Time{}
			acfg := p.RESTConfig(env.RESTConfig(testenv.Admin))
			acfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
				return testenv.OnLeaseWrites(rt, func(renewTime, sent time.Time) {
					mu.Lock()
					defer mu.Unlock()
					if _, seen := sentAt[renewTime.UnixNano()]; !seen { // a retry is sent again
						sentAt[renewTime.UnixNano()] = sent
					}
				})
			}
			a := runElector(t, acfg, lease, "behind-proxy")
			within(t, a.started, 20*time.Second, "start of the leader behind the proxy")
			b := runElector(t, env.RESTConfig(testenv.Admin), lease, "direct")
			waitUntil(t, "the direct candidate to see the leader", func() bool { return b.e.GetLeader() == "behind-proxy" })
			time.Sleep(3 * retryPeriod) // a few renewals, seen by b

			faultAt := time.Now()
			tc.inject(p, "/apis/coordination.k8s.io/v1/namespaces/default/leases/"+lease)
			aStop := within(t, a.stopped, renewDeadline+2*time.Second, "stop of the leader")
			// The lease still holds the leader's last renewal (with stalled
			// answers it may be one the leader never heard back from): the
			// other candidate cannot have taken it yet.
			holder, lastRenew := readLease(t, env, lease)
			if holder != "behind-proxy" {
				t.Fatalf("lease held by %q when the leader stopped", holder)
			}
			mu.Lock()
			lastSent, noted := sentAt[lastRenew.UnixNano()]
			mu.Unlock()
			if !noted {
				t.Fatalf("the lease holds renewTime %s, which the leader did not send", lastRenew.Format(time.RFC3339Nano))
			}
			bStart := within(t, b.started, leaseDuration+retryPeriod+2*time.Second, "takeover")
			within(t, a.done, renewDeadline+5*time.Second, "return of the leader's Run")
			err := a.err

			stoppedAfter := aStop.Sub(faultAt)
			sinceRenew := aStop.Sub(lastSent) // monotonic: the wall clock may jump
			margin := bStart.Sub(aStop)
			t.Logf("leader stopped %v after the fault, %v after its last successful renewal started; the other started %v after that",
				stoppedAfter, sinceRenew, margin)
			// The watchdog fires at the deadline; allow for the callback's
			// goroutine to be scheduled.
			if sinceRenew > renewDeadline+100*time.Millisecond {
				t.Errorf("leader stopped %v after its last successful renewal started, more than RenewDeadline %v", sinceRenew, renewDeadline)
			}
			if margin <= 0 {
				t.Errorf("two leaders at once: the other candidate started %v before the leader stopped", -margin)
			}
			if !errors.Is(err, leaderelection.ErrLeadershipLost) {
				t.Errorf("leader's Run: %v, want ErrLeadershipLost", err)
			} else if tc.check != nil {
				if cerr := tc.check(err); cerr != nil {
					t.Errorf("leader's Run error %q %v", err, cerr)
				}
			}
			if !b.e.IsLeader() || b.e.GetLeader() != "direct" {
				t.Errorf("direct candidate: IsLeader %v, GetLeader %q", b.e.IsLeader(), b.e.GetLeader())
			}
		})
	}
}

// readLease returns the lease's holder and renewTime, read directly.
func readLease(t *testing.T, env *testenv.Env, name string) (string, time.Time) {
	t.Helper()
	client, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	u, err := client.Resource(leaseGVR).Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity")
	renew, _, _ := unstructured.NestedString(u.Object, "spec", "renewTime")
	at, err := time.Parse(time.RFC3339Nano, renew)
	if err != nil {
		t.Fatalf("renewTime %q: %v", renew, err)
	}
	return holder, at
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
