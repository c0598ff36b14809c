package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/integration/testenv"
)

var (
	geSecretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	geSAGVR     = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
)

// geFiles writes the generators' inputs into a directory: a text file, a
// binary one, a directory of two, an env file, a Docker config and env's
// client key pair (for a TLS secret).
func geFiles(t *testing.T, env *testenv.Env) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"settings.ini": "[app]\nlevel = 3\n",
		"logo.bin":     "\x89PNG\x00\xff",
		"conf/a.txt":   "alpha\n",
		"conf/b.txt":   "beta",
		"app.env":      "LEVEL=3\n# comment\nNAME=web app\n",
		"docker.json":  `{"auths":{"registry.example.com":{"auth":"dTpw"}}}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The test control plane's client certificate is a key pair to store.
	for name, b := range map[string][]byte{"tls.crt": env.ClientCertData(), "tls.key": env.ClientKeyData()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCreateGenerators creates every kind of generated object for real,
// checks what the server stored, and that --dry-run=client -o yaml of the
// same command is a manifest apply takes.
func TestCreateGenerators(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	dir := geFiles(t, env)
	in := func(name string) string { return filepath.Join(dir, name) }
	ns := "ge-" + ocSuffix()

	r := kdyn(t, env, "create", "namespace", ns).must(t)
	ocStdout(t, r, "namespace/"+ns+" created\n")
	ocGet(t, c, ocNamespaceGVR, "", ns)

	tests := []struct {
		args []string
		gvr  schema.GroupVersionResource
		name string
		// check looks at the stored object.
		check func(t *testing.T, obj *unstructured.Unstructured)
	}{
		{
			args: []string{"configmap", "files", "--from-file=" + in("settings.ini"), "--from-file=" + in("conf"), "--from-file=logo=" + in("logo.bin"), "--from-literal=eq=a=b"},
			gvr:  ocConfigMapGVR, name: "files",
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
				want := map[string]string{"settings.ini": "[app]\nlevel = 3\n", "a.txt": "alpha\n", "b.txt": "beta", "eq": "a=b"}
				if d := cmp.Diff(want, data); d != "" {
					t.Errorf("data (-want +got):\n%s", d)
				}
				if bin, _, _ := unstructured.NestedString(obj.Object, "binaryData", "logo"); bin != "iVBORwD/" {
					t.Errorf("binaryData.logo = %q", bin)
				}
			},
		},
		{
			args: []string{"cm", "env", "--from-env-file=" + in("app.env"), "--append-hash"},
			gvr:  ocConfigMapGVR, name: "env-2mkhmb27bm",
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
				if d := cmp.Diff(map[string]string{"LEVEL": "3", "NAME": "web app"}, data); d != "" {
					t.Errorf("data (-want +got):\n%s", d)
				}
			},
		},
		{
			args: []string{"secret", "generic", "db", "--from-literal=password=s3cr3t", "--type=example.com/db", "--save-config"},
			gvr:  geSecretGVR, name: "db",
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if v, _, _ := unstructured.NestedString(obj.Object, "data", "password"); v != "czNjcjN0" {
					t.Errorf("data.password = %q", v)
				}
				if v, _, _ := unstructured.NestedString(obj.Object, "type"); v != "example.com/db" {
					t.Errorf("type = %q", v)
				}
				if !strings.HasPrefix(obj.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"], `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"db","namespace":"`+obj.GetNamespace()+`"},`) {
					t.Errorf("--save-config: %v", obj.GetAnnotations())
				}
			},
		},
		{
			args: []string{"secret", "generic", "plain", "--from-literal=a=b"},
			gvr:  geSecretGVR, name: "plain",
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if v, _, _ := unstructured.NestedString(obj.Object, "type"); v != "Opaque" {
					t.Errorf("type = %q, want the server's default Opaque", v)
				}
			},
		},
		{
			args: []string{"secret", "tls", "web-tls", "--cert=" + in("tls.crt"), "--key=" + in("tls.key")},
			gvr:  geSecretGVR, name: "web-tls",
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				data, _, _ := unstructured.NestedMap(obj.Object, "data")
				if v, _, _ := unstructured.NestedString(obj.Object, "type"); v != "kubernetes.io/tls" || data["tls.crt"] == nil || data["tls.key"] == nil {
					t.Errorf("tls secret: %v", obj.Object)
				}
			},
		},
		{
			args: []string{"secret", "docker-registry", "regcred", "--docker-server=registry.example.com", "--docker-username=me", "--docker-password=pw"},
			gvr:  geSecretGVR, name: "regcred",
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if v, _, _ := unstructured.NestedString(obj.Object, "type"); v != "kubernetes.io/dockerconfigjson" {
					t.Errorf("type = %q", v)
				}
			},
		},
		{
			args: []string{"secret", "docker-registry", "regfile", "--from-file=" + in("docker.json")},
			gvr:  geSecretGVR, name: "regfile",
			check: func(t *testing.T, obj *unstructured.Unstructured) {
				if _, ok, _ := unstructured.NestedString(obj.Object, "data", ".dockerconfigjson"); !ok {
					t.Errorf("no .dockerconfigjson: %v", obj.Object)
				}
			},
		},
		{
			args: []string{"serviceaccount", "robot"},
			gvr:  geSAGVR, name: "robot",
		},
	}
	for _, tc := range tests {
		t.Run(tc.gvr.Resource+"/"+tc.name, func(t *testing.T) {
			// The manifest a client dry run prints is one apply takes.
			r := kdyn(t, env, append([]string{"-n", ns, "create"}, append(tc.args, "--dry-run=client", "-o", "yaml")...)...).must(t)
			manifest := r.stdout
			if !strings.Contains(manifest, "namespace: "+ns+"\n") {
				t.Errorf("-n is not in the manifest:\n%s", manifest)
			}
			// A server dry run stores nothing.
			r = kdyn(t, env, append([]string{"-n", ns, "create"}, append(tc.args, "--dry-run=server")...)...).must(t)
			if !strings.HasSuffix(r.stdout, " created (server dry run)\n") {
				t.Errorf("server dry run: %q", r.stdout)
			}
			// For real.
			r = kdyn(t, env, append([]string{"-n", ns, "create"}, tc.args...)...).must(t)
			kind := map[string]string{"configmaps": "configmap", "secrets": "secret", "serviceaccounts": "serviceaccount"}[tc.gvr.Resource]
			ocStdout(t, r, kind+"/"+tc.name+" created\n")
			obj := ocGet(t, c, tc.gvr, ns, tc.name)
			if tc.check != nil {
				tc.check(t, obj)
			}
			// Once more: the server refuses, in kubectl's words.
			r = kdyn(t, env, append([]string{"-n", ns, "--exit-codes", "create"}, tc.args...)...)
			if r.code != 4 || !strings.Contains(r.stderr, `already exists`) || !strings.HasPrefix(r.stderr, "error: failed to create ") {
				t.Errorf("second create: exit %d, stderr %q", r.code, r.stderr)
			}
			// The dry run's manifest applies cleanly onto the object.
			mfStdin(t, env, manifest, "apply", "--server-side", "-f", "-", "--force-conflicts").must(t)
		})
	}

	// -o json prints the server's answer in its (kubectl's) order, without
	// managedFields.
	r = kdyn(t, env, "-n", ns, "create", "cm", "printed", "--from-literal=a=b", "-o", "json").must(t)
	if !strings.HasPrefix(r.stdout, "{\n    \"kind\": \"ConfigMap\",\n    \"apiVersion\": \"v1\",\n    \"metadata\": {\n        \"name\": \"printed\",\n        \"namespace\": \""+ns+"\",\n        \"uid\": ") || strings.Contains(r.stdout, "managedFields") {
		t.Errorf("-o json:\n%s", r.stdout)
	}
	r = kdyn(t, env, "-n", ns, "create", "cm", "printed2", "--from-literal=a=b", "-o", "yaml", "--show-managed-fields").must(t)
	if !strings.Contains(r.stdout, "managedFields:") || !strings.Contains(r.stdout, "manager: kubectl-create") {
		t.Errorf("--show-managed-fields:\n%s", r.stdout)
	}
	// A generator's object is in the namespace of the context when -n is
	// not given, and then does not name it.
	r = kdyn(t, env, "create", "cm", "in-default", "--from-literal=a=b", "--dry-run=client", "-o", "yaml").must(t)
	if strings.Contains(r.stdout, "namespace:") {
		t.Errorf("a namespace without -n:\n%s", r.stdout)
	}
}

// TestObjectCommandsClientDryRun: label, annotate and patch with
// --dry-run=client print the changed object and change nothing.
func TestObjectCommandsClientDryRun(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	before := ocConfigMap(t, c, ns, "x", map[string]string{"keep": "1"}, map[string]string{"k": "v"})

	r := kdyn(t, env, "-n", ns, "label", "cm", "x", "app=web", "--dry-run=client").must(t)
	ocStdout(t, r, "configmap/x labeled (dry run)\n")
	r = kdyn(t, env, "-n", ns, "label", "cm", "x", "keep-", "--dry-run", "-o", "yaml").must(t)
	if !strings.Contains(r.stdout, "  labels: {}\n") || strings.Contains(r.stdout, "managedFields") {
		t.Errorf("label --dry-run -o yaml:\n%s", r.stdout)
	}
	r = kdyn(t, env, "-n", ns, "annotate", "cm", "x", "note=hi", "--dry-run=client", "-o", "yaml").must(t)
	if !strings.Contains(r.stdout, "    note: hi\n") {
		t.Errorf("annotate --dry-run -o yaml:\n%s", r.stdout)
	}
	r = kdyn(t, env, "-n", ns, "patch", "cm", "x", "-p", `{"data":{"k":"v2"}}`, "--dry-run=client", "-o", "yaml").must(t)
	if !strings.Contains(r.stdout, "  k: v2\n") {
		t.Errorf("patch --dry-run -o yaml:\n%s", r.stdout)
	}
	r = kdyn(t, env, "-n", ns, "patch", "cm", "x", "--type", "json", "-p", `[{"op":"replace","path":"/data/k","value":"v"}]`, "--dry-run=client").must(t)
	ocStdout(t, r, "configmap/x patched (no change)\n")
	// A strategic merge patch with lists needs the type's schema: the
	// server computes it, in a dry run of its own.
	r = kdyn(t, env, "-n", ns, "patch", "cm", "x", "-p", `{"metadata":{"finalizers":["a/b"]}}`, "--dry-run=client", "-o", "jsonpath={.metadata.finalizers}").must(t)
	ocStdout(t, r, `["a/b"]`)

	after := ocGet(t, c, ocConfigMapGVR, ns, "x")
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Fatalf("a client dry run changed the object:\n%v", after.Object)
	}
}

// TestCreateRBACGenerators: create role, clusterrole, rolebinding and
// clusterrolebinding store what they print, with kubectl's field manager,
// and the server's refusal of a second one is worded as kubectl's.
func TestCreateRBACGenerators(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	suffix := strings.TrimPrefix(ns, "mf-")
	kdyn(t, env, "create", "role", "pod-reader", "--verb=get,list", "--resource=pods,rs.apps", "-n", ns).must(t).mfStdout(t, "role.rbac.authorization.k8s.io/pod-reader created")
	r := kdyn(t, env, "get", "role", "pod-reader", "-n", ns, "-o", `jsonpath={range .rules[*]}{.apiGroups}{.resources}{.verbs};{end}`).must(t)
	if want := `[""]["pods"]["get","list"];["apps"]["replicasets"]["get","list"];`; r.stdout != want {
		t.Errorf("role rules: %s, want %s", r.stdout, want)
	}
	kdyn(t, env, "create", "rolebinding", "readers", "--role=pod-reader", "--serviceaccount="+ns+":robot", "--user=ann", "-n", ns).must(t)
	r = kdyn(t, env, "get", "rolebinding", "readers", "-n", ns, "-o", `jsonpath={.roleRef.kind}/{.roleRef.name} {.subjects[*].kind} {.metadata.managedFields[0].manager}`, "--show-managed-fields").must(t)
	if want := "Role/pod-reader User ServiceAccount kubectl-create"; r.stdout != want {
		t.Errorf("rolebinding: %q, want %q", r.stdout, want)
	}
	r = kdyn(t, env, "create", "rolebinding", "readers", "--role=pod-reader", "-n", ns)
	if r.code != 1 || !strings.Contains(r.stderr, `error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "readers" already exists`) {
		t.Errorf("second rolebinding: exit %d, %q", r.code, r.stderr)
	}
	cr := "logs-" + suffix
	kdyn(t, env, "create", "clusterrole", cr, "--verb=get", "--non-resource-url=/logs/*").must(t)
	kdyn(t, env, "create", "clusterrolebinding", cr, "--clusterrole="+cr, "--group=devs").must(t)
	r = kdyn(t, env, "auth", "can-i", "get", "/logs/kube-apiserver.log", "--as=someone", "--as-group=devs").must(t)
	if strings.TrimSpace(r.stdout) != "yes" {
		t.Errorf("can-i through the new binding: %q", r.stdout)
	}
	kdyn(t, env, "delete", "clusterrolebinding/"+cr, "clusterrole/"+cr).must(t)
}

// TestCreateWorkloadGenerators: create deployment, cronjob and job (from
// the cron job) store what kubectl's would.
func TestCreateWorkloadGenerators(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	kdyn(t, env, "create", "deployment", "web", "--image=nginx:1.27", "--image=busybox", "-r", "2", "--port=80", "-n", ns).must(t).mfStdout(t, "deployment.apps/web created")
	r := kdyn(t, env, "get", "deploy", "web", "-n", ns, "-o", `jsonpath={.spec.replicas} {.spec.selector.matchLabels.app} {.spec.template.spec.containers[*].name} {.spec.template.spec.containers[0].ports[0].containerPort}`).must(t)
	if want := "2 web nginx busybox 80"; r.stdout != want {
		t.Errorf("deployment: %q, want %q", r.stdout, want)
	}
	kdyn(t, env, "create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *", "-n", ns, "--", "date").must(t).mfStdout(t, "cronjob.batch/tick created")
	kdyn(t, env, "create", "job", "now", "--from=cronjob/tick", "-n", ns).must(t).mfStdout(t, "job.batch/now created")
	r = kdyn(t, env, "get", "job", "now", "-n", ns, "-o", `jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.annotations.cronjob\.kubernetes\.io/instantiate} {.spec.template.spec.containers[0].command[0]}`).must(t)
	if want := "CronJob/tick manual date"; r.stdout != want {
		t.Errorf("job from cronjob: %q, want %q", r.stdout, want)
	}
}

// TestRun: run creates the pod (and with --expose the service) and prints
// what kubectl prints; attaching (proven in TestPodStreams, where pods run)
// is refused where kubectl refuses it.
func TestRun(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	r := kdyn(t, env, "run", "web", "--image=nginx", "--port=80", "--expose", "--env=A=1", "-n", ns).must(t)
	if r.stdout != "pod/web created\nservice/web created\n" {
		t.Errorf("run --expose printed %q", r.stdout)
	}
	r = kdyn(t, env, "get", "pod/web", "service/web", "-n", ns, "-o", `jsonpath={.items[0].metadata.labels.run} {.items[0].spec.containers[0].env[0].value} {.items[1].spec.selector.run} {.items[1].spec.ports[0].targetPort}`).must(t)
	if want := "web 1 web 80"; r.stdout != want {
		t.Errorf("run objects: %q, want %q", r.stdout, want)
	}
	for args, want := range map[string]string{
		"--rm":                       "--rm should only be used for attached containers",
		"-i --dry-run=server":        "--dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)",
		"--attach --dry-run=client":  "--dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)",
		"-i --pod-running-timeout=0": "--pod-running-timeout must be higher than zero",
	} {
		r = kdyn(t, env, append([]string{"run", "x", "--image=busybox", "-n", ns}, strings.Fields(args)...)...)
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("run %s: exit %d, %q", args, r.code, r.stderr)
		}
	}
}
