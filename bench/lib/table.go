package lib

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Row is one line of a results table. Kdyn and ClientGo are raw values in
// the row's unit; NaN means not measured.
type Row struct {
	Metric   string
	Unit     string
	Kdyn     float64
	ClientGo float64
	// Target describes the goal, e.g. "≤ 0.8×" (ratio) or "= 0" (kdyn
	// value); Check decides PASS/MISS from the row. Nil Check: no verdict.
	Target string
	Check  func(r Row) bool
	Note   string
}

// Ratio returns kdyn/client-go.
func (r Row) Ratio() float64 {
	if r.ClientGo == 0 || math.IsNaN(r.ClientGo) || math.IsNaN(r.Kdyn) {
		return math.NaN()
	}
	return r.Kdyn / r.ClientGo
}

// Verdict returns PASS, MISS or "".
func (r Row) Verdict() string {
	if r.Check == nil || math.IsNaN(r.Kdyn) {
		return ""
	}
	if r.Check(r) {
		return "PASS"
	}
	return "MISS"
}

// Table is one scenario's results.
type Table struct {
	Title string
	// Cols names the two value columns (Row.Kdyn, Row.ClientGo); the zero
	// value means "kdyn" and "client-go". Scenarios that compare kdyn with
	// itself (sharded against unsharded, a figure against its reference)
	// name them.
	Cols [2]string
	// Grid, when set, is printed instead of Rows: several contenders
	// side by side.
	Grid  *Grid
	Notes []string
	Rows  []Row
	Raw   []string
}

// Add appends a row.
func (t *Table) Add(r Row) { t.Rows = append(t.Rows, r) }

// Note appends a note printed under the table.
func (t *Table) Note(format string, a ...any) { t.Notes = append(t.Notes, fmt.Sprintf(format, a...)) }

// RawLine appends a line of raw numbers.
func (t *Table) RawLine(format string, a ...any) { t.Raw = append(t.Raw, fmt.Sprintf(format, a...)) }

// Checks for rows.
func ratioAtMost(x float64) func(Row) bool { return func(r Row) bool { return r.Ratio() <= x } }
func ratioAtLeast(x float64) func(Row) bool {
	return func(r Row) bool { return r.Ratio() >= x }
}
func kdynAtMost(x float64) func(Row) bool { return func(r Row) bool { return r.Kdyn <= x } }
func both(a, b func(Row) bool) func(Row) bool {
	return func(r Row) bool { return a(r) && b(r) }
}

// Print writes the table in Markdown.
func (t *Table) Print(w io.Writer) {
	fmt.Fprintf(w, "\n### %s\n\n", t.Title)
	if t.Grid != nil {
		t.Grid.print(w)
	} else {
		t.printRows(w)
	}
	if len(t.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range t.Notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
	}
	if len(t.Raw) > 0 {
		fmt.Fprintln(w, "\nraw:")
		fmt.Fprintln(w, "```")
		for _, l := range t.Raw {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintln(w, "```")
	}
}

// printRows writes the two-column rows.
func (t *Table) printRows(w io.Writer) {
	a, b := t.Cols[0], t.Cols[1]
	if a == "" && b == "" {
		a, b = "kdyn", "client-go"
	}
	fmt.Fprintf(w, "| metric | %s | %s | ratio (%s/%s) | target | result |\n", a, b, a, b)
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|")
	for _, r := range t.Rows {
		m := r.Metric
		if r.Note != "" {
			m += " (" + r.Note + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", m, withUnit(r.Kdyn, r.Unit), withUnit(r.ClientGo, r.Unit), ratioString(r.Ratio()), r.Target, r.Verdict())
	}
}

// withUnit formats v with its unit ("n/a" without one when v is NaN; a
// factor, "×", without a space).
func withUnit(v float64, unit string) string {
	switch {
	case math.IsNaN(v) || unit == "":
		return num(v)
	case unit == "×":
		return ftoa(v, 2) + unit
	}
	return num(v) + " " + unit
}

// Grid is a table of several contenders side by side (Table.Grid, printed
// instead of Rows): each value with its ratios to the base columns, and a
// verdict column for each goal column.
type Grid struct {
	Cols  []string // the contenders, in column order
	Bases []int    // the columns the others are compared with
	Goals []int    // the columns whose goals are checked
	Rows  []GridRow
}

// GridRow is one metric of a Grid.
type GridRow struct {
	Metric string
	Unit   string
	Values []float64 // one a column; NaN: not measured
	// NoRatio leaves out the ratios to the bases (values that are ratios
	// of their own).
	NoRatio bool
	Target  string
	Goals   []Goal // all must hold for PASS
}

// Goal is one check of a goal column's value: at most Max times the value
// of the column Base, or, with Base < 0, at most Max.
type Goal struct {
	Base int
	Max  float64
}

// Ratio returns the value of column col over that of column base.
func (r GridRow) Ratio(col, base int) float64 {
	a, b := r.Values[col], r.Values[base]
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// Verdict returns PASS, MISS or "" (no goals, or not measured) for column
// col.
func (r GridRow) Verdict(col int) string {
	if len(r.Goals) == 0 || math.IsNaN(r.Values[col]) {
		return ""
	}
	for _, g := range r.Goals {
		v := r.Values[col]
		if g.Base >= 0 {
			v = r.Ratio(col, g.Base)
		}
		if !(v <= g.Max) {
			return "MISS"
		}
	}
	return "PASS"
}

func (g *Grid) print(w io.Writer) {
	var head, rule strings.Builder
	head.WriteString("| metric |")
	rule.WriteString("|---|")
	for i, c := range g.Cols {
		var of []string
		for _, b := range g.Bases {
			if b != i {
				of = append(of, "÷ "+g.Cols[b])
			}
		}
		if len(of) > 0 {
			c += " (" + strings.Join(of, " / ") + ")"
		}
		fmt.Fprintf(&head, " %s |", c)
		rule.WriteString("---:|")
	}
	head.WriteString(" target |")
	rule.WriteString("---|")
	for _, c := range g.Goals {
		fmt.Fprintf(&head, " %s |", g.Cols[c])
		rule.WriteString("---|")
	}
	fmt.Fprintln(w, head.String())
	fmt.Fprintln(w, rule.String())
	for _, r := range g.Rows {
		fmt.Fprintf(w, "| %s |", r.Metric)
		for i, v := range r.Values {
			cell := withUnit(v, r.Unit)
			var ratios []string
			for _, b := range g.Bases {
				if b != i && !r.NoRatio && !math.IsNaN(v) {
					ratios = append(ratios, ratioString(r.Ratio(i, b)))
				}
			}
			if len(ratios) > 0 {
				cell += " (" + strings.Join(ratios, " / ") + ")"
			}
			fmt.Fprintf(w, " %s |", cell)
		}
		fmt.Fprintf(w, " %s |", r.Target)
		for _, c := range g.Goals {
			fmt.Fprintf(w, " %s |", r.Verdict(c))
		}
		fmt.Fprintln(w)
	}
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func ftoa(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
func itoa(v int) string               { return strconv.Itoa(v) }

// median of a sample (NaN when empty).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fmtSample(xs []float64, prec int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = ftoa(x, prec)
	}
	return "[" + strings.Join(s, " ") + "]"
}

const mib = 1 << 20

func ratioString(q float64) string {
	switch {
	case math.IsNaN(q) || math.IsInf(q, 0):
		return "—"
	case q < 0.1:
		return strconv.FormatFloat(q, 'g', 2, 64) + "×"
	default:
		return ftoa(q, 2) + "×"
	}
}
