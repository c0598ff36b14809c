package printers

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The -update flag may be registered by another test file of the package;
// register it only once and read it by name.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestUnifiedDiffGolden diffs each testdata/diff/NAME.from against
// NAME.to and compares the output with NAME.diff.
func TestUnifiedDiffGolden(t *testing.T) {
	froms, err := filepath.Glob(filepath.Join("testdata", "diff", "*.from"))
	if err != nil || len(froms) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	sort.Strings(froms)
	for _, fromPath := range froms {
		name := strings.TrimSuffix(filepath.Base(fromPath), ".from")
		t.Run(name, func(t *testing.T) {
			from := mustRead(t, fromPath)
			to := mustRead(t, strings.TrimSuffix(fromPath, ".from")+".to")
			var buf bytes.Buffer
			changed, err := UnifiedDiff(&buf, "live/"+name, "merged/"+name, from, to, -1)
			if err != nil {
				t.Fatal(err)
			}
			if changed != !bytes.Equal(from, to) {
				t.Errorf("changed = %v for equal=%v", changed, bytes.Equal(from, to))
			}
			golden := strings.TrimSuffix(fromPath, ".from") + ".diff"
			if updating() {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := mustRead(t, golden)
			if d := cmp.Diff(string(want), buf.String()); d != "" {
				t.Errorf("diff output (-want +got):\n%s", d)
			}
		})
	}
}

// TestUnifiedDiffMatchesGNUDiff checks the goldens' hunks against GNU
// diff -u, when it is installed (kdyn never runs it; this only checks the
// format).
func TestUnifiedDiffMatchesGNUDiff(t *testing.T) {
	gnu, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("no diff binary")
	}
	froms, _ := filepath.Glob(filepath.Join("testdata", "diff", "*.from"))
	for _, fromPath := range froms {
		toPath := strings.TrimSuffix(fromPath, ".from") + ".to"
		out, _ := exec.Command(gnu, "-u", "-N", fromPath, toPath).Output()
		var buf bytes.Buffer
		if _, err := UnifiedDiff(&buf, "a", "b", mustRead(t, fromPath), mustRead(t, toPath), -1); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(stripHeaders(string(out)), stripHeaders(buf.String())); d != "" {
			t.Errorf("%s: hunks differ from GNU diff (-gnu +kdyn):\n%s", fromPath, d)
		}
	}
	// Random texts with runs of equal lines around the 2·context boundary.
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	for iter := 0; iter < 200; iter++ {
		var a, b strings.Builder
		for i := 0; i < 30; i++ {
			line := "l" + string(rune('a'+i%26)) + "\n"
			switch rng.IntN(8) {
			case 0:
				a.WriteString(line)
			case 1:
				b.WriteString(line)
			case 2:
				a.WriteString(line)
				b.WriteString("changed\n")
			default:
				a.WriteString(line)
				b.WriteString(line)
			}
		}
		fa, fb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		os.WriteFile(fa, []byte(a.String()), 0o644)
		os.WriteFile(fb, []byte(b.String()), 0o644)
		out, _ := exec.Command(gnu, "-u", fa, fb).Output()
		var buf bytes.Buffer
		if _, err := UnifiedDiff(&buf, "a", "b", []byte(a.String()), []byte(b.String()), -1); err != nil {
			t.Fatal(err)
		}
		// GNU diff may pick another shortest script; compare hunk headers
		// only when the scripts agree in size.
		if gh, kh := hunkHeaders(string(out)), hunkHeaders(buf.String()); len(gh) != len(kh) {
			t.Fatalf("hunk count differs from GNU diff:\n%s\n---\n%s", out, buf.String())
		}
	}
}

func hunkHeaders(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "@@ ") {
			out = append(out, l)
		}
	}
	return out
}

func stripHeaders(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSplitLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a\n"}},
		{"a\n\nb", []string{"a\n", "\n", "b"}},
	} {
		if d := cmp.Diff(tc.want, SplitLines([]byte(tc.in))); d != "" {
			t.Errorf("SplitLines(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestHunkRange(t *testing.T) {
	for _, tc := range []struct {
		line, n int
		want    string
	}{
		{0, 0, "0,0"}, {4, 0, "4,0"}, {0, 1, "1"}, {9, 1, "10"}, {0, 5, "1,5"}, {6, 7, "7,7"},
	} {
		if got := hunkRange(tc.line, tc.n); got != tc.want {
			t.Errorf("hunkRange(%d, %d) = %q, want %q", tc.line, tc.n, got, tc.want)
		}
	}
}

// TestLineDiffIsShortest checks on random texts that the script rebuilds
// both texts and that its number of changes is the least possible (the
// lengths minus twice the longest common subsequence).
func TestLineDiffIsShortest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a\n", "b\n", "c\n", "d\n"}
	gen := func() []string {
		n := rng.IntN(12)
		out := make([]string, n)
		for i := range out {
			out[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return out
	}
	for iter := 0; iter < 3000; iter++ {
		a, b := gen(), gen()
		script := LineDiff(a, b)
		var ra, rb []string
		changes := 0
		for _, l := range script {
			switch l.Op {
			case DiffEqual:
				ra, rb = append(ra, l.Text), append(rb, l.Text)
			case DiffDelete:
				ra = append(ra, l.Text)
				changes++
			case DiffInsert:
				rb = append(rb, l.Text)
				changes++
			}
		}
		if !cmp.Equal(a, ra, cmp.Comparer(eqLines)) || !cmp.Equal(b, rb, cmp.Comparer(eqLines)) {
			t.Fatalf("script does not rebuild the texts:\na=%q\nb=%q\nscript=%v", a, b, script)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); changes != want {
			t.Fatalf("%d changes, shortest is %d:\na=%q\nb=%q\nscript=%v", changes, want, a, b, script)
		}
		// Within a run of changes, deletions come first.
		for i := 1; i < len(script); i++ {
			if script[i-1].Op == DiffInsert && script[i].Op == DiffDelete {
				t.Fatalf("insert before delete in %v", script)
			}
		}
	}
}

func eqLines(a, b []string) bool { return strings.Join(a, "") == strings.Join(b, "") }

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestUnifiedDiffContext(t *testing.T) {
	from := []byte("1\n2\n3\n4\n5\n")
	to := []byte("1\n2\nx\n4\n5\n")
	var buf bytes.Buffer
	if _, err := UnifiedDiff(&buf, "a", "b", from, to, 0); err != nil {
		t.Fatal(err)
	}
	want := "--- a\n+++ b\n@@ -3 +3 @@\n-3\n+x\n"
	if buf.String() != want {
		t.Errorf("context 0:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func BenchmarkLineDiff(b *testing.B) {
	var from, to []string
	for i := 0; i < 5000; i++ {
		l := strings.Repeat("x", i%50) + "\n"
		from = append(from, l)
		if i%500 == 0 {
			to = append(to, "changed\n")
		} else {
			to = append(to, l)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		LineDiff(from, to)
	}
}
