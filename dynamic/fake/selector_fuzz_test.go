package fake_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic/fake"
)

// fuzzMaxSelector bounds one fuzzed selector.
const fuzzMaxSelector = 1 << 10

var fuzzCMs = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func fuzzConfigMap(ns, name string, labels map[string]any) runtime.Object {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
	}}
}

// FuzzListSelectors gives fuzzed -l and --field-selector values, which the
// kdyn CLI passes through to the server for get, delete, label and wait, to
// the fake's List and Watch, which parse them the way the API server does
// (labels.Parse, fields.ParseSelector with the metadata.name and
// metadata.namespace conversions). Each call either succeeds or fails with
// a BadRequest; List and Watch agree on which; every listed object
// matches both selectors and every object that matches is listed; nothing
// panics.
//
// Seeds are in testdata/fuzz/FuzzListSelectors.
func FuzzListSelectors(f *testing.F) {
	for _, s := range [][2]string{
		{"app=web", ""}, {"app in (web,db),!legacy", "metadata.namespace=prod"}, {"tier!=db", "metadata.name!=a"},
		{"x", "metadata.name==b"}, {"app notin ()", "spec.x=1"}, {"a=b,,", "=,"}, {"k8s.io/a=b", `metadata.name=a\,b`}, {"", "metadata.name=a.b"},
	} {
		f.Add(s[0], s[1])
	}
	c := fake.NewClient(
		fuzzConfigMap("prod", "a", map[string]any{"app": "web", "tier": "front"}),
		fuzzConfigMap("prod", "b", map[string]any{"app": "db", "legacy": "true"}),
		fuzzConfigMap("dev", "a", map[string]any{"app": "web", "k8s.io/a": "b"}),
		fuzzConfigMap("dev", "a.b", nil),
	)
	f.Fuzz(func(t *testing.T, labelSel, fieldSel string) {
		if len(labelSel) > fuzzMaxSelector || len(fieldSel) > fuzzMaxSelector {
			t.Skip("selector longer than the fuzz bound")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		opts := metav1.ListOptions{LabelSelector: labelSel, FieldSelector: fieldSel}
		list, listErr := c.Resource(fuzzCMs).List(ctx, opts)
		w, watchErr := c.Resource(fuzzCMs).Watch(ctx, opts)
		if w != nil {
			w.Stop()
		}
		if (listErr == nil) != (watchErr == nil) {
			t.Fatalf("List error %v, Watch error %v: they disagree", listErr, watchErr)
		}
		if listErr != nil {
			if !apierrors.IsBadRequest(listErr) || !apierrors.IsBadRequest(watchErr) {
				t.Fatalf("selector errors must be BadRequest: List %v, Watch %v", listErr, watchErr)
			}
			return
		}
		ls, err := labels.Parse(labelSel)
		if err != nil {
			t.Fatalf("List accepted the label selector %q that labels.Parse refuses: %v", labelSel, err)
		}
		fs, err := fields.ParseSelector(fieldSel)
		if err != nil {
			t.Fatalf("List accepted the field selector %q that fields.ParseSelector refuses: %v", fieldSel, err)
		}
		listed := map[string]bool{}
		for i := range list.Items {
			o := &list.Items[i]
			listed[o.GetNamespace()+"/"+o.GetName()] = true
		}
		for _, o := range c.Objects(fuzzCMs) {
			want := ls.Matches(labels.Set(o.GetLabels())) &&
				fs.Matches(fields.Set{"metadata.name": o.GetName(), "metadata.namespace": o.GetNamespace()})
			if got := listed[o.GetNamespace()+"/"+o.GetName()]; got != want {
				t.Fatalf("-l %q --field-selector %q: %s/%s listed=%v, matches=%v", labelSel, fieldSel, o.GetNamespace(), o.GetName(), got, want)
			}
		}
	})
}
