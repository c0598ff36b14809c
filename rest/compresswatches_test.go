package rest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// Config.CompressWatches: by default a watch asks for an uncompressed
// stream; with CompressWatches the transport asks for gzip (as client-go's
// watches do) and inflates it, so the events decode either way; a
// request's own Accept-Encoding and DisableCompression still win.
func TestConfigCompressWatches(t *testing.T) {
	var mu sync.Mutex
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = r.Header.Get("Accept-Encoding")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		var out io.Writer = w
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			defer gz.Close()
			out = gz
		}
		_, _ = io.WriteString(out, `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}}`+"\n")
	}))
	defer srv.Close()
	tests := []struct {
		name         string
		cfg          Config
		uncompressed bool // the request asks for identity itself
		wantAsked    string
	}{
		{"default", Config{}, false, "identity"},
		{"compress watches", Config{CompressWatches: true}, false, "gzip"},
		{"compress watches, request asks uncompressed", Config{CompressWatches: true}, true, "identity"},
		{"compress watches, compression disabled", Config{CompressWatches: true, DisableCompression: true}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Host = srv.URL
			c, err := NewForConfig(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			req := c.Get().Version("v1").Resource("configmaps").Param("watch", "true")
			if tt.uncompressed {
				req = req.SetHeader("Accept-Encoding", "identity")
			}
			w, err := req.Watch(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var evs []watch.Event
			for ev := range w.ResultChan() {
				evs = append(evs, ev)
			}
			if len(evs) != 1 || evs[0].Object.(*unstructured.Unstructured).GetName() != "a" {
				t.Errorf("events %+v", evs)
			}
			mu.Lock()
			defer mu.Unlock()
			if asked != tt.wantAsked {
				t.Errorf("Accept-Encoding %q, want %q", asked, tt.wantAsked)
			}
		})
	}
}
