package root

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

// BUG: only the last directory of the discovery cache path is checked
// (discovery.prepareCacheDir; its comment says the parents are checked
// too, the code does not). A --cache-dir owned by another user, or
// writable by others without the sticky bit, is used: kdyn creates
// discovery/<host> inside it as the current user, passes the check, and
// reads and writes files by path afterwards, so the owner of --cache-dir
// can rename discovery/ away after the check and put a directory of
// poisoned documents in its place (the next lookups read them). Expected:
// the same refusal and warning as for the leaf directory. A fix checks
// every directory from the cache root down (owner = current user or root,
// no group/other write unless sticky), or opens the leaf once with
// os.OpenRoot and reads and writes through it.
func TestBugCacheRootOwnedByAnotherUserIsUsed(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	srv := discoveryServer(t)
	for name, mode := range map[string]fs.FileMode{"owned by another user": 0o755, "writable by others, not sticky": 0o777} {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "shared-cache")
			if err := os.Mkdir(root, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(root, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(root, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			r := clitest.Run(Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", root, "api-resources", "-o", "name")
			if !listed(r) {
				t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
			}
			var written []string
			_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					written = append(written, strings.TrimPrefix(p, root))
				}
				return nil
			})
			if len(written) > 0 || !strings.Contains(r.Stderr, "discovery disk cache disabled") {
				t.Errorf("kdyn cached discovery under a --cache-dir %s (files %v) and warned: %v", name, written, strings.Contains(r.Stderr, "disabled"))
			}
		})
	}
}
