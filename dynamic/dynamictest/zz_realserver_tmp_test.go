package dynamictest_test

import (
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/dynamictest"
	"github.com/kdyn/kdyn/integration/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

func TestRealServer(t *testing.T) {
	env := testenv.Shared(t)
	c, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "dt-real"}}}
	if _, err := c.Resource(dynamictest.Namespaces).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dynamictest.Run(t, dynamictest.Env{Client: c, Namespace: "dt-real"})
	dynamictest.Run(t, dynamictest.Env{Client: c, Namespace: "dt-real"})
}
