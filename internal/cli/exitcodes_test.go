package cli

import "testing"

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
