package restmapper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/internal/generation"
	"github.com/kdyn/kdyn/rest"
)

// Defaults for Options.
const (
	// DefaultNegativeCacheTTL is how long a lookup that missed even after a
	// refresh is answered "no match" without asking the server again.
	DefaultNegativeCacheTTL = 5 * time.Second
	// DefaultRefreshTimeout bounds a refresh triggered by a lookup made
	// through a method without a context.
	DefaultRefreshTimeout = 30 * time.Second
)

// Options configure a Mapper. The zero value is useful.
type Options struct {
	// NegativeCacheTTL: see DefaultNegativeCacheTTL. Negative disables the
	// negative cache.
	NegativeCacheTTL time.Duration
	// MaxAge, when positive, makes a lookup on an index older than this
	// start a refresh in the background (the lookup itself is answered from
	// the current index), so that resources deleted from the server stop
	// resolving. Zero means no background refresh: the index changes only on
	// a miss, Refresh or Reset.
	MaxAge time.Duration
	// RefreshTimeout: see DefaultRefreshTimeout.
	RefreshTimeout time.Duration
	// Warn receives warnings such as a short name claimed by several
	// groups. Nil means they are logged at warn level.
	Warn func(msg string)
	// Logger receives debug logs (logr: V(1) and above); the zero value
	// logs nothing.
	Logger logr.Logger

	now func() time.Time
}

// Mapper is a meta.RESTMapper (and meta.ResettableRESTMapper,
// meta.RESTMapperWithContext) fed lazily by discovery. It is safe for
// concurrent use. See the package documentation for its refresh rules.
type Mapper struct {
	dc   *discovery.Client
	opts Options
	log  logr.Logger

	idx        atomic.Pointer[index]
	sf         singleflight.Group
	refreshing atomic.Bool
	// gen counts Resets: an index built from discovery asked before one is
	// not kept after it.
	gen generation.Counter

	negMu sync.Mutex
	neg   map[string]time.Time
}

var (
	_ meta.RESTMapper                      = (*Mapper)(nil)
	_ meta.ResettableRESTMapper            = (*Mapper)(nil)
	_ meta.RESTMapperWithContext           = (*Mapper)(nil)
	_ meta.ResettableRESTMapperWithContext = (*Mapper)(nil)
)

// NewForConfig returns a Mapper over a memory-cached discovery client for
// cfg. Nothing is fetched until the first lookup.
func NewForConfig(cfg *rest.Config) (*Mapper, error) {
	dc, err := discovery.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return New(dc, Options{Logger: cfg.Logger})
}

// New returns a Mapper over a discovery client, which decides the caching
// (memory, or disk for short-lived programs). Nothing is fetched until the
// first lookup.
func New(dc *discovery.Client, opts Options) (*Mapper, error) {
	if dc == nil {
		return nil, errors.New("restmapper: nil discovery client")
	}
	if opts.NegativeCacheTTL == 0 {
		opts.NegativeCacheTTL = DefaultNegativeCacheTTL
	}
	if opts.RefreshTimeout <= 0 {
		opts.RefreshTimeout = DefaultRefreshTimeout
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	log := opts.Logger
	if opts.Warn == nil {
		opts.Warn = func(msg string) { log.Info(msg) }
	}
	return &Mapper{dc: dc, opts: opts, log: log, neg: map[string]time.Time{}}, nil
}

// Discovery returns the discovery client behind the mapper.
func (m *Mapper) Discovery() *discovery.Client { return m.dc }

// current returns the index, loading it on first use. An index older than
// MaxAge starts a background refresh.
func (m *Mapper) current(ctx context.Context) (*index, error) {
	if idx := m.idx.Load(); idx != nil {
		m.maybeRefreshInBackground(idx)
		return idx, nil
	}
	gen := m.gen.Read(nil)
	v, err, _ := m.sf.Do(generation.Key("load", gen), func() (any, error) {
		if idx := m.idx.Load(); idx != nil {
			return idx, nil
		}
		s, err := m.dc.Snapshot(ctx)
		if err != nil {
			return nil, fmt.Errorf("restmapper: %w", err)
		}
		idx := buildIndex(s, m.opts.now())
		m.gen.IfCurrent(gen, func() { m.idx.Store(idx) })
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*index), nil
}

// maybeRefreshInBackground starts one background refresh when idx is older
// than MaxAge.
func (m *Mapper) maybeRefreshInBackground(idx *index) {
	if m.opts.MaxAge <= 0 || m.opts.now().Sub(idx.builtAt) <= m.opts.MaxAge || !m.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer m.refreshing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), m.opts.RefreshTimeout)
		defer cancel()
		if _, err := m.refresh(ctx); err != nil {
			m.log.V(4).Info("background discovery refresh failed", "error", err)
		}
	}()
}

// Refresh asks discovery again (revalidating with ETags) and rebuilds the
// index. Concurrent calls share one refresh.
func (m *Mapper) Refresh(ctx context.Context) error {
	_, err := m.refresh(ctx)
	return err
}

func (m *Mapper) refresh(ctx context.Context) (*index, error) {
	gen := m.gen.Read(nil)
	v, err, _ := m.sf.Do(generation.Key("refresh", gen), func() (any, error) {
		s, err := m.dc.Refresh(ctx)
		if err != nil {
			return nil, fmt.Errorf("restmapper: refresh discovery: %w", err)
		}
		idx := buildIndex(s, m.opts.now())
		m.gen.IfCurrent(gen, func() { m.idx.Store(idx) })
		m.log.V(4).Info("REST mapper refreshed", "resources", len(idx.entries))
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*index), nil
}

// Reset drops everything the mapper knows; the next lookup rediscovers.
func (m *Mapper) Reset() {
	m.gen.Advance(func() {
		m.dc.Invalidate()
		m.idx.Store(nil)
	})
	m.negMu.Lock()
	m.neg = map[string]time.Time{}
	m.negMu.Unlock()
}

// ResetWithContext is Reset.
func (m *Mapper) ResetWithContext(context.Context) { m.Reset() }

func (m *Mapper) negativeCached(key string) bool {
	if m.opts.NegativeCacheTTL < 0 {
		return false
	}
	m.negMu.Lock()
	defer m.negMu.Unlock()
	t, ok := m.neg[key]
	if !ok {
		return false
	}
	if m.opts.now().Sub(t) >= m.opts.NegativeCacheTTL {
		delete(m.neg, key)
		return false
	}
	return true
}

// addNegative caches a miss found in generation gen, unless
// a Reset came since (its clearing of the cache follows its gen change, so
// an entry added before that change is cleared with the rest).
func (m *Mapper) addNegative(gen uint64, key string) {
	if m.opts.NegativeCacheTTL < 0 {
		return
	}
	m.negMu.Lock()
	defer m.negMu.Unlock()
	if m.gen.Read(nil) != gen {
		return
	}
	now := m.opts.now()
	if len(m.neg) > 1000 {
		for k, t := range m.neg {
			if now.Sub(t) >= m.opts.NegativeCacheTTL {
				delete(m.neg, k)
			}
		}
	}
	m.neg[key] = now
}

// lookup runs f on the current index; on a miss it refreshes discovery
// once (shared with concurrent misses, skipped while the key is in the
// negative cache) and tries again.
func lookup[T any](ctx context.Context, m *Mapper, group string, key func() string, f func(*index) (T, error)) (T, error) {
	idx, err := m.current(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := f(idx)
	if err == nil || !meta.IsNoMatchError(err) {
		return v, err
	}
	k := key()
	if m.negativeCached(k) {
		return v, annotateFailed(err, idx, group)
	}
	gen := m.gen.Read(nil)
	idx2, rerr := m.refresh(ctx)
	if rerr != nil {
		m.log.V(4).Info("discovery refresh after a mapper miss failed", "error", rerr)
		return v, annotateFailed(err, idx, group)
	}
	v, err = f(idx2)
	if err != nil && meta.IsNoMatchError(err) {
		m.addNegative(gen, k)
		return v, annotateFailed(err, idx2, group)
	}
	return v, err
}

// annotateFailed adds to a no-match error for a group whose discovery
// failed the failed group-versions, since the resource may live there.
// errors.Is and meta.IsNoMatchError still see the original error.
func annotateFailed(err error, idx *index, group string) error {
	if idx.snap.Failed == nil || group == "" {
		return err
	}
	failed := map[schema.GroupVersion]error{}
	for gv, cause := range idx.snap.Failed.Groups {
		if gv.Group == group {
			failed[gv] = cause
		}
	}
	if len(failed) == 0 {
		return err
	}
	return &withDiscoveryFailure{err: err, failed: &discovery.GroupDiscoveryFailedError{Groups: failed}}
}

type withDiscoveryFailure struct {
	err    error
	failed *discovery.GroupDiscoveryFailedError
}

func (w *withDiscoveryFailure) Error() string {
	gvs := w.failed.GroupVersions()
	names := make([]string, len(gvs))
	for i, gv := range gvs {
		names[i] = gv.String()
	}
	return w.err.Error() + " (discovery failed for " + strings.Join(names, ", ") + ", which may serve it)"
}

func (w *withDiscoveryFailure) Unwrap() []error { return []error{w.err, w.failed} }

func (m *Mapper) bg() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), m.opts.RefreshTimeout)
}

// KindFor returns the kind of the best match for a partial resource (see
// ResourcesFor).
func (m *Mapper) KindFor(resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	ctx, cancel := m.bg()
	defer cancel()
	return m.KindForWithContext(ctx, resource)
}

// KindForWithContext is KindFor with a context for the discovery requests
// a miss may cause.
func (m *Mapper) KindForWithContext(ctx context.Context, resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	e, err := m.resourceFor(ctx, resource)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return e.gvk, nil
}

// KindsFor returns the kinds of every match for a partial resource, in
// priority order.
func (m *Mapper) KindsFor(resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	ctx, cancel := m.bg()
	defer cancel()
	return m.KindsForWithContext(ctx, resource)
}

// KindsForWithContext is KindsFor with a context.
func (m *Mapper) KindsForWithContext(ctx context.Context, resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	es, err := m.resourcesFor(ctx, resource)
	if err != nil {
		return nil, err
	}
	out := make([]schema.GroupVersionKind, len(es))
	for i, e := range es {
		out[i] = e.gvk
	}
	return out, nil
}

// ResourceFor returns the best match for a partial resource: a plural or
// singular name, a short name or a kind (any case), with optional group
// and version. Matches are ranked by how the name matched (plural or
// singular, then short name, then kind) and then by priority (see the
// package documentation); a short name claimed by several groups resolves
// to the first and triggers a warning.
func (m *Mapper) ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	ctx, cancel := m.bg()
	defer cancel()
	return m.ResourceForWithContext(ctx, input)
}

// ResourceForWithContext is ResourceFor with a context.
func (m *Mapper) ResourceForWithContext(ctx context.Context, input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	e, err := m.resourceFor(ctx, input)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return e.gvr, nil
}

// ResourcesFor returns every match for a partial resource, in priority
// order (best first).
func (m *Mapper) ResourcesFor(input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	ctx, cancel := m.bg()
	defer cancel()
	return m.ResourcesForWithContext(ctx, input)
}

// ResourcesForWithContext is ResourcesFor with a context.
func (m *Mapper) ResourcesForWithContext(ctx context.Context, input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	es, err := m.resourcesFor(ctx, input)
	if err != nil {
		return nil, err
	}
	out := make([]schema.GroupVersionResource, len(es))
	for i, e := range es {
		out[i] = e.gvr
	}
	return out, nil
}

func (m *Mapper) resourcesFor(ctx context.Context, input schema.GroupVersionResource) ([]*entry, error) {
	return lookup(ctx, m, input.Group, func() string { return "r/" + input.String() }, func(idx *index) ([]*entry, error) {
		return idx.matchResource(input)
	})
}

func (m *Mapper) resourceFor(ctx context.Context, input schema.GroupVersionResource) (*entry, error) {
	es, err := m.resourcesFor(ctx, input)
	if err != nil {
		return nil, err
	}
	m.warnShortName(input.Resource, es)
	return es[0], nil
}

// warnShortName warns when a short name resolved among several
// group-resources.
func (m *Mapper) warnShortName(name string, es []*entry) {
	if len(es) < 2 {
		return
	}
	idx := m.idx.Load()
	if idx == nil {
		return
	}
	lname := strings.ToLower(name)
	short := false
	for _, nm := range idx.byName[lname] {
		if nm.e == es[0] && nm.how == byShortName {
			short = true
		}
	}
	if !short {
		return
	}
	var others []string
	for _, e := range es[1:] {
		if e.gvr.GroupResource() != es[0].gvr.GroupResource() {
			others = append(others, e.gvr.GroupResource().String())
		}
	}
	if len(others) == 0 {
		return
	}
	// client-go's shortcut expander's words, one warning per other claim.
	for _, o := range dedup(others) {
		m.opts.Warn(fmt.Sprintf("short name %q could also match lower priority resource %s", name, o))
	}
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// matchResource implements the partial-resource rules on one index.
func (idx *index) matchResource(input schema.GroupVersionResource) ([]*entry, error) {
	name := input.Resource
	if name == "" {
		return nil, &meta.NoResourceMatchError{PartialResource: input}
	}
	matches := idx.byName[name]
	if matches == nil {
		matches = idx.byName[strings.ToLower(name)]
	}
	best := nameKind(255)
	for _, nm := range matches {
		if (input.Group == "" || nm.e.gvr.Group == input.Group) && (input.Version == "" || nm.e.gvr.Version == input.Version) && nm.how < best {
			best = nm.how
		}
	}
	var out []*entry
	for _, nm := range matches {
		if nm.how == best && (input.Group == "" || nm.e.gvr.Group == input.Group) && (input.Version == "" || nm.e.gvr.Version == input.Version) {
			out = append(out, nm.e)
		}
	}
	if len(out) == 0 {
		return nil, &meta.NoResourceMatchError{PartialResource: input}
	}
	return out, nil
}

// RESTMapping returns the mapping of a kind: at the first of versions that
// serves it, or at the preferred version when no version is given. The
// kind is matched exactly, then case-insensitively. The returned mapping is
// shared and must not be modified (this is what makes a hot lookup
// allocation-free).
func (m *Mapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if idx := m.idx.Load(); idx != nil {
		// Fast path: a hit needs no context and allocates nothing.
		m.maybeRefreshInBackground(idx)
		if mp, err := idx.mapping(gk, versions); err == nil {
			return mp, nil
		}
	}
	ctx, cancel := m.bg()
	defer cancel()
	return m.RESTMappingWithContext(ctx, gk, versions...)
}

// RESTMappingWithContext is RESTMapping with a context.
func (m *Mapper) RESTMappingWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return lookup(ctx, m, gk.Group, func() string { return "k/" + gk.String() + "/" + strings.Join(versions, ",") }, func(idx *index) (*meta.RESTMapping, error) {
		return idx.mapping(gk, versions)
	})
}

func (idx *index) kindEntries(gk schema.GroupKind) []*entry {
	if es := idx.byGK[gk]; es != nil {
		return es
	}
	return idx.byGKLower[schema.GroupKind{Group: gk.Group, Kind: strings.ToLower(gk.Kind)}]
}

func (idx *index) mapping(gk schema.GroupKind, versions []string) (*meta.RESTMapping, error) {
	es := idx.kindEntries(gk)
	if len(es) > 0 {
		if noVersions(versions) {
			return es[0].mapping, nil
		}
		for _, v := range versions {
			for _, e := range es {
				if e.gvk.Version == v {
					return e.mapping, nil
				}
			}
		}
	}
	return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
}

func noVersions(versions []string) bool {
	for _, v := range versions {
		if v != "" {
			return false
		}
	}
	return true
}

// RESTMappings returns the mappings of a kind at every version that serves
// it (priority order), or at the given versions.
func (m *Mapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	ctx, cancel := m.bg()
	defer cancel()
	return m.RESTMappingsWithContext(ctx, gk, versions...)
}

// RESTMappingsWithContext is RESTMappings with a context.
func (m *Mapper) RESTMappingsWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return lookup(ctx, m, gk.Group, func() string { return "ks/" + gk.String() + "/" + strings.Join(versions, ",") }, func(idx *index) ([]*meta.RESTMapping, error) {
		var out []*meta.RESTMapping
		for _, e := range idx.kindEntries(gk) {
			if noVersions(versions) || contains(versions, e.gvk.Version) {
				out = append(out, e.mapping)
			}
		}
		if len(out) == 0 {
			return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
		}
		return out, nil
	})
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ResourceSingularizer returns the singular name of a resource given by
// its plural (or singular) name; on error it returns the name it was given,
// as apimachinery's DefaultRESTMapper does.
func (m *Mapper) ResourceSingularizer(resource string) (string, error) {
	ctx, cancel := m.bg()
	defer cancel()
	return m.ResourceSingularizerWithContext(ctx, resource)
}

// ResourceSingularizerWithContext is ResourceSingularizer with a context.
func (m *Mapper) ResourceSingularizerWithContext(ctx context.Context, resource string) (string, error) {
	s, err := lookup(ctx, m, "", func() string { return "s/" + resource }, func(idx *index) (string, error) {
		r := strings.ToLower(resource)
		if s, ok := idx.singularOf[r]; ok {
			return s, nil
		}
		for _, nm := range idx.byName[r] {
			if nm.how == byPluralOrSingular {
				return r, nil
			}
		}
		return "", &meta.NoResourceMatchError{PartialResource: schema.GroupVersionResource{Resource: resource}}
	})
	if err != nil {
		return resource, err // as apimachinery's DefaultRESTMapper
	}
	return s, nil
}

// ResourceInfo returns what discovery said about a resource: namespaced,
// verbs, kind, singular and short names, categories, subresources. A miss
// refreshes discovery once, like every lookup.
func (m *Mapper) ResourceInfo(ctx context.Context, gvr schema.GroupVersionResource) (*discovery.Resource, error) {
	return lookup(ctx, m, gvr.Group, func() string { return "i/" + gvr.String() }, func(idx *index) (*discovery.Resource, error) {
		if e, ok := idx.byGVR[gvr]; ok {
			return e.res, nil
		}
		return nil, &meta.NoResourceMatchError{PartialResource: gvr}
	})
}

// Resources returns every resource at its group's preferred version for
// which keep returns true (nil keeps all), in priority order — e.g. every
// resource that supports list, watch and delete, as a garbage collector
// needs. Group-versions that failed discovery are missing from the result
// and reported in a *discovery.GroupDiscoveryFailedError returned beside
// it. The returned resources are shared and must not be modified.
func (m *Mapper) Resources(ctx context.Context, keep func(*discovery.Resource) bool) ([]*discovery.Resource, error) {
	idx, err := m.current(ctx)
	if err != nil {
		return nil, err
	}
	return idx.preferred(keep), failedErr(idx)
}

func (idx *index) preferred(keep func(*discovery.Resource) bool) []*discovery.Resource {
	var out []*discovery.Resource
	seen := map[schema.GroupResource]bool{}
	for _, e := range idx.entries {
		gr := e.gvr.GroupResource()
		if seen[gr] {
			continue
		}
		seen[gr] = true
		if keep == nil || keep(e.res) {
			out = append(out, e.res)
		}
	}
	return out
}

func failedErr(idx *index) error {
	if idx.snap.Failed == nil || len(idx.snap.Failed.Groups) == 0 {
		return nil
	}
	return idx.snap.Failed
}

// SupportsVerbs returns a Resources filter keeping resources that support
// every verb given.
func SupportsVerbs(verbs ...string) func(*discovery.Resource) bool {
	return func(r *discovery.Resource) bool { return r.HasVerbs(verbs...) }
}
