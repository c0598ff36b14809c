package printers

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fuzzMaxExpr bounds one fuzzed output expression.
const fuzzMaxExpr = 1 << 10

// fuzzObjects are the fixed objects the fuzzed expressions are applied to:
// a Deployment, a Secret with odd keys, and a CRD object with nulls, deep
// nesting, numbers and Unicode.
var fuzzObjects = []string{
	`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod","labels":{"app":"web","tier":"front"},"annotations":{"a.b/c":"{\"x\":1}"},"creationTimestamp":"2026-01-02T03:04:05Z"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"nginx:1","ports":[{"containerPort":80},{"containerPort":443}]},{"name":"sidecar","image":"envoy"}]}}},"status":{"conditions":[{"type":"Available","status":"True"},{"type":"Progressing","status":"False"}]}}`,
	`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"},"type":"Opaque","data":{"..":"eA==","a.b":"eQ==","@x":"","#":"eg==","":"e30="}}`,
	`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-ü","namespace":"default"},"spec":{"n":null,"f":1.5e300,"i":-9007199254740993,"b":false,"empty":{},"list":[],"deep":{"a":{"b":{"c":[[[{"d":"e"}]]]}}},"s":"\u2028\u0000tab\t"}}`,
}

// fuzzObjectsDecoded decodes fuzzObjects afresh, since printers may keep
// or modify what they are given.
func fuzzObjectsDecoded() ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(fuzzObjects))
	for i, s := range fuzzObjects {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(s)); err != nil {
			return nil, fmt.Errorf("fixture %d: %w", i, err)
		}
		out[i] = u
	}
	return out, nil
}

// FuzzOutputExpressions applies fuzzed -o jsonpath=, -o gjson=,
// -o custom-columns= and --sort-by expressions to fixed objects, printed
// alone and as a List, as raw JSON items and as decoded ones. Parsing may
// fail; a parsed expression must then execute (or fail with an error)
// without panicking and within a time bound, and a spec that parses has at
// least one column.
//
// Seeds are in testdata/fuzz/FuzzOutputExpressions.
func FuzzOutputExpressions(f *testing.F) {
	for _, s := range []string{
		"{.metadata.name}", "{range .items[*]}{.metadata.name}{\"\\n\"}{end}", ".spec.replicas",
		"NAME:.metadata.name,IMAGES:.spec.template.spec.containers[*].image", "items.#.metadata.name",
		"@this.items.#(metadata.namespace==prod)#.metadata.name", "metadata.labels.app", "{.spec.deep..d}",
		"{.status.conditions[?(@.type==\"Available\")].status}", "spec.list|@reverse",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if len(expr) > fuzzMaxExpr {
			t.Skip("expression longer than the fuzz bound")
		}
		objs, err := fuzzObjectsDecoded()
		if err != nil {
			t.Fatal(err)
		}
		// The fuzzing engine has no per-input time limit: run the work
		// aside and fail the input if it takes far too long.
		done := make(chan error, 1)
		go func() {
			// A panic here would kill the fuzzing process without naming
			// the input: report it as a failure of the input instead.
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Errorf("output expression %q panicked: %v\n%s", expr, r, debug.Stack())
				}
			}()
			done <- errors.Join(fuzzJSONPath(expr, objs), fuzzGJSON(expr, objs), fuzzCustomColumns(expr, objs), fuzzSortKey(expr, objs))
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("output expression %q did not finish within 20s", expr)
		}
	})
}

// printAll prints every fixture through a printer made by mk: as a List of
// raw items, as a List of decoded items, and each fixture alone in both
// forms. Printing errors are allowed (a path that fails on some object);
// panics are what the fuzzer looks for.
func printAll(objs []*unstructured.Unstructured, mk func(w *bytes.Buffer) Printer) {
	run := func(single bool, items []*Item) {
		var buf bytes.Buffer
		p := mk(&buf)
		if err := p.Begin(single); err != nil {
			return
		}
		for _, it := range items {
			if err := p.Print(it); err != nil {
				return
			}
		}
		_ = p.Finish()
	}
	var raw, decoded []*Item
	for i := range fuzzObjects {
		raw = append(raw, ItemFromRaw([]byte(fuzzObjects[i])))
		decoded = append(decoded, ItemFromObject(objs[i]))
	}
	run(false, raw)
	run(false, decoded)
	for i := range fuzzObjects {
		run(true, []*Item{ItemFromRaw([]byte(fuzzObjects[i]))})
		run(true, []*Item{ItemFromObject(objs[i])})
	}
}

func fuzzJSONPath(expr string, objs []*unstructured.Unstructured) error {
	if _, err := NewJSONPathPrinter(&bytes.Buffer{}, expr); err != nil {
		return nil
	}
	var err error
	printAll(objs, func(w *bytes.Buffer) Printer {
		p, perr := NewJSONPathPrinter(w, expr)
		if perr != nil {
			err = fmt.Errorf("NewJSONPathPrinter(%q) failed on its second parse: %v", expr, perr)
			return discardPrinter{}
		}
		return p
	})
	return err
}

func fuzzGJSON(expr string, objs []*unstructured.Unstructured) error {
	if _, err := NewGJSONPrinter(&bytes.Buffer{}, expr); err != nil {
		return nil
	}
	printAll(objs, func(w *bytes.Buffer) Printer {
		p, _ := NewGJSONPrinter(w, expr)
		return p
	})
	return nil
}

func fuzzCustomColumns(expr string, objs []*unstructured.Unstructured) error {
	cols, err := ParseCustomColumns(expr)
	if err != nil {
		return nil
	}
	if len(cols) == 0 {
		return fmt.Errorf("ParseCustomColumns(%q) returned no columns and no error", expr)
	}
	printAll(objs, func(w *bytes.Buffer) Printer {
		return NewCustomColumnsPrinter(w, cols, false)
	})
	return nil
}

func fuzzSortKey(expr string, objs []*unstructured.Unstructured) error {
	key, err := SortKey(expr)
	if err != nil {
		return nil
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = key(o)
	}
	sort.SliceStable(keys, func(i, j int) bool { return LessValue(keys[i], keys[j]) })
	return nil
}

type discardPrinter struct{}

func (discardPrinter) Begin(bool) error  { return nil }
func (discardPrinter) Print(*Item) error { return nil }
func (discardPrinter) Finish() error     { return nil }
