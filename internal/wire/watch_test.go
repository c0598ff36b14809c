package wire

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

func decodeUnstructured(data []byte) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return u, nil
}

func collect(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	var out []watch.Event
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatal("watch did not end")
		}
	}
}

func TestWatchDecoding(t *testing.T) {
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"%s"}}`
	frame := func(typ, rv string) string {
		return `{"type":"` + typ + `","object":` + strings.Replace(cm, "%s", rv, 1) + "}\n"
	}
	tests := []struct {
		name      string
		stream    string
		wantTypes []watch.EventType
		lastErr   string
	}{
		{"normal", frame("ADDED", "1") + frame("MODIFIED", "2") + frame("DELETED", "3"),
			[]watch.EventType{watch.Added, watch.Modified, watch.Deleted}, ""},
		{"bookmark", frame("ADDED", "1") + `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n",
			[]watch.EventType{watch.Added, watch.Bookmark}, ""},
		{"server error event", frame("ADDED", "1") + `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}` + "\n",
			[]watch.EventType{watch.Added, watch.Error}, "too old resource version"},
		{"malformed frame", frame("ADDED", "1") + `{"type":"MODIFIED","object":{"kind": nope}}` + "\n" + frame("ADDED", "3"),
			[]watch.EventType{watch.Added, watch.Error}, "unable to decode an event from the watch stream"},
		{"unknown type", `{"type":"WHAT","object":{}}` + "\n", []watch.EventType{watch.Error}, `unknown type "WHAT"`},
		{"object does not decode", `{"type":"ADDED","object":[1,2]}` + "\n", []watch.EventType{watch.Error}, "unable to decode the object of a ADDED event"},
		{"missing object", `{"type":"ADDED"}` + "\n", []watch.EventType{watch.Error}, "without an object"},
		{"cut mid-frame", frame("ADDED", "1") + `{"type":"MODIFIED","obj`, []watch.EventType{watch.Added}, ""},
		{"empty", "", nil, ""},
	}
	modes := map[string]func(string) watch.Interface{
		"bytes": func(s string) watch.Interface {
			return newBytesWatch(io.NopCloser(strings.NewReader(s)), decodeUnstructured)
		},
		"maps": func(s string) watch.Interface { return newUnstructuredWatch(io.NopCloser(strings.NewReader(s))) },
	}
	for mode, newWatcher := range modes {
		for _, tt := range tests {
			for _, read := range []string{"channel", "pull"} {
				t.Run(mode+"/"+read+"/"+tt.name, func(t *testing.T) {
					w := newWatcher(tt.stream)
					var evs []watch.Event
					if read == "pull" {
						evs = pull(t, w)
					} else {
						evs = collect(t, w)
					}
					checkDecoded(t, evs, tt.wantTypes, tt.lastErr)
				})
			}
		}
	}
}

// pull reads w's events with NextEvent until it reports the end.
func pull(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	r, ok := w.(EventReader)
	if !ok {
		t.Fatalf("%T is not an EventReader", w)
	}
	var out []watch.Event
	for {
		ev, ok := r.NextEvent()
		if !ok {
			break
		}
		out = append(out, ev)
	}
	if _, ok := r.NextEvent(); ok {
		t.Fatal("NextEvent delivered after reporting the end")
	}
	return out
}

func checkDecoded(t *testing.T, evs []watch.Event, wantTypes []watch.EventType, lastErr string) {
	t.Helper()
	var types []watch.EventType
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if len(types) != len(wantTypes) {
		t.Fatalf("events %v, want %v", types, wantTypes)
	}
	for i := range types {
		if types[i] != wantTypes[i] {
			t.Fatalf("events %v, want %v", types, wantTypes)
		}
	}
	if lastErr != "" {
		st, ok := evs[len(evs)-1].Object.(*metav1.Status)
		if !ok {
			t.Fatalf("last event object is %T, want *metav1.Status", evs[len(evs)-1].Object)
		}
		if !strings.Contains(st.Message, lastErr) {
			t.Fatalf("status message %q does not contain %q", st.Message, lastErr)
		}
	}
	if len(evs) > 0 && evs[0].Type == watch.Added {
		if u, ok := evs[0].Object.(*unstructured.Unstructured); !ok || u.GetName() != "a" {
			t.Fatalf("first object = %#v", evs[0].Object)
		}
	}
}

func TestFramerSplitsChunkedAndPrettyFrames(t *testing.T) {
	stream := "  {\"type\":\"ADDED\",\n \"object\": {\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":\"" + strings.Repeat("x", 200000) + "\"}}}\n" +
		"{\"type\":\"DELETED\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"b\"}}}"
	for _, chunk := range []int{1, 7, 4096, 1 << 20} {
		w := newUnstructuredWatch(io.NopCloser(&chunkReader{s: stream, n: chunk}))
		evs := collect(t, w)
		if len(evs) != 2 || evs[0].Type != watch.Added || evs[1].Type != watch.Deleted {
			t.Fatalf("chunk %d: %v", chunk, evs)
		}
		if u := evs[0].Object.(*unstructured.Unstructured); len(u.Object["data"].(map[string]any)["k"].(string)) != 200000 {
			t.Fatalf("chunk %d: large value truncated", chunk)
		}
	}
}

type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := min(c.n, len(p), len(c.s))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// stuckBody is a body whose Close does not end a pending Read.
type stuckBody struct{ io.Reader }

func (stuckBody) Close() error { return nil }

// The decoders over a caller's body decode ahead from the start, and Stop
// ends a NextEvent even when closing the body does not end the read.
func TestCallerBodyDecodersReadAheadAndStopWithoutTheBody(t *testing.T) {
	for name, start := range map[string]func(io.ReadCloser) watch.Interface{
		"bytes":    func(b io.ReadCloser) watch.Interface { return newBytesWatch(b, decodeUnstructured) },
		"maps":     newUnstructuredWatch,
		"protobuf": func(b io.ReadCloser) watch.Interface { return newProtobufWatch(b, decodeUnstructured) },
	} {
		t.Run(name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			w := start(stuckBody{pr})
			// Nobody has asked for an event yet: the decoder reads anyway.
			wrote := make(chan error, 1)
			go func() { _, err := pw.Write([]byte("{")); wrote <- err }()
			select {
			case err := <-wrote:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the decoder did not read before ResultChan or NextEvent was called")
			}
			stopEndsNextEvent(t, w)
		})
	}
}

// After Stop, NextEvent of a decoder feeding its channel hands out none of
// the events still buffered there.
func TestNextEventAfterStopDropsBufferedEvents(t *testing.T) {
	var stream strings.Builder
	for i := range 5 {
		fmt.Fprintf(&stream, `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%d"}}}`+"\n", i)
	}
	w := newUnstructuredWatch(io.NopCloser(strings.NewReader(stream.String())))
	// The body is read to its end, and the decoder stops there.
	waitFull := time.Now().Add(5 * time.Second)
	for len(w.ResultChan()) < 5 && time.Now().Before(waitFull) {
		time.Sleep(time.Millisecond)
	}
	w.Stop()
	for range 6 {
		if ev, ok := w.(EventReader).NextEvent(); ok {
			t.Fatalf("NextEvent after Stop returned %v", ev.Type)
		}
	}
}

// The watches over a caller's body in these tests decode ahead, as
// ReadAhead makes them.

func newBytesWatch(b io.ReadCloser, decode ObjectDecoder) watch.Interface {
	return ReadAhead(NewJSONWatch(b, nil, decode))
}

func newUnstructuredWatch(b io.ReadCloser) watch.Interface {
	return ReadAhead(NewMapWatch(b, nil, MapOptions{}))
}

func newProtobufWatch(b io.ReadCloser, decode ObjectDecoder) watch.Interface {
	return ReadAhead(NewProtobufWatch(b, nil, decode, nil))
}

// stopEndsNextEvent checks that Stop from another goroutine ends a
// NextEvent waiting on a silent stream, without an event.
func stopEndsNextEvent(t *testing.T, w watch.Interface) {
	t.Helper()
	ended := make(chan bool)
	go func() {
		_, ok := w.(EventReader).NextEvent()
		ended <- ok
	}()
	time.Sleep(50 * time.Millisecond) // let it wait on the silent stream
	w.Stop()
	select {
	case ok := <-ended:
		if ok {
			t.Fatal("NextEvent delivered an event after Stop")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("NextEvent did not return after Stop")
	}
}

// oneEventWatch is a watch over a test server's stream that sends one
// ADDED event and then stays silent; closed is closed when the client has
// closed the connection.
func oneEventWatch(t *testing.T) (w EventReader, closed <-chan struct{}) {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}}` + "\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(done)
	}))
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return NewMapWatch(resp.Body, nil, MapOptions{}), done
}

// expectEnded checks that a stopped watch closed its connection (the
// server saw closed) and that its result channel is closed.
func expectEnded(t *testing.T, w watch.Interface, closed <-chan struct{}) {
	t.Helper()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("server did not see the connection close")
	}
	for range w.ResultChan() {
		t.Fatal("result channel delivered after Stop")
	}
}

// A NextEvent waiting on a silent stream returns when another goroutine
// calls Stop, and the connection is closed; the result channel is never
// started.
func TestNextEventEndsOnStop(t *testing.T) {
	w, closed := oneEventWatch(t)
	r := w
	if ev, ok := r.NextEvent(); !ok || ev.Type != watch.Added {
		t.Fatalf("first event %v, %v", ev.Type, ok)
	}
	stopEndsNextEvent(t, w)
	expectEnded(t, w, closed) // the result channel, never started, is closed at once
}

// The stop-then-drain idiom while another goroutine waits in NextEvent:
// both end, and only one goroutine ever decodes (run under -race).
func TestStopThenDrainWhileNextEventWaits(t *testing.T) {
	w, closed := oneEventWatch(t)
	r := w
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			if _, ok := r.NextEvent(); !ok {
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	w.Stop()
	for range w.ResultChan() {
		t.Error("the channel of a watch read with NextEvent delivered an event")
	}
	<-ended
	expectEnded(t, w, closed)
}
