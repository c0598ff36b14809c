package kubectlsuite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/bench/cli"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// functionTimeout bounds one function's run.
const functionTimeout = 2 * time.Minute

// suiteArgs are test-cmd.sh's kube-apiserver admission plugins. (Its
// authorization is RBAC then AlwaysAllow; the functions run as a member of
// system:masters, for whom RBAC alone allows everything.)
var suiteArgs = []string{
	"--enable-admission-plugins=LimitRanger,ResourceQuota",
	"--disable-admission-plugins=ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,StorageObjectInUseProtection",
}

// TestKubectlSuite runs every function of kubectl's test/cmd suite with
// kubectl and with kdyn, each tool on its own control plane, prints the
// table of results, writes it to $KDYN_SUITE_REPORT when set, and fails
// when a function kdyn passes in testdata/results.txt fails now, or when
// docs/kubectl-suite.md does not explain a function kubectl passes and
// kdyn fails. KDYN_SUITE_FUNCS (a regular expression) runs only the
// functions it matches; KDYN_SUITE_OUTPUT names a directory that gets
// every function's whole output as TOOL/FUNCTION.log;
// KDYN_SUITE_CLUSTER=whole runs both tools on a whole cluster (see
// newTarget), checked against testdata/results-whole.txt and the docs'
// reasons for that cluster.
func TestKubectlSuite(t *testing.T) {
	ctx := t.Context()
	root, _, err := cli.Modules()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := ModuleDir(ctx, filepath.Join(root, "integration", "controlplane"))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := Functions(mod)
	if err != nil {
		t.Fatal(err)
	}
	if re := os.Getenv("KDYN_SUITE_FUNCS"); re != "" {
		match := regexp.MustCompile(re)
		var some []string
		for _, f := range fns {
			if match.MatchString(f) {
				some = append(some, f)
			}
		}
		fns = some
	}
	bins, err := cli.BuildBinaries(ctx, t.TempDir(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	tools := []struct{ name, bin string }{{"kubectl", bins.Kubectl}, {"kdyn", bins.Kdyn}}
	results := map[string]map[string]Result{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, tool := range tools {
		target := newTarget(t, ctx, tool.name, tool.bin, mod)
		wg.Go(func() {
			for _, fn := range fns {
				res, err := target.Run(ctx, fn, functionTimeout)
				if err != nil {
					t.Errorf("%s %s: %v", tool.name, fn, err)
					return
				}
				fmt.Fprintf(os.Stderr, "kubectl-suite: %-8s %-60s %s %s\n", tool.name, fn, word(res, true), res.Duration.Round(100*time.Millisecond))
				if dir := os.Getenv("KDYN_SUITE_OUTPUT"); dir != "" {
					if err := writeOutput(filepath.Join(dir, tool.name), res); err != nil {
						t.Error(err)
					}
				}
				mu.Lock()
				if results[fn] == nil {
					results[fn] = map[string]Result{}
				}
				results[fn][tool.name] = res
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	report := Report(fns, results)
	t.Logf("\n%s", report)
	if p := os.Getenv("KDYN_SUITE_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(report), 0o644); err != nil {
			t.Error(err)
		}
	}
	if p := os.Getenv("KDYN_SUITE_RESULTS"); p != "" {
		if err := os.WriteFile(p, []byte(Results(fns, results)), 0o644); err != nil {
			t.Error(err)
		}
	}
	for _, fn := range fns {
		if r := results[fn]["kdyn"]; !r.Pass && results[fn]["kubectl"].Pass {
			t.Logf("kdyn fails %s (kubectl passes); its last lines:\n%s", fn, r.Tail(12))
		}
		if r := results[fn]["kubectl"]; !r.Pass && testing.Verbose() {
			t.Logf("kubectl fails %s; its last lines:\n%s", fn, r.Tail(12))
		}
	}

	// Regressions against the recorded results, and the docs' reasons,
	// each for the cluster the functions ran on.
	resultsFile, heading := "results.txt", ReasonsHeading
	if os.Getenv("KDYN_SUITE_CLUSTER") == "whole" {
		resultsFile, heading = "results-whole.txt", WholeReasonsHeading
	}
	recorded, err := readResults(filepath.Join("testdata", resultsFile))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := os.ReadFile(filepath.Join(root, "docs", "kubectl-suite.md"))
	if err != nil {
		t.Fatal(err)
	}
	reasons := Reasons(string(docs), heading)
	for _, fn := range fns {
		got := results[fn]
		if recorded[fn]["kdyn"] && !got["kdyn"].Pass {
			t.Errorf("kdyn passed %s in testdata/%s and fails now:\n%s", fn, resultsFile, got["kdyn"].Tail(20))
		}
		if got["kubectl"].Pass && !got["kdyn"].Pass && reasons[fn] == "" {
			t.Errorf("docs/kubectl-suite.md gives no reason why kdyn fails %s (a line \"- `%s`: ...\" under %q)", fn, fn, heading)
		}
	}
}

// newTarget starts a control plane for one tool, with the suite's token
// and node, and a copy of the scripts.
func newTarget(t *testing.T, ctx context.Context, tool, bin, mod string) Target {
	t.Helper()
	// test-cmd.sh runs kube-controller-manager beside the apiserver (for
	// namespace deletion, garbage collection, CSR signing), and no
	// scheduler: the functions are written for pods that never run.
	// KDYN_SUITE_CLUSTER=whole adds a scheduler and two KWOK nodes, so
	// that their pods do run (then kubectl itself fails a quarter of them).
	whole := os.Getenv("KDYN_SUITE_CLUSTER") == "whole"
	nodes := 0
	if whole {
		nodes = 2
	}
	env := testenv.New(t, testenv.Options{
		ExtraTokens: []string{`admin-token,admin,admin,"system:masters"`},
		ExtraArgs:   suiteArgs,
		Controllers: true,
		Scheduler:   whole,
		Nodes:       nodes,
	})
	c, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	// test-cmd.sh's create_node: the node the functions expect.
	node := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "127.0.0.1", "annotations": map[string]any{"save-managers": "true"}},
		"status":   map[string]any{"capacity": map[string]any{"memory": "1Gi"}},
	}}
	if _, err := c.Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}).Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := PrepareRoot(mod, root); err != nil {
		t.Fatal(err)
	}
	port := strings.TrimPrefix(env.Host(), "https://127.0.0.1:")
	var p int
	if _, err := fmt.Sscan(port, &p); err != nil {
		t.Fatal(err)
	}
	return Target{Tool: tool, Binary: bin, Port: p, Root: root, Work: t.TempDir(),
		TempFiles: map[string][]byte{"apiserver.crt": env.CAData()}}
}

// writeOutput writes a function's output to dir/FUNCTION.log.
func writeOutput(dir string, res Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, res.Function+".log"), res.Output, 0o644)
}
