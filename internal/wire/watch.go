package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/internal/fastjson"
)

// watchFrame is one JSON watch event as the server sends it.
type watchFrame struct {
	Type   watch.EventType `json:"type"`
	Object json.RawMessage `json:"object"`
}

// EventReader is a watch whose events can also be read one at a time in
// the caller's goroutine. Every watch this package returns implements it,
// and so does every watch kdyn's rest and dynamic packages return: the
// informer type-asserts a watch.Interface to use it.
//
// NextEvent returns the next event, or false once the stream has ended,
// after the ERROR event of a frame that did not decode, or once Stop was
// called (a call already decoding may still return its event). Stop may be
// called from another goroutine to end a NextEvent that is waiting. One
// goroutine at a time may call NextEvent; call Stop when done, or read
// until false, to release the connection.
//
// A watch decodes in the goroutine that calls NextEvent, which is cheaper
// when events come one at a time (no hand-off between goroutines per
// event): informers read them so. ResultChan, called first, starts a
// goroutine that decodes ahead into the channel instead, which overlaps
// decoding with the consumer's work; NextEvent then takes from the
// channel. After NextEvent, ResultChan returns a channel that is closed
// when the watch is stopped. ReadAhead starts that goroutine at once, for
// a body whose reads closing it may not end.
type EventReader interface {
	watch.Interface
	NextEvent() (watch.Event, bool)
}

// How an eventPump is read, fixed by the first NextEvent or ResultChan.
const (
	readUnset int32 = iota
	readPull        // NextEvent decodes in the caller's goroutine
	readPush        // run decodes into result; NextEvent receives from it
)

// eventPump is what both watchers (JSON and protobuf) share: Stop, and the
// two ways of reading (see EventReader). Only one goroutine decodes: the
// caller of NextEvent, or run.
type eventPump struct {
	body   io.ReadCloser
	cancel func()
	// read reads and decodes one event; false at the end of the stream.
	// It sets ended when it returns a decode failure's ERROR event, so
	// that the event is the stream's last.
	read   func() (watch.Event, bool)
	ended  bool // touched only by the decoding goroutine
	mode   atomic.Int32
	result chan watch.Event
	// done is closed by Stop; released once the connection is let go, by
	// Stop or at the end of the stream.
	done, released    chan struct{}
	stopOnce, relOnce sync.Once
	start             sync.Once
}

func newEventPump(body io.ReadCloser, cancel func()) eventPump {
	return eventPump{body: body, cancel: cancel, result: make(chan watch.Event, eventBuffer),
		done: make(chan struct{}), released: make(chan struct{})}
}

// NextEvent implements EventReader.
func (p *eventPump) NextEvent() (watch.Event, bool) {
	if p.mode.CompareAndSwap(readUnset, readPull) || p.mode.Load() == readPull {
		return p.next()
	}
	// Fed by run. Stop ends the wait even when run is stuck in a read
	// that closing the body does not interrupt; after Stop, buffered
	// events are not handed out.
	if p.stopped() {
		return watch.Event{}, false
	}
	select {
	case ev, ok := <-p.result:
		return ev, ok
	case <-p.done:
		return watch.Event{}, false
	}
}

// next reads and decodes one event in the calling goroutine.
func (p *eventPump) next() (watch.Event, bool) {
	if !p.ended && !p.stopped() {
		if ev, ok := p.read(); ok {
			return ev, true
		}
	}
	// The end: the connection is released whichever side ended it.
	p.ended = true
	p.release()
	return watch.Event{}, false
}

// ResultChan returns the channel of events, starting the goroutine that
// decodes into it unless the watch is read with NextEvent. The channel is
// closed when the stream ends or Stop is called; it buffers up to 64
// decoded events, which may still be received after Stop.
func (p *eventPump) ResultChan() <-chan watch.Event {
	p.start.Do(func() {
		if p.mode.CompareAndSwap(readUnset, readPush) {
			go p.run()
			return
		}
		// Read with NextEvent: nothing is sent; the channel closes when
		// the watch is stopped or its stream has ended.
		go func() {
			<-p.released
			close(p.result)
		}()
	})
	return p.result
}

// Stop ends the watch and closes the connection. It is safe to call more
// than once and from any goroutine.
func (p *eventPump) Stop() {
	p.stopOnce.Do(func() { close(p.done) })
	p.release()
}

// release lets the connection go.
func (p *eventPump) release() {
	p.relOnce.Do(func() {
		p.cancel()
		p.body.Close()
		close(p.released)
	})
}

func (p *eventPump) stopped() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *eventPump) run() {
	defer close(p.result)
	for {
		ev, ok := p.next()
		if !ok {
			return
		}
		select {
		case p.result <- ev:
		case <-p.done:
			return
		}
	}
}

// failed ends the stream with the ERROR event of err.
func (p *eventPump) failed(err error) (watch.Event, bool) {
	p.ended = true
	p.release() // nothing more is read
	return decodeErrorEvent(err), true
}

// streamWatcher decodes JSON watch frames from a response body into
// watch.Events. A frame that does not decode becomes one ERROR event
// carrying a *metav1.Status, and the stream ends.
type streamWatcher struct {
	eventPump
	fr *framer
	// Exactly one of decode (object bytes → object) and decodeMap (the
	// whole frame decoded once into maps, then the object's map converted)
	// is set.
	decode    ObjectDecoder
	decodeMap MapDecoder
	wantRaw   bool // map mode: hand decodeMap each object's text
	// peek, when set, sees each frame first and may answer the event
	// itself, skipping the decode.
	peek   FramePeek
	omitMF bool // map mode: leave the object's metadata.managedFields out
}

func newStreamWatcher(body io.ReadCloser, cancel func(), decode ObjectDecoder) *streamWatcher {
	if cancel == nil {
		cancel = func() {}
	}
	w := &streamWatcher{eventPump: newEventPump(body, cancel), decode: decode}
	// Frames are cut from a buffer that starts small and grows to the
	// largest frame; reads go through a burstReader (see burst.go), so an
	// idle watch holds small buffers only.
	w.fr = &framer{r: newBurstReader(body), buf: make([]byte, smallReadBuffer)}
	w.read = w.readEvent
	return w
}

// ObjectDecoder decodes the JSON of one object, for a watch event or a list
// item (or its protobuf envelope, for protobuf watches). data is only valid
// during the call: copy what the object keeps.
type ObjectDecoder func(data []byte) (runtime.Object, error)

// FramePeek looks at a raw watch frame before it is decoded and may return
// the event for it (typically a stub for an object the caller already
// has), in which case the frame is not decoded.
type FramePeek func(frame []byte) (watch.Event, bool)

// MapDecoder turns the decoded map of a watch event's object into the
// event's object. text is the object's JSON as the server sent it (less
// metadata.managedFields when they are omitted), in a new slice the decoder
// may keep, when MapOptions.Text asks for it and it could be cut out; nil
// otherwise.
type MapDecoder func(obj map[string]any, text []byte) (runtime.Object, error)

// MapOptions say how a map-mode watch (NewMapWatch) decodes its frames.
type MapOptions struct {
	// Decode turns each object's map into the event's object; nil makes
	// it an *unstructured.Unstructured.
	Decode MapDecoder
	// Text hands Decode each object's text too, for callers that keep
	// objects as bytes: cutting the text out of the frame costs a copy,
	// where encoding the decoded object again costs a walk of every value.
	Text bool
	// OmitManagedFields leaves metadata.managedFields out of each object:
	// the field is checked for syntax but not decoded, which saves much of
	// the decoding of each event for callers that drop it anyway.
	OmitManagedFields bool
	// Peek, when set, sees each frame first and may answer it without a
	// decode.
	Peek FramePeek
}

// unstructuredMap is the MapDecoder of *unstructured.Unstructured.
func unstructuredMap(obj map[string]any, _ []byte) (runtime.Object, error) {
	return &unstructured.Unstructured{Object: obj}, nil
}

// NewJSONWatch returns a watch over an open JSON watch stream whose event
// objects decode decodes from their bytes. cancel, when not nil, is called
// once the watch lets the stream go (Stop, or the stream's end), with
// body's Close.
func NewJSONWatch(body io.ReadCloser, cancel func(), decode ObjectDecoder) EventReader {
	return newStreamWatcher(body, cancel, decode)
}

// NewMapWatch returns a watch over an open JSON watch stream that decodes
// each frame once, straight into maps (see MapOptions). cancel is as for
// NewJSONWatch.
func NewMapWatch(body io.ReadCloser, cancel func(), o MapOptions) EventReader {
	w := newStreamWatcher(body, cancel, nil)
	w.decodeMap, w.wantRaw, w.omitMF, w.peek = o.Decode, o.Text, o.OmitManagedFields, o.Peek
	if w.decodeMap == nil {
		w.decodeMap = unstructuredMap
	}
	return w
}

// ReadAhead starts w decoding into its channel at once, for a watch over a
// body whose pending read closing it may not end (a caller's own stream):
// a consumer can then stop waiting without it. It returns w.
func ReadAhead(w watch.Interface) watch.Interface {
	w.ResultChan()
	return w
}

// readEvent reads and decodes the next frame.
func (w *streamWatcher) readEvent() (watch.Event, bool) {
	frame, err := w.fr.next()
	if err != nil {
		if w.stopped() || isStreamEnd(err) {
			return watch.Event{}, false
		}
		return w.failed(fmt.Errorf("unable to decode an event from the watch stream: %w", err))
	}
	if w.peek != nil {
		if ev, ok := w.peek(frame); ok {
			return ev, true
		}
	}
	var ev watch.Event
	if w.decodeMap != nil {
		ev, err = mapEvent(frame, w.decodeMap, w.omitMF, w.wantRaw)
	} else {
		ev, err = w.bytesEvent(frame)
	}
	if err != nil {
		return w.failed(err)
	}
	return ev, true
}

// bytesEvent decodes a frame by handing the object's JSON to w.decode.
func (w *streamWatcher) bytesEvent(frame []byte) (watch.Event, error) {
	var f watchFrame
	if err := json.Unmarshal(frame, &f); err != nil {
		return watch.Event{}, fmt.Errorf("unable to decode an event from the watch stream: %w", err)
	}
	if err := checkEventType(f.Type); err != nil {
		return watch.Event{}, err
	}
	if f.Type == watch.Error {
		st := &metav1.Status{}
		if err := json.Unmarshal(f.Object, st); err != nil {
			return watch.Event{}, fmt.Errorf("unable to decode the ERROR event's Status from the watch stream: %w", err)
		}
		return watch.Event{Type: watch.Error, Object: st}, nil
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

func checkEventType(t watch.EventType) error {
	switch t {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error:
		return nil
	}
	return fmt.Errorf("watch stream sent an event of unknown type %q", t)
}

// mapEvent decodes a whole frame in one pass into maps; the object becomes
// an *unstructured.Unstructured without a second parse. With wantRaw, conv
// also gets the object's text.
func mapEvent(frame []byte, conv MapDecoder, omitManagedFields, wantRaw bool) (watch.Event, error) {
	var m map[string]any
	var objRaw []byte
	var err error
	switch {
	case wantRaw:
		m, objRaw, err = fastjson.DecodeObjectSharedRaw(frame, "object", omitManagedFields)
	case omitManagedFields:
		m, err = fastjson.DecodeObjectSharedOmittingManagedFields(frame, 2)
	default:
		m, err = fastjson.DecodeObjectShared(frame)
	}
	if err != nil {
		return watch.Event{}, fmt.Errorf("unable to decode an event from the watch stream: %w", err)
	}
	typ, _ := m["type"].(string)
	if err := checkEventType(watch.EventType(typ)); err != nil {
		return watch.Event{}, err
	}
	raw, present := m["object"]
	obj, ok := raw.(map[string]any)
	if !ok {
		if present && raw != nil {
			return watch.Event{}, fmt.Errorf("unable to decode the object of a %s event from the watch stream: not a JSON object", typ)
		}
		return watch.Event{}, fmt.Errorf("watch stream sent a %s event without an object", typ)
	}
	if typ == string(watch.Error) {
		st := &metav1.Status{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, st); err != nil {
			return watch.Event{}, fmt.Errorf("unable to decode the ERROR event's Status from the watch stream: %w", err)
		}
		return watch.Event{Type: watch.Error, Object: st}, nil
	}
	o, err := conv(obj, objRaw)
	if err != nil {
		return watch.Event{}, fmt.Errorf("unable to decode the object of a %s event from the watch stream: %w", typ, err)
	}
	return watch.Event{Type: watch.EventType(typ), Object: o}, nil
}

// eventBuffer is how many decoded events a watcher may hold for a consumer
// that is busy: the decoder runs ahead instead of handing over each event
// in lockstep, which saves two goroutine switches per event when events
// come in bursts (a streaming list's initial events). After Stop, events
// already buffered may still be received before the channel closes.
const eventBuffer = 64

// maxFrameBytes bounds one watch frame.
const maxFrameBytes = 64 << 20

// framer splits a stream of concatenated JSON values (objects, as watch
// streams send) into frames. It tracks nesting and strings incrementally
// across reads, so a frame is returned as soon as its last byte arrives
// and a large frame arriving in small pieces is not rescanned from its
// start on every read; the frame is then validated by its decoder.
type framer struct {
	r          io.Reader
	buf        []byte
	start, end int
	eof        bool

	// scan state of the frame at buf[start:]: pos is the next byte to look
	// at; depth counts open braces and brackets.
	pos      int
	depth    int
	inString bool
	escape   bool
	begun    bool
}

// next returns the next complete JSON value. The slice is valid until the
// next call. At the end of the stream it returns io.EOF, or
// io.ErrUnexpectedEOF when the stream ended inside a value.
func (f *framer) next() ([]byte, error) {
	for {
		if end, ok, err := f.scan(); err != nil {
			return nil, err
		} else if ok {
			frame := f.buf[f.start:end]
			f.start = end
			f.pos, f.depth, f.inString, f.escape, f.begun = 0, 0, false, false, false
			return frame, nil
		}
		if f.eof {
			if len(bytes.TrimSpace(f.buf[f.start:f.end])) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, io.EOF
		}
		if f.start > 0 {
			n := copy(f.buf, f.buf[f.start:f.end])
			f.start, f.end = 0, n
		}
		if f.end == len(f.buf) {
			if len(f.buf) >= maxFrameBytes {
				return nil, fmt.Errorf("a watch event is larger than %d bytes", maxFrameBytes)
			}
			nb := make([]byte, 2*len(f.buf))
			copy(nb, f.buf[:f.end])
			f.buf = nb
		}
		n, err := f.r.Read(f.buf[f.end:])
		f.end += n
		if err != nil {
			if errors.Is(err, io.EOF) {
				f.eof = true
				continue
			}
			if n > 0 {
				continue // decode what arrived; the error comes back on the next read
			}
			return nil, err
		}
	}
}

// scan advances over buf[start+pos:end] and reports where the current
// value ends, if it has.
func (f *framer) scan() (end int, ok bool, err error) {
	b := f.buf[f.start:f.end]
	i := f.pos
	if !f.begun {
		for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
			i++
		}
		if i == len(b) {
			// Only whitespace so far: drop it.
			f.start += i
			f.pos = 0
			return 0, false, nil
		}
		if b[i] != '{' && b[i] != '[' {
			// A scalar at the top level: not a watch event; let Scan judge.
			s, e, err := fastjson.Scan(b)
			if err == nil {
				f.start += s
				return f.start + e - s, true, nil
			}
			if errors.Is(err, fastjson.ErrIncomplete) && !f.eof {
				return 0, false, nil
			}
			return 0, false, &json.SyntaxError{}
		}
		f.start += i
		b = b[i:]
		i = 0
		f.begun = true
	}
	// Most of an object's bytes are inside strings: there, jump from
	// quote to backslash to quote. nq and ne are the next '"' and '\\' at
	// or after i (len(b) for none), found once and kept until passed, so
	// the buffer is searched about once.
	nq, ne := -1, -1
	for ; i < len(b); i++ {
		if f.inString {
			if f.escape {
				f.escape = false
				continue
			}
			if nq < i {
				nq = nextByte(b, i, '"')
			}
			if ne < i {
				ne = nextByte(b, i, '\\')
			}
			switch {
			case ne < nq:
				i = ne
				f.escape = true
			case nq == len(b):
				i = len(b) - 1 // the string goes on past what has arrived
			default:
				i = nq
				f.inString = false
			}
			continue
		}
		c := b[i]
		switch c {
		case '"':
			f.inString = true
		case '{', '[':
			f.depth++
		case '}', ']':
			f.depth--
			if f.depth == 0 {
				f.pos = i + 1
				return f.start + i + 1, true, nil
			}
		}
	}
	f.pos = i
	return 0, false, nil
}

// nextByte returns the index of the first c in b at or after i, or len(b).
func nextByte(b []byte, i int, c byte) int {
	if j := bytes.IndexByte(b[i:], c); j >= 0 {
		return i + j
	}
	return len(b)
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
