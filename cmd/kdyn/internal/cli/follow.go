package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kdyn/kdyn/dynamic"
)

// FollowFuncs receive what Follow sees. Each returns done=true to end
// Follow with nil, or an error to end it with that error.
type FollowFuncs struct {
	// Listed gets every object of a complete list: the first one, and
	// each list after the server expired the watch's resourceVersion.
	Listed func(items []*unstructured.Unstructured) (done bool, err error)
	// Event gets each Added, Modified and Deleted event (a Deleted
	// event's object is the last state).
	Event func(typ watch.EventType, obj *unstructured.Unstructured) (done bool, err error)
}

// Follow lists the objects of rc that opts select, then watches them from
// the list's resourceVersion, handing each list and event to fns, until a
// function says done, returns an error, or ctx ends (Follow then returns
// ctx's error). Nothing is polled: a watch the server closes is resumed
// from the last resourceVersion seen (bookmarks included), an expired one
// (410 Gone) is answered by listing again, other watch failures are
// retried after a backoff (1 s doubling to 10 s, with jitter), and 400,
// 401, 403 and 404 end Follow with the server's error. The commands that
// wait (wait, apply --wait, rollout status) share it.
func Follow(ctx context.Context, rc dynamic.ResourceInterface, opts metav1.ListOptions, fns FollowFuncs) error {
	rv, done, err := followList(ctx, rc, opts, fns)
	if err != nil || done {
		return err
	}
	backoff := time.Second
	for {
		next, gone, done, err := followWatch(ctx, rc, opts, rv, fns)
		switch {
		case done:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && !errors.Is(err, errWatchRetry):
			return err
		case gone:
			if rv, done, err = followList(ctx, rc, opts, fns); err != nil || done {
				return err
			}
			continue
		case err != nil:
			d := backoff + time.Duration(rand.Int64N(int64(backoff/2)+1))
			backoff = min(backoff*2, 10*time.Second)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
			continue
		}
		backoff = time.Second
		if next != "" {
			rv = next
		}
	}
}

// followList lists every page and hands the items to fns.Listed; it
// returns the list's resourceVersion.
func followList(ctx context.Context, rc dynamic.ResourceInterface, opts metav1.ListOptions, fns FollowFuncs) (string, bool, error) {
	l, err := dynamic.ListAll(ctx, rc, opts, dynamic.PageOptions{})
	if err != nil {
		return "", false, err
	}
	items := make([]*unstructured.Unstructured, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	done, err := fns.Listed(items)
	return l.GetResourceVersion(), done, err
}

// errWatchRetry marks watch failures worth retrying after a pause.
var errWatchRetry = errors.New("watch interrupted")

// followWatch follows one watch stream from rv until it ends, a function
// says done, or ctx ends. It returns the last resourceVersion seen and
// gone=true when rv has expired (410), which calls for a new list.
func followWatch(ctx context.Context, rc dynamic.ResourceInterface, opts metav1.ListOptions, rv string, fns FollowFuncs) (last string, gone, done bool, err error) {
	opts.ResourceVersion = rv
	opts.AllowWatchBookmarks = true
	opts.TimeoutSeconds = ptr.To(int64(240 + rand.IntN(120)))
	wi, err := rc.Watch(ctx, opts)
	if err != nil {
		switch {
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			return rv, true, false, nil
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err):
			return rv, false, false, err
		}
		return rv, false, false, fmt.Errorf("%w: %w", errWatchRetry, err)
	}
	defer wi.Stop()
	last = rv
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return last, false, false, nil
		case ev, ok = <-wi.ResultChan():
		}
		if !ok {
			return last, false, false, nil // stream ended: resume from last
		}
		if ev.Type == watch.Error {
			st, _ := ev.Object.(*metav1.Status)
			if st != nil && (st.Code == 410 || st.Reason == metav1.StatusReasonExpired || st.Reason == metav1.StatusReasonGone) {
				return last, true, false, nil
			}
			if st != nil {
				return last, false, false, fmt.Errorf("%w: %w", errWatchRetry, &apierrors.StatusError{ErrStatus: *st})
			}
			return last, false, false, errWatchRetry
		}
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if v := u.GetResourceVersion(); v != "" {
			last = v
		}
		if ev.Type == watch.Bookmark {
			continue
		}
		done, err := fns.Event(ev.Type, u)
		if err != nil || done {
			return last, false, done, err
		}
	}
}
