package cluster

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// kubectl's table layout: columns at least 6 wide, 3 spaces of padding.
const (
	tableMinWidth = 6
	tablePadding  = 3
)

// table lays out tab-terminated cells as kubectl's tab writer (cli-runtime's
// fork of text/tabwriter, github.com/liggitt/tabwriter, with its
// RememberWidths flag) does: as in text/tabwriter, a column is laid out in
// blocks, runs of lines that have a cell in it (a line's last cell, the
// text after its last tab, is in no column), each block as wide as its
// widest cell plus the padding; and, remembering widths, no block is
// narrower than an earlier block of the same column. So a short row (top
// node's line for a node without percentages) does not change the width of
// the rows after it. Write collects the text; Flush lays it out.
type table struct {
	out  io.Writer
	text bytes.Buffer
	max  []int // the widest block so far, by column
}

func newTable(out io.Writer) *table { return &table{out: out} }

// Write collects p.
func (t *table) Write(p []byte) (int, error) { return t.text.Write(p) }

// Flush writes the collected lines, laid out.
func (t *table) Flush() error {
	var rows [][]string
	for _, l := range strings.SplitAfter(t.text.String(), "\n") {
		if l != "" {
			rows = append(rows, strings.Split(l, "\t"))
		}
	}
	t.text.Reset()
	var b strings.Builder
	t.layout(&b, rows, nil)
	_, err := io.WriteString(t.out, b.String())
	return err
}

// layout writes rows, the columns left of len(widths) laid out at widths,
// laying out the next column block by block.
func (t *table) layout(b *strings.Builder, rows [][]string, widths []int) {
	col := len(widths)
	for start := 0; start < len(rows); {
		if col >= len(rows[start])-1 {
			t.write(b, rows[start], widths)
			start++
			continue
		}
		end, width := start, tableMinWidth
		for ; end < len(rows) && col < len(rows[end])-1; end++ {
			width = max(width, utf8.RuneCountInString(rows[end][col])+tablePadding)
		}
		width = t.remember(col, width, widths)
		t.layout(b, rows[start:end], append(widths, width))
		start = end
	}
}

// remember returns the width of a block of column col: width, or the
// widest earlier block's if that is wider.
func (t *table) remember(col, width int, widths []int) int {
	if len(t.max) < col {
		t.max = append(t.max, widths[len(t.max):]...)
	}
	switch {
	case len(t.max) == col:
		t.max = append(t.max, width)
	case t.max[col] > width:
		width = t.max[col]
	default:
		t.max[col] = width
	}
	return width
}

// write writes one row, its cells in laid-out columns padded to width.
func (t *table) write(b *strings.Builder, row []string, widths []int) {
	for i, cell := range row {
		b.WriteString(cell)
		if i < len(widths) {
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)))
		}
	}
}
