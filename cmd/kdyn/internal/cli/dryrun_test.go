package cli

import (
	"errors"
	"strings"
	"testing"
)

func TestParseDryRun(t *testing.T) {
	for _, tc := range []struct {
		in         string
		withClient bool
		want       DryRunMode
		wantErr    string // part of the usage error; "" for none
	}{
		{"", true, DryRunNone, ""},
		{"none", true, DryRunNone, ""},
		{"false", true, DryRunNone, ""},
		{"client", true, DryRunClient, ""},
		{"true", true, DryRunClient, ""},
		{"server", true, DryRunServer, ""},
		{"all", true, DryRunNone, `invalid --dry-run value "all": must be "none", "server" or "client"`},

		// Commands without a client-side dry run (patch, label, annotate).
		{"", false, DryRunNone, ""},
		{"none", false, DryRunNone, ""},
		{"server", false, DryRunServer, ""},
		{"client", false, DryRunNone, "--dry-run=client is not supported by kdyn: use --dry-run=server"},
		{"true", false, DryRunNone, `Invalid dry-run value (true). Must be "none" or "server".`},
		{"unchanged", false, DryRunNone, `Invalid dry-run value (unchanged)`},
	} {
		got, err := parseDryRun(tc.in, tc.withClient)
		var ue *UsageError
		switch {
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("parseDryRun(%q, %v) = %v, %v; want %v", tc.in, tc.withClient, got, err, tc.want)
		case tc.wantErr != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("parseDryRun(%q, %v) = %v, %v; want a usage error with %q", tc.in, tc.withClient, got, err, tc.wantErr)
		}
	}
	if DryRunServer.Suffix() != " (server dry run)" || DryRunClient.Suffix() != " (dry run)" || DryRunNone.Suffix() != "" {
		t.Error("dry-run suffixes")
	}
}
