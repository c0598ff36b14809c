package config_test

import (
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// An unknown config subcommand is an error naming it, exit 1; config
// alone prints its help on stderr and fails, as kubectl's does.
func TestConfigUnknownSubcommand(t *testing.T) {
	r := clitest.Run(root.Main, "config", "nonsense")
	if r.Code != 1 || !strings.Contains(r.Stderr, `error: unknown command "nonsense"`) || !strings.Contains(r.Stderr, "See 'kdyn config -h' for help and examples") || r.Stdout != "" {
		t.Errorf("config nonsense: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.Run(root.Main, "config")
	if r.Code != 1 || !strings.Contains(r.Stderr, "Available Commands:") || r.Stdout != "" {
		t.Errorf("config: exit %d, stdout %q, stderr %.80q", r.Code, r.Stdout, r.Stderr)
	}
}
