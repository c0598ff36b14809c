package pods

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
