package discovery

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Snapshot is everything the server said about what it serves, at one
// moment. It is immutable once returned: share it, never modify it.
type Snapshot struct {
	// Groups in discovery order: the core group ("") first, then the named
	// groups in the order the server listed them.
	Groups []Group
	// Failed lists the group-versions that could not be discovered (stale
	// in aggregated discovery, or an error fetching them). They are left out
	// of Groups. Nil when everything was discovered.
	Failed *GroupDiscoveryFailedError
	// Aggregated reports whether the server answered with aggregated
	// discovery (apidiscovery.k8s.io/v2).
	Aggregated bool
	// FetchedAt is when the oldest part of the snapshot was fetched from the
	// server (it may come from the disk cache).
	FetchedAt time.Time
}

// Group is one API group.
type Group struct {
	// Name is the group name; "" is the core group.
	Name string
	// PreferredVersion is the version the server prefers. It is never a
	// version that failed discovery; "" when no version survived.
	PreferredVersion string
	// Versions in the server's priority order, the preferred one first.
	Versions []Version
}

// Version is one served version of a group.
type Version struct {
	// Version is the version name, e.g. "v1".
	Version string
	// Resources served at this version, in discovery order. Subresources
	// are not listed here but under their parent's Subresources.
	Resources []Resource
}

// Resource is one resource of a group-version, with everything discovery
// carries about it.
type Resource struct {
	// APIResource holds name (plural), singular name, namespaced, kind,
	// verbs, short names and categories. Group and Version are always set.
	metav1.APIResource
	// Subresources of this resource (status, scale, log, …).
	Subresources []Subresource
}

// Subresource is one subresource of a resource.
type Subresource struct {
	// Name is the subresource name, e.g. "status".
	Name string
	// Kind is the kind the subresource answers with (e.g. autoscaling/v1
	// Scale for "scale"); empty when the server did not say.
	Kind schema.GroupVersionKind
	// Verbs supported on the subresource.
	Verbs []string
}

// GroupVersion returns the resource's group-version.
func (r *Resource) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}
}

// GVR returns the resource's group-version-resource.
func (r *Resource) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Name}
}

// GVK returns the resource's group-version-kind.
func (r *Resource) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// HasVerbs reports whether the resource supports every verb given.
func (r *Resource) HasVerbs(verbs ...string) bool {
	for _, v := range verbs {
		found := false
		for _, have := range r.Verbs {
			if have == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// HasCategory reports whether the resource is in the category.
func (r *Resource) HasCategory(c string) bool {
	for _, have := range r.Categories {
		if have == c {
			return true
		}
	}
	return false
}

// groupVersionString renders a group-version the way discovery documents
// do: "v1" for the core group, "apps/v1" otherwise.
func groupVersionString(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// APIGroupList returns the snapshot in the form of GET /api + GET /apis.
func (s *Snapshot) APIGroupList() *metav1.APIGroupList {
	out := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for i := range s.Groups {
		out.Groups = append(out.Groups, s.Groups[i].apiGroup())
	}
	return out
}

func (g *Group) apiGroup() metav1.APIGroup {
	ag := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g.Name}
	for _, v := range g.Versions {
		gv := metav1.GroupVersionForDiscovery{GroupVersion: groupVersionString(g.Name, v.Version), Version: v.Version}
		ag.Versions = append(ag.Versions, gv)
		if v.Version == g.PreferredVersion {
			ag.PreferredVersion = gv
		}
	}
	return ag
}

// ResourceList returns one group-version in the form of
// GET /apis/GROUP/VERSION, subresources listed as "resource/subresource".
func (g *Group) resourceList(v *Version) *metav1.APIResourceList {
	out := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: groupVersionString(g.Name, v.Version),
	}
	for i := range v.Resources {
		r := &v.Resources[i]
		out.APIResources = append(out.APIResources, copyAPIResource(r.APIResource))
		for _, sub := range r.Subresources {
			ar := metav1.APIResource{
				Name:       r.Name + "/" + sub.Name,
				Namespaced: r.Namespaced,
				Group:      sub.Kind.Group,
				Version:    sub.Kind.Version,
				Kind:       sub.Kind.Kind,
				Verbs:      append(metav1.Verbs(nil), sub.Verbs...),
			}
			out.APIResources = append(out.APIResources, ar)
		}
	}
	return out
}

func copyAPIResource(r metav1.APIResource) metav1.APIResource {
	r.Verbs = append(metav1.Verbs(nil), r.Verbs...)
	r.ShortNames = append([]string(nil), r.ShortNames...)
	r.Categories = append([]string(nil), r.Categories...)
	return r
}

// ResourceLists returns every group-version's resources, in discovery
// order.
func (s *Snapshot) ResourceLists() []*metav1.APIResourceList {
	var out []*metav1.APIResourceList
	for gi := range s.Groups {
		g := &s.Groups[gi]
		for vi := range g.Versions {
			out = append(out, g.resourceList(&g.Versions[vi]))
		}
	}
	return out
}

// ResourceList returns one group-version's resources, or false when the
// snapshot does not have it.
func (s *Snapshot) ResourceList(gv schema.GroupVersion) (*metav1.APIResourceList, bool) {
	g, v := s.find(gv)
	if v == nil {
		return nil, false
	}
	return g.resourceList(v), true
}

func (s *Snapshot) find(gv schema.GroupVersion) (*Group, *Version) {
	for gi := range s.Groups {
		g := &s.Groups[gi]
		if g.Name != gv.Group {
			continue
		}
		for vi := range g.Versions {
			if g.Versions[vi].Version == gv.Version {
				return g, &g.Versions[vi]
			}
		}
	}
	return nil, nil
}

// PreferredResources returns, for each group, its resources at the
// preferred version plus the resources that only exist at other versions
// (at the first version that has them), without subresources — the
// ServerPreferredResources contract of client-go.
func (s *Snapshot) PreferredResources(namespacedOnly bool) []*metav1.APIResourceList {
	var out []*metav1.APIResourceList
	for gi := range s.Groups {
		g := &s.Groups[gi]
		seen := map[string]bool{}
		lists := map[string]*metav1.APIResourceList{}
		var order []string
		for _, v := range g.OrderedVersions() {
			for i := range v.Resources {
				r := &v.Resources[i]
				if seen[r.Name] || strings.Contains(r.Name, "/") {
					continue
				}
				seen[r.Name] = true
				if namespacedOnly && !r.Namespaced {
					continue
				}
				l := lists[v.Version]
				if l == nil {
					l = &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: groupVersionString(g.Name, v.Version)}
					lists[v.Version] = l
					order = append(order, v.Version)
				}
				l.APIResources = append(l.APIResources, copyAPIResource(r.APIResource))
			}
		}
		for _, v := range order {
			out = append(out, lists[v])
		}
	}
	return out
}

// OrderedVersions returns the group's versions with the preferred one
// first, then the others in discovery order (kubectl's priority order).
func (g *Group) OrderedVersions() []*Version {
	out := make([]*Version, 0, len(g.Versions))
	for i := range g.Versions {
		if g.Versions[i].Version == g.PreferredVersion {
			out = append(out, &g.Versions[i])
		}
	}
	for i := range g.Versions {
		if g.Versions[i].Version != g.PreferredVersion {
			out = append(out, &g.Versions[i])
		}
	}
	return out
}
