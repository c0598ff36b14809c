package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/kdyn/kdyn/rest"
)

// TestDefaultDocumentBoundAgainstA65MiBAnswer streams a 65 MiB /apis (a
// JSON document that never finishes being valid) to a Client with the
// default bound (DefaultMaxDocumentBytes, 64 MiB). Discovery fails with a
// size-limit error, the client stops reading at the bound, and memory
// does not balloon: the allocations stay within a small multiple of the
// bound and nothing of the answer is retained afterwards. A second server
// that never stops sending shows that reading stops at the bound rather
// than at the end of the answer.
func TestDefaultDocumentBoundAgainstA65MiBAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 65 MiB")
	}
	api, err := os.ReadFile(filepath.Join("testdata", "aggregated", "api.json"))
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	for _, tt := range []struct {
		name  string
		total int64 // bytes the server offers; -1: no end
	}{
		{"65 MiB", 65 * mib},
		{"endless", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var written atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
				if r.URL.Path == "/api" {
					_, _ = w.Write(api)
					return
				}
				// `{"items":[` then `{},` forever: a valid prefix of an
				// APIGroupDiscoveryList, so only the size can stop it.
				chunk := []byte(strings.Repeat("{},", 64<<10/3))
				n, _ := w.Write([]byte(`{"kind":"APIGroupDiscoveryList","items":[`))
				written.Add(int64(n))
				for tt.total < 0 || written.Load() < tt.total {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil || r.Context().Err() != nil {
						return
					}
					if written.Load() > 2<<30 {
						return // a safety net: never stream more than 2 GiB
					}
				}
			}))
			defer srv.Close()
			rc, err := rest.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(rc, Options{}) // the default bound
			if err != nil {
				t.Fatal(err)
			}

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			// Sample the heap while discovery reads, for its peak.
			var peak atomic.Uint64
			stop := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				for {
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					if m.HeapAlloc > peak.Load() {
						peak.Store(m.HeapAlloc)
					}
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
			_, err = c.Snapshot(context.Background())
			close(stop)
			<-sampled
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "limit") || !strings.Contains(err.Error(), "67108864") {
				t.Fatalf("Snapshot = %v, want an error naming the 64 MiB (67108864-byte) limit", err)
			}
			srv.CloseClientConnections()
			allocated := after.TotalAlloc - before.TotalAlloc
			grew := peak.Load() - min(peak.Load(), before.HeapAlloc)
			t.Logf("the server wrote %d MiB; the client allocated %d MiB in all, the heap grew by at most %d MiB", written.Load()/mib, allocated/mib, grew/mib)
			// rest reads a bounded answer of unknown length into a buffer
			// that doubles up to the bound: 512 B + … + 32 MiB + 64 MiB+1
			// ≈ 128 MiB in all, with up to 32+64 MiB live during the last
			// copy (measured under -race: 192 MiB allocated, the heap up
			// by 128–160 MiB; a doubling bytes.Buffer, which grows once
			// more to hold the byte past the bound, took 512 and 320–416).
			// An unbounded read of the endless answer would reach the
			// server's 2 GiB safety net and allocate several GiB.
			if allocated > 10*DefaultMaxDocumentBytes {
				t.Errorf("discovery allocated %d MiB for a %d MiB bound", allocated/mib, DefaultMaxDocumentBytes/mib)
			}
			if grew > 6*DefaultMaxDocumentBytes {
				t.Errorf("the heap grew by %d MiB for a %d MiB bound", grew/mib, DefaultMaxDocumentBytes/mib)
			}
			if tt.total < 0 && written.Load() > DefaultMaxDocumentBytes+16*mib {
				t.Errorf("the client read %d MiB of an endless answer, past the %d MiB bound", written.Load()/mib, DefaultMaxDocumentBytes/mib)
			}
			runtime.GC()
			var idle runtime.MemStats
			runtime.ReadMemStats(&idle)
			if idle.HeapAlloc > before.HeapAlloc+16*mib {
				t.Errorf("after the refused answer the heap holds %d MiB more than before", (idle.HeapAlloc-before.HeapAlloc)/mib)
			}
		})
	}
}

// TestCacheDirOwnedByAnotherUserIsRefused: a cache directory that another
// user owns is not used, even with perfect permissions, and a poisoned
// document planted in it is not read: discovery asks the server, logs one
// warning naming the owner, and writes nothing there.
// (TestUnsafeCacheDirIsRefused covers a world-writable directory.)
//
// The directory is given away in two ways: with a fake owner (fileOwner
// reports another uid for the directory and what is in it), which runs as
// any user, and with os.Chown, which only root may do to give a file away
// and is skipped otherwise.
func TestCacheDirOwnedByAnotherUserIsRefused(t *testing.T) {
	other := otherUID()
	for _, tc := range []struct {
		name     string
		giveAway func(t *testing.T, dir string)
	}{
		{"fake owner", func(t *testing.T, dir string) { fakeOwners(t, map[string]int{dir: other}) }},
		{"chown", func(t *testing.T, dir string) {
			if os.Getuid() != 0 {
				t.Skip("os.Chown to another user needs root; the fake owner case checks the same rule as any user")
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range append(entries, nil) {
				p := dir
				if e != nil {
					p = filepath.Join(dir, e.Name())
				}
				if err := os.Chown(p, other, other); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			f := newFakeServer(t, true)
			// Plant a poisoned /apis in the cache: a group that the server
			// does not serve.
			seed, _ := newTestClient(t, f, Options{CacheDir: dir})
			if _, err := seed.Snapshot(context.Background()); err != nil {
				t.Fatal(err)
			}
			poison := &document{Path: "/apis", ContentType: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
				Body: json.RawMessage(`{"kind":"APIGroupDiscoveryList","items":[{"metadata":{"name":"poisoned.example"},"versions":[{"version":"v1","resources":[{"resource":"traps","scope":"Cluster","responseKind":{"kind":"Trap"},"verbs":["get"]}]}]}]}`)}
			(&docCache{dir: dir, mem: map[string]*document{}, log: logr.Discard()}).put(poison)
			before, _ := os.ReadDir(dir)
			tc.giveAway(t, dir)

			core, logs := observer.New(zapcore.InfoLevel)
			c, ct := newTestClient(t, f, Options{CacheDir: dir, Logger: zapr.NewLogger(zap.New(core))})
			s, err := c.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if g, _ := s.find(metricsGV); g != nil {
				t.Fatal("the snapshot has a group that failed discovery")
			}
			for _, g := range s.Groups {
				if g.Name == "poisoned.example" {
					t.Fatal("discovery read the poisoned document from a directory owned by another user")
				}
			}
			if ct.n.Load() != 2 {
				t.Errorf("discovery made %d requests, want 2: the cache must not answer", ct.n.Load())
			}
			warns := logs.FilterMessage("discovery disk cache disabled").All()
			if want := fmt.Sprintf("owned by uid %d", other); len(warns) != 1 || !strings.Contains(warns[0].ContextMap()["error"].(string), want) {
				t.Fatalf("warnings = %v, want one saying %q", logs.All(), want)
			}
			after, _ := os.ReadDir(dir)
			if len(after) != len(before) {
				t.Errorf("discovery wrote into a directory owned by another user: %d files before, %d after", len(before), len(after))
			}
		})
	}
}

// TestCacheDirOwnerRule: the cache directory and every directory above it
// must belong to the current user or to root; the first one that does not
// is named. Owners are faked, so this runs as any user.
func TestCacheDirOwnerRule(t *testing.T) {
	other := otherUID()
	base := t.TempDir()
	parent := filepath.Join(base, "parent")
	leaf := filepath.Join(parent, "cache")
	for _, tc := range []struct {
		name   string
		owners map[string]int
		want   string // in the error; "" for none
	}{
		{"all ours", nil, ""},
		{"parent root's", map[string]int{parent: 0}, ""},
		{"cache root's", map[string]int{leaf: 0}, ""},
		{"cache another user's", map[string]int{leaf: other}, fmt.Sprintf("cache directory %s is owned by uid %d, not by the current user (uid %d)", leaf, other, os.Getuid())},
		{"parent another user's", map[string]int{parent: other, leaf: os.Getuid()}, fmt.Sprintf("cache directory %s is owned by uid %d", parent, other)},
		{"base another user's, root's below", map[string]int{base: other, parent: 0}, fmt.Sprintf("cache directory %s is owned by uid %d", base, other)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(parent)
			if err := os.MkdirAll(leaf, 0o700); err != nil {
				t.Fatal(err)
			}
			fakeOwners(t, tc.owners)
			err := prepareCacheDir(leaf)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("prepareCacheDir: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("prepareCacheDir: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// otherUID is a uid that is neither root nor the current user.
func otherUID() int {
	if os.Getuid() == 65534 {
		return 65533
	}
	return 65534
}

// fakeOwners makes fileOwner report the given owner for each directory in
// owners and for everything below it (the deepest match wins), and the real
// owner elsewhere, until the test ends. Tests that call it must not run in
// parallel.
func fakeOwners(t *testing.T, owners map[string]int) {
	real := fileOwner
	t.Cleanup(func() { fileOwner = real })
	fileOwner = func(p string, fi os.FileInfo) (int, bool) {
		best, uid := -1, 0
		for d, u := range owners {
			if (p == d || strings.HasPrefix(p, d+string(filepath.Separator))) && len(d) > best {
				best, uid = len(d), u
			}
		}
		if best >= 0 {
			return uid, true
		}
		return real(p, fi)
	}
}
