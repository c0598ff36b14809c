package get

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

// TestWatchTableListAligned: get -w prints the objects it lists first as
// one table, its columns aligned, as kubectl does; only the later events
// are printed (and flushed) one row at a time.
func TestWatchTableListAligned(t *testing.T) {
	srv := clitest.APIServer(t, listThenQuietWatch(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},`+
		`"columnDefinitions":[{"name":"Name","type":"string"},{"name":"Data","type":"integer"}],"rows":[`+
		`{"cells":["a-long-name",1],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a-long-name","namespace":"default","resourceVersion":"3"}}},`+
		`{"cells":["b",22],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"b","namespace":"default","resourceVersion":"4"}}}]}`))
	r := runGetWatch(t, srv, &getOptions{watch: true, chunkSize: 500}, []string{"cm"}, func(out string) bool { return strings.Count(out, "\n") >= 3 })
	if r.err != nil {
		t.Fatalf("get -w: %v (stderr %q)", r.err, r.stderr)
	}
	want := "NAME          DATA\na-long-name   1\nb             22\n"
	if got := r.stdout; got != want {
		t.Errorf("get -w printed\n%s\nwant\n%s", got, want)
	}
}

// TestWatchEventsObjectOutputs: --output-watch-events works with every
// object output: -o name prints the object's name, as kubectl's does, and
// custom-columns see the event ({.type}, {.object...}); both failed to
// decode the event as an object without a kind.
func TestWatchEventsObjectOutputs(t *testing.T) {
	srv := clitest.APIServer(t, listThenQuietWatch(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a","namespace":"default","resourceVersion":"3"}}]}`))
	for _, tc := range []struct {
		output string
		want   string
	}{
		{"name", "configmap/a\n"},
		{"custom-columns=EVENT:.type,NAME:.object.metadata.name", "EVENT   NAME\nADDED   a\n"},
		{"jsonl", `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","resourceVersion":"3"}}}` + "\n"},
	} {
		r := runGetWatch(t, srv, &getOptions{output: tc.output, watch: true, outputWatchEvents: true, chunkSize: 500}, []string{"cm"}, func(out string) bool { return out == tc.want })
		if r.err != nil {
			t.Errorf("-o %s: get -w --output-watch-events: %v", tc.output, r.err)
		}
		if got := r.stdout; got != tc.want {
			t.Errorf("-o %s printed %q, want %q", tc.output, got, tc.want)
		}
	}
}

// listThenQuietWatch answers a list with list and a watch with a stream
// that stays open without an event.
func listThenQuietWatch(list string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_, _ = w.Write([]byte(list))
	}
}

// getWatchRun is what runGetWatch saw.
type getWatchRun struct {
	stdout, stderr string
	err            error // the command's, once cancelled (or its own end)
	early          bool  // the command ended before printed held
}

// runGetWatch runs get (with -w in o) against srv until printed holds for
// its output, the command ends, or 5 s pass; then it cancels the command
// and waits for it.
func runGetWatch(t *testing.T, srv *httptest.Server, o *getOptions, args []string, printed func(stdout string) bool) getWatchRun {
	t.Helper()
	var out, errb clitest.LockedBuffer
	f := cli.NewFactory(&cli.GlobalFlags{Kubeconfig: clitest.WriteKubeconfig(t, srv.URL), CacheDir: t.TempDir()}, cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runGet(ctx, f, o, args) }()
	deadline := time.Now().Add(5 * time.Second)
	var r getWatchRun
	for !printed(out.String()) && time.Now().Before(deadline) {
		if len(done) > 0 {
			r.early = true
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	r.err = <-done
	r.stdout, r.stderr = out.String(), errb.String()
	return r
}
