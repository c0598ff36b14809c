package events

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/internal/ctxsleep"
	"github.com/kdyn/kdyn/rest"
)

// watcher prints the Events of a list, then those added or modified after
// it. Unlike kubectl's, whose watch starts from nothing and prints what it
// gets in the server's order, it prints the list sorted, watches from the
// list's resourceVersion so that nothing is missed, and does not end when
// the server closes the stream.
type watcher struct {
	rc        *rest.Client
	ns        string
	selector  string
	chunkSize int64
	o         *options
	p         *printer
	rv        string
	// printed maps the uid of every Event printed to the resourceVersion
	// printed, so that a relist after a 410 prints only what is new.
	printed map[string]string
}

// errGone is a watch ended by a 410: its resourceVersion is too old.
var errGone = errors.New("events: watch expired")

// minWatch is how long a watch must last not to be followed by a pause
// (a server or proxy that ends every watch at once). A variable for tests.
var minWatch = time.Second

func (w *watcher) run(ctx context.Context, evs []*event) error {
	if err := w.print(evs); err != nil {
		return err
	}
	for ctx.Err() == nil {
		started := time.Now()
		err := w.watchOnce(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errGone):
			if err := w.relist(ctx); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		if time.Since(started) < minWatch {
			_ = ctxsleep.Sleep(ctx, minWatch)
		}
	}
	return nil
}

// print prints the events not printed yet at their resourceVersion.
func (w *watcher) print(evs []*event) error {
	var fresh []*event
	for _, e := range evs {
		if w.printed[e.uid] == e.resourceVersion || !w.o.wants(e) {
			continue
		}
		w.printed[e.uid] = e.resourceVersion
		fresh = append(fresh, e)
	}
	return w.p.printEach(fresh)
}

// relist lists again after a 410 and prints what the watch missed.
func (w *watcher) relist(ctx context.Context) error {
	evs, rv, err := list(ctx, w.rc, w.ns, metav1.ListOptions{FieldSelector: w.selector, Limit: w.chunkSize})
	if err != nil {
		return err
	}
	sort.Sort(byLastSeen(evs))
	w.rv = rv
	return w.print(evs)
}

// watchOnce watches from w.rv until the stream ends, printing ADDED and
// MODIFIED Events as they come and keeping w.rv at the last one seen.
// Frames are read raw, so that the Events keep the server's field order.
func (w *watcher) watchOnce(ctx context.Context) error {
	opts := metav1.ListOptions{Watch: true, ResourceVersion: w.rv, FieldSelector: w.selector, AllowWatchBookmarks: true}
	body, err := cli.ResourceRequest(w.rc.Get(), coreEvents, w.ns).VersionedParams(&opts).Stream(ctx)
	if err != nil {
		if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
			return errGone
		}
		return err
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var frame struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&frame); err != nil {
			return nil // the stream ended (or broke): resume from w.rv
		}
		switch frame.Type {
		case "ADDED", "MODIFIED":
			e := parseEvent(frame.Object)
			w.rv = e.resourceVersion
			if err := w.print([]*event{e}); err != nil {
				return err
			}
		case "DELETED", "BOOKMARK":
			// Events expire after an hour: not news.
			w.rv = parseEvent(frame.Object).resourceVersion
		case "ERROR":
			var st metav1.Status
			if err := json.Unmarshal(frame.Object, &st); err != nil {
				return err
			}
			if st.Code == 410 || st.Reason == metav1.StatusReasonExpired || st.Reason == metav1.StatusReasonGone {
				return errGone
			}
			return &apierrors.StatusError{ErrStatus: st}
		}
	}
}
