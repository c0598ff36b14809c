package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/readiness"
)

// ReadyTarget is an object to wait for until it is ready.
type ReadyTarget struct {
	GVR       schema.GroupVersionResource
	Namespace string // "" for cluster-scoped objects
	Name      string
	// Display names it in messages: "deployment.apps/web".
	Display string
}

// NotReady is an object that was not ready in time, with its last status.
type NotReady struct {
	Target ReadyTarget
	Result readiness.Result
}

// NotReadyError is a readiness wait that ran out of time; it names every
// object not ready and why, and wraps ErrTimeout (exit code 7 with
// --exit-codes).
type NotReadyError struct {
	Timeout time.Duration
	Objects []NotReady // in the order of the targets
}

func (e *NotReadyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "timed out after %s waiting for %d object(s) to be ready:", e.Timeout, len(e.Objects))
	for _, o := range e.Objects {
		fmt.Fprintf(&b, "\n  %s: %s", o.Target.Display, o.Result)
	}
	return b.String()
}

func (e *NotReadyError) Unwrap() error { return ErrTimeout }

// WaitReady waits until every target is Current by readiness.Compute, or
// timeout passes (then a *NotReadyError). It watches: each resource and
// namespace is one Follow (a list, then a watch; one name is selected by
// field selector), so a status change is seen as soon as the server sends
// it. onReady, when not nil, is called once for each target as it becomes
// ready (from several goroutines, one at a time). A status field of the
// wrong shape or a watch the server refuses ends the wait with that error.
func WaitReady(ctx context.Context, client dynamic.Interface, targets []ReadyTarget, timeout time.Duration, onReady func(ReadyTarget, readiness.Result)) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type groupKey struct {
		gvr schema.GroupVersionResource
		ns  string
	}
	groups := map[groupKey][]int{}
	var keys []groupKey
	for i, t := range targets {
		k := groupKey{t.GVR, t.Namespace}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	var (
		mu      sync.Mutex // guards results and calls to onReady
		results = make([]readiness.Result, len(targets))
		ready   = make([]bool, len(targets))
		errs    = make([]error, len(keys))
		wg      sync.WaitGroup
	)
	for i := range results {
		results[i] = readiness.Result{Status: readiness.NotFound, Message: "Resource not found"}
	}
	for gi, k := range keys {
		idx := groups[k]
		byName := map[string][]int{} // a target given twice is waited for once
		for _, i := range idx {
			byName[targets[i].Name] = append(byName[targets[i].Name], i)
		}
		pending := len(byName)
		// observe records obj's status (nil: gone) and reports whether
		// every target of the group is ready.
		observe := func(name string, obj *unstructured.Unstructured) (bool, error) {
			same, ok := byName[name]
			if !ok {
				return pending == 0, nil
			}
			res, err := readiness.Compute(obj)
			if err != nil {
				return false, err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, i := range same {
				results[i] = res
			}
			if i := same[0]; res.Ready() && !ready[i] {
				for _, j := range same {
					ready[j] = true
				}
				pending--
				if onReady != nil {
					onReady(targets[i], res)
				}
			}
			return pending == 0, nil
		}
		opts := Selection{}.ListOptions()
		if len(byName) == 1 {
			opts.FieldSelector = "metadata.name=" + targets[idx[0]].Name
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := Follow(wctx, client.Resource(k.gvr).Namespace(k.ns), opts, informer.FollowFuncs[*unstructured.Unstructured]{
				Listed: func(items []*unstructured.Unstructured) (bool, error) {
					seen := map[string]bool{}
					for _, obj := range items {
						seen[obj.GetName()] = true
						if done, err := observe(obj.GetName(), obj); done || err != nil {
							return done, err
						}
					}
					for name := range byName {
						if !seen[name] {
							if _, err := observe(name, nil); err != nil {
								return false, err
							}
						}
					}
					return pending == 0, nil
				},
				Event: func(typ watch.EventType, obj *unstructured.Unstructured) (bool, error) {
					if typ == watch.Deleted {
						return observe(obj.GetName(), nil)
					}
					return observe(obj.GetName(), obj)
				},
			})
			if err != nil && wctx.Err() == nil {
				errs[gi] = err
				cancel() // one failure ends the whole wait
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var left []NotReady
	for i, t := range targets {
		if !ready[i] {
			left = append(left, NotReady{Target: t, Result: results[i]})
		}
	}
	if len(left) == 0 {
		return nil
	}
	return &NotReadyError{Timeout: timeout, Objects: left}
}
