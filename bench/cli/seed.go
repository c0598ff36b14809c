package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
)

var (
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randString(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[r.IntN(len(alnum))]
	}
	return string(b)
}

// ConfigMap returns the i-th benchmark ConfigMap of namespace ns: about
// 1 KiB of data in four keys, five labels and two annotations. The values
// are deterministic in i and include what JSON encoders may treat
// differently (HTML characters, quotes, backslashes, tabs, newlines,
// non-ASCII text, U+2028), so the -o json comparison tests escaping too.
func ConfigMap(ns string, i int) *unstructured.Unstructured {
	r := rand.New(rand.NewPCG(uint64(i), 0x6b64796e))
	name := fmt.Sprintf("cm-%05d", i)
	var cfg strings.Builder
	for j := range 8 {
		fmt.Fprintf(&cfg, "setting%d: %s\n", j, randString(r, 24))
	}
	data := map[string]any{
		"config.yaml": cfg.String(),
		"payload":     randString(r, 512),
		"markup":      fmt.Sprintf("<a href=\"https://example.com/?a=1&b=%d\">x</a>\t'single' \\back\\slash", i),
		"unicode":     "héllo wörld — 日本語 ✓ \u2028 " + randString(r, 96),
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      name,
			"namespace": ns,
			"labels": map[string]any{
				"app":                   "clibench",
				"tier":                  "tier-" + strconv.Itoa(i%5),
				"shard":                 "s" + strconv.Itoa(i%16),
				"index":                 strconv.Itoa(i),
				"bench.kdyn.io/managed": "true",
			},
			"annotations": map[string]any{
				"bench.kdyn.io/description": fmt.Sprintf("benchmark object #%d <generated> & \"quoted\"", i),
				"bench.kdyn.io/checksum":    fmt.Sprintf("%016x", r.Uint64()),
			},
		},
		"data": data,
	}}
}

// Seed creates namespace ns and n ConfigMaps in it with `workers` parallel
// creates through the kdyn dynamic client.
func Seed(ctx context.Context, client dynamic.Interface, ns string, n, workers int, progress func(done int)) error {
	nsObj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}}
	if _, err := client.Resource(namespacesGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	cms := client.Resource(configMapsGVR).Namespace(ns)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done atomic.Int64
		wg         sync.WaitGroup
		errOnce    sync.Once
		firstErr   error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if _, err := cms.Create(ctx, ConfigMap(ns, i), metav1.CreateOptions{}); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("create configmap %d in %s: %w", i, ns, err); cancel() })
					return
				}
				if d := done.Add(1); progress != nil && d%1000 == 0 {
					progress(int(d))
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}
