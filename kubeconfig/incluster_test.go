package kubeconfig

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdyn/kdyn/rest"
)

func fakeEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// serviceAccountDir writes a fake service-account mount; an empty value
// leaves that file out.
func serviceAccountDir(t *testing.T, token, ca, namespace string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"token": token, "ca.crt": ca, "namespace": namespace} {
		if content != "" {
			writeTestFile(t, dir, name, content)
		}
	}
	return dir
}

var podEnv = map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}

func TestInClusterConfig(t *testing.T) {
	t.Parallel()
	full := serviceAccountDir(t, "sa-token\n", "CA", "team-b\n")
	noNS := serviceAccountDir(t, "sa-token", "CA", "")
	noToken := serviceAccountDir(t, "", "CA", "x")
	noCA := serviceAccountDir(t, "sa-token", "", "x")

	tests := []struct {
		name    string
		env     map[string]string
		dir     string
		want    *rest.Config
		wantNS  string
		wantErr string
	}{
		{
			name: "service account",
			env:  podEnv,
			dir:  full,
			want: &rest.Config{Host: "https://10.96.0.1:443", BearerToken: "sa-token", BearerTokenFile: filepath.Join(full, "token"),
				TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(full, "ca.crt")}},
			wantNS: "team-b",
		},
		{
			name: "IPv6 and POD_NAMESPACE",
			env:  map[string]string{"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443", "POD_NAMESPACE": "from-env"},
			dir:  full,
			want: &rest.Config{Host: "https://[fd00::1]:6443", BearerToken: "sa-token", BearerTokenFile: filepath.Join(full, "token"),
				TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(full, "ca.crt")}},
			wantNS: "from-env",
		},
		{
			name: "no namespace file",
			env:  podEnv,
			dir:  noNS,
			want: &rest.Config{Host: "https://10.96.0.1:443", BearerToken: "sa-token", BearerTokenFile: filepath.Join(noNS, "token"),
				TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(noNS, "ca.crt")}},
			wantNS: "default",
		},
		{name: "no token", env: podEnv, dir: noToken, wantErr: "read the service-account token"},
		{name: "no CA", env: podEnv, dir: noCA, wantErr: "service-account CA bundle"},
		{name: "not in a pod", env: map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1"}, dir: full, wantErr: "not running in a cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, ns, err := InClusterOptions{LookupEnv: fakeEnv(tt.env), ServiceAccountDir: tt.dir}.Config()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, cfg, equateLoggers); d != "" {
				t.Errorf("rest.Config (-want +got):\n%s", d)
			}
			if ns != tt.wantNS {
				t.Errorf("namespace %q, want %q", ns, tt.wantNS)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	sa := serviceAccountDir(t, "sa-token", "CA", "team-b")
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	empty := writeTestFile(t, dir, "empty", "")
	kc := writeTestFile(t, dir, "config", fileA)
	inPod := InClusterOptions{LookupEnv: fakeEnv(podEnv), ServiceAccountDir: sa}
	notInPod := InClusterOptions{LookupEnv: fakeEnv(nil), ServiceAccountDir: sa}

	type summary struct {
		Host, Token, Namespace, Context string
		InCluster                       bool
	}
	tests := []struct {
		name    string
		rules   LoadingRules
		o       Overrides
		want    summary
		wantErr []string
		noCfg   bool
	}{
		{
			name:  "kubeconfig file",
			rules: LoadingRules{Precedence: []string{missing, kc}, InCluster: inPod},
			want:  summary{Host: "https://a.example:6443", Token: "token-from-a", Namespace: "ns-a", Context: "a-ctx"},
		},
		{
			name:  "in-cluster when no file exists",
			rules: LoadingRules{Precedence: []string{missing}, InCluster: inPod},
			want:  summary{Host: "https://10.96.0.1:443", Token: "sa-token", Namespace: "team-b", InCluster: true},
		},
		{
			name:  "in-cluster when the files define nothing",
			rules: LoadingRules{Precedence: []string{empty}, InCluster: inPod},
			want:  summary{Host: "https://10.96.0.1:443", Token: "sa-token", Namespace: "team-b", InCluster: true},
		},
		{
			name:  "in-cluster with overrides",
			rules: LoadingRules{Precedence: []string{missing}, InCluster: inPod},
			o:     Overrides{Namespace: "mine", Token: "other", Server: "https://api.internal:6443"},
			want:  summary{Host: "https://api.internal:6443", Token: "other", Namespace: "mine", InCluster: true},
		},
		{
			name:    "explicit missing file: no fallback",
			rules:   LoadingRules{ExplicitPath: missing, InCluster: inPod},
			wantErr: []string{missing, "does not exist"},
		},
		{
			name:  "nothing anywhere",
			rules: LoadingRules{Precedence: []string{missing}, InCluster: notInPod},
			wantErr: []string{
				"kubeconfig: no configuration found: no kubeconfig file at " + missing,
				"not a pod in a cluster", "set KUBECONFIG, pass --kubeconfig, or pass --server",
			},
			noCfg: true,
		},
		{
			name:  "nothing but --server",
			rules: LoadingRules{Precedence: []string{missing}, InCluster: notInPod},
			o:     Overrides{Server: "https://127.0.0.1:6443", Token: "t"},
			want:  summary{Host: "https://127.0.0.1:6443", Token: "t", Namespace: "default"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Resolve(&tt.rules, tt.o)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatal("Resolve succeeded, want an error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q\ndoes not contain %q", err, w)
					}
				}
				if got := errors.Is(err, ErrNoConfig); got != tt.noCfg {
					t.Errorf("errors.Is(err, ErrNoConfig) = %v, want %v", got, tt.noCfg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := summary{Host: res.Config.Host, Token: res.Config.BearerToken, Namespace: res.Namespace, Context: res.Context, InCluster: res.InCluster}
			if d := cmp.Diff(tt.want, got, equateLoggers); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
