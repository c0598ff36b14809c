package fileowner_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kdyn/kdyn/internal/fileowner"
)

func TestOf(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	owner := func(p string) int {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		uid, ok := fileowner.Of(p, fi)
		if !ok {
			t.Fatalf("no owner for %s", p)
		}
		return uid
	}
	me := os.Getuid()
	if got := owner(sub); got != me {
		t.Fatalf("owner of a directory this test made = %d, want the current user %d", got, me)
	}

	restore := fileowner.Fake(map[string]int{dir: 4001, filepath.Join(dir, "a") + "/": 4002})
	for _, tc := range []struct {
		path string
		want int
	}{
		{dir, 4001},
		{filepath.Join(dir, "a"), 4002}, // the deepest faked directory wins, its key cleaned
		{sub, 4002},
		{filepath.Dir(dir), me}, // above the fakes: the real owner
	} {
		if got := owner(tc.path); got != tc.want {
			t.Errorf("faked owner of %s = %d, want %d", tc.path, got, tc.want)
		}
	}
	restore()
	if got := owner(sub); got != me {
		t.Errorf("owner after restore = %d, want %d", got, me)
	}

	if _, ok := fileowner.Of("/nowhere", fakeInfo{}); ok {
		t.Error("an owner for a FileInfo that reports none")
	}
}

// fakeInfo is a FileInfo without a platform owner.
type fakeInfo struct{}

func (fakeInfo) Name() string       { return "nowhere" }
func (fakeInfo) Size() int64        { return 0 }
func (fakeInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o700 }
func (fakeInfo) ModTime() time.Time { return time.Time{} }
func (fakeInfo) IsDir() bool        { return true }
func (fakeInfo) Sys() any           { return nil }
