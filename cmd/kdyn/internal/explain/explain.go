package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/restmapper"
)

type explainOptions struct {
	recursive  bool
	maxDepth   int
	apiVersion string
	output     string
}

// NewCommand returns "kdyn explain".
func NewCommand(f *cli.Factory) *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain TYPE[.FIELD...] [--recursive] [--api-version GROUP/VERSION]",
		Short: "Get the documentation of a resource type and its fields",
		Long: `Describe the fields of a resource type, from the server's OpenAPI v3
document for the type's group-version: built-in types, CRDs with a schema
and aggregated APIs alike.

TYPE is a resource name as 'get' takes it (plural, singular, short name or
kind), optionally followed by its group (widgets.example.com.spec) when two
groups serve the same name. The fields follow, separated by dots; arrays and
maps are looked through, so pods.spec.containers.name names the name of a
container. --recursive prints the whole field tree below the field, one line
per field with its type.

Cost: one request for the OpenAPI v3 index and, unless the document is
already in the disk cache under the hash the index names, one for the
document.`,
		Example: `  # The fields of a Deployment
  kdyn explain deployments

  # One field, through an array
  kdyn explain pods.spec.containers.imagePullPolicy

  # The whole tree below spec, with types
  kdyn explain deploy.spec --recursive

  # Two levels of it
  kdyn explain deploy.spec --recursive --max-depth=2

  # Another version of a type
  kdyn explain hpa --api-version autoscaling/v1

  # A CRD, named with its group
  kdyn explain widgets.example.com.spec`,
		RunE: func(cmd *cobra.Command, args []string) error { return runExplain(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.recursive, "recursive", "R", false, "Print the fields of fields, down the whole tree (or --max-depth levels of it), with their types and without descriptions.")
	fl.IntVar(&o.maxDepth, "max-depth", 0, "With --recursive, print this many levels of fields (1: the fields of the type or field explained); 0 prints them all.")
	fl.StringVar(&o.apiVersion, "api-version", "", "Explain the type at this GROUP/VERSION (e.g. autoscaling/v1, or v1 for the core group) instead of its preferred version.")
	fl.StringVarP(&o.output, "output", "o", "plaintext", "Output format: plaintext (from the OpenAPI v3 documents) or plaintext-openapiv2 (kubectl's older layout, from the OpenAPI v2 document).")
	return cmd
}

func runExplain(ctx context.Context, f *cli.Factory, o *explainOptions, args []string) error {
	if len(args) == 0 {
		return cli.Usagef(`You must specify the type of resource to explain. Use "kdyn api-resources" for a complete list of supported resources.`)
	}
	if len(args) > 1 {
		return cli.Usagef("explain takes one argument, TYPE[.FIELD...]; got %d", len(args))
	}
	if o.maxDepth < 0 {
		return cli.Usagef("--max-depth must be non-negative")
	}
	if o.maxDepth > 0 && !o.recursive {
		return cli.Usagef("--max-depth requires --recursive")
	}
	switch o.output {
	case "", "plaintext", "plaintext-openapiv2":
	default:
		return cli.Usagef("--output %s is not supported: plaintext (from the OpenAPI v3 documents) or plaintext-openapiv2 (kubectl's older layout, from the OpenAPI v2 document)", o.output)
	}
	m, err := f.RESTMapper()
	if err != nil {
		return err
	}
	gvr, fields, err := resolveExplainTarget(ctx, m, args[0], o.apiVersion)
	if err != nil {
		return err
	}
	gvk, err := m.KindForWithContext(ctx, gvr)
	if err != nil {
		return err
	}
	rec := recursion{on: o.recursive, maxDepth: o.maxDepth}
	if o.output == "plaintext-openapiv2" {
		model, err := openAPIV2Model(ctx, f, gvk)
		if err != nil {
			return err
		}
		return v2Explain(f.Streams.Out, model, gvk, fields, rec)
	}
	dc, err := f.Discovery()
	if err != nil {
		return err
	}
	raw, err := dc.OpenAPIV3Document(ctx, discovery.PathForGroupVersion(gvr.Group, gvr.Version))
	if err != nil {
		return err
	}
	doc, err := parseOpenAPIDocument(raw)
	if err != nil {
		return fmt.Errorf("the OpenAPI v3 document of %s: %w", gvr.GroupVersion(), err)
	}
	out, err := doc.explain(gvk, fields, rec)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f.Streams.Out, out)
	return err
}

var explainVersionRE = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// resolveExplainTarget splits TYPE[.GROUP][.FIELD...] and resolves the
// type. The first segment is the type, as in kubectl; the segments after
// it are taken as its group (or VERSION.GROUP) when they name a served
// group, so fields never need to be told apart from groups by the user.
func resolveExplainTarget(ctx context.Context, m *restmapper.Mapper, arg, apiVersion string) (schema.GroupVersionResource, []string, error) {
	segs := strings.Split(arg, ".")
	for _, s := range segs {
		if s == "" {
			return schema.GroupVersionResource{}, nil, cli.Usagef("%q has an empty element; write TYPE[.FIELD...]", arg)
		}
	}
	typ, fields := segs[0], segs[1:]
	if apiVersion != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil || gv.Version == "" {
			return schema.GroupVersionResource{}, nil, cli.Usagef("--api-version %q is not GROUP/VERSION (or VERSION for the core group)", apiVersion)
		}
		gvrs, err := m.ResourcesForWithContext(ctx, schema.GroupVersionResource{Group: gv.Group, Version: gv.Version, Resource: strings.ToLower(typ)})
		if err == nil {
			for _, gvr := range gvrs {
				if gvr.Group == gv.Group && gvr.Version == gv.Version {
					return gvr, fields, nil
				}
			}
		}
		return schema.GroupVersionResource{}, nil, fmt.Errorf("the server doesn't have a resource type %q in %s", typ, gv.String())
	}
	if len(fields) > 0 {
		if resources, _ := m.Resources(ctx, nil); len(resources) > 0 {
			groups := map[string]bool{}
			for _, r := range resources {
				groups[r.Group] = true
			}
			// The longest group wins: widgets.example.com.spec is the group
			// example.com, not a field com.
			for i := len(segs); i >= 2; i-- {
				if g := strings.Join(segs[1:i], "."); g != "" && groups[g] {
					typ, fields = segs[0]+"."+g, segs[i:]
					break
				}
				if i >= 3 && explainVersionRE.MatchString(segs[1]) {
					if g := strings.Join(segs[2:i], "."); groups[g] {
						typ, fields = segs[0]+"."+segs[1]+"."+g, segs[i:]
						break
					}
				}
			}
		}
	}
	matches, err := m.ResolveTypes(ctx, typ)
	if err != nil {
		return schema.GroupVersionResource{}, nil, err
	}
	if len(matches) != 1 {
		return schema.GroupVersionResource{}, nil, cli.Usagef("%q is a category of %d resource types; explain takes one type", typ, len(matches))
	}
	return matches[0].GVR, fields, nil
}

// openAPIDocument is the part of an OpenAPI v3 document explain reads.
type openAPIDocument struct {
	Components struct {
		Schemas map[string]*openAPISchema `json:"schemas"`
	} `json:"components"`
}

// openAPISchema is the part of a schema explain reads.
type openAPISchema struct {
	Ref                  string                    `json:"$ref"`
	Type                 schemaType                `json:"type"`
	Description          string                    `json:"description"`
	Properties           map[string]*openAPISchema `json:"properties"`
	Required             []string                  `json:"required"`
	Items                subSchema                 `json:"items"`
	AdditionalProperties subSchema                 `json:"additionalProperties"`
	AllOf                []*openAPISchema          `json:"allOf"`
	Enum                 []any                     `json:"enum"`
	ExternalDocs         *externalDocs             `json:"externalDocs"`
	GVKs                 []schemaGVK               `json:"x-kubernetes-group-version-kind"`
}

type externalDocs struct {
	Description string `json:"description"`
	URL         string `json:"url"`
}

type schemaGVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// schemaType is a schema's type: a string, or (JSON Schema 2020-12) a list
// of which the first non-null entry is kept.
type schemaType string

func (t *schemaType) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = schemaType(s)
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return nil // a type explain cannot read is no type
	}
	for _, s := range l {
		if s != "null" {
			*t = schemaType(s)
			break
		}
	}
	return nil
}

// subSchema is items or additionalProperties: a schema, or nothing for a
// boolean or an empty schema ({}), which explain does not look into.
type subSchema struct{ s *openAPISchema }

func (x *subSchema) UnmarshalJSON(b []byte) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil || compact.Len() == 0 || compact.Bytes()[0] != '{' || compact.String() == "{}" {
		return nil
	}
	x.s = &openAPISchema{}
	return json.Unmarshal(b, x.s)
}

func parseOpenAPIDocument(raw []byte) (*openAPIDocument, error) {
	var doc openAPIDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

const schemaRefPrefix = "#/components/schemas/"

// lookup returns the schema a $ref names, or nil.
func (d *openAPIDocument) lookup(ref string) *openAPISchema {
	name, ok := strings.CutPrefix(ref, schemaRefPrefix)
	if !ok {
		return nil
	}
	name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
	return d.Components.Schemas[name]
}

// resolve returns the schema s refers to, or s when it has no ref (or one
// that names nothing).
func (d *openAPIDocument) resolve(s *openAPISchema) *openAPISchema {
	if s.Ref != "" {
		if r := d.lookup(s.Ref); r != nil {
			return r
		}
	}
	return s
}

// kindSchema returns the schema tagged with gvk; the first by name when
// several are.
func (d *openAPIDocument) kindSchema(gvk schema.GroupVersionKind) *openAPISchema {
	names := make([]string, 0, len(d.Components.Schemas))
	for n := range d.Components.Schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := d.Components.Schemas[n]
		if s == nil {
			continue
		}
		for _, g := range s.GVKs {
			if g.Group == gvk.Group && g.Version == gvk.Version && g.Kind == gvk.Kind {
				return s
			}
		}
	}
	return nil
}

// explain renders kubectl's plaintext explain of gvk's schema, or of the
// field at path below it.
// recursion is how far --recursive prints the field tree: not at all
// (on false), or down to maxDepth levels of fields (0: all of them).
type recursion struct {
	on       bool
	maxDepth int
}

// descend reports whether the fields of a field at level (1: the type's
// own fields) are printed.
func (r recursion) descend(level int) bool {
	return r.on && (r.maxDepth == 0 || level < r.maxDepth)
}

func (d *openAPIDocument) explain(gvk schema.GroupVersionKind, path []string, recursive recursion) (string, error) {
	root := d.kindSchema(gvk)
	if root == nil {
		return "", fmt.Errorf("the server's OpenAPI v3 document for %s has no schema for kind %s", gvk.GroupVersion(), gvk.Kind)
	}
	body, ok := d.output(root, path, nil, recursive)
	if !ok {
		// Name the path up to the first field that is missing.
		for k := 1; k <= len(path); k++ {
			if _, ok := d.output(root, path[:k], nil, recursion{}); !ok {
				return "", fmt.Errorf("field %q does not exist", strings.Join(path[:k], "."))
			}
		}
		return "", fmt.Errorf("field %q does not exist", strings.Join(path, "."))
	}
	var b strings.Builder
	if gvk.Group != "" {
		fmt.Fprintf(&b, "GROUP:      %s\n", gvk.Group)
	}
	fmt.Fprintf(&b, "KIND:       %s\nVERSION:    %s\n\n", gvk.Kind, gvk.Version)
	b.WriteString(body)
	b.WriteString("\n")
	return b.String(), nil
}

// refSet is the set of $refs on the way down, to stop at cycles.
type refSet map[string]bool

func (h refSet) with(ref string) refSet {
	out := make(refSet, len(h)+1)
	for k := range h {
		out[k] = true
	}
	if ref != "" {
		out[ref] = true
	}
	return out
}

// output follows path from s. At the end of the path it prints the
// description and the fields; on the way, FIELD: for the last element.
// It looks through arrays (items), maps (additionalProperties) and allOf.
// false means the path does not exist.
func (d *openAPIDocument) output(s *openAPISchema, path []string, seen refSet, recursive recursion) (string, bool) {
	resolved := d.resolve(s)
	if len(path) == 0 {
		var b strings.Builder
		b.WriteString("DESCRIPTION:\n")
		desc := d.description(resolved, 0)
		if desc == "" {
			desc = "<empty>"
		}
		b.WriteString(indentText(wrapText(desc, 76), 4))
		b.WriteString("\n")
		if ed := resolved.ExternalDocs; ed != nil {
			b.WriteString("\n")
			b.WriteString(externalDocsText(ed, 0, 4, 76))
		}
		if fl := d.fieldList(resolved, 1, recursive, nil); fl != "" {
			b.WriteString("FIELDS:\n")
			b.WriteString(fl)
		}
		return b.String(), true
	}
	if s.Ref != "" && seen[s.Ref] {
		return "", false
	}
	next := seen.with(s.Ref)
	if sub := resolved.Properties[path[0]]; sub != nil {
		var b strings.Builder
		if len(path) == 1 {
			fmt.Fprintf(&b, "FIELD: %s <%s>\n", path[0], d.typeGuess(sub, 0))
			if len(sub.Enum) > 0 {
				b.WriteString("ENUM:")
				for _, e := range sub.Enum {
					b.WriteString("\n    " + enumText(e))
				}
			}
			b.WriteString("\n\n")
		}
		rest, ok := d.output(sub, path[1:], nil, recursive)
		if !ok {
			return "", false
		}
		b.WriteString(rest)
		return b.String(), true
	}
	if it := resolved.Items.s; it != nil {
		return d.output(it, path, next, recursive)
	}
	if ap := resolved.AdditionalProperties.s; ap != nil {
		return d.output(ap, path, next, recursive)
	}
	for _, a := range resolved.AllOf {
		if a == nil {
			continue
		}
		if out, ok := d.output(a, path, next, recursive); ok && out != "" {
			return out, true
		}
	}
	return "", false
}

// description joins the descriptions of s (resolved), of its allOf, its
// items and its map values, one per line.
func (d *openAPIDocument) description(s *openAPISchema, depth int) string {
	if depth > 16 {
		return ""
	}
	r := d.resolve(s)
	var b strings.Builder
	if r.Description != "" {
		b.WriteString(r.Description + "\n")
	}
	for _, a := range r.AllOf {
		if a != nil {
			b.WriteString(d.description(a, depth+1))
		}
	}
	if it := r.Items.s; it != nil {
		b.WriteString(d.description(it, depth+1))
	}
	if ap := r.AdditionalProperties.s; ap != nil {
		b.WriteString(d.description(ap, depth+1))
	}
	return b.String()
}

// fieldList prints the properties of s (resolved, and of its allOf, items
// and map values), sorted by name, at an indentation of level*2 spaces;
// recursive prints one line per field and descends into each, stopping at
// a $ref already on the way down.
func (d *openAPIDocument) fieldList(s *openAPISchema, level int, recursive recursion, seen refSet) string {
	if s.Ref != "" && seen[s.Ref] {
		return ""
	}
	next := seen.with(s.Ref)
	r := d.resolve(s)
	var b strings.Builder
	names := make([]string, 0, len(r.Properties))
	for n := range r.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fs := r.Properties[n]
		if fs == nil {
			continue
		}
		b.WriteString(d.fieldDetail(n, fs, r, level, recursive.on))
		if recursive.descend(level) {
			b.WriteString(d.fieldList(fs, level+1, recursive, next))
		}
	}
	for _, a := range r.AllOf {
		if a != nil {
			b.WriteString(d.fieldList(a, level, recursive, next))
		}
	}
	if it := r.Items.s; it != nil {
		b.WriteString(d.fieldList(it, level, recursive, next))
	}
	if ap := r.AdditionalProperties.s; ap != nil {
		b.WriteString(d.fieldList(ap, level, recursive, next))
	}
	return b.String()
}

// fieldDetail prints one field: name, <type>, -required-, its enum; unless
// short, its description and external docs, then a blank line.
func (d *openAPIDocument) fieldDetail(name string, fs, parent *openAPISchema, level int, short bool) string {
	ind := level * 2
	pad := strings.Repeat(" ", ind)
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s\t<%s>", pad, name, d.typeGuess(fs, 0))
	for _, req := range parent.Required {
		if req == name {
			b.WriteString(" -required-")
			break
		}
	}
	if len(fs.Enum) > 0 {
		b.WriteString("\n" + pad + "enum: ")
		for i, e := range fs.Enum {
			if i >= 4 {
				b.WriteString(", ....")
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(enumText(e))
		}
	}
	b.WriteString("\n")
	if short {
		return b.String()
	}
	desc := fs.Description
	if desc == "" {
		desc = "<no description>"
	}
	b.WriteString(indentText(wrapText(desc, 78-ind), ind+2))
	b.WriteString("\n")
	if fs.ExternalDocs != nil {
		b.WriteString("\n")
		b.WriteString(externalDocsText(fs.ExternalDocs, ind+2, ind+4, 76-ind))
	}
	b.WriteString("\n")
	return b.String()
}

// externalDocsText prints an EXTERNAL DOCS: section, its heading indented
// by head spaces and its description (wrapped at width) and URL by body.
func externalDocsText(ed *externalDocs, head, body, width int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", head) + "EXTERNAL DOCS:\n")
	if ed.Description != "" {
		b.WriteString(indentText(wrapText(ed.Description, width), body) + "\n")
	}
	if ed.URL != "" {
		b.WriteString(strings.Repeat(" ", body) + "URL: " + ed.URL + "\n")
	}
	return b.String()
}

// typeGuess names a schema's type the way kubectl explain does: string,
// integer, []Container, map[string]string, the last part of a $ref's name
// for objects, Object otherwise.
func (d *openAPIDocument) typeGuess(s *openAPISchema, depth int) string {
	if depth > 16 {
		return "Object"
	}
	switch {
	case s.Items.s != nil:
		return "[]" + d.typeGuess(s.Items.s, depth+1)
	case s.AdditionalProperties.s != nil:
		return "map[string]" + d.typeGuess(s.AdditionalProperties.s, depth+1)
	case len(s.AllOf) == 1 && len(s.Properties) == 0 && s.AllOf[0] != nil:
		return d.typeGuess(s.AllOf[0], depth+1)
	case s.Ref != "":
		if rs := d.lookup(s.Ref); rs != nil && rs.Type != "" && rs.Type != "object" {
			return string(rs.Type)
		}
		name := s.Ref[strings.LastIndex(s.Ref, "/")+1:]
		if short := name[strings.LastIndex(name, ".")+1:]; short != "" {
			return short
		}
		return "Object"
	case s.Type == "" || s.Type == "object":
		return "Object"
	}
	return string(s.Type)
}

func enumText(v any) string {
	if s, ok := v.(string); ok {
		if s == "" {
			return `""`
		}
		return s
	}
	return fmt.Sprint(v)
}

// indentText puts n spaces before every line of s, the last (possibly
// empty) one included.
func indentText(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// wrapText wraps each line of s at width runes, greedily, the way kubectl
// explain wraps descriptions: whitespace is kept as written except where a
// line is broken (there it is dropped), a word that does not fit starts a
// new line, and a word longer than the width is left whole. Existing line
// breaks are kept.
func wrapText(s string, width int) string {
	var out, word, space strings.Builder
	lineLen, wordLen, spaceLen := 0, 0, 0 // in runes; lineLen counts what is written
	flush := func() {
		out.WriteString(space.String())
		out.WriteString(word.String())
		lineLen += spaceLen + wordLen
		space.Reset()
		word.Reset()
		spaceLen, wordLen = 0, 0
	}
	for _, r := range s {
		switch {
		case r == '\n':
			flush()
			out.WriteRune('\n')
			lineLen = 0
		case unicode.IsSpace(r) && r != '\u00a0':
			if spaceLen == 0 || wordLen > 0 {
				flush()
			}
			space.WriteRune(r)
			spaceLen++
		default:
			word.WriteRune(r)
			wordLen++
			if lineLen+spaceLen+wordLen > width && wordLen < width {
				// The word does not fit: break before it and drop the
				// whitespace in front of it.
				out.WriteRune('\n')
				lineLen = 0
				space.Reset()
				spaceLen = 0
			}
		}
	}
	if wordLen == 0 {
		if lineLen+spaceLen <= width {
			out.WriteString(space.String())
		}
	} else {
		out.WriteString(space.String())
		out.WriteString(word.String())
	}
	return out.String()
}
