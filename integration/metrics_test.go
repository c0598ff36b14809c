package integration_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/controller"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/metrics"
)

var (
	clusterRoleGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	clusterRoleBindingGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

// A Manager with SecureMetrics serves /metrics over TLS to a token the API
// server authenticates and authorizes for get on /metrics (admin), and
// refuses one it authenticates but RBAC denies (nobody: 403), one it does
// not know (401) and none at all (401); once RBAC grants nobody the URL,
// its token reads the metrics too. The probes stay open.
func TestSecureMetricsServing(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	reg := prometheus.NewRegistry()
	if _, err := metrics.Register(reg); err != nil {
		t.Fatal(err)
	}
	m, err := controller.NewManager(controller.ManagerOptions{BindAddress: "127.0.0.1:0", MetricsHandler: metrics.Handler(reg),
		SecureMetrics: &controller.SecureMetrics{Client: c, CacheTTL: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	base := "https://" + m.Addr(t.Context()).String()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the manager's self-signed certificate
	get := func(path, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if code, body := get("/metrics", env.AdminToken()); code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("admin: %d %.200q", code, body)
	}
	if code, body := get("/metrics", env.NobodyToken()); code != http.StatusForbidden || !strings.Contains(body, testenv.NobodyUserName) {
		t.Fatalf("nobody: %d %q", code, body)
	}
	if code, _ := get("/metrics", "not-a-token"); code != http.StatusUnauthorized {
		t.Fatalf("an unknown token: %d", code)
	}
	if code, _ := get("/metrics", ""); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	if code, _ := get("/healthz", ""); code != http.StatusOK {
		t.Fatalf("/healthz without a token: %d", code)
	}

	// RBAC grants nobody the URL: its token reads the metrics once the
	// cached answer has expired.
	name := "kdyn-test-metrics-reader"
	role := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
		"metadata": map[string]any{"name": name},
		"rules":    []any{map[string]any{"nonResourceURLs": []any{"/metrics"}, "verbs": []any{"get"}}},
	}}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": name},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": testenv.NobodyUserName}},
	}}
	if _, err := c.Resource(clusterRoleGVR).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Resource(clusterRoleGVR).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if _, err := c.Resource(clusterRoleBindingGVR).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Resource(clusterRoleBindingGVR).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get("/metrics", env.NobodyToken())
		if code == http.StatusOK && strings.Contains(body, "go_goroutines") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nobody, granted /metrics: %d %.200q", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
