package kubeconfig

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/kdyn/kdyn/rest"
)

// DefaultNamespace is the namespace used when neither an override nor the
// context names one.
const DefaultNamespace = "default"

// Overrides are command-line settings that win over the kubeconfig, as
// kubectl's global flags do. The zero value overrides nothing.
type Overrides struct {
	// Context selects a context instead of current-context (--context).
	Context string
	// Cluster selects a cluster instead of the context's (--cluster).
	Cluster string
	// User selects a user instead of the context's (--user).
	User string
	// Namespace replaces the context's namespace (--namespace).
	Namespace string

	// Server replaces the cluster's server URL (--server). It also drops
	// the cluster's tls-server-name unless TLSServerName is set, since that
	// name belonged to the old server. With Server set, no context is
	// needed.
	Server string
	// TLSServerName replaces the cluster's tls-server-name.
	TLSServerName string
	// CertificateAuthority replaces the cluster's CA with this file, and
	// turns insecure-skip-tls-verify off.
	CertificateAuthority string
	// InsecureSkipTLSVerify, when non-nil, replaces the cluster's setting;
	// true also drops the cluster's CA, which cannot be combined with it.
	InsecureSkipTLSVerify *bool

	// Token replaces the user's credentials with this bearer token: the
	// user's token file, basic auth, client certificate, exec plugin and
	// auth-provider are dropped (ClientCertificate/ClientKey given here
	// are kept).
	Token string
	// ClientCertificate and ClientKey replace the user's client
	// certificate and key with these files.
	ClientCertificate string
	ClientKey         string

	// Impersonate (--as), ImpersonateUID (--as-uid) and ImpersonateGroups
	// (--as-group) replace the user's impersonation settings, each when set.
	Impersonate       string
	ImpersonateUID    string
	ImpersonateGroups []string

	// Timeout bounds each request (--request-timeout); zero means none.
	Timeout time.Duration
}

// Result is the outcome of resolving a kubeconfig.
type Result struct {
	// Config is ready for rest.HTTPClientFor or dynamic.NewForConfig.
	Config *rest.Config
	// Namespace is the override, else the context's namespace, else
	// "default" (in a cluster: the pod's namespace).
	Namespace string
	// NamespaceOverridden reports whether Namespace came from
	// Overrides.Namespace, for commands that must refuse objects from
	// another namespace.
	NamespaceOverridden bool
	// Context, Cluster and User are the names that were used; empty when
	// they did not come from the kubeconfig.
	Context string
	Cluster string
	User    string
	// InCluster reports whether the configuration came from the pod's
	// service account rather than a kubeconfig file.
	InCluster bool
}

// ClientConfig selects a context (the override, else current-context),
// applies the overrides and returns the rest.Config to use. It checks what
// a request would need — that the names resolve, that referenced
// certificate and token files exist — so mistakes are reported with the
// file and field at fault rather than at the first request.
func (c *Config) ClientConfig(o Overrides) (*Result, error) {
	if c == nil {
		c = &Config{}
	}
	ctxName := o.Context
	if ctxName == "" {
		ctxName = c.CurrentContext
	}
	var kctx Context
	if ctxName != "" {
		p := c.Contexts[ctxName]
		if p == nil {
			ref := "--context"
			if o.Context == "" {
				ref = "current-context"
				if c.CurrentContextSource != "" {
					ref += " in " + c.CurrentContextSource
				}
			}
			return nil, &NotFoundError{Kind: "context", Name: ctxName, ReferencedBy: ref, Available: sortedKeys(c.Contexts)}
		}
		kctx = *p
	}
	ctxDesc := describe("context", ctxName, kctx.Source)

	clusterName, clusterRef := o.Cluster, "--cluster"
	if clusterName == "" {
		clusterName, clusterRef = kctx.Cluster, ctxDesc
	}
	var cluster Cluster
	if clusterName != "" {
		p := c.Clusters[clusterName]
		if p == nil {
			return nil, &NotFoundError{Kind: "cluster", Name: clusterName, ReferencedBy: clusterRef, Available: sortedKeys(c.Clusters)}
		}
		cluster = *p
	} else if o.Server == "" {
		if ctxName != "" {
			return nil, fmt.Errorf("kubeconfig: %s names no cluster; set its cluster field, or pass --cluster or --server", ctxDesc)
		}
		return nil, c.noContextError()
	}

	userName, userRef := o.User, "--user"
	if userName == "" {
		userName, userRef = kctx.AuthInfo, ctxDesc
	}
	var user AuthInfo
	if userName != "" {
		p := c.AuthInfos[userName]
		if p == nil {
			return nil, &NotFoundError{Kind: "user", Name: userName, ReferencedBy: userRef, Available: sortedKeys(c.AuthInfos)}
		}
		user = *p
	}

	cfg, err := build(clusterName, cluster, userName, user, o)
	if err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, Context: ctxName, Cluster: clusterName, User: userName}
	res.Namespace, res.NamespaceOverridden = namespaceFor(o, kctx.Namespace, DefaultNamespace)
	return res, nil
}

func (c *Config) noContextError() error {
	where := ""
	if len(c.Sources) > 0 {
		where = " in " + strings.Join(c.Sources, ", ")
	}
	if len(c.Contexts) == 0 {
		return fmt.Errorf("kubeconfig: no context is selected: current-context is not set and no contexts are defined%s; add a context or pass --server", where)
	}
	return fmt.Errorf("kubeconfig: no context is selected: current-context is not set%s; pick one of %s with --context or \"kdyn config use-context NAME\", or pass --server",
		where, strings.Join(sortedKeys(c.Contexts), ", "))
}

func namespaceFor(o Overrides, fromConfig, fallback string) (string, bool) {
	switch {
	case o.Namespace != "":
		return o.Namespace, true
	case fromConfig != "":
		return fromConfig, false
	default:
		return fallback, false
	}
}

// build turns a cluster and user, after overrides, into a rest.Config.
func build(clusterName string, cluster Cluster, userName string, user AuthInfo, o Overrides) (*rest.Config, error) {
	cdesc := "the cluster"
	if clusterName != "" {
		cdesc = describe("cluster", clusterName, cluster.Source)
	}
	udesc := describe("user", userName, user.Source)

	// Cluster overrides.
	if o.Server != "" {
		cluster.Server = o.Server
		if o.TLSServerName == "" {
			cluster.TLSServerName = ""
		}
	}
	if o.TLSServerName != "" {
		cluster.TLSServerName = o.TLSServerName
	}
	if o.CertificateAuthority != "" {
		if o.InsecureSkipTLSVerify != nil && *o.InsecureSkipTLSVerify {
			return nil, errors.New("kubeconfig: --certificate-authority and --insecure-skip-tls-verify are both set; use one of them")
		}
		cluster.CertificateAuthority = o.CertificateAuthority
		cluster.CertificateAuthorityData = nil
		cluster.InsecureSkipTLSVerify = false
	}
	if o.InsecureSkipTLSVerify != nil {
		cluster.InsecureSkipTLSVerify = *o.InsecureSkipTLSVerify
		if cluster.InsecureSkipTLSVerify {
			cluster.CertificateAuthority = ""
			cluster.CertificateAuthorityData = nil
		}
	}

	if strings.TrimSpace(cluster.Server) == "" {
		return nil, fmt.Errorf("kubeconfig: %s has no server; set its server field or pass --server", cdesc)
	}
	if cluster.InsecureSkipTLSVerify && (cluster.CertificateAuthority != "" || len(cluster.CertificateAuthorityData) > 0) {
		return nil, fmt.Errorf("kubeconfig: %s sets insecure-skip-tls-verify together with a certificate-authority; remove one of them", cdesc)
	}
	cfg := &rest.Config{
		Host:               cluster.Server,
		Timeout:            o.Timeout,
		DisableCompression: cluster.DisableCompression,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure:   cluster.InsecureSkipTLSVerify,
			ServerName: cluster.TLSServerName,
			CAData:     append([]byte(nil), cluster.CertificateAuthorityData...),
		},
	}
	if len(cfg.TLSClientConfig.CAData) == 0 && cluster.CertificateAuthority != "" {
		owner := cdesc
		if o.CertificateAuthority != "" {
			owner = "--certificate-authority"
		}
		if err := checkFile(owner, "certificate-authority", cluster.CertificateAuthority); err != nil {
			return nil, err
		}
		cfg.TLSClientConfig.CAFile = cluster.CertificateAuthority
	}
	if cluster.ProxyURL != "" {
		u, err := url.Parse(cluster.ProxyURL)
		if err != nil {
			// The parse error quotes the URL, which may hold a password.
			return nil, fmt.Errorf("kubeconfig: %s: proxy-url %q is not a valid URL", cdesc, redactURL(cluster.ProxyURL))
		}
		switch u.Scheme {
		case "http", "https", "socks5", "socks5h":
		default:
			return nil, fmt.Errorf("kubeconfig: %s: proxy-url %q has scheme %q; use http, https or socks5", cdesc, redactProxyURL(u), u.Scheme)
		}
		if u.Host == "" {
			return nil, fmt.Errorf("kubeconfig: %s: proxy-url %q has no host", cdesc, redactProxyURL(u))
		}
		cfg.Proxy = http.ProxyURL(u)
	}

	// User overrides.
	if o.Token != "" {
		user = AuthInfo{
			Token:                o.Token,
			Impersonate:          user.Impersonate,
			ImpersonateUID:       user.ImpersonateUID,
			ImpersonateGroups:    user.ImpersonateGroups,
			ImpersonateUserExtra: user.ImpersonateUserExtra,
			Source:               user.Source,
		}
	}
	if o.ClientCertificate != "" {
		user.ClientCertificate, user.ClientCertificateData = o.ClientCertificate, nil
	}
	if o.ClientKey != "" {
		user.ClientKey, user.ClientKeyData = o.ClientKey, nil
	}
	if o.Impersonate != "" {
		user.Impersonate = o.Impersonate
	}
	if o.ImpersonateUID != "" {
		user.ImpersonateUID = o.ImpersonateUID
	}
	if len(o.ImpersonateGroups) > 0 {
		user.ImpersonateGroups = o.ImpersonateGroups
	}

	if ap := user.AuthProvider; ap != nil {
		return nil, fmt.Errorf("kubeconfig: user %q uses auth-provider %q, which kdyn does not support; use an exec credential plugin instead (e.g. kubelogin, gke-gcloud-auth-plugin)", userName, ap.Name)
	}
	if user.Token != "" && (user.Username != "" || user.Password != "") {
		return nil, fmt.Errorf("kubeconfig: %s has both a token and a username/password; keep only one authentication method", udesc)
	}
	cfg.BearerToken = user.Token
	if user.TokenFile != "" {
		if err := checkFile(udesc, "tokenFile", user.TokenFile); err != nil {
			return nil, err
		}
		cfg.BearerTokenFile = user.TokenFile
	}
	cfg.Username, cfg.Password = user.Username, user.Password

	t := &cfg.TLSClientConfig
	t.CertData = append([]byte(nil), user.ClientCertificateData...)
	t.KeyData = append([]byte(nil), user.ClientKeyData...)
	if len(t.CertData) == 0 && user.ClientCertificate != "" {
		owner := udesc
		if o.ClientCertificate != "" {
			owner = "--client-certificate"
		}
		if err := checkFile(owner, "client-certificate", user.ClientCertificate); err != nil {
			return nil, err
		}
		t.CertFile = user.ClientCertificate
	}
	if len(t.KeyData) == 0 && user.ClientKey != "" {
		owner := udesc
		if o.ClientKey != "" {
			owner = "--client-key"
		}
		if err := checkFile(owner, "client-key", user.ClientKey); err != nil {
			return nil, err
		}
		t.KeyFile = user.ClientKey
	}
	hasCert := len(t.CertData) > 0 || t.CertFile != ""
	hasKey := len(t.KeyData) > 0 || t.KeyFile != ""
	switch {
	case hasCert && !hasKey:
		return nil, fmt.Errorf("kubeconfig: %s has a client-certificate but no client-key or client-key-data", udesc)
	case hasKey && !hasCert:
		return nil, fmt.Errorf("kubeconfig: %s has a client-key but no client-certificate or client-certificate-data", udesc)
	}

	if user.Impersonate == "" && (user.ImpersonateUID != "" || len(user.ImpersonateGroups) > 0 || len(user.ImpersonateUserExtra) > 0) {
		return nil, fmt.Errorf("kubeconfig: %s: impersonation of a uid, groups or user-extra needs a user to impersonate (as, or --as)", udesc)
	}
	if user.Impersonate != "" {
		cfg.Impersonate = rest.ImpersonationConfig{
			UserName: user.Impersonate,
			UID:      user.ImpersonateUID,
			Groups:   append([]string(nil), user.ImpersonateGroups...),
		}
		if len(user.ImpersonateUserExtra) > 0 {
			cfg.Impersonate.Extra = make(map[string][]string, len(user.ImpersonateUserExtra))
			for k, v := range user.ImpersonateUserExtra {
				cfg.Impersonate.Extra[k] = append([]string(nil), v...)
			}
		}
	}

	if e := user.Exec; e != nil {
		ec, err := execConfig(userName, udesc, e, cluster)
		if err != nil {
			return nil, err
		}
		cfg.ExecProvider = ec
	}
	return cfg, nil
}

// Exec API versions, as in rest.
const (
	execAPIv1      = "client.authentication.k8s.io/v1"
	execAPIv1beta1 = "client.authentication.k8s.io/v1beta1"
)

func execConfig(userName, udesc string, e *ExecConfig, cluster Cluster) (*rest.ExecConfig, error) {
	if strings.TrimSpace(e.Command) == "" {
		return nil, fmt.Errorf("kubeconfig: %s: exec.command is empty", udesc)
	}
	switch e.APIVersion {
	case execAPIv1:
		if e.InteractiveMode == "" {
			// kubectl's words first: scripts match them.
			return nil, fmt.Errorf("kubeconfig: interactiveMode must be specified for %s to use exec authentication plugin (%s: exec.interactiveMode must be set for %s; use Never, IfAvailable or Always)", userName, udesc, execAPIv1)
		}
	case execAPIv1beta1:
	case "":
		return nil, fmt.Errorf("kubeconfig: %s: exec.apiVersion is empty; set it to %s (or %s for older plugins)", udesc, execAPIv1, execAPIv1beta1)
	default:
		return nil, fmt.Errorf("kubeconfig: %s: exec.apiVersion %q is not supported; use %s or %s", udesc, e.APIVersion, execAPIv1, execAPIv1beta1)
	}
	ec := &rest.ExecConfig{
		Command:            e.Command,
		Args:               append([]string(nil), e.Args...),
		APIVersion:         e.APIVersion,
		InstallHint:        e.InstallHint,
		ProvideClusterInfo: e.ProvideClusterInfo,
		InteractiveMode:    e.InteractiveMode,
		StdinIsTerminal:    stdinIsTerminal,
	}
	for _, v := range e.Env {
		ec.Env = append(ec.Env, rest.ExecEnvVar(v))
	}
	if raw, ok := cluster.Extensions[execExtension]; ok && len(raw) > 0 {
		ec.Config = raw
	}
	return ec, nil
}

func stdinIsTerminal() bool { return isTerminal(os.Stdin) }

// checkFile reports a referenced file that cannot be used.
func checkFile(owner, field, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("kubeconfig: %s: %s file %q: %w", owner, field, path, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("kubeconfig: %s: %s %q is a directory, not a file", owner, field, path)
	}
	return nil
}

// Resolve loads the kubeconfig files of rules (nil means
// NewDefaultLoadingRules()), applies the overrides and returns the
// configuration to use.
//
// When no file was named explicitly and the files found define nothing, it
// falls back to the in-cluster configuration if KUBERNETES_SERVICE_HOST and
// KUBERNETES_SERVICE_PORT are set (the namespace, server, CA, TLS, token,
// impersonation and timeout overrides still apply; context, cluster and user
// overrides are ignored). Otherwise, unless Overrides.Server is set, it
// returns an error wrapping ErrNoConfig that says where it looked.
func Resolve(rules *LoadingRules, o Overrides) (*Result, error) {
	if rules == nil {
		rules = NewDefaultLoadingRules()
	}
	c, err := Load(rules)
	if err != nil {
		return nil, err
	}
	if rules.ExplicitPath == "" && c.isEmpty() {
		if rules.InCluster.possible() {
			return rules.InCluster.result(o)
		}
		if o.Server == "" {
			return nil, noConfigError(rules, c)
		}
	}
	return c.ClientConfig(o)
}

func noConfigError(rules *LoadingRules, c *Config) error {
	var looked string
	switch {
	case len(c.Sources) > 0:
		looked = "the kubeconfig files " + strings.Join(c.Sources, ", ") + " define no clusters, users or contexts"
	case len(rules.Precedence) > 0:
		looked = "no kubeconfig file at " + strings.Join(rules.Precedence, ", ")
	default:
		looked = "no kubeconfig file was given"
	}
	return fmt.Errorf("%w: %s, and this is not a pod in a cluster (KUBERNETES_SERVICE_HOST is not set); set %s, pass --kubeconfig, or pass --server",
		ErrNoConfig, looked, EnvVar)
}

// redactProxyURL is u.Redacted(), also for a URL written without "//"
// ("user:pw@proxy:3128", "http:user:pw@proxy"): url.Parse reads it as
// opaque, with no user info for Redacted to hide, so everything before the
// last "@" of the opaque part is hidden.
func redactProxyURL(u *url.URL) string {
	if u.User == nil && u.Opaque != "" {
		if at := strings.LastIndex(u.Opaque, "@"); at >= 0 {
			c := *u
			c.Opaque = "xxxxx" + u.Opaque[at:]
			return c.String()
		}
	}
	return u.Redacted()
}

// redactURL hides the password of a URL that does not parse: everything
// between "://" and the last "@" before the path.
func redactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	at := strings.LastIndex(host, "@")
	if at < 0 {
		return s
	}
	user, _, _ := strings.Cut(host[:at], ":")
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}
