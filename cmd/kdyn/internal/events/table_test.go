package events

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/google/go-cmp/cmp"
)

// TestTabTableLikeKubectl: a message with a newline ends every column block
// in a tab writer; kubectl's remembers the widths, so the rows after it
// keep the table's widths. testdata/kubectl-breaks.txt is what kubectl
// events printed for these rows (bench/cli's fixed Events).
func TestTabTableLikeKubectl(t *testing.T) {
	rows := "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE\n" +
		"10d\tNormal\tSynced\tPod/api\théllo wörld — 日本語 ✓\n" +
		"10d (x3 over 12d)\tNormal\tScalingReplicaSet\tDeployment/db\tScaled up replica set db-7c9 to 3\n" +
		"10d\tWarning\tTie\tDeployment/db\tseen when db.1 was last\n" +
		"10d\tNormal\tPulled\tPod/web\tpulled image <nginx> & \"ok\"\n" +
		"10d\tWarning\tUnhealthy\tPod/web\tprobe failed:\nconnection refused\n" +
		"9d (x5 over 11d)\tWarning\tBackOff\tPod/web\tback-off\trestarting ^[[31mfailed^[[0m container\n"
	want, err := os.ReadFile(filepath.Join("testdata", "kubectl-breaks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var tt tabTable
	if diff := cmp.Diff(string(want), tt.format(rows)); diff != "" {
		t.Fatalf("(-kubectl +kdyn):\n%s", diff)
	}
}

// TestTabTableLikeTabwriter: without a line that ends the blocks, one call
// lays out as text/tabwriter does.
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
		tw := tabwriter.NewWriter(&want, minWidth, 4, padding, ' ', 0)
		_, _ = tw.Write([]byte(b.String()))
		_ = tw.Flush()
		var tt tabTable
		if got := tt.format(b.String()); got != want.String() {
			t.Fatalf("case %d: %q\ntabwriter:\n%s\ntabTable:\n%s", i, b.String(), want.String(), got)
		}
	}
}

// TestTabTableRemembers: a later call's columns are at least as wide as
// an earlier call's, and widen for wider cells.
func TestTabTableRemembers(t *testing.T) {
	var tt tabTable
	first := tt.format("LAST SEEN\tTYPE\tREASON\tMESSAGE\n5m (x2 over 10m)\tNormal\tPulled\tok\n")
	second := tt.format("1s\tWarning\tAVeryLongReason\tnew\n")
	third := tt.format("2s\tNormal\tShort\tnewer\n")
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
