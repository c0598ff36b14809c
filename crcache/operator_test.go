package crcache_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kdyn/kdyn/crcache"
	"github.com/kdyn/kdyn/crcache/examples/secretsync"
	"github.com/kdyn/kdyn/integration/testenv"
)

// The operator's caches under test: controller-runtime's own and kdyn's.
var operatorCaches = []struct {
	name     string
	newCache cache.NewCacheFunc
}{
	{"controller-runtime", nil},
	{"crcache", crcache.New},
	{"crcache-compact", crcache.NewWith(crcache.Options{Compact: true})},
}

// TestOperatorSameOnBothCaches runs the secretsync operator, unmodified but
// for manager.Options.NewCache, on controller-runtime's cache and on
// crcache's, through the same creates, updates and deletes, and checks that
// each ends with the same Secrets after the same writes.
func TestOperatorSameOnBothCaches(t *testing.T) {
	log.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	env := testenv.Shared(t)
	var results []string
	for _, c := range operatorCaches {
		t.Run(c.name, func(t *testing.T) {
			results = append(results, runOperatorScenario(t, env, c.name, c.newCache))
		})
	}
	for i := 1; i < len(results); i++ {
		if results[i] != results[0] {
			t.Errorf("%s ended with\n%s\nwhere %s ended with\n%s", operatorCaches[i].name, results[i], operatorCaches[0].name, results[0])
		}
	}
}

// runOperatorScenario runs the operator with newCache (nil: the default)
// in a namespace of its own and returns what it ended with.
func runOperatorScenario(t *testing.T, env *testenv.Env, name string, newCache cache.NewCacheFunc) string {
	cfg := restConfig(env)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	direct, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := "op-" + name
	if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	source := map[string]string{secretsync.SourceLabel: "true"}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a", Labels: source}, Data: map[string]string{"x": "1"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b", Labels: source}, Data: map[string]string{"y": "2"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}, Data: map[string]string{"z": "3"}},
	} {
		if err := direct.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		NewCache:               newCache,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &secretsync.Reconciler{}
	if err := r.Setup(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	secret := func(name string) (map[string]string, bool) {
		var s corev1.Secret
		if err := direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			return nil, false
		}
		out := map[string]string{}
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out, true
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case <-ctx.Done():
				var cm corev1.ConfigMap
				err := mgr.GetCache().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "b"}, &cm)
				t.Fatalf("%s: timed out waiting for %s (reconciles %d, cached b %v %v)", name, what, r.Reconciles.Load(), cm.Data, err)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	hasData := func(secretName string, want map[string]string) func() bool {
		return func() bool { got, ok := secret(secretName); return ok && maps.Equal(got, want) }
	}
	update := func(obj client.Object, change func()) {
		t.Helper()
		if err := direct.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		change()
		if err := direct.Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	// Secrets for the two sources, none for the other ConfigMap.
	waitFor("a-synced", hasData("a-synced", map[string]string{"x": "1"}))
	waitFor("b-synced", hasData("b-synced", map[string]string{"y": "2"}))
	// A change of a source reaches its Secret.
	cmA := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}
	update(cmA, func() { cmA.Data = map[string]string{"x": "10"} })
	waitFor("a-synced updated", hasData("a-synced", map[string]string{"x": "10"}))
	// A deleted Secret comes back (Owns).
	if err := direct.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b-synced"}}); err != nil {
		t.Fatal(err)
	}
	waitFor("b-synced recreated", hasData("b-synced", map[string]string{"y": "2"}))
	// A paused namespace (seen through the metadata-only watch) is left
	// alone: once the cache has seen the pause, no reconcile writes.
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	update(nsObj, func() { nsObj.Labels = map[string]string{secretsync.PausedLabel: "true"} })
	waitFor("the cache to see the pause", func() bool {
		var m metav1.PartialObjectMetadata
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
		return mgr.GetCache().Get(ctx, client.ObjectKey{Name: ns}, &m) == nil && m.Labels[secretsync.PausedLabel] == "true"
	})
	cmB := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}}
	before := r.Reconciles.Load()
	update(cmB, func() { cmB.Data = map[string]string{"y": "20"} })
	waitFor("a reconcile of b while paused", func() bool {
		var cm corev1.ConfigMap
		return r.Reconciles.Load() > before && mgr.GetCache().Get(ctx, client.ObjectKeyFromObject(cmB), &cm) == nil && cm.Data["y"] == "20"
	})
	if got, _ := secret("b-synced"); got["y"] != "2" {
		t.Errorf("%s: b-synced changed in a paused namespace: %v", name, got)
	}
	// Unpaused, the change goes through.
	update(nsObj, func() { delete(nsObj.Labels, secretsync.PausedLabel) })
	waitFor("b-synced updated after the pause", hasData("b-synced", map[string]string{"y": "20"}))
	if _, ok := secret("c-synced"); ok {
		t.Errorf("%s: a Secret for a ConfigMap without the source label", name)
	}

	var secrets corev1.SecretList
	if err := direct.List(ctx, &secrets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, s := range secrets.Items {
		owner := metav1.GetControllerOf(&s)
		fmt.Fprintf(&b, "%s owner=%s/%s data=%v\n", s.Name, owner.Kind, owner.Name, s.Data)
	}
	fmt.Fprintf(&b, "creates=%d updates=%d\n", r.Creates.Load(), r.Updates.Load())
	return b.String()
}

// restConfig is client-go's configuration of env's admin.
func restConfig(env *testenv.Env) *rest.Config {
	return &rest.Config{Host: env.Host(), BearerToken: env.AdminToken(), TLSClientConfig: rest.TLSClientConfig{CAData: env.CAData()}}
}
