package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/discovery"
)

// strategicMergeContent is the content type of strategic merge patches,
// which a kind's OpenAPI v3 PATCH operation lists when it takes them (the
// built-in kinds do; custom resources and most aggregated APIs do not).
const strategicMergeContent = "application/strategic-merge-patch+json"

// patchSchemas tells, per kind, whether client-side apply sends a
// strategic merge patch, and with which patch metadata (each list's merge
// key and strategy, retainKeys), read from the kind's OpenAPI v3 document
// as kubectl reads it. Each group version's document is fetched and parsed
// once per run.
type patchSchemas struct {
	f    *cli.Factory
	mu   sync.Mutex
	docs map[schema.GroupVersion]*gvSchemas
	// warned: the fallback to JSON merge patches was logged.
	warned sync.Once
}

type gvSchemas struct {
	once sync.Once
	doc  *spec3.OpenAPI
	err  error
}

func newPatchSchemas(f *cli.Factory) *patchSchemas {
	return &patchSchemas{f: f, docs: map[schema.GroupVersion]*gvSchemas{}}
}

// lookup returns the patch metadata of gvk's strategic merge patches, or
// nil when the kind does not take them (a JSON merge patch is sent
// instead). A server whose OpenAPI v3 document cannot be read gets JSON
// merge patches, as kubectl's fallback for kinds it does not know sends
// them; the error says why.
func (p *patchSchemas) lookup(ctx context.Context, gvk schema.GroupVersionKind) (strategicpatch.LookupPatchMeta, error) {
	p.mu.Lock()
	g, ok := p.docs[gvk.GroupVersion()]
	if !ok {
		g = &gvSchemas{}
		p.docs[gvk.GroupVersion()] = g
	}
	p.mu.Unlock()
	g.once.Do(func() { g.doc, g.err = p.fetch(ctx, gvk.GroupVersion()) })
	if g.err != nil {
		return nil, g.err
	}
	if !takesStrategicMerge(g.doc, gvk) {
		return nil, nil
	}
	for _, s := range g.doc.Components.Schemas {
		if hasGVK(s.Extensions["x-kubernetes-group-version-kind"], gvk) {
			return strategicpatch.PatchMetaFromOpenAPIV3{Schema: s, SchemaList: g.doc.Components.Schemas}, nil
		}
	}
	return nil, nil
}

// warnOnce logs, at -v=2, why JSON merge patches are sent instead.
func (p *patchSchemas) warnOnce(err error) {
	p.warned.Do(func() {
		p.f.Logger().V(2).Info("sending JSON merge patches: no strategic merge schema", "err", err.Error())
	})
}

func (p *patchSchemas) fetch(ctx context.Context, gv schema.GroupVersion) (*spec3.OpenAPI, error) {
	dc, err := p.f.Discovery()
	if err != nil {
		return nil, err
	}
	raw, err := dc.OpenAPIV3Document(ctx, discovery.PathForGroupVersion(gv.Group, gv.Version))
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v3 document of %s to compute the patch: %w", gv, err)
	}
	doc := &spec3.OpenAPI{}
	if err := json.Unmarshal(raw, doc); err != nil {
		return nil, fmt.Errorf("parsing the OpenAPI v3 document of %s to compute the patch: %w", gv, err)
	}
	return doc, nil
}

// takesStrategicMerge reports whether a PATCH operation of gvk in doc
// accepts strategic merge patches.
func takesStrategicMerge(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) bool {
	if doc == nil || doc.Paths == nil || doc.Components == nil {
		return false
	}
	for _, path := range doc.Paths.Paths {
		if path == nil || path.Patch == nil || !hasGVK(path.Patch.Extensions["x-kubernetes-group-version-kind"], gvk) {
			continue
		}
		if rb := path.Patch.RequestBody; rb != nil && rb.Content != nil {
			_, ok := rb.Content[strategicMergeContent]
			return ok
		}
		return false
	}
	return false
}

// hasGVK reports whether an x-kubernetes-group-version-kind extension (one
// object, or a list of them) names gvk.
func hasGVK(ext any, gvk schema.GroupVersionKind) bool {
	match := func(v any) bool {
		m, ok := v.(map[string]any)
		return ok && m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind
	}
	if l, ok := ext.([]any); ok {
		return slices.ContainsFunc(l, match)
	}
	return match(ext)
}
