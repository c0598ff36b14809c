package lib

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
)

// Namespaces and resources the harness seeds.
const (
	NSConfigMaps = "bench-cm"     // Sizes.Objects ConfigMaps
	NSWidgets    = "bench-cr"     // Sizes.Objects widgets
	NSLoad       = "bench-load"   // LoadObjects ConfigMaps for the load scenario
	NSCreate     = "bench-create" // create throughput writes here
	NSScratch    = "bench-scratch"
	LoadObjects  = 1000
	WidgetGroup  = "bench.kdyn.io"
	DiscGroupFmt = "g%03d.disc.bench.kdyn.io"
	seedWorkers  = 16
)

// GVRs used throughout.
var (
	GVRConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	GVRWidgets    = schema.GroupVersionResource{Group: WidgetGroup, Version: "v1", Resource: "widgets"}
	GVRNamespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	GVRCRDs       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// Sizes are the object counts of a run.
type Sizes struct {
	Objects int // ConfigMaps and widgets each
	CRDs    int // discovery CRDs, one group each
}

// filler returns n pseudo-random printable bytes.
func filler(r *rand.Rand, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// ConfigMap returns the i-th seeded ConfigMap: ~1 KiB of data in 4 keys,
// 5 labels, 2 annotations.
func ConfigMap(ns string, i int) *unstructured.Unstructured {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	data := map[string]any{}
	for k := range 4 {
		data[fmt.Sprintf("key-%d", k)] = filler(r, 256)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":        fmt.Sprintf("cm-%05d", i),
			"namespace":   ns,
			"labels":      labels(i),
			"annotations": annotations(i),
		},
		"data": data,
	}}
}

// Widget returns the i-th seeded custom resource, with a ~1 KiB spec.
func Widget(ns string, i int) *unstructured.Unstructured {
	r := rand.New(rand.NewPCG(uint64(i), 11))
	tags := []any{}
	for k := range 4 {
		tags = append(tags, fmt.Sprintf("tag-%d-%s", k, filler(r, 8)))
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": WidgetGroup + "/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name":        fmt.Sprintf("w-%05d", i),
			"namespace":   ns,
			"labels":      labels(i),
			"annotations": annotations(i),
		},
		"spec": map[string]any{
			"size":     int64(i % 97),
			"replicas": int64(1 + i%5),
			"enabled":  i%2 == 0,
			"ratio":    0.25 + float64(i%10)/10,
			"color":    []string{"red", "green", "blue"}[i%3],
			"tags":     tags,
			"owner":    map[string]any{"team": fmt.Sprintf("team-%d", i%7), "email": fmt.Sprintf("owner-%d@example.com", i%31)},
			"ports":    []any{map[string]any{"name": "http", "port": int64(8080)}, map[string]any{"name": "metrics", "port": int64(9090)}},
			"payload":  filler(r, 640),
		},
	}}
}

func labels(i int) map[string]any {
	return map[string]any{
		"app":                    fmt.Sprintf("app-%d", i%50),
		"tier":                   []string{"web", "api", "db", "cache"}[i%4],
		"shard":                  fmt.Sprintf("s%d", i%16),
		"team":                   fmt.Sprintf("team-%d", i%7),
		"app.kubernetes.io/part": "bench",
	}
}

func annotations(i int) map[string]any {
	return map[string]any{
		"bench.kdyn.io/owner":       fmt.Sprintf("owner-%d@example.com", i%31),
		"bench.kdyn.io/description": fmt.Sprintf("seeded object %d for the kdyn library benchmarks", i),
	}
}

// WidgetCRD is the CRD of widgets.bench.kdyn.io.
func WidgetCRD() *unstructured.Unstructured {
	return crd(WidgetGroup, "widgets", "widget", "Widget", "WidgetList")
}

func discoveryCRD(i int) *unstructured.Unstructured {
	return crd(fmt.Sprintf(DiscGroupFmt, i), "gadgets", "gadget", "Gadget", "GadgetList")
}

func crd(group, plural, singular, kind, listKind string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": singular, "kind": kind, "listKind": listKind},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}

// parallel runs fn(i) for i in [0,n) on workers goroutines and returns the
// first error.
func parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && err != context.Canceled {
		return err
	}
	return nil
}

// seedRange runs create(ctx, i) for i in [from, n) on fastSeedWorkers
// goroutines, logging the progress every tenth of the way as scenario.
func (b *Bench) seedRange(ctx context.Context, scenario string, from, n int, create func(ctx context.Context, i int) error) error {
	t0 := time.Now()
	var logMu sync.Mutex
	next := from + (n-from)/10
	return parallel(ctx, n-from, fastSeedWorkers, func(ctx context.Context, k int) error {
		if err := create(ctx, from+k); err != nil {
			return err
		}
		if from+k >= next {
			logMu.Lock()
			if from+k >= next {
				b.logf("%s: seeded %d of %d (%.0f a second)", scenario, from+k, n, float64(k)/time.Since(t0).Seconds())
				next += (n - from) / 10
			}
			logMu.Unlock()
		}
		return nil
	})
}

func createIgnoreExists(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	_, err := ri.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// createOrGet creates obj, or gets it if it exists, and returns it as the
// server has it.
func createOrGet(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, err := ri.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		out, err = ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	}
	return out, err
}

// Seed creates everything the scenarios use and waits until the CRDs serve.
func Seed(ctx context.Context, cn Conn, sz Sizes, logf func(string, ...any)) error {
	dc, err := dynamic.NewForConfig(cn.Kdyn(Unlimited, nil))
	if err != nil {
		return err
	}
	for _, ns := range []string{NSConfigMaps, NSWidgets, NSLoad, NSCreate, NSScratch} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if err := createIgnoreExists(ctx, dc.Resource(GVRNamespaces), obj); err != nil {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	t0 := time.Now()
	crds := dc.Resource(GVRCRDs)
	if err := createIgnoreExists(ctx, crds, WidgetCRD()); err != nil {
		return fmt.Errorf("widget CRD: %w", err)
	}
	if err := parallel(ctx, sz.CRDs, seedWorkers, func(ctx context.Context, i int) error {
		return createIgnoreExists(ctx, crds, discoveryCRD(i))
	}); err != nil {
		return fmt.Errorf("discovery CRDs: %w", err)
	}
	if err := waitEstablished(ctx, dc, sz.CRDs+1); err != nil {
		return err
	}
	logf("seed: %d+1 CRDs established in %s", sz.CRDs, time.Since(t0).Round(time.Millisecond))

	t0 = time.Now()
	cms := dc.Resource(GVRConfigMaps).Namespace(NSConfigMaps)
	if err := parallel(ctx, sz.Objects, seedWorkers, func(ctx context.Context, i int) error {
		return createIgnoreExists(ctx, cms, ConfigMap(NSConfigMaps, i))
	}); err != nil {
		return fmt.Errorf("configmaps: %w", err)
	}
	logf("seed: %d ConfigMaps in %s (%d workers)", sz.Objects, time.Since(t0).Round(time.Millisecond), seedWorkers)

	t0 = time.Now()
	ws := dc.Resource(GVRWidgets).Namespace(NSWidgets)
	if err := retryNotFound(ctx, func() error { return createIgnoreExists(ctx, ws, Widget(NSWidgets, 0)) }); err != nil {
		return fmt.Errorf("first widget: %w", err)
	}
	if err := parallel(ctx, sz.Objects, seedWorkers, func(ctx context.Context, i int) error {
		return createIgnoreExists(ctx, ws, Widget(NSWidgets, i))
	}); err != nil {
		return fmt.Errorf("widgets: %w", err)
	}
	logf("seed: %d widgets in %s", sz.Objects, time.Since(t0).Round(time.Millisecond))

	lcm := dc.Resource(GVRConfigMaps).Namespace(NSLoad)
	if err := parallel(ctx, LoadObjects, seedWorkers, func(ctx context.Context, i int) error {
		return createIgnoreExists(ctx, lcm, ConfigMap(NSLoad, i))
	}); err != nil {
		return fmt.Errorf("load configmaps: %w", err)
	}
	return nil
}

func retryNotFound(ctx context.Context, fn func() error) error {
	for {
		err := fn()
		if err == nil || !apierrors.IsNotFound(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitEstablished waits until n CRDs report Established and their groups
// are in discovery.
func waitEstablished(ctx context.Context, dc *dynamic.DynamicClient, n int) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		l, err := dc.Resource(GVRCRDs).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		est := 0
		for _, it := range l.Items {
			conds, _, _ := unstructured.NestedSlice(it.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					est++
				}
			}
		}
		if est >= n {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d CRDs established", est, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Wait until aggregated discovery lists every group.
	for {
		body, err := dc.RESTClient().Get().AbsPath("/apis").
			SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").DoRaw(ctx)
		if err != nil {
			return err
		}
		var l struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			return err
		}
		got := 0
		for _, it := range l.Items {
			if strings.HasSuffix(it.Metadata.Name, WidgetGroup) {
				got++
			}
		}
		if got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("discovery lists %d of %d bench groups", got, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
