package root

import (
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

func TestHelpLanguage(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"LANG": "de_DE.UTF-8"}, "de_DE"},
		{map[string]string{"LANG": "de_DE.UTF8", "LC_MESSAGES": "ja_JP.UTF-8"}, "ja_JP"},
		{map[string]string{"LANG": "de_DE.UTF8", "LC_MESSAGES": "ja_JP.UTF-8", "LC_ALL": "zh_TW.UTF-8"}, "zh_TW"},
		{map[string]string{"LANG": "en_US.UTF-8"}, ""}, // English: nothing to load
		{map[string]string{"LANG": "de_DE"}, ""},       // kubectl wants LANG.ENCODING
		{map[string]string{"LANG": "C"}, ""},           //
		{map[string]string{"LANG": "xx_XX.UTF-8"}, ""}, // no catalog
		{map[string]string{"LANG": "de_DE.UTF.8"}, ""}, // two dots: kubectl's split refuses it
		{map[string]string{"LC_ALL": "fr_FR.UTF-8"}, "fr_FR"},
	} {
		got := helpLanguage(func(k string) string { return c.env[k] })
		if got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
}

// TestHelpIsTranslated: with LANG set to a language kubectl's catalogs
// have, help shows kubectl's translations of the texts kdyn shares with
// it (the catalog is read once per process, so one language is tested
// here; the kubectl suite's help function checks all of them).
func TestHelpIsTranslated(t *testing.T) {
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	t.Setenv("LANG", "de_DE.UTF-8")
	r := clitest.Run(Main, "help")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Verändere kubeconfig Dateien") || !strings.Contains(r.Stdout, "Markiere Knoten als schedulable\n") {
		t.Errorf("help: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.Run(Main, "uncordon", "--help")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "Markiere Knoten als schedulable.\n\nkdyn sets") {
		t.Errorf("uncordon --help: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// kdyn's own paragraphs, which kubectl's catalogs lack, stay English
	if !strings.Contains(r.Stdout, "so the scheduler may place new") {
		t.Errorf("uncordon --help lost kdyn's own text:\n%s", r.Stdout)
	}
}
