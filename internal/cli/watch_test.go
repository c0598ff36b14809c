package cli

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestWatchTableListAligned: get -w prints the objects it lists first as
// one table, its columns aligned, as kubectl does; only the later events
// are printed (and flushed) one row at a time.
func TestWatchTableListAligned(t *testing.T) {
	srv := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_, _ = w.Write([]byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},` +
			`"columnDefinitions":[{"name":"Name","type":"string"},{"name":"Data","type":"integer"}],"rows":[` +
			`{"cells":["a-long-name",1],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a-long-name","namespace":"default","resourceVersion":"3"}}},` +
			`{"cells":["b",22],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"b","namespace":"default","resourceVersion":"4"}}}]}`))
	})
	var out, errb lockedBuffer
	f := newFactory(&globalFlags{kubeconfig: writeKubeconfig(t, srv.URL), cacheDir: t.TempDir()}, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- runGet(ctx, f, &getOptions{watch: true, chunkSize: 500}, []string{"cm"}) }()
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\n") < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("get -w: %v (stderr %q)", err, errb.String())
	}
	want := "NAME          DATA\na-long-name   1\nb             22\n"
	if got := out.String(); got != want {
		t.Errorf("get -w printed\n%s\nwant\n%s", got, want)
	}
}

// TestWatchEventsObjectOutputs: --output-watch-events works with every
// object output: -o name prints the object's name, as kubectl's does, and
// custom-columns see the event ({.type}, {.object...}); both failed to
// decode the event as an object without a kind.
func TestWatchEventsObjectOutputs(t *testing.T) {
	srv := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_, _ = w.Write([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a","namespace":"default","resourceVersion":"3"}}]}`))
	})
	for _, tc := range []struct {
		output string
		want   string
	}{
		{"name", "configmap/a\n"},
		{"custom-columns=EVENT:.type,NAME:.object.metadata.name", "EVENT   NAME\nADDED   a\n"},
		{"jsonl", `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","resourceVersion":"3"}}}` + "\n"},
	} {
		var out, errb lockedBuffer
		f := newFactory(&globalFlags{kubeconfig: writeKubeconfig(t, srv.URL), cacheDir: t.TempDir()}, IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- runGet(ctx, f, &getOptions{output: tc.output, watch: true, outputWatchEvents: true, chunkSize: 500}, []string{"cm"})
		}()
		deadline := time.Now().Add(5 * time.Second)
		for out.String() != tc.want && len(done) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("-o %s: get -w --output-watch-events: %v", tc.output, err)
		}
		if got := out.String(); got != tc.want {
			t.Errorf("-o %s printed %q, want %q", tc.output, got, tc.want)
		}
	}
}
