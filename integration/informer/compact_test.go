package informer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
)

// htmlValue is a value the server's JSON encoder escapes (as \u003c and
// so on) and kdyn's own encoder does not: a cached text holding the escaped
// form is the server's text, not an encoding of the decoded object.
const (
	htmlValue   = "<&>"
	htmlEscaped = `"html":"\u003c\u0026\u003e"`
)

func htmlConfigMap(ns, name string) *unstructured.Unstructured {
	o := configMap(ns, name, "0")
	o.Object["data"].(map[string]any)["html"] = htmlValue
	return o
}

// TestCompactStoreKeepsServerText runs compact informers (streaming list,
// and list then watch) through creates, updates and deletes, and checks
// that each cached entry is the object as the server sends it, less
// managedFields: the text of list items (which the server sends without
// apiVersion and kind) and of watch events is kept as it came, not
// encoded again, and decodes to what a fresh list returns.
func TestCompactStoreKeepsServerText(t *testing.T) {
	env := testenv.Shared(t)
	writer := client(t, env.RESTConfig(testenv.Admin))
	ns := newNamespace(t, writer)
	createAll(t, writer, ns, 40, func(i int) *unstructured.Unstructured { return htmlConfigMap(ns, fmt.Sprintf("pre-%d", i)) })
	serverText := func(t *testing.T, inf *informer.Informer[*unstructured.Unstructured], prefix string) {
		t.Helper()
		n := 0
		for _, key := range inf.Store().Keys() {
			if !strings.HasPrefix(key, ns+"/"+prefix) {
				continue
			}
			n++
			if raw, _ := informer.RawJSON(inf, key); !bytes.Contains(raw, []byte(htmlEscaped)) {
				t.Fatalf("%s: not the server's text: %s", key, raw)
			}
		}
		if n == 0 {
			t.Fatalf("no cached %s objects", prefix)
		}
	}
	type run struct {
		name string
		inf  *informer.Informer[*unstructured.Unstructured]
		tr   *tracker
	}
	var runs []run
	for _, streaming := range []bool{true, false} {
		f := informer.NewFactory(client(t, env.RESTConfig(testenv.Admin)), informer.FactoryOptions{Namespace: ns, DisableStreaming: !streaming})
		inf := f.ForResource(cmGVR, informer.InformerOptions{Compact: true})
		tr := startTracked(t, f, inf)
		serverText(t, inf, "pre-") // from the list, or the initial events
		runs = append(runs, run{fmt.Sprintf("streaming=%v", streaming), inf, tr})
	}
	churn(t, writer, ns, 150, "c")
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			converge(t, writer, ns, r.inf, r.tr)
			server := serverObjects(t, writer, ns, func(o *unstructured.Unstructured) string {
				o.SetManagedFields(nil)
				b, err := json.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			})
			for key, want := range server {
				raw, ok := informer.RawJSON(r.inf, key)
				if !ok {
					t.Fatalf("%s not cached", key)
				}
				if bytes.Contains(raw, []byte(`"managedFields"`)) {
					t.Fatalf("%s: managedFields kept: %s", key, raw)
				}
				var got, exp map[string]any
				if err := json.Unmarshal(raw, &got); err != nil {
					t.Fatalf("%s: %v: %s", key, err, raw)
				}
				if err := json.Unmarshal([]byte(want), &exp); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(exp, got); diff != "" {
					t.Fatalf("%s (-server +cache):\n%s", key, diff)
				}
			}
		})
	}
	// Watch events: new objects.
	createAll(t, writer, ns, 5, func(i int) *unstructured.Unstructured { return htmlConfigMap(ns, fmt.Sprintf("post-%d", i)) })
	for _, r := range runs {
		waitFor(t, func() bool {
			_, ok := r.inf.Store().Get(ns + "/post-4")
			return ok
		})
		serverText(t, r.inf, "post-")
	}
}
