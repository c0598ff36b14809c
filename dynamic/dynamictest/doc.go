// Package dynamictest is one behaviour suite for any dynamic.Interface: the
// in-memory fake in dynamic/fake and a client of a real kube-apiserver must
// both pass it, so the suite is what keeps the fake honest.
//
// # What it needs
//
// Run needs only a client and the name of a namespace the suite may create
// ConfigMaps in. It uses core/v1 ConfigMaps (namespaced) and Namespaces
// (cluster-scoped) only, so it runs against any server, with no CRDs, no
// controllers and no other setup. Against a real server the client needs
// create, get, list, watch, update, patch, delete and deletecollection on
// configmaps, and create, get, list and delete on namespaces.
//
// Object names carry a random suffix, so the suite may run twice against
// the same server; it deletes the ConfigMaps it created when it ends.
// Namespaces it deletes stay Terminating on a server without a controller
// manager: the suite accepts that (see the Namespaces subtests).
//
// # Usage
//
//	func TestSuite(t *testing.T) {
//		dynamictest.Run(t, dynamictest.Env{Client: client, Namespace: "test"})
//	}
//
// Every wait is bounded by Env.Timeout (10 s by default) and by t.Context().
package dynamictest
