package events

import (
	"sync"
	"time"
)

// EventRecorder records Events about objects: what a controller's code
// calls, so that it can be given a Recorder in production, Discard where
// Events are not wanted, and a FakeRecorder in its unit tests. The
// arguments are those of Recorder.Eventf.
type EventRecorder interface {
	Eventf(regarding, related Object, eventType, reason, action, note string, args ...any)
}

var (
	_ EventRecorder = (*Recorder)(nil)
	_ EventRecorder = Discard
	_ EventRecorder = (*FakeRecorder)(nil)
)

// Discard is an EventRecorder that drops every event.
var Discard EventRecorder = discard{}

type discard struct{}

func (discard) Eventf(Object, Object, string, string, string, string, ...any) {}

// Recorded is one event a FakeRecorder kept.
type Recorded struct {
	Regarding, Related Reference // Related is zero when there was none
	Type               string
	Reason, Action     string
	Note               string // formatted
}

// String formats an event as client-go's FakeRecorder does — its type,
// reason and note, separated by spaces — for comparisons in tests.
func (r Recorded) String() string { return r.Type + " " + r.Reason + " " + r.Note }

// FakeRecorder is an EventRecorder for unit tests: it keeps what it is
// given, validated as a Recorder would validate it but written nowhere.
// Events holds every event as Recorded.String formats it, like client-go's
// record.FakeRecorder, when created with a buffer; Recorded returns them
// all with their references. It is safe for concurrent use.
type FakeRecorder struct {
	// Events receives each event's String, when the recorder was made
	// with a buffer; a full channel blocks Eventf, as client-go's does.
	Events chan string

	mu       sync.Mutex
	recorded []Recorded
}

// NewFakeRecorder returns a FakeRecorder whose Events channel has room for
// buffer events (0: no channel; read them with Recorded).
func NewFakeRecorder(buffer int) *FakeRecorder {
	f := &FakeRecorder{}
	if buffer > 0 {
		f.Events = make(chan string, buffer)
	}
	return f
}

// Eventf keeps the event as a Recorder would record it: the note
// formatted (and cut to the server's 1024 bytes), a related object that
// has no kind or name left out. An event a Recorder would refuse (no
// regarding object, one without a kind or name, a type other than Normal
// or Warning, an empty or too long reason or action) is kept too, with its
// Type prefixed "Invalid: ", so a test sees it rather than lose it.
func (f *FakeRecorder) Eventf(regarding, related Object, eventType, reason, action, note string, args ...any) {
	o, _, err := prepare(time.Time{}, regarding, related, eventType, reason, action, note, args)
	r := Recorded{Regarding: o.regarding, Type: eventType, Reason: reason, Action: action, Note: o.note}
	if o.related != nil {
		r.Related = *o.related
	}
	if err != nil {
		r.Type = "Invalid: " + eventType
	}
	f.mu.Lock()
	f.recorded = append(f.recorded, r)
	f.mu.Unlock()
	if f.Events != nil {
		f.Events <- r.String()
	}
}

// Recorded returns every event kept so far, in order.
func (f *FakeRecorder) Recorded() []Recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Recorded(nil), f.recorded...)
}

// NeedLeaderElection reports false: a controller.Manager runs the
// Recorder in every replica (whoever records, it writes), beside the
// caches, and stops it after the controllers, so that it flushes what they
// recorded last.
func (r *Recorder) NeedLeaderElection() bool { return false }
