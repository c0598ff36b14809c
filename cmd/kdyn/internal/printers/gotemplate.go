package printers

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"text/template"
)

// GoTemplatePrinter prints kubectl's -o go-template: a Go text/template
// with kubectl's functions (exists, base64decode) applied to the object
// alone, or to a List of all objects, as kubectl applies it. It holds the
// objects of a list until Finish, because the template sees them all.
type GoTemplatePrinter struct {
	w      io.Writer
	raw    string
	t      *template.Template
	single bool
	items  []any
}

// NewGoTemplatePrinter parses text. With allowMissingKeys (kubectl's
// --allow-missing-template-keys, true by default) a missing map key
// prints "<no value>"; without, it is an error.
func NewGoTemplatePrinter(w io.Writer, text string, allowMissingKeys bool) (*GoTemplatePrinter, error) {
	t, err := template.New("output").Funcs(template.FuncMap{"exists": exists, "base64decode": base64decode}).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("error parsing template %s, %v", text, err)
	}
	if allowMissingKeys {
		t.Option("missingkey=default")
	} else {
		t.Option("missingkey=error")
	}
	return &GoTemplatePrinter{w: w, raw: text, t: t}, nil
}

// Begin records whether one object is printed alone.
func (p *GoTemplatePrinter) Begin(single bool) error {
	p.single = single
	return nil
}

// Print executes the template (single) or collects the object (list).
func (p *GoTemplatePrinter) Print(it *Item) error {
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
func (p *GoTemplatePrinter) Finish() error {
	if p.single {
		return nil
	}
	items := p.items
	if items == nil {
		items = []any{}
	}
	return p.exec(map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{"resourceVersion": ""}})
}

// exec runs the template on v. On failure it writes, as kubectl does, the
// template and the data to the output before returning the error: a
// template is far easier to debug with them in front of you.
func (p *GoTemplatePrinter) exec(v any) error {
	var buf bytes.Buffer
	err := p.safeExecute(&buf, v)
	if err == nil {
		_, err = p.w.Write(buf.Bytes())
		return err
	}
	data, _ := json.Marshal(v)
	fmt.Fprintf(p.w, "Error executing template: %v. Printing more information for debugging the template:\n", err)
	fmt.Fprintf(p.w, "\ttemplate was:\n\t\t%v\n", p.raw)
	fmt.Fprintf(p.w, "\traw data was:\n\t\t%v\n", string(data))
	fmt.Fprintf(p.w, "\tobject given to template engine was:\n\t\t%+v\n\n", v)
	return fmt.Errorf("error executing template %q: %v", p.raw, err)
}

// safeExecute runs the template, turning a panic of the engine into an
// error.
func (p *GoTemplatePrinter) safeExecute(w io.Writer, v any) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("caught panic: %+v", x)
		}
	}()
	return p.t.Execute(w, v)
}

// base64decode is kubectl's template function of that name.
func base64decode(v string) (string, error) {
	data, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return "", fmt.Errorf("base64 decode failed: %v", err)
	}
	return string(data), nil
}

// exists is kubectl's template function: whether "index item i j ..."
// would find something that is not nil — each step a map (a missing key
// leads to nothing), a slice, an array or a string (an index in range).
func exists(item any, indices ...any) bool {
	v := reflect.ValueOf(item)
	for _, i := range indices {
		var isNil bool
		if v, isNil = deref(v); isNil {
			return false
		}
		key := reflect.ValueOf(i)
		switch v.Kind() {
		case reflect.Map:
			if !key.IsValid() {
				key = reflect.Zero(v.Type().Key())
			}
			if !key.Type().AssignableTo(v.Type().Key()) {
				return false
			}
			next := v.MapIndex(key)
			if !next.IsValid() {
				return false // missing: nothing there
			}
			v = next
		case reflect.Array, reflect.Slice, reflect.String:
			n, ok := asIndex(key)
			if !ok || n < 0 || n >= int64(v.Len()) {
				return false
			}
			v = v.Index(int(n))
		default:
			return false
		}
	}
	_, isNil := deref(v)
	return !isNil
}

// asIndex reads an integer index of any integer kind.
func asIndex(v reflect.Value) (int64, bool) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int64(v.Uint()), true
	}
	return 0, false
}

// deref follows pointers and empty interfaces, reporting a nil on the way
// (an invalid value counts as nil).
func deref(v reflect.Value) (reflect.Value, bool) {
	if !v.IsValid() {
		return v, true
	}
	for v.Kind() == reflect.Pointer || (v.Kind() == reflect.Interface && v.NumMethod() == 0) {
		if v.IsNil() {
			return v, true
		}
		v = v.Elem()
	}
	return v, false
}
