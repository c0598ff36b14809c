package wire

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/internal/fastjson"
	"github.com/kdyn/kdyn/internal/pbwire"
)

// bytesView is b as a string, without a copy; valid while b is.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// streamItems reads a list page from body as it arrives and hands each
// item, parsed with parse, to decode as soon as it is complete, so that
// decoding overlaps the transfer and the page is never held whole. parse
// may also return the item's text (raw), which decode then gets too. If
// known is not nil, items it recognizes (from their raw name, namespace and
// resourceVersion) are not decoded at all. Items without apiVersion and
// kind get the list's (their text too).
func streamItems(body io.Reader, known func(key, rv string) bool, parse func([]byte) (map[string]any, []byte, error), decode func(m map[string]any, raw []byte) error) (ListPage, error) {
	s := fastjson.NewListStream(body)
	var apiVersion, kind string
	head := false
	type item struct {
		m   map[string]any
		raw []byte
	}
	var pending []item // items that came before the list's kind
	var key []byte     // reused: known's arguments are only valid during the call
	fill := func(it item) error {
		if _, ok := it.m["kind"]; !ok {
			if _, ok := it.m["apiVersion"]; !ok {
				it.m["apiVersion"], it.m["kind"] = apiVersion, kind
				if it.raw != nil {
					it.raw = withTypeMeta(it.raw, apiVersion, kind)
				}
			}
		}
		return decode(it.m, it.raw)
	}
	err := s.Items(func(data []byte) error {
		if known != nil {
			var rv string
			var ok bool
			if key, rv, ok = rawKey(key[:0], gjson.Get(bytesView(data), "metadata")); ok && known(bytesView(key), rv) {
				return nil
			}
		}
		m, raw, err := parse(data)
		if err != nil {
			return err
		}
		if !head {
			av, okAV := s.Field("apiVersion")
			k, okK := s.Field("kind")
			if okAV && okK {
				head = true
				apiVersion, kind = gjson.ParseBytes(av).String(), strings.TrimSuffix(gjson.ParseBytes(k).String(), "List")
			}
		}
		if !head {
			pending = append(pending, item{m, raw})
			return nil
		}
		return fill(item{m, raw})
	})
	if err != nil {
		return ListPage{}, fmt.Errorf("read the list: %w", err)
	}
	if !head {
		av, _ := s.Field("apiVersion")
		k, _ := s.Field("kind")
		apiVersion, kind = gjson.ParseBytes(av).String(), strings.TrimSuffix(gjson.ParseBytes(k).String(), "List")
	}
	for _, it := range pending {
		if err := fill(it); err != nil {
			return ListPage{}, err
		}
	}
	md, _ := s.Field("metadata")
	r := gjson.GetManyBytes(md, "resourceVersion", "continue", "shardInfo.selector")
	return ListPage{ResourceVersion: r[0].String(), Continue: r[1].String(), ShardSelector: r[2].String()}, nil
}

// rawKey appends the cache key (namespace/name) of an object's raw
// metadata to buf and returns it with the resourceVersion, without
// allocating; the results point into buf and the raw bytes. ok is false
// when the metadata has no resourceVersion.
func rawKey(buf []byte, md gjson.Result) (key []byte, rv string, ok bool) {
	r := md.Get("resourceVersion")
	if r.Type != gjson.String || r.Str == "" {
		return buf, "", false
	}
	if ns := md.Get("namespace").Str; ns != "" {
		buf = append(append(buf, ns...), '/')
	}
	return append(buf, md.Get("name").Str...), r.Str, true
}

// knownFrame is the object of the event knownPeek answers for a frame of
// an object the cache already has. It is not a T, so the reflector only
// takes its arrival as a sign of life; the frame's key was counted as seen
// by known itself.
type knownFrame struct{ metav1.TypeMeta }

func (k *knownFrame) DeepCopyObject() runtime.Object { return k }

var knownFrameEvent = watch.Event{Type: watch.Added, Object: &knownFrame{}}

// knownPeek returns the frame peek of WatchPeek: ADDED frames of objects
// the cache has at the same resourceVersion are answered with
// knownFrameEvent, allocating nothing: a streaming relist of a mostly
// unchanged resource then costs little beyond reading the stream.
func knownPeek(known func(key, rv string) bool) FramePeek {
	var key []byte // reused: known's arguments are only valid during the call
	return func(frame []byte) (watch.Event, bool) {
		doc := bytesView(frame)
		if t := gjson.Get(doc, "type"); t.Str != string(watch.Added) {
			return watch.Event{}, false
		}
		var rv string
		var ok bool
		if key, rv, ok = rawKey(key[:0], gjson.Get(doc, "object.metadata")); !ok {
			return watch.Event{}, false
		}
		if !known(bytesView(key), rv) {
			return watch.Event{}, false
		}
		return knownFrameEvent, true
	}
}

// protobufKnownPeek is knownPeek for protobuf watch frames: it reads the event type and the object's name,
// namespace and resourceVersion from the encoded WatchEvent (field 1: type;
// field 2: the RawExtension whose field 1 holds the "k8s\x00" envelope,
// whose field 2 holds the object, whose field 1 is its ObjectMeta)
// without decoding it.
func protobufKnownPeek(known func(key, rv string) bool) FramePeek {
	var key []byte // reused: known's arguments are only valid during the call
	return func(frame []byte) (watch.Event, bool) {
		if t, ok := pbwire.Bytes(frame, 1); !ok || string(t) != string(watch.Added) {
			return watch.Event{}, false
		}
		env, ok := pbwire.Path(frame, 2, 1)
		if !ok || !bytes.HasPrefix(env, protobufMagic) {
			return watch.Event{}, false
		}
		obj, ok := pbwire.Bytes(env[len(protobufMagic):], 2)
		if !ok {
			return watch.Event{}, false
		}
		var held bool
		if key, held = KnownObject(key, obj, known); !held {
			return watch.Event{}, false
		}
		return knownFrameEvent, true
	}
}

// KnownObject reports whether known holds the object whose encoding (no
// envelope; its field 1 is its ObjectMeta) is raw, at the encoded
// resourceVersion, reading only its name, namespace and resourceVersion.
// key is a buffer for the cache key, returned for reuse.
func KnownObject(key, raw []byte, known Known) ([]byte, bool) {
	md, ok := pbwire.Bytes(raw, 1)
	if !ok {
		return key, false
	}
	var name, ns, rv []byte
	pbwire.Each(md, func(num int, v []byte) bool {
		switch num {
		case 1:
			name = v
		case 3:
			ns = v
		case 6:
			rv = v
		}
		return true
	})
	if len(rv) == 0 {
		return key, false
	}
	key = key[:0]
	if len(ns) > 0 {
		key = append(append(key, ns...), '/')
	}
	key = append(key, name...)
	return key, known(bytesView(key), bytesView(rv))
}

// withTypeMeta returns an object's text with apiVersion and kind added
// first, for list items that the server sent without them.
func withTypeMeta(raw []byte, apiVersion, kind string) []byte {
	rest := raw[1:] // after '{'
	b := make([]byte, 0, len(raw)+len(apiVersion)+len(kind)+len(`"apiVersion":"","kind":"",`)+8)
	b = append(b, `{"apiVersion":`...)
	b = fastjson.AppendString(b, apiVersion)
	b = append(b, `,"kind":`...)
	b = fastjson.AppendString(b, kind)
	if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 && trimmed[0] != '}' {
		b = append(b, ',')
	}
	return append(b, rest...)
}

// decodeItem decodes one list item as d says, with its text when d.Text.
func decodeItem(b []byte, d Decoding) (map[string]any, []byte, error) {
	switch {
	case d.Text:
		return fastjson.DecodeObjectSharedRaw(b, "", d.OmitManagedFields)
	case d.OmitManagedFields:
		m, err := fastjson.DecodeObjectSharedOmittingManagedFields(b, 1)
		return m, nil, err
	default:
		m, err := fastjson.DecodeObjectShared(b)
		return m, nil, err
	}
}
