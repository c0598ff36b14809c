package tree

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/discovery"
)

var treeNow = time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)

func ago(d time.Duration) time.Time { return treeNow.Add(-d) }

func TestRenderTreeGolden(t *testing.T) {
	deployment := &treeNode{Kind: "Deployment", Name: "web", Namespace: "prod", Created: ago(72 * time.Hour), Status: "Available", Children: []*treeNode{
		{Kind: "ReplicaSet", Name: "web-5d9c7b9f4", Namespace: "prod", Created: ago(30 * time.Hour), Status: "", Children: []*treeNode{
			{Kind: "Pod", Name: "web-5d9c7b9f4-a1", Namespace: "prod", Created: ago(29 * time.Hour), Status: "Ready"},
			{Kind: "Pod", Name: "web-5d9c7b9f4-b2", Namespace: "prod", Created: ago(90 * time.Second), Status: "NotReady (ContainersNotReady)"},
		}},
		{Kind: "ReplicaSet", Name: "web-7f6b8c5d1", Namespace: "prod", Created: ago(72 * time.Hour), Children: []*treeNode{
			{Kind: "Pod", Name: "web-7f6b8c5d1-c3", Namespace: "prod", Status: "Pending"},
		}},
		{Kind: "Secret", Name: "web-token", Namespace: "prod", Created: ago(5 * time.Minute)},
	}}
	crossNS := &treeNode{Kind: "ClusterRole", Name: "aggregate", Created: ago(400 * 24 * time.Hour), Children: []*treeNode{
		{Kind: "ConfigMap", Name: "a", Namespace: "team-a", Created: ago(3 * time.Hour)},
		{Kind: "ConfigMap", Name: "b", Namespace: "team-b", Created: ago(3 * time.Hour), Children: []*treeNode{
			{Kind: "Widget", Name: "w", Namespace: "team-b", Created: ago(10 * time.Second), Status: "Ready=Unknown"},
		}},
	}}
	alone := &treeNode{Kind: "ConfigMap", Name: "lonely", Namespace: "default", Created: ago(time.Hour)}
	for name, top := range map[string]*treeNode{"deployment": deployment, "cross-namespace": crossNS, "alone": alone} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := renderTree(&buf, top, treeNow); err != nil {
				t.Fatal(err)
			}
			clitest.AssertGolden(t, filepath.Join("tree", name+".txt"), buf.String())
		})
	}
}

func TestHangDependents(t *testing.T) {
	cm := &discovery.Resource{APIResource: metav1.APIResource{Name: "configmaps", Version: "v1", Kind: "ConfigMap", Namespaced: true}}
	pods := &discovery.Resource{APIResource: metav1.APIResource{Name: "pods", Version: "v1", Kind: "Pod", Namespaced: true}, Subresources: []discovery.Subresource{{Name: "status"}}}
	obj := func(r *discovery.Resource, name string, uid types.UID) *ownedObject {
		return &ownedObject{res: r, meta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid}}
	}
	byOwner := map[types.UID][]*ownedObject{
		"root": {obj(cm, "zeta", "z"), obj(pods, "p", "p"), obj(cm, "alpha", "a")},
		"a":    {obj(cm, "alpha-child", "ac")},
		"ac":   {obj(cm, "loops-to-a", "a")}, // an ownership cycle back to alpha
		"p":    {obj(cm, "shared", "s")},
		"z":    {obj(cm, "shared", "s")}, // two owners in the tree
	}
	top := &treeNode{Kind: "ConfigMap", Name: "root", uid: "root"}
	hangDependents(top, byOwner, map[types.UID]bool{top.uid: true})
	var got []string
	var walk func(n *treeNode, depth int)
	walk = func(n *treeNode, depth int) {
		got = append(got, string(rune('0'+depth))+" "+n.Kind+"/"+n.Name)
		if n.needsStatus {
			got[len(got)-1] += " (status)"
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(top, 0)
	want := []string{
		"0 ConfigMap/root",
		"1 ConfigMap/alpha",
		"2 ConfigMap/alpha-child",
		"1 ConfigMap/zeta",
		"2 ConfigMap/shared",
		"1 Pod/p (status)",
		"2 ConfigMap/shared",
	}
	if len(got) != len(want) {
		t.Fatalf("tree:\n%v\nwant:\n%v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("tree:\n%v\nwant:\n%v", got, want)
		}
	}
}

func TestObjectStatus(t *testing.T) {
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason}
	}
	obj := func(phase string, conds ...map[string]any) map[string]any {
		st := map[string]any{}
		if phase != "" {
			st["phase"] = phase
		}
		if len(conds) > 0 {
			l := make([]any, len(conds))
			for i, c := range conds {
				l[i] = c
			}
			st["conditions"] = l
		}
		return map[string]any{"status": st}
	}
	cases := []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"no status", map[string]any{"data": map[string]any{}}, ""},
		{"ready", obj("Running", cond("PodScheduled", "True", ""), cond("Ready", "True", "")), "Ready"},
		{"not ready with reason", obj("Running", cond("Ready", "False", "ContainersNotReady")), "NotReady (ContainersNotReady)"},
		{"not ready", obj("", cond("Ready", "False", "")), "NotReady"},
		{"unknown", obj("", cond("Ready", "Unknown", "")), "Ready=Unknown"},
		{"available", obj("", cond("Progressing", "True", ""), cond("Available", "True", "")), "Available"},
		{"ready wins over available", obj("", cond("Available", "False", ""), cond("Ready", "True", "")), "Ready"},
		{"established", obj("", cond("NamesAccepted", "True", ""), cond("Established", "True", "")), "Established"},
		{"phase", obj("Pending", cond("PodScheduled", "False", "Unschedulable")), "Pending"},
		{"phase only", obj("Active"), "Active"},
	}
	for _, tc := range cases {
		if got := objectStatus(tc.obj); got != tc.want {
			t.Errorf("%s: objectStatus = %q, want %q", tc.name, got, tc.want)
		}
	}
}
