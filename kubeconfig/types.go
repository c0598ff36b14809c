package kubeconfig

import "encoding/json"

// Config is a kubeconfig: named clusters, users and contexts, and the
// current context. Load returns the merge of several files; Parse returns
// one file. The maps are keyed by name and may be nil.
//
// Paths inside a loaded Config (certificate-authority, client-certificate,
// client-key, tokenFile and exec commands containing a path separator) have
// already been made absolute against the directory of the file that named
// them, as kubectl does.
type Config struct {
	// Preferences holds kubectl's CLI preferences. kdyn keeps them for
	// round trips and does not use them.
	Preferences Preferences
	// Clusters maps cluster names to API server endpoints.
	Clusters map[string]*Cluster
	// AuthInfos maps user names (the "users" list of the file) to
	// credentials.
	AuthInfos map[string]*AuthInfo
	// Contexts maps context names to a cluster, a user and a namespace.
	Contexts map[string]*Context
	// CurrentContext names the context used when none is asked for.
	CurrentContext string
	// Extensions holds the top-level extensions, by name, as JSON.
	Extensions map[string]json.RawMessage

	// Sources lists the files that were read, in precedence order. It is
	// empty when no file was found.
	Sources []string
	// CurrentContextSource is the file whose current-context won the merge,
	// or "" when no file set one.
	CurrentContextSource string
}

// Preferences holds kubectl's CLI preferences.
type Preferences struct {
	// Colors is kubectl's legacy "colors" preference.
	Colors bool
	// Extensions holds preference extensions, by name, as JSON.
	Extensions map[string]json.RawMessage
}

// Cluster is how to reach one API server.
type Cluster struct {
	// Server is the API server URL, e.g. https://10.0.0.1:6443.
	Server string
	// TLSServerName is the name checked in the server certificate and sent
	// as SNI, when it differs from the host in Server.
	TLSServerName string
	// InsecureSkipTLSVerify disables verification of the server
	// certificate.
	InsecureSkipTLSVerify bool
	// CertificateAuthority is a file of PEM root certificates.
	CertificateAuthority string
	// CertificateAuthorityData holds PEM root certificates; it wins over
	// CertificateAuthority.
	CertificateAuthorityData []byte
	// ProxyURL is an http, https or socks5 proxy for all requests to the
	// cluster.
	ProxyURL string
	// DisableCompression asks for uncompressed responses
	// (rest.Config.DisableCompression).
	DisableCompression bool
	// Extensions holds cluster extensions, by name, as JSON. The
	// "client.authentication.k8s.io/exec" extension is passed to exec
	// plugins that ask for cluster information.
	Extensions map[string]json.RawMessage

	// Source is the file the cluster was read from.
	Source string
}

// Context ties a cluster, a user and a default namespace together.
type Context struct {
	// Cluster names an entry of Config.Clusters.
	Cluster string
	// AuthInfo names an entry of Config.AuthInfos ("user" in the file).
	AuthInfo string
	// Namespace is the default namespace; empty means "default".
	Namespace string
	// Extensions holds context extensions, by name, as JSON.
	Extensions map[string]json.RawMessage

	// Source is the file the context was read from.
	Source string
}

// AuthInfo holds the credentials of one user.
type AuthInfo struct {
	// ClientCertificate and ClientKey name PEM files for TLS client
	// authentication.
	ClientCertificate string
	ClientKey         string
	// ClientCertificateData and ClientKeyData hold the PEM bytes and win
	// over the file forms.
	ClientCertificateData []byte
	ClientKeyData         []byte
	// Token is a bearer token.
	Token string
	// TokenFile names a file holding a bearer token, re-read when it
	// changes.
	TokenFile string
	// Impersonate, ImpersonateUID, ImpersonateGroups and
	// ImpersonateUserExtra ("as", "as-uid", "as-groups", "as-user-extra")
	// make requests act as another user.
	Impersonate          string
	ImpersonateUID       string
	ImpersonateGroups    []string
	ImpersonateUserExtra map[string][]string
	// Username and Password are for HTTP basic authentication.
	Username string
	Password string
	// AuthProvider is a legacy in-tree auth provider. kdyn does not run
	// them; ClientConfig returns an error for a user that has one.
	AuthProvider *AuthProviderConfig
	// Exec runs a credential plugin.
	Exec *ExecConfig
	// Extensions holds user extensions, by name, as JSON.
	Extensions map[string]json.RawMessage

	// Source is the file the user was read from.
	Source string
}

// AuthProviderConfig is a legacy "auth-provider" stanza.
type AuthProviderConfig struct {
	// Name is the provider, e.g. "oidc", "gcp" or "azure".
	Name string
	// Config is the provider's settings; it may hold secrets.
	Config map[string]string
}

// ExecConfig is a user's "exec" stanza: a credential plugin speaking
// client.authentication.k8s.io/v1 or v1beta1.
type ExecConfig struct {
	// Command is the plugin, looked up in PATH when it has no path
	// separator.
	Command string
	// Args are its arguments.
	Args []string
	// Env holds extra environment variables for it.
	Env []ExecEnvVar
	// APIVersion is the ExecCredential version the plugin speaks.
	APIVersion string
	// InstallHint is shown when the command is not found.
	InstallHint string
	// ProvideClusterInfo passes the cluster's details to the plugin.
	ProvideClusterInfo bool
	// InteractiveMode is "Never", "IfAvailable" or "Always"; required for
	// client.authentication.k8s.io/v1.
	InteractiveMode string
}

// ExecEnvVar is one environment variable of an exec plugin.
type ExecEnvVar struct {
	// Name is the variable name.
	Name string
	// Value is its value.
	Value string
}

// execExtension is the cluster extension passed to exec plugins as
// spec.cluster.config.
const execExtension = "client.authentication.k8s.io/exec"

// isEmpty reports whether c defines nothing that could select a server.
func (c *Config) isEmpty() bool {
	return c == nil || (len(c.Clusters) == 0 && len(c.AuthInfos) == 0 && len(c.Contexts) == 0 && c.CurrentContext == "")
}
