package informer

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/internal/fastjson"
)

// wireLister is implemented by sources that hand each object over with
// its JSON text as the server sent it (managedFields cut out when the
// source omits them), for the compact store to keep instead of encoding
// the decoded object again: list items through listWire (known, when not
// nil, as for ListSkipping), watch events as *wireObject.
type wireLister[T Object] interface {
	listWire(ctx context.Context, opts metav1.ListOptions, known func(key, rv string) bool, each func(T, []byte) error) (ListPage, error)
}

// wireSource is the source of a compact informer: an unstructuredSource
// whose objects come with their text.
type wireSource struct{ *unstructuredSource }

func (s wireSource) listWire(ctx context.Context, opts metav1.ListOptions, known func(key, rv string) bool, each func(*unstructured.Unstructured, []byte) error) (ListPage, error) {
	return s.streamList(ctx, opts, known,
		func(b []byte) (map[string]any, []byte, error) { return fastjson.DecodeObjectSharedRaw(b, "", s.omitMF) },
		func(m map[string]any, raw []byte) error { return each(&unstructured.Unstructured{Object: m}, raw) })
}

func (s wireSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return s.watchRequest(opts).WatchMapsRaw(ctx, wireMap, nil)
}

func (s wireSource) WatchPeek(ctx context.Context, opts metav1.ListOptions, known func(key, rv string) bool) (watch.Interface, error) {
	return s.watchRequest(opts).WatchMapsRaw(ctx, wireMap, knownPeek(known))
}

// wireObject is a watch event's object with its JSON text. It lives only
// between a wireSource and the reflector, which unwraps it (eventObject).
type wireObject struct {
	*unstructured.Unstructured
	raw []byte
}

func wireMap(m map[string]any, raw []byte) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: m}
	if raw == nil {
		return u, nil
	}
	return &wireObject{Unstructured: u, raw: raw}, nil
}

// eventObject returns a watch event's object as a T, with its text if a
// wireSource sent it.
func eventObject[T Object](o runtime.Object) (T, []byte, bool) {
	var raw []byte
	if w, ok := o.(*wireObject); ok {
		o, raw = w.Unstructured, w.raw
	}
	t, ok := o.(T)
	return t, raw, ok
}

// withTypeMeta returns an object's text with apiVersion and kind added
// first, for list items that the server sent without them.
func withTypeMeta(raw []byte, apiVersion, kind string) []byte {
	rest := raw[1:] // after '{'
	b := make([]byte, 0, len(raw)+len(apiVersion)+len(kind)+len(`"apiVersion":"","kind":"",`)+8)
	b = append(b, `{"apiVersion":`...)
	b = appendString(b, apiVersion)
	b = append(b, `,"kind":`...)
	b = appendString(b, kind)
	if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 && trimmed[0] != '}' {
		b = append(b, ',')
	}
	return append(b, rest...)
}

// compactStorage keeps each object as JSON bytes (the server's text when
// the source provides it, else an encoding of the object) plus its
// resourceVersion, and decodes it on every read. For memory-bound
// controllers that cache many large objects; reads cost a decode.
type compactStorage struct {
	m       map[string]compactEntry
	scratch []byte // encoding buffer, reused under the store's write lock
}

type compactEntry struct {
	raw []byte
	rv  string
}

func newCompactStorage() *compactStorage {
	return &compactStorage{m: map[string]compactEntry{}}
}

func (c *compactStorage) decode(raw []byte) (*unstructured.Unstructured, bool) {
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
	b, err := appendJSON(c.scratch[:0], obj.Object)
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

// appendJSON appends the JSON of an unstructured value (maps, slices,
// strings, numbers, booleans, nil) to b. Keys are written in map order (the
// bytes are only ever decoded again, so sorting would be wasted work);
// strings are escaped as encoding/json does, except that <, > and & are not
// HTML-escaped.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, t), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case int64:
		return strconv.AppendInt(b, t, 10), nil
	case int:
		return strconv.AppendInt(b, int64(t), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(t), 10), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, fmt.Errorf("unsupported number %v", t)
		}
		return appendFloat(b, t), nil
	case map[string]any:
		b = append(b, '{')
		first := true
		for k, v := range t {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, v); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return nil, fmt.Errorf("unsupported type %T in an unstructured object", v)
}

// appendFloat formats like encoding/json.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
