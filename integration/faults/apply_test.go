package faults_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
)

// applyReport is what one "kdyn apply -f" run said about each document.
type applyReport struct {
	applied map[string]int // object name → times reported applied
	failed  map[string]int // object name → times reported failed
	code    int
	stdout  string
	stderr  string
}

var (
	appliedLine = regexp.MustCompile(`^configmap/(\S+) serverside-applied$`)
	failedObj   = regexp.MustCompile(`configmap/([a-z0-9-]+)`)
)

// runApply writes a manifest with one ConfigMap per name (a document
// each) and applies it with kdyn (server-side apply) through the proxy.
func runApply(t *testing.T, r *rig, names []string, value string) applyReport {
	t.Helper()
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  v: %q\n", n, r.ns, value)
	}
	file := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	out, errOut, code := runKdyn(ctx, t, r, "", "apply", "--server-side", "-f", file)
	rep := applyReport{applied: map[string]int{}, failed: map[string]int{}, code: code, stdout: out, stderr: errOut}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if m := appliedLine.FindStringSubmatch(l); m != nil {
			rep.applied[m[1]]++
		} else if l != "" {
			t.Errorf("unexpected kdyn apply output line %q", l)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if m := failedObj.FindStringSubmatch(l); m != nil && strings.Contains(l, "document ") {
			rep.failed[m[1]]++
		}
	}
	return rep
}

// onServer returns the names among names whose ConfigMap holds value.
func (r *rig) onServer(t *testing.T, names []string, value string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, n := range names {
		obj, err := r.direct.Resource(cmGVR).Namespace(r.ns).Get(t.Context(), n, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if v, _, _ := unstructured.NestedString(obj.Object, "data", "v"); v == value {
			out[n] = true
		}
	}
	return out
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", prefix, i)
	}
	return out
}

func patchOf(r *rig, name string) faultproxy.Match {
	return faultproxy.Method(http.MethodPatch, func(req *http.Request) bool {
		return req.URL.Path == "/api/v1/namespaces/"+r.ns+"/configmaps/"+name
	})
}

// checkReport checks that every document was reported exactly once and
// that every document reported applied is on the server. It returns the
// documents reported failed that the server has anyway.
func checkReport(t *testing.T, rep applyReport, all []string, present map[string]bool) (appliedAnyway []string) {
	t.Helper()
	for _, n := range all {
		a, f := rep.applied[n], rep.failed[n]
		switch {
		case a+f != 1:
			t.Errorf("%s reported %d times applied and %d times failed, want exactly one report", n, a, f)
		case a == 1 && !present[n]:
			t.Errorf("%s reported applied but the server does not have it", n)
		case f == 1 && present[n]:
			appliedAnyway = append(appliedAnyway, n)
		}
	}
	if len(rep.failed) > 0 && rep.code != 1 {
		t.Errorf("kdyn apply exited %d with failures, want 1", rep.code)
	}
	return appliedAnyway
}

// TestApplyWithCuts applies a 30-document manifest with kdyn through the
// proxy while some requests fail, and checks kdyn's report — which
// documents were applied, which failed — against the server.
func TestApplyWithCuts(t *testing.T) {
	env := testenv.Shared(t)
	r := newRig(t, env)
	inf := startFactoryInformer(t, r) // watches the applies through the same proxy

	t.Run("chosen faults", func(t *testing.T) {
		all := names("ap", 30)
		r.proxy.CutBeforeForward(1, patchOf(r, "ap-04")) // never reaches the server
		r.proxy.Respond5xx(http.StatusInternalServerError, 1, patchOf(r, "ap-14"))
		r.proxy.Respond429(1, time.Second, patchOf(r, "ap-19")) // retried, then applied
		r.proxy.CutAfterForward(1, patchOf(r, "ap-09"))         // applied, answer lost
		rep := runApply(t, r, all, "applied")
		present := r.onServer(t, all, "applied")
		t.Logf("kdyn apply exited %d; stderr:\n%s", rep.code, rep.stderr)
		anyway := checkReport(t, rep, all, present)
		// A server-side apply is idempotent, so a connection that broke
		// before the answer — whether or not the request reached the server —
		// is retried: ap-04 and ap-09 end up applied and reported so. The 500
		// (no Retry-After) is not retried: ap-14 is reported failed.
		if rep.failed["ap-14"] != 1 || present["ap-14"] {
			t.Errorf("ap-14: reported failed %d times, on the server: %v; want reported failed and absent", rep.failed["ap-14"], present["ap-14"])
		}
		for _, n := range []string{"ap-04", "ap-09", "ap-19"} {
			if rep.applied[n] != 1 || !present[n] {
				t.Errorf("%s: reported applied %d times, on the server: %v; want applied (retried)", n, rep.applied[n], present[n])
			}
		}
		if want := len(all) - 1; len(rep.applied) != want {
			t.Errorf("%d documents reported applied, want %d", len(rep.applied), want)
		}
		if len(anyway) != 0 {
			t.Errorf("reported failed but applied on the server: %v (%s)", anyway, failedLine(rep.stderr, anyway[0]))
		}
	})

	t.Run("random cuts", func(t *testing.T) {
		all := names("rc", 30)
		r.proxy.Delay(20 * time.Millisecond) // spread the run over several cuts
		defer r.proxy.Delay(0)
		before := len(r.proxy.Records())
		stop := every(150*time.Millisecond, 200, func() { r.proxy.CutAll() })
		rep := runApply(t, r, all, "applied")
		cuts := stop()
		present := r.onServer(t, all, "applied")
		anyway := checkReport(t, rep, all, present)
		// A document reported failed that the server has must be one
		// whose request the proxy cut while it was in flight.
		forwardedThenCut := map[string]bool{}
		for _, rec := range r.proxy.Records()[before:] {
			if rec.Method == http.MethodPatch && rec.Has(faultproxy.FaultCut) {
				forwardedThenCut[rec.Path[strings.LastIndexByte(rec.Path, '/')+1:]] = true
			}
		}
		for _, n := range anyway {
			if !forwardedThenCut[n] {
				t.Errorf("%s was reported failed and is on the server, but its request was not cut in flight", n)
			}
		}
		t.Logf("%d cuts during the run: %d documents reported applied, %d failed (%d of them applied anyway: %v); exit %d",
			cuts, len(rep.applied), len(rep.failed), len(anyway), anyway, rep.code)
	})
	// Up to 30 s of cuts every 150 ms end most of the informer's watches
	// at once, without an event, and it backs off after each, doubling
	// from 0.8 s: when the cuts stop it may have just begun its sixth wait,
	// of 25.6–32 s, and it needs a watch to catch up. The deadline leaves
	// room for the longest wait there is, 30 s plus a quarter.
	converge(t, r, inf, 60*time.Second)
	t.Logf("the informer watching the applies delivered %s", inf.model.counts())
}

func failedLine(stderr, name string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "configmap/"+name) {
			return strings.TrimSpace(l)
		}
	}
	return "no line"
}
