package delete

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

func TestGraceFor(t *testing.T) {
	tests := []struct {
		grace      int
		now, force bool
		want       int
		wantErr    bool
	}{
		{grace: -1, want: -1},
		{grace: 30, want: 30},
		{grace: 0, want: 1}, // 0 without --force is 1, as in kubectl
		{grace: -1, now: true, want: 1},
		{grace: 5, now: true, wantErr: true},
		{grace: -1, force: true, want: 0},
		{grace: 0, force: true, want: 0},
		{grace: 10, force: true, wantErr: true},
	}
	for _, tc := range tests {
		got, err := graceFor(tc.grace, tc.now, tc.force)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("graceFor(%d, now=%v, force=%v) = %d, %v; want %d (error %v)", tc.grace, tc.now, tc.force, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseCascade(t *testing.T) {
	f := cli.NewFactory(&cli.GlobalFlags{}, cli.IOStreams{ErrOut: &discard{}})
	for in, want := range map[string]metav1.DeletionPropagation{
		"background": metav1.DeletePropagationBackground, "foreground": metav1.DeletePropagationForeground,
		"orphan": metav1.DeletePropagationOrphan, "true": metav1.DeletePropagationBackground, "false": metav1.DeletePropagationOrphan,
	} {
		if got, err := ParseCascade(f, in); err != nil || got != want {
			t.Errorf("parseCascade(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseCascade(f, "sideways"); err == nil {
		t.Error("bad --cascade accepted")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestDeletedLine(t *testing.T) {
	cm := &Item{GroupKind: schema.GroupKind{Kind: "ConfigMap"}, Namespaced: true, Namespace: "prod", Name: "x"}
	deploy := &Item{GroupKind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, Namespaced: true, Namespace: "default", Name: "web"}
	ns := &Item{GroupKind: schema.GroupKind{Kind: "Namespace"}, Name: "prod"}
	for _, tc := range []struct {
		item *Item
		op   string
		want string
	}{
		{cm, "deleted", `configmap "x" deleted from prod namespace`},
		{deploy, "force deleted", `deployment.apps "web" force deleted from default namespace`},
		{ns, "deleted (server dry run)", `namespace "prod" deleted (server dry run)`},
	} {
		if got := DeletedLine(tc.item, tc.op); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
	if got := cm.describe(); got != `configmap "x" in namespace "prod"` {
		t.Errorf("describe = %s", got)
	}
}

func TestHoldDescription(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	held := &unstructured.Unstructured{Object: map[string]any{}}
	held.SetDeletionTimestamp(&at)
	held.SetFinalizers([]string{"foregroundDeletion"})
	graceful := &unstructured.Unstructured{Object: map[string]any{}}
	graceful.SetDeletionTimestamp(&at)
	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		want string
	}{
		{nil, ""},
		{held, ": deletion pending since 2026-01-02T03:04:05Z, held by finalizers foregroundDeletion"},
		{graceful, ": deletion pending since 2026-01-02T03:04:05Z (graceful termination)"},
		{&unstructured.Unstructured{Object: map[string]any{}}, ": it still exists"},
	} {
		if got := holdDescription(tc.obj); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
