package dynamic

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDecodeListMatchesUnstructuredJSONScheme checks DecodeList and
// DecodeListFunc against apimachinery's decoder, which client-go's dynamic
// client uses: in particular which items take the list's apiVersion and
// kind.
func TestDecodeListMatchesUnstructuredJSONScheme(t *testing.T) {
	docs := map[string]string{
		"typed list, items bare": `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"c"},
			"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"},"data":{"k":"v"}}]}`,
		"items with their own kind": `{"kind":"List","apiVersion":"v1","metadata":{},
			"items":[{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w"}}]}`,
		"empty strings count as absent": `{"kind":"PodList","apiVersion":"v1","metadata":{},
			"items":[{"kind":"","apiVersion":"","metadata":{"name":"p"}}]}`,
		"kind only: left as it is": `{"kind":"PodList","apiVersion":"v1","metadata":{},
			"items":[{"kind":"Pod","metadata":{"name":"p"}}]}`,
		"apiVersion only: left as it is": `{"kind":"PodList","apiVersion":"v1","metadata":{},
			"items":[{"apiVersion":"v1","metadata":{"name":"p"}}]}`,
		"no items": `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"3"},"items":[]}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			want := &unstructured.UnstructuredList{}
			if err := want.UnmarshalJSON([]byte(doc)); err != nil {
				t.Fatal(err)
			}
			got, err := DecodeList([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want.Items, got.Items); d != "" {
				t.Errorf("DecodeList items (-apimachinery +kdyn):\n%s", d)
			}
			if d := cmp.Diff(want.Object, got.Object); d != "" {
				t.Errorf("DecodeList list fields (-apimachinery +kdyn):\n%s", d)
			}
			var each []unstructured.Unstructured
			if err := DecodeListFunc([]byte(doc), nil, func(u *unstructured.Unstructured) error {
				each = append(each, *u)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(each) == 0 {
				each = []unstructured.Unstructured{}
			}
			if d := cmp.Diff(want.Items, each); d != "" {
				t.Errorf("DecodeListFunc items (-apimachinery +kdyn):\n%s", d)
			}
		})
	}
}
