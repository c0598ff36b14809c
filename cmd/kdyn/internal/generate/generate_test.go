package generate_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// deadKubeconfig is a kubeconfig whose server does not answer: the
// --dry-run=client runs must send nothing.
func deadKubeconfig(t *testing.T) string {
	t.Helper()
	return clitest.WriteKubeconfig(t, "http://127.0.0.1:1")
}

// inputs writes the files the generators read into a new directory and
// returns it: a text file, a binary one, a directory of two files, an env
// file and a Docker config.
func inputs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("settings.ini", "[app]\nlevel = 3\n")
	write("logo.bin", "\x89PNG\r\n\x1a\n\x00\xff\xfe")
	write("conf/a.txt", "alpha\n")
	write("conf/b.txt", "beta")
	write("app.env", "\ufeffLEVEL=3\n# comment\n\n  NAME=web app\nURL=http://x/?a=1&b=<2>\n")
	write("docker.json", `{"auths":{"registry.example.com":{"auth":"dTpw"}}}`)
	if err := os.Mkdir(filepath.Join(dir, "conf", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGeneratorsGolden checks each generator's --dry-run=client output
// against testdata; bench/cli proves the same outputs byte-identical with
// kubectl v0.37.2's.
func TestGeneratorsGolden(t *testing.T) {
	kc := deadKubeconfig(t)
	dir := inputs(t)
	in := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		golden string
		args   []string
	}{
		{"configmap-literals.yaml", []string{"create", "configmap", "web", "--from-literal=level=3", "--from-literal=html=<b>&amp;</b>", "--from-literal=eq=a=b", "-o", "yaml"}},
		{"configmap-literals.json", []string{"create", "configmap", "web", "--from-literal=level=3", "--from-literal=html=<b>&amp;</b>", "--from-literal=eq=a=b", "-o", "json"}},
		{"configmap-files.yaml", []string{"create", "cm", "files", "--from-file=" + in("settings.ini"), "--from-file=" + in("conf"), "--from-file=logo=" + in("logo.bin"), "-n", "prod", "-o", "yaml"}},
		{"configmap-files.json", []string{"create", "cm", "files", "--from-file=" + in("settings.ini"), "--from-file=" + in("conf"), "--from-file=logo=" + in("logo.bin"), "-n", "prod", "-o", "json"}},
		{"configmap-env-hash.yaml", []string{"create", "configmap", "env", "--from-env-file=" + in("app.env"), "--append-hash", "-o", "yaml"}},
		{"configmap-summary.txt", []string{"create", "configmap", "web", "--from-literal=a=b"}},
		{"configmap-name.txt", []string{"create", "configmap", "web", "--from-literal=a=b", "--append-hash", "-o", "name"}},
		{"namespace.yaml", []string{"create", "namespace", "team-a", "-o", "yaml"}},
		{"namespace.json", []string{"create", "ns", "team-a", "-o", "json", "-n", "ignored"}},
		{"serviceaccount-save-config.yaml", []string{"create", "serviceaccount", "robot", "-n", "ci", "--save-config", "-o", "yaml"}},
		{"serviceaccount.json", []string{"create", "sa", "robot", "-o", "json"}},
		{"secret-generic.yaml", []string{"create", "secret", "generic", "db", "--from-literal=password=s3cr3t", "--from-file=" + in("logo.bin"), "--append-hash", "--save-config", "-o", "yaml"}},
		{"secret-generic.json", []string{"create", "secret", "generic", "db", "--type=example.com/db", "--from-env-file=" + in("app.env"), "--append-hash", "-o", "json"}},
		{"secret-docker.yaml", []string{"create", "secret", "docker-registry", "regcred", "--docker-server=registry.example.com", "--docker-username=me", "--docker-password=p<w>", "--docker-email=me@example.com", "-o", "yaml"}},
		{"secret-docker-file.json", []string{"create", "secret", "docker-registry", "regcred", "--from-file=" + in("docker.json"), "--append-hash", "-o", "json"}},
		{"secret-summary.txt", []string{"create", "secret", "generic", "db", "--from-literal=a=b"}},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			args := append([]string{"--kubeconfig", kc, "--cache-dir", t.TempDir()}, tc.args...)
			args = append(args, "--dry-run=client")
			r := clitest.Run(root.Main, args...)
			if r.Code != 0 || r.Stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
			}
			clitest.AssertGolden(t, tc.golden, r.Stdout)
		})
	}
}

// TestGeneratorErrors: kubectl's messages, before anything is sent.
func TestGeneratorErrors(t *testing.T) {
	kc := deadKubeconfig(t)
	dir := inputs(t)
	in := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"create", "configmap"}, "error: exactly one NAME is required, got 0\nSee 'kdyn create configmap -h' for help and examples\n"},
		{[]string{"create", "cm", "a", "b"}, "error: exactly one NAME is required, got 2\n"},
		{[]string{"create", "cm", "x", "--from-literal=novalue"}, "error: invalid literal source novalue, expected key=value\n"},
		{[]string{"create", "cm", "x", "--from-literal==v"}, "error: invalid literal source =v, expected key=value\n"},
		{[]string{"create", "cm", "x", "--from-literal=a=1", "--from-literal=a=2"}, `error: cannot add key "a", another key by that name already exists in Data for ConfigMap "x"` + "\n"},
		{[]string{"create", "cm", "x", "--from-literal=a b=1"}, `error: "a b" is not a valid key name for a ConfigMap: a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')` + "\n"},
		{[]string{"create", "cm", "x", "--from-file=" + in("missing")}, "error: error reading " + in("missing") + ": no such file or directory\n"},
		{[]string{"create", "cm", "x", "--from-file=k=" + in("conf")}, "error: cannot give a key name for a directory path\n"},
		{[]string{"create", "cm", "x", "--from-file==" + in("conf")}, "error: key name for file path " + in("conf") + " missing\n"},
		{[]string{"create", "cm", "x", "--from-file=k="}, "error: file path for key name k missing\n"},
		{[]string{"create", "cm", "x", "--from-file=a=b=c"}, "error: key names or file paths cannot contain '='\n"},
		{[]string{"create", "cm", "x", "--from-env-file=" + in("app.env"), "--from-literal=a=b"}, "error: from-env-file cannot be combined with from-file or from-literal\n"},
		{[]string{"create", "cm", "x", "--from-env-file=" + in("conf")}, "error: env config file cannot be a directory\n"},
		{[]string{"create", "secret", "generic", "x", "--from-env-file=" + in("conf")}, "error: env secret file cannot be a directory\n"},
		{[]string{"create", "secret", "generic", "x", "--from-literal=a=1", "--from-literal=a=2"}, "error: cannot add key a, another key by that name already exists\n"},
		{[]string{"create", "secret", "tls", "x", "--cert=" + in("settings.ini")}, "error: key and cert must be specified\n"},
		{[]string{"create", "secret", "tls", "x", "--cert=" + in("settings.ini"), "--key=" + in("missing")}, "error: Cannot read file " + in("missing") + ", open " + in("missing") + ": no such file or directory\n"},
		{[]string{"create", "secret", "docker-registry", "x"}, "error: either --from-file or the combination of --docker-username, --docker-password and --docker-server is required\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"--kubeconfig", kc, "--cache-dir", t.TempDir()}, tc.args...)
			args = append(args, "--dry-run=client")
			r := clitest.Run(root.Main, args...)
			if r.Code != 1 || !strings.HasPrefix(r.Stderr, tc.want) || r.Stdout != "" {
				t.Fatalf("exit %d\nstdout %q\nstderr %q\nwant exit 1 and stderr starting %q", r.Code, r.Stdout, r.Stderr, tc.want)
			}
		})
	}
	// An env file's bad key, and a line of invalid UTF-8.
	bad := filepath.Join(dir, "bad.env")
	if err := os.WriteFile(bad, []byte("OK=1\n1BAD=2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := clitest.Run(root.Main, "--kubeconfig", kc, "create", "cm", "x", "--from-env-file="+bad, "--dry-run=client")
	if r.Code != 1 || !strings.Contains(r.Stderr, `error: "1BAD" is not a valid key name: a valid environment variable name must consist of`) {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestGenerateWithoutKubeconfig: a client dry run needs no kubeconfig,
// as kubectl's does not (manifests generated in CI).
func TestGenerateWithoutKubeconfig(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	r := clitest.Run(root.Main, "create", "cm", "x", "--from-literal=a=b", "-n", "prod", "--dry-run=client", "-o", "yaml")
	want := "apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: prod\n"
	if r.Code != 0 || r.Stdout != want {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.Run(root.Main, "create", "cm", "x", "--from-literal=a=b")
	if r.Code != 1 || !strings.Contains(r.Stderr, "no configuration found") {
		t.Fatalf("a real create without a kubeconfig: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestSecretTLS: the pair is checked, and stored under tls.crt and tls.key.
func TestSecretTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeKeyPair(t, dir, "a")
	_, otherKey := writeKeyPair(t, dir, "b")
	kc := deadKubeconfig(t)
	r := clitest.Run(root.Main, "--kubeconfig", kc, "create", "secret", "tls", "web", "--cert="+certFile, "--key="+keyFile, "--dry-run=client", "-o", "yaml")
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	var got struct {
		Data map[string]string
		Type string
	}
	if err := yaml.Unmarshal([]byte(r.Stdout), &got); err != nil {
		t.Fatal(err)
	}
	for key, file := range map[string]string{"tls.crt": certFile, "tls.key": keyFile} {
		want, _ := os.ReadFile(file)
		if got.Data[key] != base64.StdEncoding.EncodeToString(want) {
			t.Errorf("%s is not %s's content", key, file)
		}
	}
	if got.Type != "kubernetes.io/tls" {
		t.Errorf("type %q", got.Type)
	}
	r = clitest.Run(root.Main, "--kubeconfig", kc, "create", "secret", "tls", "web", "--cert="+certFile, "--key="+otherKey, "--dry-run=client")
	if r.Code != 1 || !strings.Contains(r.Stderr, "private key does not match public key") {
		t.Fatalf("a mismatched pair: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

func writeKeyPair(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestCreateSendsOnePOST: a real create is one POST with the field
// manager, the object in kubectl's member order, and -o json prints the
// answer in the server's order without managedFields.
func TestCreateSendsOnePOST(t *testing.T) {
	var mu sync.Mutex
	var reqs []string
	srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, r.Method+" "+r.URL.RequestURI()+" "+string(body))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"web","namespace":"default","uid":"u1","resourceVersion":"7","managedFields":[{"manager":"kdyn"}]},"data":{"a":"b"}}`)
	})
	kc := clitest.WriteKubeconfig(t, srv.URL)
	r := clitest.Run(root.Main, "--kubeconfig", kc, "--cache-dir", t.TempDir(), "create", "cm", "web", "--from-literal=a=b", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	wantReq := `POST /api/v1/namespaces/default/configmaps?fieldManager=kubectl-create {"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"web"},"data":{"a":"b"}}`
	if len(reqs) != 1 || reqs[0] != wantReq {
		t.Fatalf("requests:\n%q\nwant\n%q", reqs, wantReq)
	}
	want := "{\n    \"kind\": \"ConfigMap\",\n    \"apiVersion\": \"v1\",\n    \"metadata\": {\n        \"name\": \"web\",\n        \"namespace\": \"default\",\n        \"uid\": \"u1\",\n        \"resourceVersion\": \"7\"\n    },\n    \"data\": {\n        \"a\": \"b\"\n    }\n}\n"
	if r.Stdout != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", r.Stdout, want)
	}
	// The server's refusal, in kubectl's words, with its exit code.
	srv2 := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"secrets \"db\" already exists","reason":"AlreadyExists","code":409}`)
	})
	r = clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv2.URL), "--cache-dir", t.TempDir(), "--exit-codes", "create", "secret", "generic", "db", "--from-literal=a=b", "--dry-run=server")
	if r.Code != 4 || r.Stderr != "error: failed to create secret secrets \"db\" already exists\n" {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
}
