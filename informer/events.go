package informer

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/internal/wire"
)

// eventReader reads one watch's events in the reflector's goroutine, with a
// deadline that each event re-arms. Watches from kdyn's rest package are
// read directly (wire.EventReader): the event is decoded by the goroutine
// that applies it, with no hand-off to another goroutine per event, which
// is most of what an event costs when events come one at a time. Other
// watches are read from their channel.
//
// A watchdog goroutine stops the watch when the deadline passes or ctx is
// done; next then returns false, and expired tells the two apart from the
// stream's own end. An event that arrives just as the deadline passes may
// be lost with the stream; the reflector then re-watches from the last
// resourceVersion it applied, so nothing is missed.
type eventReader struct {
	w       watch.Interface
	pull    func() (watch.Event, bool)
	timer   *time.Timer
	d       time.Duration
	expired atomic.Bool
	quit    chan struct{} // closed by close: the watchdog leaves w alone
	stopped chan struct{} // closed by the watchdog before it stops w
	exited  chan struct{} // closed when the watchdog has returned
	once    sync.Once
}

// readEvents starts reading w with deadline d between events.
func readEvents(ctx context.Context, w watch.Interface, d time.Duration) *eventReader {
	er := &eventReader{
		w:       w,
		timer:   time.NewTimer(d),
		d:       d,
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
		exited:  make(chan struct{}),
	}
	inner := w
	if rw, ok := w.(*releasingWatch); ok {
		inner = rw.Interface
	}
	if p, ok := inner.(wire.EventReader); ok {
		er.pull = p.NextEvent
	} else {
		ch := w.ResultChan()
		er.pull = func() (watch.Event, bool) {
			select {
			case ev, ok := <-ch:
				return ev, ok
			case <-er.stopped:
				return watch.Event{}, false
			}
		}
	}
	go er.watchdog(ctx)
	return er
}

func (er *eventReader) watchdog(ctx context.Context) {
	defer close(er.exited)
	select {
	case <-er.quit:
		return
	case <-ctx.Done():
	case <-er.timer.C:
		er.expired.Store(true)
	}
	close(er.stopped)
	er.w.Stop()
}

// next returns the next event and re-arms the deadline; false when the
// stream ended, the deadline passed or ctx is done.
func (er *eventReader) next() (watch.Event, bool) {
	ev, ok := er.pull()
	if ok {
		er.timer.Reset(er.d)
	}
	return ev, ok
}

// close ends the watchdog, leaving the watch open (for a streaming list's
// watch, which goes on as the informer's watch). Safe to call again.
func (er *eventReader) close() {
	er.once.Do(func() {
		er.timer.Stop()
		close(er.quit)
		<-er.exited
	})
}
