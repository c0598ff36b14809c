package root

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

// TestExitCodesUsageErrors: with --exit-codes, a bad flag, a flag value
// that does not parse, a wrong number of arguments and an unknown
// subcommand are usage errors (exit code 2), as 'kdyn help exit-codes' promises; they
// are found before any request, so no server is needed.
func TestExitCodesUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"get", "pods", "--no-such-flag"},
		{"get", "pods", "--chunk-size=many"},
		{"config", "use-context"},
		{"apply", "extra-argument"},
		{"no-such-command"},
	} {
		full := append([]string{"--exit-codes"}, args...)
		r := clitest.Run(Main, full...)
		if r.Code != cli.ExitUsage {
			t.Errorf("kdyn %v: exit code %d, want %d (stderr %q)", full, r.Code, cli.ExitUsage, r.Stderr)
		}
		if r := clitest.Run(Main, args...); r.Code != cli.ExitGeneric {
			t.Errorf("kdyn %v: exit code %d, want %d without --exit-codes", args, r.Code, cli.ExitGeneric)
		}
	}
}

// TestBareDryRunMessage: a bare --dry-run on patch, label and annotate
// (kubectl's deprecated spelling of --dry-run=client) is refused with a
// message that names what was given and what to use, not with the flag's
// internal default value.
// TestDryRunFlags: the commands that write take kubectl's --dry-run, a
// bare --dry-run meaning "client", and a bad value is a usage error found
// before anything is sent.
func TestDryRunFlags(t *testing.T) {
	root, _ := NewRootCommand(cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	for _, args := range [][]string{
		{"patch", "cm", "x", "-p", "{}"},
		{"label", "cm", "x", "a=b"},
		{"annotate", "cm", "x", "a=b"},
		{"scale", "deploy", "x", "--replicas=1"},
		{"create", "configmap", "x"},
		{"create", "secret", "generic", "x"},
		{"apply", "-f", "x.yaml"},
		{"delete", "cm", "x"},
	} {
		c, _, err := root.Find(args)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if fl := c.Flags().Lookup("dry-run"); fl == nil || fl.NoOptDefVal != "client" {
			t.Errorf("kdyn %v: no --dry-run whose bare form means client", args)
			continue
		}
		r := clitest.Run(Main, append([]string{"--exit-codes", "--server", "https://127.0.0.1:1"}, append(args, "--dry-run=bogus")...)...)
		if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "bogus") {
			t.Errorf("kdyn %v --dry-run=bogus: exit code %d, stderr %q; want a usage error", args, r.Code, r.Stderr)
		}
	}
}

// --exit-codes counts when the error comes before cobra parsed it: a bad
// flag before it on the command line.
func TestExitCodesFlagAfterTheError(t *testing.T) {
	if r := clitest.Run(Main, "get", "pods", "--no-such-flag", "--exit-codes"); r.Code != cli.ExitUsage {
		t.Errorf("exit code %d, want %d (stderr %q)", r.Code, cli.ExitUsage, r.Stderr)
	}
	if r := clitest.Run(Main, "get", "pods", "--no-such-flag", "--exit-codes=false"); r.Code != cli.ExitGeneric {
		t.Errorf("--exit-codes=false: exit code %d, want %d", r.Code, cli.ExitGeneric)
	}
	if !exitCodesAsked([]string{"--exit-codes=true", "get"}) || exitCodesAsked([]string{"get", "--", "--exit-codes"}) {
		t.Error("exitCodesAsked misreads its arguments")
	}
}
