package kubeconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeTestFile writes content to dir/name (creating directories) and
// returns the path.
func writeTestFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const fileA = `apiVersion: v1
kind: Config
current-context: a-ctx
clusters:
- name: shared
  cluster:
    server: https://a.example:6443
- name: only-a
  cluster:
    server: https://only-a.example
users:
- name: shared-user
  user:
    token: token-from-a
contexts:
- name: a-ctx
  context:
    cluster: shared
    user: shared-user
    namespace: ns-a
- name: shared-ctx
  context:
    cluster: only-a
`

const fileB = `apiVersion: v1
kind: Config
current-context: b-ctx
clusters:
- name: shared
  cluster:
    server: https://b.example:6443
- name: only-b
  cluster:
    server: https://only-b.example
users:
- name: shared-user
  user:
    token: token-from-b
- name: b-user
  user:
    username: bob
contexts:
- name: shared-ctx
  context:
    cluster: only-b
- name: b-ctx
  context:
    cluster: only-b
    user: b-user
`

// noCurrent has no current-context: the next file's wins.
const noCurrent = `clusters:
- name: first
  cluster:
    server: https://first.example
`

type loadSummary struct {
	Servers        map[string]string // cluster name → server
	ClusterSources map[string]string // cluster name → base name of its file
	Tokens         map[string]string
	ContextCluster map[string]string
	CurrentContext string
	CurrentSource  string
	Sources        []string
}

func summarize(c *Config) loadSummary {
	s := loadSummary{
		Servers:        map[string]string{},
		ClusterSources: map[string]string{},
		Tokens:         map[string]string{},
		ContextCluster: map[string]string{},
		CurrentContext: c.CurrentContext,
		CurrentSource:  filepath.Base(c.CurrentContextSource),
	}
	for n, cl := range c.Clusters {
		s.Servers[n] = cl.Server
		s.ClusterSources[n] = filepath.Base(cl.Source)
	}
	for n, u := range c.AuthInfos {
		s.Tokens[n] = u.Token
	}
	for n, ctx := range c.Contexts {
		s.ContextCluster[n] = ctx.Cluster
	}
	for _, src := range c.Sources {
		s.Sources = append(s.Sources, filepath.Base(src))
	}
	return s
}

func TestLoadMergeRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := writeTestFile(t, dir, "a.yaml", fileA)
	b := writeTestFile(t, dir, "b.yaml", fileB)
	nc := writeTestFile(t, dir, "nocurrent.yaml", noCurrent)
	missing := filepath.Join(dir, "missing.yaml")

	tests := []struct {
		name  string
		rules LoadingRules
		want  loadSummary
	}{
		{
			name:  "first file wins per name and for current-context",
			rules: LoadingRules{Precedence: []string{a, b}},
			want: loadSummary{
				Servers: map[string]string{
					"shared": "https://a.example:6443", "only-a": "https://only-a.example", "only-b": "https://only-b.example",
				},
				ClusterSources: map[string]string{"shared": "a.yaml", "only-a": "a.yaml", "only-b": "b.yaml"},
				Tokens:         map[string]string{"shared-user": "token-from-a", "b-user": ""},
				ContextCluster: map[string]string{"a-ctx": "shared", "shared-ctx": "only-a", "b-ctx": "only-b"},
				CurrentContext: "a-ctx",
				CurrentSource:  "a.yaml",
				Sources:        []string{"a.yaml", "b.yaml"},
			},
		},
		{
			name:  "reversed order",
			rules: LoadingRules{Precedence: []string{b, a}},
			want: loadSummary{
				Servers: map[string]string{
					"shared": "https://b.example:6443", "only-a": "https://only-a.example", "only-b": "https://only-b.example",
				},
				ClusterSources: map[string]string{"shared": "b.yaml", "only-a": "a.yaml", "only-b": "b.yaml"},
				Tokens:         map[string]string{"shared-user": "token-from-b", "b-user": ""},
				ContextCluster: map[string]string{"a-ctx": "shared", "shared-ctx": "only-b", "b-ctx": "only-b"},
				CurrentContext: "b-ctx",
				CurrentSource:  "b.yaml",
				Sources:        []string{"b.yaml", "a.yaml"},
			},
		},
		{
			name:  "missing files are skipped, first non-empty current-context wins",
			rules: LoadingRules{Precedence: []string{missing, nc, "", b, nc}},
			want: loadSummary{
				Servers:        map[string]string{"first": "https://first.example", "shared": "https://b.example:6443", "only-b": "https://only-b.example"},
				ClusterSources: map[string]string{"first": "nocurrent.yaml", "shared": "b.yaml", "only-b": "b.yaml"},
				Tokens:         map[string]string{"shared-user": "token-from-b", "b-user": ""},
				ContextCluster: map[string]string{"shared-ctx": "only-b", "b-ctx": "only-b"},
				CurrentContext: "b-ctx",
				CurrentSource:  "b.yaml",
				Sources:        []string{"nocurrent.yaml", "b.yaml"},
			},
		},
		{
			name:  "explicit path only",
			rules: LoadingRules{ExplicitPath: b, Precedence: []string{a}},
			want: loadSummary{
				Servers:        map[string]string{"shared": "https://b.example:6443", "only-b": "https://only-b.example"},
				ClusterSources: map[string]string{"shared": "b.yaml", "only-b": "b.yaml"},
				Tokens:         map[string]string{"shared-user": "token-from-b", "b-user": ""},
				ContextCluster: map[string]string{"shared-ctx": "only-b", "b-ctx": "only-b"},
				CurrentContext: "b-ctx",
				CurrentSource:  "b.yaml",
				Sources:        []string{"b.yaml"},
			},
		},
		{
			name:  "nothing found",
			rules: LoadingRules{Precedence: []string{missing}},
			want: loadSummary{
				Servers: map[string]string{}, ClusterSources: map[string]string{}, Tokens: map[string]string{},
				ContextCluster: map[string]string{}, CurrentSource: ".",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Load(&tt.rules)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, summarize(c)); d != "" {
				t.Errorf("merged config (-want +got):\n%s", d)
			}
		})
	}

	t.Run("missing explicit path is an error naming it", func(t *testing.T) {
		t.Parallel()
		_, err := Load(&LoadingRules{ExplicitPath: missing, Precedence: []string{a}})
		if err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v", err)
		}
		// The file system's own words follow, as in kubectl's message.
		if !strings.HasSuffix(err.Error(), missing+": no such file or directory") {
			t.Errorf("err = %v, want it to end with the file system's error", err)
		}
	})
	t.Run("unreadable file in the list is an error", func(t *testing.T) {
		t.Parallel()
		_, err := Load(&LoadingRules{Precedence: []string{dir}}) // a directory
		if err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestNewDefaultLoadingRules(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)

	t.Setenv(EnvVar, "")
	if d := cmp.Diff([]string{filepath.Join(home, ".kube", "config")}, NewDefaultLoadingRules().Precedence); d != "" {
		t.Errorf("without KUBECONFIG (-want +got):\n%s", d)
	}
	list := strings.Join([]string{"/x/one", "", "/x/two"}, string(filepath.ListSeparator))
	t.Setenv(EnvVar, list)
	if d := cmp.Diff([]string{"/x/one", "/x/two"}, NewDefaultLoadingRules().Precedence); d != "" {
		t.Errorf("with KUBECONFIG (-want +got):\n%s", d)
	}
}

func TestRelativePathsPerFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := writeTestFile(t, dir, "one/config", `
clusters:
- name: c1
  cluster:
    server: https://one.example
    certificate-authority: certs/ca.crt
users:
- name: u1
  user:
    client-certificate: certs/u1.crt
    client-key: /abs/u1.key
    tokenFile: ../token
    exec:
      command: ./bin/plugin
      apiVersion: client.authentication.k8s.io/v1
      interactiveMode: Never
- name: u-path
  user:
    exec:
      command: gke-gcloud-auth-plugin
      apiVersion: client.authentication.k8s.io/v1beta1
`)
	two := writeTestFile(t, dir, "two/sub/config", `
users:
- name: u2
  user:
    client-certificate: u2.crt
    client-key: keys/u2.key
`)
	c, err := Load(&LoadingRules{Precedence: []string{one, two}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"c1.ca":        c.Clusters["c1"].CertificateAuthority,
		"u1.cert":      c.AuthInfos["u1"].ClientCertificate,
		"u1.key":       c.AuthInfos["u1"].ClientKey,
		"u1.tokenFile": c.AuthInfos["u1"].TokenFile,
		"u1.exec":      c.AuthInfos["u1"].Exec.Command,
		"u-path.exec":  c.AuthInfos["u-path"].Exec.Command,
		"u2.cert":      c.AuthInfos["u2"].ClientCertificate,
		"u2.key":       c.AuthInfos["u2"].ClientKey,
	}
	want := map[string]string{
		"c1.ca":        filepath.Join(dir, "one/certs/ca.crt"),
		"u1.cert":      filepath.Join(dir, "one/certs/u1.crt"),
		"u1.key":       "/abs/u1.key",
		"u1.tokenFile": filepath.Join(dir, "token"),
		"u1.exec":      filepath.Join(dir, "one/bin/plugin"),
		"u-path.exec":  "gke-gcloud-auth-plugin",
		"u2.cert":      filepath.Join(dir, "two/sub/u2.crt"),
		"u2.key":       filepath.Join(dir, "two/sub/keys/u2.key"),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("resolved paths (-want +got):\n%s", d)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{
			name: "malformed YAML names file and line",
			yaml: "clusters:\n- name: a\n  cluster:\n    server: [unclosed\n",
			want: []string{"kubeconfig: /cfg/bad.yaml: malformed YAML: yaml: line 4"},
		},
		{
			name: "wrong type",
			yaml: "clusters: just-a-string\n",
			want: []string{"kubeconfig: /cfg/bad.yaml: clusters: a string where a list belongs"},
		},
		{
			name: "bad base64 names the field",
			yaml: "users:\n- name: alice\n  user:\n    client-key-data: '!!!not base64'\n",
			want: []string{`kubeconfig: /cfg/bad.yaml: users["alice"].client-key-data: not valid base64`},
		},
		{
			name: "bad CA base64",
			yaml: "clusters:\n- name: prod\n  cluster:\n    certificate-authority-data: abc\n",
			want: []string{`clusters["prod"].certificate-authority-data: not valid base64`},
		},
		{
			name: "entry without a name",
			yaml: "contexts:\n- context:\n    cluster: x\n",
			want: []string{"/cfg/bad.yaml: contexts[0]: name is empty"},
		},
		{
			name: "null entry",
			yaml: "users:\n- null\n",
			want: []string{"users[0]: name is empty"},
		},
		{
			name: "wrong kind",
			yaml: "kind: Pod\napiVersion: v1\n",
			want: []string{`kind is "Pod", want "Config"`},
		},
		{
			name: "wrong apiVersion",
			yaml: "kind: Config\napiVersion: v2\n",
			want: []string{`apiVersion is "v2", want "v1"`},
		},
		{
			name: "not a mapping",
			yaml: "- a\n- b\n",
			want: []string{"/cfg/bad.yaml: malformed YAML"},
		},
		{
			name: "wrong type in the second entry",
			yaml: "clusters:\n- name: a\n  cluster: {server: x}\n- name: b\n  cluster: {server: [x], insecure-skip-tls-verify: maybe}\n",
			want: []string{`/cfg/bad.yaml: clusters["b"].cluster.`, "where"},
		},
		{
			name: "list of scalars where entries belong",
			yaml: "clusters:\n- a\n",
			want: []string{"/cfg/bad.yaml: clusters[0]: a string where a mapping belongs"},
		},
		// A list field's valid elements in an earlier entry are not the
		// place of a later entry's bad value, nor is an element the place
		// of a list given where a string belongs.
		{
			name: "string where a list belongs, after a good list",
			yaml: "users:\n- name: a\n  user:\n    exec: {command: x, args: [ok]}\n- name: b\n  user:\n    exec: {command: x, args: notalist}\n",
			want: []string{`/cfg/bad.yaml: users["b"].user.exec.args: a string where a list belongs`},
		},
		{
			name: "mapping where a list belongs, after a good list",
			yaml: "users:\n- name: a\n  user:\n    exec: {command: x, env: [{name: A, value: v}]}\n- name: b\n  user:\n    exec: {command: x, env: {FOO: bar}}\n",
			want: []string{`/cfg/bad.yaml: users["b"].user.exec.env: a mapping where a list belongs`},
		},
		{
			name: "nested list where a string belongs",
			yaml: "users:\n- name: a\n  user:\n    password: [[x]]\n",
			want: []string{`/cfg/bad.yaml: users["a"].user.password: a list where a string belongs`},
		},
		{
			name: "nested list in a list of strings",
			yaml: "users:\n- name: a\n  user:\n    as-groups: [g, [x]]\n",
			want: []string{`/cfg/bad.yaml: users["a"].user.as-groups[1]: a list where a string belongs`},
		},
		{
			name: "bool field given a string",
			yaml: "clusters:\n- name: a\n  cluster: {server: x, insecure-skip-tls-verify: maybe}\n",
			want: []string{`/cfg/bad.yaml: clusters["a"].cluster.insecure-skip-tls-verify: a string where true or false belongs`},
		},
		// Unquoted scalars that YAML reads as numbers or bools are errors
		// in string fields, as with client-go, not silently rewritten
		// (0123 became "83", y became "true").
		{
			name: "octal-looking password",
			yaml: "users:\n- name: u\n  user:\n    password: 0123\n",
			want: []string{`kubeconfig: /cfg/bad.yaml: users["u"].user.password: a number where a string belongs (YAML read an unquoted value as a number; quote it)`},
		},
		{
			name: "hex-looking token",
			yaml: "users:\n- name: u\n  user:\n    token: 0x1F\n",
			want: []string{`users["u"].user.token: a number where a string belongs`},
		},
		{
			name: "bool-looking context name",
			yaml: "contexts:\n- name: y\n  context: {cluster: c}\n",
			want: []string{"/cfg/bad.yaml: contexts[0].name: a bool where a string belongs (YAML read an unquoted value as a bool; quote it)"},
		},
		{
			name: "bool-looking namespace",
			yaml: "contexts:\n- name: c\n  context: {cluster: c, namespace: no}\n",
			want: []string{`contexts["c"].context.namespace: a bool where a string belongs`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.yaml), "/cfg/bad.yaml")
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseLenient(t *testing.T) {
	t.Parallel()
	// Null sub-objects, duplicates, unknown fields and JSON input are fine.
	tests := []struct {
		name string
		in   string
		want func(*testing.T, *Config)
	}{
		{"empty", "", func(t *testing.T, c *Config) {
			if !c.isEmpty() {
				t.Errorf("not empty: %+v", c)
			}
		}},
		{"null sub-objects", "clusters:\n- name: a\n  cluster: null\nusers:\n- name: u\ncontexts:\n- name: c\npreferences: null\n",
			func(t *testing.T, c *Config) {
				if c.Clusters["a"] == nil || c.AuthInfos["u"] == nil || c.Contexts["c"] == nil {
					t.Errorf("entries missing: %+v", c)
				}
			}},
		{"first duplicate wins", "clusters:\n- name: a\n  cluster: {server: https://one}\n- name: a\n  cluster: {server: https://two}\n",
			func(t *testing.T, c *Config) {
				if got := c.Clusters["a"].Server; got != "https://one" {
					t.Errorf("server %q", got)
				}
			}},
		{"JSON and unknown fields", `{"kind":"Config","future-field":1,"clusters":[{"name":"j","cluster":{"server":"https://j","new":true}}]}`,
			func(t *testing.T, c *Config) {
				if got := c.Clusters["j"].Server; got != "https://j" {
					t.Errorf("server %q", got)
				}
			}},
		{"extensions kept", "clusters:\n- name: a\n  cluster:\n    server: https://a\n    extensions:\n    - name: client.authentication.k8s.io/exec\n      extension:\n        audience: kdyn\n",
			func(t *testing.T, c *Config) {
				var v map[string]any
				if err := json.Unmarshal(c.Clusters["a"].Extensions[execExtension], &v); err != nil || v["audience"] != "kdyn" {
					t.Errorf("extension %s, %v", c.Clusters["a"].Extensions[execExtension], err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse([]byte(tt.in), "")
			if err != nil {
				t.Fatal(err)
			}
			tt.want(t, c)
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(fileA))
	f.Add([]byte(fileB))
	f.Add([]byte("users:\n- name: u\n  user:\n    exec: {command: ./x}\n"))
	f.Add([]byte("clusters: [null, {name: a}]\n"))
	f.Add([]byte("clusters:\n- a\n- name: b\n  cluster: {server: [x]}\n"))
	f.Add([]byte("contexts:\n- name: c\n  context: {cluster: c, namespace: no}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "/fuzz/config")
		if err != nil {
			// Parse turns panics into errors; none may come from kdyn's
			// own code (the type-error rewriting, for one).
			if strings.Contains(err.Error(), "cannot parse: runtime error") {
				t.Fatalf("Parse panicked: %v", err)
			}
			return
		}
		// Whatever parsed must resolve or fail without panicking, and
		// marshal.
		_, _ = c.ClientConfig(Overrides{})
		if _, err := c.View(ViewOptions{}); err != nil {
			t.Fatalf("View: %v", err)
		}
	})
}

// TestLoadFileErrorWording: a file that cannot be parsed is reported in
// kubectl's words first, then what is wrong, and unwraps to the cause.
func TestLoadFileErrorWording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v-1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(path)
	want := fmt.Sprintf(`kubeconfig: error loading config file %q: apiVersion is "v-1", want "v1"`, path)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	var le *loadError
	if !errors.As(err, &le) || errors.Unwrap(err) == nil {
		t.Errorf("err %T does not unwrap to the parse error", err)
	}
}
