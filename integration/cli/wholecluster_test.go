package cli_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// eventually runs kdyn until its standard output matches re (up to a
// minute), for what the cluster's controllers do in their own time.
func eventually(t *testing.T, env *testenv.Env, re string, args ...string) result {
	t.Helper()
	want := regexp.MustCompile(re)
	deadline := time.Now().Add(time.Minute)
	for {
		r := kdyn(t, env, args...)
		if r.code == 0 && want.MatchString(r.stdout) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("kdyn %v never printed /%s/; last: exit %d\n%s%s", args, re, r.code, r.stdout, r.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestVerbsOnWholeCluster: the verbs that need no pod stream (describe,
// run, expose, set, rollout, scale, the create generators, config, proxy,
// --raw, certificate, auth reconcile, apply's last-applied verbs, delete
// of a namespace) against a whole cluster — controllers, scheduler and a
// KWOK node running the pods — where each change has its real effect:
// deployments roll out new pods, services get endpoints, quotas count,
// budgets see healthy pods, certificates are issued, jobs complete,
// namespaces go with their pods. (The pod streams are TestPodStreams',
// the node verbs TestNodeVerbs'; the other tests of this package run on an
// API server alone, where nothing reconciles.)
func TestVerbsOnWholeCluster(t *testing.T) {
	ns := "whole"
	env, _ := podCluster(t, ns)
	k := func(args ...string) result { return kdyn(t, env, append([]string{"-n", ns}, args...)...) }

	t.Run("describe", func(t *testing.T) {
		r := k("describe", "pod", "p").must(t)
		for _, want := range []string{"Node:         kwok-node-0/", "Status:       Running", "Ready             True",
			"Normal  Scheduled", "Successfully assigned whole/p to kwok-node-0"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("describe pod lacks %q:\n%s", want, r.stdout)
			}
		}
		r = k("describe", "deploy", "web").must(t)
		for _, want := range []string{"Replicas:               2 desired | 2 updated | 2 total | 2 available | 0 unavailable",
			"NewReplicaSet:   web-", "ScalingReplicaSet", "Scaled up replica set web-"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("describe deploy lacks %q:\n%s", want, r.stdout)
			}
		}
		r = kdyn(t, env, "describe", "node", "kwok-node-0").must(t)
		if !strings.Contains(r.stdout, "Non-terminated Pods:") || !strings.Contains(r.stdout, "whole                       p") {
			t.Errorf("describe node does not list pod p:\n%s", r.stdout)
		}
	})

	t.Run("run expose endpoints", func(t *testing.T) {
		k("run", "solo", "--image=busybox", "--port=80", "--expose").expect(t, 0, "pod/solo created\nservice/solo created\n")
		k("wait", "pod/solo", "--for=condition=Ready", "--timeout=60s").must(t)
		k("expose", "deploy/web", "--name=web-exposed", "--port=8080", "--target-port=80").expect(t, 0, "service/web-exposed exposed\n")
		// the endpoint slice controller gives each service the ready pods' IPs
		ip := k("get", "pod", "solo", "-o", "jsonpath={.status.podIP}").must(t).stdout
		eventually(t, env, regexp.QuoteMeta(ip), "-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=solo", "-o", "jsonpath={.items[*].endpoints[*].addresses[*]}")
		eventually(t, env, `^\S+ \S+$`, "-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=web-exposed", "-o", "jsonpath={.items[*].endpoints[*].addresses[*]}")
	})

	t.Run("set rollout scale", func(t *testing.T) {
		k("set", "image", "deploy/web", "c=busybox:1.37").expect(t, 0, "deployment.apps/web image updated\n")
		k("set", "env", "deploy/web", "MODE=fast").expect(t, 0, "deployment.apps/web env updated\n")
		k("set", "resources", "deploy/web", "--limits=cpu=200m").expect(t, 0, "deployment.apps/web resource requirements updated\n")
		k("rollout", "status", "deploy/web", "--timeout=60s").expect(t, 0, "-")
		// the new pods run the new template
		eventually(t, env, `^busybox:1.37 busybox:1.37$`, "-n", ns, "get", "pods", "-l", "app=web", "--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].spec.containers[0].image}")
		r := k("rollout", "history", "deploy/web").must(t)
		if !strings.Contains(r.stdout, "\n4         <none>\n") {
			t.Errorf("rollout history after three changes:\n%s", r.stdout)
		}
		k("rollout", "undo", "deploy/web", "--to-revision=1").expect(t, 0, "deployment.apps/web rolled back\n")
		k("rollout", "status", "deploy/web", "--timeout=60s").must(t)
		eventually(t, env, `^busybox busybox$`, "-n", ns, "get", "pods", "-l", "app=web", "--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].spec.containers[0].image}")
		k("scale", "deploy/web", "--replicas=3").expect(t, 0, "deployment.apps/web scaled\n")
		k("rollout", "status", "deploy/web", "--timeout=60s").must(t)
		eventually(t, env, `^3$`, "-n", ns, "get", "deploy", "web", "-o", "jsonpath={.status.readyReplicas}")
		k("rollout", "restart", "deploy/web").expect(t, 0, "deployment.apps/web restarted\n")
		k("rollout", "status", "deploy/web", "--timeout=60s").must(t)
	})

	t.Run("create generators", func(t *testing.T) {
		k("create", "deployment", "gen", "--image=busybox", "--replicas=2").expect(t, 0, "deployment.apps/gen created\n")
		k("create", "pdb", "gen", "--selector=app=gen", "--min-available=1").expect(t, 0, "poddisruptionbudget.policy/gen created\n")
		k("create", "quota", "q", "--hard=pods=20,services=10").expect(t, 0, "resourcequota/q created\n")
		k("create", "job", "once", "--image=busybox").expect(t, 0, "job.batch/once created\n")
		k("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *").expect(t, 0, "cronjob.batch/tick created\n")
		k("create", "job", "fromcron", "--from=cronjob/tick").expect(t, 0, "job.batch/fromcron created\n")
		k("create", "service", "clusterip", "gensvc", "--tcp=80:8080").expect(t, 0, "service/gensvc created\n")
		k("create", "ingress", "ing", "--rule=example.com/=gensvc:80").expect(t, 0, "ingress.networking.k8s.io/ing created\n")
		k("create", "role", "reader", "--verb=get,list", "--resource=pods").expect(t, 0, "role.rbac.authorization.k8s.io/reader created\n")
		k("create", "rolebinding", "reader", "--role=reader", "--serviceaccount="+ns+":default").expect(t, 0, "rolebinding.rbac.authorization.k8s.io/reader created\n")
		kdyn(t, env, "create", "clusterrole", "whole-reader", "--verb=get", "--resource=nodes").expect(t, 0, "clusterrole.rbac.authorization.k8s.io/whole-reader created\n")
		kdyn(t, env, "create", "clusterrolebinding", "whole-reader", "--clusterrole=whole-reader", "--serviceaccount="+ns+":default").expect(t, 0, "clusterrolebinding.rbac.authorization.k8s.io/whole-reader created\n")
		kdyn(t, env, "create", "priorityclass", "whole-high", "--value=1000").expect(t, 0, "priorityclass.scheduling.k8s.io/whole-high created\n")
		// the controllers act on what was created
		k("rollout", "status", "deploy/gen", "--timeout=60s").must(t)
		eventually(t, env, `^2$`, "-n", ns, "get", "pdb", "gen", "-o", "jsonpath={.status.currentHealthy}")
		eventually(t, env, `^[1-9][0-9]*$`, "-n", ns, "get", "quota", "q", "-o", "jsonpath={.status.used.pods}")
		k("wait", "job/once", "job/fromcron", "--for=condition=Complete", "--timeout=60s").must(t)
		// the rolebinding's service account may read pods, not nodes
		sa := "system:serviceaccount:" + ns + ":default"
		k("auth", "can-i", "list", "pods", "--as="+sa).expect(t, 0, "yes\n")
		k("auth", "can-i", "get", "nodes", "--as="+sa).expect(t, 0, "yes\n")
		k("auth", "can-i", "delete", "nodes", "--as="+sa).expect(t, 1, "no\n")
		// a token for the service account authenticates as it
		token := k("create", "token", "default", "--duration=10m").must(t).stdout
		r := kdyn(t, env, "--token="+strings.TrimSpace(token), "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
		if r.stdout != sa {
			t.Errorf("whoami with the token: %q (exit %d, %s)", r.stdout, r.code, r.stderr)
		}
	})

	t.Run("certificate", func(t *testing.T) {
		kdynAs(t, env, testenv.Admin, mvCSRManifest(t, "whole-csr"), "create", "-f", "-").must(t)
		kdyn(t, env, "certificate", "approve", "whole-csr").expect(t, 0, "certificatesigningrequest.certificates.k8s.io/whole-csr approved\n")
		// the controller-manager's signer issues the certificate
		r := eventually(t, env, `^\S+$`, "get", "csr", "whole-csr", "-o", "jsonpath={.status.certificate}")
		pem, err := base64.StdEncoding.DecodeString(r.stdout)
		if err != nil || !strings.HasPrefix(string(pem), "-----BEGIN CERTIFICATE-----") {
			t.Errorf("issued certificate: %v %q", err, pem)
		}
		// a denied request gets no certificate
		kdynAs(t, env, testenv.Admin, mvCSRManifest(t, "whole-denied"), "create", "-f", "-").must(t)
		kdyn(t, env, "certificate", "deny", "whole-denied").expect(t, 0, "certificatesigningrequest.certificates.k8s.io/whole-denied denied\n")
		kdyn(t, env, "get", "csr", "whole-denied", "-o", "jsonpath={.status.conditions[0].type} {.status.certificate}").expect(t, 0, "Denied ")
	})

	t.Run("apply last-applied and auth reconcile", func(t *testing.T) {
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: la}\ndata: {k: v1}\n"
		kdynAs(t, env, testenv.Admin, cm, "-n", ns, "apply", "-f", "-").must(t)
		k("apply", "view-last-applied", "cm/la", "-o", "json").expect(t, 0, "-")
		edited := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: la}\ndata: {k: v2}\n"
		kdynAs(t, env, testenv.Admin, edited, "-n", ns, "apply", "set-last-applied", "-f", "-").expect(t, 0, "configmap/la configured\n")
		r := k("apply", "view-last-applied", "cm/la").must(t)
		if !strings.Contains(r.stdout, "k: v2") {
			t.Errorf("view-last-applied after set-last-applied:\n%s", r.stdout)
		}
		// edit-last-applied: the editor changes the recorded configuration
		dir := t.TempDir()
		ed := ocEditor(t, dir, `sed -i 's/k: v2/k: v3/' "$1"`)
		ocKdynEnv(t, env, ocEditEnv(dir, ed), "-n", ns, "apply", "edit-last-applied", "cm/la").expect(t, 0, "configmap/la edited\n")
		r = k("apply", "view-last-applied", "cm/la").must(t)
		if !strings.Contains(r.stdout, "k: v3") {
			t.Errorf("view-last-applied after edit-last-applied:\n%s", r.stdout)
		}
		roles := "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: rec, namespace: " + ns + "}\nrules: [{apiGroups: [''], resources: [configmaps], verbs: [get]}]\n"
		kdynAs(t, env, testenv.Admin, roles, "auth", "reconcile", "-f", "-").expect(t, 0, "role.rbac.authorization.k8s.io/rec reconciled\n")
		k("get", "role", "rec", "-o", "jsonpath={.rules[0].resources[0]}").expect(t, 0, "configmaps")
	})

	t.Run("config proxy raw", func(t *testing.T) {
		// a context made with config set-context reaches the cluster
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		if err := env.WriteKubeconfig(kc, testenv.Admin); err != nil {
			t.Fatal(err)
		}
		cfg := func(args ...string) result {
			return run(t, "", nil, append([]string{"--kubeconfig", kc, "--cache-dir", filepath.Join(env.Dir(), "kdyn-cache-admin")}, args...)...)
		}
		current := strings.TrimSpace(cfg("config", "current-context").must(t).stdout)
		cluster := strings.TrimSpace(cfg("config", "view", "-o", "jsonpath={.contexts[0].context.cluster}").must(t).stdout)
		user := strings.TrimSpace(cfg("config", "view", "-o", "jsonpath={.contexts[0].context.user}").must(t).stdout)
		cfg("config", "set-context", "in-whole", "--cluster="+cluster, "--user="+user, "--namespace="+ns).expect(t, 0, "Context \"in-whole\" created.\n")
		cfg("config", "use-context", "in-whole").expect(t, 0, "Switched to context \"in-whole\".\n")
		cfg("get", "pod", "p", "-o", "name").expect(t, 0, "pod/p\n")
		cfg("config", "use-context", current).must(t)
		cfg("config", "delete-context", "in-whole").must(t)

		// proxy serves the API on a local port
		out, _ := startKdyn(t, env, "proxy", "--port=0")
		out.wait(t, "\n")
		m := regexp.MustCompile(`Starting to serve on 127\.0\.0\.1:(\d+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("proxy printed %q", out.String())
		}
		resp, err := http.Get("http://127.0.0.1:" + m[1] + "/api/v1/namespaces/" + ns + "/pods/p")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"nodeName":"kwok-node-0"`) {
			t.Errorf("proxy GET pod: %d %s", resp.StatusCode, body)
		}

		// --raw: get, create, replace, delete
		r := kdyn(t, env, "get", "--raw", "/api/v1/namespaces/"+ns+"/pods/p").must(t)
		if !strings.Contains(r.stdout, `"phase":"Running"`) {
			t.Errorf("get --raw: %s", r.stdout)
		}
		cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"raw"},"data":{"a":"1"}}`
		file := filepath.Join(t.TempDir(), "cm.json")
		if err := os.WriteFile(file, []byte(cm), 0o600); err != nil {
			t.Fatal(err)
		}
		kdyn(t, env, "create", "--raw", "/api/v1/namespaces/"+ns+"/configmaps", "-f", file).must(t)
		if err := os.WriteFile(file, []byte(strings.Replace(cm, `"1"`, `"2"`, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		kdyn(t, env, "replace", "--raw", "/api/v1/namespaces/"+ns+"/configmaps/raw", "-f", file).must(t)
		k("get", "cm", "raw", "-o", "jsonpath={.data.a}").expect(t, 0, "2")
		kdyn(t, env, "delete", "--raw", "/api/v1/namespaces/"+ns+"/configmaps/raw").must(t)
		k("get", "cm", "raw").expect(t, 1, "", "not found")
	})

	t.Run("delete namespace with running pods", func(t *testing.T) {
		kdyn(t, env, "delete", "namespace", ns, "--timeout=120s").expect(t, 0, "namespace \""+ns+"\" deleted\n")
		kdyn(t, env, "get", "namespace", ns).expect(t, 1, "", "not found")
	})
}
