package cli_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestGetWatchTable: get -w with the default (table) output prints the
// list, then a row for each change the watch brings, from the Tables the
// server prints in lists and in watch events.
func TestGetWatchTable(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	c := mfClient(t, env)
	cms := c.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	labeled := func(name string) string {
		return strings.Replace(mfConfigMap(name, ns, map[string]string{"k": "1"}), "metadata:\n", "metadata:\n  labels: {watched: \"yes\"}\n", 1)
	}
	kdyn(t, env, "create", "-f", mfWrite(t, "a.yaml", labeled("a"))).must(t)

	out, errOut := startKdyn(t, env, "get", "configmaps", "-n", ns, "-l", "watched=yes", "-w", "--output-watch-events")
	out.wait(t, "ADDED")

	if _, err := cms.Patch(t.Context(), "a", types.MergePatchType, []byte(`{"data":{"k2":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	out.wait(t, "MODIFIED")
	kdyn(t, env, "create", "-f", mfWrite(t, "b.yaml", labeled("b"))).must(t)
	if err := cms.Delete(t.Context(), "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out.waitLine(t, "DELETED")
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		rows = append(rows, f[:min(3, len(f))])
	}
	want := [][]string{{"EVENT", "NAME", "DATA"}, {"ADDED", "a", "1"}, {"MODIFIED", "a", "2"}, {"ADDED", "b", "1"}, {"DELETED", "b", "1"}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Fatalf("get -w printed:\n%s\nrows (-want +got):\n%s\nstderr:\n%s", out.String(), diff, errOut.String())
	}
	if errOut.String() != "" {
		t.Errorf("stderr: %s", errOut.String())
	}
}
