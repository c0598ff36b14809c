package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// recordingMetrics keeps what a Client reports, as "kind verb host code".
type recordingMetrics struct {
	mu  sync.Mutex
	got []string
}

func (m *recordingMetrics) add(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, s)
}

func (m *recordingMetrics) RequestDone(verb, host, code string, latency time.Duration) {
	if latency < 0 {
		m.add("negative latency")
	}
	m.add(fmt.Sprintf("done %s %s %s", verb, host, code))
}

func (m *recordingMetrics) RateLimited(verb, host string, wait time.Duration) {
	m.add(fmt.Sprintf("limited %s %s", verb, host))
}

func (m *recordingMetrics) Retried(verb, host, code string) {
	m.add(fmt.Sprintf("retried %s %s %s", verb, host, code))
}

// Every attempt is reported with its code, every pass through the rate
// limiter with its wait, every retry with the code that asked for it;
// watches are not rate limited.
func TestMetricsObserveEveryAttempt(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/busy" && calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
			return
		}
		fmt.Fprint(w, `{}`)
	}))
	defer srv.Close()
	m := &recordingMetrics{}
	c, err := NewForConfig(&Config{Host: srv.URL, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	c.sleep = func(context.Context, time.Duration) error { return nil }
	host := mustHost(t, srv.URL)
	ctx := t.Context()
	_ = c.Get().AbsPath("/busy").Do(ctx).Error()
	_ = c.Get().AbsPath("/missing").Do(ctx).Error()
	w, err := c.Get().AbsPath("/api/v1/configmaps").Param("watch", "true").Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	want := []string{
		"limited GET " + host, "done GET " + host + " 429", "retried GET " + host + " 429",
		"limited GET " + host, "done GET " + host + " 200",
		"limited GET " + host, "done GET " + host + " 404",
		"done GET " + host + " 200",
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Equal(m.got, want) {
		t.Fatalf("reported\n%q\nwant\n%q", m.got, want)
	}
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// A refused connection is not retried, as client-go does not retry it:
// nothing listens there. One attempt, no retry, and the error is the
// refusal (errors.Is ECONNREFUSED), not a context's deadline.
func TestRefusedConnectionIsNotRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there now
	m := &recordingMetrics{}
	c, err := NewForConfig(&Config{Host: addr, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get().AbsPath("/version").DoRaw(context.Background())
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("error %v, want a refused connection", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.got {
		if strings.HasPrefix(s, "retried") {
			t.Fatalf("a refused connection was retried: %q", m.got)
		}
	}
}
