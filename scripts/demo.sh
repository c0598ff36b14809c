#!/usr/bin/env bash
# make demo: start a local control plane (real kube-apiserver + etcd), run a
# short narrated tour of kdyn against it, and stop it.
set -euo pipefail
cd "$(dirname "$0")/.."

KDYN=${KDYN:-./bin/kdyn}
work=$(mktemp -d)
cleanup() {
	if [[ -n "${cluster_pid:-}" ]]; then
		kill -TERM "$cluster_pid" 2>/dev/null || true
		wait "$cluster_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "### Starting a local control plane (kube-apiserver v1.37.2 + etcd)…"
go build -o "$work/cluster" ./integration/cluster
"$work/cluster" -dir "$work/cluster-data" >"$work/cluster.out" 2>"$work/cluster.err" &
cluster_pid=$!
for _ in $(seq 1 300); do
	if grep -q '^export KUBECONFIG=' "$work/cluster.out" 2>/dev/null; then break; fi
	if ! kill -0 "$cluster_pid" 2>/dev/null; then cat "$work/cluster.err" >&2; exit 1; fi
	sleep 0.2
done
eval "$(grep '^export KUBECONFIG=' "$work/cluster.out")"
export KDYN_CACHE="$work/cache"

step() {
	echo
	echo "### $1"
	shift
	echo "\$ $*"
	"$@"
}
k() { "$KDYN" --cache-dir "$KDYN_CACHE" "$@"; }

step "Client and server versions" k version
step "What the server serves (aggregated discovery: 2 requests, then cached on disk)" k api-resources --api-group=apps
step "Apply a CRD and an object of it from the same file (server-side apply)" k apply -f scripts/demo/widgets.yaml
step "The server's own table, with the CRD's printer columns; 'all' includes the CRD's category" k get all,configmaps -l '!kubernetes.io/service-account.name'
step "One object per line, for scripts" k get widgets -o jsonl
step "A gjson path over each object" k get widgets -o gjson=spec.color
step "kubectl's JSONPath" k get configmaps settings -o jsonpath='{.data.greeting}{"\n"}'
step "A merge patch, chosen automatically for a custom resource" k patch widget sprocket -p '{"spec":{"size":5}}'
step "Copy-pasteable YAML without server noise" k get widget sprocket -o yaml --neat
echo
echo "### What would change: a server-side dry run compared with the live object (exit 1 = changes)"
echo "\$ kdyn diff -f scripts/demo/widgets-changed.yaml"
k diff -f scripts/demo/widgets-changed.yaml || true
step "Server-side apply notices that 'kdyn patch' owns those fields now" bash -c "'$KDYN' --cache-dir '$KDYN_CACHE' apply -f scripts/demo/widgets-changed.yaml || true"
echo
echo "### Watching widgets as JSON events while they change (the watch resumes on disconnects)"
echo "\$ kdyn get widgets -w --watch-only -o jsonl --output-watch-events --neat"
"$KDYN" --cache-dir "$KDYN_CACHE" get widgets -w --watch-only -o jsonl --output-watch-events --neat >"$work/watch.out" 2>&1 &
watch_pid=$!
sleep 1
k patch widget sprocket -p '{"spec":{"color":"blue"}}' >/dev/null
k apply --force-conflicts -f scripts/demo/widgets-changed.yaml >/dev/null
sleep 1
kill "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || true
cat "$work/watch.out"
owner_uid=$(k get widget sprocket -o jsonpath='{.metadata.uid}')
cat >"$work/owned.yaml" <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: sprocket-config
  ownerReferences:
  - {apiVersion: demo.kdyn.io/v1, kind: Widget, name: sprocket, uid: $owner_uid}
data: {owner: sprocket}
YAML
k apply -f "$work/owned.yaml" >/dev/null
step "Everything a widget owns, found across every resource type" k tree widget sprocket
step "Delete, waiting until it is gone" k delete configmap settings
echo
echo "### Done. The control plane is stopped and its data removed."
