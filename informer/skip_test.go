package informer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEachRawItemSkipsKnown(t *testing.T) {
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"20","continue":"c"},"items":[
		{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5"}},
		{"metadata":{"name":"b","namespace":"ns","resourceVersion":"6"},"data":{"k":"v"}},
		{"metadata":{"name":"n1","resourceVersion":"7"}}]}`)
	var asked, decoded []string
	page, err := eachRawItem(body, func(key, rv string) bool {
		asked = append(asked, key+"@"+rv)
		return key == "ns/a"
	}, func(m map[string]any) error {
		md := m["metadata"].(map[string]any)
		decoded = append(decoded, md["name"].(string)+":"+m["kind"].(string))
		return nil
	})
	if err != nil || page.ResourceVersion != "20" || page.Continue != "c" {
		t.Fatalf("page %+v, %v", page, err)
	}
	if diff := cmp.Diff([]string{"ns/a@5", "ns/b@6", "n1@7"}, asked); diff != "" {
		t.Fatal(diff)
	}
	if diff := cmp.Diff([]string{"b:ConfigMap", "n1:ConfigMap"}, decoded); diff != "" {
		t.Fatal(diff)
	}
}

func TestKnownPeekStubsKnownAddedFrames(t *testing.T) {
	peek := knownPeek(func(key, rv string) bool { return key == "ns/a" && rv == "5" })
	ev, ok := peek([]byte(`{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"5"},"data":{"big":"x"}}}`))
	if !ok || ev.Type != "ADDED" {
		t.Fatalf("known frame not stubbed: %v %v", ev, ok)
	}
	u := ev.Object.(interface{ GetName() string })
	if u.GetName() != "a" {
		t.Fatalf("stub %v", ev.Object)
	}
	for _, f := range []string{
		`{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"6"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5"}}}`,
		`{"type":"ADDED","object":{"metadata":{"name":"b","namespace":"ns","resourceVersion":"5"}}}`,
		`not json`,
	} {
		if _, ok := peek([]byte(f)); ok {
			t.Fatalf("frame %s stubbed", f)
		}
	}
}
