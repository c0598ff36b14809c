package printers

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// DiffOp says what a DiffLine does.
type DiffOp byte

// The operations of a line diff, as unified diffs print them.
const (
	DiffEqual  DiffOp = ' '
	DiffDelete DiffOp = '-'
	DiffInsert DiffOp = '+'
)

// DiffLine is one line of an edit script. Text keeps its line ending;
// only the last line of a text may lack one.
type DiffLine struct {
	Op   DiffOp // kept, deleted or inserted
	Text string // the line
}

// DefaultDiffContext is the number of unchanged lines shown around each
// change, as in diff -u.
const DefaultDiffContext = 3

// SplitLines cuts text after each "\n". A last line without "\n" is kept
// as it is; an empty text has no lines.
func SplitLines(text []byte) []string {
	if len(text) == 0 {
		return nil
	}
	n := bytes.Count(text, []byte("\n"))
	lines := make([]string, 0, n+1)
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, string(text))
			break
		}
		lines = append(lines, string(text[:i+1]))
		text = text[i+1:]
	}
	return lines
}

// LineDiff returns a shortest edit script that turns a into b: every line
// of a and of b once, in order, as DiffEqual, DiffDelete or DiffInsert,
// with deletions before insertions where both happen at one place. It is
// Myers' O((N+M)·D) algorithm, run between the common prefix and suffix,
// so it is fast when the texts are mostly alike (D small), which is the
// case for a live object and its next version.
func LineDiff(a, b []string) []DiffLine {
	// Compare small integers instead of strings.
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)

	prefix := 0
	for prefix < len(x) && prefix < len(y) && x[prefix] == y[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(x)-prefix && suffix < len(y)-prefix && x[len(x)-1-suffix] == y[len(y)-1-suffix] {
		suffix++
	}

	out := make([]DiffLine, 0, max(len(a), len(b))+8)
	for i := 0; i < prefix; i++ {
		out = append(out, DiffLine{DiffEqual, a[i]})
	}
	ax, by := x[prefix:len(x)-suffix], y[prefix:len(y)-suffix]
	for _, e := range myers(ax, by) {
		switch e.op {
		case DiffEqual:
			out = append(out, DiffLine{DiffEqual, a[prefix+e.i]})
		case DiffDelete:
			out = append(out, DiffLine{DiffDelete, a[prefix+e.i]})
		case DiffInsert:
			out = append(out, DiffLine{DiffInsert, b[prefix+e.j]})
		}
	}
	for i := len(a) - suffix; i < len(a); i++ {
		out = append(out, DiffLine{DiffEqual, a[i]})
	}
	return out
}

// edit is one step of the script myers returns: a line index into a (for
// equal and delete) or b (for insert).
type edit struct {
	op   DiffOp
	i, j int
}

// myers computes a shortest edit script between a and b. It keeps, for
// each D, the furthest-reaching x of each diagonal k in [-D, D], and walks
// those back from the end to recover the path (O(D²) memory).
func myers(a, b []int) []edit {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil
	}
	maxD := n + m
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int // trace[d][k+d] = v[k] before round d
	var final int
	for d := 0; d <= maxD; d++ {
		snap := make([]int, 2*d+1)
		for k := -d; k <= d; k++ {
			snap[k+d] = v[off+k]
		}
		trace = append(trace, snap)
		done := false
		for k := -d; k <= d; k += 2 {
			var xs int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				xs = v[off+k+1] // down: an insertion
			} else {
				xs = v[off+k-1] + 1 // right: a deletion
			}
			ys := xs - k
			for xs < n && ys < m && a[xs] == b[ys] {
				xs++
				ys++
			}
			v[off+k] = xs
			if xs >= n && ys >= m {
				done = true
				break
			}
		}
		if done {
			final = d
			break
		}
	}

	// Walk back from (n, m), collecting edits in reverse.
	rev := make([]edit, 0, n+m)
	xs, ys := n, m
	for d := final; d > 0; d-- {
		prev := trace[d]
		at := func(k int) int { return prev[k+d] }
		k := xs - ys
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		// Where the snake of round d began: just after the move.
		sx := px
		if pk == k-1 {
			sx = px + 1
		}
		sy := sx - k
		for xs > sx && ys > sy {
			xs--
			ys--
			rev = append(rev, edit{op: DiffEqual, i: xs, j: ys})
		}
		if pk == k+1 {
			rev = append(rev, edit{op: DiffInsert, j: py})
		} else {
			rev = append(rev, edit{op: DiffDelete, i: px})
		}
		xs, ys = px, py
	}
	for xs > 0 && ys > 0 {
		xs--
		ys--
		rev = append(rev, edit{op: DiffEqual, i: xs, j: ys})
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return groupChanges(out)
}

// groupChanges orders each run of changes so that its deletions come
// before its insertions, as diff -u prints them.
func groupChanges(es []edit) []edit {
	out := make([]edit, 0, len(es))
	for i := 0; i < len(es); {
		if es[i].op == DiffEqual {
			out = append(out, es[i])
			i++
			continue
		}
		j := i
		for j < len(es) && es[j].op != DiffEqual {
			j++
		}
		for _, e := range es[i:j] {
			if e.op == DiffDelete {
				out = append(out, e)
			}
		}
		for _, e := range es[i:j] {
			if e.op == DiffInsert {
				out = append(out, e)
			}
		}
		i = j
	}
	return out
}

// UnifiedDiff writes the unified diff of from and to (as diff -u does)
// with context unchanged lines around each change (negative means
// DefaultDiffContext), under "--- fromName" and "+++ toName" headers. An
// empty text stands for a missing file, as with diff -N. It writes nothing
// and reports false when the texts are equal.
func UnifiedDiff(w io.Writer, fromName, toName string, from, to []byte, context int) (bool, error) {
	if bytes.Equal(from, to) {
		return false, nil
	}
	if context < 0 {
		context = DefaultDiffContext
	}
	script := LineDiff(SplitLines(from), SplitLines(to))
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "--- %s\n+++ %s\n", fromName, toName)
	for _, h := range hunks(script, context) {
		writeHunk(bw, script, h)
	}
	return true, bw.Flush()
}

// hunk is a range [start, end) of an edit script, with the 0-based line
// numbers in each text where it starts.
type hunk struct {
	start, end   int
	aLine, bLine int
}

// hunks groups the changes of script into hunks with context lines on
// each side; changes less than 2·context+1 equal lines apart share one.
func hunks(script []DiffLine, context int) []hunk {
	var out []hunk
	aAt := make([]int, len(script)+1) // lines of a before script[i]
	bAt := make([]int, len(script)+1)
	for i, l := range script {
		aAt[i+1], bAt[i+1] = aAt[i], bAt[i]
		if l.Op != DiffInsert {
			aAt[i+1]++
		}
		if l.Op != DiffDelete {
			bAt[i+1]++
		}
	}
	i := 0
	for i < len(script) {
		for i < len(script) && script[i].Op == DiffEqual {
			i++
		}
		if i == len(script) {
			break
		}
		start := max(0, i-context)
		end := i
		for {
			for end < len(script) && script[end].Op != DiffEqual {
				end++
			}
			// end is at an equal line (or the end); look for the next change.
			next := end
			for next < len(script) && script[next].Op == DiffEqual {
				next++
			}
			if next < len(script) && next-end <= 2*context {
				end = next
				continue
			}
			end = min(len(script), end+context)
			break
		}
		out = append(out, hunk{start: start, end: end, aLine: aAt[start], bLine: bAt[start]})
		i = end
	}
	return out
}

func writeHunk(w *bufio.Writer, script []DiffLine, h hunk) {
	aLen, bLen := 0, 0
	for _, l := range script[h.start:h.end] {
		if l.Op != DiffInsert {
			aLen++
		}
		if l.Op != DiffDelete {
			bLen++
		}
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(h.aLine, aLen), hunkRange(h.bLine, bLen))
	for _, l := range script[h.start:h.end] {
		w.WriteByte(byte(l.Op))
		w.WriteString(l.Text)
		if !strings.HasSuffix(l.Text, "\n") {
			w.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats "start,length" as diff -u does: 1-based, the length
// left out when it is 1, and the line before the hunk when it is empty.
func hunkRange(line, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", line)
	case 1:
		return fmt.Sprintf("%d", line+1)
	}
	return fmt.Sprintf("%d,%d", line+1, n)
}
