package dynamictest

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (s *suite) testListLabelSelector(t *testing.T) {
	ctx := s.ctx(t)
	test := s.testID()
	red1, red2, blue := s.name("red1"), s.name("red2"), s.name("blue")
	s.create(t, ctx, s.configMap(red1, test, map[string]string{"color": "red"}, nil))
	s.create(t, ctx, s.configMap(blue, test, map[string]string{"color": "blue"}, nil))
	s.create(t, ctx, s.configMap(red2, test, map[string]string{"color": "red"}, nil))
	s.create(t, ctx, s.configMap(s.name("nolabel"), "", nil, nil))

	for _, tc := range []struct {
		name, selector string
		want           []string
	}{
		{"equals", ",color=red", sortedCopy([]string{red1, red2})},
		{"in", ",color in (blue)", []string{blue}},
		{"not equals", ",color!=red", []string{blue}},
		{"exists", ",color", sortedCopy([]string{red1, red2, blue})},
		{"does not exist", ",!color", []string{}},
		{"matches nothing", ",color=green", []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.selector = testLabel + "=" + test + tc.selector
			list, err := s.configMaps().List(ctx, metav1.ListOptions{LabelSelector: tc.selector})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if got := names(list.Items); !slices.Equal(got, tc.want) {
				t.Errorf("List %q = %v, want %v (sorted by name)", tc.selector, got, tc.want)
			}
		})
	}

	t.Run("all namespaces", func(t *testing.T) {
		list, err := s.env.Client.Resource(ConfigMaps).List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + test + ",color=red"})
		if err != nil {
			t.Fatalf("List in all namespaces: %v", err)
		}
		if got, want := names(list.Items), sortedCopy([]string{red1, red2}); !slices.Equal(got, want) {
			t.Errorf("List in all namespaces = %v, want %v", got, want)
		}
		for _, it := range list.Items {
			if it.GetNamespace() != s.env.Namespace {
				t.Errorf("%s has namespace %q, want %q", it.GetName(), it.GetNamespace(), s.env.Namespace)
			}
		}
	})

	t.Run("bad selector", func(t *testing.T) {
		_, err := s.configMaps().List(ctx, metav1.ListOptions{LabelSelector: "color in (red"})
		wantStatus(t, "List with a malformed label selector", err, metav1.StatusReasonBadRequest)
	})
}

func (s *suite) testListFieldSelector(t *testing.T) {
	ctx := s.ctx(t)
	test := s.testID()
	a, b := s.name("fa"), s.name("fb")
	s.create(t, ctx, s.configMap(a, test, nil, nil))
	s.create(t, ctx, s.configMap(b, test, nil, nil))

	list, err := s.configMaps().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + b})
	if err != nil {
		t.Fatalf("List by name: %v", err)
	}
	if got := names(list.Items); len(got) != 1 || got[0] != b {
		t.Errorf("List metadata.name=%s = %v, want [%s]", b, got, b)
	}
	list, err = s.configMaps().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name!=" + b, LabelSelector: testLabel + "=" + test})
	if err != nil {
		t.Fatalf("List by name!=: %v", err)
	}
	if got := names(list.Items); len(got) != 1 || got[0] != a {
		t.Errorf("List metadata.name!=%s = %v, want [%s]", b, got, a)
	}
	list, err = s.env.Client.Resource(ConfigMaps).List(ctx, metav1.ListOptions{
		FieldSelector: "metadata.namespace=" + s.env.Namespace, LabelSelector: testLabel + "=" + test,
	})
	if err != nil {
		t.Fatalf("List by namespace: %v", err)
	}
	if got, want := names(list.Items), sortedCopy([]string{a, b}); !slices.Equal(got, want) {
		t.Errorf("List metadata.namespace=%s = %v, want %v", s.env.Namespace, got, want)
	}
}

func (s *suite) testListUnsupportedField(t *testing.T) {
	ctx := s.ctx(t)
	_, err := s.configMaps().List(ctx, metav1.ListOptions{FieldSelector: "data.color=red"})
	st := wantStatus(t, "List with field selector data.color", err, metav1.StatusReasonBadRequest)
	if !strings.Contains(st.Message, "data.color") {
		t.Errorf("message %q, want it to name the field data.color", st.Message)
	}
}

func (s *suite) testListPagination(t *testing.T) {
	ctx := s.ctx(t)
	test := s.testID()
	var want []string
	for i := range 7 {
		name := s.name("page" + string(rune('a'+i)))
		want = append(want, name)
		s.create(t, ctx, s.configMap(name, test, nil, nil))
	}
	want = sortedCopy(want)

	opts := metav1.ListOptions{LabelSelector: testLabel + "=" + test, Limit: 3}
	var got []string
	pages, listRV := 0, ""
	for {
		list, err := s.configMaps().List(ctx, opts)
		if err != nil {
			t.Fatalf("List page %d: %v", pages+1, err)
		}
		pages++
		if n := len(list.Items); n > 3 {
			t.Fatalf("page %d has %d items, want at most the limit 3", pages, n)
		}
		if listRV == "" {
			listRV = list.GetResourceVersion()
			// Written after the first page: a consistent list leaves it out.
			s.create(t, ctx, s.configMap(s.name("pagelate"), test, nil, nil))
		} else if list.GetResourceVersion() != listRV {
			t.Errorf("page %d has resourceVersion %s, want the first page's %s", pages, list.GetResourceVersion(), listRV)
		}
		got = append(got, names(list.Items)...)
		if list.GetContinue() == "" {
			break
		}
		if pages > 10 {
			t.Fatalf("more than 10 pages for 7 items: %v", got)
		}
		opts.Continue = list.GetContinue()
	}
	if !slices.Equal(got, want) {
		t.Errorf("paginated names = %v, want each of %v once, in order", got, want)
	}
	if pages < 3 {
		t.Errorf("%d pages of at most 3 for 7 items", pages)
	}
}

func (s *suite) testListEmpty(t *testing.T) {
	ctx := s.ctx(t)
	// A namespace nobody created holds no ConfigMaps; listing it is no error.
	list, err := s.env.Client.Resource(ConfigMaps).Namespace("kdyn-dt-"+s.run+"-void").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("List in an empty namespace: %v", err)
	}
	if len(list.Items) != 0 {
		t.Errorf("List returned %v, want nothing", names(list.Items))
	}
	if list.GetKind() != "ConfigMapList" || list.GetAPIVersion() != "v1" {
		t.Errorf("list apiVersion %q kind %q, want v1 ConfigMapList", list.GetAPIVersion(), list.GetKind())
	}
	if list.GetResourceVersion() == "" {
		t.Error("empty list has no resourceVersion")
	}
	if list.GetContinue() != "" {
		t.Errorf("empty list has continue token %q", list.GetContinue())
	}
}
