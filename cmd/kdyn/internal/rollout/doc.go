// Package rollout holds "kdyn rollout status|restart|history|undo" for
// Deployments, StatefulSets and DaemonSets (apps/v1), on the dynamic
// client, with kubectl's output.
//
//   - status follows the object with cli.Follow (informer.Follow: a list
//     by name, then a watch: nothing is polled) and prints kubectl's progress line for
//     each change ("Waiting for deployment "web" rollout to finish: 1 of 3
//     updated replicas are available..."). It ends when kubectl's rules
//     say the rollout is done and the readiness package agrees (Current):
//     while they disagree it says what readiness still waits for.
//   - restart sets spec.template.metadata.annotations
//     ["kubectl.kubernetes.io/restartedAt"] to the time (RFC 3339) with a
//     strategic merge patch, as kubectl does, so the controller rolls
//     every pod.
//   - history lists revisions: for a Deployment, the ReplicaSets it
//     controls, by their deployment.kubernetes.io/revision annotation; for
//     StatefulSets and DaemonSets, the ControllerRevisions they control;
//     the change cause is the kubernetes.io/change-cause annotation.
//     --revision=N describes that revision's pod template in the layout
//     of kubectl's describe (describe.go); -o prints the revisions one
//     after the other.
//   - undo rolls back as kubectl does: a Deployment gets the chosen
//     ReplicaSet's pod template (less its pod-template-hash label) and
//     annotations with a JSON patch; a StatefulSet or DaemonSet gets the
//     ControllerRevision's data as a strategic merge patch. With
//     --dry-run=client it sends nothing and describes the template it
//     would restore.
//
// What each prints, errors included, is kubectl v0.37.2's byte for byte
// (bench/cli compares them on the real control plane), but for the order
// of members in history -o json, which kdyn sorts.
//
// Requests: status 1 list and watches; restart a GET and a PATCH; history
// and undo a GET, one list of ReplicaSets or ControllerRevisions (by the
// object's selector), and undo one PATCH.
package rollout
