package cli

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
)

// Follow is informer.Follow of the objects of rc that opts select (its
// selectors), for the commands that wait (wait, apply --wait, rollout
// status): lists and watches are rc's own requests (ResourceSource), and
// a first list that fails ends it with the error, as a command should.
func Follow(ctx context.Context, rc dynamic.ResourceInterface, opts metav1.ListOptions, fns informer.FollowFuncs[*unstructured.Unstructured]) error {
	return informer.Follow(ctx, ResourceSource(rc), informer.FollowOptions{ListOptions: opts, FailFast: true}, fns)
}

// ResumingMessage is the line the watching commands (get --watch, events
// --watch) print on stderr for a failure that Follow retries: "watch of
// WHAT interrupted, resuming: MESSAGE".
func ResumingMessage(what string, err error) string {
	return fmt.Sprintf("watch of %s interrupted, resuming: %s", what, strings.TrimPrefix(ErrorMessage(err), "error: "))
}

// ResourceSource is the informer.Source of rc's plain List and Watch.
// informer.NewResourceSource over kdyn's client would send each list over
// a connection of its own (a bulk transfer, worth it for an informer's
// large lists); a command's lists are small, and share the client's.
func ResourceSource(rc dynamic.ResourceInterface) informer.Source[*unstructured.Unstructured] {
	return resourceSource{rc}
}

type resourceSource struct{ rc dynamic.ResourceInterface }

func (s resourceSource) List(ctx context.Context, opts metav1.ListOptions, each func(*unstructured.Unstructured) error) (informer.ListPage, error) {
	l, err := s.rc.List(ctx, opts)
	if err != nil {
		return informer.ListPage{}, err
	}
	for i := range l.Items {
		if err := each(&l.Items[i]); err != nil {
			return informer.ListPage{}, err
		}
	}
	return informer.ListPage{ResourceVersion: l.GetResourceVersion(), Continue: l.GetContinue()}, nil
}

func (s resourceSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return s.rc.Watch(ctx, opts)
}
