package cli

import (
	"github.com/spf13/cobra"
)

// DryRunMode is what --dry-run asks for.
type DryRunMode int

const (
	// DryRunNone writes for real.
	DryRunNone DryRunMode = iota
	// DryRunClient prints what would be sent and sends no write.
	DryRunClient
	// DryRunServer sends every write with dryRun=All: the server checks,
	// admits and answers, and stores nothing.
	DryRunServer
)

// DryRunFlag is one command's --dry-run flag.
type DryRunFlag struct {
	value string
	// client: the command has a client-side dry run.
	client bool
}

// AddDryRunFlag adds kubectl's --dry-run flag to cmd. withClient says
// whether the command has a client-side dry run (the manifest commands);
// the others refuse "client" and point to "server", the faithful one. A
// bare --dry-run means "client", as in kubectl.
func AddDryRunFlag(cmd *cobra.Command, withClient bool) *DryRunFlag {
	f := &DryRunFlag{client: withClient}
	usage := `Must be "none" or "server". With "server", the request is sent with dryRun=All: the server validates and admits it, answers with the result, and persists nothing.`
	if withClient {
		usage = `"none", "server" (the server checks and answers but stores nothing) or "client" (print what would be sent, send nothing that changes the cluster).`
	}
	cmd.Flags().StringVar(&f.value, "dry-run", "none", usage)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
	return f
}

// Mode returns the mode the flag asks for, or a usage error.
func (f *DryRunFlag) Mode() (DryRunMode, error) { return parseDryRun(f.value, f.client) }

// parseDryRun parses a --dry-run value. "true" and "false", kubectl's old
// spellings of "client" and "none", are accepted where "client" is.
func parseDryRun(s string, withClient bool) (DryRunMode, error) {
	switch s {
	case "", "none":
		return DryRunNone, nil
	case "server":
		return DryRunServer, nil
	}
	if !withClient {
		if s == "client" {
			return DryRunNone, Usagef("--dry-run=client is not supported by kdyn: use --dry-run=server, which the server validates and admits without persisting")
		}
		return DryRunNone, Usagef("Invalid dry-run value (%s). Must be \"none\" or \"server\".", s)
	}
	switch s {
	case "false":
		return DryRunNone, nil
	case "client", "true":
		return DryRunClient, nil
	}
	return DryRunNone, Usagef(`invalid --dry-run value %q: must be "none", "server" or "client"`, s)
}

// Suffix is what kubectl appends to the operation it prints.
func (d DryRunMode) Suffix() string {
	switch d {
	case DryRunClient:
		return " (dry run)"
	case DryRunServer:
		return " (server dry run)"
	}
	return ""
}
