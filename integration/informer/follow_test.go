package informer_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
)

// Follow through watches the server ends every 2 s (TimeoutSeconds): each
// is resumed from the last resourceVersion seen, without a list, and every
// change comes once, in order.
func TestFollowResumesAcrossServerClosedWatches(t *testing.T) {
	env := testenv.Shared(t)
	writer := client(t, env.RESTConfig(testenv.Admin))
	ns := newNamespace(t, writer)
	cms := writer.Resource(cmGVR).Namespace(ns)
	if _, err := cms.Create(t.Context(), configMap(ns, "counter", "0"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := env.RESTConfig(testenv.Admin)
	answers := recordAnswers(cfg, "/api/v1/namespaces/"+ns+"/configmaps", false)
	reader := client(t, cfg)

	const changes = 40
	var (
		start    sync.Once
		writes   sync.WaitGroup
		writeErr error
	)
	write := func() {
		defer writes.Done()
		for i := 1; i <= changes; i++ {
			time.Sleep(150 * time.Millisecond)
			p := fmt.Appendf(nil, `{"data":{"v":"%d"}}`, i)
			if _, err := cms.Patch(context.Background(), "counter", types.MergePatchType, p, metav1.PatchOptions{}); err != nil {
				writeErr = err
				return
			}
		}
	}
	var got []string
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	opts := informer.FollowOptions{ListOptions: metav1.ListOptions{FieldSelector: "metadata.name=counter", TimeoutSeconds: ptr.To[int64](2)}}
	err := informer.Follow(ctx, informer.NewResourceSource(reader.Resource(cmGVR).Namespace(ns), informer.SourceOptions{}), opts,
		informer.FollowFuncs[*unstructured.Unstructured]{
			Listed: func(items []*unstructured.Unstructured) (bool, error) {
				for _, obj := range items {
					got = append(got, "listed "+value(obj))
				}
				start.Do(func() {
					writes.Add(1)
					go write() // the changes start after the list
				})
				return false, nil
			},
			Event: func(typ watch.EventType, obj *unstructured.Unstructured) (bool, error) {
				got = append(got, string(typ)+" "+value(obj))
				return value(obj) == strconv.Itoa(changes), nil
			},
		})
	writes.Wait()
	if err != nil || writeErr != nil {
		t.Fatalf("Follow = %v (writes: %v)", err, writeErr)
	}
	want := []string{"listed 0"}
	for i := 1; i <= changes; i++ {
		want = append(want, fmt.Sprintf("MODIFIED %d", i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what Follow handed over (-want +got):\n%s", diff)
	}
	lists, watches := 0, 0
	for _, a := range answers() {
		if a.status != 200 {
			t.Errorf("request %v answered %d", a.query, a.status)
		}
		if a.query.Get("watch") != "true" {
			lists++
			continue
		}
		watches++
		if a.query.Get("resourceVersion") == "" || a.query.Get("timeoutSeconds") != "2" {
			t.Errorf("watch %v: want one from a resourceVersion, for 2 s", a.query)
		}
	}
	if lists != 1 || watches < 3 {
		t.Errorf("%d lists and %d watches over %d changes 150 ms apart: want one list, then watches resumed every 2 s", lists, watches, changes)
	}
}

func value(obj *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(obj.Object, "data", "v")
	return v
}
