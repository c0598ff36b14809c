package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// These tests run kdyn and kubectl v0.37.2 (both built here, as clibench
// builds them) with the same arguments against one real control plane and
// require the same exit code and byte-identical standard output (and, where
// kubectl's wording does not name itself, standard error): every create
// generator with --dry-run=client, and the client dry runs of apply, patch,
// label, annotate, scale and delete, auth can-i and whoami.

// binDir holds the binaries built for this package's tests.
var binDir string

func TestMain(m *testing.M) {
	code := testenv.Main(m, testenv.Options{})
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var build struct {
	once sync.Once
	bin  Binaries
	err  error
}

// binaries builds kdyn and kubectl once for the package.
func binaries(t *testing.T) Binaries {
	t.Helper()
	build.once.Do(func() {
		if binDir, build.err = os.MkdirTemp("", "clibench-verbs-"); build.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		build.bin, build.err = BuildBinaries(ctx, binDir, t.Logf)
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// pair runs the two tools as one user of an Env, each with its own home
// and cache directory.
type pair struct {
	bin     Binaries
	kubecfg string
	home    string
	cache   string
	// env is added to both tools' environment.
	env []string
}

func newPair(t *testing.T, env *testenv.Env, u testenv.User) *pair {
	t.Helper()
	home := t.TempDir()
	return &pair{bin: binaries(t), kubecfg: env.KubeconfigPath(u), home: home, cache: filepath.Join(home, "kdyn-cache")}
}

// run is one execution's outcome.
type run struct {
	stdout, stderr []byte
	code           int
}

func (p *pair) exec(t *testing.T, bin, stdin string, args ...string) run {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = append([]string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "LANG=C", "TZ=UTC"}, p.env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %q: %v", bin, args, err)
	}
	return run{stdout: out.Bytes(), stderr: errb.Bytes(), code: code}
}

func (p *pair) kdyn(t *testing.T, stdin string, args ...string) run {
	t.Helper()
	return p.exec(t, p.bin.Kdyn, stdin, append([]string{"--kubeconfig", p.kubecfg, "--cache-dir", p.cache}, args...)...)
}

func (p *pair) kubectl(t *testing.T, stdin string, args ...string) run {
	t.Helper()
	return p.exec(t, p.bin.Kubectl, stdin, append([]string{"--kubeconfig", p.kubecfg}, args...)...)
}

// same is one comparison: args for both tools (kdynArgs, when set, for
// kdyn instead), and how to compare.
type same struct {
	args     []string
	kdynArgs []string
	stdin    string
	// stderr requires standard error to be identical too.
	stderr bool
	// norm, when set, is applied to both outputs (and standard errors)
	// first: what a real write makes differ (uids, times,
	// resourceVersions).
	norm func([]byte) []byte
}

// check runs c with both tools and fails unless they agree.
func (p *pair) check(t *testing.T, c same) {
	t.Helper()
	ka := c.kdynArgs
	if ka == nil {
		ka = c.args
	}
	k := p.kubectl(t, c.stdin, c.args...)
	d := p.kdyn(t, c.stdin, ka...)
	kout, dout := k.stdout, d.stdout
	kerr, derr := k.stderr, d.stderr
	if c.norm != nil {
		kout, dout = c.norm(kout), c.norm(dout)
		kerr, derr = c.norm(kerr), c.norm(derr)
	}
	diff := CompareBytes(dout, kout)
	switch {
	case k.code != d.code:
		t.Errorf("kdyn %q: exit code %d, kubectl's %d\nkdyn stdout:\n%s\nkdyn stderr:\n%s\nkubectl stdout:\n%s\nkubectl stderr:\n%s", ka, d.code, k.code, d.stdout, d.stderr, k.stdout, k.stderr)
	case !diff.Identical:
		t.Errorf("kdyn %q: stdout %s\nkdyn:\n%s\nkubectl:\n%s", ka, diff, dout, kout)
	case c.stderr && !bytes.Equal(derr, kerr):
		t.Errorf("kdyn %q: stderr differs\nkdyn:    %q\nkubectl: %q", ka, derr, kerr)
	default:
		t.Logf("%q: %s", c.args, diff)
	}
}

// vbFiles writes the generators' inputs, env's client key pair (for a
// TLS secret) among them, and returns their directory.
func vbFiles(t *testing.T, env *testenv.Env) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"settings.ini": "[app]\nlevel = 3\n",
		"logo.bin":     "\x89PNG\r\n\x1a\n\x00\xff\xfe",
		"conf/a.txt":   "alpha\n",
		"conf/b.txt":   "beta",
		"app.env":      "\ufeffLEVEL=3\n# comment\n\n  NAME=web app\nURL=http://x/?a=1&b=<2>\nFROM_ENV\n",
		"docker.json":  `{"auths":{"registry.example.com":{"auth":"dTpw"}}}`,
		"bad.env":      "OK=1\n1BAD=2\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "conf", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The test control plane's client certificate is a key pair to store.
	for name, b := range map[string][]byte{"tls.crt": env.ClientCertData(), "tls.key": env.ClientKeyData()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestGeneratorsMatchKubectl: every create generator, with
// --dry-run=client and each output (summary, name, yaml, json), prints
// what kubectl prints, byte for byte; so do their refusals of bad input
// (exit code and stdout; stderr where kubectl does not name itself).
func TestGeneratorsMatchKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	dir := vbFiles(t, env)
	in := func(name string) string { return filepath.Join(dir, name) }
	generators := [][]string{
		{"configmap", "web", "--from-literal=level=3", "--from-literal=html=<b>&amp;</b>", "--from-literal=eq=a=b", "--from-literal=empty="},
		{"cm", "files", "--from-file=" + in("settings.ini"), "--from-file=" + in("conf"), "--from-file=logo=" + in("logo.bin"), "-n", "prod"},
		{"configmap", "env", "--from-env-file=" + in("app.env"), "--append-hash"},
		{"configmap", "empty"},
		{"configmap", "saved", "--from-literal=a=b", "--save-config", "--append-hash"},
		{"namespace", "team-a"},
		{"ns", "team-b", "--save-config"},
		{"serviceaccount", "robot", "-n", "ci", "--save-config"},
		{"sa", "robot"},
		{"secret", "generic", "db", "--from-literal=password=s3cr3t", "--from-file=" + in("logo.bin"), "--append-hash", "--save-config"},
		{"secret", "generic", "typed", "--type=example.com/db", "--from-env-file=" + in("app.env"), "--append-hash"},
		{"secret", "generic", "dir", "--from-file=" + in("conf"), "-n", "prod"},
		{"secret", "generic", "empty"},
		{"secret", "tls", "web-tls", "--cert=" + in("tls.crt"), "--key=" + in("tls.key"), "--append-hash"},
		{"secret", "docker-registry", "regcred", "--docker-server=registry.example.com", "--docker-username=me", "--docker-password=p<w>", "--docker-email=me@example.com"},
		{"secret", "docker-registry", "hub", "--docker-username=me", "--docker-password=pw", "--append-hash"},
		{"secret", "docker-registry", "regfile", "--from-file=" + in("docker.json"), "--append-hash"},
		{"role", "pod-reader", "--verb=get", "--verb=list", "--verb=watch", "--resource=pods"},
		{"role", "mixed", "--verb=get,list,get", "--resource=rs.apps,pods/status,pods,deploy", "--resource-name=a", "--resource-name=b", "--resource-name=a", "-n", "prod"},
		{"role", "everything", "--verb=get", "--verb=*", "--resource=*", "--save-config"},
		{"role", "impersonator", "--verb=impersonate", "--resource=users,serviceaccounts,userextras.authentication.k8s.io"},
		{"clusterrole", "logs", "--verb=get", "--non-resource-url=/logs/*", "--non-resource-url=/healthz", "--resource=nodes"},
		{"clusterrole", "binder", "--verb=bind,escalate", "--resource=clusterroles,roles.rbac.authorization.k8s.io"},
		{"clusterrole", "aggregate", "--aggregation-rule=rbac.example.com/aggregate=true,tier=web"},
		{"rolebinding", "admins", "--clusterrole=admin", "--user=u1", "--user=u2", "--group=g1", "--serviceaccount=ci:robot", "-n", "prod"},
		{"rolebinding", "readers", "--role=pod-reader"},
		{"clusterrolebinding", "viewers", "--clusterrole=view", "--group=devs", "--save-config"},
		{"clusterrolebinding", "nobody", "--clusterrole=view"},
		{"deployment", "web", "--image=nginx", "--image=registry.example.com/team/busybox:1.36", "--image=app@sha256:0123", "--port=80", "-r", "3"},
		{"deploy", "sleeper", "--image=busybox", "-n", "prod", "--save-config", "--", "sleep", "3600"},
		{"job", "once", "--image=busybox", "--", "date", "-u"},
		{"job", "plain", "--image=busybox", "-n", "prod", "--save-config"},
		{"cronjob", "tick", "--image=busybox", "--schedule=*/1 * * * *", "--", "date"},
		{"cj", "nightly", "--image=busybox", "--schedule=0 3 * * *", "--restart=Never", "-n", "prod"},
		{"service", "clusterip", "my-cs", "--tcp=5678:8080", "--tcp=80", "--tcp=81:http"},
		{"svc", "clusterip", "headless", "--clusterip=None", "-n", "prod"},
		{"service", "nodeport", "np", "--tcp=5678:8080", "--node-port=30001"},
		{"service", "loadbalancer", "lb", "--tcp=443:8443", "--save-config"},
		{"service", "externalname", "ext", "--external-name=bar.example.com"},
		{"quota", "q", "--hard=cpu=1,memory=1G,pods=2,requests.storage=1500Mi", "--scopes=BestEffort,NotTerminating"},
		{"quota", "empty", "-n", "prod"},
		{"priorityclass", "high", "--value=1000", "--description=high priority"},
		{"pc", "def", "--global-default=true", "--preemption-policy=Never", "--save-config"},
		{"poddisruptionbudget", "my-pdb", "--selector=app=rails,tier in (a,b),!legacy", "--min-available=50%"},
		{"pdb", "other", "--selector=app=web", "--max-unavailable=1", "-n", "prod"},
		{"ingress", "simple", "--rule=foo.com/bar=svc1:8080,tls=my-cert"},
		{"ing", "catch-all", "--class=otheringress", "--rule=/path=svc:port", "-n", "prod"},
		{"ingress", "annotated", "--class=default", "--rule=foo.com/bar=svc:port", "--annotation", "ingress.annotation1=foo", "--annotation", "ingress.annotation2=bla"},
		{"ingress", "multipath", "--rule=foo.com/=svc:port", "--rule=foo.com/admin/=svcadmin:portadmin", "--rule=bar.com/admin*=svc2:http"},
		{"ingress", "ingtls", "--rule=foo.com/=svc:https,tls", "--rule=foo.com/path/subpath*=othersvc:8080", "--rule=bar.com/*=svc:8080,tls=secret1", "--rule=baz.com/*=svc:8080,tls=secret1", "--rule=/x=a:0,tls"},
		{"ingress", "ingdefault", "--default-backend=defaultsvc:http", "--rule=foo.com/*=svc:8080,tls=secret1", "--save-config"},
		{"ingress", "onlydefault", "--default-backend=defaultsvc:80"},
	}
	for _, g := range generators {
		for _, o := range [][]string{nil, {"-o", "name"}, {"-o", "yaml"}, {"-o", "json"}, {"--template={{ .metadata.name }}:{{ .kind }}"}} {
			// Flags go before "--", after which come the command's words.
			flags, command := g, []string(nil)
			if i := slices.Index(g, "--"); i >= 0 {
				flags, command = g[:i], g[i:]
			}
			args := append(append(append([]string{"create"}, flags...), "--dry-run=client"), o...)
			p.check(t, same{args: append(args, command...)})
		}
	}
	refusals := []same{
		{args: []string{"create", "configmap"}},
		{args: []string{"create", "cm", "x", "--from-literal=novalue"}, stderr: true},
		{args: []string{"create", "cm", "x", "--from-literal==v"}, stderr: true},
		{args: []string{"create", "cm", "x", "--from-literal=a=1", "--from-literal=a=2"}, stderr: true},
		{args: []string{"create", "cm", "x", "--from-literal=a b=1"}, stderr: true},
		{args: []string{"create", "cm", "x", "--from-file=" + in("missing")}, stderr: true},
		{args: []string{"create", "cm", "x", "--from-file=k=" + in("conf")}, stderr: true},
		{args: []string{"create", "cm", "x", "--from-file=a=b=c"}, stderr: true},
		{args: []string{"create", "cm", "x", "--from-env-file=" + in("app.env"), "--from-literal=a=b"}, stderr: true},
		{args: []string{"create", "cm", "x", "--from-env-file=" + in("bad.env")}, stderr: true},
		{args: []string{"create", "cm", "x", "--from-env-file=" + in("conf")}, stderr: true},
		{args: []string{"create", "secret", "generic", "x", "--from-literal=a=1", "--from-literal=a=2"}, stderr: true},
		{args: []string{"create", "secret", "tls", "x", "--cert=" + in("tls.crt")}, stderr: true},
		{args: []string{"create", "secret", "tls", "x", "--cert=" + in("tls.crt"), "--key=" + in("settings.ini")}},
		{args: []string{"create", "secret", "docker-registry", "x"}, stderr: true},
		{args: []string{"create", "role", "x", "--resource=pods"}, stderr: true},
		{args: []string{"create", "role", "x", "--verb=get"}, stderr: true},
		{args: []string{"create", "role", "x", "--verb=use", "--resource=pods"}, stderr: true},
		{args: []string{"create", "role", "x", "--verb=frob", "--resource=pods", "-o", "yaml"}, stderr: true},
		{args: []string{"create", "role", "x", "--verb=get", "--resource=.apps"}, stderr: true},
		{args: []string{"create", "clusterrole", "x", "--verb=list", "--non-resource-url=/x"}, stderr: true},
		{args: []string{"create", "clusterrole", "x", "--verb=get", "--non-resource-url=x"}, stderr: true},
		{args: []string{"create", "clusterrole", "x", "--verb=get", "--non-resource-url=/a*/b"}, stderr: true},
		{args: []string{"create", "clusterrole", "x", "--verb=get"}, stderr: true},
		{args: []string{"create", "clusterrole", "x", "--aggregation-rule=a=b", "--verb=get"}, stderr: true},
		{args: []string{"create", "rolebinding", "x", "--role=a", "--clusterrole=b"}, stderr: true},
		{args: []string{"create", "rolebinding", "x", "--role=a", "--serviceaccount=nocolon"}, stderr: true},
		{args: []string{"create", "clusterrolebinding", "x", "--clusterrole=a", "--serviceaccount=a:b:c"}, stderr: true},
		{args: []string{"create", "clusterrolebinding", "x"}, stderr: true},
		{args: []string{"create", "deployment", "x"}, stderr: true},
		{args: []string{"create", "deployment", "x", "--image=a", "--image=b", "--dry-run=client", "--", "date"}, stderr: true},
		{args: []string{"create", "deployment", "x", "y", "--image=a"}},
		{args: []string{"create", "job", "x"}, stderr: true},
		{args: []string{"create", "job", "x", "--image=a", "--from=cronjob/y"}, stderr: true},
		{args: []string{"create", "cronjob", "x", "--image=a"}, stderr: true},
		{args: []string{"create", "service", "clusterip", "x"}, stderr: true},
		{args: []string{"create", "service", "nodeport", "x", "--tcp=abc"}, stderr: true},
		{args: []string{"create", "service", "clusterip", "x", "--tcp=80:Bad_Name"}, stderr: true},
		{args: []string{"create", "service", "clusterip", "x", "--tcp=80:99999"}, stderr: true},
		{args: []string{"create", "service", "externalname", "x", "--external-name=Not_DNS"}, stderr: true},
		{args: []string{"create", "service", "externalname", "x"}, stderr: true},
		{args: []string{"create", "quota", "x", "--hard=cpu"}, stderr: true},
		{args: []string{"create", "quota", "x", "--hard=cpu=lots"}, stderr: true},
		{args: []string{"create", "quota", "x", "--scopes=A,,B"}, stderr: true},
		{args: []string{"create", "pdb", "x", "--min-available=1"}, stderr: true},
		{args: []string{"create", "pdb", "x", "--selector=a=b"}, stderr: true},
		{args: []string{"create", "pdb", "x", "--selector=a=b", "--min-available=1", "--max-unavailable=1"}, stderr: true},
		{args: []string{"create", "pdb", "x", "--selector=a=b", "--min-available=1.5"}, stderr: true},
		{args: []string{"create", "ingress", "x"}, stderr: true},
		{args: []string{"create", "ingress", "x", "--rule=nopath"}, stderr: true},
		{args: []string{"create", "ingress", "x", "--rule=a/b=c:d", "--annotation=novalue"}, stderr: true},
		{args: []string{"create", "ingress", "x", "--default-backend=svc"}, stderr: true},
		{args: []string{"create", "ingress", "--rule=a/b=c:d"}}, // kubectl names itself in the hint
	}
	for _, c := range refusals {
		c.args = append(c.args, "--dry-run=client")
		p.check(t, c)
	}

	// run: the pod (and service) kubectl run generates.
	runs := [][]string{
		{"nginx", "--image=nginx"},
		{"web", "--image=nginx:1.27", "--env=A=1", "--env=B=x=y", "-l", "app=web,tier=fe", "--annotations=a=b", "--port=80", "--expose"},
		{"sleeper", "--image=busybox", "--restart=Never", "--command", "--image-pull-policy=IfNotPresent", "--privileged", "--", "sleep", "3600"},
		{"argsy", "--image=busybox", "--", "echo", "hi"},
		{"saved", "--image=nginx", "--save-config", "-n", "prod"},
		{"shell", "--image=busybox", "-i", "-t", "--attach=false", "--restart=Never", "--", "sh"},
		{"open", "--image=busybox", "--stdin", "--leave-stdin-open", "--attach=false"},
		{"emptyrestart", "--image=busybox", "-i", "--attach=false", "--restart="},
	}
	for _, r := range runs {
		for _, o := range [][]string{nil, {"-o", "name"}, {"-o", "yaml"}, {"-o", "json"}} {
			flags, command := r, []string(nil)
			if i := slices.Index(r, "--"); i >= 0 {
				flags, command = r[:i], r[i:]
			}
			args := append(append(append([]string{"run"}, flags...), "--dry-run=client"), o...)
			p.check(t, same{args: append(args, command...)})
		}
	}
	for _, r := range [][]string{
		{"--image=nginx"},
		{"x"},
		{"x", "--image=InvalidImageName"},
		{"x", "--image=a", "--env=1BAD=2"},
		{"x", "--image=a", "--env=NOVALUE"},
		{"x", "--image=a", "--restart=Sometimes"},
		{"x", "--image=a", "--image-pull-policy=Maybe"},
		{"x", "--image=a", "--expose"},
		{"x", "--image=a", "--port=abc"},
		{"x", "--image=a", "-l", "bad"},
		{"x", "--image=a", "--annotations=bad", "--annotations==v"},
		{"x", "--image=a", "-t"},
		{"x", "--image=a", "--rm"},
		{"x", "--image=a", "-i"},
		{"x", "--image=a", "--attach"},
		{"x", "--image=a", "-it", "--rm"},
	} {
		p.check(t, same{args: append(append([]string{"run"}, r...), "--dry-run=client"), stderr: true})
	}

	// A job from a cron job: the template's spec as the server stored it
	// (its defaults included), labels, annotations and owner.
	ns := vbNamespace(t, vbClient(t, env))
	p.kubectl(t, "", "create", "cronjob", "tick", "-n", ns, "--image=busybox", "--schedule=*/5 * * * *", "--", "date")
	p.kubectl(t, "", "annotate", "cronjob", "tick", "-n", ns, "unrelated=kept")
	for _, o := range [][]string{nil, {"-o", "yaml"}, {"-o", "json"}} {
		p.check(t, same{args: append([]string{"create", "job", "manual", "--from=cronjob/tick", "-n", ns, "--dry-run=client"}, o...)})
	}
	p.check(t, same{args: []string{"create", "job", "x", "--from=cronjob/none", "-n", ns, "--dry-run=client"}, stderr: true})
	p.kubectl(t, "", "create", "configmap", "other", "-n", ns)
	p.check(t, same{args: []string{"create", "job", "x", "--from=cm/other", "-n", ns, "--dry-run=client"}, stderr: true})

	// create token: a real TokenRequest (the token itself, its times and
	// uid differ from run to run), and kubectl's refusals of bad flags.
	p.kubectl(t, "", "create", "serviceaccount", "robot", "-n", ns)
	p.kubectl(t, "", "create", "secret", "generic", "bound", "-n", ns)
	tokenNorm := func(b []byte) []byte {
		b = vbToken.ReplaceAll(b, []byte("TOKEN"))
		b = vbTokenTimes.ReplaceAll(b, []byte("${1}X"))
		return normServerFields(b)
	}
	for _, args := range [][]string{
		{"robot"},
		{"robot", "-o", "json"},
		{"robot", "-o", "yaml", "--duration=1h", "--audience=a", "--audience=b"},
		{"robot", "-o", "name"},
		{"robot", "-o", "json", "--bound-object-kind=Secret", "--bound-object-name=bound"},
		{"robot", "-o", "go-template", "--template={{ .spec.expirationSeconds }} {{ .spec.audiences }}", "--duration=10m", "--audience=x"},
		{"robot", "--template={{ .spec.expirationSeconds }}"},
		{"nope"},
		{"robot", "--bound-object-kind=Pod", "--bound-object-name=nopod"},
		{"robot", "--duration=-1s"},
		{"robot", "--duration=1500ms"},
		{"robot", "--audience="},
		{"robot", "--bound-object-name=x"},
		{"robot", "--bound-object-uid=x"},
		{"robot", "--bound-object-kind=Foo"},
		{"robot", "--bound-object-kind=Secret"},
	} {
		p.check(t, same{args: append([]string{"create", "token", "-n", ns}, args...), norm: tokenNorm, stderr: true})
	}
	// kdyn names itself in the usage hint, and lists its own outputs.
	for _, args := range [][]string{{}, {"a", "b"}, {"robot", "-o", "wide"}} {
		p.check(t, same{args: append([]string{"create", "token", "-n", ns}, args...)})
	}
}

var (
	// vbToken is a JSON Web Token, as create token prints it.
	vbToken = regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)
	// vbTokenTimes are the lines of a TokenRequest that name its times.
	vbTokenTimes = regexp.MustCompile(`(?m)^(\s*"?expirationTimestamp"?:\s*).*$`)
)

var (
	vbCMGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	vbNSGVR     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	vbDeployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

var vbSeq struct {
	mu sync.Mutex
	n  int
}

// vbNamespace creates a namespace for one test.
func vbNamespace(t *testing.T, c dynamic.Interface) string {
	t.Helper()
	vbSeq.mu.Lock()
	vbSeq.n++
	name := fmt.Sprintf("vb-%d-%d", vbSeq.n, time.Now().UnixNano()%1_000_000)
	vbSeq.mu.Unlock()
	vbCreate(t, c, vbNSGVR, "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}})
	return name
}

// vbCreate creates obj and returns it as stored.
func vbCreate(t *testing.T, c dynamic.Interface, gvr schema.GroupVersionResource, ns string, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	got, err := c.Resource(gvr).Namespace(ns).Create(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func vbClient(t *testing.T, env *testenv.Env) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serverFields are the lines of a real write's output that depend on
// when and where it ran.
var serverFields = regexp.MustCompile(`(?m)^(\s*"?(uid|resourceVersion|creationTimestamp|namespace|time)"?:\s*).*$`)

func normServerFields(b []byte) []byte { return serverFields.ReplaceAll(b, []byte("${1}X")) }

// TestWriteDryRunsMatchKubectl: the client dry runs of the commands that
// change objects print what kubectl's print, on the same live objects;
// and so do real creates of the generators (server-set fields aside).
func TestWriteDryRunsMatchKubectl(t *testing.T) {
	env := testenv.Shared(t)
	c := vbClient(t, env)
	ns := vbNamespace(t, c)
	p := newPair(t, env, testenv.Admin)
	vbCreate(t, c, vbCMGVR, ns, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm1", "labels": map[string]any{"keep": "1", "tier": "web"}, "annotations": map[string]any{"note": "a"}},
		"data":     map[string]any{"k": "v", "html": "<b>"},
	})
	vbCreate(t, c, vbCMGVR, ns, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "bare"},
	})
	vbCreate(t, c, vbDeployGVR, ns, map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"tier": "web"}},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}},
			},
		},
	})
	n := []string{"-n", ns}
	cases := []same{
		// label and annotate
		{args: []string{"label", "cm", "cm1", "app=web"}},
		{args: []string{"label", "cm", "cm1", "app=web", "-o", "yaml"}},
		{args: []string{"label", "cm/cm1", "keep-", "tier=db", "--overwrite", "-o", "json"}},
		{args: []string{"label", "cm", "cm1", "keep-", "-o", "name"}},
		{args: []string{"label", "cm", "cm1", "keep=1"}},
		{args: []string{"label", "cm", "bare", "a=b", "-o", "yaml"}},
		{args: []string{"label", "cm", "cm1", "x=y", "--resource-version=1", "-o", "yaml"}},
		{args: []string{"label", "cm", "cm1", "tier=db"}, stderr: true},
		{args: []string{"annotate", "cm", "cm1", "note2=b", "-o", "yaml"}},
		{args: []string{"annotate", "cm", "cm1", "note-"}},
		{args: []string{"annotate", "cm", "bare", "x=<y>", "-o", "json"}},
		// patch
		{args: []string{"patch", "cm", "cm1", "--type", "merge", "-p", `{"data":{"k":"v2"}}`, "-o", "yaml"}},
		{args: []string{"patch", "cm", "cm1", "--type", "merge", "-p", `{"data":{"k":"v"}}`}},
		{args: []string{"patch", "cm", "cm1", "--type", "json", "-p", `[{"op":"remove","path":"/data/html"}]`, "-o", "json"}},
		{args: []string{"patch", "deploy", "web", "-p", `{"spec":{"replicas":5}}`, "-o", "yaml"}},
		{args: []string{"patch", "deploy/web", "-p", `{"metadata":{"labels":{"tier":null}}}`}},
		// scale
		{args: []string{"scale", "deploy/web", "--replicas=4"}},
		{args: []string{"scale", "deploy", "web", "--replicas=4", "-o", "yaml"}},
		{args: []string{"scale", "deploy", "-l", "tier=web", "--replicas=0", "-o", "name"}},
		{args: []string{"scale", "-f", "-", "--replicas=1", "-o", "yaml"}, stdin: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"},
		// delete
		{args: []string{"delete", "cm", "cm1"}},
		{args: []string{"delete", "cm", "cm1", "bare", "-o", "name"}},
		{args: []string{"delete", "deploy", "-l", "tier=web"}},
		// apply (kubectl's default is client-side apply, kdyn's
		// server-side): a new object, and an existing one without the
		// last-applied annotation.
		{args: []string{"apply", "-f", "-", "-o", "yaml"}, kdynArgs: []string{"apply", "--server-side=false", "-f", "-", "-o", "yaml"},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\n  labels:\n    a: b\ndata:\n  k: v\n"},
		{args: []string{"apply", "-f", "-"}, kdynArgs: []string{"apply", "--server-side=false", "-f", "-"},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\ndata:\n  k: v\n"},
		{args: []string{"apply", "-f", "-", "-o", "json"}, kdynArgs: []string{"apply", "--server-side=false", "-f", "-", "-o", "json"},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\n  annotations:\n    team: a\ndata:\n  k: <v>\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh2\n"},
		{args: []string{"apply", "-f", "-", "-o", "yaml"}, kdynArgs: []string{"apply", "--server-side=false", "-f", "-", "-o", "yaml"},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm1\ndata:\n  k: v\n"},
		{args: []string{"apply", "-f", "-", "-o", "name"}, kdynArgs: []string{"apply", "--server-side=false", "-f", "-", "-o", "name"},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh2\n"},
		// create -f
		{args: []string{"create", "-f", "-", "-o", "yaml"}, stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\ndata:\n  k: v\n"},
		{args: []string{"create", "-f", "-", "-o", "yaml"}, stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: fresh\nstringData:\n  a: b\n"},
		{args: []string{"create", "-f", "-", "-o", "json"}, stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: fresh\nstringData:\n  a: b\n"},
		{args: []string{"create", "-f", "-"}, stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\n"},
		{args: []string{"apply", "-f", "-", "-o", "yaml"}, kdynArgs: []string{"apply", "--server-side=false", "-f", "-", "-o", "yaml"},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm1\ndata:\n  k: v3\n"},
	}
	for _, c := range cases {
		c.args = append(append(append([]string{}, n...), c.args...), "--dry-run=client")
		if c.kdynArgs != nil {
			c.kdynArgs = append(append(append([]string{}, n...), c.kdynArgs...), "--dry-run=client")
		}
		p.check(t, c)
	}

	// A client-side apply for real by kubectl, then the same manifest
	// changed, dry-run by both: the three-way patch of kubectl's own
	// annotation.
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  labels:\n    a: b\ndata:\n  k: v\n  gone: x\n"
	if r := p.kubectl(t, manifest, "-n", ns, "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("kubectl apply: %s", r.stderr)
	}
	changed := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v2\n"
	for _, o := range [][]string{nil, {"-o", "yaml"}} {
		p.check(t, same{
			args:     append([]string{"-n", ns, "apply", "-f", "-", "--dry-run=client"}, o...),
			kdynArgs: append([]string{"-n", ns, "apply", "--server-side=false", "-f", "-", "--dry-run=client"}, o...),
			stdin:    changed,
		})
	}
	p.check(t, same{
		args:     []string{"-n", ns, "apply", "-f", "-", "--dry-run=client"},
		kdynArgs: []string{"-n", ns, "apply", "--server-side=false", "-f", "-", "--dry-run=client"},
		stdin:    manifest,
	})

	// Real creates by the generators, each tool in its own namespace: the
	// summaries, and the stored objects as printed (server-set fields
	// aside).
	nsK, nsD := vbNamespace(t, c), vbNamespace(t, c)
	dir := vbFiles(t, env)
	norm := func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(nsK), []byte("NS"))
		return normServerFields(bytes.ReplaceAll(b, []byte(nsD), []byte("NS")))
	}
	for gi, g := range [][]string{
		{"configmap", "real", "--from-literal=a=b", "--from-file=" + filepath.Join(dir, "logo.bin")},
		{"secret", "generic", "real", "--from-literal=a=b", "--save-config"},
		{"serviceaccount", "real"},
		{"secret", "docker-registry", "reg", "--docker-username=u", "--docker-password=p"},
	} {
		for i, o := range [][]string{nil, {"-o", "yaml"}, {"-o", "json"}} {
			args := append(append([]string{"create"}, renamed(g, fmt.Sprintf("obj-%d-%d", gi, i))...), o...)
			p.check(t, same{
				args:     append([]string{"-n", nsK}, args...),
				kdynArgs: append([]string{"-n", nsD}, args...),
				norm:     norm,
			})
		}
	}
	// A server dry run of a namespace: nothing stored, the same answer.
	p.check(t, same{args: []string{"create", "namespace", "dry-" + ns, "--dry-run=server", "-o", "yaml"}, norm: normServerFields})
}

// renamed replaces a generator's NAME argument (the first one that is not
// a subcommand or a flag) with name.
func renamed(g []string, name string) []string {
	out := append([]string{}, g...)
	i := 1
	if out[0] == "secret" {
		i = 2
	}
	out[i] = name
	return out
}

// TestAuthMatchesKubectl: auth can-i (yes, no, warnings, --list) and
// whoami print what kubectl's print, with the same exit codes, for the
// admin and for a user with little right.
func TestAuthMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	c := vbClient(t, env)
	ns := vbNamespace(t, c)
	vbCreate(t, c, schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, ns, map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": "reader"},
		"rules": []any{
			map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps", "pods/log"}, "verbs": []any{"get", "list"}},
			map[string]any{"apiGroups": []any{"apps"}, "resources": []any{"deployments/scale"}, "verbs": []any{"update", "get"}},
			map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "resourceNames": []any{"one", "two"}, "verbs": []any{"get"}},
		},
	})
	vbCreate(t, c, schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, ns, map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "reader"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": testenv.NobodyUserName}},
	})
	admin := newPair(t, env, testenv.Admin)
	nobody := newPair(t, env, testenv.Nobody)
	for _, p := range []*pair{admin, nobody} {
		for _, args := range [][]string{
			{"auth", "can-i", "create", "pods"},
			{"auth", "can-i", "create", "pods", "-A"},
			{"auth", "can-i", "list", "cm", "-n", ns},
			{"auth", "can-i", "delete", "configmaps", "-n", ns},
			{"auth", "can-i", "get", "secrets/one", "-n", ns},
			{"auth", "can-i", "get", "secrets/three", "-n", ns},
			{"auth", "can-i", "get", "pods", "--subresource=log", "-n", ns},
			{"auth", "can-i", "update", "deployments.apps", "--subresource=scale", "-n", ns},
			{"auth", "can-i", "list", "deploy", "-q", "-n", ns},
			{"auth", "can-i", "*", "*"},
			{"auth", "can-i", "get", "/healthz"},
			{"auth", "can-i", "post", "/logs/"},
			{"auth", "can-i", "get", "nodes", "-n", ns},
			{"auth", "can-i", "get", "nosuchthings"},
			{"auth", "can-i", "fly", "pods"},
			{"auth", "can-i", "impersonate", "users"},
			{"auth", "can-i", "--list", "-n", ns},
			{"auth", "can-i", "--list", "--no-headers", "-n", ns},
			{"auth", "whoami"},
			{"auth", "whoami", "-o", "yaml"},
			{"auth", "whoami", "-o", "json"},
		} {
			p.check(t, same{args: args, stderr: true, norm: normServerFields})
		}
	}
	admin.check(t, same{args: []string{"--as", testenv.NobodyUserName, "-n", ns, "auth", "can-i", "--list"}})
	admin.check(t, same{args: []string{"--as", "jane", "--as-group", "dev", "auth", "whoami"}})
}

// TestExposeMatchesKubectl: expose of pods, deployments, replica sets and
// services, live and from a file, prints the service kubectl prints.
func TestExposeMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	deploy := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"team":"a"}},"spec":{"selector":{"matchLabels":{"app":"web","tier":"fe"}},"template":{"metadata":{"labels":{"app":"web","tier":"fe"}},"spec":{"containers":[{"name":"a","image":"nginx","ports":[{"containerPort":80},{"containerPort":53,"protocol":"UDP"}]},{"name":"b","image":"x","ports":[{"containerPort":80}]}]}}}}`
	p.kubectl(t, deploy, "create", "-n", ns, "-f", "-")
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"single","labels":{"run":"single"}},"spec":{"containers":[{"name":"a","image":"nginx","ports":[{"containerPort":8080,"protocol":"TCP"}]}]}}`
	p.kubectl(t, pod, "create", "-n", ns, "-f", "-")
	bare := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare"},"spec":{"containers":[{"name":"a","image":"nginx"}]}}`
	p.kubectl(t, bare, "create", "-n", ns, "-f", "-")
	file := filepath.Join(t.TempDir(), "rs.yaml")
	rs := "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: frontend\n  labels: {app: guestbook}\nspec:\n  selector:\n    matchLabels: {tier: frontend}\n  template:\n    metadata:\n      labels: {tier: frontend}\n    spec:\n      containers:\n      - name: php\n        image: php\n        ports:\n        - containerPort: 80\n"
	if err := os.WriteFile(file, []byte(rs), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"expose", "deployment", "web", "--dry-run=client", "-o", "yaml"},
		{"expose", "deploy/web", "--port=8080", "--target-port=http", "--name=web-http", "--type=NodePort", "--dry-run=client", "-o", "json"},
		{"expose", "pod", "single", "--dry-run=client", "-o", "json"},
		{"expose", "pod", "single", "--port=443", "--protocol=UDP", "-l", "x=y", "--selector=run=other", "--external-ip=1.2.3.4", "--session-affinity=ClientIP", "--cluster-ip=None", "--dry-run=client", "-o", "yaml"},
		{"expose", "-f", file, "--dry-run=client", "-o", "yaml"},
		{"expose", "-f", file, "--port=81", "--name=frontend-81", "--dry-run=client"},
		{"expose", "pod", "bare", "--port=80", "--dry-run=client"},
		{"expose", "pod", "single", "--session-affinity=Sometimes", "--dry-run=client"},
		{"expose", "configmap", "kube-root-ca.crt", "--dry-run=client"},
	} {
		p.check(t, same{args: append(args, "-n", ns)})
	}
	// Created for real, each tool its own service, then exposed again.
	p.check(t, same{args: []string{"expose", "pod/single", "--name=svc-kubectl", "-n", ns}, kdynArgs: []string{"expose", "pod/single", "--name=svc-kdyn", "-n", ns},
		norm: toolSuffix})
	p.check(t, same{args: []string{"expose", "service", "svc-kubectl", "--port=9090", "--dry-run=client", "-o", "yaml", "-n", ns}, kdynArgs: []string{"expose", "service", "svc-kdyn", "--port=9090", "--dry-run=client", "-o", "yaml", "-n", ns},
		norm: toolSuffix})
}

// TestAutoscaleMatchesKubectl: autoscale prints the autoscaler kubectl
// prints.
func TestAutoscaleMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	deploy := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"a","image":"nginx"}]}}}}`
	p.kubectl(t, deploy, "create", "-n", ns, "-f", "-")
	p.kubectl(t, "", "create", "configmap", "cm", "-n", ns)
	file := filepath.Join(t.TempDir(), "d.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: fromfile}\nspec:\n  selector: {matchLabels: {app: f}}\n  template:\n    metadata: {labels: {app: f}}\n    spec: {containers: [{name: c, image: nginx}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"autoscale", "deployment", "web", "--max=5", "--dry-run=client"},
		{"autoscale", "deploy/web", "--min=2", "--max=10", "--cpu=80%", "--dry-run=client", "-o", "yaml"},
		{"autoscale", "deploy/web", "--max=3", "--cpu=500", "--memory=200", "--name=other", "--dry-run=client", "-o", "json"},
		{"autoscale", "-f", file, "--max=4", "--memory=60%", "--cpu=1.5", "--dry-run=client", "-o", "json"},
		{"autoscale", "deploy/web", "--max=0", "--dry-run=client"},
		{"autoscale", "deploy/web", "--max=2", "--min=3", "--dry-run=client"},
		{"autoscale", "deploy/web", "--max=2", "--cpu=x%", "--dry-run=client"},
		{"autoscale", "deploy/web", "--max=2", "--memory=lots", "--dry-run=client"},
	} {
		p.check(t, same{args: append(args, "-n", ns)})
	}
	p.check(t, same{args: []string{"autoscale", "deploy/web", "--max=5", "--name=hpa-kubectl", "-n", ns}, kdynArgs: []string{"autoscale", "deploy/web", "--max=5", "--name=hpa-kdyn", "-n", ns},
		norm: toolSuffix})
}

// toolSuffix replaces the tools' name suffixes ("-kubectl", "-kdyn") of
// objects each tool made for itself.
func toolSuffix(b []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("-kubectl"), []byte("-T")), []byte("-kdyn"), []byte("-T"))
}

// Flag and argument errors kubectl scripts check by their words: an
// invalid --request-timeout, a name with --all-namespaces, standard input
// for both the objects and the variables of set env, a context the
// kubeconfig lacks (config use-context, and its alias use).
func TestRequestErrorsMatchKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	for _, args := range [][]string{
		{"get", "pods", "--request-timeout=1p"},
		{"get", "pod", "valid-pod", "--all-namespaces"},
		{"get", "pods", "-A", "-o", "name", "--request-timeout=5"},
		{"set", "env", "-f", "-", "-"},
		// (use-context refused: the shared kubeconfig is not written.)
		{"config", "use-context", "nope"},
		{"config", "use", "nope"},
		{"config", "use-context", ""},
	} {
		p.check(t, same{args: args, stderr: true})
	}
}
