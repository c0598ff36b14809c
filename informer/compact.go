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

// encodedStorage keeps each object encoded, plus its resourceVersion, and
// decodes it on every read: the compact stores (JSON for unstructured
// objects, protobuf for Go types). For memory-bound controllers that
// cache many large objects; reads cost a decode, and each read is the
// reader's own object.
type encodedStorage[T Object] struct {
	m map[string]compactEntry
	// encode returns obj's encoding to keep (exactly sized: the cache
	// holds many); raw, when not nil, is the server's text, which it may
	// keep as is.
	encode func(key string, obj T, raw []byte) ([]byte, error)
	// decode decodes a kept encoding.
	decode  func(raw []byte) (T, error)
	decodes atomic.Int64 // objects decoded for reads (the cost tests watch)
}

type compactEntry struct {
	raw []byte
	rv  string
}

// compactStorage is the compact store of unstructured objects: JSON, the
// server's text when the source provides it, else an encoding of the
// object.
type compactStorage = encodedStorage[*unstructured.Unstructured]

func newCompactStorage() *compactStorage {
	var scratch []byte // encoding buffer, reused under the store's write lock
	return &compactStorage{
		m: map[string]compactEntry{},
		encode: func(key string, obj *unstructured.Unstructured, raw []byte) ([]byte, error) {
			if raw != nil {
				return raw, nil
			}
			b, err := fastjson.Append(scratch[:0], obj.Object)
			if err != nil {
				return nil, fmt.Errorf("informer: encode %s for the compact store: %w", key, err)
			}
			scratch = b
			raw = make([]byte, len(b)) // exactly sized: the cache holds many
			copy(raw, b)
			return raw, nil
		},
		decode: func(raw []byte) (*unstructured.Unstructured, error) {
			m, err := fastjson.DecodeObject(raw)
			if err != nil {
				return nil, err
			}
			return &unstructured.Unstructured{Object: m}, nil
		},
	}
}

func (c *encodedStorage[T]) read(raw []byte) (T, bool) {
	c.decodes.Add(1)
	obj, err := c.decode(raw)
	return obj, err == nil
}

func (c *encodedStorage[T]) get(key string) (T, bool) {
	e, ok := c.m[key]
	if !ok {
		var zero T
		return zero, false
	}
	return c.read(e.raw)
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

func (c *encodedStorage[T]) put(key string, obj T, raw []byte) error {
	b, err := c.encode(key, obj, raw)
	if err != nil {
		return err
	}
	c.m[key] = compactEntry{raw: b, rv: obj.GetResourceVersion()}
	return nil
}

func (c *encodedStorage[T]) remove(key string) { delete(c.m, key) }

func (c *encodedStorage[T]) loader(key string) func() (T, bool) {
	e, ok := c.m[key]
	if !ok {
		return nil
	}
	return func() (T, bool) { return c.read(e.raw) }
}

func (c *encodedStorage[T]) resourceVersion(key string) (string, bool) {
	e, ok := c.m[key]
	return e.rv, ok
}

func (c *encodedStorage[T]) each(fn func(string, T) bool) {
	for k, e := range c.m {
		obj, ok := c.read(e.raw)
		if !ok {
			continue
		}
		if !fn(k, obj) {
			return
		}
	}
}

func (c *encodedStorage[T]) keys() []string {
	out := make([]string, 0, len(c.m))
	for k := range c.m {
		out = append(out, k)
	}
	return out
}

func (c *encodedStorage[T]) size() int { return len(c.m) }

func (c *encodedStorage[T]) bytes(key string) int64 {
	e, ok := c.m[key]
	if !ok {
		return 0
	}
	return entryBytes(key, int64(unsafe.Sizeof(e))+allocBytes(int64(len(e.raw)))+allocBytes(int64(len(e.rv))))
}
