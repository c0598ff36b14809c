package kubeconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// EnvVar is the environment variable holding a list of kubeconfig files,
// separated by the OS path-list separator (":" on Unix, ";" on Windows).
const EnvVar = "KUBECONFIG"

// LoadingRules says which kubeconfig files to read.
//
// The zero value reads no file at all; NewDefaultLoadingRules gives kubectl's
// rules.
type LoadingRules struct {
	// ExplicitPath, when set (kdyn's --kubeconfig), is the only file read;
	// it must exist.
	ExplicitPath string
	// Precedence lists the files to merge, highest precedence first.
	// Missing files are skipped. NewDefaultLoadingRules fills it from
	// KUBECONFIG, or with ~/.kube/config.
	Precedence []string
	// InCluster is where Resolve looks for in-cluster configuration when no
	// file defines anything. The zero value reads the real environment and
	// service-account directory.
	InCluster InClusterOptions
}

// NewDefaultLoadingRules returns kubectl's rules: the files listed in
// KUBECONFIG, or ~/.kube/config when KUBECONFIG is empty.
func NewDefaultLoadingRules() *LoadingRules {
	r := &LoadingRules{}
	for _, p := range filepath.SplitList(os.Getenv(EnvVar)) {
		if p != "" {
			r.Precedence = append(r.Precedence, p)
		}
	}
	if len(r.Precedence) == 0 {
		if p := DefaultPath(); p != "" {
			r.Precedence = []string{p}
		}
	}
	return r
}

// DefaultPath returns ~/.kube/config, or "" when the home directory is
// unknown.
func DefaultPath() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".kube", "config")
}

// Load reads the files named by rules and merges them. A nil rules means
// NewDefaultLoadingRules().
//
// With ExplicitPath set, only that file is read, and a missing file is an
// error. Otherwise the Precedence files are read in order, skipping missing
// ones (other read errors are returned), and merged: for every cluster, user
// and context name and for current-context, the first file that sets it
// wins. Finding no file is not an error: the result is then empty, with no
// Sources.
func Load(rules *LoadingRules) (*Config, error) {
	if rules == nil {
		rules = NewDefaultLoadingRules()
	}
	if rules.ExplicitPath != "" {
		c, err := LoadFile(rules.ExplicitPath)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// The file system's words too ("stat missing: no such file
				// or directory"), which scripts for kubectl look for.
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe
				}
				return nil, fmt.Errorf("kubeconfig: the kubeconfig file %q does not exist: %w", rules.ExplicitPath, err)
			}
			return nil, err
		}
		return c, nil
	}
	out := &Config{
		Clusters:  map[string]*Cluster{},
		AuthInfos: map[string]*AuthInfo{},
		Contexts:  map[string]*Context{},
	}
	seen := map[string]bool{}
	for _, path := range rules.Precedence {
		if path == "" || seen[path] {
			continue
		}
		seen[path] = true
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		c, err := Parse(data, path)
		if err != nil {
			return nil, err
		}
		merge(out, c)
	}
	return out, nil
}

// merge adds to dst what src defines and dst does not: the first definition
// wins.
func merge(dst, src *Config) {
	dst.Sources = append(dst.Sources, src.Sources...)
	if dst.CurrentContext == "" && src.CurrentContext != "" {
		dst.CurrentContext = src.CurrentContext
		dst.CurrentContextSource = src.CurrentContextSource
	}
	if !dst.Preferences.Colors && len(dst.Preferences.Extensions) == 0 {
		dst.Preferences = src.Preferences
	}
	for k, v := range src.Clusters {
		if _, ok := dst.Clusters[k]; !ok && v != nil {
			dst.Clusters[k] = v
		}
	}
	for k, v := range src.AuthInfos {
		if _, ok := dst.AuthInfos[k]; !ok && v != nil {
			dst.AuthInfos[k] = v
		}
	}
	for k, v := range src.Contexts {
		if _, ok := dst.Contexts[k]; !ok && v != nil {
			dst.Contexts[k] = v
		}
	}
	for k, v := range src.Extensions {
		if dst.Extensions == nil {
			dst.Extensions = map[string]json.RawMessage{}
		}
		if _, ok := dst.Extensions[k]; !ok {
			dst.Extensions[k] = v
		}
	}
}
