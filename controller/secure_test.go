package controller

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kdyn/kdyn/dynamic/fake"
)

// fakeReviewer answers from a table by token and counts its reviews.
type fakeReviewer struct {
	answers map[string]decision
	err     error
	calls   atomic.Int32
}

func (f *fakeReviewer) review(_ context.Context, token, path string) (decision, error) {
	f.calls.Add(1)
	if f.err != nil {
		return decision{}, f.err
	}
	if path != "/metrics" {
		return decision{status: http.StatusForbidden, why: "wrong path " + path}, nil
	}
	d, ok := f.answers[token]
	if !ok {
		return decision{status: http.StatusUnauthorized, why: "unknown token"}, nil
	}
	return d, nil
}

// The filter lets an authorized token through, refuses a missing or
// unauthenticated one with 401 and an unauthorized one with 403, says
// 500 when the reviews fail, and reuses an answer for the same token.
func TestAuthorizingFilter(t *testing.T) {
	rv := &fakeReviewer{answers: map[string]decision{
		"good": {status: http.StatusOK},
		"weak": {status: http.StatusForbidden, why: `user "weak" may not get /metrics`},
	}}
	h := newAuthorizing(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "the metrics") }), rv, time.Minute)
	get := func(auth string) (int, string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for _, tc := range []struct {
		auth string
		code int
		body string
	}{
		{"", http.StatusUnauthorized, "a bearer token is required"},
		{"Basic dXNlcjpwdw==", http.StatusUnauthorized, "a bearer token is required"},
		{"Bearer nope", http.StatusUnauthorized, "unknown token"},
		{"Bearer weak", http.StatusForbidden, `may not get /metrics`},
		{"Bearer good", http.StatusOK, "the metrics"},
	} {
		code, body := get(tc.auth)
		if code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("%q: %d %q, want %d with %q", tc.auth, code, body, tc.code, tc.body)
		}
		if strings.Contains(body, "good") || strings.Contains(body, "nope") {
			t.Errorf("%q: the answer repeats the token: %q", tc.auth, body)
		}
	}
	before := rv.calls.Load()
	get("Bearer good")
	get("Bearer weak")
	if rv.calls.Load() != before {
		t.Errorf("answers were not reused: %d more reviews", rv.calls.Load()-before)
	}
	failing := newAuthorizing(http.NotFoundHandler(), &fakeReviewer{err: errors.New("the API server is down")}, 0)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer x")
	failing.ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("a failed review: %d", rec.Code)
	}
}

// With SecureMetrics the manager serves TLS (a self-signed certificate),
// keeps the probes open and guards /metrics.
func TestManagerSecureMetrics(t *testing.T) {
	m, err := NewManager(ManagerOptions{BindAddress: "127.0.0.1:0", MetricsHandler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "m") }),
		SecureMetrics: &SecureMetrics{Client: fake.NewClient()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	base := "https://" + m.Addr(t.Context()).String()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // a self-signed certificate
	resp, err := client.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("/healthz over TLS: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	resp, err = client.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/metrics without a token: %d", resp.StatusCode)
	}
	// The server speaks TLS only: plain HTTP gets a 400 from the TLS
	// layer, never the metrics.
	if r, err := http.Get("http://" + m.Addr(t.Context()).String() + "/metrics"); err == nil {
		r.Body.Close()
		if r.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP got the metrics")
		}
	}
	if _, err := NewManager(ManagerOptions{SecureMetrics: &SecureMetrics{}}); err == nil {
		t.Error("SecureMetrics without a client was accepted")
	}
}
