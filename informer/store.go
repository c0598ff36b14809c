package informer

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
)

// IndexFunc computes the index values of an object (none, one or many).
type IndexFunc[T Object] func(obj T) ([]string, error)

// NamespaceIndex is the name of the built-in namespace index.
const NamespaceIndex = "namespace"

// storage keeps objects by key. mapStorage keeps them decoded (reads are
// zero-copy); compactStorage keeps compact JSON and decodes on read.
type storage[T Object] interface {
	get(key string) (T, bool)
	// put stores obj; raw, when not nil, is its JSON text, which a
	// storage that keeps bytes may take as is.
	put(key string, obj T, raw []byte) error
	remove(key string)
	resourceVersion(key string) (string, bool)
	each(fn func(key string, obj T) bool)
	// loader returns, for a storage whose reads decode, a function that
	// decodes key's object as it stands now (its encoding is kept, not
	// the object): a new handler's replay of the cache decodes each
	// object as the handler gets to it, never the whole cache at once.
	// It returns nil for a storage that keeps objects decoded, and for a
	// key it does not hold.
	loader(key string) func() (T, bool)
	keys() []string
	size() int
	// bytes estimates the heap key's entry holds (see entryBytes); 0 for
	// a key it does not hold.
	bytes(key string) int64
}

// Store is a thread-safe cache of objects keyed "namespace/name", with
// indexes. Objects returned by Store are shared with the cache and with
// every other reader: they must be treated as read-only (DeepCopy before
// changing one). Indexers may be added at any time, also after the
// informer has started.
type Store[T Object] struct {
	mu       sync.RWMutex
	data     storage[T]
	indexers map[string]IndexFunc[T]
	// indices maps index name → value → set of keys; values maps index
	// name → key → the values it was indexed under (to unindex).
	indices map[string]map[string]keySet
	values  map[string]map[string][]string
	// nsIdx is the namespace index, built on first use and kept from then
	// on: namespace-scoped informers (the common case) never pay for it.
	// The namespace comes from the key, so it needs no per-object values.
	nsIdx map[string]map[string]struct{}
}

func newStore[T Object](data storage[T]) *Store[T] {
	s := &Store[T]{
		data:     data,
		indexers: map[string]IndexFunc[T]{},
		indices:  map[string]map[string]keySet{},
		values:   map[string]map[string][]string{},
	}
	return s
}

// ErrIndexExists is returned by AddIndexer for a name already in use.
var ErrIndexExists = errors.New("informer: an index with that name already exists")

// AddIndexer adds an index and indexes the objects already cached.
func (s *Store[T]) AddIndexer(name string, fn IndexFunc[T]) error {
	if fn == nil {
		return errors.New("informer: nil index function")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.indexers[name]; ok || name == NamespaceIndex {
		return fmt.Errorf("%w: %q", ErrIndexExists, name)
	}
	s.indexers[name] = fn
	s.indices[name] = map[string]keySet{}
	s.values[name] = map[string][]string{}
	var err error
	s.data.each(func(key string, obj T) bool {
		vals, e := indexValues(name, fn, key, obj)
		if e != nil {
			err = e
			return false
		}
		s.insertIndex(name, key, vals)
		return true
	})
	if err != nil {
		delete(s.indexers, name)
		delete(s.indices, name)
		delete(s.values, name)
		return err
	}
	return nil
}

// indexValues returns obj's values in one index.
func indexValues[T Object](name string, fn IndexFunc[T], key string, obj T) ([]string, error) {
	vals, err := fn(obj)
	if err != nil {
		return nil, fmt.Errorf("informer: index %q of %s: %w", name, key, err)
	}
	return vals, nil
}

// insertIndex records key under vals in one index.
func (s *Store[T]) insertIndex(name, key string, vals []string) {
	if len(vals) == 0 {
		return
	}
	idx := s.indices[name]
	for _, v := range vals {
		idx[v] = idx[v].add(key)
	}
	s.values[name][key] = vals
}

// keySet is the set of keys under one index value. Most values of the
// usual indexes (an owner's UID, a name, a node) name one object: such a
// set is the key itself, not a map of one (a map costs some 200 bytes).
type keySet struct {
	one  string              // the only key, when many is nil
	many map[string]struct{} // two keys or more
}

func (k keySet) add(key string) keySet {
	switch {
	case k.many != nil:
		k.many[key] = struct{}{}
	case k.one == "" || k.one == key:
		k.one = key
	default:
		k = keySet{many: map[string]struct{}{k.one: {}, key: {}}}
	}
	return k
}

// remove returns the set without key, and whether it is empty.
func (k keySet) remove(key string) (keySet, bool) {
	if k.many == nil {
		if k.one == key {
			return keySet{}, true
		}
		return k, k.one == ""
	}
	delete(k.many, key)
	return k, len(k.many) == 0
}

// appendTo appends the set's keys to out.
func (k keySet) appendTo(out []string) []string {
	if k.many == nil {
		if k.one != "" {
			out = append(out, k.one)
		}
		return out
	}
	for key := range k.many {
		out = append(out, key)
	}
	return out
}

func (s *Store[T]) unindex(key string) {
	for name, byKey := range s.values {
		vals, ok := byKey[key]
		if !ok {
			continue
		}
		idx := s.indices[name]
		for _, v := range vals {
			if set, ok := idx[v]; ok {
				if set, empty := set.remove(key); empty {
					delete(idx, v)
				} else {
					idx[v] = set
				}
			}
		}
		delete(byKey, key)
	}
}

func namespaceOfKey(key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	return ""
}

func (s *Store[T]) nsAdd(key string) {
	if s.nsIdx == nil {
		return
	}
	ns := namespaceOfKey(key)
	set := s.nsIdx[ns]
	if set == nil {
		set = map[string]struct{}{}
		s.nsIdx[ns] = set
	}
	set[key] = struct{}{}
}

func (s *Store[T]) nsRemove(key string) {
	if s.nsIdx == nil {
		return
	}
	ns := namespaceOfKey(key)
	if set := s.nsIdx[ns]; set != nil {
		delete(set, key)
		if len(set) == 0 {
			delete(s.nsIdx, ns)
		}
	}
}

// namespaceIndex returns the namespace index, building it on first use.
// The caller holds the read lock; it is upgraded briefly to build.
func (s *Store[T]) namespaceIndexRLocked() map[string]map[string]struct{} {
	if s.nsIdx != nil {
		return s.nsIdx
	}
	s.mu.RUnlock()
	s.mu.Lock()
	if s.nsIdx == nil {
		idx := map[string]map[string]struct{}{}
		for _, k := range s.data.keys() {
			ns := namespaceOfKey(k)
			if idx[ns] == nil {
				idx[ns] = map[string]struct{}{}
			}
			idx[ns][k] = struct{}{}
		}
		s.nsIdx = idx
	}
	s.mu.Unlock()
	s.mu.RLock()
	return s.nsIdx
}

// putLocked stores obj (with its text raw, if not nil) and indexes it;
// the caller holds the write lock. When an index function fails, or the
// object cannot be stored, the store is left as it was (the object's
// previous version, if any, stays cached and indexed).
func (s *Store[T]) putLocked(key string, obj T, raw []byte) error {
	vals := make(map[string][]string, len(s.indexers))
	for name, fn := range s.indexers {
		v, err := indexValues(name, fn, key, obj)
		if err != nil {
			return err
		}
		vals[name] = v
	}
	if err := s.data.put(key, obj, raw); err != nil {
		return err
	}
	s.unindex(key)
	s.nsAdd(key)
	for name, v := range vals {
		s.insertIndex(name, key, v)
	}
	return nil
}

func (s *Store[T]) removeLocked(key string) {
	s.unindex(key)
	s.nsRemove(key)
	s.data.remove(key)
}

// Get returns the object with the key ("namespace/name" or "name").
func (s *Store[T]) Get(key string) (T, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.data.get(key)
}

// List returns every cached object, sorted by key.
func (s *Store[T]) List() []T {
	s.mu.RLock()
	keys := s.data.keys()
	sort.Strings(keys)
	out := make([]T, 0, len(keys))
	for _, k := range keys {
		if obj, ok := s.data.get(k); ok {
			out = append(out, obj)
		}
	}
	s.mu.RUnlock()
	return out
}

// Keys returns every key, sorted.
func (s *Store[T]) Keys() []string {
	s.mu.RLock()
	keys := s.data.keys()
	s.mu.RUnlock()
	sort.Strings(keys)
	return keys
}

// Len returns the number of cached objects.
func (s *Store[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.data.size()
}

// ByIndex returns the objects indexed under value by the named index,
// sorted by key.
func (s *Store[T]) ByIndex(index, value string) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var keys []string
	if index == NamespaceIndex {
		set := s.namespaceIndexRLocked()[value]
		keys = make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
	} else {
		idx, ok := s.indices[index]
		if !ok {
			return nil, fmt.Errorf("informer: no index named %q", index)
		}
		keys = idx[value].appendTo(nil)
	}
	slices.Sort(keys)
	out := make([]T, 0, len(keys))
	for _, k := range keys {
		if obj, ok := s.data.get(k); ok {
			out = append(out, obj)
		}
	}
	return out, nil
}

// IndexValues returns the values the named index holds, sorted.
func (s *Store[T]) IndexValues(index string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	if index == NamespaceIndex {
		out = slices.Collect(maps.Keys(s.namespaceIndexRLocked()))
	} else {
		out = slices.Collect(maps.Keys(s.indices[index]))
	}
	slices.Sort(out)
	return out
}

// mapStorage keeps decoded objects.
type mapStorage[T Object] struct {
	m map[string]T
}

func newMapStorage[T Object]() *mapStorage[T] { return &mapStorage[T]{m: map[string]T{}} }

func (m *mapStorage[T]) get(key string) (T, bool) { v, ok := m.m[key]; return v, ok }
func (m *mapStorage[T]) put(key string, obj T, _ []byte) error {
	m.m[key] = obj
	return nil
}
func (m *mapStorage[T]) remove(key string) { delete(m.m, key) }
func (m *mapStorage[T]) resourceVersion(key string) (string, bool) {
	v, ok := m.m[key]
	if !ok {
		return "", false
	}
	return v.GetResourceVersion(), true
}
func (m *mapStorage[T]) each(fn func(string, T) bool) {
	for k, v := range m.m {
		if !fn(k, v) {
			return
		}
	}
}
func (m *mapStorage[T]) loader(string) func() (T, bool) { return nil }

func (m *mapStorage[T]) keys() []string {
	out := make([]string, 0, len(m.m))
	for k := range m.m {
		out = append(out, k)
	}
	return out
}
func (m *mapStorage[T]) size() int { return len(m.m) }

func (m *mapStorage[T]) bytes(key string) int64 {
	v, ok := m.m[key]
	if !ok {
		return 0
	}
	return entryBytes(key, 8+objectBytes(v)) // a pointer in the map
}
