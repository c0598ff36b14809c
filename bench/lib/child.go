package lib

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ChildFlag is the hidden flag of cmd/libbench that runs one measurement in
// a fresh process.
const ChildFlag = "child"

const childEnv = "KDYN_BENCH_CHILD_ARGS"

// ChildArgs are a child's parameters, passed as JSON in $KDYN_BENCH_CHILD_ARGS.
type ChildArgs struct {
	Conn      Conn   `json:"conn"`
	Namespace string `json:"namespace,omitempty"`
	Resource  string `json:"resource,omitempty"` // "configmaps" or "widgets"
	Count     int    `json:"count,omitempty"`
	Streaming bool   `json:"streaming,omitempty"`
	CacheDir  string `json:"cacheDir,omitempty"`
	// Interactive phases of informer children.
	Relist bool `json:"relist,omitempty"`
	Watch  bool `json:"watch,omitempty"`
	// Load children.
	Seconds float64 `json:"seconds,omitempty"`
	Workers int     `json:"workers,omitempty"`
	QPS     float32 `json:"qps,omitempty"`
	Burst   int     `json:"burst,omitempty"`
	// ProfileDir, when set, receives CPU and heap profiles.
	ProfileDir string `json:"profileDir,omitempty"`
	// Shard children: the ring, this member's identity, the number of
	// members and where their Leases live, and the fixed cost of one
	// reconcile (Workers reconcile concurrently).
	Ring           string  `json:"ring,omitempty"`
	Identity       string  `json:"identity,omitempty"`
	Members        int     `json:"members,omitempty"`
	LeaseNamespace string  `json:"leaseNamespace,omitempty"`
	ReconcileMs    float64 `json:"reconcileMs,omitempty"`
	// Scale children: the resources to cache ("group/version/resource",
	// group empty for the core group), and, for a sharded kdyn child, its
	// part ShardIndex of informer.SplitRanges(ShardCount).
	GVRs       []string `json:"gvrs,omitempty"`
	Compact    bool     `json:"compact,omitempty"` // InformerOptions.Compact
	ShardIndex int      `json:"shardIndex,omitempty"`
	ShardCount int      `json:"shardCount,omitempty"`
}

// childIO is how a child talks to its parent: lines on stdout (READY/RESULT
// prefixed), commands on stdin.
type childIO struct {
	in  *bufio.Scanner
	out io.Writer
	mu  sync.Mutex
}

func (c *childIO) send(kind string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.out, "%s %s\n", kind, b)
}

// wait blocks until the parent sends the line want.
func (c *childIO) wait(want string) error {
	for c.in.Scan() {
		if strings.TrimSpace(c.in.Text()) == want {
			return nil
		}
	}
	return fmt.Errorf("parent closed stdin while the child waited for %q", want)
}

// RunChild runs the child measurement name (the value of -child) and
// prints its result. It is what the re-executed binary does.
func RunChild(name string) error {
	var args ChildArgs
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &args); err != nil {
		return fmt.Errorf("child %s: bad $%s: %w", name, childEnv, err)
	}
	io := &childIO{in: bufio.NewScanner(os.Stdin), out: os.Stdout}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var res any
	var err error
	switch {
	case strings.HasPrefix(name, "disc-"):
		res, err = discoveryChild(ctx, name, args)
	case strings.HasPrefix(name, "informer-"):
		res, err = informerChild(ctx, name, args, io)
	case strings.HasPrefix(name, "load-"):
		res, err = loadChild(ctx, name, args)
	case strings.HasPrefix(name, "shard-"):
		res, err = shardChild(ctx, name, args, io)
	case strings.HasPrefix(name, "scale-"):
		res, err = scaleChild(ctx, name, args, io)
	default:
		err = fmt.Errorf("unknown child %q", name)
	}
	if err != nil {
		return fmt.Errorf("child %s: %w", name, err)
	}
	io.send("RESULT", res)
	return nil
}

// child is a running child process.
type child struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // READY lines
	result chan string // the RESULT line
	done   chan error
}

// startChild re-executes this binary with -child=name.
func startChild(ctx context.Context, name string, args ChildArgs, extraEnv ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, "-"+ChildFlag+"="+name)
	cmd.Env = append(append(os.Environ(), childEnv+"="+string(b)), extraEnv...)
	cmd.Stderr = &prefixWriter{prefix: "[" + name + "] ", w: os.Stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{name: name, cmd: cmd, stdin: stdin, lines: make(chan string, 16), result: make(chan string, 1), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			l := sc.Text()
			switch {
			case strings.HasPrefix(l, "RESULT "):
				c.result <- strings.TrimPrefix(l, "RESULT ")
			case strings.HasPrefix(l, "READY "):
				c.lines <- strings.TrimPrefix(l, "READY ")
			default:
				fmt.Fprintf(os.Stderr, "[%s] %s\n", name, l)
			}
		}
		c.done <- cmd.Wait()
	}()
	return c, nil
}

// ready waits for the next READY line and decodes it into v (may be nil).
func (c *child) ready(ctx context.Context, v any) error {
	select {
	case l := <-c.lines:
		if v != nil {
			return json.Unmarshal([]byte(l), v)
		}
		return nil
	case err := <-c.done:
		return fmt.Errorf("child %s exited before READY: %v", c.name, err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *child) tell(cmd string) error {
	_, err := fmt.Fprintln(c.stdin, cmd)
	return err
}

// finish waits for the child's result and exit.
func (c *child) finish(ctx context.Context, out any) error {
	defer c.stdin.Close()
	select {
	case l := <-c.result:
		err := <-c.done
		if err != nil {
			return fmt.Errorf("child %s: %w", c.name, err)
		}
		return json.Unmarshal([]byte(l), out)
	case err := <-c.done:
		// The reader sends the result before done: look again.
		select {
		case l := <-c.result:
			if err == nil {
				return json.Unmarshal([]byte(l), out)
			}
		default:
		}
		if err == nil {
			err = errors.New("no result")
		}
		return fmt.Errorf("child %s: %w", c.name, err)
	case <-ctx.Done():
		c.cmd.Process.Kill()
		return ctx.Err()
	}
}

// runChild runs a non-interactive child to completion.
func runChild(ctx context.Context, name string, args ChildArgs, out any, extraEnv ...string) error {
	c, err := startChild(ctx, name, args, extraEnv...)
	if err != nil {
		return err
	}
	return c.finish(ctx, out)
}

type prefixWriter struct {
	prefix string
	w      io.Writer
	mu     sync.Mutex
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			break
		}
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i])
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}
