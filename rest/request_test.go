package rest

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func newTestClient(t *testing.T, host string) *Client {
	t.Helper()
	c, err := NewForConfig(&Config{Host: host, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRequestPaths(t *testing.T) {
	c := newTestClient(t, "https://example.com:6443/prefix")
	tests := []struct {
		name string
		req  *Request
		want string
	}{
		{"core cluster list", c.Get().Version("v1").Resource("namespaces"), "/prefix/api/v1/namespaces"},
		{"core namespaced get", c.Get().Version("v1").Namespace("ns1").Resource("configmaps").Name("cm"), "/prefix/api/v1/namespaces/ns1/configmaps/cm"},
		{"core all namespaces", c.Get().Version("v1").Namespace("").Resource("pods"), "/prefix/api/v1/pods"},
		{"grouped", c.Get().Group("apps").Version("v1").Namespace("prod").Resource("deployments").Name("web"), "/prefix/apis/apps/v1/namespaces/prod/deployments/web"},
		{"subresource", c.Put().Group("apps").Version("v1").Namespace("prod").Resource("deployments").Name("web").SubResource("scale"), "/prefix/apis/apps/v1/namespaces/prod/deployments/web/scale"},
		{"cluster grouped", c.Get().Group("rbac.authorization.k8s.io").Version("v1").Resource("clusterroles").Name("admin"), "/prefix/apis/rbac.authorization.k8s.io/v1/clusterroles/admin"},
		{"abs path", c.Get().AbsPath("/version"), "/prefix/version"},
		{"abs path segments", c.Get().AbsPath("apis", "apps", "v1"), "/prefix/apis/apps/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.req.err != nil {
				t.Fatal(tt.req.err)
			}
			if got := tt.req.URL().Path; got != tt.want {
				t.Errorf("path = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRequestValidation(t *testing.T) {
	c := newTestClient(t, "https://example.com")
	tests := []struct {
		name string
		req  *Request
		want string
	}{
		{"slash in name", c.Get().Version("v1").Resource("pods").Name("a/b"), `invalid resource name "a/b"`},
		{"slash in namespace", c.Get().Version("v1").Namespace("a/b").Resource("pods"), `invalid namespace "a/b"`},
		{"dot-dot name", c.Get().Version("v1").Resource("pods").Name(".."), `invalid resource name ".."`},
		{"empty name", c.Get().Version("v1").Resource("pods").Name(""), "resource name may not be empty"},
		{"percent in subresource", c.Get().Version("v1").Resource("pods").Name("x").SubResource("a%b"), `invalid subresource "a%b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Do(context.Background()).Error()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestVersionedParams(t *testing.T) {
	c := newTestClient(t, "https://example.com")
	tests := []struct {
		name string
		opts runtime.Object
		want string
	}{
		{"list", &metav1.ListOptions{LabelSelector: "app=web", FieldSelector: "metadata.name=x", Limit: 500, Continue: "tok", ResourceVersion: "10", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			"continue=tok&fieldSelector=metadata.name%3Dx&labelSelector=app%3Dweb&limit=500&resourceVersion=10&resourceVersionMatch=NotOlderThan"},
		{"watch", &metav1.ListOptions{Watch: true, AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](300), SendInitialEvents: ptr.To(true)},
			"allowWatchBookmarks=true&sendInitialEvents=true&timeoutSeconds=300&watch=true"},
		{"get", &metav1.GetOptions{ResourceVersion: "0"}, "resourceVersion=0"},
		{"empty get", &metav1.GetOptions{}, ""},
		{"create", &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: "m", FieldValidation: "Strict"}, "dryRun=All&fieldManager=m&fieldValidation=Strict"},
		{"patch force", &metav1.PatchOptions{FieldManager: "kdyn", Force: ptr.To(true)}, "fieldManager=kdyn&force=true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Get().Version("v1").Resource("pods").VersionedParams(tt.opts)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if diff := cmp.Diff(tt.want, r.URL().RawQuery); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServerURL(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		want    string
		wantErr string
	}{
		{"full", Config{Host: "https://h:6443"}, "https://h:6443", ""},
		{"no scheme without TLS", Config{Host: "h:8080"}, "http://h:8080", ""},
		{"no scheme with CA", Config{Host: "h:6443", TLSClientConfig: TLSClientConfig{CAData: []byte("x")}}, "https://h:6443", ""},
		{"api path", Config{Host: "https://h/", APIPath: "/k8s"}, "https://h/k8s", ""},
		// client-go's rules (rest.DefaultServerUrlFor): an empty Host is
		// localhost; a CA, a client certificate or Insecure mean https.
		{"empty", Config{}, "http://localhost", ""},
		{"empty with CA", Config{TLSClientConfig: TLSClientConfig{CAFile: "ca.pem"}}, "https://localhost", ""},
		{"empty with insecure", Config{TLSClientConfig: TLSClientConfig{Insecure: true}}, "https://localhost", ""},
		{"empty with api path", Config{APIPath: "/k8s"}, "http://localhost/k8s", ""},
		{"no scheme with client certificate", Config{Host: "h:6443", TLSClientConfig: TLSClientConfig{CertData: []byte("x")}}, "https://h:6443", ""},
		{"no scheme with server name only", Config{Host: "h:6443", TLSClientConfig: TLSClientConfig{ServerName: "k"}}, "http://h:6443", ""},
		{"blank", Config{Host: "  "}, "", "Config.Host is blank"},
		{"bad scheme", Config{Host: "ftp://h"}, "", `scheme "ftp"`},
		{"query", Config{Host: "https://h?x=1"}, "", "query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := serverURL(&tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.String() != tt.want {
				t.Errorf("got %q, want %q", u, tt.want)
			}
		})
	}
}

func TestPatchContentType(t *testing.T) {
	c := newTestClient(t, "https://example.com")
	r := c.Patch(string(types.MergePatchType)).Version("v1").Resource("pods").Name("x").Body([]byte(`{}`))
	req, err := r.newHTTPRequest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("Content-Type"); got != ContentTypeMergePatch {
		t.Errorf("Content-Type = %q", got)
	}
	if got := req.Header.Get("Accept"); got != ContentTypeJSON {
		t.Errorf("Accept = %q", got)
	}
}
