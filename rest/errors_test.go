package rest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestErrorDecoding(t *testing.T) {
	tests := []struct {
		name        string
		code        int
		ctype       string
		body        string
		check       func(error) bool
		wantMessage string
	}{
		{"status body not found", 404, "application/json",
			`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}`,
			apierrors.IsNotFound, `configmaps "x" not found`},
		{"status body conflict", 409, "application/json",
			`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the object has been modified","reason":"Conflict","code":409}`,
			apierrors.IsConflict, "the object has been modified"},
		{"status body already exists", 409, "application/json",
			`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"exists","reason":"AlreadyExists","code":409}`,
			apierrors.IsAlreadyExists, "exists"},
		{"status gone", 410, "application/json",
			`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version","reason":"Expired","code":410}`,
			apierrors.IsResourceExpired, "too old"},
		{"non-status body forbidden", 403, "text/plain", "forbidden by proxy", apierrors.IsForbidden, "forbidden by proxy"},
		{"non-status body 500", 500, "text/html", "<html>boom</html>", apierrors.IsInternalError, "boom"},
		{"empty body unauthorized", 401, "", "", apierrors.IsUnauthorized, "provide credentials"},
		{"empty body 404", 404, "", "", apierrors.IsNotFound, "could not find the requested resource"},
		{"empty body 429", 429, "", "", apierrors.IsTooManyRequests, ""},
		{"empty body 410", 410, "", "", apierrors.IsGone, ""},
		{"json but not status", 400, "application/json", `{"error":"bad"}`, apierrors.IsBadRequest, `{"error":"bad"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				w.WriteHeader(tt.code)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c := newTestClient(t, srv.URL)
			err := c.Get().Version("v1").Namespace("default").Resource("configmaps").Name("x").Do(context.Background()).Error()
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *StatusError", err, err)
			}
			if !tt.check(err) {
				t.Errorf("classification failed for %v (reason %q code %d)", err, se.ErrStatus.Reason, se.ErrStatus.Code)
			}
			if int(se.ErrStatus.Code) != tt.code {
				t.Errorf("code = %d, want %d", se.ErrStatus.Code, tt.code)
			}
			if !strings.Contains(err.Error(), tt.wantMessage) {
				t.Errorf("message %q does not contain %q", err.Error(), tt.wantMessage)
			}
		})
	}
}

func TestErrorBodyTruncated(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(502)
		_, _ = w.Write([]byte(strings.Repeat("x", 10000)))
	}))
	defer srv.Close()
	err := newTestClient(t, srv.URL).Get().AbsPath("/x").Do(context.Background()).Error()
	if err == nil || len(err.Error()) > 2000 {
		t.Fatalf("error not truncated: %d bytes", len(err.Error()))
	}
}

// recordingSleep replaces Client.sleep so retry delays are observed, not
// waited for.
type recordingSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *recordingSleep) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func TestRetryAfter429ThenOK(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	rs := &recordingSleep{}
	c.sleep = rs.sleep
	body, err := c.Post().AbsPath("/x").Body([]byte(`{"a":1}`)).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != `{"ok":true}` || calls.Load() != 2 {
		t.Fatalf("body %q after %d calls", body, calls.Load())
	}
	if len(rs.delays) != 1 || rs.delays[0] != 3*time.Second {
		t.Fatalf("delays = %v, want [3s]", rs.delays)
	}
}

func TestRetryAfterRealDelay(t *testing.T) {
	var first time.Time
	var second time.Time
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		second = time.Now()
	}))
	defer srv.Close()
	if err := newTestClient(t, srv.URL).Get().AbsPath("/x").Do(context.Background()).Error(); err != nil {
		t.Fatal(err)
	}
	if gap := second.Sub(first); gap < 900*time.Millisecond {
		t.Fatalf("retried after %v, want about 1s", gap)
	}
}

func TestRetryAfterGivesUpAfterMax(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	c.sleep = (&recordingSleep{}).sleep
	err := c.Get().AbsPath("/x").Do(context.Background()).Error()
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("err = %v", err)
	}
	if got := calls.Load(); got != maxRetries+1 {
		t.Fatalf("calls = %d, want %d", got, maxRetries+1)
	}
	if d, ok := apierrors.SuggestsClientDelay(err); !ok || d != 1 {
		t.Errorf("SuggestsClientDelay = %d, %v", d, ok)
	}
}

func Test5xxWithoutRetryAfterIsNotRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	err := newTestClient(t, srv.URL).Get().AbsPath("/x").Do(context.Background()).Error()
	if !apierrors.IsInternalError(err) || calls.Load() != 1 {
		t.Fatalf("err = %v after %d calls", err, calls.Load())
	}
}

// resetOnce is a listener-level server: its first connection is closed
// without an answer, later ones get 200.
func resetOnceServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew && conns.Add(1) == 1 {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			c.Close()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, &conns
}

func TestConnectionResetRetriedForGet(t *testing.T) {
	url, conns := resetOnceServer(t)
	c := newTestClient(t, url)
	c.sleep = (&recordingSleep{}).sleep
	body, err := c.Get().AbsPath("/x").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != "ok" || conns.Load() < 2 {
		t.Fatalf("body %q over %d connections", body, conns.Load())
	}
}

func TestConnectionResetNotRetriedForPost(t *testing.T) {
	url, conns := resetOnceServer(t)
	c := newTestClient(t, url)
	c.sleep = (&recordingSleep{}).sleep
	err := c.Post().AbsPath("/x").Body([]byte("{}")).Do(context.Background()).Error()
	if err == nil {
		t.Fatal("POST after a connection reset succeeded; it must not be retried")
	}
	if conns.Load() != 1 {
		t.Fatalf("connections = %d, want 1", conns.Load())
	}
}

func TestRetryRespectsContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := newTestClient(t, srv.URL).Get().AbsPath("/x").Do(ctx).Error()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("context was not respected while waiting for Retry-After")
	}
}

func TestMaxResponseBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("a", 2048)))
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	if _, err := c.Get().AbsPath("/x").MaxResponseBytes(1024).DoRaw(context.Background()); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err = %v, want a size-limit error", err)
	}
	if b, err := c.Get().AbsPath("/x").MaxResponseBytes(4096).DoRaw(context.Background()); err != nil || len(b) != 2048 {
		t.Fatalf("within limit: %d bytes, %v", len(b), err)
	}
}

// The bound holds at its edge with and without a Content-Length, and an
// answer of unknown length is read into a buffer no larger than the bound
// (plus the one byte that tells it was passed).
func TestMaxResponseBytesAtTheEdge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		body := []byte(strings.Repeat("a", n))
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		} else if n > 0 {
			_, _ = w.Write(body[:1])
			w.(http.Flusher).Flush() // no Content-Length: chunked
			body = body[1:]
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	for _, chunked := range []string{"", "1"} {
		for _, tc := range []struct {
			n  int
			ok bool
		}{{0, true}, {4096, true}, {4097, false}, {1 << 20, false}} {
			b, err := c.Get().AbsPath("/x").Param("n", strconv.Itoa(tc.n)).Param("chunked", chunked).MaxResponseBytes(4096).DoRaw(context.Background())
			if tc.ok && (err != nil || len(b) != tc.n) {
				t.Errorf("chunked=%q, %d bytes under a 4096-byte bound: got %d, %v", chunked, tc.n, len(b), err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "4096-byte limit")) {
				t.Errorf("chunked=%q, %d bytes under a 4096-byte bound: err = %v, want the limit named", chunked, tc.n, err)
			}
		}
	}
	buf, err := readAtMost(strings.NewReader(strings.Repeat("a", 1<<20)), make([]byte, 0, 512), 100_001)
	if err != nil || len(buf) != 100_001 || cap(buf) != 100_001 {
		t.Fatalf("readAtMost of an answer past the limit = %d bytes (capacity %d), %v; want 100001 in a buffer of 100001", len(buf), cap(buf), err)
	}
}

func TestStatusSuccessOnErrorCodeStillError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	defer srv.Close()
	err := newTestClient(t, srv.URL).Get().AbsPath("/x").Do(context.Background()).Error()
	if !apierrors.IsNotFound(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestConnectionResetRetriedForServerSideApply(t *testing.T) {
	url, conns := resetOnceServer(t)
	c := newTestClient(t, url)
	c.sleep = (&recordingSleep{}).sleep
	if err := c.Patch(ContentTypeApplyPatch).AbsPath("/x").Body([]byte("{}")).Do(context.Background()).Error(); err != nil {
		t.Fatalf("apply after a connection reset: %v", err)
	}
	if conns.Load() < 2 {
		t.Fatalf("connections = %d, want a retry", conns.Load())
	}
	url2, conns2 := resetOnceServer(t)
	c2 := newTestClient(t, url2)
	c2.sleep = (&recordingSleep{}).sleep
	if err := c2.Patch(ContentTypeMergePatch).AbsPath("/x").Body([]byte("{}")).Do(context.Background()).Error(); err == nil || conns2.Load() != 1 {
		t.Fatalf("a merge patch was retried: %v over %d connections", err, conns2.Load())
	}
}

// Only 200–206 are successes, as in client-go: a 207 Multi-Status (or any
// later 2xx) is a *apierrors.StatusError with its code.
func TestSuccessIs200To206(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	rc, err := NewForConfig(&Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{200, 201, 206} {
		if err := rc.Get().AbsPath("/" + strconv.Itoa(code)).Do(t.Context()).Error(); err != nil {
			t.Errorf("%d: %v", code, err)
		}
	}
	for _, code := range []int{207, 299} {
		err := rc.Get().AbsPath("/" + strconv.Itoa(code)).Do(t.Context()).Error()
		var se *apierrors.StatusError
		if !errors.As(err, &se) || se.Status().Code != int32(code) {
			t.Errorf("%d: error %v, want a StatusError with code %d", code, err, code)
		}
	}
}
