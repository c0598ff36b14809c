package testenv_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/integration/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

// verifiedClient builds a client from the Env's exported data with net/http
// only, to prove that CAData really verifies the serving certificate.
func verifiedClient(t *testing.T, env *testenv.Env, cert *tls.Certificate) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(env.CAData()) {
		t.Fatal("CAData holds no PEM certificate")
	}
	tc := &tls.Config{RootCAs: pool}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}, Timeout: 30 * time.Second}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func do(t *testing.T, c *http.Client, method, url, token string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp.StatusCode, data
}

func TestReadyzAdminTokenVerifiedTLS(t *testing.T) {
	env := testenv.Shared(t)
	if !strings.HasPrefix(env.Host(), "https://127.0.0.1:") {
		t.Errorf("Host() = %q", env.Host())
	}
	code, body := do(t, verifiedClient(t, env, nil), "GET", env.Host()+"/readyz", env.AdminToken(), nil)
	if code != 200 || string(body) != "ok" {
		t.Fatalf("GET /readyz = %d %q, want 200 ok", code, body)
	}

	// Without the serving CA, verification must fail.
	plain := &http.Client{Timeout: 10 * time.Second}
	_, err := plain.Get(env.Host() + "/readyz")
	var uerr x509.UnknownAuthorityError
	if !errors.As(err, &uerr) {
		t.Errorf("GET without CAData: err = %v, want x509.UnknownAuthorityError", err)
	}
}

func TestClientCertVersion(t *testing.T) {
	env := testenv.Shared(t)
	cert, err := tls.X509KeyPair(env.ClientCertData(), env.ClientKeyData())
	if err != nil {
		t.Fatal(err)
	}
	code, body := do(t, verifiedClient(t, env, &cert), "GET", env.Host()+"/version", "", nil)
	if code != 200 {
		t.Fatalf("GET /version = %d %s", code, body)
	}
	var v struct{ GitVersion, Major, Minor string }
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.37.2" || v.Major != "1" || v.Minor != "37" {
		t.Errorf("version = %+v, want v1.37.2 (1.37)", v)
	}
}

// TestWhoAmI checks each identity with a SelfSubjectReview, through
// Env.HTTPClient.
func TestWhoAmI(t *testing.T) {
	env := testenv.Shared(t)
	review := map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
	for _, tc := range []struct {
		user      testenv.User
		name      string
		masters   bool
		wantGroup string
	}{
		{testenv.Admin, testenv.AdminUserName, true, "system:masters"},
		{testenv.CertAdmin, testenv.CertAdminUserName, true, "system:masters"},
		{testenv.Nobody, testenv.NobodyUserName, false, "system:authenticated"},
	} {
		t.Run(tc.user.String(), func(t *testing.T) {
			if tc.user.Name() != tc.name {
				t.Errorf("Name() = %q, want %q", tc.user.Name(), tc.name)
			}
			c := env.HTTPClient(tc.user)
			defer c.CloseIdleConnections()
			code, body := do(t, c, "POST", env.Host()+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "", review)
			if code != 201 {
				t.Fatalf("POST selfsubjectreviews = %d %s", code, body)
			}
			var r struct {
				Status struct {
					UserInfo struct {
						Username string
						Groups   []string
					}
				}
			}
			if err := json.Unmarshal(body, &r); err != nil {
				t.Fatal(err)
			}
			ui := r.Status.UserInfo
			if ui.Username != tc.name || !slices.Contains(ui.Groups, tc.wantGroup) ||
				slices.Contains(ui.Groups, "system:masters") != tc.masters {
				t.Errorf("user info = %+v, want %s in %s (system:masters: %v)", ui, tc.name, tc.wantGroup, tc.masters)
			}
		})
	}
}

func TestNobodyForbidden(t *testing.T) {
	env := testenv.Shared(t)
	code, body := do(t, verifiedClient(t, env, nil), "GET", env.Host()+"/api/v1/secrets", env.NobodyToken(), nil)
	if code != 403 {
		t.Fatalf("nobody GET /api/v1/secrets = %d %s, want 403", code, body)
	}
	if !strings.Contains(string(body), testenv.NobodyUserName) {
		t.Errorf("403 body does not name %s: %s", testenv.NobodyUserName, body)
	}
}

func TestWrongTokenUnauthorized(t *testing.T) {
	env := testenv.Shared(t)
	code, body := do(t, verifiedClient(t, env, nil), "GET", env.Host()+"/api/v1/namespaces", "not-a-token", nil)
	if code != 401 {
		t.Fatalf("GET with a wrong token = %d %s, want 401", code, body)
	}
}

func TestRESTConfig(t *testing.T) {
	env := testenv.Shared(t)
	a := env.RESTConfig(testenv.Admin)
	if a.Host != env.Host() || a.BearerToken != env.AdminToken() ||
		!bytes.Equal(a.TLSClientConfig.CAData, env.CAData()) || len(a.TLSClientConfig.CertData) != 0 {
		t.Errorf("RESTConfig(Admin) = %v", a)
	}
	a.TLSClientConfig.CAData[0] ^= 0xff
	a.BearerToken = "changed"
	if b := env.RESTConfig(testenv.Admin); b.BearerToken != env.AdminToken() || !bytes.Equal(b.TLSClientConfig.CAData, env.CAData()) {
		t.Error("RESTConfig does not return a fresh copy")
	}
	c := env.RESTConfig(testenv.CertAdmin)
	if c.BearerToken != "" || !bytes.Equal(c.TLSClientConfig.CertData, env.ClientCertData()) ||
		!bytes.Equal(c.TLSClientConfig.KeyData, env.ClientKeyData()) {
		t.Errorf("RESTConfig(CertAdmin) = %v", c)
	}
	if n := env.RESTConfig(testenv.Nobody); n.BearerToken != env.NobodyToken() {
		t.Errorf("RESTConfig(Nobody) = %v", n)
	}
}

type kubeconfig struct {
	CurrentContext string `json:"current-context"`
	Clusters       []struct {
		Name    string
		Cluster struct {
			Server string
			CAData string `json:"certificate-authority-data"`
		}
	}
	Users []struct {
		Name string
		User struct {
			Token    string
			CertData string `json:"client-certificate-data"`
			KeyData  string `json:"client-key-data"`
		}
	}
	Contexts []struct {
		Name    string
		Context struct{ Cluster, User string }
	}
}

func TestKubeconfig(t *testing.T) {
	env := testenv.Shared(t)
	extra := filepath.Join(t.TempDir(), "kc")
	if err := env.WriteKubeconfig(extra, testenv.Nobody); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		current string
	}{
		{env.KubeconfigPath(testenv.Admin), "admin"},
		{env.KubeconfigPath(testenv.CertAdmin), "cert-admin"},
		{env.KubeconfigPath(testenv.Nobody), "nobody"},
		{extra, "nobody"},
	} {
		data, err := os.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var kc kubeconfig
		if err := yaml.Unmarshal(data, &kc); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if kc.CurrentContext != tc.current {
			t.Errorf("%s: current-context = %q, want %q", tc.path, kc.CurrentContext, tc.current)
		}
		if len(kc.Clusters) != 1 || kc.Clusters[0].Name != testenv.ClusterName || kc.Clusters[0].Cluster.Server != env.Host() {
			t.Fatalf("%s: clusters = %+v", tc.path, kc.Clusters)
		}
		ca, _ := base64.StdEncoding.DecodeString(kc.Clusters[0].Cluster.CAData)
		if !bytes.Equal(ca, env.CAData()) {
			t.Errorf("%s: certificate-authority-data is not CAData", tc.path)
		}
		var names []string
		for _, c := range kc.Contexts {
			names = append(names, c.Name)
			if c.Context.Cluster != testenv.ClusterName || c.Context.User != c.Name {
				t.Errorf("%s: context %+v", tc.path, c)
			}
		}
		if !slices.Equal(names, []string{"admin", "cert-admin", "nobody"}) {
			t.Errorf("%s: contexts %v", tc.path, names)
		}
		for _, u := range kc.Users {
			switch u.Name {
			case "admin":
				if u.User.Token != env.AdminToken() {
					t.Errorf("%s: admin token differs", tc.path)
				}
			case "nobody":
				if u.User.Token != env.NobodyToken() {
					t.Errorf("%s: nobody token differs", tc.path)
				}
			case "cert-admin":
				cert, _ := base64.StdEncoding.DecodeString(u.User.CertData)
				key, _ := base64.StdEncoding.DecodeString(u.User.KeyData)
				if !bytes.Equal(cert, env.ClientCertData()) || !bytes.Equal(key, env.ClientKeyData()) {
					t.Errorf("%s: cert-admin certificate differs", tc.path)
				}
			default:
				t.Errorf("%s: unexpected user %q", tc.path, u.Name)
			}
		}
	}
}

func createNamespace(t *testing.T, c *http.Client, env *testenv.Env, name string) {
	t.Helper()
	ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
	if code, body := do(t, c, "POST", env.Host()+"/api/v1/namespaces", env.AdminToken(), ns); code != 201 {
		t.Fatalf("create namespace %s = %d %s", name, code, body)
	}
}

func TestRestartKeepsData(t *testing.T) {
	env := testenv.Shared(t)
	c := verifiedClient(t, env, nil)
	// A fresh name on every run: the shared control plane outlives one
	// iteration of -count.
	ns := "kdyn-restart-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	createNamespace(t, c, env, ns)

	start := time.Now()
	if err := env.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("Restart took %s", time.Since(start).Round(time.Millisecond))
	c.CloseIdleConnections()
	code, body := do(t, c, "GET", env.Host()+"/api/v1/namespaces/"+ns, env.AdminToken(), nil)
	if code != 200 {
		t.Fatalf("GET namespace after restart = %d %s", code, body)
	}
	if err := env.Err(); err != nil {
		t.Errorf("Err() after Restart = %v", err)
	}
}

// watchFirst opens a watch and returns its first event's type and object.
func watchFirst(t *testing.T, c *http.Client, url string) (string, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		return "HTTP " + strconv.Itoa(resp.StatusCode), map[string]any{"body": string(body)}
	}
	line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the first watch event: %v", err)
	}
	var ev struct {
		Type   string
		Object map[string]any
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		t.Fatalf("watch event %s: %v", line, err)
	}
	return ev.Type, ev.Object
}

func TestCompact(t *testing.T) {
	// The watch cache would serve the old revision from memory; without
	// it, watches go to etcd and see the compaction.
	env := testenv.New(t, testenv.Options{ExtraArgs: []string{"--watch-cache=false"}})
	c := env.HTTPClient(testenv.Admin)
	defer c.CloseIdleConnections()
	cms := env.Host() + "/api/v1/namespaces/default/configmaps"

	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "kdyn-compact"}, "data": map[string]any{"n": "0"}}
	code, body := do(t, c, "POST", cms, "", cm)
	if code != 201 {
		t.Fatalf("create ConfigMap = %d %s", code, body)
	}
	var created struct {
		Metadata struct{ ResourceVersion string }
	}
	json.Unmarshal(body, &created)
	oldRV := created.Metadata.ResourceVersion
	for i := 1; i <= 3; i++ {
		patch := `{"data":{"n":"` + strconv.Itoa(i) + `"}}`
		req, _ := http.NewRequestWithContext(t.Context(), "PATCH", cms+"/kdyn-compact", strings.NewReader(patch))
		req.Header.Set("Content-Type", "application/merge-patch+json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("PATCH = %s", resp.Status)
		}
	}

	// Before compaction the old revision can be watched.
	if typ, obj := watchFirst(t, c, cms+"?watch=1&resourceVersion="+oldRV); typ != "MODIFIED" {
		t.Fatalf("watch from %s before Compact: first event %s %v, want MODIFIED", oldRV, typ, obj)
	}

	rev, err := env.EtcdRevision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if old, _ := strconv.ParseInt(oldRV, 10, 64); rev <= old {
		t.Fatalf("etcd revision %d is not after resourceVersion %s", rev, oldRV)
	}
	if err := env.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := env.Compact(t.Context()); err != nil {
		t.Fatalf("second Compact without writes: %v", err)
	}

	typ, obj := watchFirst(t, c, cms+"?watch=1&resourceVersion="+oldRV)
	if typ != "ERROR" || obj["code"] != float64(410) {
		t.Fatalf("watch from %s after Compact: first event %s %v, want ERROR 410", oldRV, typ, obj)
	}
	t.Logf("watch from compacted %s: %v %v", oldRV, obj["reason"], obj["message"])

	// A list at the old revision reaches etcd too.
	code, body = do(t, c, "GET", cms+"?resourceVersion="+oldRV+"&resourceVersionMatch=Exact", "", nil)
	if code != 410 {
		t.Errorf("exact list at compacted %s = %d %s, want 410", oldRV, code, body)
	}
}

// TestReuseDir checks that a second Env on the same Dir keeps credentials,
// data and (free) ports, and that Stop is idempotent.
func TestReuseDir(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	dir := t.TempDir()
	env := testenv.New(t, testenv.Options{Dir: dir})
	c := env.HTTPClient(testenv.Admin)
	createNamespace(t, c, env, "kdyn-reuse")
	c.CloseIdleConnections()
	host, token, ca := env.Host(), env.AdminToken(), env.CAData()
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := env.Stop(); err != nil {
		t.Errorf("second Stop = %v", err)
	}
	if err := env.Restart(t.Context()); err == nil {
		t.Error("Restart after Stop succeeded")
	}
	if env.Err() == nil {
		t.Error("Err() after Stop = nil")
	}
	if _, err := os.Stat(filepath.Join(dir, "state.json")); err != nil {
		t.Fatalf("Stop removed a caller's Dir: %v", err)
	}

	env2 := testenv.New(t, testenv.Options{Dir: dir})
	if env2.AdminToken() != token || !bytes.Equal(env2.CAData(), ca) {
		t.Error("credentials changed")
	}
	if env2.Host() != host {
		t.Logf("ports changed (were taken): %s -> %s", host, env2.Host())
	}
	c2 := env2.HTTPClient(testenv.Admin)
	defer c2.CloseIdleConnections()
	if code, body := do(t, c2, "GET", env2.Host()+"/api/v1/namespaces/kdyn-reuse", "", nil); code != 200 {
		t.Fatalf("GET namespace in the reused dir = %d %s", code, body)
	}

	// A directory is used by one Env at a time.
	if e, err := testenv.Start(t.Context(), testenv.Options{Dir: dir}); err == nil {
		e.Stop()
		t.Fatal("second Start on a directory in use succeeded")
	} else {
		t.Logf("second Start on the same Dir: %v", err)
	}
}

// TestStartFailureReportsOutput checks that a control plane that exits at
// once fails Start quickly with its output in the error.
func TestStartFailureReportsOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	start := time.Now()
	_, err := testenv.Start(t.Context(), testenv.Options{ExtraArgs: []string{"--no-such-flag"}})
	if err == nil {
		t.Fatal("Start with a bad flag succeeded")
	}
	if !strings.Contains(err.Error(), "unknown flag: --no-such-flag") || !strings.Contains(err.Error(), "exited") {
		t.Errorf("error does not report the exit and the output: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("failing Start took %s", d)
	}
}

// TestControllers: with Options.Controllers and Scheduler,
// kube-controller-manager and kube-scheduler run beside the apiserver: a new namespace gets its
// "default" ServiceAccount, a Deployment its ReplicaSet and Pods, a
// scheduler binds a pod to a ready node, and a deleted namespace goes away.
func TestControllers(t *testing.T) {
	env := testenv.New(t, testenv.Options{Controllers: true, Scheduler: true})
	c := verifiedClient(t, env, nil)
	ns := "kdyn-controllers"
	createNamespace(t, c, env, ns)
	eventually := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after 60 s (kube-controller-manager.log and kube-scheduler.log in %s)", what, env.Dir())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	get := func(path string) (int, []byte) { return do(t, c, "GET", env.Host()+path, env.AdminToken(), nil) }
	eventually("the default ServiceAccount", func() bool {
		code, _ := get("/api/v1/namespaces/" + ns + "/serviceaccounts/default")
		return code == 200
	})

	node := map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n1"}}
	if code, body := do(t, c, "POST", env.Host()+"/api/v1/nodes", env.AdminToken(), node); code != 201 {
		t.Fatalf("create node = %d %s", code, body)
	}
	status := map[string]any{"status": map[string]any{
		"conditions":  []any{map[string]any{"type": "Ready", "status": "True", "lastHeartbeatTime": time.Now().UTC().Format(time.RFC3339)}},
		"allocatable": map[string]any{"cpu": "4", "memory": "8Gi", "pods": "110"},
		"capacity":    map[string]any{"cpu": "4", "memory": "8Gi", "pods": "110"},
	}}
	if code, body := doPatch(t, c, env, "/api/v1/nodes/n1/status", status); code != 200 {
		t.Fatalf("node status = %d %s", code, body)
	}
	labels := map[string]any{"app": "web"}
	deploy := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"replicas": 2, "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}}
	if code, body := do(t, c, "POST", env.Host()+"/apis/apps/v1/namespaces/"+ns+"/deployments", env.AdminToken(), deploy); code != 201 {
		t.Fatalf("create deployment = %d %s", code, body)
	}
	eventually("two pods bound to the node", func() bool {
		_, body := get("/api/v1/namespaces/" + ns + "/pods")
		return bytes.Count(body, []byte(`"nodeName":"n1"`)) == 2
	})
	// A namespace of objects without pods (pods bound to a node without a
	// kubelet stay Terminating) is deleted with its contents.
	gone := "kdyn-controllers-gone"
	createNamespace(t, c, env, gone)
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}
	if code, body := do(t, c, "POST", env.Host()+"/api/v1/namespaces/"+gone+"/configmaps", env.AdminToken(), cm); code != 201 {
		t.Fatalf("create configmap = %d %s", code, body)
	}
	if code, body := do(t, c, "DELETE", env.Host()+"/api/v1/namespaces/"+gone, env.AdminToken(), nil); code != 200 {
		t.Fatalf("delete namespace = %d %s", code, body)
	}
	eventually("the namespace deleted", func() bool {
		code, _ := get("/api/v1/namespaces/" + gone)
		return code == 404
	})
}

// doPatch sends a merge patch.
func doPatch(t *testing.T, c *http.Client, env *testenv.Env, path string, patch any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "PATCH", env.Host()+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+env.AdminToken())
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// TestKWOKNodes: with Options.Nodes, simulated nodes are Ready when Start
// returns, a Deployment's pods run on them (Running, Ready, with an IP),
// the apiserver proxies a pod's log request to KWOK's kubelet API over
// verified TLS (the log a Logs object names), and a namespace with running
// pods is deleted with them.
func TestKWOKNodes(t *testing.T) {
	env := testenv.New(t, testenv.Options{Controllers: true, Scheduler: true, Nodes: 2})
	c := verifiedClient(t, env, nil)
	get := func(path string) (int, []byte) { return do(t, c, "GET", env.Host()+path, env.AdminToken(), nil) }
	eventually := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after 60 s (logs in %s)", what, env.Dir())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for i := range 2 {
		code, body := get("/api/v1/nodes/" + testenv.NodeName(i))
		if code != 200 || !bytes.Contains(body, []byte(`"type":"Ready","status":"True"`)) {
			t.Fatalf("node %s = %d %s", testenv.NodeName(i), code, body)
		}
		if !bytes.Contains(body, []byte(fmt.Sprintf(`"kubeletEndpoint":{"Port":%d}`, env.KubeletPort()))) {
			t.Errorf("node %s does not name the kubelet port %d: %s", testenv.NodeName(i), env.KubeletPort(), body)
		}
	}

	ns := "kdyn-kwok"
	createNamespace(t, c, env, ns)
	labels := map[string]any{"app": "web"}
	deploy := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"replicas": 2, "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}}
	if code, body := do(t, c, "POST", env.Host()+"/apis/apps/v1/namespaces/"+ns+"/deployments", env.AdminToken(), deploy); code != 201 {
		t.Fatalf("create deployment = %d %s", code, body)
	}
	var pod string
	eventually("two pods Running", func() bool {
		_, body := get("/api/v1/namespaces/" + ns + "/pods")
		var list struct {
			Items []struct {
				Metadata struct{ Name string }
				Status   struct {
					Phase string
					PodIP string `json:"podIP"`
				}
			}
		}
		if json.Unmarshal(body, &list) != nil || len(list.Items) != 2 {
			return false
		}
		for _, p := range list.Items {
			if p.Status.Phase != "Running" || p.Status.PodIP == "" {
				return false
			}
		}
		pod = list.Items[0].Metadata.Name
		return true
	})

	logFile := filepath.Join(t.TempDir(), "c.log")
	if err := os.WriteFile(logFile, []byte("2026-12-05T10:00:00Z stdout F hello from kwok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := map[string]any{"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
		"metadata": map[string]any{"name": pod},
		"spec":     map[string]any{"logs": []any{map[string]any{"containers": []any{"c"}, "logsFile": logFile}}}}
	if code, body := do(t, c, "POST", env.Host()+"/apis/kwok.x-k8s.io/v1alpha1/namespaces/"+ns+"/logs", env.AdminToken(), logs); code != 201 {
		t.Fatalf("create Logs = %d %s", code, body)
	}
	eventually("the pod's log", func() bool {
		code, body := get("/api/v1/namespaces/" + ns + "/pods/" + pod + "/log")
		return code == 200 && string(body) == "hello from kwok\n"
	})

	if code, body := do(t, c, "DELETE", env.Host()+"/api/v1/namespaces/"+ns, env.AdminToken(), nil); code != 200 {
		t.Fatalf("delete namespace = %d %s", code, body)
	}
	eventually("the namespace deleted with its pods", func() bool {
		code, _ := get("/api/v1/namespaces/" + ns)
		return code == 404
	})
}
