package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// targetApplyWall is the apply throughput goal: kdyn's wall time for the
// same manifests, × kubectl's.
const targetApplyWall = 0.30

// The apply cases, each tool at its defaults (both client-side apply; kdyn
// with --concurrency 8, kubectl one object at a time), in a namespace of
// their own:
//
//	apply-create        apply -f DIR into a new namespace
//	apply-again         the same again (nothing changes)
//	apply-prune-create  apply --prune --applyset=bench -f DIR into a new
//	                    namespace (kubectl with KUBECTL_APPLYSET=true)
//	apply-prune-again   the same again (every member listed, none pruned)
//	apply-ssa-create    apply --server-side, new namespace
const applySetName = "bench"

// writeApplyManifests writes objects ConfigMaps into files files (the
// last takes the remainder) under dir.
func writeApplyManifests(dir string, objects, files int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	per := objects / files
	n := 0
	for f := range files {
		var b strings.Builder
		count := per
		if f == files-1 {
			count = objects - n
		}
		for range count {
			fmt.Fprintf(&b, `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: apply-%05d
  labels:
    app: clibench
    tier: t%d
data:
  index: "%d"
  settings.yaml: |
    replicas: 3
    image: registry.example.com/app:v1.2.%d
`, n, n%7, n, n%100)
			n++
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.yaml", f)), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// applyBench measures the apply cases, Reps times (at most 3: kubectl's
// second client-side apply of 1,000 objects takes about a minute here),
// alternating which tool goes first, each in fresh namespaces, with a warm
// discovery cache per tool. It checks that every run left the namespace
// with all the objects.
func (b *bench) applyBench(ctx context.Context, env *testenv.Env) error {
	o := b.opts
	if o.ApplyObjects <= 0 {
		return nil
	}
	dir := filepath.Join(b.work, "apply-manifests")
	if err := writeApplyManifests(dir, o.ApplyObjects, o.ApplyFiles); err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		return err
	}
	caches := map[string]string{Kdyn: b.newCache(Kdyn), Kubectl: b.newCache(Kubectl)}
	for tool, cache := range caches {
		if _, _, err := b.r.exec(ctx, b.devnull, b.binary(tool), b.args(cache, apiResources...)...); err != nil {
			return err
		}
	}
	nsN := 0
	newNS := func() (string, error) {
		nsN++
		name := fmt.Sprintf("clibench-apply-%d", nsN)
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
		_, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, ns, metav1.CreateOptions{})
		return name, err
	}
	count := func(ns string) (int, error) {
		l, err := dynamic.ListAll(ctx, client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns), metav1.ListOptions{LabelSelector: "app=clibench"}, dynamic.PageOptions{})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}
	all := map[string][]Sample{}
	run := func(tool, c, ns string, extra ...string) error {
		var env []string
		if tool == Kubectl {
			env = []string{"KUBECTL_APPLYSET=true"}
		}
		args := append([]string{"apply", "-n", ns, "-f", dir}, extra...)
		s, _, err := b.r.execEnv(ctx, b.devnull, env, b.binary(tool), b.args(caches[tool], args...)...)
		if err != nil {
			return err
		}
		if n, err := count(ns); err != nil {
			return err
		} else if n != o.ApplyObjects {
			return fmt.Errorf("%s %s: %d objects in %s after the apply, want %d", tool, c, n, ns, o.ApplyObjects)
		}
		b.add(tool+"/"+c, s, all)
		return nil
	}
	reps := min(o.Reps, 3)
	for rep := range reps {
		if o.QuietWait > 0 {
			if _, err := waitQuiet(ctx, o.QuietIdle, o.QuietWait); err != nil {
				return err
			}
		}
		b.logf("apply %d objects in %d files: repetition %d/%d (load %s)", o.ApplyObjects, o.ApplyFiles, rep+1, reps, loadAvg())
		order := []string{Kdyn, Kubectl}
		if rep%2 == 1 {
			order = []string{Kubectl, Kdyn}
		}
		for _, tool := range order {
			ns, err := newNS()
			if err != nil {
				return err
			}
			start := time.Now()
			if err := run(tool, "apply-create", ns); err != nil {
				return err
			}
			if err := run(tool, "apply-again", ns); err != nil {
				return err
			}
			if ns, err = newNS(); err != nil {
				return err
			}
			prune := []string{"--prune", "--applyset=" + applySetName}
			if err := run(tool, "apply-prune-create", ns, prune...); err != nil {
				return err
			}
			if err := run(tool, "apply-prune-again", ns, prune...); err != nil {
				return err
			}
			if ns, err = newNS(); err != nil {
				return err
			}
			if err := run(tool, "apply-ssa-create", ns, "--server-side"); err != nil {
				return err
			}
			b.logf("  %s: %s", tool, time.Since(start).Round(100*time.Millisecond))
		}
	}
	for k, v := range all {
		b.res.Stats[k] = summarize(v)
	}
	b.res.ApplyObjects, b.res.ApplyFiles = o.ApplyObjects, o.ApplyFiles
	return nil
}

// applyRows are the report's apply rows.
func (r *Results) applyRows() []Row {
	if r.ApplyObjects <= 0 {
		return nil
	}
	st := func(tool, c string) Stats { return r.Stats[tool+"/"+c] }
	var rows []Row
	label := fmt.Sprintf("apply %d ConfigMaps in %d files", r.ApplyObjects, r.ApplyFiles)
	for _, c := range []struct{ name, key string }{
		{", new namespace", "apply-create"},
		{", again (unchanged)", "apply-again"},
		{" --prune --applyset, new namespace", "apply-prune-create"},
		{" --prune --applyset, again", "apply-prune-again"},
		{" --server-side, new namespace", "apply-ssa-create"},
	} {
		kd, kc := st(Kdyn, c.key), st(Kubectl, c.key)
		rv, rs := ratio(float64(kd.Wall), float64(kc.Wall))
		rows = append(rows,
			Row{label + c.name + ": wall", fmtDur(kd.Wall), fmtDur(kc.Wall), rs, fmt.Sprintf("≤ %.2f×", targetApplyWall), verdict(rs != "—" && rv <= targetApplyWall)})
		_, rs = ratio(float64(kd.CPU), float64(kc.CPU))
		rows = append(rows, Row{label + c.name + ": CPU (user+sys)", fmtDur(kd.CPU), fmtDur(kc.CPU), rs, "—", ""})
		_, rs = ratio(float64(kd.MaxRSS), float64(kc.MaxRSS))
		rows = append(rows, Row{label + c.name + ": peak RSS", fmtMB(kd.MaxRSS), fmtMB(kc.MaxRSS), rs, "—", ""})
	}
	return rows
}
