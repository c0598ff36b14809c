package readiness

import (
	"fmt"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// This file holds the rules of the built-in kinds, kstatus's
// (sigs.k8s.io/cli-utils/pkg/kstatus/status, core.go) rule for rule, with
// the same reasons and messages; the one deliberate difference is the
// Service rule (see serviceRule).

// scheduleWindow is how long a Pod may stay unschedulable before it is
// Failed.
const scheduleWindow = 15 * time.Second

// Reasons shared by several rules, kstatus's names.
const (
	tooFewReady     = "LessReady"
	tooFewAvailable = "LessAvailable"
	tooFewUpdated   = "LessUpdated"
	tooFewReplicas  = "LessReplicas"
	extraPods       = "ExtraPods"
)

func builtinRules(now func() time.Time) map[schema.GroupKind]Rule {
	gk := func(group, kind string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }
	return map[schema.GroupKind]Rule{
		gk("", "Service"):                                      serviceRule,
		gk("", "Pod"):                                          func(obj *unstructured.Unstructured) (Result, error) { return podRule(obj, now()) },
		gk("", "Secret"):                                       alwaysReady,
		gk("", "ConfigMap"):                                    alwaysReady,
		gk("", "PersistentVolumeClaim"):                        pvcRule,
		gk("apps", "StatefulSet"):                              statefulSetRule,
		gk("apps", "DaemonSet"):                                daemonSetRule,
		gk("extensions", "DaemonSet"):                          daemonSetRule,
		gk("apps", "Deployment"):                               deploymentRule,
		gk("extensions", "Deployment"):                         deploymentRule,
		gk("apps", "ReplicaSet"):                               replicaSetRule,
		gk("extensions", "ReplicaSet"):                         replicaSetRule,
		gk("policy", "PodDisruptionBudget"):                    pdbRule,
		gk("batch", "CronJob"):                                 alwaysReady,
		gk("batch", "Job"):                                     jobRule,
		gk("apiextensions.k8s.io", "CustomResourceDefinition"): crdRule,
	}
}

func alwaysReady(*unstructured.Unstructured) (Result, error) {
	return current("Resource is always ready"), nil
}

// statefulSetRule: StatefulSets set no conditions; their replica counts
// and revisions tell. OnDelete is left to the user and always Current.
func statefulSetRule(u *unstructured.Unstructured) (Result, error) {
	obj := u.Object
	if stringOr(obj, "", "spec", "updateStrategy", "type") == "OnDelete" {
		return current("StatefulSet is using the ondelete update strategy"), nil
	}
	specReplicas := intOr(obj, 1, "spec", "replicas")
	readyReplicas := intOr(obj, 0, "status", "readyReplicas")
	currentReplicas := intOr(obj, 0, "status", "currentReplicas")
	updatedReplicas := intOr(obj, 0, "status", "updatedReplicas")
	statusReplicas := intOr(obj, 0, "status", "replicas")
	partition := intOr(obj, -1, "spec", "updateStrategy", "rollingUpdate", "partition")

	switch {
	case specReplicas > statusReplicas:
		return inProgress(tooFewReplicas, fmt.Sprintf("Replicas: %d/%d", statusReplicas, specReplicas)), nil
	case specReplicas > readyReplicas:
		return inProgress(tooFewReady, fmt.Sprintf("Ready: %d/%d", readyReplicas, specReplicas)), nil
	case statusReplicas > specReplicas:
		return inProgress(extraPods, fmt.Sprintf("Pending termination: %d", statusReplicas-specReplicas)), nil
	}
	if partition != -1 {
		if updatedReplicas < specReplicas-partition {
			return inProgress("PartitionRollout", fmt.Sprintf("updated: %d/%d", updatedReplicas, specReplicas-partition)), nil
		}
		return current(fmt.Sprintf("Partition rollout complete. updated: %d", updatedReplicas)), nil
	}
	if specReplicas > currentReplicas {
		return inProgress("LessCurrent", fmt.Sprintf("current: %d/%d", currentReplicas, specReplicas)), nil
	}
	if stringOr(obj, "", "status", "currentRevision") != stringOr(obj, "", "status", "updateRevision") {
		return inProgress("RevisionMismatch", "Waiting for updated revision to match current"), nil
	}
	return current(fmt.Sprintf("All replicas scheduled as expected. Replicas: %d", statusReplicas)), nil
}

// deploymentRule: replica counts, then the Progressing and Available
// conditions. Past its progress deadline a Deployment is Failed.
func deploymentRule(u *unstructured.Unstructured) (Result, error) {
	obj := u.Object
	conds, err := conditions(u)
	if err != nil {
		return Result{}, err
	}
	// Without progressDeadlineSeconds the controller sets no Progressing
	// condition; math.MaxInt32 means the same to it.
	progressing := intOr(obj, math.MaxInt32, "spec", "progressDeadlineSeconds") == math.MaxInt32
	available := false
	for _, c := range conds {
		switch c.Type {
		case "Progressing":
			if c.Reason == "ProgressDeadlineExceeded" {
				return Result{Status: Failed, Reason: c.Reason, Message: "Progress deadline exceeded"}, nil
			}
			if c.Status == "True" && c.Reason == "NewReplicaSetAvailable" {
				progressing = true
			}
		case "Available":
			if c.Status == "True" {
				available = true
			}
		}
	}
	specReplicas := intOr(obj, 1, "spec", "replicas")
	statusReplicas := intOr(obj, 0, "status", "replicas")
	updatedReplicas := intOr(obj, 0, "status", "updatedReplicas")
	readyReplicas := intOr(obj, 0, "status", "readyReplicas")
	availableReplicas := intOr(obj, 0, "status", "availableReplicas")
	switch {
	case specReplicas > statusReplicas:
		return inProgress(tooFewReplicas, fmt.Sprintf("Replicas: %d/%d", statusReplicas, specReplicas)), nil
	case specReplicas > updatedReplicas:
		return inProgress(tooFewUpdated, fmt.Sprintf("Updated: %d/%d", updatedReplicas, specReplicas)), nil
	case statusReplicas > specReplicas:
		return inProgress(extraPods, fmt.Sprintf("Pending termination: %d", statusReplicas-specReplicas)), nil
	case updatedReplicas > availableReplicas:
		return inProgress(tooFewAvailable, fmt.Sprintf("Available: %d/%d", availableReplicas, updatedReplicas)), nil
	case specReplicas > readyReplicas:
		return inProgress(tooFewReady, fmt.Sprintf("Ready: %d/%d", readyReplicas, specReplicas)), nil
	case !progressing:
		return inProgress("ReplicaSetNotAvailable", "ReplicaSet not Available"), nil
	case !available:
		return inProgress("DeploymentNotAvailable", "Deployment not Available"), nil
	}
	return current(fmt.Sprintf("Deployment is available. Replicas: %d", statusReplicas)), nil
}

// replicaSetRule: a ReplicaFailure condition, then replica counts.
func replicaSetRule(u *unstructured.Unstructured) (Result, error) {
	obj := u.Object
	conds, err := conditions(u)
	if err != nil {
		return Result{}, err
	}
	if _, ok := hasCondition(conds, "ReplicaFailure", "True"); ok {
		return inProgress("ReplicaFailure", "Replica Failure condition. Check Pods"), nil
	}
	specReplicas := intOr(obj, 1, "spec", "replicas")
	statusReplicas := intOr(obj, 0, "status", "replicas")
	readyReplicas := intOr(obj, 0, "status", "readyReplicas")
	availableReplicas := intOr(obj, 0, "status", "availableReplicas")
	labelled := intOr(obj, 0, "status", "fullyLabeledReplicas")
	switch {
	case specReplicas > labelled:
		return inProgress("LessLabelled", fmt.Sprintf("Labelled: %d/%d", labelled, specReplicas)), nil
	case specReplicas > availableReplicas:
		return inProgress(tooFewAvailable, fmt.Sprintf("Available: %d/%d", availableReplicas, specReplicas)), nil
	case specReplicas > readyReplicas:
		return inProgress(tooFewReady, fmt.Sprintf("Ready: %d/%d", readyReplicas, specReplicas)), nil
	case statusReplicas > specReplicas:
		return inProgress(extraPods, fmt.Sprintf("Pending termination: %d", statusReplicas-specReplicas)), nil
	}
	return current(fmt.Sprintf("ReplicaSet is available. Replicas: %d", statusReplicas)), nil
}

// daemonSetRule: the controller always sets observedGeneration, so its
// absence means it has not seen the object; then the scheduled counts.
func daemonSetRule(u *unstructured.Unstructured) (Result, error) {
	if res, ok := checkGenerationSet(u); ok {
		return res, nil
	}
	obj := u.Object
	desired := intOr(obj, -1, "status", "desiredNumberScheduled")
	currentN := intOr(obj, 0, "status", "currentNumberScheduled")
	updated := intOr(obj, 0, "status", "updatedNumberScheduled")
	availableN := intOr(obj, 0, "status", "numberAvailable")
	ready := intOr(obj, 0, "status", "numberReady")
	switch {
	case desired == -1:
		return inProgress("NoDesiredNumber", "Missing .status.desiredNumberScheduled"), nil
	case desired > currentN:
		return inProgress("LessCurrent", fmt.Sprintf("Current: %d/%d", currentN, desired)), nil
	case desired > updated:
		return inProgress(tooFewUpdated, fmt.Sprintf("Updated: %d/%d", updated, desired)), nil
	case desired > availableN:
		return inProgress(tooFewAvailable, fmt.Sprintf("Available: %d/%d", availableN, desired)), nil
	case desired > ready:
		return inProgress(tooFewReady, fmt.Sprintf("Ready: %d/%d", ready, desired)), nil
	}
	return current(fmt.Sprintf("All replicas scheduled as expected. Replicas: %d", desired)), nil
}

// pvcRule: a claim is Current once Bound.
func pvcRule(u *unstructured.Unstructured) (Result, error) {
	if phase := stringOr(u.Object, "unknown", "status", "phase"); phase != "Bound" {
		return inProgress("NotBound", "PVC is not Bound. phase: "+phase), nil
	}
	return current("PVC is Bound"), nil
}

// podRule: finished Pods are Current whatever their outcome (kstatus's
// choice: the Pod has done all it will); running ones once Ready, Failed
// while a container crash-loops; pending ones Failed once unschedulable
// for longer than scheduleWindow.
func podRule(u *unstructured.Unstructured, now time.Time) (Result, error) {
	obj := u.Object
	conds, err := conditions(u)
	if err != nil {
		return Result{}, err
	}
	switch phase := stringOr(obj, "", "status", "phase"); phase {
	case "Succeeded":
		return current("Pod has completed successfully"), nil
	case "Failed":
		return current("Pod has completed, but not successfully"), nil
	case "Running":
		if _, ok := hasCondition(conds, "Ready", "True"); ok {
			return current("Pod is Ready"), nil
		}
		if names := crashLooping(obj); len(names) > 0 {
			return failed("ContainerCrashLooping", "Containers in CrashLoop state: "+strings.Join(names, ",")), nil
		}
		return inProgress("PodRunningNotReady", "Pod is running but is not Ready"), nil
	case "Pending":
		if c, ok := hasCondition(conds, "PodScheduled", "False"); ok && c.Reason == "Unschedulable" {
			if now.Add(-scheduleWindow).Before(u.GetCreationTimestamp().Time) {
				return inProgress("PodNotScheduled", "Pod has not been scheduled"), nil
			}
			return failed("PodUnschedulable", "Pod could not be scheduled"), nil
		}
		return inProgress("PodPending", "Pod is in the Pending phase"), nil
	case "":
		return inProgress("PodNotObserved", "Pod phase not available"), nil
	default:
		// kstatus returns an error here; a status serves a waiter better.
		return Result{Status: Unknown, Reason: "UnknownPhase", Message: "Pod is in phase " + phase}, nil
	}
}

// crashLooping names the containers waiting with reason CrashLoopBackOff.
func crashLooping(obj map[string]any) []string {
	statuses, _, _ := unstructured.NestedSlice(obj, "status", "containerStatuses")
	var names []string
	for _, item := range statuses {
		cs, ok := item.(map[string]any)
		if !ok {
			continue
		}
		name, _ := cs["name"].(string)
		if name != "" && stringOr(cs, "", "state", "waiting", "reason") == "CrashLoopBackOff" {
			names = append(names, name)
		}
	}
	return names
}

// pdbRule: the generic observedGeneration check is all a
// PodDisruptionBudget needs.
func pdbRule(*unstructured.Unstructured) (Result, error) {
	return current("AllowedDisruptions has been computed."), nil
}

// jobRule: Complete=True is Current and Failed=True Failed; otherwise a Job
// is InProgress until it starts and Current while it runs (kstatus's
// choice: a running Job is what its spec asks for).
func jobRule(u *unstructured.Unstructured) (Result, error) {
	obj := u.Object
	parallelism := intOr(obj, 1, "spec", "parallelism")
	completions := intOr(obj, parallelism, "spec", "completions")
	succeeded := intOr(obj, 0, "status", "succeeded")
	active := intOr(obj, 0, "status", "active")
	failedN := intOr(obj, 0, "status", "failed")
	conds, err := conditions(u)
	if err != nil {
		return Result{}, err
	}
	for _, c := range conds {
		switch {
		case c.Type == "Complete" && c.Status == "True":
			return current(fmt.Sprintf("Job Completed. succeeded: %d/%d", succeeded, completions)), nil
		case c.Type == "Failed" && c.Status == "True":
			return failed("JobFailed", fmt.Sprintf("Job Failed. failed: %d/%d", failedN, completions)), nil
		}
	}
	if stringOr(obj, "", "status", "startTime") == "" {
		return inProgress("JobNotStarted", "Job not started"), nil
	}
	return current(fmt.Sprintf("Job in progress. success:%d, active: %d, failed: %d", succeeded, active, failedN)), nil
}

// serviceRule: a LoadBalancer Service needs a cluster IP (kstatus) and, a
// step further than kstatus, an ingress point in status.loadBalancer:
// until the load balancer is provisioned nothing outside the cluster can
// reach it. Other Services are Current.
func serviceRule(u *unstructured.Unstructured) (Result, error) {
	obj := u.Object
	if stringOr(obj, "ClusterIP", "spec", "type") != "LoadBalancer" {
		return current("Service is ready"), nil
	}
	if stringOr(obj, "", "spec", "clusterIP") == "" {
		return inProgress("NoIPAssigned", "ClusterIP not set. Service type: LoadBalancer"), nil
	}
	ingress, _, _ := unstructured.NestedSlice(obj, "status", "loadBalancer", "ingress")
	if len(ingress) == 0 {
		return inProgress("NoIngress", "LoadBalancer has no ingress address yet"), nil
	}
	return current("Service is ready"), nil
}

// crdRule: NamesAccepted=False or Established=False (other than while
// Installing) is Failed; Established=True is Current.
func crdRule(u *unstructured.Unstructured) (Result, error) {
	conds, err := conditions(u)
	if err != nil {
		return Result{}, err
	}
	for _, c := range conds {
		if c.Type == "NamesAccepted" && c.Status == "False" {
			return failed(c.Reason, c.Message), nil
		}
		if c.Type == "Established" {
			if c.Status == "False" && c.Reason != "Installing" {
				return failed(c.Reason, c.Message), nil
			}
			if c.Status == "True" {
				return current("CRD is established"), nil
			}
		}
	}
	return inProgress("Installing", "Install in progress"), nil
}
