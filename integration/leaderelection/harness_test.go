package leaderelection_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// Short durations, so that tests see many transitions: a leader stops
// 1.5 s after its last successful renewal started; others take over 2 s
// after they saw it.
const (
	leaseDuration = 2 * time.Second
	renewDeadline = 1500 * time.Millisecond
	retryPeriod   = 300 * time.Millisecond
)

// takeoverSlack is what a takeover after a kill may exceed LeaseDuration +
// RetryPeriod by: the requests of the last renewal and of the takeover
// (a read and a write), and process scheduling on a loaded machine under
// -race.
const takeoverSlack = 250 * time.Millisecond

// candidates runs candidate processes on one Lease and collects their
// reports.
type candidates struct {
	t          *testing.T
	kubeconfig string
	lease      string // namespace/name

	mu      sync.Mutex
	seq     int
	procs   map[string]*proc
	reports []report
	starts  chan report // every "start", in order of arrival
}

// proc is one candidate process.
type proc struct {
	id       string
	cmd      *exec.Cmd
	exited   chan struct{}
	exitMono int64 // when the test saw it exit
	stderr   *lockedBuffer
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newCandidates(t *testing.T, env *testenv.Env) *candidates {
	c := &candidates{
		t:          t,
		kubeconfig: env.KubeconfigPath(testenv.Admin),
		lease:      fmt.Sprintf("default/le-%s-%d", strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())), rand.IntN(1_000_000)),
		procs:      map[string]*proc{},
		starts:     make(chan report, 1000),
	}
	t.Cleanup(c.stopAll)
	t.Cleanup(func() {
		if t.Failed() {
			c.dump()
		}
	})
	return c
}

// spawn starts one more candidate process.
func (c *candidates) spawn() *proc {
	c.t.Helper()
	c.mu.Lock()
	c.seq++
	id := fmt.Sprintf("cand-%d", c.seq)
	c.mu.Unlock()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envCandidate+"="+id,
		envKubeconfig+"="+c.kubeconfig,
		envLease+"="+c.lease,
		fmt.Sprintf("%s=%d,%d,%d", envTiming, leaseDuration, renewDeadline, retryPeriod))
	cmd.SysProcAttr = childAttr()
	p := &proc{id: id, cmd: cmd, exited: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	c.procs[id] = p
	c.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r report
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				c.t.Errorf("%s: bad report %q: %v", id, sc.Text(), err)
				continue
			}
			c.mu.Lock()
			c.reports = append(c.reports, r)
			c.mu.Unlock()
			if r.Ev == "start" {
				c.starts <- r
			}
		}
		_ = cmd.Wait()
		p.exitMono = testenv.MonoNow()
		close(p.exited)
	}()
	return p
}

// nextStart waits for the next candidate to start leading.
func (c *candidates) nextStart(within time.Duration) report {
	c.t.Helper()
	select {
	case r := <-c.starts:
		return r
	case <-time.After(within):
		c.t.Fatalf("no candidate started leading within %v", within)
		return report{}
	}
}

func (c *candidates) proc(id string) *proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[id]
}

// kill SIGKILLs p (no release: a crash) and waits for it to be gone; it
// returns when the kill was sent.
func (c *candidates) kill(p *proc) int64 {
	c.t.Helper()
	at := testenv.MonoNow()
	if err := p.cmd.Process.Kill(); err != nil {
		c.t.Fatal(err)
	}
	c.waitExit(p)
	return at
}

// terminate SIGTERMs p, which stops leading, releases the lease and exits.
func (c *candidates) terminate(p *proc) {
	c.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		c.t.Fatal(err)
	}
	c.waitExit(p)
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		c.t.Errorf("%s exited with %d after SIGTERM", p.id, code)
	}
}

func (c *candidates) waitExit(p *proc) {
	c.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		c.t.Fatalf("%s did not exit", p.id)
	}
}

// stopAll ends every candidate still running, with SIGTERM (SIGKILL if it
// does not exit).
func (c *candidates) stopAll() {
	c.mu.Lock()
	procs := make([]*proc, 0, len(c.procs))
	for _, p := range c.procs {
		procs = append(procs, p)
	}
	c.mu.Unlock()
	for _, p := range procs {
		select {
		case <-p.exited:
			continue
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
}

// interval is one term of one candidate, on the monotonic clock.
type interval struct {
	id         string
	start, end int64
	killed     bool // ended by the candidate's death, at the time the test saw it exit
}

// intervals rebuilds every candidate's terms from its own reports. Call it
// once every candidate has exited.
func (c *candidates) intervals() []interval {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	open := map[string]int64{}
	var out []interval
	for _, r := range c.reports {
		switch r.Ev {
		case "start":
			if _, ok := open[r.ID]; ok {
				c.t.Errorf("%s started leading twice without stopping", r.ID)
			}
			open[r.ID] = r.Mono
		case "stop":
			s, ok := open[r.ID]
			if !ok {
				c.t.Errorf("%s stopped leading without starting", r.ID)
				continue
			}
			delete(open, r.ID)
			out = append(out, interval{id: r.ID, start: s, end: r.Mono})
		}
	}
	for id, s := range open {
		p := c.procs[id]
		select {
		case <-p.exited:
		default:
			c.t.Fatalf("%s is still running", id)
		}
		out = append(out, interval{id: id, start: s, end: p.exitMono, killed: true})
	}
	slices.SortFunc(out, func(a, b interval) int { return cmpInt64(a.start, b.start) })
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkNoOverlap fails the test if two terms overlap, and returns the
// smallest and largest gap between one term's end and the next one's start.
func checkNoOverlap(t *testing.T, ivs []interval) (minGap, maxGap time.Duration) {
	t.Helper()
	minGap = time.Duration(1<<63 - 1)
	for i := 1; i < len(ivs); i++ {
		prev, cur := ivs[i-1], ivs[i]
		gap := time.Duration(cur.start - prev.end)
		if gap <= 0 {
			t.Errorf("two leaders at once: %s led until %v, %s from %v (overlap %v)",
				prev.id, time.Duration(prev.end), cur.id, time.Duration(cur.start), -gap)
		}
		minGap, maxGap = min(minGap, gap), max(maxGap, gap)
	}
	return minGap, maxGap
}

// dump logs every report and each candidate's stderr (its elector's logs).
func (c *candidates) dump() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, r := range c.reports {
		fmt.Fprintf(&b, "%d %s %s %s\n", r.Mono, r.ID, r.Ev, r.Err)
	}
	c.t.Logf("reports (%s):\n%s", testenv.MonoClockName, b.String())
	for id, p := range c.procs {
		s := p.stderr.String()
		if len(s) > 8000 {
			s = "…" + s[len(s)-8000:]
		}
		c.t.Logf("stderr of %s:\n%s", id, s)
	}
}
