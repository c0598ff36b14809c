package main

import (
	"os"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

func main() {
	os.Exit(root.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
