package kubeconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/kdyn/kdyn/rest"
)

// ServiceAccountDir is where Kubernetes mounts a pod's service-account
// token, CA bundle and namespace.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InClusterOptions says where to find the in-cluster configuration. The
// zero value reads the process environment and ServiceAccountDir; tests
// replace them.
type InClusterOptions struct {
	// LookupEnv reads environment variables; nil means os.LookupEnv.
	LookupEnv func(key string) (string, bool)
	// ServiceAccountDir holds token, ca.crt and namespace; empty means
	// ServiceAccountDir.
	ServiceAccountDir string
}

func (o InClusterOptions) env(key string) string {
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, _ := lookup(key)
	return strings.TrimSpace(v)
}

func (o InClusterOptions) dir() string {
	if o.ServiceAccountDir != "" {
		return o.ServiceAccountDir
	}
	return ServiceAccountDir
}

// possible reports whether the process looks like it runs in a pod.
func (o InClusterOptions) possible() bool {
	return o.env("KUBERNETES_SERVICE_HOST") != "" && o.env("KUBERNETES_SERVICE_PORT") != ""
}

// InClusterConfig returns the configuration of a process running in a pod:
// the API server from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT,
// the service-account token (re-read when the kubelet rotates it) and CA
// from ServiceAccountDir, and the namespace from POD_NAMESPACE or the
// service-account namespace file ("default" when neither is there).
func InClusterConfig() (*rest.Config, string, error) {
	return InClusterOptions{}.Config()
}

// Config is InClusterConfig with the environment and directory of o.
func (o InClusterOptions) Config() (*rest.Config, string, error) {
	host, port := o.env("KUBERNETES_SERVICE_HOST"), o.env("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, "", fmt.Errorf("%w: not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set", ErrNoConfig)
	}
	dir := o.dir()
	tokenFile := filepath.Join(dir, "token")
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: in-cluster: read the service-account token: %w (is automountServiceAccountToken disabled for this pod?)", err)
	}
	if strings.TrimSpace(string(token)) == "" {
		return nil, "", fmt.Errorf("kubeconfig: in-cluster: the service-account token file %s is empty", tokenFile)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if _, err := os.Stat(caFile); err != nil {
		return nil, "", fmt.Errorf("kubeconfig: in-cluster: the service-account CA bundle: %w", err)
	}
	cfg := &rest.Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		BearerToken:     strings.TrimSpace(string(token)),
		BearerTokenFile: tokenFile,
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
	}
	ns := o.env("POD_NAMESPACE")
	if ns == "" {
		b, err := os.ReadFile(filepath.Join(dir, "namespace"))
		switch {
		case err == nil:
			ns = strings.TrimSpace(string(b))
		case !errors.Is(err, fs.ErrNotExist):
			return nil, "", fmt.Errorf("kubeconfig: in-cluster: read the namespace: %w", err)
		}
	}
	if ns == "" {
		ns = DefaultNamespace
	}
	return cfg, ns, nil
}

// result is the in-cluster configuration with the overrides that make
// sense for it applied.
func (o InClusterOptions) result(ov Overrides) (*Result, error) {
	base, ns, err := o.Config()
	if err != nil {
		return nil, err
	}
	cluster := Cluster{Server: base.Host, CertificateAuthority: base.TLSClientConfig.CAFile}
	user := AuthInfo{TokenFile: base.BearerTokenFile}
	cfg, err := build("", cluster, "", user, ov)
	if err != nil {
		return nil, err
	}
	if ov.Token == "" {
		cfg.BearerToken = base.BearerToken // fallback while the file rotates
	}
	res := &Result{Config: cfg, InCluster: true}
	res.Namespace, res.NamespaceOverridden = namespaceFor(ov, ns, DefaultNamespace)
	return res, nil
}
