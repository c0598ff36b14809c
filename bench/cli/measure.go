package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

// Sample is one measured execution.
type Sample struct {
	Wall   time.Duration // from exec to exit, as the caller sees it
	CPU    time.Duration // user + system time of the child
	MaxRSS int64         // peak resident set of the child, bytes (0 if unknown)
}

// Stats summarizes repeated samples by their medians.
type Stats struct {
	N      int
	Wall   time.Duration
	CPU    time.Duration
	MaxRSS int64
	// MinWall and MaxWall show the spread of the wall times.
	MinWall, MaxWall time.Duration
}

func summarize(s []Sample) Stats {
	if len(s) == 0 {
		return Stats{}
	}
	walls := make([]float64, len(s))
	cpus := make([]float64, len(s))
	rss := make([]float64, len(s))
	st := Stats{N: len(s), MinWall: s[0].Wall, MaxWall: s[0].Wall}
	for i, x := range s {
		walls[i], cpus[i], rss[i] = float64(x.Wall), float64(x.CPU), float64(x.MaxRSS)
		st.MinWall = min(st.MinWall, x.Wall)
		st.MaxWall = max(st.MaxWall, x.Wall)
	}
	st.Wall = time.Duration(median(walls))
	st.CPU = time.Duration(median(cpus))
	st.MaxRSS = int64(median(rss))
	return st
}

// median of xs (the mean of the two middle values for an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// runner executes the benchmarked binaries through the launcher (see
// bench/cli/launcher), with a fixed, minimal environment: HOME is an empty
// directory (no ~/.kube/config, no .kuberc), KUBECONFIG is unset, and no
// GOGC/GOMEMLIMIT/GODEBUG is inherited.
type runner struct {
	launcher string
	tmp      string // for the launcher's result files
	env      []string
	verbose  io.Writer // per-run lines when not nil
	n        int
}

func newRunner(launcher, tmp, home string, extra ...string) *runner {
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C", "TZ=UTC"}
	return &runner{launcher: launcher, tmp: tmp, env: append(env, extra...)}
}

// exec runs bin with args, stdout to out (an *os.File, so that the child
// writes to it directly), and returns the measured sample and its stderr.
// A non-zero exit is an error that includes stderr.
func (r *runner) exec(ctx context.Context, out *os.File, bin string, args ...string) (Sample, []byte, error) {
	return r.execEnv(ctx, out, nil, bin, args...)
}

func (r *runner) execEnv(ctx context.Context, out *os.File, env []string, bin string, args ...string) (Sample, []byte, error) {
	r.n++
	result := filepath.Join(r.tmp, fmt.Sprintf("run-%d", r.n))
	defer os.Remove(result)
	cmd := exec.CommandContext(ctx, r.launcher, append([]string{result, bin}, args...)...)
	cmd.Env = append(append([]string(nil), r.env...), env...)
	cmd.Stdout = out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return Sample{}, stderr.Bytes(), fmt.Errorf("%s %q: %w\n%s", bin, args, err, lastLines(stderr.Bytes(), 20))
	}
	s, err := readResult(result)
	if err != nil {
		return Sample{}, stderr.Bytes(), fmt.Errorf("%s %q: %w", bin, args, err)
	}
	if r.verbose != nil {
		fmt.Fprintf(r.verbose, "  %-8s %-60s wall %7.1f ms  cpu %7.1f ms  rss %6.1f MB\n",
			baseName(bin), trimArgs(args), ms(s.Wall), ms(s.CPU), mb(s.MaxRSS))
	}
	return s, stderr.Bytes(), nil
}

func readResult(p string) (Sample, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return Sample{}, fmt.Errorf("launcher result: %w", err)
	}
	var wall, cpu, rss int64
	var code int
	if _, err := fmt.Sscan(string(data), &wall, &cpu, &rss, &code); err != nil {
		return Sample{}, fmt.Errorf("launcher result %q: %w", data, err)
	}
	return Sample{Wall: time.Duration(wall), CPU: time.Duration(cpu), MaxRSS: rss}, nil
}

func lastLines(b []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// trimArgs drops the --kubeconfig and --cache-dir values from a log line.
func trimArgs(args []string) string {
	var b bytes.Buffer
	for i := 0; i < len(args); i++ {
		if (args[i] == "--kubeconfig" || args[i] == "--cache-dir") && i+1 < len(args) {
			i++
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(args[i])
	}
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mb(b int64) float64         { return float64(b) / 1e6 }
