package restmapper

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
)

// Match is one resource named by a kubectl-style resource argument.
type Match struct {
	// GVR and GVK of the resource at the version chosen (the one named, else
	// the group's preferred version).
	GVR schema.GroupVersionResource
	GVK schema.GroupVersionKind
	// Namespaced reports the resource's scope.
	Namespaced bool
	// Resource is what discovery said about it (shared; do not modify).
	Resource *discovery.Resource
	// Name is the object name of a TYPE/NAME argument, or a name given
	// after the type; empty otherwise.
	Name string
	// Arg is the type element that produced this match ("deploy", "all").
	Arg string
}

// NotFoundError says that a resource argument matched nothing, with the
// closest names the server does have. It wraps a *meta.NoResourceMatchError,
// so meta.IsNoMatchError reports true.
type NotFoundError struct {
	// Arg is the type that matched nothing.
	Arg string
	// Suggestions are the closest resource names, best first (at most 3).
	Suggestions []string
	err         *meta.NoResourceMatchError
}

// Error reads like kubectl's, plus suggestions.
func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("the server doesn't have a resource type %q", e.Arg)
	switch len(e.Suggestions) {
	case 0:
	case 1:
		msg += fmt.Sprintf("; did you mean %q?", e.Suggestions[0])
	default:
		q := make([]string, len(e.Suggestions))
		for i, s := range e.Suggestions {
			q[i] = fmt.Sprintf("%q", s)
		}
		msg += "; did you mean one of " + strings.Join(q, ", ") + "?"
	}
	return msg
}

// Unwrap returns the underlying *meta.NoResourceMatchError.
func (e *NotFoundError) Unwrap() error { return e.err }

// ResolveTypes resolves one kubectl-style type argument, which may be a
// comma list: each element is a plural ("deployments"), a singular
// ("deployment"), a short name ("deploy"), a kind in any case
// ("Deployment"), resource.group ("deployments.apps"),
// resource.version.group ("deployments.v1.apps"), kind.version.group, a
// unique group prefix ("hpa.autoscal"), or a category ("all", or any
// category a CRD declares) that expands to every resource in it. A name
// that is both a resource and a category is the resource. Duplicates are
// removed, the order kept. A miss refreshes discovery once before failing.
func (m *Mapper) ResolveTypes(ctx context.Context, arg string) ([]Match, error) {
	var out []Match
	seen := map[schema.GroupVersionResource]bool{}
	for _, el := range strings.Split(arg, ",") {
		el = strings.TrimSpace(el)
		if el == "" {
			return nil, fmt.Errorf("restmapper: empty resource type in %q", arg)
		}
		ms, err := m.resolveType(ctx, el, true)
		if err != nil {
			return nil, err
		}
		for _, mt := range ms {
			if !seen[mt.GVR] {
				seen[mt.GVR] = true
				out = append(out, mt)
			}
		}
	}
	return out, nil
}

// ResolveArgs resolves the resource arguments of a kubectl-style command,
// the way `kubectl get` reads them: either every argument is TYPE/NAME
// ("deploy/web svc/web"), or the first is a type (comma list allowed) and the
// others are names ("pods,svc web api"). With names, each type is paired
// with each name; without, each type is returned once with an empty Name.
func (m *Mapper) ResolveArgs(ctx context.Context, args []string) ([]Match, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("restmapper: no resource type given")
	}
	if strings.Contains(args[0], "/") {
		var out []Match
		for _, a := range args {
			typ, name, ok := strings.Cut(a, "/")
			if !ok || typ == "" || name == "" || strings.Contains(name, "/") {
				return nil, fmt.Errorf("restmapper: %q is not TYPE/NAME; when one argument is TYPE/NAME, all must be", a)
			}
			ms, err := m.resolveType(ctx, typ, false)
			if err != nil {
				return nil, err
			}
			ms[0].Name = name
			out = append(out, ms[0])
		}
		return out, nil
	}
	types, err := m.ResolveTypes(ctx, args[0])
	if err != nil {
		return nil, err
	}
	names := args[1:]
	if len(names) == 0 {
		return types, nil
	}
	var out []Match
	for _, t := range types {
		for _, n := range names {
			if n == "" {
				return nil, fmt.Errorf("restmapper: resource name may not be empty")
			}
			if strings.Contains(n, "/") {
				return nil, fmt.Errorf("restmapper: %q: there is no need to give a resource type as a separate argument when it is given as TYPE/NAME", n)
			}
			mt := t
			mt.Name = n
			out = append(out, mt)
		}
	}
	return out, nil
}

// resolveType resolves one element; categories only when allowed.
func (m *Mapper) resolveType(ctx context.Context, el string, categories bool) ([]Match, error) {
	es, err := lookup(ctx, m, "", func() string { return "a/" + el }, func(idx *index) ([]*entry, error) {
		return idx.resolveType(el, categories)
	})
	if err != nil {
		return nil, err
	}
	if len(es) == 1 {
		if idx := m.idx.Load(); idx != nil {
			if all, _ := idx.resolveTypeAll(el); len(all) > 1 {
				m.warnShortName(strings.ToLower(firstSegment(el)), all)
			}
		}
	}
	out := make([]Match, len(es))
	for i, e := range es {
		out[i] = Match{GVR: e.gvr, GVK: e.gvk, Namespaced: e.res.Namespaced, Resource: e.res, Arg: el}
	}
	return out, nil
}

func firstSegment(s string) string {
	name, _, _ := strings.Cut(s, ".")
	return name
}

var versionRE = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// resolveTypeAll returns every match of the best name class for el, in
// priority order, without categories (used for warnings).
func (idx *index) resolveTypeAll(el string) ([]*entry, error) {
	lower := strings.ToLower(el)
	name, rest, dotted := strings.Cut(lower, ".")
	if !dotted {
		return idx.matchResource(schema.GroupVersionResource{Resource: name})
	}
	if v, g, ok := strings.Cut(rest, "."); ok && versionRE.MatchString(v) {
		if es, err := idx.matchResource(schema.GroupVersionResource{Group: g, Version: v, Resource: name}); err == nil {
			return es, nil
		}
	}
	if idx.hasGroup(rest) {
		return idx.matchResource(schema.GroupVersionResource{Group: rest, Resource: name})
	}
	// A group prefix: the groups starting with rest that have the resource.
	var found []*entry
	for _, g := range idx.groups {
		if !strings.HasPrefix(g, rest) {
			continue
		}
		if es, err := idx.matchResource(schema.GroupVersionResource{Group: g, Resource: name}); err == nil {
			found = append(found, es[0])
		}
	}
	switch len(found) {
	case 0:
		return nil, &meta.NoResourceMatchError{PartialResource: schema.GroupVersionResource{Group: rest, Resource: name}}
	case 1:
		return found, nil
	}
	amb := &meta.AmbiguousResourceError{PartialResource: schema.GroupVersionResource{Group: rest, Resource: name}}
	for _, e := range found {
		amb.MatchingResources = append(amb.MatchingResources, e.gvr)
		amb.MatchingKinds = append(amb.MatchingKinds, e.gvk)
	}
	return nil, amb
}

func (idx *index) resolveType(el string, categories bool) ([]*entry, error) {
	es, err := idx.resolveTypeAll(el)
	if err == nil {
		return es[:1], nil
	}
	if !meta.IsNoMatchError(err) {
		return nil, err
	}
	lower := strings.ToLower(el)
	if cat := idx.categories[lower]; len(cat) > 0 {
		if !categories {
			return nil, fmt.Errorf("restmapper: %q is a category of resources; it cannot be used with an object name", el)
		}
		return cat, nil
	}
	return nil, &NotFoundError{Arg: el, Suggestions: idx.suggest(lower), err: &meta.NoResourceMatchError{PartialResource: schema.GroupVersionResource{Resource: el}}}
}

// suggest returns up to three known names closest to s.
func (idx *index) suggest(s string) []string {
	type cand struct {
		name string
		d    int
	}
	name := firstSegment(s)
	limit := 2
	if len(name) >= 9 {
		limit = 3
	}
	var cs []cand
	for n := range idx.byName {
		d := levenshtein(name, n)
		if d <= limit || (len(name) >= 3 && strings.HasPrefix(n, name)) {
			cs = append(cs, cand{n, d})
		}
	}
	for c := range idx.categories {
		if d := levenshtein(name, c); d <= limit {
			cs = append(cs, cand{c, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for _, c := range cs {
		if c.name == name {
			continue
		}
		out = append(out, c.name)
		if len(out) == 3 {
			break
		}
	}
	return out
}

// levenshtein is the edit distance between a and b (bytes; resource names
// are ASCII).
func levenshtein(a, b string) int {
	if a == b {
		return 0
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
