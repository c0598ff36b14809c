package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDumpOutputStaysInside: a name from the server that would leave the
// output directory (a hostile server's "../x") is refused, and nothing is
// written outside.
func TestDumpOutputStaysInside(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "dump")
	out := dumpOutput{dir: dir}
	for _, name := range []string{"../x", "ns/../../x", "/abs/x"} {
		if _, _, err := out.open(name, ".json"); err == nil || !strings.Contains(err.Error(), "leaves the output directory") {
			t.Errorf("open(%q): %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "x.json")); !os.IsNotExist(err) {
		t.Errorf("a file was written outside the directory: %v", err)
	}
	w, done, err := out.open("ns/pod/logs", ".txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("ok")); err != nil {
		t.Fatal(err)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ns", "pod", "logs.txt")); err != nil || string(b) != "ok" {
		t.Errorf("logs.txt: %q, %v", b, err)
	}
}
