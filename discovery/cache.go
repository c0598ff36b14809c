package discovery

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/kdyn/kdyn/internal/fileowner"
)

// DefaultTTL is how long a disk-cached discovery document is used without
// asking the server. After it, the document is revalidated with its ETag.
const DefaultTTL = 6 * time.Hour

// document is one discovery response as cached.
type document struct {
	Path        string          `json:"path"`
	ETag        string          `json:"etag,omitempty"`
	ContentType string          `json:"contentType"`
	FetchedAt   time.Time       `json:"fetchedAt"`
	Body        json.RawMessage `json:"body"`
}

// docCache keeps the latest discovery documents in memory and, when dir is
// set, on disk: one file per request path, 0600 in a 0700 directory,
// written atomically (temporary file and rename). A file that cannot be
// read or decoded is a miss, never an error.
type docCache struct {
	dir string // "" for memory only
	log logr.Logger

	mu  sync.Mutex
	mem map[string]*document
}

func newDocCache(dir string, log logr.Logger) *docCache {
	c := &docCache{log: log, mem: map[string]*document{}}
	if dir != "" {
		if err := prepareCacheDir(dir); err != nil {
			log.Info("discovery disk cache disabled", "dir", dir, "error", err)
		} else {
			c.dir = dir
		}
	}
	return c
}

// prepareCacheDir creates dir with mode 0700 and refuses a directory that
// is not safely ours: the directory or any ancestor owned by another user
// (other than root), the directory writable by group or others, or an
// ancestor writable by everyone without the sticky bit (as /tmp has). A poisoned discovery cache would redirect requests, so no
// cache is better than one someone else can write.
func prepareCacheDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	// Check what exists before creating anything inside it.
	for p := abs; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			if err := checkCacheAncestor(p, fi, p == abs); err != nil {
				return err
			}
		}
		if parent := filepath.Dir(p); parent == p {
			break
		}
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return fmt.Errorf("create cache directory: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", abs)
	}
	return checkCacheAncestor(abs, fi, true)
}

// checkCacheAncestor applies prepareCacheDir's rule to one directory.
func checkCacheAncestor(p string, fi os.FileInfo, leaf bool) error {
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", p)
	}
	if uid, ok := fileOwner(p, fi); ok && uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("cache directory %s is owned by uid %d, not by the current user (uid %d)", p, uid, os.Getuid())
	}
	perm := fi.Mode()
	switch {
	case leaf && perm.Perm()&0o022 != 0:
		return fmt.Errorf("cache directory %s is writable by group or others (mode %v); fix it with chmod 700", p, perm.Perm())
	case !leaf && perm.Perm()&0o002 != 0 && perm&os.ModeSticky == 0:
		// Group-writable ancestors are common (user private groups); a
		// world-writable one without the sticky bit lets anyone swap the
		// cache underneath.
		return fmt.Errorf("directory %s above the cache is writable by everyone without the sticky bit (mode %v)", p, perm.Perm())
	}
	return nil
}

// fileOwner returns the uid that owns the file at p, described by fi, and
// false where the platform reports none. It is a variable so that this
// package's tests may replace it; tests elsewhere (the CLI's end-to-end
// ones) give a directory away with fileowner.Fake.
var fileOwner = fileowner.Of

var unsafeFileChars = regexp.MustCompile(`[^a-zA-Z0-9._-]`)

// fileFor maps a request path to a cache file name.
func (c *docCache) fileFor(path string) string {
	name := strings.Trim(unsafeFileChars.ReplaceAllString(path, "_"), "_")
	if name == "" {
		name = "root"
	}
	if len(name) > 120 {
		sum := sha256.Sum256([]byte(path))
		name = name[:80] + "-" + hex.EncodeToString(sum[:8])
	}
	return filepath.Join(c.dir, name+".json")
}

// get returns the cached document for path: from memory, else from disk.
func (c *docCache) get(path string) *document {
	c.mu.Lock()
	d := c.mem[path]
	c.mu.Unlock()
	if d != nil || c.dir == "" {
		return d
	}
	b, err := os.ReadFile(c.fileFor(path))
	if err != nil {
		return nil
	}
	var doc document
	if err := json.Unmarshal(b, &doc); err != nil || doc.Path != path || len(doc.Body) == 0 || !json.Valid(doc.Body) {
		c.log.V(4).Info("ignoring an unreadable discovery cache file", "path", path)
		return nil
	}
	c.mu.Lock()
	c.mem[path] = &doc
	c.mu.Unlock()
	return &doc
}

// put stores d in memory and on disk. Disk errors are logged, not returned:
// the cache is an optimization.
func (c *docCache) put(d *document) {
	c.mu.Lock()
	c.mem[d.Path] = d
	c.mu.Unlock()
	if c.dir == "" {
		return
	}
	b, err := json.Marshal(d)
	if err != nil {
		return
	}
	if err := writeFileAtomic(c.fileFor(d.Path), b); err != nil {
		c.log.V(4).Info("could not write discovery cache file", "path", d.Path, "error", err)
	}
}

// expireAll marks every cached document, in memory and on disk, as past
// its TTL (keeping it and its ETag for revalidation).
func (c *docCache) expireAll() {
	c.mu.Lock()
	docs := make([]*document, 0, len(c.mem))
	for _, d := range c.mem {
		cp := *d
		cp.FetchedAt = time.Time{}
		docs = append(docs, &cp)
	}
	c.mu.Unlock()
	if c.dir != "" {
		entries, _ := os.ReadDir(c.dir)
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(c.dir, e.Name()))
			if err != nil {
				continue
			}
			var d document
			if json.Unmarshal(b, &d) != nil || d.Path == "" {
				continue
			}
			d.FetchedAt = time.Time{}
			docs = append(docs, &d)
		}
	}
	for _, d := range docs {
		c.put(d)
	}
}

// writeFileAtomic writes data to a temporary file in the same directory,
// with mode 0600, and renames it over path.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// DefaultCacheDir returns the default disk cache directory for a server:
// ~/.kube/cache/kdyn/discovery/<host>, where host is the server URL's host
// (and path) with unsafe characters replaced, as kubectl names its cache.
func DefaultCacheDir(serverHost string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("discovery: no home directory for the default cache; set a cache directory explicitly")
	}
	return filepath.Join(home, ".kube", "cache", "kdyn", "discovery", HostDirName(serverHost)), nil
}

var hostUnsafe = regexp.MustCompile(`[^a-zA-Z0-9.-]`)

// HostDirName turns a server URL or host into a directory name:
// "https://127.0.0.1:6443" → "127.0.0.1_6443".
func HostDirName(server string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(server, "https://"), "http://")
	s = strings.TrimSuffix(s, "/")
	return hostUnsafe.ReplaceAllString(s, "_")
}
