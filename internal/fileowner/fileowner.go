package fileowner

import (
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
)

// fakes holds the owners Fake put in place; nil when there are none.
var fakes atomic.Pointer[map[string]int]

// Of returns the uid of the user who owns the file at path, which fi
// describes (from os.Stat or os.Lstat), and false where the platform
// reports no owner. Under Fake, a path at or below a faked directory has
// that directory's owner (the deepest faked directory wins).
func Of(path string, fi fs.FileInfo) (uid int, ok bool) {
	if m := fakes.Load(); m != nil {
		if uid, ok := fakedOwner(*m, filepath.Clean(path)); ok {
			return uid, true
		}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// Fake makes Of report owners[dir] for each directory dir in owners and
// for everything below it, and the real owner elsewhere, until restore is
// called. Directories are compared as cleaned paths.
func Fake(owners map[string]int) (restore func()) {
	m := make(map[string]int, len(owners))
	for dir, uid := range owners {
		m[filepath.Clean(dir)] = uid
	}
	prev := fakes.Swap(&m)
	return func() { fakes.Store(prev) }
}

func fakedOwner(owners map[string]int, path string) (uid int, ok bool) {
	best := -1
	for dir, u := range owners {
		if (path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))) && len(dir) > best {
			best, uid = len(dir), u
		}
	}
	return uid, best >= 0
}
