package lib

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SyntheticConfigMapList returns the JSON of a ConfigMapList of n seeded
// ConfigMaps as the apiserver would send it (uid, resourceVersion,
// creationTimestamp, managedFields), for in-process decode benchmarks.
func SyntheticConfigMapList(n int) []byte {
	items := make([]any, n)
	for i := range n {
		obj := ConfigMap(NSConfigMaps, i).Object
		md := obj["metadata"].(map[string]any)
		md["uid"] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		md["resourceVersion"] = fmt.Sprint(1000 + i)
		md["creationTimestamp"] = "2026-01-02T03:04:05Z"
		md["managedFields"] = []any{map[string]any{
			"manager": "libbench", "operation": "Update", "apiVersion": "v1", "time": "2026-01-02T03:04:05Z",
			"fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{
				"f:data":     map[string]any{"f:key-0": map[string]any{}, "f:key-1": map[string]any{}, "f:key-2": map[string]any{}, "f:key-3": map[string]any{}},
				"f:metadata": map[string]any{"f:annotations": map[string]any{".": map[string]any{}, "f:bench.kdyn.io/description": map[string]any{}, "f:bench.kdyn.io/owner": map[string]any{}}, "f:labels": map[string]any{".": map[string]any{}, "f:app": map[string]any{}, "f:app.kubernetes.io/part": map[string]any{}, "f:shard": map[string]any{}, "f:team": map[string]any{}, "f:tier": map[string]any{}}},
			},
		}}
		delete(obj, "apiVersion")
		delete(obj, "kind")
		items[i] = obj
	}
	b, err := json.Marshal(map[string]any{"kind": "ConfigMapList", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": "99999"}, "items": items})
	if err != nil {
		panic(err)
	}
	return b
}

// FakeDiscoveryServer serves legacy discovery for the core group (configmaps,
// pods), apps/v1 (deployments) and bench.kdyn.io/v1 (widgets), and answers
// every other GET with list (when set) as the body.
func FakeDiscoveryServer(list []byte) *httptest.Server {
	res := func(name, kind string) metav1.APIResource {
		return metav1.APIResource{Name: name, SingularName: strings.ToLower(kind), Namespaced: true, Kind: kind,
			Verbs: metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}}
	}
	docs := map[string]any{
		"/api": metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}},
		"/api/v1": metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{res("configmaps", "ConfigMap"), res("pods", "Pod")}},
		"/apis": metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{
			{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "apps/v1", Version: "v1"}}, PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}},
			{Name: WidgetGroup, Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: WidgetGroup + "/v1", Version: "v1"}}, PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: WidgetGroup + "/v1", Version: "v1"}},
		}},
		"/apis/apps/v1": metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "apps/v1",
			APIResources: []metav1.APIResource{res("deployments", "Deployment")}},
		"/apis/" + WidgetGroup + "/v1": metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: WidgetGroup + "/v1",
			APIResources: []metav1.APIResource{res("widgets", "Widget")}},
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if d, ok := docs[r.URL.Path]; ok {
			json.NewEncoder(w).Encode(d)
			return
		}
		if list != nil {
			w.Write(list)
			return
		}
		http.NotFound(w, r)
	}))
}

// SyntheticConfigMapObject returns the JSON of one seeded ConfigMap as the
// apiserver sends it.
func SyntheticConfigMapObject() []byte {
	var l struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(SyntheticConfigMapList(1), &l); err != nil {
		panic(err)
	}
	obj := l.Items[0]
	obj["apiVersion"], obj["kind"] = "v1", "ConfigMap"
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return b
}
