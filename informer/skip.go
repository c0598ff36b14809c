package informer

import (
	"context"
	"fmt"
	"io"
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

// streamItems reads a list page from body as it arrives and hands each
// item to decode as soon as it is complete, so that decoding overlaps the
// transfer and the page is never held whole. If known is not nil, items it
// recognizes (from their raw name, namespace and resourceVersion) are not
// decoded at all. Items without apiVersion and kind get the list's.
func streamItems(body io.Reader, known func(key, rv string) bool, decode func(m map[string]any) error) (ListPage, error) {
	s := fastjson.NewListStream(body)
	var apiVersion, kind string
	head := false
	var pending []map[string]any // items that came before the list's kind
	fill := func(m map[string]any) {
		if _, ok := m["kind"]; !ok {
			if _, ok := m["apiVersion"]; !ok {
				m["apiVersion"], m["kind"] = apiVersion, kind
			}
		}
	}
	err := s.Items(func(raw []byte) error {
		if known != nil {
			md := gjson.GetManyBytes(raw, "metadata.namespace", "metadata.name", "metadata.resourceVersion")
			key := md[1].String()
			if ns := md[0].String(); ns != "" {
				key = ns + "/" + key
			}
			if rv := md[2].String(); rv != "" && known(key, rv) {
				return nil
			}
		}
		m, err := fastjson.DecodeObjectShared(raw)
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
			pending = append(pending, m)
			return nil
		}
		fill(m)
		return decode(m)
	})
	if err != nil {
		return ListPage{}, fmt.Errorf("informer: read the list: %w", err)
	}
	if !head {
		av, _ := s.Field("apiVersion")
		k, _ := s.Field("kind")
		apiVersion, kind = gjson.ParseBytes(av).String(), strings.TrimSuffix(gjson.ParseBytes(k).String(), "List")
	}
	for _, m := range pending {
		fill(m)
		if err := decode(m); err != nil {
			return ListPage{}, err
		}
	}
	md, _ := s.Field("metadata")
	r := gjson.GetManyBytes(md, "resourceVersion", "continue")
	return ListPage{ResourceVersion: r[0].String(), Continue: r[1].String()}, nil
}

// listItems sends a list request and streams its items (see streamItems).
func (s *unstructuredSource) listItems(ctx context.Context, opts metav1.ListOptions, known func(key, rv string) bool, each func(*unstructured.Unstructured) error) (ListPage, error) {
	body, err := request(s.rc, s.gvr, s.ns).VersionedParams(&opts).Stream(ctx)
	if err != nil {
		return ListPage{}, err
	}
	defer body.Close()
	return streamItems(body, known, func(m map[string]any) error { return each(&unstructured.Unstructured{Object: m}) })
}

func (s *unstructuredSource) ListSkipping(ctx context.Context, opts metav1.ListOptions, known func(key, rv string) bool, each func(*unstructured.Unstructured) error) (ListPage, error) {
	return s.listItems(ctx, opts, known, each)
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
