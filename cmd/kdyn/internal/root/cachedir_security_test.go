package root

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

// TestCacheRootNotOursIsRefused: kdyn checks the whole discovery cache
// path, from --cache-dir down, and not only the directory that holds the
// documents (discovery/<host>, which kdyn creates itself as the current
// user). Were only that directory checked, whoever controls --cache-dir
// could rename discovery/ away after the check and put a directory of
// poisoned documents in its place. A --cache-dir owned by another user, or
// writable by everyone without the sticky bit, is refused with the same
// single warning as an unsafe leaf directory, and kdyn creates nothing in
// it. Both cases run as any user (the owner is faked, see giveAway).
func TestCacheRootNotOursIsRefused(t *testing.T) {
	srv := discoveryServer(t)
	for _, tc := range []struct {
		name, why string
		mode      fs.FileMode
		giveAway  bool
	}{
		{"owned by another user", fmt.Sprintf("owned by uid %d", otherUID()), 0o755, true},
		{"writable by everyone, not sticky", "writable by everyone without the sticky bit", 0o777, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "shared-cache")
			if err := os.Mkdir(root, tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(root, tc.mode); err != nil { // past the umask
				t.Fatal(err)
			}
			if tc.giveAway {
				giveAway(t, root)
			}
			r := clitest.Run(Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", root, "api-resources", "-o", "name")
			if !listed(r) {
				t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
			}
			var written []string
			_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && p != root {
					written = append(written, strings.TrimPrefix(p, root))
				}
				return nil
			})
			if len(written) > 0 {
				t.Errorf("kdyn wrote %v under a --cache-dir %s", written, tc.name)
			}
			if n := strings.Count(r.Stderr, "discovery disk cache disabled"); n != 1 || !strings.Contains(r.Stderr, tc.why) {
				t.Errorf("stderr has %d cache warnings, want one saying %q:\n%s", n, tc.why, r.Stderr)
			}
		})
	}
}
