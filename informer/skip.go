package informer

import (
	"context"
	"fmt"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/internal/fastjson"
	"github.com/kdyn/kdyn/rest"
)

// skippingLister is implemented by sources that can leave items the cache
// already has (same key, same resourceVersion) undecoded during a relist:
// they read each item's name, namespace and resourceVersion from the raw
// page and decode only the others. A relist of a mostly unchanged
// resource then allocates little beyond the page itself, so peak memory
// stays near the steady state.
type skippingLister[T Object] interface {
	ListSkipping(ctx context.Context, opts metav1.ListOptions, known func(key, rv string) bool, each func(T) error) (ListPage, error)
}

func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// eachRawItem walks a list page's items with gjson, calling known (from the
// raw bytes) and decoding with decode only the items known rejects.
func eachRawItem(body []byte, known func(key, rv string) bool, decode func(m map[string]any) error) (ListPage, error) {
	if !gjson.ValidBytes(body) {
		return ListPage{}, fmt.Errorf("informer: the server sent a list that is not valid JSON")
	}
	doc := bytesView(body)
	head := gjson.GetMany(doc, "apiVersion", "kind", "metadata.resourceVersion", "metadata.continue")
	apiVersion, kind := head[0].String(), strings.TrimSuffix(head[1].String(), "List")
	page := ListPage{ResourceVersion: head[2].String(), Continue: head[3].String()}
	var err error
	gjson.Get(doc, "items").ForEach(func(_, item gjson.Result) bool {
		md := item.Get("metadata")
		f := md.Get("namespace").String()
		name, rv := md.Get("name").String(), md.Get("resourceVersion").String()
		key := name
		if f != "" {
			key = f + "/" + name
		}
		if rv != "" && known(key, rv) {
			return true
		}
		var m map[string]any
		if m, err = fastjson.DecodeObjectShared([]byte(item.Raw)); err != nil {
			return false
		}
		if _, ok := m["kind"]; !ok {
			if _, ok := m["apiVersion"]; !ok {
				m["apiVersion"], m["kind"] = apiVersion, kind
			}
		}
		err = decode(m)
		return err == nil
	})
	return page, err
}

func (s *unstructuredSource) ListSkipping(ctx context.Context, opts metav1.ListOptions, known func(key, rv string) bool, each func(*unstructured.Unstructured) error) (ListPage, error) {
	body, err := request(s.rc, s.gvr, s.ns).VersionedParams(&opts).DoRaw(ctx)
	if err != nil {
		return ListPage{}, err
	}
	return eachRawItem(body, known, func(m map[string]any) error { return each(&unstructured.Unstructured{Object: m}) })
}

// peekingWatcher is implemented by sources whose watches can answer an
// ADDED event for an object the cache already has at the same
// resourceVersion without decoding it — what the initial events of a
// streaming relist mostly are.
type peekingWatcher[T Object] interface {
	WatchPeek(ctx context.Context, opts metav1.ListOptions, known func(key, rv string) bool) (watch.Interface, error)
}

// knownPeek returns the frame peek of WatchPeek: ADDED frames of known
// objects become a stub carrying only the name, namespace and
// resourceVersion.
func knownPeek(known func(key, rv string) bool) rest.FramePeek {
	return func(frame []byte) (watch.Event, bool) {
		r := gjson.GetMany(bytesView(frame), "type", "object.metadata.namespace", "object.metadata.name", "object.metadata.resourceVersion")
		if r[0].Str != string(watch.Added) || r[3].Str == "" {
			return watch.Event{}, false
		}
		ns, name, rv := strings.Clone(r[1].Str), strings.Clone(r[2].Str), strings.Clone(r[3].Str)
		key := name
		if ns != "" {
			key = ns + "/" + name
		}
		if !known(key, rv) {
			return watch.Event{}, false
		}
		md := map[string]any{"name": name, "resourceVersion": rv}
		if ns != "" {
			md["namespace"] = ns
		}
		return watch.Event{Type: watch.Added, Object: &unstructured.Unstructured{Object: map[string]any{"metadata": md}}}, true
	}
}

func (s *unstructuredSource) WatchPeek(ctx context.Context, opts metav1.ListOptions, known func(key, rv string) bool) (watch.Interface, error) {
	opts.Watch = true
	return request(s.rc, s.gvr, s.ns).VersionedParams(&opts).WatchMapsPeek(ctx,
		func(obj map[string]any) (runtime.Object, error) { return &unstructured.Unstructured{Object: obj}, nil },
		knownPeek(known))
}
