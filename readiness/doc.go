// Package readiness computes whether any Kubernetes object has become what
// its spec asks for, from the object alone: the status model of kstatus
// (sigs.k8s.io/cli-utils/pkg/kstatus/status), for controllers and for the
// kdyn CLI's "wait --for=ready", "apply --wait" and "rollout status".
//
//	res, err := readiness.Compute(obj)
//	if err != nil { ... } // a status field of the wrong shape
//	if !res.Ready() {
//		fmt.Println(res) // InProgress: Available: 1/3
//	}
//
// # Statuses
//
// Current (done), InProgress (the controller is still working or has not
// seen the latest spec), Failed (the controller reports it cannot make
// progress; it may still recover), Terminating (being deleted), NotFound
// (a nil object) and Unknown (status fields no rule understands). A Result
// carries the Status, a one-word Reason and a Message for people.
//
// # How an object is judged
//
// In this order, the first check that decides wins:
//
//  1. metadata.deletionTimestamp set: Terminating.
//  2. status.observedGeneration present and different from
//     metadata.generation: InProgress (LatestGenerationNotObserved). A
//     Ready, Reconciling or Stalled condition whose own observedGeneration
//     is older than metadata.generation counts the same way.
//  3. A Reconciling=True condition: InProgress; a Stalled=True condition:
//     Failed (kstatus's "abnormal-true" conditions; the first in the list
//     decides).
//  4. The rule of the object's group and kind, if there is one (below).
//  5. A Ready condition: True is Current, False or Unknown InProgress.
//  6. Otherwise Current: an object nothing reconciles is as it will be.
//
// The built-in rules, by kind:
//
//   - Deployment: spec.replicas (default 1) must equal status.replicas and
//     updatedReplicas, with as many available and ready; Progressing must
//     say NewReplicaSetAvailable (when progressDeadlineSeconds is set) and
//     Available must be True. ProgressDeadlineExceeded is Failed.
//   - StatefulSet: replicas, readyReplicas and currentReplicas equal to
//     spec.replicas, and currentRevision equal to updateRevision; with a
//     partition, the replicas above it updated. OnDelete is Current.
//   - DaemonSet: observedGeneration set, then current, updated, available
//     and ready counts equal to desiredNumberScheduled.
//   - ReplicaSet: fully labelled, available and ready replicas; a
//     ReplicaFailure condition is InProgress.
//   - Job: Complete=True is Current, Failed=True Failed, not started
//     InProgress, running Current.
//   - Pod: Succeeded or Failed phase Current (it has done all it will);
//     Running with Ready=True Current, crash-looping containers Failed;
//     Pending and unschedulable for more than 15 seconds Failed.
//   - PersistentVolumeClaim: Current once Bound.
//   - Service: a LoadBalancer needs a cluster IP and an ingress point in
//     status.loadBalancer.ingress; other types are Current.
//   - CustomResourceDefinition: Established=True is Current;
//     NamesAccepted=False, or Established=False other than while
//     Installing, is Failed.
//   - PodDisruptionBudget, ConfigMap, Secret, CronJob: Current.
//
// Options.Rules adds rules for other kinds (or replaces these), and
// Options.Now sets the clock of the Pod rule; New builds a Checker from
// them.
//
// # kstatus
//
// kdyn does not import kstatus: its status package uses
// k8s.io/api/core/v1 (for ConditionStatus), and kdyn's library packages do
// not link the typed APIs. This package reimplements its rules, reasons
// and messages, and runs kstatus's own test cases (testdata/kstatus.yaml).
// It differs on purpose in three places: a LoadBalancer Service without
// an ingress point is InProgress (kstatus: Current once it has a cluster
// IP); a condition's own observedGeneration is checked (step 2); and a Pod
// in an unknown phase is Unknown rather than an error.
//
// # Concurrency and errors
//
// Compute and a Checker's methods are safe for concurrent use; they do not
// change the object. An error is a *FieldError naming the object and the
// field whose shape is wrong (".status.conditions[1].status: expected
// string, found bool"); fields the rules read as numbers fall back to the
// rule's default when they are absent or not numbers, as in kstatus.
package readiness
