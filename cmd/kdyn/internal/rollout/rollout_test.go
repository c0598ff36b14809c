package rollout

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestRolloutStatus(t *testing.T) {
	const readyConds = `conditions: [{type: Progressing, status: "True", reason: NewReplicaSetAvailable}, {type: Available, status: "True"}]`
	for _, tc := range []struct {
		name, object string
		revision     int64
		msg          string
		done         bool
		err          string
	}{
		{"deployment not observed", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 2}, spec: {replicas: 3}, status: {observedGeneration: 1}}`, 0,
			"Waiting for deployment spec update to be observed...\n", false, ""},
		{"deployment updating", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 1}, spec: {replicas: 3}, status: {observedGeneration: 1, updatedReplicas: 1}}`, 0,
			"Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...\n", false, ""},
		{"deployment old replicas", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 1}, spec: {replicas: 3}, status: {observedGeneration: 1, replicas: 4, updatedReplicas: 3}}`, 0,
			"Waiting for deployment \"web\" rollout to finish: 1 old replicas are pending termination...\n", false, ""},
		{"deployment availability", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 1}, spec: {replicas: 3}, status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 2}}`, 0,
			"Waiting for deployment \"web\" rollout to finish: 2 of 3 updated replicas are available...\n", false, ""},
		{"deployment done by kubectl's rules, not ready", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 1}, spec: {replicas: 3}, status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3, readyReplicas: 3}}`, 0,
			"Waiting for deployment \"web\" rollout to finish: Deployment not Available...\n", false, ""},
		{"deployment done", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 1, annotations: {deployment.kubernetes.io/revision: "4"}}, spec: {replicas: 3, progressDeadlineSeconds: 600}, status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3, readyReplicas: 3, ` + readyConds + `}}`, 4,
			"deployment \"web\" successfully rolled out\n", true, ""},
		{"deployment other revision", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, annotations: {deployment.kubernetes.io/revision: "4"}}}`, 3,
			"", false, "desired revision (3) is different from the running revision (4)"},
		{"deployment deadline", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, status: {conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded}]}}`, 0,
			"", false, `deployment "web" exceeded its progress deadline`},
		{"daemonset OnDelete", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds}, spec: {updateStrategy: {type: OnDelete}}}`, 0,
			"", false, "rollout status is only available for RollingUpdate strategy type"},
		{"daemonset updating", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds, generation: 1}, status: {observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 2}}`, 0,
			"Waiting for daemon set \"ds\" rollout to finish: 2 out of 3 new pods have been updated...\n", false, ""},
		{"statefulset not observed", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, generation: 1}, spec: {replicas: 2}}`, 0,
			"Waiting for statefulset spec update to be observed...\n", false, ""},
		{"statefulset partition", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, generation: 1}, spec: {replicas: 4, updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2}}}, status: {observedGeneration: 1, readyReplicas: 4, updatedReplicas: 1}}`, 0,
			"Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...\n", false, ""},
		{"statefulset revisions", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, readyReplicas: 2, updatedReplicas: 1, updateRevision: db-2, currentRevision: db-1}}`, 0,
			"waiting for statefulset rolling update to complete 1 pods at revision db-2...\n", false, ""},
		{"statefulset done", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 2, readyReplicas: 2, currentReplicas: 2, updatedReplicas: 2, updateRevision: db-2, currentRevision: db-2}}`, 0,
			"statefulset rolling update complete 2 pods at revision db-2...\n", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, done, err := rolloutStatus(obj(t, tc.object), tc.revision)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || msg != tc.msg || done != tc.done {
				t.Errorf("got %q, %v, %v; want %q, %v", msg, done, err, tc.msg, tc.done)
			}
		})
	}
}

func TestHistoryText(t *testing.T) {
	if s, _ := historyText(nil, 0, true); s != "No rollout history found." {
		t.Errorf("empty history: %q", s)
	}
	revs := []revision{{number: 1}, {number: 3, changeCause: "kubectl set image deployment/web app=nginx:1.27"}}
	got, err := historyText(revs, 0, true)
	want := "REVISION  CHANGE-CAUSE\n1         <none>\n3         kubectl set image deployment/web app=nginx:1.27\n"
	if err != nil || got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := historyText(revs, 2, true); err == nil || err.Error() != "unable to find the specified revision" {
		t.Errorf("revision 2: %v", err)
	}
	// A Deployment's revision shows the ReplicaSet's change cause among
	// the template's annotations, as kubectl does; a ControllerRevision's
	// does not.
	cause := "  Annotations:\tkubernetes.io/change-cause: kubectl set image deployment/web app=nginx:1.27\n"
	if got, _ := historyText(revs, 3, true); !strings.Contains(got, cause) {
		t.Errorf("deployment revision 3 without its change cause:\n%s", got)
	}
	if got, _ := historyText(revs, 3, false); strings.Contains(got, "change-cause") {
		t.Errorf("controller revision 3 with a change cause:\n%s", got)
	}
	if revs[1].template != nil {
		t.Errorf("historyText changed the revision's template: %v", revs[1].template)
	}
	if r, ok := find(revs, 0); !ok || r.number != 1 {
		t.Errorf("find(0) = %v, %v; want the revision before the latest", r.number, ok)
	}
}

// The layout of kubectl's describe.DescribePodTemplate for the fields kdyn
// shows.
func TestDescribeTemplate(t *testing.T) {
	var tmpl map[string]any
	err := yaml.Unmarshal([]byte(`
metadata:
  labels: {app: web, pod-template-hash: abc}
  annotations: {kubectl.kubernetes.io/restartedAt: "2026-01-01T00:00:00Z"}
spec:
  serviceAccountName: web
  containers:
  - name: web
    image: nginx:1.27
    command: [nginx, -g, daemon off;]
    ports: [{containerPort: 80, protocol: TCP, name: http}, {containerPort: 443, protocol: TCP}]
    resources: {limits: {memory: 128Mi, cpu: 500m}, requests: {cpu: 100m}}
    env:
    - {name: MODE, value: prod}
    - {name: PASSWORD, valueFrom: {secretKeyRef: {name: creds, key: password}}}
    volumeMounts: [{name: data, mountPath: /var/data, readOnly: true}, {name: cache, mountPath: /cache, subPath: web}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
  nodeSelector: {disk: ssd}
  tolerations: [{key: dedicated, operator: Equal, value: web, effect: NoSchedule}]
`), &tmpl)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	describeTemplate(&b, tmpl)
	clitest.AssertGolden(t, "pod-template.txt", b.String())
}
