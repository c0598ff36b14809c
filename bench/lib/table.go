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
	Cols  [2]string
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
	a, b := t.Cols[0], t.Cols[1]
	if a == "" && b == "" {
		a, b = "kdyn", "client-go"
	}
	fmt.Fprintf(w, "| metric | %s | %s | ratio (%s/%s) | target | result |\n", a, b, a, b)
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|")
	for _, r := range t.Rows {
		unit := ""
		if r.Unit != "" {
			unit = " " + r.Unit
		}
		ratio := ratioString(r.Ratio())
		m := r.Metric
		if r.Note != "" {
			m += " (" + r.Note + ")"
		}
		withUnit := func(v float64) string {
			if math.IsNaN(v) {
				return num(v)
			}
			return num(v) + unit
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", m, withUnit(r.Kdyn), withUnit(r.ClientGo), ratio, r.Target, r.Verdict())
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
