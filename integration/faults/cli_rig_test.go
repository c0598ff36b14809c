package faults_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeKubeconfig writes a kubeconfig that reaches the server through the
// proxy as the admin user, with the rig's namespace as default.
func (r *rig) writeKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := r.proxy.WriteKubeconfig(path, r.env.AdminToken(), r.ns); err != nil {
		t.Fatal(err)
	}
	return path
}

// kdynArgs prefixes args with the kubeconfig and a private cache directory.
func (r *rig) kdynArgs(t *testing.T, args ...string) []string {
	return append([]string{"--kubeconfig", r.writeKubeconfig(t), "--cache-dir", t.TempDir()}, args...)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// cliWatch is "kdyn get configmaps -w -o jsonl --output-watch-events" run
// as a subprocess through the proxy.
type cliWatch struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	mu     sync.Mutex
	lines  []string
	done   chan struct{} // closed when stdout is drained
	exit   chan error
}

func startCLIWatch(t *testing.T, r *rig) *cliWatch {
	t.Helper()
	args := r.kdynArgs(t, "get", "configmaps", "-n", r.ns, "-w", "-o", "jsonl", "--output-watch-events")
	cmd := exec.Command(kdynBin, args...)
	w := &cliWatch{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{}), exit: make(chan error, 1)}
	cmd.Stderr = w.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
		}
	}()
	go func() {
		<-w.done
		w.exit <- cmd.Wait()
	}()
	t.Cleanup(func() { w.stop(t) })
	return w
}

// stop interrupts kdyn and waits (at most 10 s) for it to exit; it
// returns the exit error. Later calls return nil.
func (w *cliWatch) stop(t *testing.T) error {
	t.Helper()
	if w.cmd.Process == nil || w.cmd.ProcessState != nil {
		return nil
	}
	_ = w.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-w.exit:
		return err
	case <-time.After(10 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exit
		return fmt.Errorf("kdyn get -w did not exit within 10s of SIGINT")
	}
}

// cliEvent is one printed line.
type cliEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string `json:"name"`
			Namespace       string `json:"namespace"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	} `json:"object"`
}

// replay rebuilds the namespace from the lines printed so far and notes
// every line that contradicts the ones before it: a version printed twice,
// a version older than one printed before, a MODIFIED or DELETED of an
// object not printed, an ADDED of one printed and not deleted.
func (w *cliWatch) replay() (st state, printed map[string]map[string]bool, problems []string, lines int) {
	w.mu.Lock()
	all := append([]string(nil), w.lines...)
	w.mu.Unlock()
	st = state{}
	printed = map[string]map[string]bool{}
	last := map[string]uint64{}
	note := func(format string, args ...any) {
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	for i, l := range all {
		var ev cliEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			note("line %d is not a JSON event: %v: %.200s", i+1, err, l)
			continue
		}
		md := ev.Object.Metadata
		key := md.Namespace + "/" + md.Name
		rv := rvNum(md.ResourceVersion)
		_, present := st[key]
		switch ev.Type {
		case "ADDED", "MODIFIED":
			if printed[key][md.ResourceVersion] {
				note("line %d: %s %s@%s printed a second time", i+1, ev.Type, key, md.ResourceVersion)
			}
			if rv < last[key] {
				note("line %d: %s %s@%s after @%d", i+1, ev.Type, key, md.ResourceVersion, last[key])
			}
			if ev.Type == "ADDED" && present {
				note("line %d: ADDED %s@%s, which is printed and not deleted", i+1, key, md.ResourceVersion)
			}
			if ev.Type == "MODIFIED" && !present {
				note("line %d: MODIFIED %s@%s, which is not printed", i+1, key, md.ResourceVersion)
			}
			if printed[key] == nil {
				printed[key] = map[string]bool{}
			}
			printed[key][md.ResourceVersion] = true
			st[key] = version{RV: md.ResourceVersion, V: ev.Object.Data["v"]}
		case "DELETED":
			if !present {
				note("line %d: DELETED %s@%s, which is not printed", i+1, key, md.ResourceVersion)
			}
			delete(st, key)
		default:
			note("line %d: event type %q", i+1, ev.Type)
		}
		if rv > last[key] {
			last[key] = rv
		}
	}
	return st, printed, problems, len(all)
}

// convergeCLI waits until the state rebuilt from the printed lines equals
// the server, and fails on any contradicting line.
func convergeCLI(t *testing.T, r *rig, w *cliWatch, within time.Duration) {
	t.Helper()
	eventually(t, within, "the state rebuilt from kdyn get -w lines equals the server", func() string {
		want, err := r.serverState(t.Context())
		if err != nil {
			return err.Error()
		}
		got, _, _, n := w.replay()
		if d := cmp.Diff(want, got); d != "" {
			return fmt.Sprintf("after %d lines (-server +lines):\n%s\nstderr:\n%s", n, d, w.stderr.String())
		}
		return ""
	})
	if _, _, problems, _ := w.replay(); len(problems) > 0 {
		t.Errorf("kdyn get -w printed contradicting lines:\n%s", strings.Join(problems, "\n"))
	}
}

// interruptions counts kdyn's "watch of ... interrupted, resuming" lines.
func (w *cliWatch) interruptions() int {
	return strings.Count(w.stderr.String(), "interrupted, resuming")
}

// runKdyn runs kdyn once through the proxy and returns its output.
func runKdyn(ctx context.Context, t *testing.T, r *rig, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, kdynBin, r.kdynArgs(t, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run kdyn %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}
