package cli

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// describePod is a pod with most of what kubectl's pod description shows:
// resources, ports, a command, environment from fields, secrets and config
// maps, env from, mounts of several volume kinds, probes, tolerations and a
// node selector.
const describePod = `apiVersion: v1
kind: Pod
metadata:
  name: rich
  labels: {app: web, tier: fe}
  annotations:
    note: short
    long: "` + "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789" + `"
spec:
  priority: 0
  nodeSelector: {disk: ssd}
  tolerations:
  - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
  - {operator: Exists}
  - {key: slow, operator: Exists, effect: NoExecute, tolerationSeconds: 30}
  containers:
  - name: app
    image: nginx:1.27
    command: [sh, -c]
    args: ["echo one\necho two"]
    ports:
    - {containerPort: 80, name: http}
    - {containerPort: 9090, protocol: UDP}
    resources:
      limits: {cpu: "1", memory: 256Mi}
      requests: {cpu: 500m, memory: 128Mi}
    env:
    - {name: PLAIN, value: "a\nb"}
    - name: POD
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: db, key: password}}
    - name: LEVEL
      valueFrom: {configMapKeyRef: {name: settings, key: level, optional: true}}
    envFrom:
    - configMapRef: {name: settings}
    - secretRef: {name: db}
      prefix: DB_
    volumeMounts:
    - {name: data, mountPath: /data}
    - {name: conf, mountPath: /etc/conf, readOnly: true, subPath: app.conf}
    livenessProbe:
      httpGet: {path: /healthz, port: 80}
    readinessProbe:
      exec: {command: [cat, /tmp/ready]}
      periodSeconds: 5
  - name: sidecar
    image: busybox
  volumes:
  - {name: data, emptyDir: {}}
  - {name: conf, configMap: {name: settings}}
  - {name: secret, secret: {secretName: db, optional: true}}
  - {name: host, hostPath: {path: /var/log}}
  - {name: claim, persistentVolumeClaim: {claimName: data}}
`

// describeCRD defines widgets.describe.example.com, which both tools
// describe with their generic describer.
const describeCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.describe.example.com
spec:
  group: describe.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

const describeWidget = `apiVersion: describe.example.com/v1
kind: Widget
metadata:
  name: w1
  labels: {team: a}
spec:
  size: 3
  podIPs: [10.0.0.1]
  externalURL: http://example.com
  nodeSelector: {disk: ssd}
  items:
  - {name: one, apiVersion: v2}
  - plain
`

const describeDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}, annotations: {note: x}}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
    matchExpressions: [{key: tier, operator: In, values: [fe, be]}]
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 2, maxUnavailable: 25%}}
  template:
    metadata: {labels: {app: web, tier: fe}, annotations: {a: b}}
    spec:
      serviceAccountName: robot
      priorityClassName: high
      nodeSelector: {disk: ssd}
      initContainers: [{name: init, image: busybox, command: [sh, -c, "true"]}]
      containers:
      - name: web
        image: nginx
        ports: [{containerPort: 80}]
        env: [{name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        volumeMounts: [{name: data, mountPath: /data}]
      volumes: [{name: data, emptyDir: {}}]
`

const describeReplicaSet = `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: frontend, labels: {tier: frontend}}
spec:
  replicas: 2
  selector: {matchLabels: {tier: frontend}}
  template:
    metadata: {labels: {tier: frontend}}
    spec: {containers: [{name: php, image: php, resources: {requests: {cpu: 100m}}}]}
`

const describeRC = `apiVersion: v1
kind: ReplicationController
metadata: {name: legacy}
spec:
  replicas: 1
  selector: {app: legacy}
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: c, image: nginx, env: [{name: GET_HOSTS_FROM, value: dns}]}]}
`

const describeService = `apiVersion: v1
kind: Service
metadata: {name: web, labels: {app: web}}
spec:
  selector: {app: web}
  sessionAffinity: ClientIP
  externalIPs: [1.2.3.4]
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: metrics, port: 9090, targetPort: metrics, protocol: TCP}
`

const describeSlice = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}, {name: metrics, port: 9100, protocol: TCP}]
endpoints:
- {addresses: [10.0.0.1]}
- {addresses: [10.0.0.2], conditions: {ready: false}}
- {addresses: [10.0.0.3], conditions: {ready: true}}
- {addresses: [10.0.0.4]}
- {addresses: [10.0.0.5]}
`

const describeDaemonSet = `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, labels: {app: agent}, annotations: {team: infra}}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {disk: ssd}
      containers: [{name: agent, image: busybox, resources: {limits: {cpu: 100m}}}]
`

const describeStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, labels: {app: db}}
spec:
  serviceName: db
  replicas: 0
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 1}}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres, volumeMounts: [{name: data, mountPath: /data}]}]}
  volumeClaimTemplates:
  - metadata: {name: data, labels: {tier: db}}
    spec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 1536Mi}}}
`

const describeClaim = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, labels: {app: db}}
spec: {accessModes: [ReadWriteOnce], volumeMode: Filesystem, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: user-b}
spec: {containers: [{name: c, image: busybox}], volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: user-a}
spec: {containers: [{name: c, image: busybox}], volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}
`

const describeQuota = `apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec: {hard: {pods: "10", requests.cpu: "2", limits.memory: 4Gi}, scopes: [NotTerminating, NotBestEffort]}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: best-effort}
spec: {hard: {pods: "5"}, scopes: [BestEffort]}
---
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits:
  - {type: Container, max: {cpu: "2"}, min: {cpu: 100m}, default: {cpu: 500m}, defaultRequest: {cpu: 200m}, maxLimitRequestRatio: {cpu: "4"}}
  - {type: PersistentVolumeClaim, max: {storage: 10Gi}}
`

const describeNode = `apiVersion: v1
kind: Node
metadata:
  name: NODE
  labels: {node-role.kubernetes.io/worker: "", kubernetes.io/role: edge, disk: ssd}
spec:
  podCIDR: 10.244.1.0/24
  podCIDRs: [10.244.1.0/24]
  providerID: kind://docker/worker
  taints: [{key: dedicated, value: db, effect: NoSchedule}, {key: gpu, effect: NoExecute}]
`

const describeNodeStatus = `{"status":{
 "capacity":{"cpu":"4","memory":"8Gi","pods":"110","ephemeral-storage":"100Gi","hugepages-2Mi":"0","example.com/gpu":"2"},
 "allocatable":{"cpu":"3800m","memory":"7Gi","pods":"110","ephemeral-storage":"90Gi","hugepages-2Mi":"0","example.com/gpu":"2"},
 "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status","lastHeartbeatTime":"2026-01-02T03:04:05Z","lastTransitionTime":"2026-01-01T00:00:00Z"}],
 "addresses":[{"type":"InternalIP","address":"172.18.0.3"},{"type":"Hostname","address":"worker"}],
 "nodeInfo":{"machineID":"m1","systemUUID":"u1","bootID":"b1","kernelVersion":"6.1.0","osImage":"Debian","containerRuntimeVersion":"containerd://2.0","kubeletVersion":"v1.37.2","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"}}}`

const describeNodePods = `apiVersion: v1
kind: Pod
metadata: {name: on-node}
spec:
  nodeName: NODE
  initContainers: [{name: init, image: busybox, resources: {requests: {cpu: "1"}}}]
  containers:
  - {name: a, image: nginx, resources: {requests: {cpu: 250m, memory: 64Mi}, limits: {cpu: 500m, memory: 128Mi, example.com/gpu: "1"}}}
  - {name: b, image: nginx, resources: {requests: {cpu: 100m}}}
---
apiVersion: v1
kind: Pod
metadata: {name: also-on-node}
spec: {nodeName: NODE, containers: [{name: c, image: busybox}]}
`

// ageColumn matches the describe Events' Age column and the creation
// times, which differ between two runs a second apart.
var describeAges = regexp.MustCompile(`(?m)(Creation Timestamp:\s+|Start Time:\s+).*$|\d+s\b|<invalid>`)

// TestDescribeMatchesKubectl: describe of a pod, the workloads, a service,
// a claim and a namespace (kubectl's describers of each) and of a custom
// resource (the generic describer), with and without events, prints what
// kubectl prints.
func TestDescribeMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	p.kubectl(t, describePod, "apply", "-n", ns, "-f", "-")
	p.kubectl(t, describeCRD, "apply", "-f", "-")
	p.kubectl(t, "", "wait", "--for=condition=Established", "crd/widgets.describe.example.com")
	p.kubectl(t, describeWidget, "apply", "-n", ns, "-f", "-")
	// A status as a kubelet would write it.
	p.kubectl(t, "", "patch", "pod", "rich", "-n", ns, "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Running","hostIP":"10.1.0.5","podIP":"10.2.0.7","podIPs":[{"ip":"10.2.0.7"}],"startTime":"2026-01-02T03:04:05Z",
		"conditions":[{"type":"Ready","status":"True"},{"type":"PodScheduled","status":"True"}],
		"containerStatuses":[
		 {"name":"app","image":"nginx:1.27","imageID":"docker.io/nginx@sha256:1","containerID":"containerd://abc","ready":true,"restartCount":2,"started":true,
		  "state":{"running":{"startedAt":"2026-01-02T03:05:00Z"}},
		  "lastState":{"terminated":{"exitCode":137,"signal":9,"reason":"OOMKilled","message":"out of memory","startedAt":"2026-01-02T03:04:10Z","finishedAt":"2026-01-02T03:04:59Z"}}},
		 {"name":"sidecar","image":"busybox","imageID":"","ready":false,"restartCount":0,"started":false,"state":{"waiting":{"reason":"ImagePullBackOff"}}}]}}`)
	p.kubectl(t, "", "create", "configmap", "settings", "-n", ns, "--from-literal=level=3")
	// Events about the widget: a repeated one and one with a field path,
	// times fixed far enough back that ages agree between the two runs.
	uid := strings.TrimSpace(string(p.kubectl(t, "", "get", "widget", "w1", "-n", ns, "-o", "jsonpath={.metadata.uid}").stdout))
	for i, e := range []string{
		`{"reason":"Scaled","message":"scaled to 3 ","type":"Normal","count":4,"firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-02-01T00:00:00Z","source":{"component":"widget-controller"}}`,
		`{"reason":"Failed","message":"image pull","type":"Warning","firstTimestamp":"2026-01-15T00:00:00Z","lastTimestamp":"2026-01-15T00:00:00Z","reportingComponent":"kubelet","involvedObject":{"fieldPath":"spec.containers{app}"}}`,
	} {
		ev := fmt.Sprintf(`{"apiVersion":"v1","kind":"Event","metadata":{"name":"w1.%d"},"involvedObject":{"apiVersion":"describe.example.com/v1","kind":"Widget","name":"w1","namespace":%q,"uid":%q}}`, i, ns, uid)
		p.kubectl(t, ev, "create", "-n", ns, "-f", "-")
		p.kubectl(t, "", "patch", "event", fmt.Sprintf("w1.%d", i), "-n", ns, "--type=merge", "-p", e)
	}
	// Workloads and a service with an EndpointSlice, for kubectl's
	// dedicated describers.
	for _, m := range []string{describeDeployment, describeReplicaSet, describeRC, describeService, describeSlice,
		describeDaemonSet, describeStatefulSet, describeClaim, describeQuota} {
		p.kubectl(t, m, "apply", "-n", ns, "-f", "-")
	}
	// A quota's status as the quota controller would write it.
	p.kubectl(t, "", "patch", "resourcequota", "compute", "-n", ns, "--subresource=status", "--type=merge", "-p",
		`{"status":{"hard":{"pods":"10","requests.cpu":"2","limits.memory":"4Gi"},"used":{"pods":"3","requests.cpu":"500m"}}}`)
	emptyNS := vbNamespace(t, vbClient(t, env))
	// A node (a name of this run's own) with a status as a kubelet would
	// report it, pods bound to it, and, for a second node, its Lease.
	node, leased := ns+"-node", ns+"-leased"
	for _, n := range []string{node, leased} {
		p.kubectl(t, strings.ReplaceAll(describeNode, "NODE", n), "apply", "-f", "-")
		p.kubectl(t, "", "patch", "node", n, "--subresource=status", "--type=merge", "-p", describeNodeStatus)
	}
	p.kubectl(t, strings.ReplaceAll(describeNodePods, "NODE", node), "apply", "-n", ns, "-f", "-")
	p.kubectl(t, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"`+leased+`"},"spec":{"holderIdentity":"`+leased+`","renewTime":"2026-01-02T03:04:05.000000Z"}}`,
		"apply", "-n", "kube-node-lease", "-f", "-")
	norm := func(b []byte) []byte { return describeAges.ReplaceAll(b, []byte("AGE")) }
	for _, args := range [][]string{
		{"describe", "pod", "rich", "-n", ns},
		{"describe", "pods", "ri", "-n", ns, "--show-events=false"},
		{"describe", "widget", "w1", "-n", ns},
		{"describe", "widgets", "-n", ns, "-l", "team=a", "--show-events=false"},
		{"describe", "pod/rich", "widget/w1", "-n", ns, "--show-events=false"},
		{"describe", "deployment", "web", "-n", ns},
		{"describe", "rs", "frontend", "-n", ns},
		{"describe", "rc", "legacy", "-n", ns},
		{"describe", "service", "web", "-n", ns},
		{"describe", "services", "-n", ns, "--show-events=false"},
		{"describe", "daemonset", "agent", "-n", ns},
		{"describe", "statefulset", "db", "-n", ns},
		{"describe", "pvc", "data", "-n", ns},
		{"describe", "namespace", ns},
		{"describe", "namespace", emptyNS},
		{"describe", "node", node},
		{"describe", "node", leased, "--show-events=false"},
	} {
		p.check(t, same{args: args, norm: norm})
	}
	for _, args := range [][]string{
		{"describe", "pod", "nothing", "-n", ns},
		{"describe", "pods", "-n", ns, "-l", "app=none"},
	} {
		p.check(t, same{args: args, stderr: true})
	}
}
