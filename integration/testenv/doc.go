// Package testenv runs a real Kubernetes control plane for kdyn's
// integration tests: one child process (integration/controlplane) with an
// embedded etcd and kube-apiserver v1.37.2, listening on 127.0.0.1 only;
// with Options.Controllers and Options.Scheduler, kube-controller-manager
// and kube-scheduler of the same release run beside it (more child
// processes of the same binary), and with Options.Nodes KWOK's controller
// (sigs.k8s.io/kwok v0.8.0, the same binary again) simulates that many
// Ready nodes, runs the pods bound to them and serves the kubelet API the
// apiserver proxies logs, exec, attach and port-forward to. There are no
// nodes unless Options.Nodes asks for them or a test creates them.
//
// # What Start sets up
//
// Each Env has its own directory (a temporary one by default) holding:
//
//   - a serving CA and a serving certificate for 127.0.0.1, ::1 and
//     localhost, so clients verify TLS with CAData;
//   - a client CA and a client certificate for CertAdminUserName in group
//     system:masters;
//   - a token file with AdminToken (AdminUserName, group system:masters)
//     and NobodyToken (NobodyUserName, no groups beyond
//     system:authenticated);
//   - the service-account signing key pair;
//   - a kubelet serving certificate for 127.0.0.1 (KWOK's, from the
//     serving CA, which the apiserver verifies) and the apiserver's kubelet
//     client certificate (from the client CA);
//   - kubeconfig files (KubeconfigPath) with the contexts admin (current),
//     cert-admin and nobody of the cluster "kdyn-test";
//   - the etcd data and controlplane.log with the process output.
//
// The apiserver authorizes with RBAC and runs the default admission
// plugins except ServiceAccount (no controller creates the "default"
// service accounts it would require for pods). Namespaces, ConfigMaps,
// pods and other objects can be created; without a controller manager
// (the default), deleted namespaces stay Terminating, no controller acts
// on workloads, and pods stay Pending. With Options.Controllers they are
// deleted and Deployments get ReplicaSets and Pods; with Options.Scheduler
// pods are bound to ready nodes. On nodes a test registers by hand they stay
// Pending and, when deleted, Terminating (no kubelet confirms it); on
// Options.Nodes' nodes they run, and go when deleted. The watch cache is on, as in a real cluster. Free loopback ports are chosen per Env, so test packages can
// run in parallel.
//
// # The binary
//
// Binary builds integration/controlplane once per source version and Go
// release (go env GOVERSION of the go command in PATH) into a user cache
// directory ($KDYN_CONTROLPLANE_CACHE overrides it, $KDYN_CONTROLPLANE_BIN
// names a prebuilt binary). The first build takes several minutes; later
// ones reuse the cached binary.
// "go run ./integration/cluster -build-only" prebuilds it, and
// "go run ./integration/cluster" runs a control plane by hand.
//
// # Use in tests
//
// One control plane per test package:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }
//
//	func TestSomething(t *testing.T) {
//		env := testenv.Shared(t)
//		cfg := env.RESTConfig(testenv.Admin)
//		...
//	}
//
// A test that needs its own control plane (other flags, Restart, Compact,
// Stop) calls New, which stops it at the end of the test. Under
// "go test -short" integration tests are skipped; otherwise a control plane
// that cannot be built or started fails the test. The control plane is
// stopped when the tests end, and is killed by the kernel if the test
// binary dies (on Linux).
//
// # Clocks
//
// Tests that compare times taken in several processes, or check a renew
// deadline, take them with MonoNow (CLOCK_MONOTONIC: shared by all
// processes, never stepped, the clock Go's deadlines count with), not with
// the wall clock, which jumps when a suspended virtual machine resumes and
// its time is set right. OnLeaseWrites tells a test when each renewTime a
// client wrote into a Lease was sent, so that the renewals the server
// recorded can be dated on such a clock.
package testenv
