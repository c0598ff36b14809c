package discovery

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrNoOpenAPIV3Document is returned (wrapped) by OpenAPIV3Document for a
// path the server's OpenAPI v3 index does not list.
var ErrNoOpenAPIV3Document = errors.New("the server publishes no OpenAPI v3 document for this path")

// ErrStale is the cause recorded for a group-version that aggregated
// discovery marks "Stale": the server could not reach the API's backend
// (for example an APIService whose Service is down), so its resources are
// unknown.
var ErrStale = errors.New("discovery: the API server reports this group-version as stale; its backend (an aggregated API server or its Service) is probably unavailable")

// GroupDiscoveryFailedError reports the group-versions that could not be
// discovered. It is returned beside the results that could be discovered:
// callers that can live with a partial view check for it with errors.As and
// carry on.
type GroupDiscoveryFailedError struct {
	// Groups maps each failed group-version to its cause.
	Groups map[schema.GroupVersion]error
}

// Error lists the failed group-versions, sorted, with their causes.
func (e *GroupDiscoveryFailedError) Error() string {
	gvs := e.sorted()
	parts := make([]string, 0, len(gvs))
	for _, gv := range gvs {
		parts = append(parts, fmt.Sprintf("%s: %v", gv.String(), e.Groups[gv]))
	}
	return "discovery: unable to retrieve the complete list of server APIs: " + strings.Join(parts, "; ")
}

// Unwrap returns the causes, in the order Error lists them, so errors.Is
// and errors.As see through to them.
func (e *GroupDiscoveryFailedError) Unwrap() []error {
	gvs := e.sorted()
	out := make([]error, 0, len(gvs))
	for _, gv := range gvs {
		out = append(out, e.Groups[gv])
	}
	return out
}

// GroupVersions returns the failed group-versions, sorted.
func (e *GroupDiscoveryFailedError) GroupVersions() []schema.GroupVersion { return e.sorted() }

func (e *GroupDiscoveryFailedError) sorted() []schema.GroupVersion {
	gvs := make([]schema.GroupVersion, 0, len(e.Groups))
	for gv := range e.Groups {
		gvs = append(gvs, gv)
	}
	sort.Slice(gvs, func(i, j int) bool {
		if gvs[i].Group != gvs[j].Group {
			return gvs[i].Group < gvs[j].Group
		}
		return gvs[i].Version < gvs[j].Version
	})
	return gvs
}

// IsGroupDiscoveryFailed reports whether err is or wraps a
// *GroupDiscoveryFailedError.
func IsGroupDiscoveryFailed(err error) bool {
	var e *GroupDiscoveryFailedError
	return errors.As(err, &e)
}

// errOrNil returns e as an error, or nil when e is nil or empty, avoiding
// the typed-nil trap.
func (e *GroupDiscoveryFailedError) errOrNil() error {
	if e == nil || len(e.Groups) == 0 {
		return nil
	}
	return e
}
