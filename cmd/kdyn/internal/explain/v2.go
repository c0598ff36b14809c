package explain

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	openapiproto "k8s.io/kube-openapi/pkg/util/proto"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// This file is explain -o plaintext-openapiv2: kubectl's older explain,
// from the server's OpenAPI v2 document, in its own layout (fields at
// three spaces, descriptions wrapped at 80 columns, Object and []Object
// for structured types).

// openAPIV2Accept asks for the OpenAPI v2 document as protobuf, as kubectl
// does: a fraction of the JSON's size and cost to decode.
const openAPIV2Accept = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"

// maxOpenAPIV2Bytes bounds the document (a whole cluster's schemas).
const maxOpenAPIV2Bytes = 256 << 20

// openAPIV2Model fetches /openapi/v2 and returns the model of gvk.
func openAPIV2Model(ctx context.Context, f *cli.Factory, gvk schema.GroupVersionKind) (openapiproto.Schema, error) {
	rc, err := f.RESTClient()
	if err != nil {
		return nil, err
	}
	body, err := rc.Get().AbsPath("/openapi/v2").SetHeader("Accept", openAPIV2Accept).MaxResponseBytes(maxOpenAPIV2Bytes).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v2 document: %w", err)
	}
	doc := &openapi_v2.Document{}
	if err := proto.Unmarshal(body, doc); err != nil {
		return nil, fmt.Errorf("decoding the OpenAPI v2 document: %w", err)
	}
	models, err := openapiproto.NewOpenAPIData(doc)
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v2 document's models: %w", err)
	}
	var found string
	for _, name := range models.ListModels() {
		if m := models.LookupModel(name); m != nil && cli.ExtensionNamesGVK(m.GetExtensions()[cli.GVKExtension], gvk) {
			found = name // the last one, as kubectl
		}
	}
	if found == "" {
		return nil, fmt.Errorf("couldn't find resource for %q", gvk)
	}
	return models.LookupModel(found), nil
}

// v2Explain prints the model, or the field at path in it, as kubectl's
// plaintext-openapiv2 output.
func v2Explain(w io.Writer, model openapiproto.Schema, gvk schema.GroupVersionKind, path []string, rec recursion) error {
	name := ""
	if len(path) > 0 {
		name = path[len(path)-1]
	}
	leaf, err := v2Lookup(model, path)
	if err != nil {
		return err
	}
	p := &v2Printer{w: w, gvk: gvk, rec: rec}
	p.model(leaf, name, "", nil)
	return p.err
}

// v2Lookup follows path through fields, looking through arrays, maps and
// references; a primitive or arbitrary value ends the walk wherever it is.
func v2Lookup(s openapiproto.Schema, path []string) (openapiproto.Schema, error) {
	for len(path) > 0 {
		switch x := s.(type) {
		case *openapiproto.Kind:
			sub, ok := x.Fields[path[0]]
			if !ok {
				return nil, fmt.Errorf("field %q does not exist", path[0])
			}
			s, path = sub, path[1:]
		case *openapiproto.Array:
			s = x.SubType
		case *openapiproto.Map:
			s = x.SubType
		case openapiproto.Reference:
			s = x.SubSchema()
		default:
			return s, nil
		}
	}
	return s, nil
}

// v2TypeName is how the v2 explain names a schema's type: Object for
// structured types, []T, map[string]T, the primitive's type, "" for an
// arbitrary value.
func v2TypeName(s openapiproto.Schema) string {
	switch x := s.(type) {
	case *openapiproto.Array:
		return "[]" + v2TypeName(x.SubType)
	case *openapiproto.Map:
		return "map[string]" + v2TypeName(x.SubType)
	case *openapiproto.Kind:
		return "Object"
	case *openapiproto.Primitive:
		return x.Type
	case openapiproto.Reference:
		return v2TypeName(x.SubSchema())
	}
	return ""
}

// v2Printer writes the v2 layout: lines at an indentation, descriptions
// wrapped to 80 columns.
type v2Printer struct {
	w   io.Writer
	gvk schema.GroupVersionKind
	rec recursion
	err error
}

func (p *v2Printer) line(indent int, s string) {
	if p.err != nil {
		return
	}
	if s == "" {
		_, p.err = io.WriteString(p.w, "\n")
		return
	}
	_, p.err = io.WriteString(p.w, strings.Repeat(" ", indent)+s+"\n")
}

func (p *v2Printer) wrapped(indent int, s string) {
	for _, l := range v2Wrap(s, 80-indent) {
		p.line(indent, l)
	}
}

func (p *v2Printer) header() {
	p.line(0, "KIND:     "+p.gvk.Kind)
	p.line(0, "VERSION:  "+p.gvk.GroupVersion().String()+"\n")
}

// model prints the leaf: its kind, version and descriptions (those of the
// arrays, maps and references on the way to it first), and its fields or
// its type. typ is the first type on the way (the field's own).
func (p *v2Printer) model(s openapiproto.Schema, name, typ string, descs []string) {
	switch x := s.(type) {
	case *openapiproto.Array:
		if typ == "" {
			typ = v2TypeName(x)
		}
		p.model(x.SubType, name, typ, append(descs, x.GetDescription()))
	case *openapiproto.Map:
		if typ == "" {
			typ = v2TypeName(x)
		}
		p.model(x.SubType, name, typ, append(descs, x.GetDescription()))
	case openapiproto.Reference:
		p.model(x.SubSchema(), name, typ, append(descs, x.GetDescription()))
	case *openapiproto.Kind:
		p.header()
		if typ == "" {
			typ = v2TypeName(x)
		}
		if name != "" {
			p.line(0, fmt.Sprintf("RESOURCE: %s <%s>\n", name, typ))
		}
		p.descriptions(append(descs, x.GetDescription()))
		p.line(0, "\nFIELDS:")
		if p.rec.on {
			p.tree(x, 3, 1, map[string]bool{})
		} else {
			p.fields(x, 3)
		}
	case *openapiproto.Primitive:
		p.header()
		if typ == "" {
			typ = v2TypeName(x)
		}
		p.line(0, fmt.Sprintf("FIELD:    %s <%s>\n", name, typ))
		p.descriptions(append(descs, x.GetDescription()))
	case *openapiproto.Arbitrary:
		p.header()
		p.descriptions(append(descs, x.GetDescription()))
	}
}

// descriptions prints the non-empty ones under DESCRIPTION:, a blank line
// before each but one that comes first in the list (as kubectl counts).
func (p *v2Printer) descriptions(descs []string) {
	p.line(0, "DESCRIPTION:")
	empty := true
	for i, d := range descs {
		if d == "" {
			continue
		}
		empty = false
		if i != 0 {
			p.line(0, "")
		}
		p.wrapped(5, d)
	}
	if empty {
		p.wrapped(5, "<empty>")
	}
}

// fields prints the fields of s: name, type, -required-, the description,
// a blank line.
func (p *v2Printer) fields(s openapiproto.Schema, indent int) {
	switch x := s.(type) {
	case *openapiproto.Array:
		p.fields(x.SubType, indent)
	case *openapiproto.Map:
		p.fields(x.SubType, indent)
	case openapiproto.Reference:
		p.fields(x.SubSchema(), indent)
	case *openapiproto.Kind:
		for _, k := range x.Keys() {
			v := x.Fields[k]
			required := ""
			if x.IsRequired(k) {
				required = " -required-"
			}
			p.line(indent, fmt.Sprintf("%s\t<%s>%s", k, v2TypeName(v), required))
			p.wrapped(indent+2, v.GetDescription())
			p.line(0, "")
		}
	}
}

// tree prints the field tree of s, one line per field, three more spaces
// per level, down to rec.maxDepth levels, stopping at a reference already
// on the way down.
func (p *v2Printer) tree(s openapiproto.Schema, indent, depth int, onPath map[string]bool) {
	switch x := s.(type) {
	case *openapiproto.Array:
		p.tree(x.SubType, indent, depth, onPath)
	case *openapiproto.Map:
		p.tree(x.SubType, indent, depth, onPath)
	case openapiproto.Reference:
		ref := x.Reference()
		if onPath[ref] {
			return
		}
		onPath[ref] = true
		p.tree(x.SubSchema(), indent, depth, onPath)
		delete(onPath, ref)
	case *openapiproto.Kind:
		for _, k := range x.Keys() {
			v := x.Fields[k]
			p.line(indent, fmt.Sprintf("%s\t<%s>", k, v2TypeName(v)))
			if p.rec.maxDepth > 0 && depth >= p.rec.maxDepth {
				continue
			}
			p.tree(v, indent+3, depth+1, onPath)
		}
	}
}

// v2ListItem starts a line that stays a line of its own: a numbered or
// bulleted list item.
var v2ListItem = regexp.MustCompile(`^(\d+\.?|-|\*)\s`)

// v2Wrap wraps text to width as kubectl's v2 explain does: words are
// joined into lines up to width (a longer word gets a line of its own);
// a line indented four spaces (code) is kept as is, an empty line after
// the first stays, and a line that starts a list item, or follows a word
// ending in a colon, starts a new line.
func v2Wrap(text string, width int) []string {
	var out, cur []string
	curLen := 0
	last := ""
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur, curLen, last = nil, 0, ""
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "    ") {
			flush()
			out = append(out, l)
			continue
		}
		trimmed := strings.TrimSpace(l)
		if len(out) > 0 && trimmed == "" {
			flush()
			out = append(out, "")
			continue
		}
		if strings.HasSuffix(last, ":") || trimmed == "" || v2ListItem.MatchString(trimmed) {
			flush()
		}
		for _, word := range strings.Fields(l) {
			last = word
			n := curLen + len(word)
			if len(cur) > 0 {
				n++
			}
			if len(cur) > 0 && n > width {
				flush() // forgets the word just read, as kubectl's does
				n = len(word)
			}
			cur, curLen = append(cur, word), n
		}
	}
	flush()
	return out
}
