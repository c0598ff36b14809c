package restmapper

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/rest"
)

// handlerTransport answers requests with an http.Handler, in memory.
type handlerTransport func(http.ResponseWriter, *http.Request)

func (h handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	h(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// fuzzMaxArg bounds one fuzzed argument line. Suggestions for a miss cost
// an edit distance per known name, so longer inputs only slow the fuzzer.
const fuzzMaxArg = 512

// newFuzzMapper serves the captured aggregated discovery documents (loaded
// as server_test.go's fakeServer loads them) plus two CRD groups with
// categories, in memory, and returns a Mapper over them.
func newFuzzMapper(f *testing.F) *Mapper {
	f.Helper()
	fs := &fakeServer{}
	var err error
	fs.api, err = os.ReadFile(filepath.Join("..", "discovery", "testdata", "aggregated", "api.json"))
	if err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "discovery", "testdata", "aggregated", "apis.json"))
	if err != nil {
		f.Fatal(err)
	}
	if err := json.Unmarshal(b, &fs.apis); err != nil {
		f.Fatal(err)
	}
	fs.addGroup("fuzz.kdyn.io", []string{"v1", "v1alpha1"}, "sprockets", "Sprocket", true, "all", "fuzzing")
	fs.addGroup("fuzz-other.kdyn.io", []string{"v2"}, "sprockets", "Sprocket", false, "fuzzing")
	// fakeServer.serve encodes /apis on every request; a miss refreshes
	// discovery, so serve fixed bytes instead (the documents never change).
	apis, err := json.Marshal(fs.apis)
	if err != nil {
		f.Fatal(err)
	}
	bodies := map[string][]byte{"/api": fs.api, "/apis": apis}
	etags := map[string]string{}
	for p, b := range bodies {
		sum := sha256.Sum256(b)
		etags[p] = `"` + hex.EncodeToString(sum[:]) + `"`
	}
	serve := func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("ETag", etags[r.URL.Path])
		w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		if r.Header.Get("If-None-Match") == etags[r.URL.Path] {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write(body)
	}
	// The handler is called in memory: a miss refreshes discovery, and a
	// loopback connection per refresh would only slow the fuzzer.
	rc, err := rest.NewForConfig(&rest.Config{Host: "http://discovery.fuzz", QPS: -1, Transport: handlerTransport(serve)})
	if err != nil {
		f.Fatal(err)
	}
	dc, err := discovery.New(rc, discovery.Options{})
	if err != nil {
		f.Fatal(err)
	}
	m, err := New(dc, Options{Warn: func(string) {}, NegativeCacheTTL: time.Minute})
	if err != nil {
		f.Fatal(err)
	}
	return m
}

// FuzzResolveArgs gives arbitrary strings to ResolveTypes and, split on
// spaces, to ResolveArgs, over a Mapper built from captured discovery
// documents. Each call must return matches or an error, never both and
// never neither, and never panic; a match must name a served resource
// consistently (GVR and GVK agree with its discovery entry, TYPE/NAME and
// name arguments carry a name without "/").
//
// Seeds are in testdata/fuzz/FuzzResolveArgs.
func FuzzResolveArgs(f *testing.F) {
	for _, s := range []string{"deploy", "pods,svc web api", "deploy/web svc/x", "hpa.autoscal", "all", "widgets.v1beta1.example.com", "Deployment.v1.apps", ",", "a/b/c"} {
		f.Add(s)
	}
	m := newFuzzMapper(f)
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > fuzzMaxArg {
			t.Skip("argument longer than the fuzz bound")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()

		ms, err := m.ResolveTypes(ctx, line)
		checkMatches(t, "ResolveTypes", []string{line}, ms, err, false)

		args := strings.Split(line, " ")
		ms, err = m.ResolveArgs(ctx, args)
		checkMatches(t, "ResolveArgs", args, ms, err, true)
	})
}

func checkMatches(t *testing.T, fn string, args []string, ms []Match, err error, withNames bool) {
	t.Helper()
	if err != nil {
		if len(ms) != 0 {
			t.Fatalf("%s(%q) returned %d matches and the error %v", fn, args, len(ms), err)
		}
		if err.Error() == "" {
			t.Fatalf("%s(%q) returned an error with no message", fn, args)
		}
		return
	}
	if len(ms) == 0 {
		t.Fatalf("%s(%q) returned neither a match nor an error", fn, args)
	}
	named := withNames && (strings.Contains(args[0], "/") || len(args) > 1)
	for _, mt := range ms {
		if mt.Resource == nil {
			t.Fatalf("%s(%q): match %+v has no discovery resource", fn, args, mt)
		}
		if mt.GVR.Resource == "" || mt.GVR.Version == "" || mt.GVK.Kind == "" {
			t.Fatalf("%s(%q): incomplete match %v %v", fn, args, mt.GVR, mt.GVK)
		}
		if mt.GVR != mt.Resource.GVR() || mt.GVK != mt.Resource.GVK() || mt.Namespaced != mt.Resource.Namespaced {
			t.Fatalf("%s(%q): match %v/%v disagrees with its discovery entry %v/%v", fn, args, mt.GVR, mt.GVK, mt.Resource.GVR(), mt.Resource.GVK())
		}
		if named {
			if mt.Name == "" || strings.Contains(mt.Name, "/") {
				t.Fatalf("%s(%q): match %v has the name %q", fn, args, mt.GVR, mt.Name)
			}
		} else if mt.Name != "" {
			t.Fatalf("%s(%q): match %v has a name %q but no name was given", fn, args, mt.GVR, mt.Name)
		}
	}
}
