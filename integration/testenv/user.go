package testenv

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/rest"
)

// User selects one of the identities every Env provides.
type User int

// The identities of an Env.
const (
	// Admin authenticates with AdminToken as AdminUserName, in group
	// system:masters.
	Admin User = iota
	// CertAdmin authenticates with the client certificate
	// (ClientCertData/ClientKeyData) as CertAdminUserName, in group
	// system:masters.
	CertAdmin
	// Nobody authenticates with NobodyToken as NobodyUserName, with no
	// groups beyond system:authenticated, so RBAC denies most requests.
	Nobody
)

// Kubernetes user names of the identities.
const (
	AdminUserName     = "kdyn-admin"
	CertAdminUserName = "kdyn-cert-admin"
	NobodyUserName    = "kdyn-nobody"
)

// ClusterName is the cluster's name in the kubeconfig files.
const ClusterName = "kdyn-test"

var users = []User{Admin, CertAdmin, Nobody}

// String returns the kubeconfig context (and user) name: "admin",
// "cert-admin" or "nobody".
func (u User) String() string {
	switch u {
	case Admin:
		return "admin"
	case CertAdmin:
		return "cert-admin"
	case Nobody:
		return "nobody"
	}
	return "User(" + strconv.Itoa(int(u)) + ")"
}

// Name returns the Kubernetes user name the apiserver sees for u.
func (u User) Name() string {
	switch u {
	case Admin:
		return AdminUserName
	case CertAdmin:
		return CertAdminUserName
	case Nobody:
		return NobodyUserName
	}
	return ""
}

// RESTConfig returns a new *rest.Config for u: Host, the serving CA, and the
// user's token or client certificate. The caller may modify it.
func (e *Env) RESTConfig(u User) *rest.Config {
	c := &rest.Config{Host: e.Host()}
	c.TLSClientConfig.CAData = e.CAData()
	switch u {
	case Admin, Nobody:
		c.BearerToken = e.token(u)
	case CertAdmin:
		c.TLSClientConfig.CertData = e.ClientCertData()
		c.TLSClientConfig.KeyData = e.ClientKeyData()
	default:
		panic("testenv: unknown " + u.String())
	}
	return c
}

// KubeconfigPath returns the kubeconfig file Start wrote for u in Dir: it
// has the contexts admin, cert-admin and nobody, with u's current.
// KubeconfigPath(Admin) is Dir()/kubeconfig.
func (e *Env) KubeconfigPath(u User) string {
	if u == Admin {
		return filepath.Join(e.dir, "kubeconfig")
	}
	return filepath.Join(e.dir, "kubeconfig-"+u.String())
}

// WriteKubeconfig writes a kubeconfig file (mode 0600) with cluster
// ClusterName, the users and contexts admin, cert-admin and nobody, all
// credentials embedded as *-data fields, and current-context u.
func (e *Env) WriteKubeconfig(path string, u User) error {
	if u.Name() == "" {
		return fmt.Errorf("testenv: unknown %s", u)
	}
	b64 := func(b []byte) string { return strconv.Quote(base64.StdEncoding.EncodeToString(b)) }
	q := strconv.Quote
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "apiVersion: v1\nkind: Config\nclusters:\n- name: %s\n  cluster:\n    server: %s\n    certificate-authority-data: %s\n",
		q(ClusterName), q(e.Host()), b64(e.creds.servingCA))
	buf.WriteString("users:\n")
	for _, x := range users {
		fmt.Fprintf(&buf, "- name: %s\n  user:\n", q(x.String()))
		if x == CertAdmin {
			fmt.Fprintf(&buf, "    client-certificate-data: %s\n    client-key-data: %s\n",
				b64(e.creds.clientCertData), b64(e.creds.clientKeyData))
		} else {
			fmt.Fprintf(&buf, "    token: %s\n", q(e.token(x)))
		}
	}
	buf.WriteString("contexts:\n")
	for _, x := range users {
		fmt.Fprintf(&buf, "- name: %s\n  context:\n    cluster: %s\n    user: %s\n    namespace: default\n",
			q(x.String()), q(ClusterName), q(x.String()))
	}
	fmt.Fprintf(&buf, "current-context: %s\npreferences: {}\n", q(u.String()))
	return os.WriteFile(path, buf.Bytes(), 0o600)
}

// NewNamespace creates a namespace named prefix-NNNNNN (six random digits)
// for one test, through c, and returns its name. It is left behind: with
// no controller manager running, a deleted namespace never finishes
// terminating.
func NewNamespace(t testing.TB, c dynamic.Interface, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%06d", prefix, rand.IntN(1_000_000))
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := c.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}
