// Package unstructured adds helpers over apimachinery's unstructured objects
// (k8s.io/apimachinery/pkg/apis/meta/v1/unstructured), the one object type
// of kdyn. It does not replace that package; import both, aliasing
// apimachinery's, for example:
//
//	import (
//		apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
//		"github.com/kdyn/kdyn/unstructured"
//	)
//
// # Queries
//
// Query, QueryMany and QueryRaw run gjson paths (github.com/tidwall/gjson):
// "spec.containers.#.image" lists every image, `status.conditions.#(type=="Ready").status`
// picks one condition. Query encodes the object to JSON on every call (the
// cost of one json.Marshal of the whole object); QueryMany encodes once for
// several paths; QueryRaw works on bytes you already have, such as a
// response body, without decoding them. ValidPath checks a path given on
// a command line.
//
// # Fields
//
// Get, Set and Remove address a field with one path string, with escaped
// dots in keys and list indexes: "metadata.labels.app\.kubernetes\.io/name",
// "spec.containers[0].image" or "spec.containers.0.image". GetString,
// GetInt64, GetFloat64, GetBool, GetMap, GetSlice and GetStringSlice are
// typed forms in the shape of apimachinery's NestedString. When a field is
// named by map keys only, apimachinery's NestedString, NestedInt64,
// NestedSlice, SetNestedField, RemoveNestedField and the rest already do
// the job and need no path parsing. Type errors name the full path and the
// element that was wrong:
//
//	unstructured: .spec.replicas.max: expected map at "spec.replicas", found int64
//
// Set stores a JSON-compatible copy of its value (Go ints become int64), so
// objects stay valid for apimachinery's DeepCopy.
//
// # Neat
//
// Neat returns a copy of an object without what the server adds
// (managedFields, resourceVersion, uid, creationTimestamp, generation,
// selfLink, the last-applied annotation and, unless asked to keep it,
// status), as for saving a live object as a manifest. StripManagedFields
// copies; StripManagedFieldsInPlace and StripManagedFieldsTransform do not
// copy and suit informer transforms, where managedFields are often most of
// an object's size.
//
// # Patches
//
// MergePatch builds a JSON merge patch (RFC 7386) with json-patch;
// JSONPatch builds a JSON patch (RFC 6902) of add, remove and replace
// operations, in a deterministic order, diffing lists element by element.
// ApplyMergePatch and ApplyJSONPatch apply them. All of these take raw JSON,
// an *Unstructured or its map (the Doc constraint). ThreeWayMergePatch
// builds the merge patch of a client-side apply for resources without a
// strategic-merge schema, custom resources in particular, from the last
// applied configuration, the new one and the live object.
//
// # Manifests
//
// Manifests iterates over the objects of a multi-document YAML or JSON
// stream, flattening Lists, with the source, document number and line of
// each; DecodeManifests collects them. A bad document is reported as a
// *DocumentError and does not stop the others, so a caller such as
// `kdyn apply` can apply the good ones and report the bad ones:
//
//	objs, err := unstructured.DecodeManifests(f, "manifest.yaml")
//	for _, obj := range objs {
//		// apply obj
//	}
//	if err != nil {
//		// each line names the file, the document and its line:
//		// manifest.yaml: document 3 (line 17): object has no kind
//	}
//
// # Concurrency and errors
//
// The package has no state. Functions that take an object read it (Get,
// Query, Neat, the patch builders) or change it in place (Set, Remove,
// StripManagedFieldsInPlace); as with any map, concurrent changes to one
// object need the caller's locking. Errors start with "unstructured: ", or
// with the source name for manifest errors; nothing in the package panics
// on bad input.
package unstructured
