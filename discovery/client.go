package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kdyn/kdyn/internal/generation"
	"github.com/kdyn/kdyn/rest"
)

// Defaults for Options.
const (
	// DefaultParallelism bounds the legacy per-group-version requests in
	// flight.
	DefaultParallelism = 16
	// DefaultMaxDocumentBytes bounds the size of one discovery or OpenAPI
	// document; a larger answer is rejected instead of exhausting memory.
	DefaultMaxDocumentBytes = 64 << 20
)

// Options configure a Client. The zero value is useful: memory cache only,
// 16 legacy requests in flight, no logging.
type Options struct {
	// CacheDir enables the disk cache in this directory (see
	// DefaultCacheDir). Empty means memory only.
	CacheDir string
	// TTL is how long disk-cached documents are used without asking the
	// server. Zero means DefaultTTL. The memory cache has no TTL: it lasts
	// until Invalidate or Refresh.
	TTL time.Duration
	// Parallelism bounds legacy per-group-version requests. Zero means
	// DefaultParallelism.
	Parallelism int
	// MaxDocumentBytes bounds one document. Zero means
	// DefaultMaxDocumentBytes.
	MaxDocumentBytes int64
	// Logger receives debug logs (logr: V(1) and above); the zero value
	// logs nothing.
	Logger logr.Logger

	now func() time.Time
}

// Client discovers what an API server serves. It is safe for concurrent use;
// concurrent callers share one fetch. Results are cached in memory (and on
// disk with Options.CacheDir) until Invalidate or Refresh.
type Client struct {
	rc    *rest.Client
	opts  Options
	log   logr.Logger
	docs  *docCache
	group singleflight.Group

	snap       atomic.Pointer[Snapshot]
	revalidate atomic.Bool
	// gen counts invalidations: a load (or GET /version) that began
	// before one does not cache what it fetched (nor clear revalidate)
	// when it ends after it. Its lock also guards serverVersion.
	gen           generation.Counter
	serverVersion *version.Info
}

// NewForConfig returns a Client with a memory cache for cfg.
func NewForConfig(cfg *rest.Config) (*Client, error) {
	rc, err := rest.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return New(rc, Options{Logger: cfg.Logger})
}

// New returns a Client over an existing rest.Client.
func New(rc *rest.Client, opts Options) (*Client, error) {
	if rc == nil {
		return nil, errors.New("discovery: nil rest.Client")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = DefaultParallelism
	}
	if opts.MaxDocumentBytes <= 0 {
		opts.MaxDocumentBytes = DefaultMaxDocumentBytes
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	log := opts.Logger
	return &Client{rc: rc, opts: opts, log: log, docs: newDocCache(opts.CacheDir, log)}, nil
}

// RESTClient returns the rest.Client discovery uses.
func (c *Client) RESTClient() *rest.Client { return c.rc }

// Snapshot returns what the server serves, from the cache when there is
// one. Cost: aggregated discovery makes 2 requests (GET /api, GET /apis)
// when cold; a legacy server makes N+2 (N = group-versions, in parallel,
// Options.Parallelism at a time); a warm disk cache within its TTL makes
// none; a memory-cached Client makes none.
//
// The error is non-nil only when discovery failed as a whole; group-versions
// that failed alone are in Snapshot.Failed.
func (c *Client) Snapshot(ctx context.Context) (*Snapshot, error) {
	if s := c.snap.Load(); s != nil {
		return s, nil
	}
	return c.load(ctx, false)
}

// Refresh asks the server again, whatever the caches hold, and returns the
// new snapshot. Cached documents are revalidated with their ETags, so an
// unchanged aggregated server answers 304 twice: 2 small requests.
func (c *Client) Refresh(ctx context.Context) (*Snapshot, error) {
	return c.load(ctx, true)
}

// Invalidate drops the memory cache; the next call revalidates every
// document with the server (disk copies are kept for their ETags).
func (c *Client) Invalidate() {
	c.gen.Advance(func() {
		c.revalidate.Store(true)
		c.snap.Store(nil)
		c.serverVersion = nil
	})
}

// MarkStale makes the next use of the caches, in this process and in later
// ones sharing the disk cache, revalidate every document with the server
// (conditional requests), as when their TTL has passed. Call it when the
// server answered as if a cached resource no longer existed.
func (c *Client) MarkStale() {
	c.Invalidate()
	c.docs.expireAll()
}

// RefreshGroup refreshes one group. Against a legacy server it refetches
// only that group (GET /apis/GROUP and its versions: 1+V requests); against
// an aggregated server, which has no per-group document, it revalidates the
// document holding the group (/api for the core group, /apis otherwise: 1
// request, 304 when nothing changed).
func (c *Client) RefreshGroup(ctx context.Context, group string) (*Snapshot, error) {
	cur := c.snap.Load()
	if cur == nil {
		return c.load(ctx, true)
	}
	// Keyed by the snapshot it starts from: a caller whose snapshot is
	// newer (after a load, or an Invalidate and a load) does not join one
	// built on an older snapshot.
	v, err, _ := c.group.Do(fmt.Sprintf("group/%p/%s", cur, group), func() (any, error) {
		return c.refreshGroup(ctx, cur, group)
	})
	if err != nil {
		return nil, err
	}
	return v.(*Snapshot), nil
}

// load builds a snapshot and caches it; it revalidates every document
// when force or after an Invalidate (read with the generation, so that an
// Invalidate is seen by the load of its own generation).
func (c *Client) load(ctx context.Context, force bool) (*Snapshot, error) {
	revalidate := force
	gen := c.gen.Read(func() { revalidate = revalidate || c.revalidate.Load() })
	// Callers after an Invalidate do not join a load begun before it.
	key := generation.Key("load", gen)
	if revalidate {
		key = generation.Key("refresh", gen)
	}
	v, err, _ := c.group.Do(key, func() (any, error) {
		s, err := c.build(ctx, revalidate)
		if err != nil {
			return nil, err
		}
		c.gen.IfCurrent(gen, func() {
			// A load that revalidated nothing runs only while the memory
			// cache is empty; if a Refresh (or RefreshGroup) of this
			// generation stored a snapshot meanwhile, that one is at least
			// as new as what this load read: keep it, and answer with it.
			if cur := c.snap.Load(); cur != nil && !revalidate {
				s = cur
				return
			}
			c.snap.Store(s)
			c.revalidate.Store(false)
		})
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Snapshot), nil
}

// fetch returns the document at path: the cached copy when it is fresh and
// revalidate is false, else from the server, conditionally when a cached
// copy has an ETag.
func (c *Client) fetch(ctx context.Context, path, accept string, revalidate bool) (*document, error) {
	cached := c.docs.get(path)
	now := c.opts.now()
	if cached != nil && !revalidate && (c.docs.dir == "" || now.Sub(cached.FetchedAt) < c.opts.TTL) {
		return cached, nil
	}
	req := c.rc.Get().AbsPath(path).Accept(accept).MaxResponseBytes(c.opts.MaxDocumentBytes)
	if cached != nil && cached.ETag != "" {
		req.SetHeader("If-None-Match", cached.ETag)
	}
	res := req.Do(ctx)
	if res.StatusCode() == http.StatusNotModified && cached != nil {
		d := *cached
		d.FetchedAt = now
		c.docs.put(&d)
		return &d, nil
	}
	body, err := res.Raw()
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("discovery: GET %s answered with a body that is not JSON (Content-Type %q)", path, res.ContentType())
	}
	d := &document{Path: path, ETag: res.Header().Get("ETag"), ContentType: res.ContentType(), FetchedAt: now, Body: body}
	c.docs.put(d)
	return d, nil
}

func (c *Client) build(ctx context.Context, revalidate bool) (*Snapshot, error) {
	var core, apis *document
	var coreErr, apisErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		core, coreErr = c.fetch(ctx, "/api", AcceptAggregated, revalidate)
	}()
	apis, apisErr = c.fetch(ctx, "/apis", AcceptAggregated, revalidate)
	wg.Wait()
	if coreErr != nil {
		return nil, fmt.Errorf("discovery: GET /api: %w", coreErr)
	}
	if apisErr != nil {
		return nil, fmt.Errorf("discovery: GET /apis: %w", apisErr)
	}
	failed := map[schema.GroupVersion]error{}
	snap := &Snapshot{Aggregated: isAggregated(core.ContentType) && isAggregated(apis.ContentType)}
	oldest := core.FetchedAt
	if apis.FetchedAt.Before(oldest) {
		oldest = apis.FetchedAt
	}

	var legacy []legacyGV
	if isAggregated(core.ContentType) {
		groups, err := decodeAggregated(core.Body, failed)
		if err != nil {
			return nil, err
		}
		snap.Groups = append(snap.Groups, groups...)
	} else {
		versions, err := legacyCoreVersions(core.Body)
		if err != nil {
			return nil, err
		}
		g := Group{Name: ""}
		for _, v := range versions {
			g.Versions = append(g.Versions, Version{Version: v})
			legacy = append(legacy, legacyGV{group: 0, version: len(g.Versions) - 1, path: "/api/" + v})
		}
		if len(versions) > 0 {
			g.PreferredVersion = versions[0]
		}
		snap.Groups = append(snap.Groups, g)
	}
	if isAggregated(apis.ContentType) {
		groups, err := decodeAggregated(apis.Body, failed)
		if err != nil {
			return nil, err
		}
		snap.Groups = append(snap.Groups, groups...)
	} else {
		groups, err := legacyGroups(apis.Body)
		if err != nil {
			return nil, err
		}
		for _, ag := range groups {
			gi := len(snap.Groups)
			g := Group{Name: ag.Name, PreferredVersion: ag.PreferredVersion.Version}
			for _, v := range ag.Versions {
				g.Versions = append(g.Versions, Version{Version: v.Version})
				legacy = append(legacy, legacyGV{group: gi, version: len(g.Versions) - 1, path: "/apis/" + ag.Name + "/" + v.Version})
			}
			snap.Groups = append(snap.Groups, g)
		}
	}
	if len(legacy) > 0 {
		t := c.fetchLegacy(ctx, snap, legacy, revalidate, failed)
		if t.Before(oldest) {
			oldest = t
		}
	}
	snap.FetchedAt = oldest
	finish(snap, failed)
	return snap, nil
}

type legacyGV struct {
	group, version int
	path           string
}

// fetchLegacy fills the resources of each listed group-version, with at
// most Options.Parallelism requests in flight, recording failures. It
// returns the oldest fetch time.
func (c *Client) fetchLegacy(ctx context.Context, snap *Snapshot, todo []legacyGV, revalidate bool, failed map[schema.GroupVersion]error) time.Time {
	type result struct {
		res []Resource
		at  time.Time
		err error
	}
	results := make([]result, len(todo))
	// Each group-version's failure is its own (recorded in results, never
	// returned to the group), so one failure stops none of the others.
	var eg errgroup.Group
	eg.SetLimit(c.opts.Parallelism)
	for i, item := range todo {
		eg.Go(func() error {
			if err := ctx.Err(); err != nil {
				results[i].err = err // cancelled while waiting for a slot
				return nil
			}
			g := &snap.Groups[item.group]
			gv := schema.GroupVersion{Group: g.Name, Version: g.Versions[item.version].Version}
			d, err := c.fetch(ctx, item.path, rest.ContentTypeJSON, revalidate)
			if err != nil {
				results[i].err = err
				return nil
			}
			results[i].at = d.FetchedAt
			results[i].res, results[i].err = legacyResources(d.Body, gv)
			return nil
		})
	}
	_ = eg.Wait() // the functions return nil; the errors are in results
	oldest := c.opts.now()
	for i, item := range todo {
		g := &snap.Groups[item.group]
		v := &g.Versions[item.version]
		if results[i].err != nil {
			failed[schema.GroupVersion{Group: g.Name, Version: v.Version}] = results[i].err
			v.Version = "" // marked for removal by finish
			continue
		}
		v.Resources = results[i].res
		if results[i].at.Before(oldest) {
			oldest = results[i].at
		}
	}
	return oldest
}

// finish removes failed versions and empty groups, makes sure no failed
// version is preferred, and records the failures.
func finish(snap *Snapshot, failed map[schema.GroupVersion]error) {
	groups := snap.Groups[:0]
	for _, g := range snap.Groups {
		versions := g.Versions[:0]
		for _, v := range g.Versions {
			if v.Version != "" {
				versions = append(versions, v)
			}
		}
		g.Versions = versions
		if len(g.Versions) == 0 {
			continue
		}
		ok := false
		for _, v := range g.Versions {
			if v.Version == g.PreferredVersion {
				ok = true
			}
		}
		if !ok {
			g.PreferredVersion = g.Versions[0].Version
		}
		groups = append(groups, g)
	}
	snap.Groups = groups
	if len(failed) > 0 {
		snap.Failed = &GroupDiscoveryFailedError{Groups: failed}
	}
}

func (c *Client) refreshGroup(ctx context.Context, cur *Snapshot, group string) (*Snapshot, error) {
	if cur.Aggregated {
		return c.load(ctx, true)
	}
	// Legacy: refetch GET /apis/GROUP and its versions only.
	if group == "" {
		return c.load(ctx, true)
	}
	d, err := c.fetch(ctx, "/apis/"+group, rest.ContentTypeJSON, true)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return c.replaceGroup(cur, group, nil, nil), nil
		}
		return nil, fmt.Errorf("discovery: GET /apis/%s: %w", group, err)
	}
	var ag metav1.APIGroup
	if err := json.Unmarshal(d.Body, &ag); err != nil {
		return nil, fmt.Errorf("discovery: decode /apis/%s: %w", group, err)
	}
	tmp := &Snapshot{Groups: []Group{{Name: group, PreferredVersion: ag.PreferredVersion.Version}}}
	var todo []legacyGV
	for _, v := range ag.Versions {
		tmp.Groups[0].Versions = append(tmp.Groups[0].Versions, Version{Version: v.Version})
		todo = append(todo, legacyGV{group: 0, version: len(tmp.Groups[0].Versions) - 1, path: "/apis/" + group + "/" + v.Version})
	}
	failed := map[schema.GroupVersion]error{}
	c.fetchLegacy(ctx, tmp, todo, true, failed)
	finish(tmp, failed)
	var g *Group
	if len(tmp.Groups) == 1 {
		g = &tmp.Groups[0]
	}
	s := c.replaceGroup(cur, group, g, failed)
	return s, nil
}

// replaceGroup returns a copy of cur with group replaced by g (removed when
// g is nil) and its failures replaced by failed.
func (c *Client) replaceGroup(cur *Snapshot, group string, g *Group, failed map[schema.GroupVersion]error) *Snapshot {
	next := &Snapshot{Aggregated: cur.Aggregated, FetchedAt: cur.FetchedAt}
	found := false
	for _, old := range cur.Groups {
		if old.Name == group {
			found = true
			if g != nil {
				next.Groups = append(next.Groups, *g)
			}
			continue
		}
		next.Groups = append(next.Groups, old)
	}
	if !found && g != nil {
		next.Groups = append(next.Groups, *g)
	}
	all := map[schema.GroupVersion]error{}
	if cur.Failed != nil {
		for gv, err := range cur.Failed.Groups {
			if gv.Group != group {
				all[gv] = err
			}
		}
	}
	for gv, err := range failed {
		all[gv] = err
	}
	if len(all) > 0 {
		next.Failed = &GroupDiscoveryFailedError{Groups: all}
	}
	// Unless the cache moved on meanwhile (a load, or Invalidate).
	c.snap.CompareAndSwap(cur, next)
	return next
}

// ServerVersion returns GET /version (1 request; cached in memory).
func (c *Client) ServerVersion(ctx context.Context) (*version.Info, error) {
	var cached *version.Info
	gen := c.gen.Read(func() { cached = c.serverVersion })
	if cached != nil {
		v := *cached
		return &v, nil
	}
	// No lock is held across the request (Invalidate does not wait for
	// it); concurrent callers share it, and an answer that began before an
	// Invalidate is not cached after it.
	res, err, _ := c.group.Do(generation.Key("version", gen), func() (any, error) {
		body, err := c.rc.Get().AbsPath("/version").MaxResponseBytes(1 << 20).DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("discovery: GET /version: %w", err)
		}
		var info version.Info
		if err := json.Unmarshal(body, &info); err != nil {
			return nil, fmt.Errorf("discovery: decode /version: %w", err)
		}
		c.gen.IfCurrent(gen, func() { c.serverVersion = &info })
		return &info, nil
	})
	if err != nil {
		return nil, err
	}
	v := *res.(*version.Info)
	return &v, nil
}

// ServerGroups returns every group and its versions (cost: see Snapshot).
// Group-versions that failed are left out; the error is then a
// *GroupDiscoveryFailedError returned beside the list.
func (c *Client) ServerGroups(ctx context.Context) (*metav1.APIGroupList, error) {
	s, err := c.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return s.APIGroupList(), s.Failed.errOrNil()
}

// ServerResourcesForGroupVersion returns the resources of one
// group-version ("v1", "apps/v1"). From the snapshot when it has the
// group-version; otherwise one request to GET /api/VERSION or
// /apis/GROUP/VERSION.
func (c *Client) ServerResourcesForGroupVersion(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error) {
	gv, err := schema.ParseGroupVersion(groupVersion)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if gv.Version == "" {
		return nil, fmt.Errorf("discovery: group-version %q has no version", groupVersion)
	}
	s, err := c.Snapshot(ctx)
	if err == nil {
		if l, ok := s.ResourceList(gv); ok {
			return l, nil
		}
	}
	path := "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	body, err := c.rc.Get().AbsPath(path).MaxResponseBytes(c.opts.MaxDocumentBytes).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	res, err := legacyResources(body, gv)
	if err != nil {
		return nil, err
	}
	g := Group{Name: gv.Group, Versions: []Version{{Version: gv.Version, Resources: res}}}
	return g.resourceList(&g.Versions[0]), nil
}

// ServerGroupsAndResources returns every group and every group-version's
// resources (cost: see Snapshot). Partial failure is a
// *GroupDiscoveryFailedError returned beside the results.
func (c *Client) ServerGroupsAndResources(ctx context.Context) ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	s, err := c.Snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	gl := s.APIGroupList()
	groups := make([]*metav1.APIGroup, len(gl.Groups))
	for i := range gl.Groups {
		groups[i] = &gl.Groups[i]
	}
	return groups, s.ResourceLists(), s.Failed.errOrNil()
}

// ServerPreferredResources returns each group's resources at its preferred
// version (plus resources only found at other versions), without
// subresources (cost: see Snapshot). Partial failure is a
// *GroupDiscoveryFailedError returned beside the results.
func (c *Client) ServerPreferredResources(ctx context.Context) ([]*metav1.APIResourceList, error) {
	s, err := c.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return s.PreferredResources(false), s.Failed.errOrNil()
}

// ServerPreferredNamespacedResources is ServerPreferredResources limited
// to namespaced resources.
func (c *Client) ServerPreferredNamespacedResources(ctx context.Context) ([]*metav1.APIResourceList, error) {
	s, err := c.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return s.PreferredResources(true), s.Failed.errOrNil()
}
