package cli

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// fuzzManifests are the documents the fuzzed selectors filter: objects with
// and without labels, a List, and a document that does not decode (kept
// whatever the selector, so that it is still reported).
const fuzzManifests = `apiVersion: v1
kind: ConfigMap
metadata: {name: a, labels: {app: web, tier: front, "k8s.io/x": "y"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, labels: {app: db, legacy: "true"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Secret, metadata: {name: d, labels: {app: web}}}
- {apiVersion: v1, kind: Secret, metadata: {name: e, labels: {app: ""}}}
---
kind: [not, a, string]
`

// FuzzFilterManifests fuzzes the one selector the CLI evaluates itself:
// -l of apply, diff and create/replace -f, applied to the manifests read
// (FilterManifests). A selector that labels.Parse refuses is a usage error
// naming it; any other keeps exactly the objects it matches plus every
// document that failed to decode, in their order; nothing panics. (-l and
// --field-selector of get, delete, label and wait go to the server as they
// are; dynamic/fake's FuzzListSelectors covers the parsing the server
// does.)
//
// Seeds are in testdata/fuzz/FuzzFilterManifests.
func FuzzFilterManifests(f *testing.F) {
	for _, s := range []string{"app=web", "app in (web,db),!legacy", "tier!=front", "k8s.io/x=y", "app", "!app", "app=", "a b", "app notin (web)", "=,"} {
		f.Add(s)
	}
	entries := readManifestStream(strings.NewReader(fuzzManifests), "fuzz.yaml")
	if len(entries) != 6 {
		f.Fatalf("the fixture has %d entries, want 6", len(entries))
	}
	f.Fuzz(func(t *testing.T, selector string) {
		if len(selector) > 1<<10 {
			t.Skip("selector longer than the fuzz bound")
		}
		got, err := FilterManifests(entries, selector)
		if selector == "" {
			if err != nil || len(got) != len(entries) {
				t.Fatalf("an empty selector filtered: %d entries, %v", len(got), err)
			}
			return
		}
		sel, perr := labels.Parse(selector)
		if perr != nil {
			var ue *UsageError
			if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), strconv.Quote(selector)) {
				t.Fatalf("labels.Parse refuses %q (%v) but filterManifests returned %v", selector, perr, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("filterManifests(%q): %v", selector, err)
		}
		var want []*ManifestEntry
		for _, e := range entries {
			if e.obj == nil || sel.Matches(labels.Set(e.obj.GetLabels())) {
				want = append(want, e)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("-l %q kept %d entries, want %d", selector, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("-l %q: entry %d is %v, want %v", selector, i, got[i].where(), want[i].where())
			}
		}
	})
}
