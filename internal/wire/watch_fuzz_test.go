package wire

import (
	"errors"
	"io"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Bounds of one fuzz input, so that every run is quick.
const (
	fuzzMaxStream = 64 << 10
	fuzzMaxChunks = 256
	// fuzzWatchDeadline is how long a stream may take to end once its last
	// byte was written (or Stop was called); far above what a run needs.
	fuzzWatchDeadline = 10 * time.Second
)

// FuzzWatchDecoder feeds arbitrary byte streams, cut into chunks whose sizes
// come from chunks, to NewWatchDecoder and newUnstructuredWatch. With
// hang, the stream stays open after its last byte and the watch is stopped
// instead. Whatever the bytes:
//   - the result channel is closed (the stream ends; Stop ends a stream the
//     server keeps open);
//   - every event has a known type and a non-nil object, an ERROR event
//     carries a *metav1.Status, and the unstructured decoder's other events
//     carry an *unstructured.Unstructured with a non-nil map;
//   - nothing panics.
//
// Seeds are in testdata/fuzz/FuzzWatchDecoder.
func FuzzWatchDecoder(f *testing.F) {
	cm := `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"1"}}}`
	f.Add([]byte(cm+"\n"+cm), []byte{3, 0, 200}, false)
	f.Add([]byte(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}}`), []byte{}, true)
	f.Fuzz(func(t *testing.T, data, chunks []byte, hang bool) {
		if len(data) > fuzzMaxStream || len(chunks) > fuzzMaxChunks {
			t.Skip("input larger than the fuzz bounds")
		}
		runWatchFuzz(t, data, chunks, hang, func(body io.ReadCloser) watch.Interface {
			return newBytesWatch(body, fuzzDecodeUnstructured)
		}, false)
		runWatchFuzz(t, data, chunks, hang, newUnstructuredWatch, true)
		// A watch read with NextEvent (the decoding in the
		// caller's goroutine, as informers read).
		runWatchFuzz(t, data, chunks, hang, func(body io.ReadCloser) watch.Interface {
			return pulled(NewMapWatch(body, nil, MapOptions{}))
		}, true)
	})
}

// pulledWatch reads an EventReader with NextEvent in a goroutine of its
// own and hands the events over on a channel, for the fuzz target's loop.
type pulledWatch struct {
	EventReader
	ch chan watch.Event
}

func pulled(r EventReader) watch.Interface {
	w := &pulledWatch{EventReader: r, ch: make(chan watch.Event)}
	go func() {
		defer close(w.ch)
		for {
			ev, ok := r.NextEvent()
			if !ok {
				return
			}
			w.ch <- ev
		}
	}()
	return w
}

func (w *pulledWatch) ResultChan() <-chan watch.Event { return w.ch }

// runWatchFuzz writes data through a pipe in chunks, collects the events
// and checks them.
func runWatchFuzz(t *testing.T, data, chunks []byte, hang bool, start func(io.ReadCloser) watch.Interface, unstructuredObjects bool) {
	pr, pw := io.Pipe()
	written := make(chan struct{})
	go func() {
		defer close(written)
		rest := data
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(chunks) > 0 {
				n = min(n, 1+int(chunks[i%len(chunks)]))
			}
			if _, err := pw.Write(rest[:n]); err != nil {
				return // the decoder stopped reading
			}
			rest = rest[n:]
		}
		if !hang {
			pw.Close()
		}
	}()
	w := start(pr)
	defer w.Stop()
	deadline := time.NewTimer(fuzzWatchDeadline)
	defer deadline.Stop()
	events := 0
	writtenCh := written
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				// The writer must not be left blocked on a pipe nobody reads.
				<-written
				return
			}
			events++
			checkWatchEvent(t, ev, unstructuredObjects)
		case <-writtenCh:
			writtenCh = nil
			if hang {
				// The server keeps the connection open: Stop must end it.
				w.Stop()
			}
			deadline.Reset(fuzzWatchDeadline)
		case <-deadline.C:
			t.Fatalf("the watch did not end within %v after %d events (hang=%v)", fuzzWatchDeadline, events, hang)
		}
	}
}

func checkWatchEvent(t *testing.T, ev watch.Event, unstructuredObjects bool) {
	t.Helper()
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error:
	default:
		t.Fatalf("event of unknown type %q", ev.Type)
	}
	if ev.Object == nil || reflect.ValueOf(ev.Object).IsNil() {
		t.Fatalf("%s event with a nil object", ev.Type)
	}
	if ev.Type == watch.Error {
		if _, ok := ev.Object.(*metav1.Status); !ok {
			t.Fatalf("ERROR event carries a %T, want *metav1.Status", ev.Object)
		}
		return
	}
	if unstructuredObjects {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || u.Object == nil {
			t.Fatalf("%s event carries %T %v, want an *unstructured.Unstructured with an object", ev.Type, ev.Object, ev.Object)
		}
	}
}

// TestWatchDecoderEndsOnReadError is the fuzz target's contract for a
// transport that fails mid-stream instead of ending: the channel closes.
func TestWatchDecoderEndsOnReadError(t *testing.T) {
	for _, unstr := range []bool{false, true} {
		r := io.MultiReader(
			&onceReader{b: []byte(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}}{"type":"MOD`)},
			errReader{errors.New("connection reset by peer")},
		)
		var w watch.Interface
		if unstr {
			w = newUnstructuredWatch(io.NopCloser(r))
		} else {
			w = newBytesWatch(io.NopCloser(r), fuzzDecodeUnstructured)
		}
		evs := collect(t, w)
		if len(evs) == 0 || evs[0].Type != watch.Added {
			t.Fatalf("unstructured=%v: events %v, want the ADDED event first", unstr, evs)
		}
		for _, ev := range evs {
			checkWatchEvent(t, ev, unstr)
		}
	}
}

func fuzzDecodeUnstructured(data []byte) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return u, nil
}

type onceReader struct{ b []byte }

func (r *onceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
