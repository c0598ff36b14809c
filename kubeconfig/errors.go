package kubeconfig

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrNoConfig is returned (wrapped) by Resolve when no kubeconfig file
// defines anything, none was named explicitly, and the process is not
// running in a cluster.
var ErrNoConfig = errors.New("kubeconfig: no configuration found")

// NotFoundError reports a context, cluster or user name that the
// kubeconfig does not define, with the names it does define.
type NotFoundError struct {
	// Kind is "context", "cluster" or "user".
	Kind string
	// Name is the missing name.
	Name string
	// ReferencedBy says what asked for it, e.g. `context "dev" in
	// /home/me/.kube/config` or "--cluster"; empty when unknown.
	ReferencedBy string
	// Available lists the defined names of that kind, sorted.
	Available []string
}

// Error returns e.g. `kubeconfig: context "dev" refers to cluster "gone",
// which is not defined; defined clusters: kind, prod`.
func (e *NotFoundError) Error() string {
	var b strings.Builder
	b.WriteString("kubeconfig: ")
	if e.ReferencedBy != "" {
		fmt.Fprintf(&b, "%s refers to %s %q, which is not defined", e.ReferencedBy, e.Kind, e.Name)
	} else {
		fmt.Fprintf(&b, "%s %q is not defined", e.Kind, e.Name)
	}
	if len(e.Available) == 0 {
		fmt.Fprintf(&b, "; no %ss are defined", e.Kind)
	} else {
		fmt.Fprintf(&b, "; defined %ss: %s", e.Kind, strings.Join(e.Available, ", "))
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// describe names an entry and its file for error messages.
func describe(kind, name, source string) string {
	if source == "" {
		return fmt.Sprintf("%s %q", kind, name)
	}
	return fmt.Sprintf("%s %q in %s", kind, name, source)
}
