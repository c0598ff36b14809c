package readiness_test

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/readiness"
)

// obj decodes a YAML object as the API machinery would.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return decodeObject(t, j)
}

type ruleCase struct {
	name   string
	object string
	status readiness.Status
	reason string
	msg    string // checked when not empty
}

func runCases(t *testing.T, c *readiness.Checker, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Compute(obj(t, tc.object))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status || res.Reason != tc.reason || (tc.msg != "" && res.Message != tc.msg) {
				t.Errorf("got %s (reason %q, message %q), want %s (reason %q, message %q)", res.Status, res.Reason, res.Message, tc.status, tc.reason, tc.msg)
			}
		})
	}
}

func TestGenericChecks(t *testing.T) {
	runCases(t, readiness.New(readiness.Options{}), []ruleCase{
		{"terminating wins over everything", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 2, deletionTimestamp: "2026-01-01T00:00:00Z"}
status: {observedGeneration: 1}`, readiness.Terminating, "", "Resource scheduled for deletion"},
		{"observedGeneration behind", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 3}
status: {observedGeneration: 2, conditions: [{type: Ready, status: "True"}]}`, readiness.InProgress, "LatestGenerationNotObserved", "Widget generation is 3, but latest observed generation is 2"},
		{"Ready condition observed at an older generation", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 3}
status: {conditions: [{type: Ready, status: "True", observedGeneration: 2}]}`, readiness.InProgress, "LatestGenerationNotObserved", "Widget generation is 3, but its Ready condition was observed at generation 2"},
		{"Ready condition observed at the current generation", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 3}
status: {conditions: [{type: Ready, status: "True", observedGeneration: 3}]}`, readiness.Current, "", "Resource is Ready"},
		{"other conditions' observedGeneration does not count", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 3}
status: {conditions: [{type: Synced, status: "True", observedGeneration: 1}]}`, readiness.Current, "", "Resource is current"},
		{"Reconciling=True", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 1}
status: {observedGeneration: 1, conditions: [{type: Ready, status: "True"}, {type: Reconciling, status: "True", reason: Scaling, message: "2 of 3"}]}`, readiness.InProgress, "Scaling", "2 of 3"},
		{"Stalled=True", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
status: {conditions: [{type: Stalled, status: "True", reason: BadSpec, message: "spec.size must be positive"}]}`, readiness.Failed, "BadSpec", "spec.size must be positive"},
		{"Stalled=True overrides a built-in rule", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
status: {conditions: [{type: Stalled, status: "True", reason: Quota, message: "exceeded quota"}]}`, readiness.Failed, "Quota", "exceeded quota"},
		{"Stalled=False and Reconciling=False are ignored", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
status: {conditions: [{type: Stalled, status: "False"}, {type: Reconciling, status: "False"}]}`, readiness.Current, "", ""},
		{"Ready=Unknown", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
status: {conditions: [{type: Ready, status: Unknown, reason: Pending, message: waiting}]}`, readiness.InProgress, "Pending", "waiting"},
		{"Ready=False", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
status: {conditions: [{type: Ready, status: "False", reason: Degraded, message: "1 replica down"}]}`, readiness.InProgress, "Degraded", "1 replica down"},
		{"no status at all", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 5}`, readiness.Current, "", "Resource is current"},
	})
}

func TestBuiltinRules(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := readiness.New(readiness.Options{Now: func() time.Time { return created.Add(time.Minute) }})
	runCases(t, c, []ruleCase{
		// Deployment
		{"deployment rolled out", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, generation: 2}
spec: {replicas: 3, progressDeadlineSeconds: 600}
status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3,
  conditions: [{type: Progressing, status: "True", reason: NewReplicaSetAvailable}, {type: Available, status: "True"}]}`, readiness.Current, "", "Deployment is available. Replicas: 3"},
		{"deployment updating", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, generation: 2}
spec: {replicas: 3}
status: {observedGeneration: 2, replicas: 3, updatedReplicas: 1}`, readiness.InProgress, "LessUpdated", "Updated: 1/3"},
		{"deployment old pods terminating", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: 2}
status: {replicas: 3, updatedReplicas: 2}`, readiness.InProgress, "ExtraPods", "Pending termination: 1"},
		{"deployment waiting for availability", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: 3}
status: {replicas: 3, updatedReplicas: 3, availableReplicas: 1}`, readiness.InProgress, "LessAvailable", "Available: 1/3"},
		{"deployment past its progress deadline", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: 3}
status: {conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded}]}`, readiness.Failed, "ProgressDeadlineExceeded", "Progress deadline exceeded"},
		{"deployment scaled to zero", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: 0, progressDeadlineSeconds: 600}
status: {conditions: [{type: Progressing, status: "True", reason: NewReplicaSetAvailable}, {type: Available, status: "True"}]}`, readiness.Current, "", ""},
		// StatefulSet
		{"statefulset done", `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s, generation: 1}
spec: {replicas: 2}
status: {observedGeneration: 1, replicas: 2, readyReplicas: 2, currentReplicas: 2, updatedReplicas: 2, currentRevision: s-1, updateRevision: s-1}`, readiness.Current, "", "All replicas scheduled as expected. Replicas: 2"},
		{"statefulset revision rolling", `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec: {replicas: 2}
status: {replicas: 2, readyReplicas: 2, currentReplicas: 2, currentRevision: s-1, updateRevision: s-2}`, readiness.InProgress, "RevisionMismatch", ""},
		{"statefulset partitioned", `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec: {replicas: 4, updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2}}}
status: {replicas: 4, readyReplicas: 4, updatedReplicas: 1}`, readiness.InProgress, "PartitionRollout", "updated: 1/2"},
		{"statefulset OnDelete", `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec: {replicas: 4, updateStrategy: {type: OnDelete}}`, readiness.Current, "", ""},
		// DaemonSet
		{"daemonset never observed", `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds, generation: 1}`, readiness.InProgress, "NoObservedGeneration", ""},
		{"daemonset updating", `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds, generation: 2}
status: {observedGeneration: 2, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 1}`, readiness.InProgress, "LessUpdated", "Updated: 1/3"},
		// ReplicaSet
		{"replicaset done", `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec: {replicas: 1}
status: {replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1}`, readiness.Current, "", ""},
		// Job
		{"job running", `
apiVersion: batch/v1
kind: Job
metadata: {name: j}
status: {startTime: "2026-01-01T00:00:00Z", active: 1}`, readiness.Current, "", "Job in progress. success:0, active: 1, failed: 0"},
		{"job failed", `
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec: {completions: 2}
status: {failed: 3, conditions: [{type: Failed, status: "True", reason: BackoffLimitExceeded}]}`, readiness.Failed, "JobFailed", "Job Failed. failed: 3/2"},
		// PVC
		{"pvc pending", `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: p}
status: {phase: Pending}`, readiness.InProgress, "NotBound", "PVC is not Bound. phase: Pending"},
		// Service
		{"loadbalancer without ingress", `
apiVersion: v1
kind: Service
metadata: {name: lb}
spec: {type: LoadBalancer, clusterIP: 10.0.0.1}
status: {loadBalancer: {}}`, readiness.InProgress, "NoIngress", "LoadBalancer has no ingress address yet"},
		{"loadbalancer with ingress", `
apiVersion: v1
kind: Service
metadata: {name: lb}
spec: {type: LoadBalancer, clusterIP: 10.0.0.1}
status: {loadBalancer: {ingress: [{ip: 192.0.2.10}]}}`, readiness.Current, "", "Service is ready"},
		{"headless clusterip", `
apiVersion: v1
kind: Service
metadata: {name: h}
spec: {clusterIP: None}`, readiness.Current, "", ""},
		// Pod
		{"pod unschedulable for a minute", `
apiVersion: v1
kind: Pod
metadata: {name: p, creationTimestamp: "2026-01-01T00:00:00Z"}
status: {phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]}`, readiness.Failed, "PodUnschedulable", ""},
		{"pod crash looping", `
apiVersion: v1
kind: Pod
metadata: {name: p}
status: {phase: Running, containerStatuses: [{name: a, state: {running: {}}}, {name: b, state: {waiting: {reason: CrashLoopBackOff}}}]}`, readiness.Failed, "ContainerCrashLooping", "Containers in CrashLoop state: b"},
		{"pod in an unknown phase", `
apiVersion: v1
kind: Pod
metadata: {name: p}
status: {phase: Unknown}`, readiness.Unknown, "UnknownPhase", "Pod is in phase Unknown"},
		// CRD
		{"crd established", `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
status: {conditions: [{type: NamesAccepted, status: "True"}, {type: Established, status: "True"}]}`, readiness.Current, "", "CRD is established"},
		{"crd names conflict", `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
status: {conditions: [{type: NamesAccepted, status: "False", reason: PluralConflict, message: '"widgets" is already in use'}]}`, readiness.Failed, "PluralConflict", `"widgets" is already in use`},
		// always ready
		{"configmap", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c}`, readiness.Current, "", "Resource is always ready"},
	})
}

func TestNilIsNotFound(t *testing.T) {
	res, err := readiness.Compute(nil)
	if err != nil || res.Status != readiness.NotFound || res.Ready() {
		t.Errorf("Compute(nil) = %v, %v", res, err)
	}
}

func TestFieldErrors(t *testing.T) {
	for _, tc := range []struct{ object, path string }{
		{`{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns}, status: {conditions: [{type: Ready, status: true}]}}`, ".status.conditions[0].status"},
		{`{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns}, status: {conditions: {type: Ready}}}`, ".status.conditions"},
		{`{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns}, status: {conditions: [{type: Ready, status: "True"}, "x"]}}`, ".status.conditions[1]"},
		{`{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns}, status: running}`, ".status"},
	} {
		_, err := readiness.Compute(obj(t, tc.object))
		var fe *readiness.FieldError
		if !errors.As(err, &fe) || fe.Path != tc.path || fe.Name != "p" || fe.Namespace != "ns" || fe.Kind != "Pod" {
			t.Errorf("%s: got %v, want a FieldError at %s", tc.object, err, tc.path)
		}
	}
}

func TestOptionsRules(t *testing.T) {
	widget := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	c := readiness.New(readiness.Options{Rules: map[schema.GroupKind]readiness.Rule{
		widget: func(u *unstructured.Unstructured) (readiness.Result, error) {
			if s, _, _ := unstructured.NestedString(u.Object, "status", "phase"); s != "Running" {
				return readiness.Result{Status: readiness.InProgress, Reason: "NotRunning", Message: "phase " + s}, nil
			}
			return readiness.Result{Status: readiness.Current}, nil
		},
		{Kind: "ConfigMap"}: nil, // back to the generic checks
	}})
	runCases(t, c, []ruleCase{
		{"custom rule", `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, status: {phase: Starting}}`, readiness.InProgress, "NotRunning", "phase Starting"},
		{"generic checks run first", `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, generation: 2}, status: {observedGeneration: 1, phase: Running}}`, readiness.InProgress, "LatestGenerationNotObserved", ""},
		{"removed rule", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`, readiness.Current, "", "Resource is current"},
		{"other rules kept", `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: c}}`, readiness.InProgress, "NotBound", ""},
	})
}
