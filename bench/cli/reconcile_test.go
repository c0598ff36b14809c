package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// reconcileManifests are the files of TestAuthReconcileMatchesKubectl,
// TOOL standing for the tool's name: each tool reconciles objects (and a
// namespace, created by the first run) of its own.
var reconcileManifests = map[string]string{
	// Test-cmd's fixture: a ClusterRole, a Pod (skipped), a
	// ClusterRoleBinding, a RoleBinding and a Role, in a v1 List.
	"base": `apiVersion: v1
kind: List
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata:
    labels:
      test-cmd: auth
    name: rec-cr-TOOL
  rules:
  - apiGroups: [""]
    resources: [pods]
    verbs: [create, delete, get, list]
- apiVersion: v1
  kind: Pod
  metadata:
    name: skipped
  spec:
    containers:
    - name: c
      image: busybox
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata:
    labels:
      test-cmd: auth
    name: rec-crb-TOOL
  roleRef:
    apiGroup: rbac.authorization.k8s.io
    kind: ClusterRole
    name: rec-cr-TOOL
  subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: Group
    name: system:masters
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata:
    labels:
      test-cmd: auth
    name: rec-rb
    namespace: rec-ns-TOOL
  roleRef:
    apiGroup: rbac.authorization.k8s.io
    kind: ClusterRole
    name: rec-cr-TOOL
  subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: Group
    name: system:masters
  - kind: ServiceAccount
    name: robot
    namespace: rec-ns-TOOL
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata:
    labels:
      test-cmd: auth
    name: rec-r
    namespace: rec-ns-TOOL
  rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get, list, watch]
`,
	// More rules, a new label and annotation, other subjects.
	"more": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: rec-cr-TOOL
  labels:
    extra: "yes"
  annotations:
    note: more
rules:
- apiGroups: [""]
  resources: [pods, pods/log]
  verbs: [get, watch]
- apiGroups: [apps]
  resources: [deployments]
  resourceNames: [web]
  verbs: [get]
- nonResourceURLs: [/healthz, /metrics]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rec-rb
  namespace: rec-ns-TOOL
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: rec-cr-TOOL
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: ann
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: rec-r
  namespace: rec-ns-TOOL
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: [get]
`,
	// The binding's roleRef changes: it is deleted and created again.
	"roleref": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: rec-crb-TOOL
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: bob
`,
	// An aggregated ClusterRole.
	"aggregated": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: rec-agg-TOOL
aggregationRule:
  clusterRoleSelectors:
  - matchLabels:
      rec-agg: x-TOOL
rules: []
`,
	"aggregated2": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: rec-agg-TOOL
aggregationRule:
  clusterRoleSelectors:
  - matchExpressions:
    - key: rec-agg-2
      operator: Exists
`,
	// A stored role that opted out of reconciliation.
	"protected": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: rec-prot-TOOL
  annotations:
    rbac.authorization.kubernetes.io/autoupdate: "false"
rules:
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
`,
	"protected2": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: rec-prot-TOOL
rules:
- apiGroups: [""]
  resources: [secrets]
  verbs: [list]
`,
	"v1beta1": `apiVersion: rbac.authorization.k8s.io/v1beta1
kind: ClusterRole
metadata:
  name: rec-old-TOOL
rules: []
`,
	"nonamespace": `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: rec-nons
rules: []
`,
	"otherns": `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: rec-r
  namespace: elsewhere
rules: []
`,
}

// reconcileServerFields are what a real write makes differ.
var reconcileServerFields = regexp.MustCompile(`(?m)^(\s*"?(uid|resourceVersion|creationTimestamp|time)"?:\s*).*$`)

// TestAuthReconcileMatchesKubectl: auth reconcile creates, updates and
// recreates RBAC objects as kubectl's does and prints the same lines on
// standard output and standard error, in a dry run and for real, with -o,
// --remove-extra-permissions and --remove-extra-subjects, and fails in its
// words.
func TestAuthReconcileMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	dir := t.TempDir()
	for name, content := range reconcileManifests {
		for _, tool := range []string{"kubectl", "kdyn"} {
			writeFile(t, dir, name+"-"+tool+".yaml", strings.ReplaceAll(content, "TOOL", tool))
		}
	}
	norm := func(b []byte) []byte {
		return toolNames(reconcileServerFields.ReplaceAll(b, []byte("${1}X")))
	}
	for _, s := range [][]string{
		{"auth", "reconcile", "-f", "DIR/base-TOOL.yaml", "--dry-run=client"},
		{"auth", "reconcile", "-f", "DIR/base-TOOL.yaml", "--dry-run=client", "-o", "yaml"},
		{"auth", "reconcile", "-f", "DIR/base-TOOL.yaml", "--dry-run=client", "--template={{ .metadata.name }}:"},
		{"get", "clusterroles,clusterrolebindings", "-l", "test-cmd=auth", "-o", "name"},
		{"auth", "reconcile", "-f", "DIR/base-TOOL.yaml"},
		{"get", "ns", "rec-ns-TOOL", "-o", "name"},
		{"auth", "reconcile", "-f", "DIR/base-TOOL.yaml", "-o", "json"},
		{"auth", "reconcile", "-f", "DIR/more-TOOL.yaml", "--dry-run=client", "-o", "yaml"},
		{"auth", "reconcile", "-f", "DIR/more-TOOL.yaml", "--remove-extra-subjects", "--dry-run=client", "-o", "name"},
		{"auth", "reconcile", "-f", "DIR/more-TOOL.yaml", "-o", "yaml"},
		{"auth", "reconcile", "-f", "DIR/base-TOOL.yaml", "--remove-extra-permissions", "--remove-extra-subjects"},
		{"get", "clusterrole", "rec-cr-TOOL", "-o", "jsonpath={.rules}"},
		{"get", "rolebinding", "rec-rb", "-n", "rec-ns-TOOL", "-o", "jsonpath={.subjects}"},
		{"auth", "reconcile", "-f", "DIR/roleref-TOOL.yaml", "--dry-run=client"},
		{"auth", "reconcile", "-f", "DIR/roleref-TOOL.yaml", "-o", "yaml"},
		{"auth", "reconcile", "-f", "DIR/aggregated-TOOL.yaml"},
		{"auth", "reconcile", "-f", "DIR/aggregated2-TOOL.yaml", "-o", "jsonpath={.aggregationRule}"},
		{"auth", "reconcile", "-f", "DIR/aggregated-TOOL.yaml", "--remove-extra-permissions", "-o", "jsonpath={.aggregationRule}"},
		{"auth", "reconcile", "-f", "DIR/protected-TOOL.yaml"},
		{"auth", "reconcile", "-f", "DIR/protected2-TOOL.yaml", "-o", "json"},
		{"get", "clusterrole", "rec-prot-TOOL", "-o", "jsonpath={.rules}"},
		{"auth", "reconcile", "-f", "DIR/v1beta1-TOOL.yaml"},
		{"auth", "reconcile", "-f", "DIR/nonamespace-TOOL.yaml", "--dry-run=client"},
		{"auth", "reconcile", "-f", "DIR/nonamespace-TOOL.yaml"},
		{"auth", "reconcile", "-f", "DIR/otherns-TOOL.yaml", "-n", "rec-ns-TOOL"},
		{"auth", "reconcile", "-f", "DIR/base-TOOL.yaml", "--dry-run=server"},
		{"auth", "reconcile"},
		{"auth", "reconcile", "-f", "DIR/base-TOOL.yaml", "extra"},
	} {
		p.check(t, same{args: toolArgs(s, "kubectl", dir), kdynArgs: toolArgs(s, "kdyn", dir), norm: norm, stderr: true})
	}
}
