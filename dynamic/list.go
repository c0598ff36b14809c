package dynamic

import (
	"context"
	"iter"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DefaultPageSize is the page size of Items and ListAll when none is given.
const DefaultPageSize = 500

// ExpiredPolicy says what Items and ListAll do when the server answers 410
// Gone because a continue token expired (the list took longer than the
// server keeps its snapshot, about 5 minutes by default).
type ExpiredPolicy int

const (
	// ExpiredRestart restarts with a fresh consistent list. ListAll discards
	// what it collected and starts over, so its result is one snapshot.
	// Items cannot take back what it already yielded: it restarts and skips
	// objects (by namespace/name) it has yielded, so each object is yielded
	// once, but the whole sequence is then not one snapshot.
	ExpiredRestart ExpiredPolicy = iota
	// ExpiredFail returns the 410 error (apierrors.IsResourceExpired).
	ExpiredFail
)

// PageOptions configure Items and ListAll. The zero value pages 500 at a
// time and restarts on an expired continue token.
type PageOptions struct {
	// PageSize is the limit of each page. Zero means DefaultPageSize.
	PageSize int64
	// OnExpired: see ExpiredPolicy.
	OnExpired ExpiredPolicy
	// MaxRestarts bounds ExpiredRestart restarts. Zero means 3.
	MaxRestarts int
}

func (p PageOptions) withDefaults() PageOptions {
	if p.PageSize <= 0 {
		p.PageSize = DefaultPageSize
	}
	if p.MaxRestarts <= 0 {
		p.MaxRestarts = 3
	}
	return p
}

// Lister is the part of ResourceInterface that paging needs.
type Lister interface {
	List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
}

// Items returns every object matching opts, fetched page by page (following
// continue tokens), without a hand-written continue loop:
//
//	for obj, err := range dynamic.Items(ctx, client.Resource(gvr).Namespace("prod"), metav1.ListOptions{}, dynamic.PageOptions{}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(obj.GetName())
//	}
//
// Only one page is held in memory at a time. An error ends the sequence.
// opts.Limit and opts.Continue are managed by Items; opts.ResourceVersion
// and opts.ResourceVersionMatch choose the first page's snapshot, which the
// continue tokens of the others carry.
func Items(ctx context.Context, l Lister, opts metav1.ListOptions, popts PageOptions) iter.Seq2[*unstructured.Unstructured, error] {
	popts = popts.withDefaults()
	return func(yield func(*unstructured.Unstructured, error) bool) {
		var seen map[string]struct{}
		restarts := 0
		opts.Limit = popts.PageSize
		opts.Continue = ""
		for {
			page, err := l.List(ctx, opts)
			if err != nil {
				if apierrors.IsResourceExpired(err) && opts.Continue != "" && popts.OnExpired == ExpiredRestart && restarts < popts.MaxRestarts {
					restarts++
					opts.Continue = ""
					opts.ResourceVersion = ""
					continue
				}
				yield(nil, err)
				return
			}
			for i := range page.Items {
				obj := &page.Items[i]
				key := obj.GetNamespace() + "/" + obj.GetName()
				if restarts > 0 {
					if _, dup := seen[key]; dup {
						continue
					}
				}
				if popts.OnExpired == ExpiredRestart {
					if seen == nil {
						seen = map[string]struct{}{}
					}
					seen[key] = struct{}{}
				}
				if !yield(obj, nil) {
					return
				}
			}
			if page.GetContinue() == "" {
				return
			}
			opts.Continue = page.GetContinue()
			// The continue token carries the snapshot; the server refuses
			// a resourceVersion (other than "0") or resourceVersionMatch
			// beside it, as client-go's pager knows.
			opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
		}
	}
}

// ListAll returns every object matching opts in one list, fetched page by
// page. The list's resourceVersion is that of the first page (the snapshot
// all pages come from), so it can start a watch.
func ListAll(ctx context.Context, l Lister, opts metav1.ListOptions, popts PageOptions) (*unstructured.UnstructuredList, error) {
	popts = popts.withDefaults()
	restarts := 0
	for {
		out, err := listPages(ctx, l, opts, popts.PageSize)
		if err != nil && apierrors.IsResourceExpired(err) && popts.OnExpired == ExpiredRestart && restarts < popts.MaxRestarts {
			restarts++
			opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
			continue
		}
		return out, err
	}
}

// errExpiredMidList marks a 410 on a continue page.
func listPages(ctx context.Context, l Lister, opts metav1.ListOptions, pageSize int64) (*unstructured.UnstructuredList, error) {
	opts.Limit = pageSize
	opts.Continue = ""
	var out *unstructured.UnstructuredList
	for {
		page, err := l.List(ctx, opts)
		if err != nil {
			if out == nil && apierrors.IsResourceExpired(err) {
				// The first page itself failed: not a continue expiry.
				return nil, &notRestartable{err}
			}
			return nil, err
		}
		if out == nil {
			out = page
		} else {
			out.Items = append(out.Items, page.Items...)
		}
		if page.GetContinue() == "" {
			out.SetContinue("")
			out.SetRemainingItemCount(nil)
			return out, nil
		}
		opts.Continue = page.GetContinue()
		opts.ResourceVersion, opts.ResourceVersionMatch = "", "" // see Items
	}
}

// notRestartable hides IsResourceExpired from ListAll's restart check for
// a 410 that is not about a continue token, while keeping it visible to
// callers through Unwrap.
type notRestartable struct{ err error }

func (e *notRestartable) Error() string { return e.err.Error() }
func (e *notRestartable) Unwrap() error { return e.err }
