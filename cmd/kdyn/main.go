// Command kdyn is a kubectl-compatible command-line tool for any Kubernetes
// resource, built on the kdyn library. The commands live under
// cmd/kdyn/internal: root assembles them, one package per command family,
// over the shared plumbing in cli.
package main

import (
	"os"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

func main() {
	os.Exit(root.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
