package fastjson

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Generators of realistic Kubernetes JSON for tests and benchmarks.

var teams = []string{"team-a", "team-b", "payments", "search", "default", "kube-system", "monitoring", "ingress"}
var apps = []string{"web", "api", "worker", "cache", "db", "frontend", "checkout", "cart", "auth", "gateway"}

func uid(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
}

func timestamp(r *rand.Rand) string {
	return fmt.Sprintf("2024-%02d-%02dT%02d:%02d:%02dZ", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60))
}

// configMap returns a ConfigMap as a server list item: ~1 KiB of data, 5
// labels, 2 annotations and one managedFields entry.
func configMap(r *rand.Rand, i int) map[string]any {
	ns := teams[r.IntN(len(teams))]
	app := apps[r.IntN(len(apps))]
	ts := timestamp(r)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "# generated configuration for %s\nserver:\n  port: %d\n  host: 0.0.0.0\n", app, 8000+r.IntN(1000))
	for k := 0; cfg.Len() < 700; k++ {
		fmt.Fprintf(&cfg, "  option_%d: \"value-%d-%x\"\n", k, k, r.Uint32())
	}
	return map[string]any{
		"metadata": map[string]any{
			"name":              fmt.Sprintf("%s-config-%05d", app, i),
			"namespace":         ns,
			"uid":               uid(r),
			"resourceVersion":   fmt.Sprint(1000000 + i*7 + r.IntN(7)),
			"creationTimestamp": ts,
			"labels": map[string]any{
				"app.kubernetes.io/name":       app,
				"app.kubernetes.io/instance":   fmt.Sprintf("%s-%d", app, r.IntN(5)),
				"app.kubernetes.io/component":  []string{"frontend", "backend", "config"}[r.IntN(3)],
				"app.kubernetes.io/managed-by": "Helm",
				"environment":                  []string{"prod", "staging", "dev"}[r.IntN(3)],
			},
			"annotations": map[string]any{
				"meta.helm.sh/release-name":      app,
				"meta.helm.sh/release-namespace": ns,
			},
			"managedFields": []any{map[string]any{
				"manager":    "helm",
				"operation":  "Update",
				"apiVersion": "v1",
				"time":       ts,
				"fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{
					"f:data": map[string]any{".": map[string]any{}, "f:config.yaml": map[string]any{}, "f:LOG_LEVEL": map[string]any{}, "f:FEATURE_FLAGS": map[string]any{}, "f:REPLICAS": map[string]any{}},
					"f:metadata": map[string]any{
						"f:annotations": map[string]any{".": map[string]any{}, "f:meta.helm.sh/release-name": map[string]any{}, "f:meta.helm.sh/release-namespace": map[string]any{}},
						"f:labels": map[string]any{".": map[string]any{}, "f:app.kubernetes.io/component": map[string]any{}, "f:app.kubernetes.io/instance": map[string]any{},
							"f:app.kubernetes.io/managed-by": map[string]any{}, "f:app.kubernetes.io/name": map[string]any{}, "f:environment": map[string]any{}},
					},
				},
			}},
		},
		"data": map[string]any{
			"config.yaml":   cfg.String(),
			"LOG_LEVEL":     []string{"info", "debug", "warn"}[r.IntN(3)],
			"FEATURE_FLAGS": "checkout-v2,dark-mode,¿unicode?-ünï",
			"REPLICAS":      fmt.Sprint(1 + r.IntN(5)),
		},
	}
}

// deployment returns a Deployment-like object with numbers of every kind,
// nested arrays and unicode.
func deployment(r *rand.Rand, i int) map[string]any {
	app := apps[r.IntN(len(apps))]
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": fmt.Sprintf("%s-%d", app, i), "namespace": teams[r.IntN(len(teams))],
			"generation": 1 + r.IntN(100), "uid": uid(r), "creationTimestamp": timestamp(r),
			"labels":      map[string]any{"app": app, "tier": "backend", "ünïcødé": "日本語"},
			"annotations": map[string]any{"deployment.kubernetes.io/revision": fmt.Sprint(r.IntN(9)), "note": "line1\nline2\t\"quoted\" \\ / <html>&amp; \u2028 😀"},
		},
		"spec": map[string]any{
			"replicas":                r.IntN(10),
			"progressDeadlineSeconds": 600,
			"revisionHistoryLimit":    10,
			"paused":                  false,
			"selector":                map[string]any{"matchLabels": map[string]any{"app": app}},
			"strategy":                map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": 0}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": app}, "creationTimestamp": nil},
				"spec": map[string]any{
					"terminationGracePeriodSeconds": 30,
					"containers": []any{map[string]any{
						"name": app, "image": "registry.example.com/" + app + ":1.2.3",
						"args":      []any{"--port=8080", "--verbose", ""},
						"ports":     []any{map[string]any{"containerPort": 8080, "protocol": "TCP"}, map[string]any{"containerPort": 9090, "name": "metrics"}},
						"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "128Mi"}, "requests": map[string]any{"cpu": 0.25, "memory": 6.4e7}},
						"env":       []any{map[string]any{"name": "RATIO", "value": "0.5"}, map[string]any{"name": "BIG", "value": "9223372036854775808"}},
						"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": 8080}, "periodSeconds": -1,
							"weights": []any{1.5, -2.25e-3, 1e21, 123456789012345678, -9223372036854775808, 9223372036854775807, 0.1}},
					}},
				},
			},
		},
		"status": map[string]any{"observedGeneration": 3, "replicas": 2, "conditions": []any{
			map[string]any{"type": "Available", "status": "True", "lastUpdateTime": timestamp(r), "reason": "MinimumReplicasAvailable"},
		}, "empty": []any{}, "nested": []any{[]any{[]any{}}, []any{nil, true, false}}},
	}
}

// genList returns a ConfigMapList body with n items as a server sends it.
func genList(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 42))
	items := make([]any, n)
	for i := range items {
		items[i] = configMap(r, i)
	}
	b, err := json.Marshal(map[string]any{
		"kind":       "ConfigMapList",
		"apiVersion": "v1",
		"metadata":   map[string]any{"resourceVersion": "2000000"},
		"items":      items,
	})
	if err != nil {
		panic(err)
	}
	return b
}
