package informer

import (
	"fmt"
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// convertWatch returns w with each event's object passed through conv
// (ERROR events pass as they are): how the sources turn the watches of a
// client without fast paths into theirs. An object conv fails on ends the
// watch with an ERROR event of code 500, as a frame that does not decode
// ends a kdyn watch.
func convertWatch(w watch.Interface, conv func(runtime.Object) (runtime.Object, error)) watch.Interface {
	c := &convertedWatch{w: w, out: make(chan watch.Event), done: make(chan struct{})}
	go c.run(conv)
	return c
}

type convertedWatch struct {
	w    watch.Interface
	out  chan watch.Event
	done chan struct{} // closed by Stop
	once sync.Once
}

func (c *convertedWatch) run(conv func(runtime.Object) (runtime.Object, error)) {
	defer close(c.out)
	for ev := range c.w.ResultChan() {
		last := false
		if ev.Type != watch.Error {
			o, err := conv(ev.Object)
			if err != nil {
				ev, last = convertError(ev.Type, err), true
			} else {
				ev.Object = o
			}
		}
		select {
		case c.out <- ev:
		case <-c.done:
			return
		}
		if last {
			c.w.Stop()
			return
		}
	}
}

// convertError is the ERROR event that ends a watch whose object of an
// event of type t could not be converted.
func convertError(t watch.EventType, err error) watch.Event {
	return watch.Event{Type: watch.Error, Object: &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Code:     http.StatusInternalServerError,
		Reason:   metav1.StatusReasonInternalError,
		Message:  fmt.Sprintf("unable to convert the object of a %s event: %v", t, err),
	}}
}

// ResultChan returns the converted events; it is closed when the watch
// ends or is stopped.
func (c *convertedWatch) ResultChan() <-chan watch.Event { return c.out }

// Stop ends the watch. It is safe to call more than once.
func (c *convertedWatch) Stop() {
	c.once.Do(func() {
		close(c.done)
		c.w.Stop()
	})
}
