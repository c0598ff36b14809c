package faults_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/restmapper"
)

var (
	metricsGV       = schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}
	apiServiceGVR   = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	deploymentsGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	podMetricsGVR   = schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}
	metricsPathBase = "/apis/metrics.k8s.io/"
)

// TestAggregatedAPIUnavailable registers the APIService
// v1beta1.metrics.k8s.io with no Service behind it, and makes the proxy
// answer 503 to everything under /apis/metrics.k8s.io/. Discovery must
// report that group-version as a partial failure beside the rest, and the
// mapper and lists of other groups must keep working — with aggregated
// discovery (the server marks the group Stale) and with legacy discovery
// (the per-group document answers 503).
func TestAggregatedAPIUnavailable(t *testing.T) {
	env := testenv.Shared(t)
	r := newRig(t, env)
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec": map[string]any{
			"group": "metrics.k8s.io", "version": "v1beta1",
			"service":               map[string]any{"namespace": "kube-system", "name": "metrics-server", "port": int64(443)},
			"insecureSkipTLSVerify": true, "groupPriorityMinimum": int64(100), "versionPriority": int64(100),
		},
	}}
	if _, err := r.direct.Resource(apiServiceGVR).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.direct.Resource(apiServiceGVR).Delete(context.Background(), "v1beta1.metrics.k8s.io", metav1.DeleteOptions{})
	})
	if _, err := r.direct.Resource(cmGVR).Namespace(r.ns).Create(t.Context(), configMap(r.ns, "a", "1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.proxy.Respond5xx(http.StatusServiceUnavailable, -1, faultproxy.PathPrefix(metricsPathBase))
	inf := startInformer(t, r, informer.Options[*unstructured.Unstructured]{})
	w := newWrites()
	defer func() {
		churn(t, r, churnOptions{workers: 2, updates: 10, names: 3, prefix: "d"}, w)
		converge(t, r, inf, 30*time.Second)
		if n, sample := w.missing(inf.model.delivered); n > 0 {
			t.Errorf("the informer never delivered %d versions, e.g. %s", n, strings.Join(sample, ", "))
		}
		t.Logf("meanwhile %s; informer delivered %s", w, inf.model.counts())
	}()

	t.Run("aggregated", func(t *testing.T) {
		rc := restClient(t, r.proxied())
		var failed *discovery.GroupDiscoveryFailedError
		var dc *discovery.Client
		eventually(t, 30*time.Second, "aggregated discovery reporting metrics.k8s.io/v1beta1 as failed", func() string {
			dc, _ = discovery.New(rc, discovery.Options{})
			_, err := dc.ServerPreferredResources(t.Context())
			if !errors.As(err, &failed) {
				return "discovery answered: " + errString(err)
			}
			if failed.Groups[metricsGV] == nil {
				return "failed groups: " + failed.Error()
			}
			return ""
		})
		t.Logf("aggregated discovery: %v", failed)
		if !errors.Is(failed.Groups[metricsGV], discovery.ErrStale) {
			t.Errorf("the cause is %v, want discovery.ErrStale", failed.Groups[metricsGV])
		}
		checkOthersWork(t, r, rc, dc)
	})

	t.Run("legacy", func(t *testing.T) {
		// A proxy that asks for the legacy form of /api and /apis, so
		// discovery fetches each group-version's document.
		p, err := faultproxy.New(faultproxy.Options{
			Upstream: env.Host(), UpstreamCAData: env.CAData(),
			Rewrite: func(out *http.Request) {
				if out.URL.Path == "/api" || out.URL.Path == "/apis" {
					out.Header.Set("Accept", "application/json")
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		p.Respond5xx(http.StatusServiceUnavailable, -1, faultproxy.PathPrefix(metricsPathBase))
		cfg := p.RESTConfig(env.RESTConfig(testenv.Admin))
		rc := restClient(t, cfg)
		dc, err := discovery.New(rc, discovery.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = dc.ServerPreferredResources(t.Context())
		var failed *discovery.GroupDiscoveryFailedError
		if !errors.As(err, &failed) {
			t.Fatalf("legacy discovery answered %v, want a *GroupDiscoveryFailedError", err)
		}
		t.Logf("legacy discovery: %v", failed)
		if got := failed.GroupVersions(); len(got) != 1 || got[0] != metricsGV {
			t.Errorf("failed group-versions %v, want only %v", got, metricsGV)
		}
		if cause := failed.Groups[metricsGV]; !apierrors.IsServiceUnavailable(cause) {
			t.Errorf("the cause is %v, want a 503 StatusError", cause)
		}
		counts := p.Requests()
		for path, byStatus := range counts {
			n := 0
			for _, k := range byStatus {
				n += k
			}
			if n != 1 {
				t.Errorf("%s was asked %d times (%v), want once: no retry without Retry-After", path, n, byStatus)
			}
		}
		if counts["/apis/metrics.k8s.io/v1beta1"][http.StatusServiceUnavailable] != 1 {
			t.Errorf("the failing document was not asked: %v", counts)
		}
		t.Logf("legacy discovery made %d requests, one per document", counts.Total())
		checkOthersWork(t, r, rc, dc)
	})

	t.Run("kdyn", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		out, errOut, code := runKdyn(ctx, t, r, "", "get", "configmaps", "-o", "name")
		t.Logf("kdyn get configmaps: exit %d, stdout %q, stderr %q", code, out, errOut)
		if code != 0 || strings.TrimSpace(out) != "configmap/a" {
			t.Errorf("kdyn get configmaps with metrics.k8s.io unavailable: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	})
}

// checkOthersWork checks that with metrics.k8s.io failing, the mapper
// resolves other kinds, lists of other groups work, and the failing
// group fails fast and typed.
func checkOthersWork(t *testing.T, r *rig, rc *rest.Client, dc *discovery.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m, err := restmapper.New(dc, restmapper.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if mp, err := m.RESTMappingWithContext(ctx, schema.GroupKind{Group: "apps", Kind: "Deployment"}); err != nil || mp.Resource != deploymentsGVR {
		t.Errorf("mapping apps/Deployment: %v %v", mp, err)
	}
	if gvk, err := m.KindForWithContext(ctx, cmGVR); err != nil || gvk.Kind != "ConfigMap" {
		t.Errorf("kind of configmaps: %v %v", gvk, err)
	}
	if _, err := m.RESTMappingWithContext(ctx, schema.GroupKind{Group: "metrics.k8s.io", Kind: "PodMetrics"}); !meta.IsNoMatchError(err) {
		t.Errorf("mapping metrics.k8s.io/PodMetrics: %v, want a no-match error", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(&rest.Config{Host: rc.Base().String()}, rc.HTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(deploymentsGVR).Namespace(r.ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list apps/v1 deployments: %v", err)
	}
	if l, err := dyn.Resource(cmGVR).Namespace(r.ns).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 {
		t.Errorf("list configmaps: %v %v", l, err)
	}
	if _, err := dyn.Resource(podMetricsGVR).Namespace(r.ns).List(ctx, metav1.ListOptions{}); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("list metrics.k8s.io pods: %v, want 503", err)
	}
}

func restClient(t *testing.T, cfg *rest.Config) *rest.Client {
	t.Helper()
	rc, err := rest.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.HTTPClient().CloseIdleConnections)
	return rc
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
