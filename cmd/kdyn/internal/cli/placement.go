package cli

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// This file lets a command look at its entries before a ManifestRun sends
// them (apply --prune needs every object's kind and namespace first).

// Object returns the entry's object (nil for a document that could not be
// read). Changes to it are what the run sends.
func (e *ManifestEntry) Object() *unstructured.Unstructured { return e.obj }

// SetObject replaces the entry's object (create --edit gives the edited
// one).
func (e *ManifestEntry) SetObject(obj *unstructured.Unstructured) { e.obj = obj }

// Err returns why the entry cannot be sent, or nil.
func (e *ManifestEntry) Err() error { return e.err }

// Reject turns the entry into a failed one: the run reports err for it, as
// for a document that could not be read, and sends nothing.
func (e *ManifestEntry) Reject(err error) {
	e.err = &entryError{object: TargetName(e.obj), err: err}
	e.obj = nil
}

// entryError is a Reject error, naming the object (the report adds the
// document).
type entryError struct {
	object string
	err    error
}

func (e *entryError) Error() string {
	if e.object == "" {
		return e.err.Error()
	}
	return e.object + ": " + e.err.Error()
}

func (e *entryError) Unwrap() error { return e.err }

// Placement is where an object goes: its group-kind, whether that kind is
// namespaced, and its namespace ("" for a cluster-scoped kind).
type Placement struct {
	GroupKind  schema.GroupKind
	Namespaced bool
	Namespace  string
}

// CRDScopes returns the kinds that the CRD manifests among entries define,
// each with whether it is namespaced, for Place to use while the server
// does not serve them yet.
func CRDScopes(entries []*ManifestEntry) map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for _, e := range entries {
		if e.obj == nil || e.obj.GroupVersionKind().GroupKind() != crdGK {
			continue
		}
		if gk, ok := crdKind(e.obj); ok {
			scope, _, _ := unstructured.NestedString(e.obj.Object, "spec", "scope")
			out[gk] = scope != "Cluster"
		}
	}
	return out
}

// Place returns where e's object would go, as the run would send it: the
// kind's scope from the mapper (or from crdScopes for a kind the server
// does not serve yet), the namespace filled in or checked against -n. It
// neither waits for CRDs nor refreshes discovery beyond the mapper's own
// refresh on a miss.
func (r *ManifestRun) Place(ctx context.Context, e *ManifestEntry, crdScopes map[schema.GroupKind]bool) (Placement, error) {
	if e.err != nil {
		return Placement{}, e.err
	}
	gvk := e.obj.GroupVersionKind()
	p := Placement{GroupKind: gvk.GroupKind()}
	m, err := r.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		p.Namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
	case meta.IsNoMatchError(err):
		namespaced, ok := crdScopes[p.GroupKind]
		if !ok {
			return Placement{}, fmt.Errorf("%w; ensure CRDs are installed first", err)
		}
		p.Namespaced = namespaced
	default:
		return Placement{}, err
	}
	if !p.Namespaced {
		return p, nil
	}
	ns, err := r.objectNamespace(e.obj.GetNamespace())
	if err != nil {
		return Placement{}, err
	}
	p.Namespace = ns
	return p, nil
}

// objectNamespace is the namespace a namespaced object of the run goes
// to: its own, or -n's (the kubeconfig's) when it names none; an object
// whose namespace differs from an explicit -n is refused, as kubectl does.
func (r *ManifestRun) objectNamespace(objNS string) (string, error) {
	switch {
	case objNS == "":
		return r.Namespace, nil
	case r.ExplicitNS && objNS != r.Namespace:
		//lint:ignore ST1005 kubectl's exact wording, which scripts may match
		return "", fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", objNS, r.Namespace, objNS)
	}
	return objNS, nil
}

// ReadStream reads the documents of r, named source in messages, as -f
// reads a file: one entry per object, a bad document an entry with its
// error.
func ReadStream(r io.Reader, source string) []*ManifestEntry { return readManifestStream(r, source) }
