package kubeconfig

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"

	"sigs.k8s.io/yaml"
)

// Placeholders used by View for hidden values, as kubectl prints them.
const (
	// Redacted replaces tokens, passwords and private keys.
	Redacted = "REDACTED"
	// DataOmitted replaces certificate and CA data.
	DataOmitted = "DATA+OMITTED"
)

// ViewOptions controls View.
type ViewOptions struct {
	// Raw shows secrets and certificate data. The default hides them.
	Raw bool
	// Minify keeps only the current context and the cluster and user it
	// names.
	Minify bool
}

// View returns c as kubeconfig YAML for display, as `kdyn config view`
// prints it: by default tokens, passwords and private keys show as
// "REDACTED" and certificate and CA data as "DATA+OMITTED". The output of a
// redacted view is not a usable kubeconfig.
func (c *Config) View(o ViewOptions) ([]byte, error) {
	if c == nil {
		c = &Config{}
	}
	if o.Minify {
		m, err := c.minify()
		if err != nil {
			return nil, err
		}
		c = m
	}
	return marshal(c, !o.Raw)
}

// Marshal returns c as kubeconfig YAML (apiVersion v1, kind Config), with
// every value shown, entries sorted by name.
func Marshal(c *Config) ([]byte, error) {
	if c == nil {
		c = &Config{}
	}
	return marshal(c, false)
}

func (c *Config) minify() (*Config, error) {
	if c.CurrentContext == "" {
		return nil, errors.New("kubeconfig: cannot minify: current-context is not set")
	}
	ctx := c.Contexts[c.CurrentContext]
	if ctx == nil {
		return nil, &NotFoundError{Kind: "context", Name: c.CurrentContext, ReferencedBy: "current-context", Available: sortedKeys(c.Contexts)}
	}
	m := &Config{
		Preferences:    c.Preferences,
		CurrentContext: c.CurrentContext,
		Contexts:       map[string]*Context{c.CurrentContext: ctx},
		Clusters:       map[string]*Cluster{},
		AuthInfos:      map[string]*AuthInfo{},
		Extensions:     c.Extensions,
	}
	if cl := c.Clusters[ctx.Cluster]; cl != nil {
		m.Clusters[ctx.Cluster] = cl
	}
	if u := c.AuthInfos[ctx.AuthInfo]; u != nil {
		m.AuthInfos[ctx.AuthInfo] = u
	}
	return m, nil
}

func marshal(c *Config, redact bool) ([]byte, error) {
	data := func(b []byte) string {
		if len(b) == 0 {
			return ""
		}
		if redact {
			return DataOmitted
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	secret := func(s string) string {
		if redact && s != "" {
			return Redacted
		}
		return s
	}
	secretData := func(b []byte) string {
		if redact && len(b) > 0 {
			return Redacted
		}
		return data(b)
	}

	f := fileConfig{
		Kind:           "Config",
		APIVersion:     "v1",
		Clusters:       []*fileNamedCluster{},
		AuthInfos:      []*fileNamedAuthInfo{},
		Contexts:       []*fileNamedContext{},
		CurrentContext: c.CurrentContext,
		Extensions:     fileExtensions(c.Extensions),
		Preferences:    &filePreferences{Colors: c.Preferences.Colors, Extensions: fileExtensions(c.Preferences.Extensions)},
	}
	for _, name := range sortedKeys(c.Clusters) {
		cl := c.Clusters[name]
		if cl == nil {
			continue
		}
		f.Clusters = append(f.Clusters, &fileNamedCluster{Name: name, Cluster: &fileCluster{
			Server:                   cl.Server,
			TLSServerName:            cl.TLSServerName,
			InsecureSkipTLSVerify:    cl.InsecureSkipTLSVerify,
			CertificateAuthority:     cl.CertificateAuthority,
			CertificateAuthorityData: data(cl.CertificateAuthorityData),
			ProxyURL:                 cl.ProxyURL,
			DisableCompression:       cl.DisableCompression,
			Extensions:               fileExtensions(cl.Extensions),
		}})
	}
	for _, name := range sortedKeys(c.AuthInfos) {
		u := c.AuthInfos[name]
		if u == nil {
			continue
		}
		fu := &fileAuthInfo{
			ClientCertificate:     u.ClientCertificate,
			ClientCertificateData: data(u.ClientCertificateData),
			ClientKey:             u.ClientKey,
			ClientKeyData:         secretData(u.ClientKeyData),
			Token:                 secret(u.Token),
			TokenFile:             u.TokenFile,
			Impersonate:           u.Impersonate,
			ImpersonateUID:        u.ImpersonateUID,
			ImpersonateGroups:     u.ImpersonateGroups,
			ImpersonateUserExtra:  u.ImpersonateUserExtra,
			Username:              u.Username,
			Password:              secret(u.Password),
			Extensions:            fileExtensions(u.Extensions),
		}
		if ap := u.AuthProvider; ap != nil {
			fu.AuthProvider = &fileAuthProvider{Name: ap.Name}
			if len(ap.Config) > 0 {
				fu.AuthProvider.Config = make(map[string]string, len(ap.Config))
				for k, v := range ap.Config {
					fu.AuthProvider.Config[k] = secret(v)
				}
			}
		}
		if e := u.Exec; e != nil {
			fe := &fileExec{
				Command:            e.Command,
				Args:               e.Args,
				APIVersion:         e.APIVersion,
				InstallHint:        e.InstallHint,
				ProvideClusterInfo: e.ProvideClusterInfo,
				InteractiveMode:    e.InteractiveMode,
			}
			for _, v := range e.Env {
				fe.Env = append(fe.Env, fileExecEnv(v))
			}
			fu.Exec = fe
		}
		f.AuthInfos = append(f.AuthInfos, &fileNamedAuthInfo{Name: name, AuthInfo: fu})
	}
	for _, name := range sortedKeys(c.Contexts) {
		ctx := c.Contexts[name]
		if ctx == nil {
			continue
		}
		f.Contexts = append(f.Contexts, &fileNamedContext{Name: name, Context: &fileContext{
			Cluster:    ctx.Cluster,
			AuthInfo:   ctx.AuthInfo,
			Namespace:  ctx.Namespace,
			Extensions: fileExtensions(ctx.Extensions),
		}})
	}
	out, err := yaml.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: encode: %w", err)
	}
	return out, nil
}

func fileExtensions(m map[string]json.RawMessage) []*fileNamedExt {
	var out []*fileNamedExt
	for _, name := range sortedKeys(m) {
		raw := m[name]
		if len(raw) == 0 {
			raw = json.RawMessage("null")
		}
		out = append(out, &fileNamedExt{Name: name, Extension: raw})
	}
	return out
}

// Write writes c to path as kubeconfig YAML (see Marshal), replacing the
// file atomically and keeping its permissions (0600 for a new file).
// Paths are written as they are in c; a loaded Config holds absolute paths.
func Write(path string, c *Config) error {
	data, err := Marshal(c)
	if err != nil {
		return err
	}
	return writeFile(path, data)
}

// UseContext makes name the current context, as `kubectl config
// use-context` does: the context must exist in the merged configuration,
// and current-context is written to the file whose current-context is in
// effect, else the first file that exists, else the explicit or first
// listed file. It returns the file it wrote.
func UseContext(rules *LoadingRules, name string) (string, error) {
	if rules == nil {
		rules = NewDefaultLoadingRules()
	}
	c, err := Load(rules)
	if err != nil {
		return "", err
	}
	if _, ok := c.Contexts[name]; !ok {
		return "", &NotFoundError{Kind: "context", Name: name, Available: sortedKeys(c.Contexts)}
	}
	var path string
	switch {
	case rules.ExplicitPath != "":
		path = rules.ExplicitPath
	case c.CurrentContextSource != "":
		path = c.CurrentContextSource
	case len(c.Sources) > 0:
		path = c.Sources[0]
	default:
		// Unreachable: the context was found, so some file was read.
		return "", errors.New("kubeconfig: no kubeconfig file to write")
	}
	if err := SetCurrentContext(path, name); err != nil {
		return "", err
	}
	return path, nil
}

// currentContextLine matches a top-level current-context key.
var currentContextLine = regexp.MustCompile(`^(current-context|"current-context"|'current-context')[ \t]*:`)

// SetCurrentContext sets current-context in the single file at path and
// leaves the rest of the file alone: when the key is a plain top-level line
// only that line changes, so comments and layout survive; otherwise the
// file is rewritten from its parsed content. A missing file is created.
func SetCurrentContext(path, name string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	out, err := setCurrentContext(data, name)
	if err != nil {
		return fmt.Errorf("kubeconfig: %s: %w", path, err)
	}
	return writeFile(path, out)
}

// setCurrentContext returns data with current-context set to name.
func setCurrentContext(data []byte, name string) ([]byte, error) {
	doc, err := genericDoc(data)
	if err != nil {
		return nil, err
	}
	doc["current-context"] = name
	line, err := yaml.Marshal(map[string]string{"current-context": name})
	if err != nil {
		return nil, err
	}

	// Try a one-line edit and keep it only if it means what we want.
	lines := bytes.SplitAfter(data, []byte("\n"))
	idx := -1
	for i, l := range lines {
		if currentContextLine.Match(l) {
			if idx >= 0 {
				idx = -2 // more than one: do not guess
				break
			}
			idx = i
		}
	}
	var edited []byte
	switch {
	case idx >= 0:
		for i, l := range lines {
			if i == idx {
				edited = append(edited, line...)
				continue
			}
			edited = append(edited, l...)
		}
	case idx == -1:
		edited = append(edited, data...)
		if len(edited) > 0 && edited[len(edited)-1] != '\n' {
			edited = append(edited, '\n')
		}
		edited = append(edited, line...)
	}
	if edited != nil {
		if got, err := genericDoc(edited); err == nil && reflect.DeepEqual(got, doc) {
			return edited, nil
		}
	}

	// Rewrite from the parsed document, keeping every field.
	return marshalDoc(doc)
}

// genericDoc parses a kubeconfig into plain maps, keeping numbers exact.
func genericDoc(data []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("malformed YAML: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("malformed YAML: %w", err)
	}
	switch m := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return m, nil
	default:
		return nil, errors.New("malformed YAML: the document is not a mapping")
	}
}

// writeFile replaces path atomically, following a symlink to its target
// and keeping the target's permissions.
func writeFile(path string, data []byte) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("kubeconfig: write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("kubeconfig: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("kubeconfig: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("kubeconfig: write %s: %w", path, err)
	}
	return nil
}
