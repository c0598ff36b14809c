package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// once per run; a fetch that fails is not remembered (the next object
// tries again).
type patchSchemas struct {
	f    *cli.Factory
	mu   sync.Mutex
	docs map[schema.GroupVersion]*gvSchemas
}

// gvSchemas is one group version's document: doc once read, none when the
// server publishes none.
type gvSchemas struct {
	mu   sync.Mutex
	doc  *spec3.OpenAPI
	none bool
}

func newPatchSchemas(f *cli.Factory) *patchSchemas {
	return &patchSchemas{f: f, docs: map[schema.GroupVersion]*gvSchemas{}}
}

// lookup returns the patch metadata of gvk's strategic merge patches, or
// nil when the kind does not take them (a JSON merge patch is sent
// instead). A group version the server publishes no OpenAPI v3 document
// for gets JSON merge patches, with a warning saying so; any other failure
// to read the document is an error: a JSON merge patch would replace the
// lists a strategic merge patch merges.
func (p *patchSchemas) lookup(ctx context.Context, gvk schema.GroupVersionKind) (strategicpatch.LookupPatchMeta, error) {
	doc, err := p.document(ctx, gvk.GroupVersion())
	if err != nil || doc == nil || !takesStrategicMerge(doc, gvk) {
		return nil, err
	}
	for _, s := range doc.Components.Schemas {
		if cli.ExtensionNamesGVK(s.Extensions[cli.GVKExtension], gvk) {
			return strategicpatch.PatchMetaFromOpenAPIV3{Schema: s, SchemaList: doc.Components.Schemas}, nil
		}
	}
	return nil, nil
}

// document returns gv's document, nil when the server publishes none.
func (p *patchSchemas) document(ctx context.Context, gv schema.GroupVersion) (*spec3.OpenAPI, error) {
	p.mu.Lock()
	g, ok := p.docs[gv]
	if !ok {
		g = &gvSchemas{}
		p.docs[gv] = g
	}
	p.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.doc != nil || g.none {
		return g.doc, nil
	}
	doc, err := p.fetch(ctx, gv)
	switch {
	case err == nil:
		g.doc = doc
	case errors.Is(err, discovery.ErrNoOpenAPIV3Document) || apierrors.IsNotFound(err):
		g.none = true
		fmt.Fprintf(p.f.Streams.ErrOut, "Warning: the server publishes no OpenAPI v3 document for %s: client-side apply sends JSON merge patches for its kinds (lists are replaced whole, not merged by key)\n", gv)
	default:
		return nil, err
	}
	return g.doc, nil
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
		if path == nil || path.Patch == nil || !cli.ExtensionNamesGVK(path.Patch.Extensions[cli.GVKExtension], gvk) {
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
