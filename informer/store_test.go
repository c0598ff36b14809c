package informer

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An index value's set of keys goes from one key to many and back as
// objects move between values, and ByIndex and IndexValues follow.
func TestIndexSetsGrowAndShrink(t *testing.T) {
	s := newStore[*unstructured.Unstructured](newMapStorage[*unstructured.Unstructured]())
	if err := s.AddIndexer("team", func(o *unstructured.Unstructured) ([]string, error) {
		if v := o.GetLabels()["team"]; v != "" {
			return []string{v}, nil
		}
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	put := func(name, team string) {
		o := cm(name, "1")
		if team != "" {
			o.SetLabels(map[string]string{"team": team})
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.putLocked(Key(o), o, nil); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(name string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.removeLocked("ns/" + name)
	}
	check := func(step string, want map[string][]string) {
		t.Helper()
		var values []string
		for v, names := range want {
			values = append(values, v)
			objs, err := s.ByIndex("team", v)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetName())
			}
			if !slices.Equal(got, names) {
				t.Fatalf("%s: ByIndex(team, %s) = %v, want %v", step, v, got, names)
			}
		}
		slices.Sort(values)
		if got := s.IndexValues("team"); !slices.Equal(got, values) {
			t.Fatalf("%s: IndexValues = %v, want %v", step, got, values)
		}
	}
	put("a", "red")
	put("a", "red") // the same key again
	check("one", map[string][]string{"red": {"a"}})
	put("b", "red")
	put("c", "blue")
	check("two", map[string][]string{"red": {"a", "b"}, "blue": {"c"}})
	put("a", "blue") // moves
	check("moved", map[string][]string{"red": {"b"}, "blue": {"a", "c"}})
	remove("b")
	put("c", "")
	check("emptied", map[string][]string{"blue": {"a"}})
	if objs, _ := s.ByIndex("team", "red"); len(objs) != 0 {
		t.Fatalf("red still has %v", objs)
	}
	remove("a")
	check("none", map[string][]string{})
}
