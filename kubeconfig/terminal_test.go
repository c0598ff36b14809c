package kubeconfig

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestIsTerminal(t *testing.T) {
	t.Parallel()
	f, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cases := map[string]*os.File{"regular file": f, "pipe": r, "nil": nil}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		null, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer null.Close()
		cases["/dev/null"] = null // a character device, but not a terminal
	}
	for name, f := range cases {
		if isTerminal(f) {
			t.Errorf("isTerminal(%s) = true", name)
		}
	}
}
