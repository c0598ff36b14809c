package events

import (
	"strings"
	"unicode/utf8"
)

// The layout of kubectl's tables (cli-runtime's tab writer): columns at
// least 6 wide, 3 spaces of padding.
const (
	minWidth = 6
	padding  = 3
)

// tabTable lays out tab-separated lines as kubectl's tab writer does: Go's
// text/tabwriter with spaces, plus the RememberWidths flag of the fork
// kubectl uses (github.com/liggitt/tabwriter), which kdyn does not link.
// Each column block is as wide as its widest cell plus padding, as in
// text/tabwriter (a block is a run of lines that have a tab-terminated cell
// in that column; the last cell of a line is not in a column), and, with
// remembered widths, at least as wide as any earlier block of that column,
// in this call or an earlier one. So a message with a newline, which ends
// every block in text/tabwriter, does not change the width of the rows
// after it, and a watch's later rows line up with the list's.
type tabTable struct {
	// maxWidths are the widest blocks seen, by column.
	maxWidths []int
}

type tabCell struct {
	text  string
	width int // in runes, as text/tabwriter counts
}

// format lays out text, tab-separated cells in lines that each end with a
// newline.
func (t *tabTable) format(text string) string {
	// A form feed ends a line and a vertical tab a cell, as in the tab
	// writer.
	text = strings.NewReplacer("\f", "\n", "\v", "\t").Replace(text)
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
	return l.out.String()
}

// tabLayout is one call of format.
type tabLayout struct {
	t      *tabTable
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
		width := minWidth
		for ; this < line1 && column < len(l.lines[this])-1; this++ {
			width = max(width, l.lines[this][column].width+padding)
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
// remembered for the column if wider; it remembers the wider.
func (t *tabTable) remember(k, width int, widths []int) int {
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
