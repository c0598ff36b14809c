package events

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
)

// TestTabTableLikeKubectl: a message with a newline ends every column block
// in a tab writer; kubectl's remembers the widths, so the rows after it
// keep the table's widths. testdata/kubectl-breaks.txt is what kubectl
// events printed for these rows (bench/cli's fixed Events). The layout is
// printers.TabTable's, which the printer's rows use.
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
	var got strings.Builder
	tt := printers.NewTabTable(&got)
	if _, err := tt.Write([]byte(rows)); err != nil {
		t.Fatal(err)
	}
	if err := tt.Flush(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Fatalf("(-kubectl +kdyn):\n%s", diff)
	}
}
