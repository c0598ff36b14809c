package rest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// WatchInterface is apimachinery's watch.Interface, returned by watches.
type WatchInterface = watch.Interface

// ObjectDecoder decodes the JSON of one object, for a watch event or a list
// item.
type ObjectDecoder func(data []byte) (runtime.Object, error)

// watchFrame is one JSON watch event as the server sends it.
type watchFrame struct {
	Type   watch.EventType `json:"type"`
	Object json.RawMessage `json:"object"`
}

// streamWatcher decodes JSON watch frames from a response body into
// watch.Events. A frame that does not decode becomes one ERROR event
// carrying a *metav1.Status, and the stream ends. Stop closes the
// connection; the result channel is closed once the decoding goroutine has
// exited.
type streamWatcher struct {
	body   io.ReadCloser
	cancel func()
	decode ObjectDecoder
	result chan watch.Event
	done   chan struct{}
	once   sync.Once
}

func newStreamWatcher(body io.ReadCloser, cancel func(), decode ObjectDecoder) *streamWatcher {
	w := &streamWatcher{
		body:   body,
		cancel: cancel,
		decode: decode,
		result: make(chan watch.Event),
		done:   make(chan struct{}),
	}
	go w.run()
	return w
}

// NewWatchDecoder starts a watch.Interface over an already open watch
// response body; Stop closes body. It is exported for callers that open the
// stream themselves (fault-injection tests, custom transports).
func NewWatchDecoder(body io.ReadCloser, decode ObjectDecoder) WatchInterface {
	return newStreamWatcher(body, func() {}, decode)
}

// ResultChan returns the channel of events. It is closed when the stream
// ends or Stop is called.
func (w *streamWatcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch and closes the connection. It is safe to call more
// than once and from any goroutine.
func (w *streamWatcher) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.cancel()
		w.body.Close()
	})
}

func (w *streamWatcher) stopped() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (w *streamWatcher) run() {
	defer close(w.result)
	defer w.Stop()
	dec := json.NewDecoder(bufio.NewReaderSize(w.body, 32<<10))
	for {
		var f watchFrame
		if err := dec.Decode(&f); err != nil {
			if w.stopped() || isStreamEnd(err) {
				return
			}
			w.send(decodeErrorEvent(fmt.Errorf("unable to decode an event from the watch stream: %w", err)))
			return
		}
		ev, err := w.event(f)
		if err != nil {
			w.send(decodeErrorEvent(err))
			return
		}
		if !w.send(ev) {
			return
		}
	}
}

func (w *streamWatcher) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	}
}

func (w *streamWatcher) event(f watchFrame) (watch.Event, error) {
	switch f.Type {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
	case watch.Error:
		st := &metav1.Status{}
		if err := json.Unmarshal(f.Object, st); err != nil {
			return watch.Event{}, fmt.Errorf("unable to decode the ERROR event's Status from the watch stream: %w", err)
		}
		return watch.Event{Type: watch.Error, Object: st}, nil
	default:
		return watch.Event{}, fmt.Errorf("watch stream sent an event of unknown type %q", f.Type)
	}
	if len(f.Object) == 0 || string(f.Object) == "null" {
		return watch.Event{}, fmt.Errorf("watch stream sent a %s event without an object", f.Type)
	}
	obj, err := w.decode(f.Object)
	if err != nil {
		return watch.Event{}, fmt.Errorf("unable to decode the object of a %s event from the watch stream: %w", f.Type, err)
	}
	return watch.Event{Type: f.Type, Object: obj}, nil
}

// isStreamEnd reports errors that mean the server or the network ended the
// stream, rather than a malformed frame: the caller re-watches.
func isStreamEnd(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, http.ErrBodyReadAfterClose) {
		return true
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return !errors.As(err, &syn) && !errors.As(err, &typ)
}

func decodeErrorEvent(err error) watch.Event {
	return watch.Event{Type: watch.Error, Object: &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Code:     http.StatusInternalServerError,
		Reason:   metav1.StatusReasonInternalError,
		Message:  err.Error(),
	}}
}
