package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuTimes reads the machine's total and idle jiffies from /proc/stat.
func cpuTimes() (total, idle uint64, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	if !s.Scan() {
		return 0, 0, fmt.Errorf("/proc/stat: empty")
	}
	fields := strings.Fields(s.Text())
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected %q", s.Text())
	}
	for i, v := range fields[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, err
		}
		total += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	return total, idle, nil
}

// idleOver measures the fraction of the machine's CPU left idle over d.
func idleOver(ctx context.Context, d time.Duration) (float64, error) {
	t0, i0, err := cpuTimes()
	if err != nil {
		return 0, err
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	t1, i1, err := cpuTimes()
	if err != nil {
		return 0, err
	}
	if t1 == t0 {
		return 1, nil
	}
	return float64(i1-i0) / float64(t1-t0), nil
}

// waitQuiet waits, up to maxWait, until the machine is at least minIdle
// idle over one second, and returns the last idle fraction seen (other
// processes share this machine; the benchmark cannot stop them, only avoid
// their bursts and report them).
func waitQuiet(ctx context.Context, minIdle float64, maxWait time.Duration) (float64, error) {
	deadline := time.Now().Add(maxWait)
	for {
		idle, err := idleOver(ctx, time.Second)
		if err != nil || idle >= minIdle || time.Now().After(deadline) {
			return idle, err
		}
	}
}

// loadAvg returns /proc/loadavg's first three fields.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
