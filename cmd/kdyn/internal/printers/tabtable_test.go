package printers

import (
	"math/rand/v2"
	"strings"
	"testing"
	"text/tabwriter"
)

// flush writes text to t and flushes it, returning what t wrote to out.
func flush(tb testing.TB, t *TabTable, out *strings.Builder, text string) string {
	tb.Helper()
	out.Reset()
	if _, err := t.Write([]byte(text)); err != nil {
		tb.Fatal(err)
	}
	if err := t.Flush(); err != nil {
		tb.Fatal(err)
	}
	return out.String()
}

// TestTabTableShortRow: a short row ends the blocks of the columns it has
// no cell in; text/tabwriter lays out the rows after it anew (narrower
// here), kubectl's tab writer keeps the widths of the rows before it. want
// is what github.com/liggitt/tabwriter with kubectl's settings
// (RememberWidths) printed for these rows, a top node table with a node
// that has no percentages.
func TestTabTableShortRow(t *testing.T) {
	rows := "NAME\tCPU(cores)\tCPU(%)\tMEMORY(bytes)\tMEMORY(%)\t\n" +
		"node-a\t250m\t12%\t1024Mi\t25%\t\n" +
		"n2\t5m\t\n" +
		"node-b\t1m\t0%\t10Mi\t1%\t\n"
	want := "NAME     CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)   \n" +
		"node-a   250m         12%      1024Mi          25%         \n" +
		"n2       5m           \n" +
		"node-b   1m           0%       10Mi            1%          \n"
	var out strings.Builder
	if got := flush(t, NewTabTable(&out), &out, rows); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	// text/tabwriter, which does not remember widths, differs after the
	// short row: the test would not tell the two apart otherwise.
	var plain strings.Builder
	tw := NewTabWriter(&plain)
	_, _ = tw.Write([]byte(rows))
	_ = tw.Flush()
	if plain.String() == want {
		t.Fatalf("text/tabwriter lays out the rows as kubectl's does:\n%s", want)
	}
}

// TestTabTableLikeTabwriter: without a line that ends the blocks, one
// Flush lays out as text/tabwriter does.
func TestTabTableLikeTabwriter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"", "a", "Warning", "x", "héllo", "日本語", "Deployment/db", "10d (x3 over 12d)", "back-off  restarting"}
	for i := range 500 {
		var b strings.Builder
		cols := 1 + r.IntN(6)
		for range 1 + r.IntN(8) {
			for c := range cols {
				if c > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(words[r.IntN(len(words))])
			}
			b.WriteByte('\n')
		}
		var want strings.Builder
		tw := tabwriter.NewWriter(&want, tabMinWidth, 4, tabPadding, ' ', 0)
		_, _ = tw.Write([]byte(b.String()))
		_ = tw.Flush()
		var out strings.Builder
		if got := flush(t, NewTabTable(&out), &out, b.String()); got != want.String() {
			t.Fatalf("case %d: %q\ntabwriter:\n%s\nTabTable:\n%s", i, b.String(), want.String(), got)
		}
	}
}

// TestTabTableRemembers: a later Flush's columns are at least as wide as
// an earlier Flush's, and widen for wider cells.
func TestTabTableRemembers(t *testing.T) {
	var out strings.Builder
	tt := NewTabTable(&out)
	first := flush(t, tt, &out, "LAST SEEN\tTYPE\tREASON\tMESSAGE\n5m (x2 over 10m)\tNormal\tPulled\tok\n")
	second := flush(t, tt, &out, "1s\tWarning\tAVeryLongReason\tnew\n")
	third := flush(t, tt, &out, "2s\tNormal\tShort\tnewer\n")
	want := "LAST SEEN          TYPE     REASON   MESSAGE\n" +
		"5m (x2 over 10m)   Normal   Pulled   ok\n"
	if first != want {
		t.Fatalf("first:\n%q\nwant\n%q", first, want)
	}
	if want := "1s                 Warning   AVeryLongReason   new\n"; second != want {
		t.Fatalf("second: %q, want %q", second, want)
	}
	if want := "2s                 Normal    Short             newer\n"; third != want {
		t.Fatalf("third: %q, want %q", third, want)
	}
}
