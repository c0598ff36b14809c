package kubeconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const secretsConfig = `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster:
    server: https://dev.example
    certificate-authority-data: ` + "Q0EgUEVN" + `
- name: other
  cluster:
    server: https://other.example
users:
- name: dev-admin
  user:
    token: super-secret-token
    client-certificate-data: ` + "Q0VSVA==" + `
    client-key-data: ` + "S0VZ" + `
- name: basic
  user:
    username: admin
    password: hunter2
    auth-provider:
      name: oidc
      config:
        id-token: idtok
contexts:
- name: dev
  context:
    cluster: dev
    user: dev-admin
    namespace: web
- name: other
  context:
    cluster: other
    user: basic
`

func TestView(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(secretsConfig), "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    ViewOptions
		want string
	}{
		{
			name: "redacted",
			o:    ViewOptions{},
			want: `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: DATA+OMITTED
    server: https://dev.example
  name: dev
- cluster:
    server: https://other.example
  name: other
contexts:
- context:
    cluster: dev
    namespace: web
    user: dev-admin
  name: dev
- context:
    cluster: other
    user: basic
  name: other
current-context: dev
kind: Config
preferences: {}
users:
- name: basic
  user:
    auth-provider:
      config:
        id-token: REDACTED
      name: oidc
    password: REDACTED
    username: admin
- name: dev-admin
  user:
    client-certificate-data: DATA+OMITTED
    client-key-data: REDACTED
    token: REDACTED
`,
		},
		{
			name: "raw and minified",
			o:    ViewOptions{Raw: true, Minify: true},
			want: `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: Q0EgUEVN
    server: https://dev.example
  name: dev
contexts:
- context:
    cluster: dev
    namespace: web
    user: dev-admin
  name: dev
current-context: dev
kind: Config
preferences: {}
users:
- name: dev-admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
    token: super-secret-token
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := c.View(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, string(out)); d != "" {
				t.Errorf("View (-want +got):\n%s", d)
			}
		})
	}

	t.Run("minify without current context", func(t *testing.T) {
		t.Parallel()
		if _, err := (&Config{}).View(ViewOptions{Minify: true}); err == nil {
			t.Error("want an error")
		}
	})
}

func TestMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	in := &Config{
		CurrentContext: "c",
		Preferences:    Preferences{Colors: true},
		Clusters: map[string]*Cluster{"c": {
			Server: "https://c", TLSServerName: "n", CertificateAuthorityData: []byte("CA"), ProxyURL: "http://p:3128",
			Extensions: map[string]json.RawMessage{execExtension: json.RawMessage(`{"audience":"x","n":12345678901234567}`)},
		}},
		AuthInfos: map[string]*AuthInfo{"u": {
			ClientCertificateData: []byte("C"), ClientKeyData: []byte("K"), Token: "t", TokenFile: "/tf",
			Impersonate: "jane", ImpersonateUID: "1", ImpersonateGroups: []string{"g"},
			ImpersonateUserExtra: map[string][]string{"k": {"v"}},
			Exec: &ExecConfig{Command: "/bin/p", Args: []string{"a"}, Env: []ExecEnvVar{{Name: "N", Value: "V"}},
				APIVersion: execAPIv1, InteractiveMode: "Never", ProvideClusterInfo: true, InstallHint: "hint"},
		}},
		Contexts: map[string]*Context{"c": {Cluster: "c", AuthInfo: "u", Namespace: "ns"}},
	}
	path := filepath.Join(t.TempDir(), "new", "config")
	if err := Write(path, in); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
	}
	out, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ignoreSources := cmp.Options{
		cmpopts.IgnoreFields(Config{}, "Sources", "CurrentContextSource"),
		cmpopts.IgnoreFields(Cluster{}, "Source"),
		cmpopts.IgnoreFields(AuthInfo{}, "Source"),
		cmpopts.IgnoreFields(Context{}, "Source"),
		cmp.Transformer("json", func(m json.RawMessage) string { return string(m) }),
	}
	if d := cmp.Diff(in, out, ignoreSources); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
}

func TestSetCurrentContext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		ctx  string
		want string
	}{
		{
			name: "only the line changes, comments stay",
			in:   "# my clusters\napiVersion: v1\ncurrent-context: old # was here\nclusters: []  # none yet\n",
			ctx:  "new",
			want: "# my clusters\napiVersion: v1\ncurrent-context: new\nclusters: []  # none yet\n",
		},
		{
			name: "appended when absent",
			in:   "apiVersion: v1\nkind: Config",
			ctx:  "dev",
			want: "apiVersion: v1\nkind: Config\ncurrent-context: dev\n",
		},
		{
			name: "names that need quoting",
			in:   "current-context: old\n",
			ctx:  "yes",
			want: "current-context: \"yes\"\n",
		},
		{
			name: "JSON is rewritten as YAML, keeping every field",
			in:   `{"apiVersion":"v1","current-context":"old","x-unknown":{"big":12345678901234567}}`,
			ctx:  "new",
			want: "apiVersion: v1\ncurrent-context: new\nx-unknown:\n  big: 12345678901234567\n",
		},
		{
			name: "empty file",
			in:   "",
			ctx:  "new",
			want: "current-context: new\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := setCurrentContext([]byte(tt.in), tt.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, string(got)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	t.Run("malformed file", func(t *testing.T) {
		t.Parallel()
		path := writeTestFile(t, t.TempDir(), "config", "a: [\n")
		err := SetCurrentContext(path, "x")
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "malformed YAML") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestUseContext(t *testing.T) {
	t.Parallel()
	const withCurrent = "# first\ncurrent-context: a-ctx\ncontexts:\n- name: a-ctx\n  context: {cluster: c}\n"
	const withoutCurrent = "contexts:\n- name: b-ctx\n  context: {cluster: c}\n"
	const otherCurrent = "current-context: b-ctx\ncontexts:\n- name: c-ctx\n  context: {cluster: c}\n"

	tests := []struct {
		name      string
		files     []string // contents, in precedence order; "" = missing
		explicit  int      // index of the explicit file, or -1
		use       string
		wantFile  int
		wantAfter []string
		wantErr   string
	}{
		{
			name:     "file that set current-context",
			files:    []string{withoutCurrent, withCurrent},
			explicit: -1, use: "b-ctx", wantFile: 1,
			wantAfter: []string{withoutCurrent, strings.Replace(withCurrent, "a-ctx\ncontexts", "b-ctx\ncontexts", 1)},
		},
		{
			name:     "first existing file when none set it",
			files:    []string{"", withoutCurrent, "contexts:\n- name: z\n"},
			explicit: -1, use: "z", wantFile: 1,
			wantAfter: []string{"", withoutCurrent + "current-context: z\n", "contexts:\n- name: z\n"},
		},
		{
			name:     "explicit file",
			files:    []string{otherCurrent},
			explicit: 0, use: "c-ctx", wantFile: 0,
			wantAfter: []string{strings.Replace(otherCurrent, "b-ctx", "c-ctx", 1)},
		},
		{
			name:     "unknown context writes nothing",
			files:    []string{withCurrent},
			explicit: -1, use: "nope",
			wantAfter: []string{withCurrent},
			wantErr:   `context "nope" is not defined; defined contexts: a-ctx`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var paths []string
			for i, content := range tt.files {
				p := filepath.Join(dir, "config-"+string(rune('0'+i)))
				if content != "" {
					writeTestFile(t, dir, filepath.Base(p), content)
				}
				paths = append(paths, p)
			}
			rules := &LoadingRules{Precedence: paths}
			if tt.explicit >= 0 {
				rules = &LoadingRules{ExplicitPath: paths[tt.explicit]}
			}
			got, err := UseContext(rules, tt.use)
			switch {
			case tt.wantErr != "":
				var nf *NotFoundError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &nf) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case got != paths[tt.wantFile]:
				t.Errorf("wrote %s, want %s", got, paths[tt.wantFile])
			}
			for i, p := range paths {
				b, err := os.ReadFile(p)
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				if d := cmp.Diff(tt.wantAfter[i], string(b)); d != "" {
					t.Errorf("file %d after (-want +got):\n%s", i, d)
				}
			}
		})
	}

	t.Run("symlink and permissions are kept", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		target := writeTestFile(t, dir, "real/config", withCurrent)
		if err := os.Chmod(target, 0o640); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link")
		if err := os.Symlink(target, link); err != nil {
			t.Skip("symlinks unsupported:", err)
		}
		if _, err := UseContext(&LoadingRules{ExplicitPath: link}, "a-ctx"); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("link replaced by a file: %v %v", fi, err)
		}
		if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("target mode %v (%v), want 0640", fi.Mode().Perm(), err)
		}
	})
}
