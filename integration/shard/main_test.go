// Package shard_test proves sharded informers and ring membership on a
// real kube-apiserver v1.37.2 with the ShardedListAndWatch feature gate on
// (and, for the client-side fallback, a second one with it off).
package shard_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// gate turns sharded list and watch on.
const gate = "--feature-gates=ShardedListAndWatch=true"

func TestMain(m *testing.M) {
	if os.Getenv(memberEnv) != "" {
		os.Exit(memberMain())
	}
	code := testenv.Main(m, testenv.Options{ExtraArgs: []string{gate}})
	if gateOff.env != nil {
		if err := gateOff.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

var (
	cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// gateOff is a second control plane, with the ShardedListAndWatch gate
// off, started on the first test that asks for it and stopped after all.
var gateOff struct {
	once sync.Once
	env  *testenv.Env
	err  error
}

// gateOffEnv returns the control plane with the gate off. Like
// testenv.Shared it skips in -short mode, where nothing is started.
func gateOffEnv(t *testing.T) *testenv.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("testenv: integration test skipped in -short mode")
	}
	gateOff.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		gateOff.env, gateOff.err = testenv.Start(ctx, testenv.Options{})
	})
	if gateOff.err != nil {
		t.Fatalf("control plane with the gate off: %v", gateOff.err)
	}
	if err := gateOff.env.Err(); err != nil {
		t.Fatalf("control plane with the gate off: %v", err)
	}
	return gateOff.env
}

func client(t *testing.T, env *testenv.Env) *dynamic.DynamicClient {
	t.Helper()
	cfg := env.RESTConfig(testenv.Admin)
	cfg.QPS = -1 // seeding thousands of objects; the server has the test to itself
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newNamespace creates a namespace for one test (left behind).
func newNamespace(t *testing.T, c dynamic.Interface, prefix string) string {
	t.Helper()
	return testenv.NewNamespace(t, c, prefix)
}

// createConfigMaps creates n ConfigMaps named cm-00000… in ns, 16 at a
// time.
func createConfigMaps(t *testing.T, c dynamic.Interface, ns string, n int) {
	t.Helper()
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": fmt.Sprintf("cm-%05d", i)}, "data": map[string]any{"v": "0"}}}
			_, err := c.Resource(cmGVR).Namespace(ns).Create(context.Background(), cm, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it holds, failing after timeout with its
// last reason.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %v: %s", what, timeout, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
