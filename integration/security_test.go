package integration_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/rest"
)

// Security properties against the real kube-apiserver. TestTLSVerification
// (foundation_test.go) covers rest.Config directly; these go through
// kubeconfig files and the kdyn command line (the built binary).

// otherCA returns a PEM CA certificate that did not sign the server's.
func otherCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(99), Subject: pkix.Name{CommonName: "not-the-kdyn-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// kubeconfigFile writes a kubeconfig with one cluster (the given cluster
// fields) and one user (the given user fields), both YAML flow mappings,
// and returns its path.
func kubeconfigFile(t *testing.T, cluster, user string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: x
clusters:
- name: c
  cluster: {%s}
users:
- name: u
  user: {%s}
contexts:
- name: x
  context: {cluster: c, user: u, namespace: default}
`, cluster, user)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func b64(b []byte) string { return strconv.Quote(base64.StdEncoding.EncodeToString(b)) }

// TestTLSVerificationThroughKubeconfig: verification is on unless the
// kubeconfig (or --insecure-skip-tls-verify) turns it off. A kubeconfig
// without a CA, or with the wrong CA, fails with an error saying the
// certificate is signed by an unknown authority; tls-server-name is used
// for verification (localhost is in the serving certificate, a wrong name
// fails and is named); the overrides win over the file.
func TestTLSVerificationThroughKubeconfig(t *testing.T) {
	env := testenv.Shared(t)
	token := "token: " + strconv.Quote(env.AdminToken())
	server := "server: " + strconv.Quote(env.Host())
	ca := "certificate-authority-data: " + b64(env.CAData())
	tests := []struct {
		name, cluster string
		o             kubeconfig.Overrides
		wantErr       string // "" means success
	}{
		{"no CA", server, kubeconfig.Overrides{}, "certificate signed by unknown authority"},
		{"wrong CA", server + ", certificate-authority-data: " + b64(otherCA(t)), kubeconfig.Overrides{}, "certificate signed by unknown authority"},
		{"right CA", server + ", " + ca, kubeconfig.Overrides{}, ""},
		{"insecure-skip-tls-verify", server + ", insecure-skip-tls-verify: true", kubeconfig.Overrides{}, ""},
		{"tls-server-name in the certificate", server + ", " + ca + ", tls-server-name: localhost", kubeconfig.Overrides{}, ""},
		{"wrong tls-server-name", server + ", " + ca + ", tls-server-name: wrong.kdyn.test", kubeconfig.Overrides{}, "wrong.kdyn.test"},
		{"--tls-server-name wins over the file", server + ", " + ca + ", tls-server-name: localhost", kubeconfig.Overrides{TLSServerName: "wrong.kdyn.test"}, "wrong.kdyn.test"},
		{"--insecure-skip-tls-verify wins over a wrong CA", server + ", certificate-authority-data: " + b64(otherCA(t)),
			kubeconfig.Overrides{InsecureSkipTLSVerify: func() *bool { v := true; return &v }()}, ""},
		{"--insecure-skip-tls-verify=false wins over the file", server + ", insecure-skip-tls-verify: true",
			kubeconfig.Overrides{InsecureSkipTLSVerify: func() *bool { v := false; return &v }()}, "certificate signed by unknown authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := kubeconfig.Resolve(&kubeconfig.LoadingRules{ExplicitPath: kubeconfigFile(t, tt.cluster, token)}, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			c, err := rest.NewForConfig(res.Config)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Get().AbsPath("/version").DoRaw(t.Context())
			if tt.wantErr == "" && err != nil {
				t.Fatalf("GET /version: %v", err)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("GET /version = %v, want an error containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), env.AdminToken()) {
					t.Fatalf("the TLS error quotes the token: %v", err)
				}
			}
		})
	}

	// The same through kdyn's flags.
	kc := kubeconfigFile(t, server+", "+ca, token)
	for _, tt := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--tls-server-name", "localhost"}, ""},
		{[]string{"--tls-server-name", "wrong.kdyn.test"}, "wrong.kdyn.test"},
		{[]string{"--server", strings.Replace(env.Host(), "127.0.0.1", "localhost", 1)}, ""},
	} {
		r := kdynMain(t, append([]string{"--kubeconfig", kc, "--cache-dir", t.TempDir()}, append(tt.args, "version")...)...)
		if tt.wantErr == "" && r.code != 0 {
			t.Errorf("kdyn %v version: exit %d\n%s", tt.args, r.code, r.stderr)
		}
		if tt.wantErr != "" && (r.code == 0 || !strings.Contains(r.stderr, tt.wantErr)) {
			t.Errorf("kdyn %v version: exit %d, want a failure naming %q:\n%s", tt.args, r.code, tt.wantErr, r.stderr)
		}
	}
}

type mainResult struct {
	code           int
	stdout, stderr string
}

// kdynBuild is the kdyn binary, built once for the test process.
var kdynBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// kdynMain runs the kdyn command line (cmd/kdyn, built on first use) with
// args and an empty standard input.
func kdynMain(t *testing.T, args ...string) mainResult {
	t.Helper()
	kdynBuild.once.Do(func() {
		kdynBuild.dir, kdynBuild.err = os.MkdirTemp("", "kdyn-integration-")
		if kdynBuild.err != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		kdynBuild.path = filepath.Join(kdynBuild.dir, "kdyn")
		cmd := exec.Command("go", "build", "-o", kdynBuild.path, "./cmd/kdyn")
		cmd.Dir = filepath.Join(filepath.Dir(file), "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			kdynBuild.err = fmt.Errorf("build kdyn: %v\n%s", err, out)
		}
	})
	if kdynBuild.err != nil {
		t.Fatal(kdynBuild.err)
	}
	cmd := exec.CommandContext(t.Context(), kdynBuild.path, args...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return mainResult{code: ee.ExitCode(), stdout: out.String(), stderr: errb.String()}
	case err != nil:
		t.Fatalf("run kdyn %v: %v", args, err)
	}
	return mainResult{stdout: out.String(), stderr: errb.String()}
}

// removeKdynBinary removes what kdynMain built.
func removeKdynBinary() {
	if kdynBuild.dir != "" {
		os.RemoveAll(kdynBuild.dir)
	}
}

// TestCLINeverPrintsCredentials runs kdyn get secrets at every -v level
// from 0 to 10 with each kind of credential: a client key (client-key-data),
// an exec plugin's token, a basic auth password (sent; the server, which
// has no basic authentication, treats it as anonymous), a wrong token (401), a token without RBAC rights (403), and a good token
// over a connection whose certificate does not verify. Neither stdout nor
// stderr ever holds the credential, nor the data of a Secret in the
// listed namespace; where the request is authorized it succeeds.
func TestCLINeverPrintsCredentials(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	ns := newNamespace(t, c)
	const secretValue = "secret-value-SUPERSECRET"
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "s", "namespace": ns}, "stringData": map[string]any{"password": secretValue}}}
	if _, err := c.Resource(secretGVR).Namespace(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plugin := buildExecPlugin(t)
	count := filepath.Join(t.TempDir(), "count")
	server := "server: " + strconv.Quote(env.Host())
	ca := "certificate-authority-data: " + b64(env.CAData())
	keyB64 := base64.StdEncoding.EncodeToString(env.ClientKeyData())
	var keyLines []string
	for _, l := range strings.Split(string(env.ClientKeyData()), "\n") {
		if len(l) >= 16 && !strings.HasPrefix(l, "-----") {
			keyLines = append(keyLines, l)
		}
	}
	const password = "pw-SUPERSECRET-basic-0123456789"
	tests := []struct {
		name, cluster, user string
		secrets             []string
		wantCode            int
		wantErr             string
	}{
		{"client key", server + ", " + ca,
			"client-certificate-data: " + b64(env.ClientCertData()) + ", client-key-data: " + strconv.Quote(keyB64),
			append([]string{keyB64}, keyLines...), 0, ""},
		{"exec plugin token", server + ", " + ca,
			`exec: {apiVersion: client.authentication.k8s.io/v1, command: ` + strconv.Quote(plugin) + `, interactiveMode: Never, env: [{name: TOKEN, value: ` +
				strconv.Quote(env.AdminToken()) + `}, {name: COUNT_FILE, value: ` + strconv.Quote(count) + `}]}`,
			[]string{env.AdminToken()}, 0, ""},
		// kube-apiserver has no basic authentication: the request is
		// anonymous, and forbidden.
		{"basic auth", server + ", " + ca, "username: alice, password: " + password, []string{password}, 1, `User "system:anonymous"`},
		{"wrong token (401)", server + ", " + ca, "token: tok-SUPERSECRET-wrong-0123456789", []string{"tok-SUPERSECRET-wrong-0123456789"}, 1, "Unauthorized"},
		{"forbidden token (403)", server + ", " + ca, "token: " + strconv.Quote(env.NobodyToken()), []string{env.NobodyToken()}, 1, "Forbidden"},
		{"TLS failure", server + ", certificate-authority-data: " + b64(otherCA(t)), "token: " + strconv.Quote(env.AdminToken()),
			[]string{env.AdminToken()}, 1, "certificate signed by unknown authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := kubeconfigFile(t, tt.cluster, tt.user)
			cache := t.TempDir()
			for v := 0; v <= 10; v++ {
				r := kdynMain(t, "--kubeconfig", kc, "--cache-dir", cache, "-v", strconv.Itoa(v), "get", "secrets", "-n", ns)
				if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
					t.Fatalf("-v %d: exit %d, want %d with %q:\nstdout:\n%s\nstderr:\n%s", v, r.code, tt.wantCode, tt.wantErr, r.stdout, r.stderr)
				}
				if tt.wantCode == 0 && !strings.Contains(r.stdout, "Opaque") {
					t.Fatalf("-v %d: the Secret is not listed:\n%s", v, r.stdout)
				}
				all := r.stdout + r.stderr
				for _, s := range append(tt.secrets, secretValue, base64.StdEncoding.EncodeToString([]byte(secretValue))) {
					if strings.Contains(all, s) {
						t.Fatalf("-v %d printed the credential %q:\nstdout:\n%s\nstderr:\n%s", v, s, r.stdout, r.stderr)
					}
				}
				if v >= 6 && tt.name != "TLS failure" && !strings.Contains(r.stderr, `"Response"`) {
					t.Fatalf("-v %d did not log the request, so the test proves little:\n%s", v, r.stderr)
				}
			}
		})
	}
}
