package crcache

import (
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kdyn/kdyn/informer"
)

// Options are kdyn's own settings, beside controller-runtime's
// cache.Options (which New takes as they are).
type Options struct {
	// Compact keeps each object encoded and decodes it on every read and
	// event delivery: kinds stored as Go types as their protobuf encoding,
	// custom resources as the JSON text the server sent, metadata-only
	// stores as the metadata's protobuf encoding (managedFields left out
	// of all three). Far less memory; a decode per read instead of a
	// DeepCopy. See informer.InformerOptions.Compact.
	Compact bool
	// KeepManagedFields keeps metadata.managedFields, which kdyn leaves
	// out of the cache by default (controller-runtime's cache keeps them
	// unless a transform such as cache.TransformStripManagedFields strips
	// them).
	KeepManagedFields bool
	// Shard, when set, caches only the objects in the shard's hash ranges
	// (see informer.Shard), for controllers that split their keys between
	// replicas.
	Shard *informer.Shard
	// DisableStreaming turns off streaming lists (sendInitialEvents); the
	// informers then list in pages and watch.
	DisableStreaming bool
}

// defaultSyncPeriod is controller-runtime's default SyncPeriod.
const defaultSyncPeriod = 10 * time.Hour

// scopeConfig is what one namespace (or all of them) of one kind is cached
// with, after controller-runtime's defaulting rules.
type scopeConfig struct {
	label      labels.Selector
	field      fields.Selector
	transform  toolscache.TransformFunc
	noCopy     bool
	syncPeriod time.Duration
}

// kindConfig is how one kind is cached: by namespace ("" is every
// namespace not named, or every namespace when alone).
type kindConfig map[string]scopeConfig

// resolveOptions applies controller-runtime's defaulting to opts (as
// cache.New does): ByObject settings inherit the namespace defaults and
// the cache-wide defaults, and a "" namespace beside named ones excludes
// them. It returns the configuration of kinds without a ByObject entry
// (for namespaced and cluster-scoped kinds) and that of each ByObject
// kind.
func resolveOptions(opts *cache.Options) (namespaced, clusterScoped kindConfig, byKind map[schema.GroupVersionKind]kindConfig, err error) {
	defaults := optionDefaults(opts)
	namespaced = kindConfig{}
	if len(opts.DefaultNamespaces) == 0 {
		namespaced[metav1.NamespaceAll] = toScope(defaults)
	}
	for ns, c := range opts.DefaultNamespaces {
		c = defaultConfig(c, defaults)
		if ns == metav1.NamespaceAll {
			c.FieldSelector = excludeOthers(slices.Collect(maps.Keys(opts.DefaultNamespaces)), c.FieldSelector)
		}
		namespaced[ns] = toScope(c)
	}
	clusterScoped = kindConfig{metav1.NamespaceAll: toScope(defaults)}

	byKind = map[schema.GroupVersionKind]kindConfig{}
	for obj, by := range opts.ByObject {
		gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("failed to get GVK for type %T: %w", obj, err)
		}
		isNamespaced, err := apiutil.IsGVKNamespaced(gvk, opts.Mapper)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("failed to determine if %T is namespaced: %w", obj, err)
		}
		if !isNamespaced && by.Namespaces != nil {
			return nil, nil, nil, fmt.Errorf("type %T is not namespaced, but its ByObject.Namespaces setting is not nil", obj)
		}
		own := cache.Config{
			LabelSelector:         by.Label,
			FieldSelector:         by.Field,
			Transform:             by.Transform,
			UnsafeDisableDeepCopy: by.UnsafeDisableDeepCopy,
			EnableWatchBookmarks:  by.EnableWatchBookmarks,
			SyncPeriod:            by.SyncPeriod,
		}
		namespaces := by.Namespaces
		if isNamespaced && namespaces == nil {
			namespaces = opts.DefaultNamespaces
		}
		kc := kindConfig{}
		if !isNamespaced || len(namespaces) == 0 {
			kc[metav1.NamespaceAll] = toScope(defaultConfig(own, defaults))
		}
		for ns, c := range namespaces {
			c = defaultConfig(c, own)
			if d, ok := opts.DefaultNamespaces[ns]; ok {
				c = defaultConfig(c, d)
			}
			c = defaultConfig(c, defaults)
			if ns == metav1.NamespaceAll {
				c.FieldSelector = excludeOthers(slices.Collect(maps.Keys(namespaces)), c.FieldSelector)
			}
			kc[ns] = toScope(c)
		}
		byKind[gvk] = kc
	}
	return namespaced, clusterScoped, byKind, nil
}

// optionDefaults are the cache-wide defaults of opts as a Config.
func optionDefaults(opts *cache.Options) cache.Config {
	return cache.Config{
		LabelSelector:         opts.DefaultLabelSelector,
		FieldSelector:         opts.DefaultFieldSelector,
		Transform:             opts.DefaultTransform,
		UnsafeDisableDeepCopy: opts.DefaultUnsafeDisableDeepCopy,
		EnableWatchBookmarks:  opts.DefaultEnableWatchBookmarks,
		SyncPeriod:            opts.SyncPeriod,
	}
}

// defaultConfig fills what c leaves unset from from.
func defaultConfig(c, from cache.Config) cache.Config {
	if c.LabelSelector == nil {
		c.LabelSelector = from.LabelSelector
	}
	if c.FieldSelector == nil {
		c.FieldSelector = from.FieldSelector
	}
	if c.Transform == nil {
		c.Transform = from.Transform
	}
	if c.UnsafeDisableDeepCopy == nil {
		c.UnsafeDisableDeepCopy = from.UnsafeDisableDeepCopy
	}
	if c.EnableWatchBookmarks == nil {
		c.EnableWatchBookmarks = from.EnableWatchBookmarks
	}
	if c.SyncPeriod == nil {
		c.SyncPeriod = from.SyncPeriod
	}
	return c
}

// excludeOthers is the field selector of the "" namespace beside the named
// namespaces: none of them, and sel.
func excludeOthers(namespaces []string, sel fields.Selector) fields.Selector {
	slices.Sort(namespaces)
	var all []fields.Selector
	for _, ns := range namespaces {
		if ns != metav1.NamespaceAll {
			all = append(all, fields.OneTermNotEqualSelector("metadata.namespace", ns))
		}
	}
	if sel != nil {
		all = append(all, sel)
	}
	return fields.AndSelectors(all...)
}

// toScope turns a defaulted Config into a scopeConfig.
func toScope(c cache.Config) scopeConfig {
	s := scopeConfig{label: c.LabelSelector, field: c.FieldSelector, transform: c.Transform, syncPeriod: defaultSyncPeriod}
	if c.UnsafeDisableDeepCopy != nil {
		s.noCopy = *c.UnsafeDisableDeepCopy
	}
	if c.SyncPeriod != nil {
		s.syncPeriod = *c.SyncPeriod
	}
	return s
}
