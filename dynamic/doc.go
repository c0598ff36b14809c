// Package dynamic is kdyn's client for any resource, built-in or custom,
// with objects as *unstructured.Unstructured and no generated code.
//
// # The client-go contract
//
// Interface, NamespaceableResourceInterface and ResourceInterface have
// exactly the method sets and signatures of k8s.io/client-go/dynamic, and
// NewForConfig / NewForConfigAndClient exist with the same shapes, so a
// program written against client-go's dynamic client compiles against kdyn
// by changing its imports (rest.Config uses client-go's field names).
// Requests on the wire are the same as client-go's — method, path, query,
// Accept, Content-Type and body — which golden tests under testdata/ pin
// down:
//
//   - Create POSTs the object; with a subresource, to the object's name.
//   - Update PUTs to the object's name; UpdateStatus to its status.
//   - Delete and DeleteCollection send DeleteOptions in the body
//     ({"kind":"DeleteOptions","apiVersion":"v1",...}).
//   - Patch sends the data with the patch type as Content-Type.
//   - Apply is a PATCH with Content-Type application/apply-patch+yaml and
//     fieldManager and force in the query; an object that already carries
//     managedFields is refused with ErrManagedFieldsSet.
//   - Names and namespaces are checked before anything is sent: a "/" in a
//     name is an "invalid resource name" error, in a namespace an "invalid
//     namespace" error; an empty name is "name is required".
//   - Slashes at either end of a GVR's resource or of a subresource are
//     left out of the path, as client-go's path joining leaves them out
//     ("rtest/" is rtest); a resource or subresource that is still not one
//     path segment ("a/b", "..") is an "invalid resource" or "invalid
//     subresource" error.
//   - List items without apiVersion/kind get them from the list.
//   - Watches ask for an uncompressed stream where client-go's ask for gzip,
//     a measured choice (package rest, Watches); set
//     rest.Config.CompressWatches for client-go's encoding.
//
// client-go's own dynamic tests (client_test.go and golden_test.go) pass
// against this package with their imports switched and CompressWatches
// set: bench/clientgodynamic runs them in make test.
//
// Every error from the server is an *apierrors.StatusError, so
// apierrors.IsNotFound, IsConflict, IsAlreadyExists and the rest work.
// DynamicClient is safe for concurrent use; make one per server and share
// it. Returned objects belong to the caller.
//
// # Beyond client-go
//
// Beside the contract, never instead of it:
//
//   - MappedClient (NewMapped, over a client and any meta.RESTMapper) reaches objects by kind
//     through a REST mapper: ForKind, ForObject, and Create/Update/Apply/
//     Get/Delete of an object go to the right resource and namespace; a
//     namespace given for a cluster-scoped kind is ErrClusterScoped. A
//     mapper miss is refreshed as the mapper does.
//   - Items (an iter.Seq2) and ListAll follow continue tokens, 500 objects a
//     page by default, and on a 410 for an expired token restart or fail as
//     PageOptions.OnExpired says.
//   - MetadataClient (DynamicClient.Metadata) gets, lists, watches,
//     patches and deletes asking for PartialObjectMetadata (as=
//     PartialObjectMetadata;g=meta.k8s.io;v=v1), so the server sends only
//     metadata — what garbage collectors use — in protobuf when it can
//     (apimachinery's codec for these meta types) and JSON otherwise.
//   - TableClient (DynamicClient.Tables) asks the server to print objects as
//     a metav1.Table, CRD additionalPrinterColumns included.
//   - Decorators, each in its own file: WithFieldManager, WithDryRun,
//     WithFieldValidation, WithDefaultNamespace.
//
// The resource clients of DynamicClient also hand kdyn's informers their
// fast paths (streamed lists, one-pass decoding, protobuf metadata) through
// a hook of kdyn's private wire layer; other implementations of Interface
// (decorators, dynamic/fake, your own) work with informers too, through
// their List and Watch.
//
// Package dynamic/fake is an in-memory Interface for unit tests that
// behaves like a server.
package dynamic
