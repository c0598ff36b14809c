package restmapper

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
)

// entry is one resource at one version, with its precomputed mapping.
type entry struct {
	res       *discovery.Resource
	gvr       schema.GroupVersionResource
	gvk       schema.GroupVersionKind
	mapping   *meta.RESTMapping
	priority  int  // lower is preferred
	preferred bool // at its group's preferred version
}

// nameKind says how a name matched a resource, best first.
type nameKind uint8

const (
	byPluralOrSingular nameKind = iota
	byShortName
	byKind
)

type nameMatch struct {
	e   *entry
	how nameKind
}

// index is an immutable lookup structure built from one snapshot. All maps
// are read without locks once the index is published.
type index struct {
	snap    *discovery.Snapshot
	builtAt time.Time
	entries []*entry // priority order

	byGVR        map[schema.GroupVersionResource]*entry
	byGK         map[schema.GroupKind][]*entry // priority order
	byGKLower    map[schema.GroupKind][]*entry // kind lower-cased
	byName       map[string][]nameMatch        // lower-case plural, singular, short name, kind
	categories   map[string][]*entry           // preferred version of each group-resource
	groups       []string                      // discovery order
	singularOf   map[string]string             // plural → singular
	groupVersion map[schema.GroupVersion]bool
}

// buildIndex orders resources the way kubectl's priority mapper does: every
// group's preferred version first (core group first, then the groups in
// discovery order), then the other versions of every group, in the same
// order.
func buildIndex(s *discovery.Snapshot, now time.Time) *index {
	idx := &index{
		snap:         s,
		builtAt:      now,
		byGVR:        map[schema.GroupVersionResource]*entry{},
		byGK:         map[schema.GroupKind][]*entry{},
		byGKLower:    map[schema.GroupKind][]*entry{},
		byName:       map[string][]nameMatch{},
		categories:   map[string][]*entry{},
		singularOf:   map[string]string{},
		groupVersion: map[schema.GroupVersion]bool{},
	}
	add := func(g *discovery.Group, v *discovery.Version, preferred bool) {
		idx.groupVersion[schema.GroupVersion{Group: g.Name, Version: v.Version}] = true
		for i := range v.Resources {
			r := &v.Resources[i]
			e := &entry{res: r, gvr: r.GVR(), gvk: r.GVK(), priority: len(idx.entries), preferred: preferred}
			scope := meta.RESTScopeRoot
			if r.Namespaced {
				scope = meta.RESTScopeNamespace
			}
			e.mapping = &meta.RESTMapping{Resource: e.gvr, GroupVersionKind: e.gvk, Scope: scope}
			idx.entries = append(idx.entries, e)
			idx.byGVR[e.gvr] = e
			gk := e.gvk.GroupKind()
			idx.byGK[gk] = append(idx.byGK[gk], e)
			lgk := schema.GroupKind{Group: gk.Group, Kind: strings.ToLower(gk.Kind)}
			idx.byGKLower[lgk] = append(idx.byGKLower[lgk], e)
			singular := r.SingularName
			if singular == "" {
				singular = strings.ToLower(r.Kind)
			}
			if _, ok := idx.singularOf[r.Name]; !ok {
				idx.singularOf[r.Name] = singular
			}
			idx.addName(r.Name, e, byPluralOrSingular)
			if singular != r.Name {
				idx.addName(singular, e, byPluralOrSingular)
			}
			for _, sn := range r.ShortNames {
				idx.addName(strings.ToLower(sn), e, byShortName)
			}
			if k := strings.ToLower(r.Kind); k != "" && k != singular && k != r.Name {
				idx.addName(k, e, byKind)
			}
			if preferred {
				for _, c := range r.Categories {
					idx.categories[c] = append(idx.categories[c], e)
				}
			}
		}
	}
	for gi := range s.Groups {
		g := &s.Groups[gi]
		idx.groups = append(idx.groups, g.Name)
		if vs := g.OrderedVersions(); len(vs) > 0 && vs[0].Version == g.PreferredVersion {
			add(g, vs[0], true)
		}
	}
	for gi := range s.Groups {
		g := &s.Groups[gi]
		for _, v := range g.OrderedVersions() {
			if v.Version != g.PreferredVersion {
				add(g, v, false)
			}
		}
	}
	return idx
}

func (idx *index) addName(name string, e *entry, how nameKind) {
	for _, m := range idx.byName[name] {
		if m.e == e {
			return
		}
	}
	idx.byName[name] = append(idx.byName[name], nameMatch{e: e, how: how})
}

// hasGroup reports whether a group of that exact name is served.
func (idx *index) hasGroup(g string) bool {
	for _, have := range idx.groups {
		if have == g {
			return true
		}
	}
	return false
}
