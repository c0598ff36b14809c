package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
)

// OutputKind classifies -o values.
type OutputKind int

// The -o values, by kind.
const (
	OutTable         OutputKind = iota // "" or table: the server's Table
	OutWide                            // wide: the Table with its wide columns
	OutName                            // name: KIND/NAME
	OutJSON                            // json
	OutYAML                            // yaml
	OutJSONL                           // jsonl, ndjson: one object per line
	OutJSONPath                        // jsonpath=, jsonpath-file=, jsonpath-as-json=
	OutGJSON                           // gjson=PATH
	OutCustomColumns                   // custom-columns=, custom-columns-file=
	OutGoTemplate                      // go-template=, go-template-file=, template=, templatefile=
)

// OutputSpec is a parsed -o value.
type OutputSpec struct {
	Kind OutputKind // what to print
	Arg  string     // template, path or column spec
	// AsJSON is -o jsonpath-as-json: the template's results as a JSON array.
	AsJSON bool
	// StrictKeys makes a missing key in a go template an error
	// (--allow-missing-template-keys=false).
	StrictKeys bool
}

// TemplateFlags are kubectl's --template and --allow-missing-template-keys,
// for the commands that print objects: the template of -o go-template (or
// jsonpath) given apart from -o, and whether a go template's missing key
// prints "<no value>" (the default) or is an error.
type TemplateFlags struct {
	Template         string
	AllowMissingKeys bool
}

// Register adds the flags to fl.
func (t *TemplateFlags) Register(fl *pflag.FlagSet) {
	fl.StringVar(&t.Template, "template", "", "Template string or path to template file to use when -o=go-template, -o=go-template-file. The template format is golang templates [http://golang.org/pkg/text/template/#pkg-overview].")
	fl.BoolVar(&t.AllowMissingKeys, "allow-missing-template-keys", true, "If true, ignore any errors in templates when a field or map key is missing in the template. Only applies to golang and jsonpath output formats.")
}

// Output parses -o o with these flags: a template format given without
// "=" takes its template from --template, and --template without -o means
// -o go-template, as in kubectl.
func (t TemplateFlags) Output(o string) (OutputSpec, error) {
	spec, err := ParseOutput(joinTemplate(o, t.Template))
	if err != nil {
		return spec, err
	}
	spec.StrictKeys = !t.AllowMissingKeys
	return spec, nil
}

// OutputOverDefault is the -o of a command whose output defaults to def
// (config view's and kuberc view's yaml), given -o (oSet: on the command
// line) and --template: --template without -o means go-template, not
// def, as kubectl's print flags make it, and a template format given
// without "=" takes --template.
func OutputOverDefault(o, template string, oSet bool, def string) string {
	switch {
	case !oSet && template != "":
		o = ""
	case !oSet || o == "":
		o = def
	}
	return joinTemplate(o, template)
}

// joinTemplate is the -o that -o o and --template template make together:
// --template alone means -o go-template, and a template format given
// without "=" takes its template from --template, as in kubectl.
func joinTemplate(o, template string) string {
	if o == "" && template != "" {
		o = "go-template"
	}
	name, _, hasArg := strings.Cut(o, "=")
	if !hasArg && template != "" {
		switch name {
		case "go-template", "template", "go-template-file", "templatefile", "jsonpath", "jsonpath-file", "jsonpath-as-json":
			o = name + "=" + template
		}
	}
	return o
}

// ParseOutput parses -o; an unknown format is a usage error.
func ParseOutput(o string) (OutputSpec, error) {
	name, arg, _ := strings.Cut(o, "=")
	switch name {
	case "", "table":
		return OutputSpec{Kind: OutTable}, nil
	case "wide":
		return OutputSpec{Kind: OutWide}, nil
	case "name":
		return OutputSpec{Kind: OutName}, nil
	case "json":
		return OutputSpec{Kind: OutJSON}, nil
	case "yaml":
		return OutputSpec{Kind: OutYAML}, nil
	case "jsonl", "ndjson":
		return OutputSpec{Kind: OutJSONL}, nil
	case "jsonpath", "jsonpath-as-json":
		if arg == "" {
			return OutputSpec{}, Usagef("template format specified but no template given")
		}
		return OutputSpec{Kind: OutJSONPath, Arg: arg, AsJSON: name == "jsonpath-as-json"}, nil
	case "jsonpath-file":
		b, err := os.ReadFile(arg)
		if err != nil {
			return OutputSpec{}, fmt.Errorf("error reading --template %s, %v", arg, err)
		}
		return OutputSpec{Kind: OutJSONPath, Arg: string(b)}, nil
	case "go-template", "template":
		if arg == "" {
			return OutputSpec{}, Usagef("template format specified but no template given")
		}
		return OutputSpec{Kind: OutGoTemplate, Arg: arg}, nil
	case "go-template-file", "templatefile":
		if arg == "" {
			return OutputSpec{}, Usagef("template format specified but no template given")
		}
		b, err := os.ReadFile(arg)
		if err != nil {
			return OutputSpec{}, fmt.Errorf("error reading --template %s, %v", arg, err)
		}
		return OutputSpec{Kind: OutGoTemplate, Arg: string(b)}, nil
	case "gjson":
		return OutputSpec{Kind: OutGJSON, Arg: arg}, nil
	case "custom-columns":
		return OutputSpec{Kind: OutCustomColumns, Arg: arg}, nil
	case "custom-columns-file":
		b, err := os.ReadFile(arg)
		if err != nil {
			return OutputSpec{}, fmt.Errorf("error reading custom-columns file %s: %v", arg, err)
		}
		return OutputSpec{Kind: OutCustomColumns, Arg: "\x00file\x00" + string(b)}, nil
	}
	return OutputSpec{}, Usagef("unable to match a printer suitable for the output format %q, allowed formats are: custom-columns,custom-columns-file,gjson,go-template,go-template-file,json,jsonl,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml", o)
}

// IsTable reports the outputs that use the server's Table.
func (o OutputSpec) IsTable() bool { return o.Kind == OutTable || o.Kind == OutWide }

// ObjectPrinter builds the printer for a non-table output.
func (o OutputSpec) ObjectPrinter(w io.Writer, noHeaders bool) (printers.Printer, error) {
	switch o.Kind {
	case OutName:
		return printers.NewNamePrinter(w), nil
	case OutJSON:
		return printers.NewJSONPrinter(w), nil
	case OutYAML:
		return printers.NewYAMLPrinter(w), nil
	case OutJSONL:
		return printers.NewJSONLPrinter(w), nil
	case OutJSONPath:
		p, err := printers.NewJSONPathPrinter(w, o.Arg)
		if err != nil {
			return nil, err
		}
		p.EnableJSONOutput(o.AsJSON)
		p.AllowMissingKeys(!o.StrictKeys)
		return p, nil
	case OutGJSON:
		return printers.NewGJSONPrinter(w, o.Arg)
	case OutGoTemplate:
		return printers.NewGoTemplatePrinter(w, o.Arg, !o.StrictKeys)
	case OutCustomColumns:
		var cols []printers.Column
		var err error
		if rest, ok := strings.CutPrefix(o.Arg, "\x00file\x00"); ok {
			cols, err = printers.ParseCustomColumnsFile(strings.NewReader(rest))
		} else {
			cols, err = printers.ParseCustomColumns(o.Arg)
		}
		if err != nil {
			return nil, err
		}
		return printers.NewCustomColumnsPrinter(w, cols, noHeaders), nil
	}
	return nil, fmt.Errorf("no object printer for this output")
}

// Flusher is implemented by printers that can flush mid-stream (watches).
type Flusher interface{ Flush() error }

// HidesManagedFields reports the outputs that leave out
// metadata.managedFields unless --show-managed-fields: kubectl's json and
// yaml, and kdyn's jsonl (as get does).
func (o OutputSpec) HidesManagedFields() bool {
	return o.Kind == OutJSON || o.Kind == OutYAML || o.Kind == OutJSONL
}

// PrintObjectJSON prints one object, given as its JSON, with an object
// output (name, json, yaml, jsonpath, ...). managedFields are left out
// where HidesManagedFields says, unless showManaged. With keepOrder, -o
// json keeps raw's member order instead of sorting it: kubectl prints the
// typed objects it builds or decodes (create's generated objects, review
// answers) in their Go structs' order, which is the server's order too.
func PrintObjectJSON(w io.Writer, spec OutputSpec, raw []byte, keepOrder, showManaged bool) error {
	if spec.HidesManagedFields() && !showManaged {
		raw = printers.StripManagedFieldsJSON(raw)
	}
	p, err := spec.ObjectPrinter(w, false)
	if err != nil {
		return err
	}
	if jp, ok := p.(*printers.JSONPrinter); ok {
		jp.KeepOrder = keepOrder
	}
	if err := p.Begin(true); err != nil {
		return err
	}
	if err := p.Print(printers.ItemFromRaw(raw)); err != nil {
		return err
	}
	return p.Finish()
}
