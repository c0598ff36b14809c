package pods

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/fake"
)

// flaky is a client whose first lists fail with err, as a server that
// restarts or refuses does.
type flaky struct {
	dynamic.Interface
	fails atomic.Int32
	err   error
}

func (f *flaky) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return flakyResource{f.Interface.Resource(gvr), f}
}

type flakyResource struct {
	dynamic.NamespaceableResourceInterface
	f *flaky
}

func (r flakyResource) Namespace(ns string) dynamic.ResourceInterface {
	return flakyList{r.NamespaceableResourceInterface.Namespace(ns), r.f}
}

type flakyList struct {
	dynamic.ResourceInterface
	f *flaky
}

func (l flakyList) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if l.f.fails.Add(-1) >= 0 {
		return nil, l.f.err
	}
	return l.ResourceInterface.List(ctx, opts)
}

func testPod(phase string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": "ns"},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}},
		"status":   map[string]any{"phase": phase},
	}}
}

func running(u *unstructured.Unstructured) (bool, error) {
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return phase == "Running", nil
}

// TestWaitPod: the wait outlasts a server that fails for a while, ends at
// a refusal, a deletion or its timeout, and sees the change it waits for
// through the watch.
func TestWaitPod(t *testing.T) {
	ctx := t.Context()

	t.Run("server errors are retried", func(t *testing.T) {
		c := &flaky{Interface: fake.NewClient(testPod("Running")), err: apierrors.NewInternalError(errors.New("etcd restarting"))}
		c.fails.Store(3)
		pod, err := WaitPod(ctx, c, "ns", "p", time.Minute, running)
		if err != nil || pod == nil || pod.GetName() != "p" {
			t.Fatalf("WaitPod: %v, %v", pod, err)
		}
	})

	t.Run("a refusal ends the wait", func(t *testing.T) {
		c := &flaky{Interface: fake.NewClient(testPod("Running")), err: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))}
		c.fails.Store(1)
		if _, err := WaitPod(ctx, c, "ns", "p", time.Minute, running); !apierrors.IsForbidden(err) {
			t.Fatalf("WaitPod: %v, want Forbidden", err)
		}
	})

	t.Run("the change comes through the watch", func(t *testing.T) {
		c := fake.NewClient(testPod("Pending"))
		go func() {
			time.Sleep(200 * time.Millisecond)
			_, _ = c.Resource(podsGVR).Namespace("ns").UpdateStatus(ctx, testPod("Running"), metav1.UpdateOptions{})
		}()
		pod, err := WaitPod(ctx, c, "ns", "p", time.Minute, running)
		if err != nil || pod.Object["status"].(map[string]any)["phase"] != "Running" {
			t.Fatalf("WaitPod: %v, %v", pod, err)
		}
	})

	t.Run("a deletion is NotFound", func(t *testing.T) {
		c := fake.NewClient(testPod("Pending"))
		go func() {
			time.Sleep(200 * time.Millisecond)
			_ = c.Resource(podsGVR).Namespace("ns").Delete(ctx, "p", metav1.DeleteOptions{})
		}()
		if _, err := WaitPod(ctx, c, "ns", "p", time.Minute, running); !apierrors.IsNotFound(err) {
			t.Fatalf("WaitPod: %v, want NotFound", err)
		}
	})

	t.Run("the timeout", func(t *testing.T) {
		c := fake.NewClient(testPod("Pending"))
		_, err := WaitPod(ctx, c, "ns", "p", 300*time.Millisecond, running)
		if err == nil || err.Error() != "timed out waiting for the condition" {
			t.Fatalf("WaitPod: %v", err)
		}
	})

	t.Run("a server down for good times out", func(t *testing.T) {
		c := &flaky{Interface: fake.NewClient(testPod("Running")), err: apierrors.NewServiceUnavailable("down")}
		c.fails.Store(1 << 20)
		_, err := WaitPod(ctx, c, "ns", "p", 500*time.Millisecond, running)
		if err == nil || !strings.Contains(err.Error(), "timed out waiting for the condition") {
			t.Fatalf("WaitPod: %v", err)
		}
	})
}
