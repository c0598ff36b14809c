package printers

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/tidwall/gjson"
	"k8s.io/client-go/util/jsonpath"
)

// ParseJSONPath parses a kubectl JSONPath template. Like kubectl, a bare
// expression (".metadata.name") is accepted and wrapped in braces, and
// missing keys print nothing rather than failing.
func ParseJSONPath(name, template string) (*jsonpath.JSONPath, error) {
	j := jsonpath.New(name).AllowMissingKeys(true)
	if err := j.Parse(template); err != nil {
		return nil, fmt.Errorf("error parsing jsonpath %s, %v", template, err)
	}
	return j, nil
}

// RelaxedJSONPath turns ".metadata.name" or "metadata.name" into
// "{.metadata.name}", as kubectl's custom columns and --sort-by do.
func RelaxedJSONPath(expr string) (string, error) {
	e := strings.TrimSpace(expr)
	if e == "" {
		return "", fmt.Errorf("jsonpath expression cannot be empty")
	}
	if strings.HasPrefix(e, "{") {
		if !strings.HasSuffix(e, "}") {
			return "", fmt.Errorf("unclosed jsonpath expression %q", expr)
		}
		e = e[1 : len(e)-1]
	}
	if !strings.HasPrefix(e, ".") {
		e = "." + e
	}
	return "{" + e + "}", nil
}

// JSONPathPrinter prints kubectl's -o jsonpath=: the template applied to
// the object alone, or to a List of all objects. It holds the objects of a
// list until Finish, because the template sees them all.
type JSONPathPrinter struct {
	w      io.Writer
	j      *jsonpath.JSONPath
	single bool
	items  []any
}

// NewJSONPathPrinter parses template.
func NewJSONPathPrinter(w io.Writer, template string) (*JSONPathPrinter, error) {
	j, err := ParseJSONPath("out", template)
	if err != nil {
		return nil, err
	}
	return &JSONPathPrinter{w: w, j: j}, nil
}

// AllowMissingKeys says whether a missing key prints nothing (true, the
// default) or is an error (--allow-missing-template-keys=false).
func (p *JSONPathPrinter) AllowMissingKeys(v bool) { p.j.AllowMissingKeys(v) }

// EnableJSONOutput makes the printer write the template's results as one
// indented JSON array (kubectl's -o jsonpath-as-json).
func (p *JSONPathPrinter) EnableJSONOutput(v bool) { p.j.EnableJSONOutput(v) }

// Begin records whether one object is printed alone.
func (p *JSONPathPrinter) Begin(single bool) error {
	p.single = single
	return nil
}

// Print executes the template (single) or collects the object (list).
func (p *JSONPathPrinter) Print(it *Item) error {
	obj, err := it.Object()
	if err != nil {
		return err
	}
	if p.single {
		return p.exec(obj.Object)
	}
	p.items = append(p.items, obj.Object)
	return nil
}

// Finish executes the template over the List.
func (p *JSONPathPrinter) Finish() error {
	if p.single {
		return nil
	}
	items := p.items
	if items == nil {
		items = []any{}
	}
	return p.exec(map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{"resourceVersion": ""}})
}

func (p *JSONPathPrinter) exec(v any) error {
	var buf bytes.Buffer
	if err := safeExecute(p.j, &buf, v); err != nil {
		return fmt.Errorf("error executing jsonpath: %v", err)
	}
	_, err := p.w.Write(buf.Bytes())
	return err
}

// GJSONPrinter prints -o gjson=PATH. A path that starts with "items" or
// "@" is evaluated once over the whole List (so gjson's modifiers and
// queries see every object, e.g. "items.#.metadata.name" or
// "@this.items.#(metadata.namespace==prod)#.metadata.name"); any other path
// is evaluated on each object, one result per line. Strings print without
// quotes; other values as JSON.
type GJSONPrinter struct {
	w       *bufio.Writer
	path    string
	overAll bool
	single  bool
	items   [][]byte
}

// NewGJSONPrinter validates path.
func NewGJSONPrinter(w io.Writer, path string) (*GJSONPrinter, error) {
	if strings.TrimSpace(path) == "" {
		return nil, fmt.Errorf("-o gjson= needs a path, e.g. -o gjson=metadata.name")
	}
	return &GJSONPrinter{w: bufio.NewWriter(w), path: path, overAll: strings.HasPrefix(path, "items") || strings.HasPrefix(path, "@")}, nil
}

// Begin records whether one object is printed alone.
func (p *GJSONPrinter) Begin(single bool) error {
	p.single = single
	return nil
}

// Print evaluates the path on one object, or collects it.
func (p *GJSONPrinter) Print(it *Item) error {
	raw, err := it.Raw()
	if err != nil {
		return err
	}
	if p.overAll {
		p.items = append(p.items, raw)
		return nil
	}
	p.writeResult(gjson.GetBytes(raw, p.path))
	return nil
}

func (p *GJSONPrinter) writeResult(r gjson.Result) {
	if !r.Exists() {
		p.w.WriteString("\n")
		return
	}
	if r.Type == gjson.String {
		p.w.WriteString(r.Str)
	} else {
		p.w.WriteString(r.Raw)
	}
	p.w.WriteString("\n")
}

// Finish evaluates a list path and flushes.
func (p *GJSONPrinter) Finish() error {
	if p.overAll {
		var b bytes.Buffer
		b.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
		b.Write(bytes.Join(p.items, []byte(",")))
		b.WriteString(`],"metadata":{"resourceVersion":""}}`)
		p.writeResult(gjson.GetBytes(b.Bytes(), p.path))
	}
	return p.w.Flush()
}

// Flush writes buffered output now.
func (p *GJSONPrinter) Flush() error { return p.w.Flush() }

// Column is one custom column: a header and a JSONPath.
type Column struct {
	Header string // the column's header
	Path   string // the JSONPath of its value
	j      *jsonpath.JSONPath
}

// ParseCustomColumns parses "HEADER:.json.path,HEADER2:.other".
func ParseCustomColumns(spec string) ([]Column, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("custom-columns format specified but no custom columns given")
	}
	var cols []Column
	for _, part := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		if !ok || header == "" {
			return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", part)
		}
		expr, err := RelaxedJSONPath(path)
		if err != nil {
			return nil, err
		}
		j, err := ParseJSONPath(header, expr)
		if err != nil {
			return nil, err
		}
		cols = append(cols, Column{Header: header, Path: expr, j: j})
	}
	return cols, nil
}

// ParseCustomColumnsFile parses kubectl's custom-columns file: a line of
// headers and a line of JSONPaths, separated by spaces.
func ParseCustomColumnsFile(r io.Reader) ([]Column, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("custom-columns file must have exactly two lines (headers, then paths), found %d", len(lines))
	}
	headers, paths := strings.Fields(lines[0]), strings.Fields(lines[1])
	if len(headers) != len(paths) {
		return nil, fmt.Errorf("custom-columns file has %d headers and %d paths", len(headers), len(paths))
	}
	parts := make([]string, len(headers))
	for i := range headers {
		parts[i] = headers[i] + ":" + paths[i]
	}
	return ParseCustomColumns(strings.Join(parts, ","))
}

// CustomColumnsPrinter prints kubectl's -o custom-columns.
type CustomColumnsPrinter struct {
	tw        io.Writer
	flush     func() error
	cols      []Column
	noHeaders bool
	headerOut bool
}

// NewCustomColumnsPrinter returns a printer for cols.
func NewCustomColumnsPrinter(w io.Writer, cols []Column, noHeaders bool) *CustomColumnsPrinter {
	tw := NewTabWriter(w)
	return &CustomColumnsPrinter{tw: tw, flush: tw.Flush, cols: cols, noHeaders: noHeaders}
}

// Begin does nothing.
func (p *CustomColumnsPrinter) Begin(bool) error { return nil }

// Print writes one row.
func (p *CustomColumnsPrinter) Print(it *Item) error {
	obj, err := it.Object()
	if err != nil {
		return err
	}
	if !p.headerOut && !p.noHeaders {
		hs := make([]string, len(p.cols))
		for i, c := range p.cols {
			hs[i] = c.Header
		}
		WriteRow(p.tw, hs)
	}
	p.headerOut = true
	cells := make([]string, len(p.cols))
	for i, c := range p.cols {
		cells[i] = ColumnValue(c.j, obj.Object)
	}
	return WriteRow(p.tw, cells)
}

// ColumnValue evaluates a parsed JSONPath on v the way kubectl's custom
// columns do: every result formatted with %v, joined by commas; nothing
// found is "<none>".
func ColumnValue(j *jsonpath.JSONPath, v any) string {
	results, err := SafeFindResults(j, v)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return "<none>"
	}
	var vals []string
	for _, rs := range results {
		for _, r := range rs {
			vals = append(vals, fmt.Sprintf("%v", r.Interface()))
		}
	}
	return strings.Join(vals, ",")
}

// Flush writes buffered rows now.
func (p *CustomColumnsPrinter) Flush() error { return p.flush() }

// Finish flushes.
func (p *CustomColumnsPrinter) Finish() error { return p.flush() }

// safeExecute and safeFindResults run the reference JSONPath evaluator and
// turn a panic inside it (some expressions over some data make it panic)
// into an error: no template may crash kdyn.
func safeExecute(j *jsonpath.JSONPath, w io.Writer, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the template cannot be evaluated on this object: %v", r)
		}
	}()
	return j.Execute(w, v)
}

// SafeFindResults is j.FindResults(v) with a panic inside the evaluator
// returned as an error.
func SafeFindResults(j *jsonpath.JSONPath, v any) (res [][]reflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("the template cannot be evaluated on this object: %v", r)
		}
	}()
	return j.FindResults(v)
}
