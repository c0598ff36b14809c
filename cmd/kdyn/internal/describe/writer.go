package describe

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// writer writes indented lines into a tabwriter laid out as kubectl's
// describe output (columns padded by 2 spaces), escaping terminal control
// characters in what it writes.
type writer struct {
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

func newWriter() *writer {
	w := &writer{}
	w.tw = tabwriter.NewWriter(&w.buf, 0, 8, 2, ' ', 0)
	return w
}

// terminalEscaper keeps an object's text from driving the terminal.
var terminalEscaper = strings.NewReplacer("\x1b", "^[", "\r", "\\r")

// write writes format at an indentation of level (two spaces each).
func (w *writer) write(level int, format string, a ...any) {
	fmt.Fprint(w.tw, terminalEscaper.Replace(strings.Repeat("  ", level)+fmt.Sprintf(format, a...)))
}

// line writes its operands and a newline, unindented.
func (w *writer) line(a ...any) { fmt.Fprint(w.tw, terminalEscaper.Replace(fmt.Sprintln(a...))) }

// String flushes and returns what was written.
func (w *writer) String() string {
	w.tw.Flush()
	return w.buf.String()
}

// flush ends the current tab-aligned block.
func (w *writer) flush() { w.tw.Flush() }

// labels writes a title and KEY=VALUE lines, sorted, aligned after a tab.
func (w *writer) labels(title string, m map[string]string) {
	w.write(0, "%s:\t", title)
	if len(m) == 0 {
		w.line("<none>")
		return
	}
	for i, k := range sortedKeys(m) {
		if i > 0 {
			w.write(0, "\t")
		}
		w.write(0, "%s=%s\n", k, m[k])
	}
}

// maxAnnotationLen is where kubectl folds a long annotation onto lines of
// its own.
const maxAnnotationLen = 140

// annotations writes annotations as kubectl does: KEY: VALUE, a long or
// multi-line value on the lines after its key (each cut at 138
// characters), the last-applied configuration left out.
func (w *writer) annotations(title string, m map[string]string) {
	w.write(0, "%s:\t", title)
	var keys []string
	for _, k := range sortedKeys(m) {
		if k != "kubectl.kubernetes.io/last-applied-configuration" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		w.line("<none>")
		return
	}
	for i, k := range keys {
		if i > 0 {
			w.write(0, "\t")
		}
		v := strings.TrimSuffix(m[k], "\n")
		if len(v)+len(k)+2 > maxAnnotationLen || strings.Contains(v, "\n") {
			w.write(0, "%s:\n", k)
			for _, s := range strings.Split(v, "\n") {
				if len(s) > maxAnnotationLen-2 {
					s = s[:maxAnnotationLen-2] + "..."
				}
				w.write(0, "\t  %s\n", s)
			}
			continue
		}
		w.write(0, "%s: %s\n", k, v)
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// since is kubectl's age of a timestamp: "<unknown>" for none.
func since(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t))
}
