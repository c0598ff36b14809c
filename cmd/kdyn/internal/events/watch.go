package events

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/rest"
)

// watchEvents prints the Events of a list (evs, sorted), then those added
// or modified after it, with informer.Follow from the list's
// resourceVersion rv. Unlike kubectl's, whose watch starts from nothing
// and prints what it gets in the server's order, nothing is missed, and
// the watch does not end when the server closes the stream; after a 410
// Follow lists again, and what that list has that was not printed is
// printed, sorted. Other failures are named on errOut and retried with a
// backoff; 400, 401, 403 and 404 end it. It ends without an error when ctx
// does.
func watchEvents(ctx context.Context, src eventSource, o *options, p *printer, errOut io.Writer, evs []*event, rv string) error {
	// printed maps the uid of every Event printed to the resourceVersion
	// printed, so that a relist prints only what is new.
	printed := map[string]string{}
	print := func(evs []*event) error {
		var fresh []*event
		for _, e := range evs {
			if printed[e.uid] == e.resourceVersion || !o.wants(e) {
				continue
			}
			printed[e.uid] = e.resourceVersion
			fresh = append(fresh, e)
		}
		return p.printEach(fresh)
	}
	if err := print(evs); err != nil {
		return err
	}
	pageSize := o.chunkSize
	if pageSize <= 0 {
		pageSize = -1 // one request
	}
	err := informer.Follow(ctx, src, informer.FollowOptions{
		ListOptions:     metav1.ListOptions{FieldSelector: src.selector},
		PageSize:        pageSize,
		ResourceVersion: rv,
		OnError: func(err error) error {
			fmt.Fprintln(errOut, cli.ResumingMessage("events", err))
			return nil
		},
	}, informer.FollowFuncs[*followed]{
		Listed: func(items []*followed) (bool, error) {
			evs := make([]*event, len(items))
			for i, f := range items {
				evs[i] = f.event
			}
			sort.Sort(byLastSeen(evs))
			return false, print(evs)
		},
		Event: func(typ watch.EventType, f *followed) (bool, error) {
			if typ == watch.Deleted {
				return false, nil // Events expire after an hour: not news
			}
			return false, print([]*event{f.event})
		},
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// followed is an Event as informer.Follow follows it: the metadata Follow
// reads, and the Event.
type followed struct {
	metav1.PartialObjectMetadata
	event *event
}

func newFollowed(e *event) *followed {
	f := &followed{event: e}
	f.UID, f.ResourceVersion, f.Namespace = types.UID(e.uid), e.resourceVersion, e.namespace
	return f
}

// eventSource is the informer.Source of core/v1 Events of one namespace
// ("" for all) that selector selects. Lists and watch frames are read raw,
// so that each Event keeps the server's text (and field order).
type eventSource struct {
	rc       *rest.Client
	ns       string
	selector string
}

var _ informer.Source[*followed] = eventSource{}

func (s eventSource) List(ctx context.Context, opts metav1.ListOptions, each func(*followed) error) (informer.ListPage, error) {
	evs, page, err := listPage(ctx, s.rc, s.ns, opts)
	if err != nil {
		return informer.ListPage{}, err
	}
	for _, e := range evs {
		if err := each(newFollowed(e)); err != nil {
			return informer.ListPage{}, err
		}
	}
	return page, nil
}

func (s eventSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	body, err := cli.ResourceRequest(s.rc.Get(), coreEvents, s.ns).VersionedParams(&opts).Stream(ctx)
	if err != nil {
		return nil, err
	}
	// A frame that does not decode ends the stream with an ERROR (500), as
	// kdyn's own watches do.
	return watch.NewStreamWatcher(&frames{body: body, dec: json.NewDecoder(body)},
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
}

// frames decodes a watch of Events frame by frame: objects are *followed,
// or *metav1.Status for ERROR events.
type frames struct {
	body io.ReadCloser
	dec  *json.Decoder
}

func (d *frames) Decode() (watch.EventType, runtime.Object, error) {
	var frame struct {
		Type   watch.EventType `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := d.dec.Decode(&frame); err != nil {
		return "", nil, err
	}
	if frame.Type == watch.Error {
		var st metav1.Status
		if err := json.Unmarshal(frame.Object, &st); err != nil {
			return "", nil, err
		}
		return frame.Type, &st, nil
	}
	return frame.Type, newFollowed(parseEvent(frame.Object)), nil
}

func (d *frames) Close() { _ = d.body.Close() }
