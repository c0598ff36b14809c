// Command kdyn is a kubectl-compatible command-line tool for any Kubernetes
// resource, built on the kdyn library. The commands live in internal/cli.
package main

import (
	"os"

	"github.com/kdyn/kdyn/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
