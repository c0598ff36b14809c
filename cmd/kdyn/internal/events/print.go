package events

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
)

type format int

const (
	formatTable format = iota
	formatJSON
	formatYAML
	formatJSONL
)

func parseFormat(o string) (format, error) {
	switch o {
	case "":
		return formatTable, nil
	case "json":
		return formatJSON, nil
	case "yaml":
		return formatYAML, nil
	case "jsonl", "ndjson":
		return formatJSONL, nil
	}
	return 0, cli.Usagef("unable to match a printer suitable for the output format %q, allowed formats are: json,jsonl,yaml", o)
}

// now is the time LAST SEEN counts from; tests fix it.
var now = time.Now

// printer writes events in one format. A list is printed once (printList);
// a watch prints batches (printEach) as they come.
type printer struct {
	w             io.Writer
	format        format
	allNamespaces bool
	noHeaders     bool
	keepManaged   bool

	headed bool
	table  *printers.TabTable // remembers column widths from batch to batch
	docs   int                // YAML documents printed
}

func newPrinter(w io.Writer, f format, o *options) *printer {
	return &printer{w: w, format: f, allNamespaces: o.allNamespaces, noHeaders: o.noHeaders, keepManaged: o.showManagedFields, table: printers.NewTabTable(w)}
}

// printList prints evs as kubectl events prints its list.
func (p *printer) printList(evs []*event) error {
	switch p.format {
	case formatTable, formatJSONL:
		return p.printEach(evs)
	case formatJSON:
		var b bytes.Buffer
		b.WriteString("{\n    \"kind\": \"EventList\",\n    \"apiVersion\": \"v1\",\n    \"metadata\": {},\n    \"items\": [")
		for i, e := range evs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
			b.Write(bytes.TrimRight(pretty.PrettyOptions(p.item(e), itemOptions), "\n"))
		}
		b.WriteString("\n    ]\n}\n")
		_, err := p.w.Write(b.Bytes())
		return err
	case formatYAML:
		var b bytes.Buffer
		b.WriteString(`{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[`)
		for i, e := range evs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(p.item(e))
		}
		b.WriteString("]}")
		y, err := yaml.JSONToYAML(b.Bytes())
		if err != nil {
			return err
		}
		_, err = p.w.Write(y)
		return err
	}
	return nil
}

// The JSON layouts of encoding/json's MarshalIndent(v, "", "    "), which
// kubectl prints, keeping the server's field order.
var (
	docOptions  = &pretty.Options{Width: -1, Indent: "    "}
	itemOptions = &pretty.Options{Width: -1, Indent: "    ", Prefix: "        "}
)

// printEach prints evs one by one: table rows (one batch, lined up), or
// one document per Event, as kubectl prints what it watches.
func (p *printer) printEach(evs []*event) error {
	if len(evs) == 0 {
		return nil
	}
	var b bytes.Buffer
	switch p.format {
	case formatTable:
		return p.rows(evs)
	case formatJSON:
		for _, e := range evs {
			b.Write(pretty.PrettyOptions(p.item(e), docOptions))
		}
	case formatYAML:
		for _, e := range evs {
			y, err := yaml.JSONToYAML(p.item(e))
			if err != nil {
				return err
			}
			if p.docs > 0 {
				b.WriteString("---\n")
			}
			p.docs++
			b.Write(y)
		}
	case formatJSONL:
		for _, e := range evs {
			b.Write(pretty.Ugly(p.item(e)))
			b.WriteByte('\n')
		}
	}
	_, err := p.w.Write(b.Bytes())
	return err
}

// rows prints evs as table rows in one batch, after the header if it is
// the first; the columns are at least as wide as in earlier batches, as
// kubectl's tab writer remembers them.
func (p *printer) rows(evs []*event) error {
	var lines []string
	if !p.headed && !p.noHeaders {
		h := "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE"
		if p.allNamespaces {
			h = "NAMESPACE\t" + h
		}
		lines = append(lines, h)
	}
	p.headed = true
	t := now()
	for _, e := range evs {
		var b strings.Builder
		if p.allNamespaces {
			b.WriteString(e.namespace + "\t")
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s/%s\t%s", interval(e, t), printers.EscapeTerminal(e.typ), printers.EscapeTerminal(e.reason), printers.EscapeTerminal(e.kind), printers.EscapeTerminal(e.name), printers.EscapeTerminal(strings.TrimSpace(e.message)))
		lines = append(lines, b.String())
	}
	for _, l := range lines {
		_, _ = io.WriteString(p.table, l+"\n")
	}
	return p.table.Flush()
}

// interval is kubectl events' LAST SEEN: the age of the last occurrence,
// with "(xN over AGE)" for a series or a repeated event.
func interval(e *event, now time.Time) string {
	first := since(e.eventTime, now)
	if e.eventTime.IsZero() {
		first = since(e.firstTimestamp, now)
	}
	switch {
	case e.series:
		return fmt.Sprintf("%s (x%d over %s)", since(e.seriesLast, now), e.seriesCount, first)
	case e.count > 1:
		return fmt.Sprintf("%s (x%d over %s)", since(e.lastTimestamp, now), e.count, first)
	}
	return first
}

func since(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

// item returns e's JSON as kubectl prints an item: the server's fields in
// the server's order (the typed order kubectl encodes), with kind and
// apiVersion first (list items come without them) and, unless
// --show-managed-fields, without metadata.managedFields.
func (p *printer) item(e *event) []byte {
	raw := e.raw
	if !p.keepManaged {
		raw = withoutManagedFields(raw)
	}
	if gjson.GetBytes(raw, "kind").Exists() {
		return raw
	}
	body := bytes.TrimLeft(raw, " \t\r\n")
	body = bytes.TrimLeft(body[1:], " \t\r\n") // after "{"
	out := []byte(`{"kind":"Event","apiVersion":"v1"`)
	if len(body) > 0 && body[0] != '}' {
		out = append(out, ',')
	}
	return append(out, body...)
}

// withoutManagedFields returns raw with metadata.managedFields cut out,
// every other member in place.
func withoutManagedFields(raw []byte) []byte {
	md := gjson.GetBytes(raw, "metadata")
	if !md.IsObject() || !md.Get("managedFields").Exists() {
		return raw
	}
	start := md.Index
	if start <= 0 || !bytes.Equal(raw[start:start+len(md.Raw)], []byte(md.Raw)) {
		return raw
	}
	var b bytes.Buffer
	b.WriteByte('{')
	md.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "managedFields" {
			return true
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(k.Raw)
		b.WriteByte(':')
		b.WriteString(v.Raw)
		return true
	})
	b.WriteByte('}')
	out := make([]byte, 0, len(raw))
	out = append(out, raw[:start]...)
	out = append(out, b.Bytes()...)
	return append(out, raw[start+len(md.Raw):]...)
}
