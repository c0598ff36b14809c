package fake

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
)

const (
	// defaultHistorySize is how many changes the client keeps for watches
	// that resume from a resourceVersion and for paginated lists.
	defaultHistorySize = 1000
	// defaultWatchBuffer is how many events a watcher may fall behind
	// before the fake ends its watch with a 410 ERROR event.
	defaultWatchBuffer = 1000
)

// Client is an in-memory dynamic.Interface that behaves like an API server.
// It is safe for concurrent use.
type Client struct {
	historySize int
	watchBuffer int

	// mu guards every field below.
	mu sync.Mutex
	// rv is the last resourceVersion handed out; every write increments it.
	rv uint64
	// resources holds registered resources and those learned from objects.
	resources map[schema.GroupVersionResource]resource
	// objects holds the stored objects by GVR and key ("namespace/name",
	// or "name" when cluster-scoped). Stored objects are never mutated: a
	// write stores a new copy.
	objects map[schema.GroupVersionResource]map[string]*unstructured.Unstructured
	// history holds the last historySize changes, oldest first.
	history []change
	// compacted is the resourceVersion of the newest change dropped from
	// history; every change after it is in history.
	compacted uint64
	watchers  map[*watcher]struct{}
	// seedErr is the first object NewClient could not store.
	seedErr error
	// intercept, if set, is called before every request (Intercept).
	intercept func(ctx context.Context, a Action) error
}

// Action is one request to the fake, as Intercept sees it.
type Action struct {
	// Verb is the request's verb: get, list, watch, create, update,
	// patch, apply, delete or deletecollection.
	Verb        string
	Resource    schema.GroupVersionResource
	Namespace   string
	Name        string // empty for list, watch and deletecollection
	Subresource string
}

// Intercept sets f to be called before every request, with the request's
// context and what it asks for, to stand for the faults a real server or
// network produces: an error f returns is the request's error (a server
// error should be an *apierrors.StatusError), and f may block — on ctx, or
// on a clock — to stand for a slow or hung server. nil removes it. f runs
// outside the client's lock and may call the client.
func (c *Client) Intercept(f func(ctx context.Context, a Action) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.intercept = f
}

// change is one write, as history and watchers see it.
type change struct {
	rv  uint64
	gvr schema.GroupVersionResource
	key string
	typ watch.EventType
	// obj is the object after the change; for DELETED, its last state with
	// the deletion's resourceVersion.
	obj *unstructured.Unstructured
	// prev is the object before the change; nil for ADDED.
	prev *unstructured.Unstructured
}

var _ dynamic.Interface = (*Client)(nil)

// NewClient returns a Client holding objects, stored in order as if created
// (each gets the next resourceVersion). Objects are *unstructured.Unstructured
// or typed objects with apiVersion and kind set (converted with
// runtime.DefaultUnstructuredConverter); an *unstructured.UnstructuredList
// stores its items. A seed keeps the uid, creationTimestamp, generation,
// finalizers and deletionTimestamp it carries; missing ones are filled in.
//
// If an object cannot be stored, every call on the client fails with an
// internal error naming it; use Add to get that error directly.
func NewClient(objects ...runtime.Object) *Client {
	c := &Client{
		historySize: defaultHistorySize,
		watchBuffer: defaultWatchBuffer,
		resources:   map[schema.GroupVersionResource]resource{},
		objects:     map[schema.GroupVersionResource]map[string]*unstructured.Unstructured{},
		watchers:    map[*watcher]struct{}{},
	}
	if err := c.Add(objects...); err != nil {
		c.seedErr = err
	}
	return c
}

// Register tells the client about resources, the way a server's discovery
// would. Register a resource before creating or adding its objects.
// Unregistered resources work too: see the package documentation for
// what the fake infers.
func (c *Client) Register(infos ...ResourceInfo) error {
	for _, info := range infos {
		if err := info.validate(); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, info := range infos {
		c.resources[info.GVR] = registered(info)
	}
	return nil
}

// Add stores objects as NewClient does, and reports the first one that
// cannot be stored. Objects before it are stored.
func (c *Client) Add(objects ...runtime.Object) error {
	for i, obj := range objects {
		items, err := toUnstructured(obj)
		if err != nil {
			return fmt.Errorf("fake: object %d: %w", i, err)
		}
		for _, u := range items {
			if err := c.seed(u); err != nil {
				return fmt.Errorf("fake: object %d (%s %q): %w", i, u.GetKind(), u.GetName(), err)
			}
		}
	}
	return nil
}

func (c *Client) seed(u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return fmt.Errorf("apiVersion and kind are required (the fake has no scheme to look them up)")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	res := c.resourceForKindLocked(gvk)
	_, err := c.createLocked(res, u.GetNamespace(), u, createOptions{seed: true})
	return err
}

// Objects returns copies of the stored objects of one resource, in all
// namespaces, sorted by namespace and name. It is meant for assertions.
func (c *Client) Objects(gvr schema.GroupVersionResource) []*unstructured.Unstructured {
	c.mu.Lock()
	defer c.mu.Unlock()
	stored := c.objects[gvr]
	out := make([]*unstructured.Unstructured, 0, len(stored))
	for _, k := range sortedKeys(stored) {
		out = append(out, stored[k].DeepCopy())
	}
	return out
}

// Resource returns the client for one resource.
func (c *Client) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return &resourceClient{c: c, gvr: gvr}
}

// begin is the prelude of every request.
func (c *Client) begin(ctx context.Context, a Action) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	seedErr, intercept := c.seedErr, c.intercept
	c.mu.Unlock()
	if seedErr != nil {
		return apierrors.NewInternalError(fmt.Errorf("%w: %w", errSeed, seedErr))
	}
	if intercept != nil {
		return intercept(ctx, a)
	}
	return nil
}

// resourceLocked returns what the client knows about gvr: a registration or
// what it learned from objects, else a built-in, else a guess.
func (c *Client) resourceLocked(gvr schema.GroupVersionResource) resource {
	if r, ok := c.resources[gvr]; ok {
		return r
	}
	if r, ok := builtinByResource(gvr); ok {
		return r
	}
	return guessed(gvr)
}

// resourceForKindLocked returns the resource that serves gvk: a registered
// or learned one, else a built-in, else the kind's naive plural.
func (c *Client) resourceForKindLocked(gvk schema.GroupVersionKind) resource {
	for gvr, r := range c.resources {
		if gvr.GroupVersion() == gvk.GroupVersion() && r.info.Kind == gvk.Kind {
			return r
		}
	}
	if r, ok := builtinByKind(gvk); ok {
		return r
	}
	r := guessed(gvk.GroupVersion().WithResource(pluralize(gvk.Kind)))
	r.info.Kind, r.kindKnown = gvk.Kind, true
	return r
}

// learnLocked records the kind and scope of a resource nobody registered,
// from the first object created in it.
func (c *Client) learnLocked(res resource, kind string, namespaced bool) resource {
	if res.kindKnown && res.scopeKnown {
		return res
	}
	if !res.kindKnown {
		res.info.Kind, res.kindKnown = kind, true
	}
	if !res.scopeKnown {
		res.info.Namespaced, res.scopeKnown = namespaced, true
	}
	c.resources[res.info.GVR] = res
	return res
}

// commitLocked stores one change under the next resourceVersion, records
// it and tells the watchers. obj must be a copy the store may keep.
func (c *Client) commitLocked(gvr schema.GroupVersionResource, key string, typ watch.EventType, obj, prev *unstructured.Unstructured) *unstructured.Unstructured {
	c.rv++
	obj.SetResourceVersion(strconv.FormatUint(c.rv, 10))
	stored := c.objects[gvr]
	if stored == nil {
		stored = map[string]*unstructured.Unstructured{}
		c.objects[gvr] = stored
	}
	if typ == watch.Deleted {
		delete(stored, key)
	} else {
		stored[key] = obj
	}
	ch := change{rv: c.rv, gvr: gvr, key: key, typ: typ, obj: obj, prev: prev}
	c.history = append(c.history, ch)
	if n := len(c.history) - c.historySize; n > 0 {
		c.compacted = c.history[n-1].rv
		c.history = c.history[n:]
	}
	for w := range c.watchers {
		w.changeLocked(ch)
	}
	return obj
}

// objectKey is the storage key: "namespace/name", or "name" when the
// object has no namespace. Lists are sorted by it, as etcd sorts keys.
func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func sortedKeys(m map[string]*unstructured.Unstructured) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// toUnstructured converts a seed object to unstructured objects.
func toUnstructured(obj runtime.Object) ([]*unstructured.Unstructured, error) {
	switch o := obj.(type) {
	case nil:
		return nil, fmt.Errorf("nil object")
	case *unstructured.Unstructured:
		u, err := normalize(o)
		if err != nil {
			return nil, err
		}
		return []*unstructured.Unstructured{u}, nil
	case *unstructured.UnstructuredList:
		out := make([]*unstructured.Unstructured, 0, len(o.Items))
		for i := range o.Items {
			u, err := normalize(&o.Items[i])
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out = append(out, u)
		}
		return out, nil
	}
	if meta.IsListType(obj) {
		return nil, fmt.Errorf("typed list %T is not supported: pass its items", obj)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T to unstructured: %w", obj, err)
	}
	u, err := normalize(&unstructured.Unstructured{Object: m})
	if err != nil {
		return nil, fmt.Errorf("convert %T to unstructured: %w", obj, err)
	}
	return []*unstructured.Unstructured{u}, nil
}

// normalize copies obj through JSON, as the wire would: the copy shares
// nothing with obj and holds only JSON types (int64, float64, string, bool,
// map[string]any, []any), so later DeepCopy calls cannot panic.
func normalize(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if obj == nil {
		return nil, fmt.Errorf("nil object")
	}
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	return decodeObject(b)
}

func decodeObject(b []byte) (*unstructured.Unstructured, error) {
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	if m == nil {
		return nil, fmt.Errorf("object is null")
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// newUID returns a random version-4 UUID.
func newUID() types.UID {
	var b [16]byte
	_, _ = crand.Read(b[:]) // crypto/rand.Read never returns an error.
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]))
}
