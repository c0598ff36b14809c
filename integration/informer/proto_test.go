package informer_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
)

// TestProtoInformersFollowTheServer runs informers of *corev1.ConfigMap
// (ForResourceProto: protobuf decoded into the Go type), kept decoded and
// compact, through churn, a cut
// connection and a compaction of etcd past their resourceVersion (a
// relist that leaves known objects undecoded), and checks that each cache
// and each handler's view equals the server, that cached objects are the
// server's less managedFields, and that compact reads are the reader's
// own objects.
func TestProtoInformersFollowTheServer(t *testing.T) {
	// Without the watch cache a compaction is seen by the resumed watch
	// (410), so the informers relist; lists are then never streamed
	// (crcache's tests sync these informers by streaming lists).
	env := testenv.New(t, testenv.Options{ExtraArgs: []string{"--watch-cache=false"}})
	writer := client(t, env.RESTConfig(testenv.Admin))
	ns := newNamespace(t, writer)
	churn(t, writer, ns, 60, "a")
	g := newGate()
	cfg := env.RESTConfig(testenv.Admin)
	cfg.WrapTransport = g.wrap
	p := informer.Proto[*corev1.ConfigMap]{New: func() *corev1.ConfigMap { return &corev1.ConfigMap{} }}
	var runs []protoRun
	{
		f := informer.NewFactory(client(t, cfg), informer.FactoryOptions{Namespace: ns})
		for _, compact := range []bool{false, true} {
			inf := informer.ForResourceProto(f, cmGVR, informer.InformerOptions{Compact: compact}, p)
			v := &protoView{objs: map[string]string{}}
			if _, err := inf.AddEventHandler(v.handler()); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, protoRun{fmt.Sprintf("compact=%v", compact), inf, v})
		}
		runFactory(t, t.Context(), f)
		if err := f.WaitForSync(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T) {
		for _, r := range runs {
			t.Run(r.name, func(t *testing.T) {
				r.converge(t, writer, ns)
			})
		}
	}
	check(t)
	churn(t, writer, ns, 80, "b")
	check(t)

	g.cut()
	deleted := churn(t, writer, ns, 80, "c")
	if err := env.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	last := make([]string, len(runs))
	for i, r := range runs {
		last[i] = r.inf.LastSyncResourceVersion()
	}
	g.restore()
	check(t)
	for i, r := range runs {
		if r.inf.LastSyncResourceVersion() == last[i] {
			t.Errorf("%s: no relist after the compaction", r.name)
		}
		if r.view.deletes() == 0 && deleted > 0 {
			t.Errorf("%s: %d deletes during the gap, none delivered", r.name, deleted)
		}
	}

	// Compact reads decode afresh: a reader may change what it got.
	for _, r := range runs {
		keys := r.inf.Store().Keys()
		a, _ := r.inf.Store().Get(keys[0])
		b, _ := r.inf.Store().Get(keys[0])
		if compact := r.name[len(r.name)-4:] == "true"; compact == (a == b) {
			t.Errorf("%s: two reads of %s are the same object: %v", r.name, keys[0], a == b)
		}
	}
}

// protoView is a handler's view of typed ConfigMaps, from events only.
type protoView struct {
	mu      sync.Mutex
	objs    map[string]string
	deleted int
}

func (v *protoView) handler() informer.HandlerFuncs[*corev1.ConfigMap] {
	set := func(o *corev1.ConfigMap) {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.objs[informer.Key(o)] = o.Data["v"]
	}
	return informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(o *corev1.ConfigMap, _ bool) { set(o) },
		UpdateFunc: func(_, o *corev1.ConfigMap) { set(o) },
		DeleteFunc: func(d informer.Deleted[*corev1.ConfigMap]) {
			v.mu.Lock()
			defer v.mu.Unlock()
			delete(v.objs, informer.Key(d.Obj))
			v.deleted++
		},
	}
}

func (v *protoView) deletes() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.deleted
}

// protoRun is one typed informer under test and its handler's view.
type protoRun struct {
	name string
	inf  *informer.Informer[*corev1.ConfigMap]
	view *protoView
}

// converge waits until the run's cache and handler view equal the server:
// each cached object is the server's (typed, less managedFields).
func (r protoRun) converge(t *testing.T, writer dynamic.Interface, ns string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		want := map[string]*corev1.ConfigMap{}
		serverObjects(t, writer, ns, func(u *unstructured.Unstructured) string {
			cm := &corev1.ConfigMap{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cm); err != nil {
				t.Fatal(err)
			}
			cm.ManagedFields, cm.TypeMeta = nil, metav1.TypeMeta{}
			want[informer.Key(cm)] = cm
			return ""
		})
		problem := ""
		got := r.inf.Store().List()
		if len(got) != len(want) {
			problem = fmt.Sprintf("%d cached, %d on the server", len(got), len(want))
		}
		for _, o := range got {
			if w, ok := want[informer.Key(o)]; !ok || !equality.Semantic.DeepEqual(o, w) {
				problem = fmt.Sprintf("%s cached as %+v, on the server %+v", informer.Key(o), o, w)
				break
			}
		}
		r.view.mu.Lock()
		if problem == "" && len(r.view.objs) != len(want) {
			problem = fmt.Sprintf("the handler saw %d objects, the server has %d", len(r.view.objs), len(want))
		}
		for k, v := range r.view.objs {
			if w, ok := want[k]; problem == "" && (!ok || w.Data["v"] != v) {
				problem = fmt.Sprintf("the handler saw %s with v=%q", k, v)
			}
		}
		r.view.mu.Unlock()
		if problem == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("did not converge: %s", problem)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
