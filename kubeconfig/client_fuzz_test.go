package kubeconfig

import (
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/rest"
)

// fuzzMaxConfig bounds one fuzzed kubeconfig.
const fuzzMaxConfig = 16 << 10

// fuzzResolveSeed is a kubeconfig using every credential form, for the
// fuzzer to mutate.
const fuzzResolveSeed = `apiVersion: v1
kind: Config
current-context: full
clusters:
- name: tls
  cluster:
    server: https://k.example:6443
    tls-server-name: api.internal
    certificate-authority-data: bm90LWEtY2VydA==
    proxy-url: socks5://127.0.0.1:1080
- name: plain
  cluster:
    server: http://10.0.0.1:8080
    insecure-skip-tls-verify: true
users:
- name: tok
  user:
    token: fuzz-secret-token-0123456789
    as: jane
    as-groups: [devs]
    as-user-extra: {scopes: [a]}
- name: basic
  user:
    username: bob
    password: fuzz-secret-password-0123456789
- name: exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: kdyn-fuzz-plugin
      interactiveMode: Never
      env: [{name: A, value: b}]
- name: cert
  user:
    client-certificate-data: bm90LWEtY2VydA==
    client-key-data: ZnV6ei1zZWNyZXQta2V5LWRhdGE=
contexts:
- name: full
  context: {cluster: tls, user: tok, namespace: prod}
- name: plain-basic
  context: {cluster: plain, user: basic}
- name: exec
  context: {cluster: tls, user: exec}
- name: cert
  context: {cluster: plain, user: cert}
`

// FuzzResolve parses a fuzzed kubeconfig and resolves it with fuzzed
// Overrides (kdyn's global flags), then builds a rest.Client from the
// result. Whatever the input, nothing panics, and:
//   - a Result has a Config and a namespace, and honours the overrides it
//     was given (server, namespace, token, insecure-skip-tls-verify);
//   - an error never quotes a token or password of the kubeconfig or the
//     token override;
//   - a Config that rest accepts never sends credentials over plain http
//     except to a loopback host with insecure-skip-tls-verify.
//
// Seeds are in testdata/fuzz/FuzzResolve.
func FuzzResolve(f *testing.F) {
	f.Add([]byte(fuzzResolveSeed), "", "", "", "", "", "", "", uint8(0))
	f.Add([]byte(fuzzResolveSeed), "plain-basic", "", "", "ns", "", "", "", uint8(2))
	f.Add([]byte(fuzzResolveSeed), "exec", "plain", "", "", "http://127.0.0.1:8080", "", "override-token-0123456789", uint8(1))
	f.Add([]byte(fileA), "shared-ctx", "", "shared-user", "", "", "name", "", uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, context, cluster, user, namespace, server, tlsServerName, token string, flags uint8) {
		if len(data) > fuzzMaxConfig {
			t.Skip("kubeconfig larger than the fuzz bound")
		}
		all := string(data) + "\x00" + context + "\x00" + cluster + "\x00" + user + "\x00" + namespace + "\x00" + server + "\x00" + tlsServerName + "\x00" + token
		// rest reads the CA and client certificate files a kubeconfig
		// names: keep the fuzzer away from devices and proc files that
		// never end.
		for _, bad := range []string{"dev/", "proc/", "sys/", "fd/"} {
			if strings.Contains(all, bad) {
				t.Skip("names a device or proc file")
			}
		}
		c, err := Parse(data, "/fuzz/config")
		if err != nil {
			// Parse errors name the file and line; they must not quote
			// the credential on that line.
			for _, m := range secretFieldRE.FindAllStringSubmatch(string(data), -1) {
				if secret := strings.Trim(m[2], `"' `); len(secret) >= 8 && strings.Count(all, secret) == 1 && strings.Contains(err.Error(), secret) {
					t.Fatalf("the Parse error quotes the credential %q: %v", secret, err)
				}
			}
			return
		}
		o := Overrides{
			Context: context, Cluster: cluster, User: user, Namespace: namespace,
			Server: server, TLSServerName: tlsServerName, Token: token,
			Impersonate:    map[bool]string{true: "fuzz-as"}[flags&8 != 0],
			ImpersonateUID: map[bool]string{true: "fuzz-uid"}[flags&16 != 0],
			Timeout:        time.Duration(flags>>5) * time.Second,
		}
		if flags&16 != 0 {
			o.ImpersonateGroups = []string{"g1", "g2"}
		}
		switch flags & 3 {
		case 1:
			v := true
			o.InsecureSkipTLSVerify = &v
		case 2:
			v := false
			o.InsecureSkipTLSVerify = &v
		}
		if flags&4 != 0 {
			o.CertificateAuthority = "/fuzz/ca.crt"
		}

		res, err := c.ClientConfig(o)
		if err != nil {
			if res != nil {
				t.Fatalf("ClientConfig returned a result and the error %v", err)
			}
			msg := err.Error()
			for _, secret := range secretsOf(c, o) {
				if strings.Count(all, secret) <= 1 && strings.Contains(msg, secret) {
					t.Fatalf("the error quotes the credential %q: %v", secret, err)
				}
			}
			return
		}
		if res == nil || res.Config == nil || res.Namespace == "" {
			t.Fatalf("ClientConfig returned an incomplete result %+v", res)
		}
		cfg := res.Config
		if namespace != "" && (res.Namespace != namespace || !res.NamespaceOverridden) {
			t.Fatalf("namespace override %q gave namespace %q (overridden %v)", namespace, res.Namespace, res.NamespaceOverridden)
		}
		if server != "" && cfg.Host != server {
			t.Fatalf("server override %q gave Host %q", server, cfg.Host)
		}
		if token != "" && (cfg.BearerToken != token || cfg.Username != "" || cfg.Password != "" || cfg.ExecProvider != nil || cfg.BearerTokenFile != "") {
			t.Fatalf("token override: the config still carries other credentials: %v", cfg)
		}
		if o.InsecureSkipTLSVerify != nil && *o.InsecureSkipTLSVerify != cfg.TLSClientConfig.Insecure {
			t.Fatalf("insecure-skip-tls-verify override %v gave Insecure %v", *o.InsecureSkipTLSVerify, cfg.TLSClientConfig.Insecure)
		}
		for _, secret := range secretsOf(c, o) {
			if s := cfg.String(); strings.Count(all, secret) <= 1 && strings.Contains(s, secret) {
				t.Fatalf("Config.String leaks the credential %q: %s", secret, s)
			}
		}

		rc, err := rest.NewForConfig(cfg)
		if err != nil {
			return
		}
		if base := rc.Base(); base.Scheme == "http" && hasCredentials(cfg) {
			h := base.Hostname()
			ip := net.ParseIP(h)
			if !cfg.TLSClientConfig.Insecure || !(strings.EqualFold(h, "localhost") || (ip != nil && ip.IsLoopback())) {
				t.Fatalf("rest accepted credentials over plain http to %s (insecure %v)", base.Host, cfg.TLSClientConfig.Insecure)
			}
		}
	})
}

// secretsOf returns the tokens and passwords in c and o long enough to be
// recognised in a message.
func secretsOf(c *Config, o Overrides) []string {
	var out []string
	add := func(s string) {
		if len(s) >= 8 {
			out = append(out, s)
		}
	}
	add(o.Token)
	for _, u := range c.AuthInfos {
		add(u.Token)
		add(u.Password)
		add(string(u.ClientKeyData))
	}
	return out
}

// secretFieldRE finds the values of token and password fields in YAML or
// JSON kubeconfig text.
var secretFieldRE = regexp.MustCompile(`"?(token|password)"?\s*:\s*("[^"\n]*"|'[^'\n]*'|[^\s,}\]]+)`)

func hasCredentials(cfg *rest.Config) bool {
	t := cfg.TLSClientConfig
	return cfg.BearerToken != "" || cfg.BearerTokenFile != "" || cfg.Username != "" || cfg.Password != "" ||
		cfg.ExecProvider != nil || t.CertFile != "" || t.KeyFile != "" || len(t.CertData) > 0 || len(t.KeyData) > 0
}
