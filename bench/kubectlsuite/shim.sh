# kdyn's port of what Kubernetes' kubectl command-line tests (test/cmd/*.sh,
# hack/lib/test.sh, test/cmd/legacy-script.sh) need from hack/lib/init.sh
# and from runTests, so that one test function runs by itself. The test
# scripts themselves are read from the k8s.io/kubernetes module; nothing of
# them is copied here. Sourced by the script the Go harness writes.

kube::log::status() {
  local timestamp
  timestamp=$(date +"[%m%d %H:%M:%S]")
  echo "+++ ${timestamp} $1"
  shift
  for message; do
    echo "    ${message}"
  done
}
kube::log::info() { for message; do echo "${message}"; done; }
kube::log::error() {
  local timestamp
  timestamp=$(date +"[%m%d %H:%M:%S]")
  echo "!!! ${timestamp} ${1-}" >&2
  shift
  for message; do
    echo "    ${message}" >&2
  done
}
kube::log::usage() { echo >&2; for message; do echo "${message}" >&2; done; echo >&2; }
kube::log::error_exit() {
  local message="${1:-}"
  local code="${2:-1}"
  kube::log::error "Error: ${message}"
  exit "${code}"
}

kube::util::wait_for_url() {
  local url=$1 prefix=${2:-} wait=${3:-1} times=${4:-30} maxtime=${5:-1}
  local i out
  for i in $(seq 1 "${times}"); do
    if out=$(curl --max-time "${maxtime}" -gkfs "${@:6}" "${url}" 2>/dev/null); then
      kube::log::status "On try ${i}, ${prefix}: ${out}"
      return 0
    fi
    sleep "${wait}"
  done
  kube::log::error "Timed out waiting for ${prefix} to answer at ${url}; tried ${times} waiting ${wait} between each"
  return 1
}
kube::util::wait_for_url_with_bearer_token() {
  kube::util::wait_for_url "$1" "${3:-}" "${4:-1}" "${5:-30}" "${6:-1}" -H "Authorization: Bearer $2"
}
kube::util::trap_add() {
  local cmd=$1 sig var
  shift
  for sig in "$@"; do
    var="KDYN_TRAP_${sig}"
    printf -v "${var}" '%s' "${cmd}${!var:+;${!var}}"
    # shellcheck disable=SC2064
    trap "${!var}" "${sig}"
  done
}
kube::util::ensure-temp-dir() { :; } # KUBE_TEMP is set by the harness
kube::util::ensure-gnu-sed() { SED=sed; export SED; }
kube::util::test_openssl_installed() { OPENSSL_BIN=$(command -v openssl); export OPENSSL_BIN; }
kube::util::test_client_certificate_authentication_enabled() {
  kube::util::test_openssl_installed
  if ! "${OPENSSL_BIN}" s_client -connect "127.0.0.1:${SECURE_API_PORT}" </dev/null 2>/dev/null |
    grep -A3 'Acceptable client certificate CA names' | grep -q 'CN *= *127.0.0.1'; then
    echo "the API server does not take client certificates of the suite's CA (CN=127.0.0.1)"
    exit 1
  fi
}
kube::etcd::start() { :; }
kube::etcd::cleanup() { :; }

# runTests' prelude: the flags and the field names the functions use.
kdyn_suite_prelude() {
  CONTEXT="test" # setup's context, which the harness's kubeconfig holds
  kube_flags=( '-s' "https://127.0.0.1:${SECURE_API_PORT}" '--insecure-skip-tls-verify' )
  kube_flags_without_token=( "${kube_flags[@]}" )
  kube_flags_with_token=( "${kube_flags_without_token[@]}" '--token=admin-token' )
  kube_flags+=('--match-server-version')
  kube_flags_with_token+=('--match-server-version')
  export id_field=".metadata.name"
  export labels_field=".metadata.labels"
  export annotations_field=".metadata.annotations"
  export service_selector_field=".spec.selector"
  export rc_replicas_field=".spec.replicas"
  export rc_status_replicas_field=".status.replicas"
  export rc_container_image_field=".spec.template.spec.containers"
  export rs_replicas_field=".spec.replicas"
  export port_field="(index .spec.ports 0).port"
  export port_name="(index .spec.ports 0).name"
  export second_port_field="(index .spec.ports 1).port"
  export second_port_name="(index .spec.ports 1).name"
  export image_field="(index .spec.containers 0).image"
  export pod_container_name_field="(index .spec.containers 0).name"
  export container_name_field="(index .spec.template.spec.containers 0).name"
  export hpa_min_field=".spec.minReplicas"
  export hpa_max_field=".spec.maxReplicas"
  export hpa_cpu_field="(index .spec.metrics 0).resource.target.averageUtilization"
  export template_labels=".spec.template.metadata.labels.name"
  export statefulset_replicas_field=".spec.replicas"
  export statefulset_observed_generation=".status.observedGeneration"
  export job_parallelism_field=".spec.parallelism"
  export deployment_replicas=".spec.replicas"
  export secret_data=".data"
  export secret_type=".type"
  export change_cause_annotation='.*kubernetes.io/change-cause.*'
  export pdb_min_available=".spec.minAvailable"
  export pdb_max_unavailable=".spec.maxUnavailable"
  export generation_field=".metadata.generation"
  export container_len="(len .spec.template.spec.containers)"
  export image_field0="(index .spec.template.spec.containers 0).image"
  export image_field1="(index .spec.template.spec.containers 1).image"
  export SUPPORTED_RESOURCES=("*")
}
