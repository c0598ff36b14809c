package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteApplyManifests(t *testing.T) {
	dir := t.TempDir()
	if err := writeApplyManifests(dir, 1003, 50); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 50 {
		t.Fatalf("%d files", len(files))
	}
	names := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if n, ok := strings.CutPrefix(line, "  name: "); ok {
				names[n] = true
			}
		}
	}
	if len(names) != 1003 {
		t.Fatalf("%d distinct objects, want 1003", len(names))
	}
}
