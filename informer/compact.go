package informer

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kdyn/kdyn/internal/fastjson"
	"github.com/kdyn/kdyn/internal/wire"
)

// eventObject returns a watch event's object as a T, with its text if a
// feed sent it (wire.TextObject).
func eventObject[T Object](o runtime.Object) (T, []byte, bool) {
	var raw []byte
	if w, ok := o.(*wire.TextObject); ok {
		o, raw = w.Unstructured, w.Text
	}
	t, ok := o.(T)
	return t, raw, ok
}

// compactStorage keeps each object as JSON bytes (the server's text when
// the source provides it, else an encoding of the object) plus its
// resourceVersion, and decodes it on every read. For memory-bound
// controllers that cache many large objects; reads cost a decode.
type compactStorage struct {
	m       map[string]compactEntry
	scratch []byte       // encoding buffer, reused under the store's write lock
	decodes atomic.Int64 // objects decoded for reads (the cost tests watch)
}

type compactEntry struct {
	raw []byte
	rv  string
}

func newCompactStorage() *compactStorage {
	return &compactStorage{m: map[string]compactEntry{}}
}

func (c *compactStorage) decode(raw []byte) (*unstructured.Unstructured, bool) {
	c.decodes.Add(1)
	m, err := fastjson.DecodeObject(raw)
	if err != nil {
		return nil, false
	}
	return &unstructured.Unstructured{Object: m}, true
}

func (c *compactStorage) get(key string) (*unstructured.Unstructured, bool) {
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	return c.decode(e.raw)
}

// RawJSON returns the cached object's JSON text without decoding it,
// for informers in compact mode (InformerOptions.Compact), e.g. to read a
// few fields with gjson. It reports false for other informers and for
// keys not in the cache. The bytes are shared: do not modify them.
func RawJSON(inf *Informer[*unstructured.Unstructured], key string) ([]byte, bool) {
	c, ok := inf.store.data.(*compactStorage)
	if !ok {
		return nil, false
	}
	inf.store.mu.RLock()
	defer inf.store.mu.RUnlock()
	e, ok := c.m[key]
	return e.raw, ok
}

// put stores obj; raw, when not nil, is its text as the server sent it,
// kept as is (the caller does not reuse it).
func (c *compactStorage) put(key string, obj *unstructured.Unstructured, raw []byte) error {
	if raw != nil {
		c.m[key] = compactEntry{raw: raw, rv: obj.GetResourceVersion()}
		return nil
	}
	b, err := fastjson.Append(c.scratch[:0], obj.Object)
	if err != nil {
		return fmt.Errorf("informer: encode %s for the compact store: %w", key, err)
	}
	c.scratch = b
	raw = make([]byte, len(b)) // exactly sized: the cache holds many
	copy(raw, b)
	c.m[key] = compactEntry{raw: raw, rv: obj.GetResourceVersion()}
	return nil
}

func (c *compactStorage) remove(key string) { delete(c.m, key) }

func (c *compactStorage) loader(key string) func() (*unstructured.Unstructured, bool) {
	e, ok := c.m[key]
	if !ok {
		return nil
	}
	return func() (*unstructured.Unstructured, bool) { return c.decode(e.raw) }
}

func (c *compactStorage) resourceVersion(key string) (string, bool) {
	e, ok := c.m[key]
	return e.rv, ok
}

func (c *compactStorage) each(fn func(string, *unstructured.Unstructured) bool) {
	for k, e := range c.m {
		obj, ok := c.decode(e.raw)
		if !ok {
			continue
		}
		if !fn(k, obj) {
			return
		}
	}
}

func (c *compactStorage) keys() []string {
	out := make([]string, 0, len(c.m))
	for k := range c.m {
		out = append(out, k)
	}
	return out
}

func (c *compactStorage) size() int { return len(c.m) }

func (c *compactStorage) bytes(key string) int64 {
	e, ok := c.m[key]
	if !ok {
		return 0
	}
	return entryBytes(key, int64(unsafe.Sizeof(e))+allocBytes(int64(len(e.raw)))+allocBytes(int64(len(e.rv))))
}
