// Package fake is an in-memory dynamic.Interface for unit tests that
// behaves like an API server rather than recording calls: objects get
// resourceVersions, uids and timestamps, stale updates conflict, lists
// select, sort and paginate, and watches deliver the changes that follow.
// The behaviour suite in dynamic/dynamictest passes against it and against
// a real kube-apiserver, and is what keeps the two alike.
//
// # Lifecycle and concurrency
//
// NewClient(objects...) returns a ready Client holding the objects; Register
// describes resources the fake cannot infer, and Add stores more objects.
// A Client is safe for concurrent use. It needs no closing: watches end on
// Stop, on their context, or after their TimeoutSeconds, and start no
// goroutines of their own.
//
// # Resources
//
// The fake serves any GroupVersionResource. What it knows of one comes from,
// in order: Register(ResourceInfo{...}); a table of common built-in
// resources (core, apps, batch, networking, RBAC, CRDs and a few more, with
// their scope and status subresource); and, for anything else, the first
// object created in it, which fixes the kind and the scope (namespaced when
// the request or the object names a namespace). Seed objects are mapped from
// kind to resource the same way, an unknown kind by its lower-cased naive
// plural ("Widget" → "widgets", "Policy" → "policies"): Register irregular
// plurals ("Person" → "people") before adding their objects.
// A List or Watch of a resource nobody registered and nobody wrote works and
// is empty; its list kind is guessed from the plural ("gadgets" →
// "GadgetList").
//
// # Semantics
//
//   - resourceVersion is one counter for the whole client, incremented on
//     every write and stored as a decimal string; a write that changes
//     nothing (an update or patch to the same content) writes nothing and
//     keeps it, as the server does.
//   - Create sets metadata.uid (a random UUID), creationTimestamp and
//     generation 1, generates a name from generateName (5 random
//     characters, retried on collision), validates metadata with
//     apimachinery's validation (name, namespace, labels, annotations,
//     finalizers) and refuses a resourceVersion, as the server's storage
//     does. Seeds keep the uid, creationTimestamp and generation they carry.
//   - Update with a resourceVersion that is not the stored one is a
//     Conflict; with none it is unconditional. A uid that differs is a
//     Conflict. generation increments when anything outside metadata and
//     status changes. uid, creationTimestamp, deletionTimestamp and
//     generation cannot be changed by an update.
//   - For a resource with a status subresource (ResourceInfo.Status, or a
//     built-in that has one): Create drops status; Update and Patch of the
//     main resource keep the stored status; UpdateStatus, Patch with
//     subresource "status" and ApplyStatus change status only. Other
//     resources have no status subresource, and a request for one is
//     NotFound. No other subresource is served.
//   - Patch: JSON patch (RFC 6902) and JSON merge patch, with
//     github.com/evanphx/json-patch/v5. A strategic merge patch is applied as
//     a merge patch (the fake has no schemas, so lists are replaced, not
//     merged by key). An apply patch (JSON or YAML) creates the object if it
//     is missing and is otherwise merged onto it as a merge patch: the fake
//     does not track field ownership, so there are no apply conflicts,
//     managedFields are not written, and fields a manager stops applying
//     are not removed. Apply requires a field manager, as the server does.
//   - Delete honours Preconditions (uid, resourceVersion). An object with
//     finalizers gets a deletionTimestamp instead of being removed, and is
//     removed by the update that clears its last finalizer; no finalizers
//     can be added meanwhile. DeleteCollection deletes what its list
//     options select, each as Delete would.
//   - List honours label selectors and field selectors on metadata.name and
//     metadata.namespace (any other field is a BadRequest naming it), sorts
//     by namespace/name as etcd orders keys, and paginates with Limit and an
//     opaque Continue token that lists a consistent snapshot: later writes
//     do not show on later pages. resourceVersionMatch=Exact lists the past.
//     The client keeps the last 1000 changes; a continue token or exact
//     resourceVersion older than that is 410 Expired.
//   - Watch follows the server: without a resourceVersion (or with "0") or
//     with sendInitialEvents=true it starts with ADDED for every selected
//     object, then, with allowWatchBookmarks, a BOOKMARK annotated
//     k8s.io/initial-events-end: "true"; with a resourceVersion it replays
//     the changes after it from history (an ERROR 410 when history no longer
//     reaches back); with sendInitialEvents=false it starts now. An object
//     that starts matching the selectors is ADDED and one that stops is
//     DELETED, as from the server's watch cache. Each watcher has a buffer
//     of 1000 events; one that falls further behind is ended with an ERROR
//     event (410, "too old resource version"), as a server drops a slow
//     watcher, so writers never wait for readers.
//   - dryRun=All validates and answers without storing anything.
//   - Objects are stored as copies made through JSON, so values that are
//     not JSON types (int, []string, structs) are normalized as on the wire,
//     and nothing a caller holds is shared with the store.
//
// # Errors
//
// Errors are *apierrors.StatusError with the server's reasons and, where
// tests are likely to match them, its messages, so apierrors.IsNotFound,
// IsAlreadyExists, IsConflict, IsInvalid, IsBadRequest and
// IsResourceExpired work as against a server. A request a real server has
// no route for (a namespaced Get without a namespace, a cluster-scoped one
// with one, an unserved subresource) is NotFound with a message saying so.
// The exceptions are those of the real client: a done context returns the
// context's error, and Apply of an object with managedFields returns
// dynamic.ErrManagedFieldsSet.
//
// # Faults
//
// Client.Intercept sets a function that sees every request (its context
// and an Action: verb, resource, namespace, name, subresource) before the
// fake serves it. It stands for what a real server will not produce on
// demand: its error becomes the request's (return an *apierrors.StatusError
// for a server error), and it may block on the context to stand for a hung
// connection, or sleep to stand for a slow one — with testing/synctest,
// on the bubble's clock.
//
// # What the fake does not do
//
// No admission, defaulting or type-specific validation and no field
// ownership (see above); no garbage collection, so propagation policies
// are ignored and owners' dependents stay; no graceful deletion (grace
// periods are ignored); no namespace lifecycle, so objects may live in
// namespaces that do not exist and deleting a Namespace does not delete
// its contents; no periodic bookmarks; no RBAC; resourceVersion "0" lists
// are as fresh as any other. Custom resources on a real server require a
// resourceVersion on update; the fake, like built-in resources, does not.
//
// # Usage
//
//	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
//	c := fake.NewClient()
//	if err := c.Register(fake.ResourceInfo{GVR: widgets, Kind: "Widget", Namespaced: true, Status: true}); err != nil {
//		t.Fatal(err)
//	}
//	if err := c.Add(existingWidget); err != nil {
//		t.Fatal(err)
//	}
//	reconcile(ctx, c) // the code under test takes a dynamic.Interface
//	for _, w := range c.Objects(widgets) {
//		// assert on w
//	}
package fake
