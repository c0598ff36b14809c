package lib

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a running contender (see binContender) whose stdout and stderr
// are read line by line, and whose stdin takes commands.
type proc struct {
	name  string // the contender's, in errors
	cmd   *exec.Cmd
	start time.Time
	stdin io.WriteCloser
	// heap and profile receive the heap probe's answers (bytes; 0 for a
	// profile written).
	heap, profile chan int64
	exited        chan struct{}
	err           error // the exit status, once exited is closed

	mu     sync.Mutex
	stdout []procLine
	grown  chan struct{} // closed (and replaced) when stdout grows
	stderr []string      // the last lines

	stopOnce sync.Once
	stopErr  error
}

// procLine is a line of stdout, when it came and the process's CPU time
// then.
type procLine struct {
	at   time.Time
	cpu  time.Duration
	line string
	err  error // reading the CPU time
}

// startProc starts bin, the program of the contender name, with args and
// extra environment variables.
func startProc(ctx context.Context, name, bin string, args, env []string) (*proc, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err1 := cmd.StdoutPipe()
	stderr, err2 := cmd.StderrPipe()
	stdin, err3 := cmd.StdinPipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, stdin: stdin, heap: make(chan int64, 1), profile: make(chan int64, 1), exited: make(chan struct{}), grown: make(chan struct{})}
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var readers sync.WaitGroup
	readers.Go(func() { p.readStdout(stdout) })
	readers.Go(func() { p.readStderr(stderr) })
	go func() {
		readers.Wait()
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) readStdout(r io.Reader) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		l := procLine{at: time.Now(), line: s.Text()}
		ticks, err := processCPUTicks(strconv.Itoa(p.cmd.Process.Pid))
		l.cpu, l.err = time.Duration(ticks)*time.Second/clockTicks, err
		p.mu.Lock()
		p.stdout = append(p.stdout, l)
		close(p.grown)
		p.grown = make(chan struct{})
		p.mu.Unlock()
	}
}

func (p *proc) readStderr(r io.Reader) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		l := s.Text()
		if v, ok := strings.CutPrefix(l, "heapprobe: live="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				n = -1
			}
			p.heap <- n
		} else if _, ok := strings.CutPrefix(l, "heapprobe: profile="); ok {
			p.profile <- 0
		} else if _, ok := strings.CutPrefix(l, "heapprobe: profile error="); ok {
			p.profile <- -1
		}
		p.mu.Lock()
		p.stderr = append(p.stderr, l)
		if len(p.stderr) > 40 {
			p.stderr = p.stderr[len(p.stderr)-40:]
		}
		p.mu.Unlock()
	}
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times.
const clockTicks = 100

// waitLine waits for the first stdout line that starts with prefix among
// those after the first from lines.
func (p *proc) waitLine(ctx context.Context, from int, prefix string, timeout time.Duration) (procLine, error) {
	limit := time.After(timeout)
	for {
		p.mu.Lock()
		for _, l := range p.stdout[min(from, len(p.stdout)):] {
			if strings.HasPrefix(l.line, prefix) {
				p.mu.Unlock()
				return l, l.err
			}
		}
		from = len(p.stdout)
		grown := p.grown
		p.mu.Unlock()
		select {
		case <-grown:
		case <-p.exited:
			return procLine{}, fmt.Errorf("%s exited before a line %q: %v\n%s", p.name, prefix, p.err, p.tail())
		case <-limit:
			return procLine{}, fmt.Errorf("%s printed no line %q in %s\n%s", p.name, prefix, timeout, p.tail())
		case <-ctx.Done():
			return procLine{}, ctx.Err()
		}
	}
}

// waitSynced waits for the synced line.
func (p *proc) waitSynced(ctx context.Context, timeout time.Duration) (procLine, error) {
	return p.waitLine(ctx, 0, "synced ", timeout)
}

// request writes cmd to the process's stdin and waits (10 s at most) for
// the next stdout line that starts with reply.
func (p *proc) request(ctx context.Context, cmd, reply string) (procLine, error) {
	p.mu.Lock()
	from := len(p.stdout)
	p.mu.Unlock()
	if _, err := io.WriteString(p.stdin, cmd+"\n"); err != nil {
		return procLine{}, fmt.Errorf("%s: %w", cmd, err)
	}
	return p.waitLine(ctx, from, reply, 10*time.Second)
}

// probe sends sig and waits (10 s at most) for the heap probe's answer on
// ch.
func (p *proc) probe(sig syscall.Signal, ch chan int64) (int64, error) {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return 0, err
	}
	select {
	case n := <-ch:
		if n < 0 {
			return 0, fmt.Errorf("the heap probe failed:\n%s", p.tail())
		}
		return n, nil
	case <-p.exited:
		return 0, fmt.Errorf("exited: %v\n%s", p.err, p.tail())
	case <-time.After(10 * time.Second):
		return 0, fmt.Errorf("no answer from the heap probe in 10 s (built without -tags heapprobe?)")
	}
}

// stdoutWith returns the stdout lines that start with prefix.
func (p *proc) stdoutWith(prefix string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.stdout {
		if strings.HasPrefix(l.line, prefix) {
			out = append(out, l.line)
		}
	}
	return out
}

// tail returns the last lines of stderr.
func (p *proc) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.stderr, "\n")
}

// stop asks the process to stop (SIGTERM: the gc collectors then release
// their Lease), kills it after 30 s, and returns an error when it did not
// exit cleanly. Later calls return the first call's result.
func (p *proc) stop() error {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
			if p.err != nil {
				p.stopErr = fmt.Errorf("exit after SIGTERM: %v\n%s", p.err, p.tail())
			}
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
			p.stopErr = fmt.Errorf("still running 30 s after SIGTERM; killed\n%s", p.tail())
		}
		_ = p.stdin.Close()
	})
	return p.stopErr
}

// processRSS returns a process's resident set size (VmRSS of
// /proc/PID/status) in bytes.
func processRSS(pid int) (int64, error) {
	rss, _, err := processMemory(pid)
	return rss, err
}

// processMemory returns a process's resident set size and its peak so far
// (VmRSS and VmHWM of /proc/PID/status) in bytes.
func processMemory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	if rss, err = parseStatusBytes(b, "VmRSS"); err != nil {
		return 0, 0, err
	}
	hwm, err = parseStatusBytes(b, "VmHWM")
	return rss, hwm, err
}

// parseStatusBytes reads a field in kB (VmRSS, VmHWM) from the text of
// /proc/PID/status, in bytes.
func parseStatusBytes(status []byte, field string) (int64, error) {
	for l := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil || kb < 0 {
				return 0, fmt.Errorf("%s %q", field, strings.TrimSpace(v))
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s line", field)
}
