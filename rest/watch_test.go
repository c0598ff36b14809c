package rest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Stop closes the watch's connection (the server sees it close) and
// releases the request; the event pump itself is tested in internal/wire.
func TestWatchStopClosesConnection(t *testing.T) {
	closed := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}}` + "\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(closed)
	}))
	t.Cleanup(srv.Close)
	w, err := newTestClient(t, srv.URL).Get().Version("v1").Resource("configmaps").Param("watch", "true").Watch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Added {
		t.Fatalf("first event %v", ev.Type)
	}
	w.Stop()
	w.Stop() // idempotent
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("server did not see the connection close")
	}
}

func TestWatchErrorStatusBeforeStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(403)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","message":"no","code":403}`))
	}))
	defer srv.Close()
	_, err := newTestClient(t, srv.URL).Get().Version("v1").Resource("secrets").Param("watch", "true").Watch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no") {
		t.Fatalf("err = %v", err)
	}
}
