package discovery

import (
	"encoding/json"
	"fmt"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AcceptAggregated is the Accept header of discovery requests: aggregated
// discovery (apidiscovery.k8s.io/v2) when the server has it, the legacy
// form otherwise. The response's Content-Type says which came back.
const AcceptAggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

// isAggregated reports whether a response Content-Type is the aggregated
// discovery form.
func isAggregated(contentType string) bool {
	ct := strings.ReplaceAll(strings.ToLower(contentType), " ", "")
	return strings.Contains(ct, "g=apidiscovery.k8s.io") && strings.Contains(ct, "v=v2") &&
		strings.Contains(ct, "as=apigroupdiscoverylist")
}

// decodeAggregated converts an APIGroupDiscoveryList into groups, recording
// stale group-versions in failed.
func decodeAggregated(body []byte, failed map[schema.GroupVersion]error) ([]Group, error) {
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("discovery: decode aggregated discovery document: %w", err)
	}
	groups := make([]Group, 0, len(list.Items))
	for _, item := range list.Items {
		g := Group{Name: item.Name}
		for _, v := range item.Versions {
			gv := schema.GroupVersion{Group: item.Name, Version: v.Version}
			if v.Version == "" {
				continue
			}
			if v.Freshness == apidiscoveryv2.DiscoveryFreshnessStale {
				failed[gv] = ErrStale
				continue
			}
			ver := Version{Version: v.Version, Resources: make([]Resource, 0, len(v.Resources))}
			for _, r := range v.Resources {
				if r.Resource == "" {
					continue
				}
				res := Resource{APIResource: metav1.APIResource{
					Name:         r.Resource,
					SingularName: r.SingularResource,
					Namespaced:   r.Scope == apidiscoveryv2.ScopeNamespace,
					Group:        item.Name,
					Version:      v.Version,
					Verbs:        metav1.Verbs(r.Verbs),
					ShortNames:   r.ShortNames,
					Categories:   r.Categories,
				}}
				if r.ResponseKind != nil {
					res.Kind = r.ResponseKind.Kind
				}
				for _, sub := range r.Subresources {
					s := Subresource{Name: sub.Subresource, Verbs: sub.Verbs}
					if sub.ResponseKind != nil {
						s.Kind = schema.GroupVersionKind{Group: sub.ResponseKind.Group, Version: sub.ResponseKind.Version, Kind: sub.ResponseKind.Kind}
						if s.Kind.Version == "" {
							s.Kind.Group, s.Kind.Version = gv.Group, gv.Version
						}
					}
					res.Subresources = append(res.Subresources, s)
				}
				ver.Resources = append(ver.Resources, res)
			}
			g.Versions = append(g.Versions, ver)
		}
		if len(g.Versions) == 0 {
			continue
		}
		g.PreferredVersion = g.Versions[0].Version
		groups = append(groups, g)
	}
	return groups, nil
}

// legacyResources converts one legacy APIResourceList into resources,
// attaching "resource/subresource" entries to their parent.
func legacyResources(body []byte, gv schema.GroupVersion) ([]Resource, error) {
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("discovery: decode %s resource list: %w", gv, err)
	}
	out := make([]Resource, 0, len(list.APIResources))
	index := map[string]int{}
	var subs []metav1.APIResource
	for _, ar := range list.APIResources {
		if ar.Name == "" {
			continue
		}
		if strings.Contains(ar.Name, "/") {
			subs = append(subs, ar)
			continue
		}
		ar.Group, ar.Version = gv.Group, gv.Version
		index[ar.Name] = len(out)
		out = append(out, Resource{APIResource: ar})
	}
	for _, ar := range subs {
		parent, sub, _ := strings.Cut(ar.Name, "/")
		i, ok := index[parent]
		if !ok {
			continue
		}
		k := schema.GroupVersionKind{Group: ar.Group, Version: ar.Version, Kind: ar.Kind}
		if k.Version == "" {
			k.Group, k.Version = gv.Group, gv.Version
		}
		out[i].Subresources = append(out[i].Subresources, Subresource{Name: sub, Kind: k, Verbs: ar.Verbs})
	}
	return out, nil
}

// legacyCoreVersions decodes GET /api in the legacy form (APIVersions).
func legacyCoreVersions(body []byte) ([]string, error) {
	var v metav1.APIVersions
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("discovery: decode /api: %w", err)
	}
	return v.Versions, nil
}

// legacyGroups decodes GET /apis in the legacy form (APIGroupList).
func legacyGroups(body []byte) ([]metav1.APIGroup, error) {
	var l metav1.APIGroupList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("discovery: decode /apis: %w", err)
	}
	return l.Groups, nil
}
