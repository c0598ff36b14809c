package pods

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/remote"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// pod builds a pod for the rankings: node, phase, ready (with the time it
// became ready), restarts, created, deleted ("" for none).
func pod(name, node, phase string, ready bool, readyAt string, restarts int64, created, deleted string) *unstructured.Unstructured {
	status := "False"
	if ready {
		status = "True"
	}
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "creationTimestamp": created},
		"spec":     map[string]any{"nodeName": node},
		"status": map[string]any{"phase": phase,
			"conditions":        []any{map[string]any{"type": "Ready", "status": status, "lastTransitionTime": readyAt}},
			"containerStatuses": []any{map[string]any{"name": "c", "restartCount": restarts}}},
	}}
	if deleted != "" {
		p.Object["metadata"].(map[string]any)["deletionTimestamp"] = deleted
	}
	return p
}

func ranked(ord order, pods ...*unstructured.Unstructured) string {
	slices.SortStableFunc(pods, func(a, b *unstructured.Unstructured) int { return comparePods(a, b, ord) })
	var names []string
	for _, p := range pods {
		names = append(names, p.GetName())
	}
	return strings.Join(names, " ")
}

// TestRankings: logs picks kubectl's ByLogging first pod, exec, attach
// and port-forward the reverse of its ActivePods (a terminating or
// completed pod last, fewer restarts first).
func TestRankings(t *testing.T) {
	const t0, t1, t2 = "2026-12-05T10:00:00Z", "2026-12-05T10:01:00Z", "2026-12-05T10:02:00Z"
	mk := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{
			pod("pending", "", "Pending", false, "", 0, t0, ""),
			pod("evicted", "n", "Failed", false, "", 0, t0, ""),
			pod("crashing", "n", "Running", false, "", 7, t1, ""),
			pod("old-ready", "n", "Running", true, t0, 0, t0, ""),
			pod("new-ready", "n", "Running", true, t2, 0, t1, ""),
			pod("terminating", "n", "Running", true, t0, 0, t0, t2),
		}
	}
	if got, want := ranked(forAttach, mk()...), "old-ready new-ready terminating crashing evicted pending"; got != want {
		t.Errorf("exec/attach order:\n got %s\nwant %s", got, want)
	}
	// ByLogging ranks Failed with Running (not in its phase map) and
	// knows nothing of deletion
	if got, want := ranked(forLogs, mk()...), "old-ready terminating new-ready crashing evicted pending"; got != want {
		t.Errorf("logs order:\n got %s\nwant %s", got, want)
	}
}

// TestFileSpecs: cp's [[namespace/]pod:]path, as kubectl parses it.
func TestFileSpecs(t *testing.T) {
	for in, want := range map[string]fileSpec{
		"local/file": {file: "local/file"},
		"p:/tmp/x":   {pod: "p", file: "/tmp/x"},
		"ns/p:rel":   {namespace: "ns", pod: "p", file: "rel"},
		"p:":         {pod: "p"},
		"p:c:\\x":    {pod: "p", file: "c:\\x"},
		"./a:b":      {namespace: ".", pod: "a", file: "b"},
	} {
		got, err := parseFileSpec(in)
		if err != nil || got != want {
			t.Errorf("%q = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{":x", "a/b/c:x"} {
		if _, err := parseFileSpec(in); err != errFileSpec {
			t.Errorf("%q: err %v, want %v", in, err, errFileSpec)
		}
	}
}

// TestUntarKeepsInsideDest: entries that would land outside the
// destination and symbolic links are skipped with kubectl's warnings; a
// tar whose entries lack the source prefix is refused.
func TestUntarKeepsInsideDest(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(h *tar.Header, body string) {
		h.Size = int64(len(body))
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	add(&tar.Header{Name: "src/ok.txt", Typeflag: tar.TypeReg}, "ok\n")
	add(&tar.Header{Name: "src/../../escape.txt", Typeflag: tar.TypeReg}, "no\n")
	add(&tar.Header{Name: "src/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, "")
	add(&tar.Header{Name: "src/sub/", Typeflag: tar.TypeDir, Mode: 0o755}, "")
	add(&tar.Header{Name: "src/sub/deep.txt", Typeflag: tar.TypeReg}, "deep\n")
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dest := filepath.Join(root, "dest")
	var warn bytes.Buffer
	if err := untar(bytes.NewReader(buf.Bytes()), "src", dest, &warn); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"ok.txt": "ok\n", "sub/deep.txt": "deep\n"} {
		if got, err := os.ReadFile(filepath.Join(dest, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dest, "link")); !os.IsNotExist(err) {
		t.Errorf("the symbolic link was made: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "escape.txt")); !os.IsNotExist(err) {
		t.Errorf("an entry escaped the destination: %v", err)
	}
	if !strings.Contains(warn.String(), "warning: skipping symlink:") {
		t.Errorf("warnings: %q", warn.String())
	}
	if err := untar(bytes.NewReader(buf.Bytes()), "other", dest, &warn); err == nil || err.Error() != "tar contents corrupted" {
		t.Errorf("foreign prefix: %v", err)
	}
}

// TestCpRetriesResume: with --retries, a copy out whose stream breaks is
// started again from the byte after the last one read ("tail -c+N"), and
// the files come out whole; without retries the plain tar command runs
// and the break is the error; retries that run out end the copy.
func TestCpRetriesResume(t *testing.T) {
	src := t.TempDir()
	big := strings.Repeat("0123456789abcdef", 4096) // several tar records
	for name, data := range map[string]string{"a.txt": "alpha\n", "big.bin": big} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var archive bytes.Buffer
	if err := makeTar(src, "data", &archive); err != nil {
		t.Fatal(err)
	}
	full := archive.Bytes()
	// the container: every run sends at most cut bytes of what its
	// command asks for, then breaks (cut <= 0: no break)
	container := func(cut int, commands *[][]string) runner {
		return func(_ context.Context, command []string, s remote.Streams) error {
			*commands = append(*commands, command)
			from := 0
			if command[0] == "sh" {
				var n int
				if _, err := fmt.Sscanf(command[2][strings.LastIndex(command[2], "+")+1:], "%d", &n); err != nil {
					return err
				}
				from = max(n-1, 0)
			}
			part := full[from:]
			if cut > 0 && len(part) > cut {
				_, _ = s.Stdout.Write(part[:cut])
				return errors.New("connection reset")
			}
			_, err := s.Stdout.Write(part)
			return err
		}
	}
	copyOut := func(run runner, retries int) (string, string, error) {
		dest := t.TempDir()
		var out bytes.Buffer
		cmd := &cobra.Command{}
		cmd.SetOut(&out)
		cmd.SetErr(io.Discard)
		err := copyFromPod(t.Context(), run, "data", dest, retries, cmd)
		got, _ := os.ReadFile(filepath.Join(dest, "big.bin"))
		if err == nil && string(got) != big {
			t.Errorf("big.bin came out with %d bytes, want %d", len(got), len(big))
		}
		return dest, out.String(), err
	}

	var commands [][]string
	_, notes, err := copyOut(container(20000, &commands), 5)
	if err != nil {
		t.Fatalf("resumed copy: %v", err)
	}
	if want := "Resuming copy at 20000 bytes, retry 1/5\nResuming copy at 40000 bytes, retry 2/5\nResuming copy at 60000 bytes, retry 3/5\n"; !strings.HasPrefix(notes, want) {
		t.Errorf("notes:\n%s\nwant them to start with:\n%s", notes, want)
	}
	if want := []string{"sh", "-c", "tar cf - 'data' | tail -c+0"}; !slices.Equal(commands[0], want) {
		t.Errorf("first command %q, want %q", commands[0], want)
	}
	if want := []string{"sh", "-c", "tar cf - 'data' | tail -c+20001"}; !slices.Equal(commands[1], want) {
		t.Errorf("second command %q, want %q", commands[1], want)
	}

	commands = nil
	if _, notes, err = copyOut(container(0, &commands), 0); err != nil || notes != "" {
		t.Errorf("plain copy: %v, notes %q", err, notes)
	}
	if want := []string{"tar", "cf", "-", "data"}; len(commands) != 1 || !slices.Equal(commands[0], want) {
		t.Errorf("without retries ran %q, want %q", commands, want)
	}

	commands = nil
	if _, _, err = copyOut(container(20000, &commands), 0); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("a break without retries: %v", err)
	}
	// a refusal is not retried
	refused := func(_ context.Context, command []string, s remote.Streams) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("no exec"))
	}
	if _, notes, err = copyOut(refused, 5); !apierrors.IsForbidden(err) || notes != "" {
		t.Errorf("a refused copy with retries: %v, notes %q", err, notes)
	}
	commands = nil
	_, notes, err = copyOut(container(1000, &commands), 2)
	if err == nil || !strings.HasSuffix(notes, "Dropping out copy after 2 retries\n") {
		t.Errorf("retries ran out: %v, notes %q", err, notes)
	}
}

// TestPortForwardPorts: named ports are looked up in the containers, then
// the init containers, as kubectl does, and a port declared only for UDP
// is refused (port-forward carries TCP), for pods and services.
func TestPortForwardPorts(t *testing.T) {
	p := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "p"},
		"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "ports": []any{
				map[string]any{"name": "http", "containerPort": int64(8080), "protocol": "TCP"},
				map[string]any{"name": "dns", "containerPort": int64(53), "protocol": "UDP"},
				map[string]any{"name": "both-udp", "containerPort": int64(99), "protocol": "UDP"},
				map[string]any{"name": "both-tcp", "containerPort": int64(99), "protocol": "TCP"},
			}}},
			"initContainers": []any{map[string]any{"name": "init", "ports": []any{
				map[string]any{"name": "setup", "containerPort": int64(9000)},
				map[string]any{"name": "http", "containerPort": int64(1)}, // a container's name comes first
			}}},
		},
	}}
	got, err := podPorts([]string{"http", "5000:setup", ":http"}, p)
	if want := []string{"8080:8080", "5000:9000", ":8080"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("podPorts: %q, %v; want %q", got, err, want)
	}
	for spec, want := range map[string]string{
		"53": "UDP protocol is not supported for 53", "8053:dns": "UDP protocol is not supported for dns",
		"99": "", "8080": "", "setup": "", "nope": "Pod 'p' does not have a named port 'nope'",
	} {
		err := checkUDP([]string{spec}, p, nil)
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want)) {
			t.Errorf("checkUDP(pod, %s): %v, want %q", spec, err, want)
		}
	}
	svc := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "s"},
		"spec": map[string]any{"ports": []any{
			map[string]any{"name": "dns", "port": int64(53), "protocol": "UDP"},
			map[string]any{"name": "web", "port": int64(80)},
		}},
	}}
	for spec, want := range map[string]string{
		"53": "UDP protocol is not supported for 53", "dns": "UDP protocol is not supported for dns",
		"web": "", "80": "", "nope": "Service 's' does not have a named port 'nope'",
	} {
		err := checkUDP([]string{spec}, p, svc)
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want)) {
			t.Errorf("checkUDP(service, %s): %v, want %q", spec, err, want)
		}
	}
}
