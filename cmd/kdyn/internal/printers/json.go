package printers

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/tidwall/pretty"
	"sigs.k8s.io/yaml"
)

// jsonOptions format like encoding/json's MarshalIndent(v, "", "    ") of a
// map, which is kubectl's -o json: keys sorted, four spaces.
var jsonOptions = &pretty.Options{Width: -1, Indent: "    ", SortKeys: true}
var jsonItemOptions = &pretty.Options{Width: -1, Indent: "    ", Prefix: "        ", SortKeys: true}

// jsonOrderedOptions are jsonOptions keeping the order of members, which
// is kubectl's -o json of a typed object (json.MarshalIndent of a struct).
var jsonOrderedOptions = &pretty.Options{Width: -1, Indent: "    "}

// JSONPrinter prints kubectl's -o json: objects alone (Begin(true)), or
// a List streamed item by item.
type JSONPrinter struct {
	w      *bufio.Writer
	single bool
	n      int
	// KeepOrder prints a single object's members in the order they come
	// instead of sorting them. kubectl sorts the members of the objects it
	// handles as maps, but prints the typed objects it builds or decodes
	// (create's generated objects, review answers) in their Go structs'
	// order, which is also the order the server sends.
	KeepOrder bool
}

// NewJSONPrinter returns a JSONPrinter writing to w.
func NewJSONPrinter(w io.Writer) *JSONPrinter { return &JSONPrinter{w: bufio.NewWriterSize(w, 64<<10)} }

// Begin starts the output.
func (p *JSONPrinter) Begin(single bool) error {
	p.single = single
	if !single {
		_, err := p.w.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [")
		return err
	}
	return nil
}

// Print writes one object.
func (p *JSONPrinter) Print(it *Item) error {
	raw, err := it.Raw()
	if err != nil {
		return err
	}
	if p.single {
		// Several objects without a List follow one another, as
		// kubectl prints the objects of commands that print one at a
		// time (rollout history).
		opts := jsonOptions
		if p.KeepOrder {
			opts = jsonOrderedOptions
		}
		_, err = p.w.Write(pretty.PrettyOptions(raw, opts))
		return err
	}
	if p.n > 0 {
		p.w.WriteString(",")
	}
	p.n++
	p.w.WriteString("\n")
	out := pretty.PrettyOptions(raw, jsonItemOptions)
	_, err = p.w.Write(bytes.TrimRight(out, "\n"))
	return err
}

// Finish ends the output and flushes.
func (p *JSONPrinter) Finish() error {
	if !p.single {
		if p.n == 0 {
			p.w.WriteString("],\n")
		} else {
			p.w.WriteString("\n    ],\n")
		}
		p.w.WriteString("    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
	}
	return p.w.Flush()
}

// JSONLPrinter prints one compact JSON object per line, for pipes.
type JSONLPrinter struct{ w *bufio.Writer }

// NewJSONLPrinter returns a JSONLPrinter writing to w.
func NewJSONLPrinter(w io.Writer) *JSONLPrinter {
	return &JSONLPrinter{w: bufio.NewWriterSize(w, 64<<10)}
}

// Begin does nothing: jsonl has no envelope.
func (p *JSONLPrinter) Begin(bool) error { return nil }

// Print writes one object on one line.
func (p *JSONLPrinter) Print(it *Item) error {
	raw, err := it.Raw()
	if err != nil {
		return err
	}
	p.w.Write(pretty.Ugly(raw))
	return p.w.WriteByte('\n')
}

// Flush writes buffered lines now (for watches).
func (p *JSONLPrinter) Flush() error { return p.w.Flush() }

// Finish flushes.
func (p *JSONLPrinter) Finish() error { return p.w.Flush() }

// YAMLPrinter prints kubectl's -o yaml: one object alone, or a List
// streamed item by item.
type YAMLPrinter struct {
	w      *bufio.Writer
	single bool
	n      int
	// Separate puts "---" between objects instead of a List (for watches).
	Separate bool
}

// NewYAMLPrinter returns a YAMLPrinter writing to w.
func NewYAMLPrinter(w io.Writer) *YAMLPrinter { return &YAMLPrinter{w: bufio.NewWriterSize(w, 64<<10)} }

// Begin starts the output.
func (p *YAMLPrinter) Begin(single bool) error {
	p.single = single
	if !single && !p.Separate {
		_, err := p.w.WriteString("apiVersion: v1\n")
		return err
	}
	return nil
}

// Print writes one object.
func (p *YAMLPrinter) Print(it *Item) error {
	raw, err := it.Raw()
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(raw)
	if err != nil {
		return fmt.Errorf("printers: convert to YAML: %w", err)
	}
	defer func() { p.n++ }()
	if p.single || p.Separate {
		if p.n > 0 {
			p.w.WriteString("---\n")
		}
		_, err = p.w.Write(y)
		return err
	}
	if p.n == 0 {
		p.w.WriteString("items:\n")
	}
	lines := bytes.SplitAfter(bytes.TrimRight(y, "\n"), []byte("\n"))
	for i, l := range lines {
		if i == 0 {
			p.w.WriteString("- ")
		} else if len(bytes.TrimSpace(l)) > 0 {
			p.w.WriteString("  ")
		}
		p.w.Write(l)
	}
	_, err = p.w.WriteString("\n")
	return err
}

// Flush writes buffered output now (for watches).
func (p *YAMLPrinter) Flush() error { return p.w.Flush() }

// Finish ends the output and flushes.
func (p *YAMLPrinter) Finish() error {
	if !p.single && !p.Separate {
		if p.n == 0 {
			p.w.WriteString("items: []\n")
		}
		p.w.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	}
	return p.w.Flush()
}
