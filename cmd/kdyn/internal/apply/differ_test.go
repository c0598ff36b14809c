package apply

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// TestExternalDiffArguments: only words of letters, digits, "-" and "="
// reach the program; the rest of KUBECTL_EXTERNAL_DIFF is left out, and
// without it no directories are made.
func TestExternalDiffArguments(t *testing.T) {
	f := &cli.Factory{}
	env := map[string]string{externalDiffEnv: "colordiff -u -N --width=80 $(rm) ../x a;b"}
	d, err := newDiffer(f, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	if d.program != "colordiff" || !slices.Equal(d.args, []string{"-u", "-N", "--width=80"}) {
		t.Fatalf("program %q args %q", d.program, d.args)
	}
	if filepath.Base(d.from)[:5] != "LIVE-" || filepath.Base(d.to)[:7] != "MERGED-" {
		t.Fatalf("directories %s %s", d.from, d.to)
	}
	if err := d.add("v1.ConfigMap.ns.x", nil, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d.from, "v1.ConfigMap.ns.x")); !os.IsNotExist(err) {
		t.Fatalf("an absent side has a file (stat: %v)", err)
	}
	st, err := os.Stat(filepath.Join(d.to, "v1.ConfigMap.ns.x"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("merged side: %v %v", st, err)
	}
	d.close()
	if _, err := os.Stat(d.from); !os.IsNotExist(err) {
		t.Fatalf("close left %s (stat: %v)", d.from, err)
	}

	builtin, err := newDiffer(f, func(string) string { return "" })
	if err != nil || builtin.program != "" || builtin.from != "" {
		t.Fatalf("without %s: %+v %v", externalDiffEnv, builtin, err)
	}
}
