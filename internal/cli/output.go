package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kdyn/kdyn/internal/printers"
)

// outputKind classifies -o values.
type outputKind int

const (
	outTable outputKind = iota
	outWide
	outName
	outJSON
	outYAML
	outJSONL
	outJSONPath
	outGJSON
	outCustomColumns
)

type outputSpec struct {
	kind outputKind
	arg  string // template, path or column spec
	// asJSON is -o jsonpath-as-json: the template's results as a JSON array.
	asJSON bool
}

func parseOutput(o string) (outputSpec, error) {
	name, arg, _ := strings.Cut(o, "=")
	switch name {
	case "", "table":
		return outputSpec{kind: outTable}, nil
	case "wide":
		return outputSpec{kind: outWide}, nil
	case "name":
		return outputSpec{kind: outName}, nil
	case "json":
		return outputSpec{kind: outJSON}, nil
	case "yaml":
		return outputSpec{kind: outYAML}, nil
	case "jsonl", "ndjson":
		return outputSpec{kind: outJSONL}, nil
	case "jsonpath", "jsonpath-as-json":
		if arg == "" {
			return outputSpec{}, usagef("template format specified but no template given")
		}
		return outputSpec{kind: outJSONPath, arg: arg, asJSON: name == "jsonpath-as-json"}, nil
	case "jsonpath-file":
		b, err := os.ReadFile(arg)
		if err != nil {
			return outputSpec{}, fmt.Errorf("error reading --template %s, %v", arg, err)
		}
		return outputSpec{kind: outJSONPath, arg: string(b)}, nil
	case "gjson":
		return outputSpec{kind: outGJSON, arg: arg}, nil
	case "custom-columns":
		return outputSpec{kind: outCustomColumns, arg: arg}, nil
	case "custom-columns-file":
		b, err := os.ReadFile(arg)
		if err != nil {
			return outputSpec{}, fmt.Errorf("error reading custom-columns file %s: %v", arg, err)
		}
		return outputSpec{kind: outCustomColumns, arg: "\x00file\x00" + string(b)}, nil
	}
	return outputSpec{}, usagef("unable to match a printer suitable for the output format %q, allowed formats are: custom-columns,custom-columns-file,gjson,json,jsonl,jsonpath,jsonpath-file,name,wide,yaml", o)
}

// isTable reports the outputs that use the server's Table.
func (o outputSpec) isTable() bool { return o.kind == outTable || o.kind == outWide }

// objectPrinter builds the printer for a non-table output.
func (o outputSpec) objectPrinter(w io.Writer, noHeaders bool) (printers.Printer, error) {
	switch o.kind {
	case outName:
		return printers.NewNamePrinter(w), nil
	case outJSON:
		return printers.NewJSONPrinter(w), nil
	case outYAML:
		return printers.NewYAMLPrinter(w), nil
	case outJSONL:
		return printers.NewJSONLPrinter(w), nil
	case outJSONPath:
		p, err := printers.NewJSONPathPrinter(w, o.arg)
		if err != nil {
			return nil, err
		}
		p.EnableJSONOutput(o.asJSON)
		return p, nil
	case outGJSON:
		return printers.NewGJSONPrinter(w, o.arg)
	case outCustomColumns:
		var cols []printers.Column
		var err error
		if rest, ok := strings.CutPrefix(o.arg, "\x00file\x00"); ok {
			cols, err = printers.ParseCustomColumnsFile(strings.NewReader(rest))
		} else {
			cols, err = printers.ParseCustomColumns(o.arg)
		}
		if err != nil {
			return nil, err
		}
		return printers.NewCustomColumnsPrinter(w, cols, noHeaders), nil
	}
	return nil, fmt.Errorf("no object printer for this output")
}

// flusher is implemented by printers that can flush mid-stream (watches).
type flusher interface{ Flush() error }
