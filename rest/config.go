package rest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
)

// Defaults applied by NewForConfig when the corresponding Config field is zero.
const (
	// DefaultQPS is the sustained request rate of the client-side rate limiter.
	DefaultQPS float32 = 50
	// DefaultBurst is the burst size of the client-side rate limiter.
	DefaultBurst = 100
)

// Config holds what is needed to reach and authenticate to a Kubernetes API
// server. Field names match k8s.io/client-go/rest.Config for the fields it
// has, so a config literal moves between the two by changing the import.
//
// The zero value talks plain http to localhost, as client-go's does; real
// programs set Host (package kubeconfig does). A Config must not be
// modified after it has been passed to a constructor.
type Config struct {
	// Host is the API server address: a URL ("https://10.0.0.1:6443", with an
	// optional path prefix) or host:port. Without a scheme, https is used when
	// a certificate authority, a client certificate or Insecure is set, and
	// http otherwise; empty means "localhost". Both are client-go's rules
	// (its rest.DefaultServerUrlFor), so a Config that works there works here.
	Host string
	// APIPath is a path prefix added after Host's own path for every request.
	// It is normally empty; the core group is served under /api and named
	// groups under /apis whatever this says. It exists for client-go
	// compatibility of config literals and for servers mounted below a prefix.
	APIPath string

	// UserAgent is sent with every request. Empty means
	// "kdyn/VERSION (OS/ARCH)".
	UserAgent string

	// BearerToken is sent as "Authorization: Bearer TOKEN".
	BearerToken string
	// BearerTokenFile names a file holding the token. It takes precedence
	// over BearerToken and is re-read when it changes (rotated tokens).
	BearerTokenFile string

	// Username and Password are sent as HTTP basic authentication.
	Username string
	Password string

	// Impersonate makes every request act as another user.
	Impersonate ImpersonationConfig

	// TLSClientConfig holds the TLS settings.
	TLSClientConfig TLSClientConfig

	// ExecProvider runs an external credential plugin
	// (client.authentication.k8s.io) to obtain a token or client certificate.
	// kubeconfig sets it from a user's "exec" stanza.
	ExecProvider *ExecConfig

	// Transport, when set, is used instead of a transport built from the TLS
	// settings. Authentication, impersonation and the user agent are still
	// added around it. TLSClientConfig must then be empty.
	Transport http.RoundTripper
	// WrapTransport, when set, wraps the transport kdyn builds (after
	// authentication has been added), for instrumentation in tests and
	// programs.
	WrapTransport func(rt http.RoundTripper) http.RoundTripper
	// Proxy chooses the proxy for a request. Nil means
	// http.ProxyFromEnvironment. Schemes http, https and socks5 are supported.
	Proxy func(*http.Request) (*url.URL, error)
	// Dial opens network connections. Nil means a net.Dialer with a 30 s
	// timeout and 30 s keep-alive. On Linux a *net.TCPConn it returns is
	// read and written without the scheduler's system-call entry (see
	// Connections in the package documentation).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)

	// QPS is the sustained request rate of the client-side token bucket.
	// Zero means DefaultQPS; a negative value disables rate limiting.
	// Watches are never rate limited.
	QPS float32
	// Burst is the token bucket size. Zero means DefaultBurst.
	Burst int
	// DisableCompression turns off gzip for responses (the server compresses
	// large ones when asked). Compression saves bandwidth on slow links and
	// costs CPU on both ends; on loopback or fast networks it is often a loss.
	DisableCompression bool
	// CompressWatches lets every watch be sent gzip-compressed, as
	// client-go's are: the transport asks for gzip and inflates it. The zero
	// value asks for uncompressed watches (Accept-Encoding: identity),
	// kdyn's measured default: the server flushes every event, so each would
	// be a deflate block of its own, costing both ends more CPU than the
	// bytes save (see Watches in the package documentation). Set it where
	// bandwidth matters more than CPU, or for requests identical to
	// client-go's. A request that names its own Accept-Encoding keeps it;
	// with DisableCompression no encoding is asked for.
	CompressWatches bool

	// Timeout bounds each non-streaming request (watches and streams are not
	// bounded by it). Zero means no timeout beyond the caller's context.
	Timeout time.Duration

	// WarningHandler receives the server's "Warning:" response headers. Nil
	// means a handler that logs each distinct warning once through Logger.
	WarningHandler WarningHandler

	// Logger receives request logs; the zero value logs nothing. Method,
	// URL, status and latency are logged at logr's V(4); see LogVerbosity.
	// (kdyn's packages take a logr.Logger, as the Kubernetes Go ecosystem
	// does; go-logr/zapr puts one on a zap logger.)
	Logger logr.Logger
	// LogVerbosity follows kubectl's -v levels for what the debug logs hold:
	// 6 and above log method, URL, status and latency; 8 and above add
	// request and response bodies (secrets redacted); 9 adds an equivalent,
	// redacted curl command line. Values below 6 log nothing per request.
	LogVerbosity int

	// Metrics receives every request's outcome, latency, rate-limiter wait
	// and retries (see Metrics; package metrics exports them to
	// Prometheus). Nil observes nothing.
	Metrics Metrics
}

// ImpersonationConfig makes requests act as another user, through the
// Impersonate-* headers.
type ImpersonationConfig struct {
	// UserName is the user to act as.
	UserName string
	// UID is the user's UID.
	UID string
	// Groups are the user's groups.
	Groups []string
	// Extra holds extra user information, sent as Impersonate-Extra-KEY.
	Extra map[string][]string
}

// TLSClientConfig holds TLS settings. File and data forms may be mixed; the
// data form wins when both are set.
type TLSClientConfig struct {
	// Insecure skips verification of the server's certificate. It is off by
	// default and should stay off outside tests.
	Insecure bool
	// ServerName overrides the name checked in the server's certificate (and
	// sent as SNI).
	ServerName string

	// CertFile and KeyFile name a PEM client certificate and key.
	CertFile string
	KeyFile  string
	// CAFile names a PEM bundle of trusted root certificates.
	CAFile string

	// CertData, KeyData and CAData hold PEM bytes and take precedence over
	// the file forms.
	CertData []byte
	KeyData  []byte
	CAData   []byte
}

// ExecConfig describes an exec credential plugin, as in a kubeconfig user's
// "exec" stanza (client.authentication.k8s.io/v1 and v1beta1).
type ExecConfig struct {
	// Command is the program to run, looked up in PATH when it has no
	// path separator.
	Command string
	// Args are its arguments.
	Args []string
	// Env are extra environment variables for it.
	Env []ExecEnvVar
	// APIVersion is the ExecCredential version the plugin speaks:
	// "client.authentication.k8s.io/v1" or ".../v1beta1".
	APIVersion string
	// InstallHint is shown when the command cannot be found.
	InstallHint string
	// ProvideClusterInfo passes the cluster's server, CA and extension config
	// in KUBERNETES_EXEC_INFO.
	ProvideClusterInfo bool
	// Config is the cluster's "client.authentication.k8s.io/exec" extension,
	// passed in KUBERNETES_EXEC_INFO when ProvideClusterInfo is set.
	Config any
	// InteractiveMode is "Never", "IfAvailable" or "Always" (v1 requires it;
	// empty means "IfAvailable").
	InteractiveMode string
	// StdinIsTerminal reports whether the plugin may interact with the user.
	// Nil means "stdin is not a terminal".
	StdinIsTerminal func() bool
	// StdinUnavailable says that the program uses standard input itself
	// (it carries a manifest, say), so the plugin must not read it: an
	// "IfAvailable" plugin runs non-interactively, an "Always" plugin fails
	// with StdinUnavailableMessage. The same field as client-go's.
	StdinUnavailable bool
	// StdinUnavailableMessage says what uses standard input, for the error
	// of an "Always" plugin ("used by stdin resource manifest reader").
	StdinUnavailableMessage string
	// PluginPolicy says whether this plugin may run at all (kubectl's
	// kuberc credentialPluginPolicy); the zero value lets every plugin run.
	PluginPolicy ExecPluginPolicy
}

// Exec plugin policies, as kubectl's kuberc names them.
const (
	ExecPolicyAllowAll  = "AllowAll"
	ExecPolicyDenyAll   = "DenyAll"
	ExecPolicyAllowlist = "Allowlist"
)

// ExecPluginPolicy says which exec credential plugins may run.
type ExecPluginPolicy struct {
	// Type is "" (the same as ExecPolicyAllowAll), ExecPolicyAllowAll,
	// ExecPolicyDenyAll or ExecPolicyAllowlist.
	Type string
	// Allowlist are the commands an ExecPolicyAllowlist policy lets run: a
	// name looked up in PATH, or a clean path. A plugin runs when its
	// command is one of them, or resolves to the same executable as one.
	Allowlist []string
}

// Validate reports a policy that cannot be used, as client-go does: an
// unknown type, an allowlist with another type, an empty allowlist, or an
// entry that is empty or not a clean path.
func (p ExecPluginPolicy) Validate() error {
	switch p.Type {
	case "", ExecPolicyAllowAll, ExecPolicyDenyAll:
		if p.Allowlist != nil {
			return fmt.Errorf("misconfigured credential plugin allowlist: plugin policy is %q but allowlist is non-nil", p.Type)
		}
		return nil
	case ExecPolicyAllowlist:
	default:
		return fmt.Errorf("unknown credential plugin policy %q; use %s, %s or %s", p.Type, ExecPolicyAllowAll, ExecPolicyDenyAll, ExecPolicyAllowlist)
	}
	if len(p.Allowlist) == 0 {
		return fmt.Errorf("credential plugin policy set to %q, but allowlist is empty; use %q policy instead", ExecPolicyAllowlist, ExecPolicyDenyAll)
	}
	for i, c := range p.Allowlist {
		switch {
		case c == "":
			return fmt.Errorf("misconfigured credential plugin allowlist: empty allowlist entry #%d", i+1)
		case filepath.Clean(c) != c:
			return fmt.Errorf("credential plugin allowlist entry #%d: non-normalized file path %q (use %q)", i+1, c, filepath.Clean(c))
		}
	}
	return nil
}

// resolve returns the executable command names when p lets it run.
func (p ExecPluginPolicy) resolve(command string) (string, error) {
	path, lookErr := exec.LookPath(command)
	switch p.Type {
	case "", ExecPolicyAllowAll:
		if lookErr != nil {
			return command, nil // exec reports the missing command
		}
		return path, nil
	case ExecPolicyDenyAll:
		return "", fmt.Errorf("plugin %q not allowed: policy set to %q", command, ExecPolicyDenyAll)
	}
	if lookErr != nil {
		return "", fmt.Errorf("plugin path %q cannot be resolved for credential plugin allowlist check: %w", command, lookErr)
	}
	for _, allowed := range p.Allowlist {
		if allowed == command || allowed == path {
			return path, nil
		}
		if resolved, err := exec.LookPath(allowed); err == nil && resolved == path {
			return path, nil
		}
	}
	return "", fmt.Errorf("plugin path %q is not permitted by the credential plugin allowlist", path)
}

// ExecEnvVar is one environment variable for an exec plugin.
type ExecEnvVar struct {
	Name  string
	Value string
}

// CopyConfig returns a deep copy of c.
func CopyConfig(c *Config) *Config {
	if c == nil {
		return nil
	}
	out := *c
	out.Impersonate.Groups = append([]string(nil), c.Impersonate.Groups...)
	if c.Impersonate.Extra != nil {
		out.Impersonate.Extra = make(map[string][]string, len(c.Impersonate.Extra))
		for k, v := range c.Impersonate.Extra {
			out.Impersonate.Extra[k] = append([]string(nil), v...)
		}
	}
	out.TLSClientConfig.CertData = append([]byte(nil), c.TLSClientConfig.CertData...)
	out.TLSClientConfig.KeyData = append([]byte(nil), c.TLSClientConfig.KeyData...)
	out.TLSClientConfig.CAData = append([]byte(nil), c.TLSClientConfig.CAData...)
	if c.ExecProvider != nil {
		e := *c.ExecProvider
		e.Args = append([]string(nil), e.Args...)
		e.Env = append([]ExecEnvVar(nil), e.Env...)
		out.ExecProvider = &e
	}
	return &out
}

// String returns a description of the config with every credential
// redacted, so a Config can be logged or printed safely.
func (c *Config) String() string {
	if c == nil {
		return "<nil>"
	}
	r := CopyConfig(c)
	if r.BearerToken != "" {
		r.BearerToken = redacted
	}
	if r.Password != "" {
		r.Password = redacted
	}
	if len(r.TLSClientConfig.KeyData) > 0 {
		r.TLSClientConfig.KeyData = []byte(redacted)
	}
	if len(r.TLSClientConfig.CertData) > 0 {
		r.TLSClientConfig.CertData = []byte("--- CERTIFICATE DATA ---")
	}
	if len(r.TLSClientConfig.CAData) > 0 {
		r.TLSClientConfig.CAData = []byte("--- CA DATA ---")
	}
	s := "&rest.Config{Host:" + quote(r.Host) + ", APIPath:" + quote(r.APIPath) +
		", UserAgent:" + quote(r.UserAgent) + ", BearerToken:" + quote(r.BearerToken) +
		", BearerTokenFile:" + quote(r.BearerTokenFile) + ", Username:" + quote(r.Username) +
		", Password:" + quote(r.Password) + ", Impersonate:" + quote(r.Impersonate.UserName) +
		", TLSClientConfig:{Insecure:" + boolString(r.TLSClientConfig.Insecure) +
		", ServerName:" + quote(r.TLSClientConfig.ServerName) + ", CertFile:" + quote(r.TLSClientConfig.CertFile) +
		", KeyFile:" + quote(r.TLSClientConfig.KeyFile) + ", CAFile:" + quote(r.TLSClientConfig.CAFile) +
		", CertData:" + quote(string(r.TLSClientConfig.CertData)) + ", KeyData:" + quote(string(r.TLSClientConfig.KeyData)) +
		", CAData:" + quote(string(r.TLSClientConfig.CAData)) + "}"
	if r.ExecProvider != nil {
		s += ", ExecProvider:" + quote(r.ExecProvider.Command)
	}
	return s + "}"
}

const redacted = "--- REDACTED ---"

func quote(s string) string { return `"` + s + `"` }

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
