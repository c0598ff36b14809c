package printers

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NamePrinter prints kubectl's -o name: "kind.group/name" per line
// ("deployment.apps/web", "configmap/settings").
type NamePrinter struct {
	w *bufio.Writer
	// Operation, when set, is appended: "configmap/x created".
	Operation string
}

// NewNamePrinter returns a NamePrinter writing to w.
func NewNamePrinter(w io.Writer) *NamePrinter { return &NamePrinter{w: bufio.NewWriter(w)} }

// KindName renders an object's kind and name the way -o name does.
func KindName(gk schema.GroupKind, name string) string {
	return strings.ToLower(gk.String()) + "/" + name
}

// Begin does nothing.
func (p *NamePrinter) Begin(bool) error { return nil }

// Print writes one line.
func (p *NamePrinter) Print(it *Item) error {
	obj, err := it.Object()
	if err != nil {
		return err
	}
	name := obj.GetName()
	if name == "" {
		name = "<unknown>" // kubectl's, for an object without a name
	}
	line := KindName(obj.GroupVersionKind().GroupKind(), name)
	if p.Operation != "" {
		line += " " + p.Operation
	}
	_, err = fmt.Fprintln(p.w, line)
	return err
}

// Flush writes buffered lines now.
func (p *NamePrinter) Flush() error { return p.w.Flush() }

// Finish flushes.
func (p *NamePrinter) Finish() error { return p.w.Flush() }
