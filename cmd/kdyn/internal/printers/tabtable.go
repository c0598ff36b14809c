package printers

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// The layout of kubectl's tables (cli-runtime's tab writer): columns at
// least 6 wide, 3 spaces of padding.
const (
	tabMinWidth = 6
	tabPadding  = 3
)

// TabTable lays out tab-separated lines as kubectl's tab writer does:
// Go's text/tabwriter with kubectl's settings (NewTabWriter), plus the
// RememberWidths flag of the fork kubectl uses
// (github.com/liggitt/tabwriter), which kdyn does not link.
//
// As in text/tabwriter, a column is laid out in blocks, runs of lines that
// have a tab-terminated cell in it (the last cell of a line, the text after
// its last tab, is in no column), each block as wide as its widest cell
// plus the padding. Remembering widths, no block is narrower than an
// earlier block of the same column, in this Flush or an earlier one. So a
// short row (a message with a newline in kubectl events, top node's line
// for a node without percentages) does not change the width of the rows
// after it, and a watch's later rows line up with the list's.
//
// Write collects text; Flush lays it out and writes it. A form feed ends a
// line and a vertical tab a cell, as in the tab writer. Widths are counted
// in runes, as text/tabwriter counts them.
type TabTable struct {
	out  io.Writer
	text bytes.Buffer
	// maxWidths are the widest blocks seen, by column.
	maxWidths []int
}

// NewTabTable returns a TabTable that writes to out.
func NewTabTable(out io.Writer) *TabTable { return &TabTable{out: out} }

// Write collects p; nothing is written to the output before Flush.
func (t *TabTable) Write(p []byte) (int, error) { return t.text.Write(p) }

// Flush lays out the text collected since the last Flush and writes it,
// columns at least as wide as in earlier Flushes. Text after the last
// newline is written as is, with no newline.
func (t *TabTable) Flush() error {
	text := strings.NewReplacer("\f", "\n", "\v", "\t").Replace(t.text.String())
	t.text.Reset()
	var lines [][]tabCell
	for _, l := range strings.Split(text, "\n") {
		var cells []tabCell
		for _, c := range strings.Split(l, "\t") {
			cells = append(cells, tabCell{c, utf8.RuneCountInString(c)})
		}
		lines = append(lines, cells)
	}
	l := &tabLayout{t: t, lines: lines}
	l.format(0, len(lines))
	_, err := io.WriteString(t.out, l.out.String())
	return err
}

type tabCell struct {
	text  string
	width int // in runes
}

// tabLayout is one Flush.
type tabLayout struct {
	t      *TabTable
	lines  [][]tabCell
	widths []int // the widths of the columns left of the one being laid out
	out    strings.Builder
}

// format lays out lines [line0, line1) from column len(l.widths) on: each
// block of lines with a cell in that column gets its width, and the
// columns to its right are laid out within it.
func (l *tabLayout) format(line0, line1 int) {
	column := len(l.widths)
	for this := line0; this < line1; this++ {
		if column >= len(l.lines[this])-1 {
			continue
		}
		l.write(line0, this)
		line0 = this
		width := tabMinWidth
		for ; this < line1 && column < len(l.lines[this])-1; this++ {
			width = max(width, l.lines[this][column].width+tabPadding)
		}
		width = l.t.remember(column, width, l.widths)
		l.widths = append(l.widths, width)
		l.format(line0, this)
		l.widths = l.widths[:len(l.widths)-1]
		line0 = this
	}
	l.write(line0, line1)
}

// remember returns the width of a block of column k: width, or the width
// remembered for the column if wider; it remembers the wider. widths are
// the widths of the columns left of k in this block.
func (t *TabTable) remember(k, width int, widths []int) int {
	if len(t.maxWidths) < k {
		t.maxWidths = append(t.maxWidths, widths[len(t.maxWidths):]...)
	}
	switch {
	case len(t.maxWidths) == k:
		t.maxWidths = append(t.maxWidths, width)
	case t.maxWidths[k] > width:
		width = t.maxWidths[k]
	default:
		t.maxWidths[k] = width
	}
	return width
}

// write writes lines [line0, line1), padding the cells of the columns laid
// out; the text after the last newline has no newline.
func (l *tabLayout) write(line0, line1 int) {
	for i := line0; i < line1; i++ {
		for j, c := range l.lines[i] {
			l.out.WriteString(c.text)
			if j < len(l.widths) {
				l.out.WriteString(strings.Repeat(" ", l.widths[j]-c.width))
			}
		}
		if i+1 < len(l.lines) {
			l.out.WriteByte('\n')
		}
	}
}
