package cli

import (
	"strings"
	"testing"
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
		r := runKdyn(full...)
		if r.code != exitUsage {
			t.Errorf("kdyn %v: exit code %d, want %d (stderr %q)", full, r.code, exitUsage, r.stderr)
		}
		if r := runKdyn(args...); r.code != exitGeneric {
			t.Errorf("kdyn %v: exit code %d, want %d without --exit-codes", args, r.code, exitGeneric)
		}
	}
}

// TestBareDryRunMessage: a bare --dry-run on patch, label and annotate
// (kubectl's deprecated spelling of --dry-run=client) is refused with a
// message that names what was given and what to use, not with the flag's
// internal default value.
func TestBareDryRunMessage(t *testing.T) {
	for _, args := range [][]string{
		{"patch", "cm", "x", "-p", "{}", "--dry-run"},
		{"label", "cm", "x", "a=b", "--dry-run"},
		{"annotate", "cm", "x", "a=b", "--dry-run"},
	} {
		r := runKdyn(append([]string{"--exit-codes"}, args...)...)
		if r.code != exitUsage || strings.Contains(r.stderr, "unchanged") || !strings.Contains(r.stderr, "--dry-run=server") {
			t.Errorf("kdyn %v: exit code %d, stderr %q; want a usage error that points to --dry-run=server", args, r.code, r.stderr)
		}
	}
}

// --exit-codes counts when the error comes before cobra parsed it: a bad
// flag before it on the command line.
func TestExitCodesFlagAfterTheError(t *testing.T) {
	if r := runKdyn("get", "pods", "--no-such-flag", "--exit-codes"); r.code != exitUsage {
		t.Errorf("exit code %d, want %d (stderr %q)", r.code, exitUsage, r.stderr)
	}
	if r := runKdyn("get", "pods", "--no-such-flag", "--exit-codes=false"); r.code != exitGeneric {
		t.Errorf("--exit-codes=false: exit code %d, want %d", r.code, exitGeneric)
	}
	if !exitCodesAsked([]string{"--exit-codes=true", "get"}) || exitCodesAsked([]string{"get", "--", "--exit-codes"}) {
		t.Error("exitCodesAsked misreads its arguments")
	}
}
