package informer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/rest"
)

// FactoryOptions configure a Factory. The zero value is useful.
type FactoryOptions struct {
	// Namespace is the default namespace of the factory's informers; ""
	// means all namespaces.
	Namespace string
	// ResyncPeriod is passed to every informer.
	ResyncPeriod time.Duration
	// DisableStreaming turns off streaming lists for every informer.
	DisableStreaming bool
	// Logger receives debug logs. Nil means none.
	Logger *zap.Logger
}

// InformerOptions select what one informer caches. Informers with equal
// options for one resource are the same informer.
type InformerOptions struct {
	// Namespace overrides the factory's namespace ("" keeps it).
	Namespace string
	// AllNamespaces watches the resource in every namespace, whatever the
	// factory's Namespace: set it for cluster-scoped resources (a
	// namespaced request for one is answered 404).
	AllNamespaces bool
	// LabelSelector and FieldSelector filter the objects.
	LabelSelector, FieldSelector string
	// KeepManagedFields keeps metadata.managedFields, which the factory
	// strips by default: it is 20–40% of object bytes and controllers
	// almost never read it.
	KeepManagedFields bool
	// Transform changes objects before they are cached, after managedFields
	// stripping. Informers with different Transform functions are distinct.
	Transform func(*unstructured.Unstructured) (*unstructured.Unstructured, error)
	// Compact keeps objects as JSON bytes (the text the server sent, less
	// managedFields) and decodes them on each read (see RawJSON): far less
	// memory, slower reads.
	Compact bool
}

type factoryKey struct {
	gvr       schema.GroupVersionResource
	ns        string
	labels    string
	fields    string
	keepMF    bool
	transform uintptr
	compact   bool
	metadata  bool
}

type factoryEntry struct {
	key      factoryKey
	run      func(context.Context) error
	synced   func() bool
	givenUp  func() error // the permanent error WaitForSync returns, or nil
	informer any
	cancel   context.CancelFunc
	done     chan struct{}
	// pinned: handed out by ForResource or ForResourceMetadata; held:
	// holds of resource sets not yet given back (releaseHeld).
	pinned bool
	held   int
}

// Factory hands out shared informers keyed by resource and options: every
// caller asking for the same one gets the same informer, started once. It is
// safe for concurrent use.
type Factory struct {
	rc   *rest.Client
	opts FactoryOptions

	// mu guards entries and the started state.
	mu      sync.Mutex
	entries map[factoryKey]*factoryEntry
	ctx     context.Context
	wg      sync.WaitGroup
	closed  bool
}

// NewFactory returns a factory over a rest client (for example
// DynamicClient.RESTClient()).
func NewFactory(rc *rest.Client, opts FactoryOptions) *Factory {
	return &Factory{rc: rc, opts: opts, entries: map[factoryKey]*factoryEntry{}}
}

func (f *Factory) key(gvr schema.GroupVersionResource, o InformerOptions, metadata bool) factoryKey {
	ns := o.Namespace
	switch {
	case o.AllNamespaces:
		ns = ""
	case ns == "":
		ns = f.opts.Namespace
	}
	k := factoryKey{gvr: gvr, ns: ns, labels: o.LabelSelector, fields: o.FieldSelector, keepMF: o.KeepManagedFields, compact: o.Compact, metadata: metadata}
	if o.Transform != nil {
		k.transform = reflect.ValueOf(o.Transform).Pointer()
	}
	return k
}

func (f *Factory) logger() *zap.Logger {
	if f.opts.Logger == nil {
		return zap.NewNop()
	}
	return f.opts.Logger
}

// ForResource returns the shared informer of whole objects for gvr and
// opts, creating it on first use (and starting it, if the factory has
// started). Do not call Run on it: the factory runs it.
func (f *Factory) ForResource(gvr schema.GroupVersionResource, opts InformerOptions) *Informer[*unstructured.Unstructured] {
	return f.forResource(gvr, opts, true)
}

// forResource is ForResource for a caller that holds the informer pinned
// (a user: until Release or Shutdown) or, with pin false, counted (a
// resource set, which gives it back with releaseHeld).
func (f *Factory) forResource(gvr schema.GroupVersionResource, opts InformerOptions, pin bool) *Informer[*unstructured.Unstructured] {
	k := f.key(gvr, opts, false)
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.entries[k]; ok {
		e.hold(pin)
		return e.informer.(*Informer[*unstructured.Unstructured])
	}
	io := Options[*unstructured.Unstructured]{
		ListOptions:      metav1.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector},
		ResyncPeriod:     f.opts.ResyncPeriod,
		DisableStreaming: f.opts.DisableStreaming,
		Logger:           f.logger().With(zap.String("gvr", gvr.String())),
		// managedFields are left out by the source's decoding (every
		// path: list items, watch events), so no transform is needed
		// for them.
		Transform: opts.Transform,
	}
	var srcOpts []SourceOption
	if !opts.KeepManagedFields {
		srcOpts = append(srcOpts, WithoutManagedFields())
	}
	var src Source[*unstructured.Unstructured] = NewSource(f.rc, gvr, k.ns, srcOpts...)
	if opts.Compact {
		io.storage = newCompactStorage()
		// The store keeps each object's text as the server sent it
		// rather than encoding the decoded object again.
		src = wireSource{src.(*unstructuredSource)}
	}
	inf := New[*unstructured.Unstructured](src, io)
	f.addLocked(k, inf, inf.Run, inf.HasSynced, inf.givenUp).hold(pin)
	return inf
}

// ForResourceMetadata returns the shared metadata-only informer for gvr:
// objects are *metav1.PartialObjectMetadata (the server sends only
// metadata). opts.Compact and opts.Transform do not apply.
func (f *Factory) ForResourceMetadata(gvr schema.GroupVersionResource, opts InformerOptions) *Informer[*metav1.PartialObjectMetadata] {
	return f.forResourceMetadata(gvr, opts, true)
}

// forResourceMetadata is forResource for ForResourceMetadata.
func (f *Factory) forResourceMetadata(gvr schema.GroupVersionResource, opts InformerOptions, pin bool) *Informer[*metav1.PartialObjectMetadata] {
	k := f.metadataKey(gvr, opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.entries[k]; ok {
		e.hold(pin)
		return e.informer.(*Informer[*metav1.PartialObjectMetadata])
	}
	io := Options[*metav1.PartialObjectMetadata]{
		ListOptions:      metav1.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector},
		ResyncPeriod:     f.opts.ResyncPeriod,
		DisableStreaming: f.opts.DisableStreaming,
		Logger:           f.logger().With(zap.String("gvr", gvr.String())),
	}
	if !opts.KeepManagedFields {
		io.Transform = func(p *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
			p.ManagedFields = nil
			return p, nil
		}
	}
	inf := New[*metav1.PartialObjectMetadata](NewMetadataSource(f.rc, gvr, k.ns, opts.KeepManagedFields), io)
	f.addLocked(k, inf, inf.Run, inf.HasSynced, inf.givenUp).hold(pin)
	return inf
}

// metadataKey is the key of a metadata-only informer (Compact and
// Transform do not apply to them).
func (f *Factory) metadataKey(gvr schema.GroupVersionResource, opts InformerOptions) factoryKey {
	opts.Compact, opts.Transform = false, nil
	return f.key(gvr, opts, true)
}

func (f *Factory) addLocked(k factoryKey, inf any, run func(context.Context) error, synced func() bool, givenUp func() error) *factoryEntry {
	e := &factoryEntry{key: k, informer: inf, run: run, synced: synced, givenUp: givenUp}
	f.entries[k] = e
	if f.ctx != nil && !f.closed {
		f.startLocked(e)
	}
	return e
}

// hold records one more holder of the entry (under the factory's lock).
func (e *factoryEntry) hold(pin bool) {
	if pin {
		e.pinned = true
	} else {
		e.held++
	}
}

func (f *Factory) startLocked(e *factoryEntry) {
	ctx, cancel := context.WithCancel(f.ctx)
	e.cancel = cancel
	e.done = make(chan struct{})
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer close(e.done)
		if err := e.run(ctx); err != nil {
			f.logger().Warn("informer stopped with an error", zap.String("gvr", e.key.gvr.String()), zap.Error(err))
		}
	}()
}

// Start starts every informer not yet running, and makes informers created
// later start at once. It may be called many times; informers stop when ctx
// is done (or on Shutdown). Informers created later run under the ctx of
// the first Start, or, once that ctx is done, of the next Start after it:
// a factory whose ctx ended starts new informers again when given a live
// one. An informer that stopped is not restarted (Release it and ask
// again).
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	if f.ctx == nil || f.ctx.Err() != nil {
		f.ctx = ctx
	}
	for _, e := range f.entries {
		if e.done == nil {
			f.startLocked(e)
		}
	}
}

// SyncError names a resource whose informer did not sync.
type SyncError struct {
	// GVR is the resource.
	GVR schema.GroupVersionResource
	// Namespace is the informer's namespace ("" for all).
	Namespace string
	// Err is why: the last list/watch error (forbidden, not found), or the
	// context's error.
	Err error
}

func (e *SyncError) Error() string {
	where := e.GVR.String()
	if e.Namespace != "" {
		where += " in namespace " + e.Namespace
	}
	return fmt.Sprintf("informer for %s did not sync: %v", where, e.Err)
}

// Unwrap returns the cause.
func (e *SyncError) Unwrap() error { return e.Err }

// WaitForSync waits until every started informer has synced. It returns
// an error naming each resource that failed — because listing it is
// forbidden or the resource does not exist (at once, rather than hanging),
// or because ctx ended first — joined with errors.Join, each a *SyncError.
// After Shutdown, an informer asked for later (which never runs) is such
// an error too.
func (f *Factory) WaitForSync(ctx context.Context) error {
	f.mu.Lock()
	entries := make([]*factoryEntry, 0, len(f.entries))
	var errs []error
	for _, e := range f.entries {
		switch {
		case e.done != nil:
			entries = append(entries, e)
		case f.closed:
			// Created after Shutdown: it will never run.
			errs = append(errs, &SyncError{GVR: e.key.gvr, Namespace: e.key.ns, Err: errors.New("the factory was shut down before this informer started")})
		}
	}
	f.mu.Unlock()
	sort.Slice(entries, func(i, j int) bool { return entries[i].key.gvr.String() < entries[j].key.gvr.String() })
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, e := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := waitEntry(ctx, e); err != nil {
				mu.Lock()
				errs = append(errs, &SyncError{GVR: e.key.gvr, Namespace: e.key.ns, Err: err})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return joinSorted(errs)
}

func waitEntry(ctx context.Context, e *factoryEntry) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if e.synced() {
			return nil
		}
		if err := e.givenUp(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			if err := e.givenUp(); err != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
			}
			return ctx.Err()
		case <-e.done:
			if e.synced() {
				return nil
			}
			return errors.New("the informer stopped before it synced")
		case <-t.C:
		}
	}
}

// Release stops the informer of whole objects for gvr and opts and forgets
// it (for example when its CRD was deleted), waiting until it has stopped,
// whoever else holds it. It reports whether there was one. (Resource sets
// give back their informers without stopping one that a caller of
// ForResource, or another set, still holds.)
func (f *Factory) Release(gvr schema.GroupVersionResource, opts InformerOptions) bool {
	return f.release(f.key(gvr, opts, false))
}

// ReleaseMetadata is Release for a metadata-only informer.
func (f *Factory) ReleaseMetadata(gvr schema.GroupVersionResource, opts InformerOptions) bool {
	return f.release(f.metadataKey(gvr, opts))
}

func (f *Factory) release(k factoryKey) bool {
	return f.releaseIf(k, func(*factoryEntry) bool { return true })
}

// releaseHeld gives back one counted hold (forResource with pin false):
// the informer stops once no resource set holds it and no user asked for
// it through ForResource or ForResourceMetadata.
func (f *Factory) releaseHeld(k factoryKey) bool {
	return f.releaseIf(k, func(e *factoryEntry) bool {
		if e.held > 0 {
			e.held--
		}
		return e.held == 0 && !e.pinned
	})
}

// releaseIf stops and forgets the entry of k if last (called under the
// lock) says so, waiting until it has stopped.
func (f *Factory) releaseIf(k factoryKey, last func(*factoryEntry) bool) bool {
	f.mu.Lock()
	e, ok := f.entries[k]
	if ok && !last(e) {
		f.mu.Unlock()
		return false
	}
	delete(f.entries, k)
	f.mu.Unlock()
	if !ok {
		return false
	}
	if e.cancel != nil {
		e.cancel()
		<-e.done
	}
	return true
}

// Shutdown stops every informer and waits until all their goroutines have
// exited. The factory cannot be started again.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.closed = true
	for _, e := range f.entries {
		if e.cancel != nil {
			e.cancel()
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
}
