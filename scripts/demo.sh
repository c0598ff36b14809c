#!/usr/bin/env bash
# make demo: start a local control plane (real kube-apiserver + etcd), run a
# short narrated tour of kdyn against it, and stop it.
#
# The tour applies, patches and deletes objects, so it must never reach any
# cluster but the one it started. kdyn runs with --kubeconfig set to the
# kubeconfig file that the demo's own control plane writes into the demo's
# temporary directory (and KUBECONFIG set to the same file, in-cluster
# variables removed), and the demo stops before running kdyn at all when
# that file is not there: when the control plane exits, or prints no
# `export KUBECONFIG=` line within KDYN_DEMO_START_TIMEOUT seconds, or
# names a file outside the demo's directory. scripts/demo_test.go runs
# those paths with a fake control plane and a fake kdyn.
#
# Environment:
#   KDYN                     the kdyn binary (default ./bin/kdyn)
#   KDYN_DEMO_START_TIMEOUT  seconds to wait for the control plane to be
#                            ready, while its process runs (default 300;
#                            the control plane itself gives up after 90 s
#                            of waiting for /readyz)
#   KDYN_DEMO_CLUSTER        a command to use instead of building
#                            ./integration/cluster (for tests)
set -euo pipefail
cd "$(dirname "$0")/.."

KDYN=${KDYN:-./bin/kdyn}
start_timeout=${KDYN_DEMO_START_TIMEOUT:-300}
if ! [[ "$start_timeout" =~ ^[0-9]+$ ]] || [ "$start_timeout" -eq 0 ]; then
	echo "demo: KDYN_DEMO_START_TIMEOUT must be a positive number of seconds, got '$start_timeout'" >&2
	exit 2
fi
# Nothing may fall back to another cluster: no inherited kubeconfig list,
# no in-cluster configuration.
unset KUBECONFIG KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT

work=$(mktemp -d)
cleanup() {
	if [[ -n "${cluster_pid:-}" ]]; then
		kill -TERM "$cluster_pid" 2>/dev/null || true
		wait "$cluster_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# fail MESSAGE: say why the demo stops, with the end of the control plane's
# output, and exit 1 (cleanup stops the control plane).
fail() {
	echo "demo: $1" >&2
	if [[ -s "$work/cluster.err" ]]; then
		echo "demo: the control plane's last output:" >&2
		tail -n 20 "$work/cluster.err" | sed 's/^/    /' >&2
	fi
	echo "demo: stopped before running kdyn; no cluster was touched." >&2
	exit 1
}

cluster=${KDYN_DEMO_CLUSTER:-}
if [[ -z "$cluster" ]]; then
	go build -o "$work/cluster" ./integration/cluster
	cluster="$work/cluster"
fi
echo "### Building (or finding in the cache) the local control plane…"
"$cluster" -build-only >/dev/null || fail "could not build the control plane"

echo "### Starting a local control plane (kube-apiserver v1.37.2 + etcd)…"
SECONDS=0
"$cluster" -dir "$work/cluster-data" >"$work/cluster.out" 2>"$work/cluster.err" &
cluster_pid=$!
# Wait for the "export KUBECONFIG=<file>" line while the process runs, up to
# the timeout; never eval it.
line=
waited=0
while :; do
	line=$(grep -m1 '^export KUBECONFIG=' "$work/cluster.out" 2>/dev/null || true)
	if [[ -n "$line" ]]; then break; fi
	if ! kill -0 "$cluster_pid" 2>/dev/null; then
		wait "$cluster_pid" 2>/dev/null && status=0 || status=$?
		cluster_pid=
		fail "the control plane exited (status $status) before it printed its KUBECONFIG line"
	fi
	if (( SECONDS >= start_timeout )); then
		fail "the control plane printed no KUBECONFIG line within ${start_timeout}s (KDYN_DEMO_START_TIMEOUT)"
	fi
	sleep 0.2
	if (( SECONDS / 30 > waited )); then
		waited=$(( SECONDS / 30 ))
		echo "    …still starting after ${SECONDS}s"
	fi
done
kubeconfig=${line#export KUBECONFIG=}
case "$kubeconfig" in
"") fail "the control plane printed an empty KUBECONFIG line" ;;
"$work/cluster-data/"*) ;;
*) fail "the control plane's KUBECONFIG ($kubeconfig) is not in the demo's directory $work/cluster-data" ;;
esac
if [[ ! -f "$kubeconfig" || ! -s "$kubeconfig" ]]; then
	fail "the control plane's kubeconfig $kubeconfig is missing or empty"
fi
export KUBECONFIG="$kubeconfig"
export KDYN_CACHE="$work/cache"

step() {
	echo
	echo "### $1"
	shift
	local shown=("$@")
	[[ "${shown[0]}" == k ]] && shown[0]=kdyn
	echo "\$ ${shown[*]}"
	"$@"
}
# Every kdyn below runs through k (or names the same flags): the demo's
# kubeconfig file only, which kdyn requires to exist.
kd=("$KDYN" --kubeconfig "$KUBECONFIG" --cache-dir "$KDYN_CACHE")
k() { "${kd[@]}" "$@"; }

step "Client and server versions" k version
step "What the server serves (aggregated discovery: 2 requests, then cached on disk)" k api-resources --api-group=apps
step "Apply a CRD and an object of it from the same file (server-side apply)" k apply --server-side -f scripts/demo/widgets.yaml
step "The server's own table, with the CRD's printer columns; 'all' includes the CRD's category" k get all,configmaps -l '!kubernetes.io/service-account.name'
step "One object per line, for scripts" k get widgets -o jsonl
step "A gjson path over each object" k get widgets -o gjson=spec.color
step "kubectl's JSONPath" k get configmaps settings -o jsonpath='{.data.greeting}{"\n"}'
step "A merge patch, chosen automatically for a custom resource" k patch widget sprocket -p '{"spec":{"size":5}}'
step "Copy-pasteable YAML without server noise" k get widget sprocket -o yaml --neat
echo
echo "### What would change: a server-side dry run compared with the live object (exit 1 = changes)"
echo "\$ kdyn diff --server-side --force-conflicts -f scripts/demo/widgets-changed.yaml"
k diff --server-side --force-conflicts -f scripts/demo/widgets-changed.yaml || true
echo
echo "### Server-side apply notices that 'kdyn patch' owns those fields now"
echo "\$ kdyn apply --server-side -f scripts/demo/widgets-changed.yaml"
k apply --server-side -f scripts/demo/widgets-changed.yaml || true
echo
echo "### Watching widgets as JSON events while they change (the watch resumes on disconnects)"
echo "\$ kdyn get widgets -w --watch-only -o jsonl --output-watch-events --neat"
"${kd[@]}" get widgets -w --watch-only -o jsonl --output-watch-events --neat >"$work/watch.out" 2>&1 &
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
