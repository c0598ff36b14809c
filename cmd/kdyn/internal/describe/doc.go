// Package describe holds "kdyn describe": a human-readable description of
// objects of any kind, laid out as kubectl describe lays it out, with the
// object's events.
//
// Pods, Deployments (with their old and new ReplicaSets), ReplicaSets and
// ReplicationControllers (with their pods' phases and pod template) and
// Services (with the endpoints of their EndpointSlices) get kubectl's
// dedicated descriptions; every other kind, custom resources included,
// gets kubectl's generic description (name, namespace, labels,
// annotations, then every field of the object under a label made from its
// name, "resourceVersion" as "Resource Version"). kubectl has dedicated
// describers for more built-in kinds (Nodes, Jobs, StatefulSets, ...);
// kdyn describes those with the generic one for now.
//
// Objects are read with the dynamic client and their fields with gjson;
// events are listed by involvedObject (kind, name, namespace, uid), page by
// page (--chunk-size), and printed oldest first. A NAME that matches no
// object is taken as a prefix of names, as kubectl does.
package describe
