package apply

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
)

// externalDiffEnv names the environment variable that selects a diff
// program, as in kubectl.
const externalDiffEnv = "KUBECTL_EXTERNAL_DIFF"

// externalDiffArg is what an argument in KUBECTL_EXTERNAL_DIFF may hold
// for kdyn to pass it on (kubectl's rule): letters, digits, "-" and "=".
// Anything else (a shell metacharacter, a path) is left out.
var externalDiffArg = regexp.MustCompile(`^[a-zA-Z0-9=-]+$`)

// differ shows the differences of a diff run: by itself, as a unified
// diff per object written as the objects come, or, when
// KUBECTL_EXTERNAL_DIFF names a program, by writing every object's two
// sides into a LIVE- and a MERGED- directory and running the program once
// on the two.
type differ struct {
	f       *cli.Factory
	changed bool // the built-in diff found a difference

	program  string   // the external program; "" for the built-in diff
	args     []string // its arguments from KUBECTL_EXTERNAL_DIFF
	from, to string   // its directories
}

// newDiffer returns the differ that getenv's KUBECTL_EXTERNAL_DIFF asks
// for. Its close removes what it wrote.
func newDiffer(f *cli.Factory, getenv func(string) string) (*differ, error) {
	d := &differ{f: f}
	fields := strings.Fields(getenv(externalDiffEnv))
	if len(fields) == 0 {
		return d, nil
	}
	d.program = fields[0]
	for _, a := range fields[1:] {
		if externalDiffArg.MatchString(a) {
			d.args = append(d.args, a)
		}
	}
	var err error
	if d.from, err = os.MkdirTemp("", "LIVE-"); err != nil {
		return nil, err
	}
	if d.to, err = os.MkdirTemp("", "MERGED-"); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// add records one object's two renderings; either may be empty when the
// object does not exist on that side.
func (d *differ) add(file string, from, to []byte) error {
	if d.program == "" {
		if bytes.Equal(from, to) {
			return nil
		}
		fromName, toName := "live/"+file, "merged/"+file
		fmt.Fprintf(d.f.Streams.Out, "diff -u -N %s %s\n", fromName, toName)
		changed, err := printers.UnifiedDiff(d.f.Streams.Out, fromName, toName, from, to, printers.DefaultDiffContext)
		d.changed = d.changed || changed
		return err
	}
	for _, side := range []struct {
		dir  string
		text []byte
	}{{d.from, from}, {d.to, to}} {
		if side.text == nil {
			continue // as with diff -N, a missing file is an absent object
		}
		if err := os.WriteFile(filepath.Join(side.dir, file), side.text, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// finish runs the external program, if there is one, and returns the
// exit code of the whole diff: the program's own (0 same, 1 different,
// more an error of its own, which it has printed), or the built-in diff's.
func (d *differ) finish() (int, error) {
	if d.program == "" {
		if d.changed {
			return diffExitChanged, nil
		}
		return cli.ExitOK, nil
	}
	cmd := exec.Command(d.program, append(d.args, d.from, d.to)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, d.f.Streams.Out, d.f.Streams.ErrOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return cli.ExitOK, nil
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode(), nil
	}
	return 0, fmt.Errorf("running the diff program %q from %s: %w", d.program, externalDiffEnv, err)
}

// close removes the external program's directories.
func (d *differ) close() {
	for _, dir := range []string{d.from, d.to} {
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
	}
}
