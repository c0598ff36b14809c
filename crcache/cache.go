package crcache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	kdynrest "github.com/kdyn/kdyn/rest"
)

// Cache is a controller-runtime cache.Cache on kdyn's informers. Create it
// with New or NewWith (a manager does, given either as
// manager.Options.NewCache).
type Cache struct {
	o             Options
	scheme        *runtime.Scheme
	mapper        apimeta.RESTMapper
	client        dynamic.Interface
	failOnMissing bool
	// namespaced and clusterScoped configure kinds without a ByObject
	// entry; byKind those with one.
	namespaced, clusterScoped kindConfig
	byKind                    map[schema.GroupVersionKind]kindConfig

	mu        sync.Mutex
	resources map[schema.GroupVersionKind]*resource
	// ctx is Start's context (nil before Start); started is closed by
	// Start.
	ctx     context.Context
	started chan struct{}

	fmu       sync.Mutex
	factories map[time.Duration]*informer.Factory
	running   sync.WaitGroup
}

var (
	_ cache.Cache         = (*Cache)(nil)
	_ cache.NewCacheFunc  = New
	_ cache.Informer      = (*sharedInformer)(nil)
	_ client.FieldIndexer = (*Cache)(nil)
)

// New returns a cache for cfg and opts with kdyn's defaults (see Options):
// it has the signature of manager.Options.NewCache, so
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{NewCache: crcache.New})
//
// is all an operator changes.
func New(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	return newCache(cfg, opts, Options{})
}

// NewWith returns a cache.NewCacheFunc that builds caches with o, for
// example NewWith(Options{Compact: true}).
func NewWith(o Options) cache.NewCacheFunc {
	return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		return newCache(cfg, opts, o)
	}
}

func newCache(cfg *rest.Config, opts cache.Options, o Options) (*Cache, error) {
	if opts.NewInformer != nil {
		return nil, errors.New("crcache: Options.NewInformer is not supported: the cache's informers are kdyn's")
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if opts.HTTPClient == nil {
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, fmt.Errorf("could not create HTTP client from config: %w", err)
		}
		opts.HTTPClient = hc
	}
	if opts.Scheme == nil {
		opts.Scheme = scheme.Scheme
	}
	if opts.Mapper == nil {
		m, err := apiutil.NewDynamicRESTMapper(cfg, opts.HTTPClient)
		if err != nil {
			return nil, fmt.Errorf("could not create RESTMapper from config: %w", err)
		}
		opts.Mapper = m
	}
	namespaced, clusterScoped, byKind, err := resolveOptions(&opts)
	if err != nil {
		return nil, err
	}
	// client-go's rate limit defaults, so the cache asks no more of the
	// server than the manager's own clients may.
	qps, burst := cfg.QPS, cfg.Burst
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	dc, err := dynamic.NewForConfigAndClient(&kdynrest.Config{
		Host: cfg.Host, APIPath: cfg.APIPath, UserAgent: cfg.UserAgent, QPS: qps, Burst: burst,
	}, opts.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("crcache: %w", err)
	}
	return &Cache{
		o: o, scheme: opts.Scheme, mapper: opts.Mapper, client: dc, failOnMissing: opts.ReaderFailOnMissingInformer,
		namespaced: namespaced, clusterScoped: clusterScoped, byKind: byKind,
		resources: map[schema.GroupVersionKind]*resource{}, started: make(chan struct{}),
		factories: map[time.Duration]*informer.Factory{},
	}, nil
}

// factory returns the informer factory of resync period p, running it if
// the cache runs.
func (c *Cache) factory(p time.Duration) *informer.Factory {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if f, ok := c.factories[p]; ok {
		return f
	}
	f := informer.NewFactory(c.client, informer.FactoryOptions{ResyncPeriod: p, DisableStreaming: c.o.DisableStreaming})
	c.factories[p] = f
	if ctx := c.startedCtx(); ctx != nil {
		c.run(ctx, f)
	}
	return f
}

// run runs f until ctx is done (under c.fmu).
func (c *Cache) run(ctx context.Context, f *informer.Factory) {
	c.running.Add(1)
	go func() {
		defer c.running.Done()
		_ = f.Run(ctx)
	}()
}

// startedCtx is Start's context, or nil before Start.
func (c *Cache) startedCtx() context.Context {
	select {
	case <-c.started:
		return c.ctx
	default:
		return nil
	}
}

// ctxDone is closed when the cache stops (never before Start).
func (c *Cache) ctxDone() <-chan struct{} {
	if ctx := c.startedCtx(); ctx != nil {
		return ctx.Done()
	}
	return nil
}

// Start runs the cache's informers — those asked for before and those
// asked for later — until ctx is done, then returns once they have
// stopped.
func (c *Cache) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.ctx != nil {
		c.mu.Unlock()
		return errors.New("informer already started")
	}
	c.ctx = ctx
	c.fmu.Lock()
	close(c.started)
	for _, f := range c.factories {
		c.run(ctx, f)
	}
	c.fmu.Unlock()
	c.mu.Unlock()
	<-ctx.Done()
	c.running.Wait()
	return nil
}

// WaitForCacheSync waits until the cache has started and every informer
// asked for so far has synced; it reports false if ctx ends first.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-c.started:
	case <-ctx.Done():
		return false
	}
	c.mu.Lock()
	rs := make([]*resource, 0, len(c.resources))
	for _, r := range c.resources {
		rs = append(rs, r)
	}
	c.mu.Unlock()
	for _, r := range rs {
		if r.waitForSync(ctx) != nil {
			return false
		}
	}
	return true
}

// resourceFor returns the resource of gvk for view v, creating it unless
// only an existing one may be used. A typed or Unstructured view turns a
// metadata-only resource into one of whole objects.
func (c *Cache) resourceFor(gvk schema.GroupVersionKind, v view, create bool) (*resource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.resources[gvk]; ok {
		if v.form != metadataForm {
			r.upgrade()
		}
		return r, nil
	}
	if !create {
		return nil, &cache.ErrResourceNotCached{GVK: gvk}
	}
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	namespaced := mapping.Scope.Name() == apimeta.RESTScopeNameNamespace
	cfg, ok := c.byKind[gvk]
	if !ok {
		cfg = c.clusterScoped
		if namespaced {
			cfg = c.namespaced
		}
	}
	r := c.newResource(gvk, mapping.Resource, namespaced, cfg, v.form != metadataForm)
	c.resources[gvk] = r
	return r, nil
}

// reader returns the resource for a read of obj (gvk, view v), synced,
// with controller-runtime's errors.
func (c *Cache) reader(ctx context.Context, gvk schema.GroupVersionKind, v view, obj runtime.Object) (*resource, error) {
	r, err := c.resourceFor(gvk, v, !c.failOnMissing)
	if err != nil {
		return nil, err
	}
	if c.startedCtx() == nil {
		return nil, &cache.ErrCacheNotStarted{}
	}
	if err := r.waitForSync(ctx); err != nil {
		return nil, syncTimeout(obj)
	}
	return r, nil
}

// syncTimeout is controller-runtime's error for a read or GetInformer
// whose context ended before the informer synced.
func syncTimeout(obj runtime.Object) error {
	return apierrors.NewTimeoutError(fmt.Sprintf("failed waiting for %T Informer to sync", obj), 0)
}

// Get reads the object with key into out (a typed object, Unstructured or
// PartialObjectMetadata) from the cache, starting an informer for its kind
// on first use.
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, out client.Object, opts ...client.GetOption) error {
	gvk, err := apiutil.GVKForObject(out, c.scheme)
	if err != nil {
		return err
	}
	v, err := viewOf(out, gvk)
	if err != nil {
		return err
	}
	r, err := c.reader(ctx, gvk, v, out)
	if err != nil {
		return err
	}
	var getOpts client.GetOptions
	getOpts.ApplyOptions(opts)
	if !r.namespaced {
		key.Namespace = ""
	}
	s := r.scopeFor(key.Namespace)
	if s == nil {
		return fmt.Errorf("unable to get: %v because of unknown namespace for the cache", key)
	}
	share := s.cfg.noCopy || (getOpts.UnsafeDisableDeepCopy != nil && *getOpts.UnsafeDisableDeepCopy)
	obj, ok, err := r.backing(s).get(v, storeKey(key), share)
	if err != nil {
		return err
	}
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	return set(out, obj)
}

// storeKey is an informer's key of k.
func storeKey(k client.ObjectKey) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// backing is s's current backing.
func (r *resource) backing(s *scope) backing {
	r.mu.Lock()
	defer r.mu.Unlock()
	return s.backing
}

// List reads the objects that opts select into list from the cache. A
// field selector must be exact matches of fields indexed with IndexField.
func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := apiutil.GVKForObject(list, c.scheme)
	if err != nil {
		return err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	var item runtime.Object
	switch list.(type) {
	case *unstructured.UnstructuredList:
		item = &unstructured.Unstructured{}
	case *metav1.PartialObjectMetadataList:
		item = &metav1.PartialObjectMetadata{}
	default:
		if item, err = c.scheme.New(gvk); err != nil {
			return err
		}
	}
	v, err := viewOf(item, gvk)
	if err != nil {
		return err
	}
	r, err := c.reader(ctx, gvk, v, item)
	if err != nil {
		return err
	}
	var lo client.ListOptions
	lo.ApplyOptions(opts)
	if lo.Continue != "" {
		return errors.New("continue list option is not supported by the cache")
	}
	ns := lo.Namespace
	if !r.namespaced {
		ns = ""
	}
	var match []indexValue
	if lo.FieldSelector != nil {
		reqs := lo.FieldSelector.Requirements()
		if len(reqs) == 0 {
			return errors.New("non-exact field matches are not supported by the cache")
		}
		for _, req := range reqs {
			if req.Operator != selection.Equals && req.Operator != selection.DoubleEquals {
				return errors.New("non-exact field matches are not supported by the cache")
			}
			match = append(match, indexValue{index: fieldIndexName(req.Field), value: namespacedKey(ns, req.Value)})
		}
	}
	var keep func(metav1.Object) bool
	if sel := lo.LabelSelector; sel != nil && !sel.Empty() {
		keep = func(o metav1.Object) bool { return sel.Matches(labels.Set(o.GetLabels())) }
	}
	scopes := r.scopes
	if ns != "" {
		s := r.scopeFor(ns)
		if s == nil {
			return fmt.Errorf("unable to list: %v because of unknown namespace for the cache", ns)
		}
		scopes = []*scope{s}
	}
	limit := int(lo.Limit)
	var objs []runtime.Object
	for _, s := range scopes {
		share := s.cfg.noCopy || (lo.UnsafeDisableDeepCopy != nil && *lo.UnsafeDisableDeepCopy)
		left := 0
		if limit > 0 {
			if left = limit - len(objs); left <= 0 {
				break
			}
		}
		got, err := r.backing(s).list(v, ns, match, keep, left, share)
		if err != nil {
			return err
		}
		for _, o := range got {
			objs = append(objs, o)
		}
	}
	if err := apimeta.SetList(list, objs); err != nil {
		return err
	}
	list.SetContinue("continue-not-supported")
	return nil
}

// fieldIndexName is controller-runtime's name of the index of a field.
func fieldIndexName(field string) string { return "field:" + field }

// namespacedKey is controller-runtime's index value of a field value in
// namespace ns ("" for all namespaces).
func namespacedKey(ns, value string) string {
	if ns == "" {
		ns = "__all_namespaces"
	}
	return ns + "/" + value
}

// GetInformer returns the informer of obj's kind, delivering objects of
// obj's type (typed, Unstructured or PartialObjectMetadata), creating it
// on first use. Unless cache.BlockUntilSynced(false) is given, it waits
// for the informer to sync when the cache has started.
func (c *Cache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return nil, err
	}
	return c.informer(ctx, gvk, obj, opts)
}

// GetInformerForKind is GetInformer for the scheme's type of gvk.
func (c *Cache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	obj, err := c.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	return c.informer(ctx, gvk, obj, opts)
}

func (c *Cache) informer(ctx context.Context, gvk schema.GroupVersionKind, obj runtime.Object, opts []cache.InformerGetOption) (cache.Informer, error) {
	v, err := viewOf(obj, gvk)
	if err != nil {
		return nil, err
	}
	r, err := c.resourceFor(gvk, v, true)
	if err != nil {
		return nil, err
	}
	var o cache.InformerGetOptions
	for _, opt := range opts {
		opt(&o)
	}
	block := o.BlockUntilSynced == nil || *o.BlockUntilSynced
	if block && c.startedCtx() != nil && !r.hasSynced() {
		if err := r.waitForSync(ctx); err != nil {
			return nil, syncTimeout(obj)
		}
	}
	return &sharedInformer{r: r, v: v}, nil
}

// RemoveInformer stops and forgets the informer of obj's kind (all the
// forms it is read in: they share one store).
func (c *Cache) RemoveInformer(_ context.Context, obj client.Object) error {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return err
	}
	c.mu.Lock()
	r, ok := c.resources[gvk]
	delete(c.resources, gvk)
	c.mu.Unlock()
	if ok {
		r.remove()
	}
	return nil
}

// IndexField adds an index of field to obj's kind, with the values
// extractValue gives each object (read as obj's type), so that List can
// select by it with client.MatchingFields.
func (c *Cache) IndexField(ctx context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	return inf.AddIndexers(toolscache.Indexers{fieldIndexName(field): func(raw any) ([]string, error) {
		o, ok := raw.(client.Object)
		if !ok {
			return nil, fmt.Errorf("object of type %T is not an Object", raw)
		}
		ns := o.GetNamespace()
		vals := extractValue(o)
		out := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			out = append(out, namespacedKey(ns, v))
		}
		if ns != "" {
			for _, v := range vals {
				out = append(out, namespacedKey("", v))
			}
		}
		return out, nil
	}})
}

// sharedInformer is the cache.Informer of a resource read in one form.
type sharedInformer struct {
	r *resource
	v view
}

// AddEventHandler registers h for the informer's events, objects in the
// informer's form.
func (i *sharedInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.r.addHandler(i.v, h)
}

// AddEventHandlerWithResyncPeriod is AddEventHandler: resyncs follow the
// cache's SyncPeriod, not the handler's.
func (i *sharedInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, _ time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.r.addHandler(i.v, h)
}

// AddEventHandlerWithOptions is AddEventHandler (options are not used:
// the resync period is the cache's, logs go to the cache's logger).
func (i *sharedInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.r.addHandler(i.v, h)
}

// RemoveEventHandler removes a registration AddEventHandler returned.
func (i *sharedInformer) RemoveEventHandler(h toolscache.ResourceEventHandlerRegistration) error {
	reg, ok := h.(*registration)
	if !ok || reg.r != i.r {
		return fmt.Errorf("crcache: %T is not a registration of this informer", h)
	}
	reg.remove()
	return nil
}

// AddIndexers adds indexes whose functions get objects in the informer's
// form.
func (i *sharedInformer) AddIndexers(indexers toolscache.Indexers) error {
	return i.r.addIndexers(i.v, indexers)
}

// HasSynced reports whether the informer's stores have synced.
func (i *sharedInformer) HasSynced() bool {
	return i.r.c.startedCtx() != nil && i.r.hasSynced()
}

// HasSyncedChecker returns a DoneChecker closed once HasSynced.
func (i *sharedInformer) HasSyncedChecker() toolscache.DoneChecker {
	return newDoneChecker(i.r.gvk.String(), i.HasSynced, i.r.stopped)
}

// IsStopped reports whether the informer has stopped (removed, or the
// cache stopped).
func (i *sharedInformer) IsStopped() bool {
	select {
	case <-i.r.stopped:
		return true
	default:
	}
	ctx := i.r.c.startedCtx()
	return ctx != nil && ctx.Err() != nil
}

// addIndexers adds indexers to every store of r (and to those of a later
// upgrade).
func (r *resource) addIndexers(v view, indexers toolscache.Indexers) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, fn := range indexers {
		for _, s := range r.scopes {
			if err := s.backing.addIndexer(name, v, fn); err != nil {
				return err
			}
		}
		r.indexers = append(r.indexers, namedIndexer{name: name, v: v, fn: fn})
	}
	return nil
}

// NeedLeaderElection reports false: every replica's manager starts its
// cache, whether it leads or not (as controller-runtime's does).
func (c *Cache) NeedLeaderElection() bool { return false }
