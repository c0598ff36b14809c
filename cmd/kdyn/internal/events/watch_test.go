package events

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

// newEvent is a core/v1 Event as the server sends it in a watch.
func newEvent(name, rv, typ, reason string, series int) string {
	s := ""
	if series > 0 {
		s = fmt.Sprintf(`,"series":{"count":%d,"lastObservedTime":"2026-12-04T14:38:30.000000Z"}`, series)
	}
	return fmt.Sprintf(`{"kind":"Event","apiVersion":"v1","metadata":{"name":%q,"namespace":"evt","uid":"uid-%s","resourceVersion":%q,"creationTimestamp":"2026-12-04T14:38:00Z","managedFields":[{"manager":"m"}]},`+
		`"involvedObject":{"kind":"Pod","namespace":"evt","name":"web","apiVersion":"v1"},"reason":%q,"message":"m %s","source":{},"firstTimestamp":null,"lastTimestamp":null,`+
		`"type":%q,"eventTime":"2026-12-04T14:38:00.000000Z"%s,"action":"A","reportingComponent":"c","reportingInstance":"i"}`, name, name, rv, reason, name, typ, s)
}

// TestWatch: the list sorted, then what the watch brings (added and
// modified, of the --types asked for), a resume after a 410 that prints
// only what it had not printed, and no end when the server ends a watch.
func TestWatch(t *testing.T) {
	defer SetNow(time.Date(2026, 12, 4, 14, 38, 35, 0, time.UTC))()
	list, err := os.ReadFile(filepath.Join("testdata", "list.json"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		watches []string // the resourceVersion of each watch
		lists   int
	)
	stop := func() {} // ends the current run
	frame := func(w http.ResponseWriter, typ, obj string) {
		fmt.Fprintf(w, "{\"type\":%q,\"object\":%s}\n", typ, obj)
		w.(http.Flusher).Flush()
	}
	srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		q := r.URL.Query()
		mu.Lock()
		defer mu.Unlock()
		if q.Get("watch") != "true" {
			lists++
			if lists == 1 {
				_, _ = w.Write(list)
				return
			}
			// The relist: the first list, a Warning the watch missed,
			// and the one it printed already.
			more := `,` + newEvent("late", "300", "Warning", "Missed", 0) + `,` + newEvent("web.5", "242", "Warning", "Failing", 2) + `]}`
			b := bytes.Replace(list, []byte(`"resourceVersion":"246"},"items"`), []byte(`"resourceVersion":"300"},"items"`), 1)
			_, _ = w.Write(append(bytes.TrimSuffix(bytes.TrimSpace(b), []byte("]}")), more...))
			return
		}
		if q.Get("allowWatchBookmarks") != "true" {
			t.Errorf("watch without bookmarks: %s", r.URL)
		}
		watches = append(watches, q.Get("resourceVersion"))
		switch len(watches) {
		case 1:
			frame(w, "ADDED", newEvent("web.5", "240", "Warning", "Failing", 0))
			frame(w, "ADDED", newEvent("fine", "241", "Normal", "Fine", 0)) // not a Warning
			frame(w, "MODIFIED", newEvent("web.5", "242", "Warning", "Failing", 2))
			frame(w, "DELETED", newEvent("db.1", "243", "Normal", "Gone", 0))
			frame(w, "BOOKMARK", `{"kind":"Event","apiVersion":"v1","metadata":{"resourceVersion":"250"}}`)
			// The server ends the watch: kdyn resumes from 250.
		case 2:
			frame(w, "ERROR", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version","reason":"Expired","code":410}`)
		default:
			stop() // the test has seen everything
		}
	})
	var out, errOut clitest.LockedBuffer
	flags := &cli.GlobalFlags{Kubeconfig: clitest.WriteKubeconfig(t, srv.URL), CacheDir: t.TempDir(), Namespace: "evt"}
	f := cli.NewFactory(flags, cli.IOStreams{Out: &out, ErrOut: &errOut})
	for _, format := range []string{"", "yaml"} {
		t.Run("-o="+format, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			mu.Lock()
			watches, lists, stop = nil, 0, cancel
			mu.Unlock()
			out = clitest.LockedBuffer{}
			o := &options{watch: true, types: []string{"warning"}, output: format, chunkSize: 500}
			done := make(chan error, 1)
			go func() { done <- run(ctx, f, o) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the watch did not end")
			}
			mu.Lock()
			if got := strings.Join(watches, ","); got != "246,250,300" {
				t.Errorf("watches from resourceVersions %s, want 246 (the list), 250 (the bookmark), 300 (the relist)", got)
			}
			mu.Unlock()
			name := "watch.golden"
			if format != "" {
				name = "watch." + format + ".golden"
			}
			clitest.AssertGolden(t, name, out.String())
		})
	}
	if errOut.String() != "" {
		t.Errorf("stderr %q", errOut.String())
	}
}
