package informer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/wire"
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
	// Logger receives debug logs (logr: V(1) and above); the zero value
	// logs nothing.
	Logger logr.Logger
	// Metrics receives what every informer of the factory does, each
	// named by its resource ("deployments.v1.apps", "configmaps.v1"); see
	// Metrics. Nil observes nothing.
	Metrics Metrics
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
	// Metadata-only informers ignore it (see MetadataTransform).
	Transform func(*unstructured.Unstructured) (*unstructured.Unstructured, error)
	// MetadataTransform is Transform for metadata-only informers (after
	// managedFields stripping); informers of whole objects ignore it.
	MetadataTransform func(*metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error)
	// Compact keeps objects as JSON bytes (the text the server sent, less
	// managedFields) and decodes them on each read (see RawJSON): far less
	// memory, slower reads. Metadata-only informers keep each object's
	// metadata as its protobuf encoding instead, and decode it on each read
	// (about a third of the memory for objects with a few labels and
	// annotations). A handler added to a compact informer that holds
	// objects gets each one decoded as it is delivered, so the replay of
	// the cache never holds all of it decoded at once.
	Compact bool
	// Shard, when set, caches only the objects in the shard's ranges and
	// follows its changes (see Shard). Informers with different Shards are
	// distinct.
	Shard *Shard
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
	shard     *Shard
	// proto is the Go type of a ForResourceProto informer's objects (nil
	// for the others).
	proto reflect.Type
}

// runner is what the factory needs of an *Informer[T], whatever T.
type runner interface {
	Run(ctx context.Context) error
	HasSynced() bool
	givenUp() error
}

type factoryEntry struct {
	key factoryKey
	// informer is the *Informer[T] of the key's kind (see shared).
	informer runner
	cancel   context.CancelFunc
	// done is closed when the informer has stopped, or, with skipped, when
	// the factory stopped without ever running it.
	done    chan struct{}
	started bool
	skipped bool
	// pinned: handed out by ForResource or ForResourceMetadata; held:
	// holds of resource sets not yet given back (releaseHeld).
	pinned bool
	held   int
}

// Factory hands out shared informers keyed by resource and options: every
// caller asking for the same one gets the same informer, run once by the
// factory's Run. It is safe for concurrent use.
type Factory struct {
	client dynamic.Interface
	opts   FactoryOptions

	// mu guards entries, ctx and the run state.
	mu      sync.Mutex
	entries map[factoryKey]*factoryEntry
	ctx     context.Context // Run's, while it runs
	ran     bool            // Run was called
	ended   bool            // Run has stopped its informers
	wg      sync.WaitGroup
}

// NewFactory returns a factory whose informers list and watch through
// client. With kdyn's own client (dynamic.NewForConfig, dynamic.New) they
// take its fast paths — lists decoded as they arrive, managedFields
// skipped undecoded, metadata as protobuf, relists that leave unchanged
// objects undecoded; with any other dynamic.Interface (dynamic/fake, a
// decorated client) they call its List and Watch.
func NewFactory(client dynamic.Interface, opts FactoryOptions) *Factory {
	return &Factory{client: client, opts: opts, entries: map[factoryKey]*factoryEntry{}}
}

func (f *Factory) key(gvr schema.GroupVersionResource, o InformerOptions, metadata bool) factoryKey {
	var transform any = o.Transform
	if metadata {
		transform = o.MetadataTransform
	}
	ns := o.Namespace
	switch {
	case o.AllNamespaces:
		ns = ""
	case ns == "":
		ns = f.opts.Namespace
	}
	k := factoryKey{gvr: gvr, ns: ns, labels: o.LabelSelector, fields: o.FieldSelector, keepMF: o.KeepManagedFields, compact: o.Compact, metadata: metadata, shard: o.Shard}
	if v := reflect.ValueOf(transform); !v.IsNil() {
		k.transform = v.Pointer()
	}
	return k
}

func (f *Factory) logger() logr.Logger {
	return f.opts.Logger
}

// ForResource returns the shared informer of whole objects for gvr and
// opts, creating it on first use (it runs once the factory runs, at once
// if it already does). Do not call Run on it: the factory runs it.
func (f *Factory) ForResource(gvr schema.GroupVersionResource, opts InformerOptions) *Informer[*unstructured.Unstructured] {
	return shared(f, wholeObjects, gvr, opts, true)
}

// ForResourceMetadata returns the shared metadata-only informer for gvr:
// objects are *metav1.PartialObjectMetadata (with kdyn's own client, the
// server sends only metadata). opts.Compact keeps each object's metadata
// as its protobuf encoding (see InformerOptions.Compact); opts.Transform
// does not apply, opts.MetadataTransform does.
func (f *Factory) ForResourceMetadata(gvr schema.GroupVersionResource, opts InformerOptions) *Informer[*metav1.PartialObjectMetadata] {
	return shared(f, metadataOnly, gvr, opts, true)
}

// objectKind is one kind of informer a factory hands out: of whole
// objects, or of metadata only.
type objectKind[T Object] struct {
	metadata bool
	// keyed, when set, completes the factory key (ForResourceProto's
	// type and transform).
	keyed func(*factoryKey)
	// build returns the informer of ri with the factory-wide options o.
	build func(ri dynamic.ResourceInterface, opts InformerOptions, o Options[T]) *Informer[T]
}

var (
	wholeObjects = objectKind[*unstructured.Unstructured]{
		build: func(ri dynamic.ResourceInterface, opts InformerOptions, o Options[*unstructured.Unstructured]) *Informer[*unstructured.Unstructured] {
			// managedFields are left out by the source's decoding (list
			// items and watch events alike), so no transform is needed for
			// them.
			o.Transform = opts.Transform
			d := wire.Decoding{OmitManagedFields: !opts.KeepManagedFields}
			if opts.Compact {
				o.storage = newCompactStorage()
				// The store keeps each object's text as the server sent
				// it rather than encoding the decoded object again.
				d.Text = true
			}
			return New[*unstructured.Unstructured](newObjectSource(ri, d), o)
		},
	}
	metadataOnly = objectKind[*metav1.PartialObjectMetadata]{
		metadata: true,
		build: func(ri dynamic.ResourceInterface, opts InformerOptions, o Options[*metav1.PartialObjectMetadata]) *Informer[*metav1.PartialObjectMetadata] {
			o.Transform = opts.MetadataTransform
			if opts.Compact {
				o.storage = newCompactMetadataStorage()
			}
			return New(NewMetadataSource(ri, SourceOptions{KeepManagedFields: opts.KeepManagedFields}), o)
		},
	}
)

// shared returns the factory's informer of kind k for gvr and opts,
// creating it on first use, for a caller that holds it pinned (a user:
// until Release) or, with pin false, counted (a resource set, which gives
// it back with releaseHeld).
func shared[T Object](f *Factory, k objectKind[T], gvr schema.GroupVersionResource, opts InformerOptions, pin bool) *Informer[T] {
	key := f.key(gvr, opts, k.metadata)
	if k.keyed != nil {
		k.keyed(&key)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.entries[key]; ok {
		e.hold(pin)
		// The key's kind fixes the informer's type.
		return e.informer.(*Informer[T])
	}
	inf := k.build(f.client.Resource(gvr).Namespace(key.ns), opts, Options[T]{
		ListOptions:      metav1.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector},
		ResyncPeriod:     f.opts.ResyncPeriod,
		DisableStreaming: f.opts.DisableStreaming,
		Logger:           f.logger().WithValues("gvr", gvr.String()),
		Metrics:          f.opts.Metrics,
		Name:             ResourceName(gvr),
		Shard:            opts.Shard,
	})
	e := &factoryEntry{key: key, informer: inf, done: make(chan struct{})}
	f.entries[key] = e
	switch {
	case f.ended:
		e.skipped = true
		close(e.done)
	case f.ctx != nil:
		f.startLocked(e)
	}
	e.hold(pin)
	return inf
}

// ResourceName is how a Factory names an informer of gvr to Metrics:
// resource.version.group, as kubectl spells a fully qualified resource
// ("deployments.v1.apps"; "configmaps.v1" for the core group).
func ResourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource + "." + gvr.Version
	}
	return gvr.Resource + "." + gvr.Version + "." + gvr.Group
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
	e.cancel, e.started = cancel, true
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer close(e.done)
		if err := e.informer.Run(ctx); err != nil {
			f.logger().Error(err, "informer stopped with an error", "gvr", e.key.gvr.String())
		}
	}()
}

// Run runs the factory's informers — those handed out before and those
// handed out while it runs — until ctx is done, then returns once every
// one of them has stopped. It may be called once. Informers handed out
// after Run returned never run (WaitForSync reports them).
func (f *Factory) Run(ctx context.Context) error {
	f.mu.Lock()
	if f.ran {
		f.mu.Unlock()
		return errors.New("informer: Factory.Run called twice")
	}
	f.ran = true
	f.ctx = ctx
	for _, e := range f.entries {
		f.startLocked(e)
	}
	f.mu.Unlock()
	<-ctx.Done()
	f.mu.Lock()
	f.ctx, f.ended = nil, true
	for _, e := range f.entries {
		if !e.started && !e.skipped {
			e.skipped = true
			close(e.done)
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
	return nil
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

// WaitForSync waits until every informer the factory has handed out has
// synced (those handed out before Run is called wait for it). It returns
// an error naming each resource that failed — because listing it is
// forbidden or the resource does not exist (at once, rather than hanging),
// because the factory stopped first, or because ctx ended first — joined
// with errors.Join, each a *SyncError.
func (f *Factory) WaitForSync(ctx context.Context) error {
	f.mu.Lock()
	entries := make([]*factoryEntry, 0, len(f.entries))
	for _, e := range f.entries {
		entries = append(entries, e)
	}
	f.mu.Unlock()
	sort.Slice(entries, func(i, j int) bool { return entries[i].key.gvr.String() < entries[j].key.gvr.String() })
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
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
		if e.informer.HasSynced() {
			return nil
		}
		if err := e.informer.givenUp(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			if err := e.informer.givenUp(); err != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
			}
			return ctx.Err()
		case <-e.done:
			switch {
			case e.informer.HasSynced():
				return nil
			case e.skipped:
				return errors.New("the factory stopped before this informer ran")
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
	return f.release(f.key(gvr, opts, true))
}

func (f *Factory) release(k factoryKey) bool {
	return f.releaseIf(k, func(*factoryEntry) bool { return true })
}

// releaseHeld gives back one counted hold (shared with pin false): the
// informer stops once no resource set holds it and no user asked for it
// through ForResource or ForResourceMetadata.
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
