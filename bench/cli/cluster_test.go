package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// toolName makes kdyn's hint name kubectl, as kubectl's names itself: the
// only word of cluster-info's output that differs by design.
func toolName(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("'kdyn cluster-info dump'"), []byte("'kubectl cluster-info dump'"))
}

// TestClusterInfoMatchesKubectl: cluster-info prints what kubectl prints,
// the tool's name aside: the control plane, the labelled services of
// kube-system (none here) or of -n's namespace (proxy paths, load
// balancers), and the server's refusal to a user who may not list them.
func TestClusterInfoMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	svcs := `apiVersion: v1
kind: Service
metadata: {name: dns, labels: {kubernetes.io/cluster-service: "true", kubernetes.io/name: KubeDNS}}
spec: {ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53}]}
---
apiVersion: v1
kind: Service
metadata: {name: secure, labels: {kubernetes.io/cluster-service: "true"}}
spec: {ports: [{name: web, port: 8443}, {name: https, port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: headless, labels: {kubernetes.io/cluster-service: "true"}}
spec: {clusterIP: None}
---
apiVersion: v1
kind: Service
metadata: {name: lb, labels: {kubernetes.io/cluster-service: "true"}}
spec: {type: LoadBalancer, ports: [{name: a, port: 80}, {name: b, port: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: other}
spec: {ports: [{port: 80}]}
`
	if r := p.kubectl(t, svcs, "create", "-n", ns, "-f", "-"); r.code != 0 {
		t.Fatalf("create services: %s", r.stderr)
	}
	if r := p.kubectl(t, "", "patch", "service", "lb", "-n", ns, "--subresource=status", "--type=merge",
		"-p", `{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.7"},{"hostname":"ignored.example"}]}}}`); r.code != 0 {
		t.Fatalf("patch lb status: %s", r.stderr)
	}
	p.check(t, same{args: []string{"cluster-info"}, stderr: true, norm: toolName})
	p.check(t, same{args: []string{"cluster-info", "-n", ns}, stderr: true, norm: toolName})
	p.check(t, same{args: []string{"cluster-info", "extra", "args"}, stderr: true, norm: toolName})
	nobody := newPair(t, env, testenv.Nobody)
	nobody.check(t, same{args: []string{"cluster-info"}, stderr: true, norm: toolName})
}

// TestClusterTopMatchesKubectl: top node and top pod fail as kubectl's do
// on a control plane without the metrics API, and refuse the same flags
// first.
func TestClusterTopMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	for _, args := range [][]string{
		{"top", "node"},
		{"top", "nodes", "-l", "pool=x", "--sort-by=memory", "--show-capacity"},
		{"top", "pod"},
		{"top", "pod", "-A", "--containers", "--sum"},
		{"top", "po", "x", "--field-selector", "metadata.name=x"},
		{"top", "node", "--sort-by=disk"},
		{"top", "pod", "-l", "a in ((", "--sort-by=cpu"},
	} {
		p.check(t, same{args: args, stderr: true})
	}
}

// dumpVolatile are the lines of a dump that depend on when it ran: the
// lists' resourceVersions.
var dumpVolatile = regexp.MustCompile(`(?m)^(\s*"?resourceVersion"?:\s*).*$`)

// TestClusterInfoDumpMatchesKubectl: cluster-info dump of a fresh
// namespace (a pod that runs nowhere, a service, a deployment) prints
// kubectl's lists, byte for byte but for the lists' resourceVersions, in
// json, yaml and templates, to standard output and to a directory; and
// kubectl's refusals of the outputs it does not take.
func TestClusterInfoDumpMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	objs := `apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: p}, annotations: {note: "<b>&amp;</b>"}}
spec:
  initContainers: [{name: setup, image: busybox}]
  containers: [{name: app, image: busybox, args: ["--x=1"]}, {name: side, image: busybox}]
---
apiVersion: v1
kind: Service
metadata: {name: s}
spec: {ports: [{port: 80}], selector: {app: p}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`
	if r := p.kubectl(t, objs, "create", "-n", ns, "-f", "-"); r.code != 0 {
		t.Fatalf("create: %s", r.stderr)
	}
	norm := func(b []byte) []byte { return dumpVolatile.ReplaceAll(b, []byte("${1}X")) }
	for _, args := range [][]string{
		{"cluster-info", "dump", "-o", "json", "--namespaces", ns},
		{"cluster-info", "dump", "--namespaces", ns + ",default"},
		{"cluster-info", "dump", "-o", "yaml", "--namespaces", ns, "--show-managed-fields"},
		{"cluster-info", "dump", "--namespaces", ns, "--template", "{{.kind}}:{{range .items}} {{.metadata.name}}{{end}}\n"},
		{"cluster-info", "dump", "--namespaces", ns, "-o", "go-template={{.kind}} {{.metadata.resourceVersion | printf \"%.0s\"}}\n", "--output-directory=-"},
	} {
		p.check(t, same{args: args, stderr: true, norm: norm})
	}
	// kubectl's one JSONPath printer fails on the list after one whose
	// range was empty (the range's state stays behind): so does kdyn's,
	// after the same output (the error's words are kdyn's own).
	p.check(t, same{args: []string{"cluster-info", "dump", "-n", ns, "-o", "jsonpath={.kind}{range .items[*]}{' '}{.metadata.name}{end}{'\\n'}"}})
	for _, args := range [][]string{
		{"cluster-info", "dump", "-o", "name", "--namespaces", ns},
		{"cluster-info", "dump", "-o", "wide", "--namespaces", ns},
		{"cluster-info", "dump", "-o", "go-template", "--namespaces", ns},
		{"cluster-info", "dump", "--pod-running-timeout=-1s", "--namespaces", ns},
	} {
		p.check(t, same{args: args, stderr: true})
	}

	// To a directory: the same tree, file for file.
	for _, format := range []string{"json", "yaml"} {
		kdir, ddir := filepath.Join(t.TempDir(), "kubectl"), filepath.Join(t.TempDir(), "kdyn")
		args := []string{"cluster-info", "dump", "-o", format, "--namespaces", ns, "--output-directory"}
		k := p.kubectl(t, "", append(args, kdir)...)
		d := p.kdyn(t, "", append(args, ddir)...)
		if k.code != 0 || d.code != 0 || !bytes.Equal(bytes.ReplaceAll(d.stdout, []byte(ddir), []byte("DIR")), bytes.ReplaceAll(k.stdout, []byte(kdir), []byte("DIR"))) {
			t.Fatalf("dump -o %s to a directory: kubectl exit %d %q %q, kdyn exit %d %q %q", format, k.code, k.stdout, k.stderr, d.code, d.stdout, d.stderr)
		}
		kfiles, dfiles := dumpTree(t, kdir), dumpTree(t, ddir)
		if len(kfiles) == 0 || len(kfiles) != len(dfiles) {
			t.Fatalf("dump -o %s: kubectl wrote %d files, kdyn %d", format, len(kfiles), len(dfiles))
		}
		for name, kf := range kfiles {
			df, ok := dfiles[name]
			switch {
			case !ok:
				t.Errorf("kdyn did not write %s", name)
			case kf.mode != df.mode:
				t.Errorf("%s: kdyn's mode %v, kubectl's %v", name, df.mode, kf.mode)
			default:
				if diff := CompareBytes(norm(df.data), norm(kf.data)); !diff.Identical {
					t.Errorf("%s: %s", name, diff)
				}
			}
		}
		t.Logf("dump -o %s to a directory: %d files alike", format, len(kfiles))
	}
}

// dumpFile is one file of a dump directory.
type dumpFile struct {
	mode os.FileMode
	data []byte
}

// dumpTree reads a dump directory: its files by relative path, and its
// directories (as "DIR/") with their modes.
func dumpTree(t *testing.T, dir string) map[string]dumpFile {
	t.Helper()
	files := map[string]dumpFile{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			files[rel+"/"] = dumpFile{mode: fi.Mode().Perm()}
			return nil
		}
		b, err := os.ReadFile(p)
		files[rel] = dumpFile{mode: fi.Mode().Perm(), data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("%s: %q", dir, names)
	return files
}
