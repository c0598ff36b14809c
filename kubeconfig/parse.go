package kubeconfig

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// The file form of a kubeconfig (apiVersion v1, kind Config). Lists of
// named entries become maps in Config; *-data fields are base64 strings
// here, decoded by Parse so that errors can name the field.

type fileConfig struct {
	Kind           string               `json:"kind,omitempty"`
	APIVersion     string               `json:"apiVersion,omitempty"`
	Preferences    *filePreferences     `json:"preferences,omitempty"`
	Clusters       []*fileNamedCluster  `json:"clusters"`
	AuthInfos      []*fileNamedAuthInfo `json:"users"`
	Contexts       []*fileNamedContext  `json:"contexts"`
	CurrentContext string               `json:"current-context"`
	Extensions     []*fileNamedExt      `json:"extensions,omitempty"`
}

type filePreferences struct {
	Colors     bool            `json:"colors,omitempty"`
	Extensions []*fileNamedExt `json:"extensions,omitempty"`
}

type fileNamedExt struct {
	Name      string          `json:"name"`
	Extension json.RawMessage `json:"extension"`
}

type fileNamedCluster struct {
	Name    string       `json:"name"`
	Cluster *fileCluster `json:"cluster"`
}

type fileCluster struct {
	Server                   string          `json:"server,omitempty"`
	TLSServerName            string          `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool            `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthority     string          `json:"certificate-authority,omitempty"`
	CertificateAuthorityData string          `json:"certificate-authority-data,omitempty"`
	ProxyURL                 string          `json:"proxy-url,omitempty"`
	DisableCompression       bool            `json:"disable-compression,omitempty"`
	Extensions               []*fileNamedExt `json:"extensions,omitempty"`
}

type fileNamedContext struct {
	Name    string       `json:"name"`
	Context *fileContext `json:"context"`
}

type fileContext struct {
	Cluster    string          `json:"cluster"`
	AuthInfo   string          `json:"user"`
	Namespace  string          `json:"namespace,omitempty"`
	Extensions []*fileNamedExt `json:"extensions,omitempty"`
}

type fileNamedAuthInfo struct {
	Name     string        `json:"name"`
	AuthInfo *fileAuthInfo `json:"user"`
}

type fileAuthInfo struct {
	ClientCertificate     string              `json:"client-certificate,omitempty"`
	ClientCertificateData string              `json:"client-certificate-data,omitempty"`
	ClientKey             string              `json:"client-key,omitempty"`
	ClientKeyData         string              `json:"client-key-data,omitempty"`
	Token                 string              `json:"token,omitempty"`
	TokenFile             string              `json:"tokenFile,omitempty"`
	Impersonate           string              `json:"as,omitempty"`
	ImpersonateUID        string              `json:"as-uid,omitempty"`
	ImpersonateGroups     []string            `json:"as-groups,omitempty"`
	ImpersonateUserExtra  map[string][]string `json:"as-user-extra,omitempty"`
	Username              string              `json:"username,omitempty"`
	Password              string              `json:"password,omitempty"`
	AuthProvider          *fileAuthProvider   `json:"auth-provider,omitempty"`
	Exec                  *fileExec           `json:"exec,omitempty"`
	Extensions            []*fileNamedExt     `json:"extensions,omitempty"`
}

type fileAuthProvider struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config,omitempty"`
}

type fileExec struct {
	Command            string        `json:"command"`
	Args               []string      `json:"args,omitempty"`
	Env                []fileExecEnv `json:"env,omitempty"`
	APIVersion         string        `json:"apiVersion,omitempty"`
	InstallHint        string        `json:"installHint,omitempty"`
	ProvideClusterInfo bool          `json:"provideClusterInfo,omitempty"`
	InteractiveMode    string        `json:"interactiveMode,omitempty"`
}

type fileExecEnv struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// LoadFile reads and parses one kubeconfig file. Relative paths in it are
// resolved against the file's directory.
func LoadFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	c, err := Parse(data, path)
	if err != nil {
		// kubectl's words first ("error loading config file"), which
		// scripts look for, then what is wrong.
		return nil, &loadError{path: path, err: err}
	}
	return c, nil
}

// loadError is a file that could not be parsed, worded as kubectl's
// `error loading config file "PATH": ...`.
type loadError struct {
	path string
	err  error
}

func (e *loadError) Error() string {
	msg := strings.TrimPrefix(e.err.Error(), "kubeconfig: ")
	if abs, err := filepath.Abs(e.path); err == nil {
		msg = strings.TrimPrefix(msg, abs+": ")
	}
	return fmt.Sprintf("kubeconfig: error loading config file %q: %s", e.path, msg)
}

func (e *loadError) Unwrap() error { return e.err }

// Parse parses kubeconfig YAML (or JSON). source names the file in errors
// and in the Source fields; when it is not empty, relative paths are
// resolved against its directory. Within one file, the first entry of a
// name wins, as across files. Parse never panics on bad input.
func Parse(data []byte, source string) (c *Config, err error) {
	if source != "" {
		if abs, aerr := filepath.Abs(source); aerr == nil {
			source = abs
		}
	}
	where := source
	if where == "" {
		where = "<input>"
	}
	defer func() {
		// The YAML decoder is third-party code fed with user input:
		// turn any panic into an error naming the file.
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("kubeconfig: %s: cannot parse: %v", where, r)
		}
	}()

	// Convert to JSON first and decode that, as client-go does: with
	// yaml.Unmarshal, a scalar that YAML reads as a number or a bool is
	// turned into a string for a string field, so "password: 0123" became
	// "83" and "name: y" became "true". client-go rejects such values.
	var f fileConfig
	j, err := yaml.YAMLToJSON(data)
	if err == nil {
		err = json.Unmarshal(j, &f)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if msg := typeError(j, te); msg != "" {
			return nil, fmt.Errorf("kubeconfig: %s: %s", where, msg)
		}
	}
	if err != nil {
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
		msg = strings.TrimPrefix(msg, "error unmarshaling JSON: while decoding JSON: ")
		return nil, fmt.Errorf("kubeconfig: %s: malformed YAML: %s", where, msg)
	}
	if f.Kind != "" && f.Kind != "Config" {
		return nil, fmt.Errorf("kubeconfig: %s: kind is %q, want \"Config\"", where, f.Kind)
	}
	if f.APIVersion != "" && f.APIVersion != "v1" {
		return nil, fmt.Errorf("kubeconfig: %s: apiVersion is %q, want \"v1\"", where, f.APIVersion)
	}
	p := parser{where: where, dir: ""}
	if source != "" {
		p.dir = filepath.Dir(source)
	}
	c = &Config{
		Clusters:       map[string]*Cluster{},
		AuthInfos:      map[string]*AuthInfo{},
		Contexts:       map[string]*Context{},
		CurrentContext: f.CurrentContext,
	}
	if source != "" {
		c.Sources = []string{source}
		if f.CurrentContext != "" {
			c.CurrentContextSource = source
		}
	}
	if c.Extensions, err = p.extensions("extensions", f.Extensions); err != nil {
		return nil, err
	}
	if f.Preferences != nil {
		c.Preferences.Colors = f.Preferences.Colors
		if c.Preferences.Extensions, err = p.extensions("preferences.extensions", f.Preferences.Extensions); err != nil {
			return nil, err
		}
	}
	for i, e := range f.Clusters {
		if e == nil || e.Name == "" {
			return nil, fmt.Errorf("kubeconfig: %s: clusters[%d]: name is empty", where, i)
		}
		if _, dup := c.Clusters[e.Name]; dup {
			continue
		}
		cl, err := p.cluster(e.Name, e.Cluster)
		if err != nil {
			return nil, err
		}
		cl.Source = source
		c.Clusters[e.Name] = cl
	}
	for i, e := range f.AuthInfos {
		if e == nil || e.Name == "" {
			return nil, fmt.Errorf("kubeconfig: %s: users[%d]: name is empty", where, i)
		}
		if _, dup := c.AuthInfos[e.Name]; dup {
			continue
		}
		u, err := p.authInfo(e.Name, e.AuthInfo)
		if err != nil {
			return nil, err
		}
		u.Source = source
		c.AuthInfos[e.Name] = u
	}
	for i, e := range f.Contexts {
		if e == nil || e.Name == "" {
			return nil, fmt.Errorf("kubeconfig: %s: contexts[%d]: name is empty", where, i)
		}
		if _, dup := c.Contexts[e.Name]; dup {
			continue
		}
		ctx := &Context{Source: source}
		if fc := e.Context; fc != nil {
			ctx.Cluster, ctx.AuthInfo, ctx.Namespace = fc.Cluster, fc.AuthInfo, fc.Namespace
			if ctx.Extensions, err = p.extensions(fmt.Sprintf("contexts[%q].extensions", e.Name), fc.Extensions); err != nil {
				return nil, err
			}
		}
		c.Contexts[e.Name] = ctx
	}
	return c, nil
}

type parser struct {
	where string // file name for errors
	dir   string // directory for relative paths; "" leaves them alone
}

func (p parser) errorf(format string, args ...any) error {
	return fmt.Errorf("kubeconfig: %s: "+format, append([]any{p.where}, args...)...)
}

// path resolves a relative path against the file's directory.
func (p parser) path(s string) string {
	if s == "" || p.dir == "" || filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(p.dir, s)
}

// data decodes a base64 *-data field.
func (p parser) data(field, s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, p.errorf("%s: not valid base64 (%v); the *-data fields hold base64-encoded PEM", field, err)
	}
	return b, nil
}

func (p parser) extensions(field string, in []*fileNamedExt) (map[string]json.RawMessage, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(in))
	for i, e := range in {
		if e == nil || e.Name == "" {
			return nil, p.errorf("%s[%d]: name is empty", field, i)
		}
		if _, dup := out[e.Name]; dup {
			continue
		}
		out[e.Name] = append(json.RawMessage(nil), e.Extension...)
	}
	return out, nil
}

func (p parser) cluster(name string, fc *fileCluster) (*Cluster, error) {
	c := &Cluster{}
	if fc == nil {
		return c, nil
	}
	field := fmt.Sprintf("clusters[%q]", name)
	ca, err := p.data(field+".certificate-authority-data", fc.CertificateAuthorityData)
	if err != nil {
		return nil, err
	}
	ext, err := p.extensions(field+".extensions", fc.Extensions)
	if err != nil {
		return nil, err
	}
	*c = Cluster{
		Server:                   fc.Server,
		TLSServerName:            fc.TLSServerName,
		InsecureSkipTLSVerify:    fc.InsecureSkipTLSVerify,
		CertificateAuthority:     p.path(fc.CertificateAuthority),
		CertificateAuthorityData: ca,
		ProxyURL:                 fc.ProxyURL,
		DisableCompression:       fc.DisableCompression,
		Extensions:               ext,
	}
	return c, nil
}

func (p parser) authInfo(name string, fu *fileAuthInfo) (*AuthInfo, error) {
	u := &AuthInfo{}
	if fu == nil {
		return u, nil
	}
	field := fmt.Sprintf("users[%q]", name)
	cert, err := p.data(field+".client-certificate-data", fu.ClientCertificateData)
	if err != nil {
		return nil, err
	}
	key, err := p.data(field+".client-key-data", fu.ClientKeyData)
	if err != nil {
		return nil, err
	}
	ext, err := p.extensions(field+".extensions", fu.Extensions)
	if err != nil {
		return nil, err
	}
	*u = AuthInfo{
		ClientCertificate:     p.path(fu.ClientCertificate),
		ClientCertificateData: cert,
		ClientKey:             p.path(fu.ClientKey),
		ClientKeyData:         key,
		Token:                 fu.Token,
		TokenFile:             p.path(fu.TokenFile),
		Impersonate:           fu.Impersonate,
		ImpersonateUID:        fu.ImpersonateUID,
		ImpersonateGroups:     append([]string(nil), fu.ImpersonateGroups...),
		Username:              fu.Username,
		Password:              fu.Password,
		Extensions:            ext,
	}
	if len(fu.ImpersonateUserExtra) > 0 {
		u.ImpersonateUserExtra = make(map[string][]string, len(fu.ImpersonateUserExtra))
		for k, v := range fu.ImpersonateUserExtra {
			u.ImpersonateUserExtra[k] = append([]string(nil), v...)
		}
	}
	if ap := fu.AuthProvider; ap != nil {
		u.AuthProvider = &AuthProviderConfig{Name: ap.Name}
		if ap.Config != nil {
			u.AuthProvider.Config = make(map[string]string, len(ap.Config))
			for k, v := range ap.Config {
				u.AuthProvider.Config[k] = v
			}
		}
	}
	if fe := fu.Exec; fe != nil {
		e := &ExecConfig{
			Command:            fe.Command,
			Args:               append([]string(nil), fe.Args...),
			APIVersion:         fe.APIVersion,
			InstallHint:        fe.InstallHint,
			ProvideClusterInfo: fe.ProvideClusterInfo,
			InteractiveMode:    fe.InteractiveMode,
		}
		// A command with a separator is a path, relative to the file; a
		// bare name is looked up in PATH when the plugin runs.
		if strings.ContainsRune(e.Command, '/') || strings.ContainsRune(e.Command, filepath.Separator) {
			e.Command = p.path(e.Command)
		}
		for _, v := range fe.Env {
			e.Env = append(e.Env, ExecEnvVar(v))
		}
		u.Exec = e
	}
	return u, nil
}
