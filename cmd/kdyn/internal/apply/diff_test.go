package apply

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

func secret(data map[string]any) *unstructured.Unstructured {
	s := clitest.Obj("v1", "Secret", "s")
	s.SetNamespace("prod")
	s.Object["data"] = data
	return s
}

func TestMaskSecrets(t *testing.T) {
	live := secret(map[string]any{"same": "YQ==", "changed": "Yg==", "removed": "Yw=="})
	merged := secret(map[string]any{"same": "YQ==", "changed": "ZA==", "added": "ZQ=="})
	maskSecrets(live, merged)
	if d := cmp.Diff(map[string]any{"same": "***", "changed": "*** (before)", "removed": "***"}, live.Object["data"]); d != "" {
		t.Errorf("live (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"same": "***", "changed": "*** (after)", "added": "***"}, merged.Object["data"]); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}

	// A new Secret: nothing on the live side.
	created := secret(map[string]any{"k": "dg=="})
	created.Object["stringData"] = map[string]any{"plain": "text"}
	maskSecrets(nil, created)
	if created.Object["data"].(map[string]any)["k"] != "***" || created.Object["stringData"].(map[string]any)["plain"] != "***" {
		t.Errorf("new secret not masked: %v", created.Object)
	}

	// Other kinds are left alone.
	cm := clitest.Obj("v1", "ConfigMap", "c")
	cm.Object["data"] = map[string]any{"k": "v"}
	maskSecrets(cm, cm)
	if cm.Object["data"].(map[string]any)["k"] != "v" {
		t.Error("a ConfigMap was masked")
	}
}

func TestDiffTexts(t *testing.T) {
	live := secret(map[string]any{"k": "YQ=="})
	live.SetResourceVersion("5")
	live.SetUID("uid")
	live.Object["status"] = map[string]any{"x": "y"}
	merged := live.DeepCopy()
	merged.SetResourceVersion("6")
	merged.Object["data"] = map[string]any{"k": "Yg=="}
	from, to, err := diffTexts(live, merged)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{string(from), string(to)} {
		if strings.Contains(text, "resourceVersion") || strings.Contains(text, "uid") || strings.Contains(text, "status") || strings.Contains(text, "YQ==") || strings.Contains(text, "Yg==") {
			t.Errorf("not neat or not masked:\n%s", text)
		}
	}
	if !strings.Contains(string(from), "*** (before)") || !strings.Contains(string(to), "*** (after)") {
		t.Errorf("change not visible:\n%s\n%s", from, to)
	}
	if live.GetResourceVersion() != "5" || live.Object["data"].(map[string]any)["k"] != "YQ==" {
		t.Error("diffTexts modified its input")
	}
	from, _, err = diffTexts(nil, merged)
	if err != nil || from != nil {
		t.Errorf("missing live object: %q, %v", from, err)
	}
}

func TestDiffFileName(t *testing.T) {
	d := clitest.Obj("apps/v1", "Deployment", "web")
	d.SetNamespace("prod")
	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		want string
	}{
		{d, "apps.v1.Deployment.prod.web"},
		{clitest.Obj("v1", "Namespace", "prod"), "v1.Namespace.prod"},
	} {
		if got := diffFileName(tc.obj); got != tc.want {
			t.Errorf("diffFileName = %q, want %q", got, tc.want)
		}
	}
}
