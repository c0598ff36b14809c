package cli_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// Helpers of TestMoreVerbs start with "mv".

var (
	mvServiceGVR        = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	mvRoleGVR           = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	mvRoleBindingGVR    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	mvClusterRoleGVR    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	mvCRBGVR            = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
	mvCSRGVR            = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}
	mvSecretGVR         = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	mvServiceAccountGVR = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
)

// mvContainer is a container of a pod template: name, image and env
// variables given as KEY=VALUE.
func mvContainer(name, image string, env ...string) map[string]any {
	c := map[string]any{"name": name, "image": image}
	if len(env) > 0 {
		var l []any
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			l = append(l, map[string]any{"name": k, "value": v})
		}
		c["env"] = l
	}
	return c
}

// mvDeployment creates a Deployment (label app=NAME) with these containers
// and init containers in its pod template, and returns the stored object.
func mvDeployment(t *testing.T, c *dynamic.DynamicClient, ns, name string, containers, initContainers []any) *unstructured.Unstructured {
	t.Helper()
	podSpec := map[string]any{"containers": containers}
	if len(initContainers) > 0 {
		podSpec["initContainers"] = initContainers
	}
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     podSpec,
			},
		},
	}}
	got, err := c.Resource(ocDeployGVR).Namespace(ns).Create(t.Context(), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// mvContainers returns the stored containers (field "containers" or
// "initContainers") of a Deployment's pod template, by name.
func mvContainers(obj *unstructured.Unstructured, field string) map[string]map[string]any {
	list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", field)
	out := map[string]map[string]any{}
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			out[m["name"].(string)] = m
		}
	}
	return out
}

// mvDiff reports the difference between want and got, what being the
// field compared.
func mvDiff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// mvUnchanged fails unless the object's resourceVersion is still rv: the
// run wrote nothing.
func mvUnchanged(t *testing.T, c *dynamic.DynamicClient, gvr schema.GroupVersionResource, ns, name, rv, what string) {
	t.Helper()
	if got := ocGet(t, c, gvr, ns, name).GetResourceVersion(); got != rv {
		t.Errorf("%s changed %s/%s: resourceVersion %s, was %s", what, gvr.Resource, name, got, rv)
	}
}

// mvJSON decodes JSON (or YAML) s into a generic value.
func mvJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}

// mvCSR returns a PEM certificate signing request for CommonName cn, with
// a new P-256 key.
func mvCSR(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: []string{"kdyn-test"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// mvCSRManifest is a CertificateSigningRequest of a client certificate
// for kube-apiserver, as YAML.
func mvCSRManifest(t *testing.T, name string) string {
	t.Helper()
	return fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: %s
spec:
  request: %s
  signerName: kubernetes.io/kube-apiserver-client
  usages: [client auth]
`, name, base64.StdEncoding.EncodeToString(mvCSR(t, name)))
}

// mvConditions returns the stored conditions of a CSR, without the times
// the client and server set.
func mvConditions(t *testing.T, c *dynamic.DynamicClient, name string) []any {
	t.Helper()
	conds, _, _ := unstructured.NestedSlice(ocGet(t, c, mvCSRGVR, "", name).Object, "status", "conditions")
	for _, cd := range conds {
		m := cd.(map[string]any)
		delete(m, "lastUpdateTime")
		delete(m, "lastTransitionTime")
	}
	return conds
}

// mvDeleteLater deletes a cluster-scoped object when the test ends.
func mvDeleteLater(t *testing.T, c *dynamic.DynamicClient, gvr schema.GroupVersionResource, name string) {
	t.Cleanup(func() { _ = c.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// mvKubeconfig parses a kubeconfig file.
func mvKubeconfig(t *testing.T, path string) map[string]any {
	t.Helper()
	return mvJSON(t, ocRead(t, path))
}

// mvByName sorts the clusters, users and contexts of a parsed kubeconfig
// by name (config view lists them so; a file keeps its order).
func mvByName(cfg map[string]any) map[string]any {
	for _, list := range []string{"clusters", "users", "contexts"} {
		items, _ := cfg[list].([]any)
		sort.Slice(items, func(i, j int) bool {
			return fmt.Sprint(items[i].(map[string]any)["name"]) < fmt.Sprint(items[j].(map[string]any)["name"])
		})
	}
	return cfg
}

// mvEventuallyAllowed runs "auth can-i" with args until it answers yes:
// the API server's authorizer sees RBAC changes through an informer, a
// moment after they are stored.
func mvEventuallyAllowed(t *testing.T, env *testenv.Env, args ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := kdyn(t, env, append([]string{"auth", "can-i"}, args...)...)
		if r.code == 0 && r.stdout == "yes\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("auth can-i %v: exit %d, stdout %q, stderr %q; want yes", args, r.code, r.stdout, r.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// mvEntry returns the body of entry name in list ("clusters", "users" or
// "contexts") of a parsed kubeconfig, or nil when there is none.
func mvEntry(cfg map[string]any, list, name string) map[string]any {
	items, _ := cfg[list].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["name"] == name {
			body, _ := m[strings.TrimSuffix(list, "s")].(map[string]any)
			if body == nil {
				body = map[string]any{}
			}
			return body
		}
	}
	return nil
}

// mvJWTClaims decodes the claims (the payload) of a JSON Web Token,
// without checking its signature.
func mvJWTClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("JWT payload: %v", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatalf("JWT claims: %v\n%s", err, payload)
	}
	return claims
}

// mvLifetime is a token's lifetime in seconds: its exp claim less its iat.
func mvLifetime(claims map[string]any) int64 {
	exp, _ := claims["exp"].(float64)
	iat, _ := claims["iat"].(float64)
	return int64(exp - iat)
}

// TestMoreVerbs: set (image, env, resources, selector, serviceaccount,
// subject), create token, apply view-last-applied, set-last-applied and
// edit-last-applied, auth reconcile, the config subcommands on a copy of a
// kubeconfig, certificate approve and deny, and --raw for get, create,
// replace and delete; each checks what the server (or the kubeconfig file)
// holds afterwards.
func TestMoreVerbs(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	suffix := strings.TrimPrefix(ns, "oc-")
	// k runs kdyn as the admin in the test's namespace.
	k := func(t *testing.T, args ...string) result {
		t.Helper()
		return kdyn(t, env, append([]string{"-n", ns}, args...)...)
	}
	// kIn is k with stdin.
	kIn := func(t *testing.T, stdin string, args ...string) result {
		t.Helper()
		return kdynAs(t, env, testenv.Admin, stdin, append([]string{"-n", ns}, args...)...)
	}

	t.Run("set image", func(t *testing.T) {
		mvDeployment(t, c, ns, "img",
			[]any{mvContainer("web", "nginx:1.27"), mvContainer("side", "busybox:1.36")},
			[]any{mvContainer("init", "busybox:1.36")})
		k(t, "set", "image", "deploy/img", "web=nginx:1.28").expect(t, 0, "deployment.apps/img image updated\n")
		d := ocGet(t, c, ocDeployGVR, ns, "img")
		// images maps each container and init container of d to its image.
		images := func(d *unstructured.Unstructured) map[string]any {
			out := map[string]any{}
			for _, f := range []string{"containers", "initContainers"} {
				for n, ctr := range mvContainers(d, f) {
					out[n] = ctr["image"]
				}
			}
			return out
		}
		mvDiff(t, "images after web=", map[string]any{"web": "nginx:1.28", "side": "busybox:1.36", "init": "busybox:1.36"}, images(d))

		// "*" is every container, init containers too.
		k(t, "set", "image", "deployment", "img", "*=registry.example/all:2").expect(t, 0, "deployment.apps/img image updated\n")
		d = ocGet(t, c, ocDeployGVR, ns, "img")
		mvDiff(t, "images after *=", map[string]any{"web": "registry.example/all:2", "side": "registry.example/all:2", "init": "registry.example/all:2"}, images(d))
		rv := d.GetResourceVersion()

		// The same images again: nothing printed, nothing written.
		k(t, "set", "image", "deploy/img", "web=registry.example/all:2").expect(t, 0, "")
		mvUnchanged(t, c, ocDeployGVR, ns, "img", rv, "set image to the same image")
		// An unknown container is an error, in kubectl's words.
		k(t, "set", "image", "deploy/img", "nope=x:1").expect(t, 1, "", `error: unable to find container named "nope"`)
		mvUnchanged(t, c, ocDeployGVR, ns, "img", rv, "set image of an unknown container")
		// Dry runs print the changed object and store nothing.
		k(t, "set", "image", "deploy/img", "web=nginx:dry", "--dry-run=server", "-o", "jsonpath={.spec.template.spec.containers[0].image}").expect(t, 0, "nginx:dry")
		k(t, "set", "image", "deploy/img", "web=nginx:dry", "--dry-run=client", "-o", "name").expect(t, 0, "deployment.apps/img\n")
		mvUnchanged(t, c, ocDeployGVR, ns, "img", rv, "set image --dry-run")
	})

	t.Run("set env", func(t *testing.T) {
		ocConfigMap(t, c, ns, "settings", nil, map[string]string{"log.level": "debug", "MODE": "fast"})
		mvDeployment(t, c, ns, "envd",
			[]any{mvContainer("app", "nginx", "KEEP=1"), mvContainer("side", "busybox")}, nil)
		// envOf is the stored env of a container of envd.
		envOf := func(name string) any {
			t.Helper()
			return mvContainers(ocGet(t, c, ocDeployGVR, ns, "envd"), "containers")[name]["env"]
		}

		k(t, "set", "env", "deploy/envd", "-c", "app", "A=1", "B=two").expect(t, 0, "deployment.apps/envd env updated\n")
		mvDiff(t, "app env", []any{
			map[string]any{"name": "KEEP", "value": "1"},
			map[string]any{"name": "A", "value": "1"},
			map[string]any{"name": "B", "value": "two"},
		}, envOf("app"))
		mvDiff(t, "side env (not selected by -c)", nil, envOf("side"))

		// --from a config map: a reference per key, the name made an
		// environment variable name, with --prefix.
		k(t, "set", "env", "deploy/envd", "-c", "app", "--from=configmap/settings", "--prefix=APP_").
			expect(t, 0, "deployment.apps/envd env updated\n", "key log.level transferred to LOG_LEVEL")
		refs := map[string]any{}
		for _, e := range envOf("app").([]any) {
			m := e.(map[string]any)
			if m["valueFrom"] != nil {
				refs[m["name"].(string)] = m["valueFrom"]
			}
		}
		mvDiff(t, "app env from the config map", map[string]any{
			"APP_LOG_LEVEL": map[string]any{"configMapKeyRef": map[string]any{"name": "settings", "key": "log.level"}},
			"APP_MODE":      map[string]any{"configMapKeyRef": map[string]any{"name": "settings", "key": "MODE"}},
		}, refs)

		// KEY- removes, KEY=VALUE replaces in place; "-" reads stdin.
		k(t, "set", "env", "deploy/envd", "-c", "app", "B-", "KEEP=2").expect(t, 0, "deployment.apps/envd env updated\n")
		kIn(t, "# from stdin\nFROM_STDIN=yes\n", "set", "env", "deploy/envd", "-c", "side", "-").expect(t, 0, "deployment.apps/envd env updated\n")
		app := envOf("app").([]any)
		var names []any
		for _, e := range app {
			names = append(names, e.(map[string]any)["name"])
		}
		if len(app) != 4 || names[2] == "B" || names[3] == "B" {
			t.Errorf("app env after B- KEEP=2: %v", app)
		} else {
			mvDiff(t, "app env after B- KEEP=2 (KEEP changed in place)", []any{
				map[string]any{"name": "KEEP", "value": "2"},
				map[string]any{"name": "A", "value": "1"},
			}, app[:2])
		}
		mvDiff(t, "side env from stdin", []any{map[string]any{"name": "FROM_STDIN", "value": "yes"}}, envOf("side"))

		// --list prints what is stored, in kubectl's form.
		d := ocGet(t, c, ocDeployGVR, ns, "envd")
		rv := d.GetResourceVersion()
		var want strings.Builder
		for _, name := range []string{"app", "side"} {
			fmt.Fprintf(&want, "# Deployment envd, container %s\n", name)
			list, _ := mvContainers(d, "containers")[name]["env"].([]any)
			for _, e := range list {
				m := e.(map[string]any)
				if vf, ok := m["valueFrom"].(map[string]any); ok {
					ref := vf["configMapKeyRef"].(map[string]any)
					fmt.Fprintf(&want, "# %s from configmap %s, key %s\n", m["name"], ref["name"], ref["key"])
				} else {
					fmt.Fprintf(&want, "%s=%s\n", m["name"], m["value"])
				}
			}
		}
		k(t, "set", "env", "deploy/envd", "--list").expect(t, 0, want.String())
		// --list with a change lists it and writes nothing.
		r := k(t, "set", "env", "deployment/envd", "--list", "-c", "side", "EXTRA=1").must(t)
		ocStdout(t, r, "# Deployment envd, container side\nFROM_STDIN=yes\nEXTRA=1\n")
		mvUnchanged(t, c, ocDeployGVR, ns, "envd", rv, "set env --list")

		// kubectl's refusals and warnings.
		k(t, "set", "env", "deploy/envd", "-c", "app", "A=3", "--overwrite=false").
			expect(t, 1, "", "'A' already has a value (1), and --overwrite is false")
		k(t, "set", "env", "deploy/envd", "-c", "nomatch", "X=1").expect(t, 0, "", `Deployment/envd does not have any containers matching "nomatch"`)
		k(t, "set", "env", "deploy/envd", "A=1", "A-").expect(t, 1, "", "can not both modify and remove the same environment variable in the same command")
		mvUnchanged(t, c, ocDeployGVR, ns, "envd", rv, "refused set env")
	})

	t.Run("set resources", func(t *testing.T) {
		mvDeployment(t, c, ns, "res", []any{mvContainer("app", "nginx"), mvContainer("side", "busybox")}, nil)
		// resOf is the stored resources of a container of res.
		resOf := func(name string) any {
			t.Helper()
			return mvContainers(ocGet(t, c, ocDeployGVR, ns, "res"), "containers")[name]["resources"]
		}
		k(t, "set", "resources", "deploy/res", "-c", "app", "--limits=cpu=0.5,memory=512Mi", "--requests=cpu=100m").
			expect(t, 0, "deployment.apps/res resource requirements updated\n")
		mvDiff(t, "app resources", map[string]any{
			"limits":   map[string]any{"cpu": "500m", "memory": "512Mi"},
			"requests": map[string]any{"cpu": "100m"},
		}, resOf("app"))
		mvDiff(t, "side resources (not selected by -c)", map[string]any{}, resOf("side"))

		// Every container; those given replace, the others stay.
		k(t, "set", "resources", "deployment", "res", "--requests=memory=64Mi").
			expect(t, 0, "deployment.apps/res resource requirements updated\n")
		mvDiff(t, "app resources after --requests=memory", map[string]any{
			"limits":   map[string]any{"cpu": "500m", "memory": "512Mi"},
			"requests": map[string]any{"cpu": "100m", "memory": "64Mi"},
		}, resOf("app"))
		mvDiff(t, "side resources after --requests=memory", map[string]any{"requests": map[string]any{"memory": "64Mi"}}, resOf("side"))

		rv := ocGet(t, c, ocDeployGVR, ns, "res").GetResourceVersion()
		// The same values again write and print nothing, as kubectl.
		k(t, "set", "resources", "deploy/res", "-c", "side", "--requests=memory=64Mi").expect(t, 0, "")
		k(t, "set", "resources", "deploy/res", "-c", "side", "--requests=memory=64Mi", "--dry-run=client").expect(t, 0, "")
		mvUnchanged(t, c, ocDeployGVR, ns, "res", rv, "set resources to the same values")
		k(t, "set", "resources", "deploy/res", "-c", "nope", "--limits=cpu=1").expect(t, 1, "", "unable to find container named nope")
		k(t, "set", "resources", "deploy/res").expect(t, 1, "", "you must specify an update to requests or limits (in the form of --requests/--limits)")
		mvUnchanged(t, c, ocDeployGVR, ns, "res", rv, "refused set resources")
	})

	t.Run("set serviceaccount", func(t *testing.T) {
		mvDeployment(t, c, ns, "sa", []any{mvContainer("app", "nginx")}, nil)
		k(t, "set", "serviceaccount", "deploy/sa", "robot").expect(t, 0, "deployment.apps/sa serviceaccount updated\n")
		d := ocGet(t, c, ocDeployGVR, ns, "sa")
		if got, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName"); got != "robot" {
			t.Errorf("serviceAccountName = %q, want robot", got)
		}
		// kubectl prints it even when nothing changes.
		k(t, "set", "sa", "deployment", "sa", "robot").expect(t, 0, "deployment.apps/sa serviceaccount updated\n")
		mvUnchanged(t, c, ocDeployGVR, ns, "sa", d.GetResourceVersion(), "set serviceaccount to the same account")
	})

	t.Run("set selector", func(t *testing.T) {
		svc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "sel", "namespace": ns},
			"spec": map[string]any{
				"selector": map[string]any{"app": "old"},
				"ports":    []any{map[string]any{"port": int64(80), "targetPort": int64(8080)}},
			},
		}}
		if _, err := c.Resource(mvServiceGVR).Namespace(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The selector is replaced, not merged.
		k(t, "set", "selector", "svc/sel", "role=front,tier=web").expect(t, 0, "service/sel selector updated\n")
		got, _, _ := unstructured.NestedStringMap(ocGet(t, c, mvServiceGVR, ns, "sel").Object, "spec", "selector")
		mvDiff(t, "service selector", map[string]string{"role": "front", "tier": "web"}, got)
		mvDeployment(t, c, ns, "nosel", []any{mvContainer("app", "nginx")}, nil)
		k(t, "set", "selector", "deploy/nosel", "a=b").expect(t, 1, "", "setting a selector is only supported for Services")
	})

	t.Run("set subject", func(t *testing.T) {
		// (The bootstrap "view" cluster role is aggregated, by the
		// controller manager this control plane does not run.)
		role := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
			"metadata": map[string]any{"name": "cm-viewer", "namespace": ns},
			"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list"}}},
		}}
		if _, err := c.Resource(mvRoleGVR).Namespace(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rb := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
			"metadata": map[string]any{"name": "viewers", "namespace": ns},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-viewer"},
			"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ann"}},
		}}
		if _, err := c.Resource(mvRoleBindingGVR).Namespace(ns).Create(t.Context(), rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		k(t, "auth", "can-i", "list", "configmaps", "--as=bob").expect(t, 1, "no\n")

		k(t, "set", "subject", "rolebinding/viewers", "--user=bob", "--group=devs", "--serviceaccount=:robot", "--serviceaccount=other:bot").
			expect(t, 0, "rolebinding.rbac.authorization.k8s.io/viewers subjects updated\n")
		stored := ocGet(t, c, mvRoleBindingGVR, ns, "viewers")
		subjects, _, _ := unstructured.NestedSlice(stored.Object, "subjects")
		mvDiff(t, "subjects", []any{
			map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ann"},
			map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"},
			map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"},
			map[string]any{"kind": "ServiceAccount", "name": "robot", "namespace": ns},
			map[string]any{"kind": "ServiceAccount", "name": "bot", "namespace": "other"},
		}, subjects)
		// The binding now grants bob what the role allows.
		mvEventuallyAllowed(t, env, "list", "configmaps", "-n", ns, "--as=bob")
		// Subjects already there: nothing printed, nothing written.
		k(t, "set", "subject", "rolebinding", "viewers", "--user=bob", "--group=devs").expect(t, 0, "")
		mvUnchanged(t, c, mvRoleBindingGVR, ns, "viewers", stored.GetResourceVersion(), "set subject with existing subjects")
		ocConfigMap(t, c, ns, "not-a-binding", nil, nil)
		k(t, "set", "subject", "cm/not-a-binding", "--user=x").expect(t, 1, "", "setting subjects is only supported for RoleBinding/ClusterRoleBinding")
	})

	t.Run("create token", func(t *testing.T) {
		k(t, "create", "serviceaccount", "tok").expect(t, 0, "serviceaccount/tok created\n")
		subject := "system:serviceaccount:" + ns + ":tok"

		// The token alone (no newline: stdout is not a terminal).
		r := k(t, "create", "token", "tok").must(t)
		if strings.ContainsAny(r.stdout, " \n") {
			t.Errorf("create token printed more than the token: %q", r.stdout)
		}
		claims := mvJWTClaims(t, r.stdout)
		if claims["sub"] != subject {
			t.Errorf("token subject %v, want %s", claims["sub"], subject)
		}
		sa, _ := claims["kubernetes.io"].(map[string]any)
		mvDiff(t, "service account of the token", map[string]any{"name": "tok", "uid": string(ocGet(t, c, mvServiceAccountGVR, ns, "tok").GetUID())}, sa["serviceaccount"])
		if sa["namespace"] != ns {
			t.Errorf("token namespace %v, want %s", sa["namespace"], ns)
		}
		// The token authenticates as the service account.
		kdynAs(t, env, testenv.Nobody, "", "--token", r.stdout, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").expect(t, 0, subject)

		// --duration and --audience (repeated) are what the token says.
		r = k(t, "create", "token", "tok", "--duration=15m", "--audience=https://a.example.com", "--audience=b").must(t)
		claims = mvJWTClaims(t, r.stdout)
		mvDiff(t, "audiences", []any{"https://a.example.com", "b"}, claims["aud"])
		if got := mvLifetime(claims); got != 900 {
			t.Errorf("token lifetime %ds, want 900 (--duration=15m)", got)
		}

		// -o json: the TokenRequest, its token bound to a Secret.
		secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "tok-secret", "namespace": ns}}}
		secret, err := c.Resource(mvSecretGVR).Namespace(ns).Create(t.Context(), secret, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r = k(t, "create", "token", "tok", "-o", "json", "--duration=1h", "--bound-object-kind=Secret", "--bound-object-name=tok-secret").must(t)
		tr := mvJSON(t, r.stdout)
		if tr["kind"] != "TokenRequest" || tr["apiVersion"] != "authentication.k8s.io/v1" {
			t.Errorf("create token -o json printed %s", r.stdout)
		}
		spec, _ := tr["spec"].(map[string]any)
		if spec["expirationSeconds"] != float64(3600) {
			t.Errorf("spec.expirationSeconds = %v, want 3600", spec["expirationSeconds"])
		}
		mvDiff(t, "bound object", map[string]any{"kind": "Secret", "apiVersion": "v1", "name": "tok-secret"}, spec["boundObjectRef"])
		status, _ := tr["status"].(map[string]any)
		token, _ := status["token"].(string)
		bound, _ := mvJWTClaims(t, token)["kubernetes.io"].(map[string]any)
		mvDiff(t, "secret the token is bound to", map[string]any{"name": "tok-secret", "uid": string(secret.GetUID())}, bound["secret"])

		// kubectl's refusals.
		k(t, "create", "token", "nope").expect(t, 1, "", `error: failed to create token: serviceaccounts "nope" not found`)
		k(t, "create", "token", "tok", "--duration=1500ms").expect(t, 1, "", "--duration cannot be expressed in units less than seconds")
		k(t, "create", "token", "tok", "--duration=-1s").expect(t, 1, "", "--duration must be greater than or equal to 0")
		k(t, "create", "token", "tok", "--audience=").expect(t, 1, "", "--audience must not be an empty string")
		k(t, "create", "token", "tok", "--bound-object-name=x").expect(t, 1, "", "--bound-object-name can only be set if --bound-object-kind is provided")
		k(t, "create", "token", "tok", "--bound-object-kind=ConfigMap", "--bound-object-name=x").expect(t, 1, "", "supported --bound-object-kind values are Node, Pod, Secret")
		k(t, "create", "token", "tok", "--bound-object-kind=Pod").expect(t, 1, "", "--bound-object-name is required if --bound-object-kind is provided")
		k(t, "create", "token").expect(t, 1, "", "exactly one NAME is required, got 0")
	})

	t.Run("apply view-last-applied", func(t *testing.T) {
		manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: la\n  labels:\n    mv: la\ndata:\n  k: v1\n"
		kIn(t, manifest, "apply", "-f", "-").expect(t, 0, "configmap/la created\n")
		stored := ocGet(t, c, ocConfigMapGVR, ns, "la")
		annotation := stored.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
		if annotation == "" {
			t.Fatalf("apply recorded no last-applied configuration: %v", stored.GetAnnotations())
		}
		want := mvJSON(t, annotation)
		if want["data"].(map[string]any)["k"] != "v1" || want["metadata"].(map[string]any)["namespace"] != ns {
			t.Fatalf("last-applied annotation: %s", annotation)
		}

		r := k(t, "apply", "view-last-applied", "cm/la").must(t)
		mvDiff(t, "view-last-applied (yaml)", want, mvJSON(t, r.stdout))
		if strings.HasPrefix(r.stdout, "{") {
			t.Errorf("view-last-applied printed JSON by default:\n%s", r.stdout)
		}
		r = k(t, "apply", "view-last-applied", "configmap", "la", "-o", "json").must(t)
		var fromJSON map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &fromJSON); err != nil {
			t.Fatalf("view-last-applied -o json: %v\n%s", err, r.stdout)
		}
		mvDiff(t, "view-last-applied -o json", want, fromJSON)
		r = k(t, "apply", "view-last-applied", "cm", "-l", "mv=la").must(t)
		mvDiff(t, "view-last-applied -l", want, mvJSON(t, r.stdout))
		r = k(t, "apply", "view-last-applied", "-f", mfWrite(t, "la.yaml", manifest)).must(t)
		mvDiff(t, "view-last-applied -f", want, mvJSON(t, r.stdout))

		// An object without the annotation prints nothing (as kubectl).
		ocConfigMap(t, c, ns, "noanno", nil, map[string]string{"k": "v"})
		k(t, "apply", "view-last-applied", "cm/noanno").expect(t, 0, "")
		k(t, "apply", "view-last-applied", "cm/la", "-o", "wide").expect(t, 1, "", "the flag 'output' must be one of yaml|json")
	})

	t.Run("apply set-last-applied", func(t *testing.T) {
		// Live: k and stale, no annotation, as "create" leaves it.
		ocConfigMap(t, c, ns, "sla", nil, map[string]string{"k": "v", "stale": "s"})
		withStale := mfWrite(t, "sla.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sla\ndata:\n  k: v\n  stale: s\n")
		k(t, "apply", "set-last-applied", "-f", withStale).expect(t, 1, "",
			"no last-applied-configuration annotation found on resource: sla, to create the annotation, run the command with --create-annotation")
		if a := ocGet(t, c, ocConfigMapGVR, ns, "sla").GetAnnotations(); len(a) != 0 {
			t.Fatalf("a refused set-last-applied annotated the object: %v", a)
		}

		k(t, "apply", "set-last-applied", "-f", withStale, "--create-annotation").expect(t, 0, "configmap/sla configured\n")
		stored := ocGet(t, c, ocConfigMapGVR, ns, "sla")
		mvDiff(t, "recorded configuration", map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "sla", "namespace": ns},
			"data":     map[string]any{"k": "v", "stale": "s"},
		}, mvJSON(t, stored.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]))
		data, _, _ := unstructured.NestedStringMap(stored.Object, "data")
		mvDiff(t, "data after set-last-applied (unchanged)", map[string]string{"k": "v", "stale": "s"}, data)

		k(t, "apply", "set-last-applied", "-f", withStale, "--create-annotation").expect(t, 0, "set-last-applied sla: no changes required.\n")
		mvUnchanged(t, c, ocConfigMapGVR, ns, "sla", stored.GetResourceVersion(), "set-last-applied without changes")

		// The recorded configuration is what the next client-side apply
		// compares with: a key dropped from the manifest is deleted.
		k(t, "apply", "-f", mfWrite(t, "sla2.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sla\ndata:\n  k: v\n")).
			expect(t, 0, "configmap/sla configured\n")
		data, _, _ = unstructured.NestedStringMap(ocGet(t, c, ocConfigMapGVR, ns, "sla").Object, "data")
		mvDiff(t, "data after apply", map[string]string{"k": "v"}, data)
	})

	t.Run("apply edit-last-applied", func(t *testing.T) {
		const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
		manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ela\n  labels:\n    mv: ela\ndata:\n  k: v1\n"
		kIn(t, manifest, "apply", "-f", "-").expect(t, 0, "configmap/ela created\n")
		stored := ocGet(t, c, ocConfigMapGVR, ns, "ela")
		want := mvJSON(t, stored.GetAnnotations()[lastApplied])
		// edited runs apply edit-last-applied with the editor's steps
		// (ocEditor) and returns the run and the editor's directory.
		edited := func(t *testing.T, steps []string, args ...string) (result, string) {
			t.Helper()
			dir := t.TempDir()
			ed := ocEditor(t, dir, steps...)
			return ocKdynEnv(t, env, ocEditEnv(dir, ed), append([]string{"-n", ns, "apply", "edit-last-applied"}, args...)...), dir
		}
		// annotation is the stored configuration, and checks it is
		// kubectl's encoding: compact JSON and a newline.
		annotation := func(t *testing.T) map[string]any {
			t.Helper()
			raw := ocGet(t, c, ocConfigMapGVR, ns, "ela").GetAnnotations()[lastApplied]
			if !strings.HasSuffix(raw, "}\n") || strings.Contains(raw, ": ") {
				t.Errorf("annotation not compact JSON with a newline: %q", raw)
			}
			return mvJSON(t, raw)
		}
		// liveData is the stored data, which edit-last-applied leaves.
		liveData := func(t *testing.T) map[string]string {
			t.Helper()
			d, _, _ := unstructured.NestedStringMap(ocGet(t, c, ocConfigMapGVR, ns, "ela").Object, "data")
			return d
		}

		r, dir := edited(t, []string{`sed -i 's/k: v1/k: v2/' "$1"`}, "cm/ela")
		r.expect(t, 0, "configmap/ela edited\n")
		seen := ocRead(t, filepath.Join(dir, "seen-1"))
		if !strings.HasPrefix(seen, "# Please edit the 'last-applied-configuration' annotations below.\n") || !strings.Contains(seen, "\n  k: v1\n") || strings.Contains(seen, "resourceVersion") {
			t.Errorf("the file given to the editor:\n%s", seen)
		}
		want["data"] = map[string]any{"k": "v2"}
		mvDiff(t, "annotation after edit-last-applied", want, annotation(t))
		mvDiff(t, "live data after edit-last-applied", map[string]string{"k": "v1"}, liveData(t))

		// JSON, printed back with -o json; Windows line endings.
		r, dir = edited(t, []string{`sed -i 's/"k": "v2"/"k": "v3"/' "$1"`}, "configmap", "ela", "-o", "json", "--windows-line-endings")
		r.must(t)
		want["data"] = map[string]any{"k": "v3"}
		mvDiff(t, "edit-last-applied -o json output", want, mvJSON(t, r.stdout))
		mvDiff(t, "annotation after a JSON edit", want, annotation(t))
		if seen := ocRead(t, filepath.Join(dir, "seen-1")); !strings.HasPrefix(seen, "{\r\n") || strings.Contains(seen, "#") {
			t.Errorf("the JSON file given to the editor:\n%q", seen)
		}

		// A file that does not parse opens again with the error; the
		// fixed file is saved.
		r, dir = edited(t, []string{`sed -i 's/^data:/data: [/' "$1"`, `sed -i 's/^data: \[/data:/; s/k: v3/k: v4/' "$1"`}, "cm/ela")
		r.expect(t, 0, "configmap/ela edited\n")
		if seen := ocRead(t, filepath.Join(dir, "seen-2")); !strings.Contains(seen, "# The edited file had a syntax error") {
			t.Errorf("the file reopened after a syntax error:\n%s", seen)
		}
		want["data"] = map[string]any{"k": "v4"}
		mvDiff(t, "annotation after a corrected edit", want, annotation(t))

		// Unchanged: nothing written.
		rv := ocGet(t, c, ocConfigMapGVR, ns, "ela").GetResourceVersion()
		r, _ = edited(t, nil, "cm/ela")
		r.expect(t, 0, "", "Edit cancelled, no changes made.")
		// Another namespace is refused, the text kept.
		r, _ = edited(t, []string{`sed -i 's/namespace: .*/namespace: elsewhere/; s/k: v4/k: v5/' "$1"`}, "cm/ela")
		r.expect(t, 1, "", `the namespace from the provided object "elsewhere" does not match the namespace "`+ns+`"`, "A copy of your changes has been stored to")
		mvUnchanged(t, c, ocConfigMapGVR, ns, "ela", rv, "a refused edit-last-applied")

		// The next client-side apply compares with the edited
		// configuration: a label dropped from it is no longer apply's,
		// so a manifest without it leaves it.
		r, _ = edited(t, []string{`sed -i '/^  labels:/d; /^    mv: ela/d' "$1"`}, "cm/ela")
		r.expect(t, 0, "configmap/ela edited\n")
		delete(want["metadata"].(map[string]any), "labels")
		mvDiff(t, "annotation without the labels", want, annotation(t))
		kIn(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ela\ndata:\n  k: v1\n", "apply", "-f", "-").expect(t, 0, "configmap/ela configured\n")
		mvDiff(t, "live labels after apply", map[string]string{"mv": "ela"}, ocGet(t, c, ocConfigMapGVR, ns, "ela").GetLabels())
		mvDiff(t, "live data after apply", map[string]string{"k": "v1"}, liveData(t))

		ocConfigMap(t, c, ns, "ela-bare", nil, nil)
		r, _ = edited(t, nil, "cm/ela-bare")
		r.expect(t, 1, "", "no last-applied-configuration annotation found on resources")
	})

	t.Run("auth reconcile", func(t *testing.T) {
		rns := "mv-rc-" + suffix
		cr := "mv-node-reader-" + suffix
		mvDeleteLater(t, c, mvClusterRoleGVR, cr)
		mvDeleteLater(t, c, mvCRBGVR, cr)
		manifest := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: cm-reader
  namespace: %[1]s
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: cm-readers
  namespace: %[1]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: cm-reader
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: carol
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: skipped
  namespace: %[1]s
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[2]s
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %[2]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %[2]s
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: mv-ops-%[3]s
`, rns, cr, suffix)
		file := mfWrite(t, "rbac.yaml", manifest)
		wantOut := "role.rbac.authorization.k8s.io/cm-reader reconciled\n" +
			"rolebinding.rbac.authorization.k8s.io/cm-readers reconciled\n" +
			"clusterrole.rbac.authorization.k8s.io/" + cr + " reconciled\n" +
			"clusterrolebinding.rbac.authorization.k8s.io/" + cr + " reconciled\n"

		// The namespace does not exist: reconcile creates it.
		kdyn(t, env, "auth", "reconcile", "-f", file).expect(t, 0, wantOut, "reconciliation required create", "missing rules added:", "missing subjects added:")
		ocGet(t, c, ocNamespaceGVR, "", rns)
		if _, err := c.Resource(ocConfigMapGVR).Namespace(rns).Get(t.Context(), "skipped", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("reconcile created a ConfigMap: %v", err)
		}
		role := ocGet(t, c, mvRoleGVR, rns, "cm-reader")
		rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
		mvDiff(t, "role rules", []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list"}}}, rules)
		crb := ocGet(t, c, mvCRBGVR, "", cr)
		subjects, _, _ := unstructured.NestedSlice(crb.Object, "subjects")
		mvDiff(t, "cluster role binding subjects", []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "mv-ops-" + suffix}}, subjects)
		mvEventuallyAllowed(t, env, "list", "configmaps", "-n", rns, "--as=carol")
		mvEventuallyAllowed(t, env, "get", "nodes", "--as=someone", "--as-group=mv-ops-"+suffix)

		// A second run changes nothing and says nothing on stderr.
		rvs := map[string]string{}
		objs := []struct {
			gvr      schema.GroupVersionResource
			ns, name string
		}{{mvRoleGVR, rns, "cm-reader"}, {mvRoleBindingGVR, rns, "cm-readers"}, {mvClusterRoleGVR, "", cr}, {mvCRBGVR, "", cr}}
		for _, o := range objs {
			rvs[o.gvr.Resource] = ocGet(t, c, o.gvr, o.ns, o.name).GetResourceVersion()
		}
		r := kdyn(t, env, "auth", "reconcile", "-f", file)
		r.expect(t, 0, wantOut)
		if r.stderr != "" {
			t.Errorf("second reconcile reported changes:\n%s", r.stderr)
		}
		for _, o := range objs {
			mvUnchanged(t, c, o.gvr, o.ns, o.name, rvs[o.gvr.Resource], "second reconcile")
		}

		// A rule added by hand stays, unless --remove-extra-permissions.
		rules = append(rules, map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get"}})
		role = ocGet(t, c, mvRoleGVR, rns, "cm-reader")
		if err := unstructured.SetNestedSlice(role.Object, rules, "rules"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Resource(mvRoleGVR).Namespace(rns).Update(t.Context(), role, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		kdyn(t, env, "auth", "reconcile", "-f", file).expect(t, 0, wantOut)
		got, _, _ := unstructured.NestedSlice(ocGet(t, c, mvRoleGVR, rns, "cm-reader").Object, "rules")
		if len(got) != 2 {
			t.Errorf("reconcile without --remove-extra-permissions dropped a rule: %v", got)
		}
		kdyn(t, env, "auth", "reconcile", "-f", file, "--remove-extra-permissions").expect(t, 0, wantOut, "reconciliation required update", "extra rules removed:")
		got, _, _ = unstructured.NestedSlice(ocGet(t, c, mvRoleGVR, rns, "cm-reader").Object, "rules")
		mvDiff(t, "rules after --remove-extra-permissions", rules[:1], got)
	})

	t.Run("config", func(t *testing.T) {
		dir := t.TempDir()
		kc := filepath.Join(dir, "config")
		if err := os.WriteFile(kc, []byte(ocRead(t, env.KubeconfigPath(testenv.Admin))), 0o600); err != nil {
			t.Fatal(err)
		}
		ca := filepath.Join(dir, "ca.crt")
		if err := os.WriteFile(ca, env.CAData(), 0o600); err != nil {
			t.Fatal(err)
		}
		cache := filepath.Join(env.Dir(), "kdyn-cache-"+testenv.Admin.String())
		// cfg runs kdyn with the copy of the kubeconfig.
		cfg := func(t *testing.T, args ...string) result {
			t.Helper()
			return run(t, "", nil, append([]string{"--kubeconfig", kc, "--cache-dir", cache}, args...)...)
		}

		cfg(t, "config", "set-cluster", "mv", "--server="+env.Host(), "--certificate-authority="+ca, "--embed-certs").expect(t, 0, "Cluster \"mv\" set.\n")
		cfg(t, "config", "set-cluster", "mv", "--tls-server-name=localhost").expect(t, 0, "Cluster \"mv\" set.\n")
		mvDiff(t, "cluster mv", map[string]any{
			"server":                     env.Host(),
			"certificate-authority-data": base64.StdEncoding.EncodeToString(env.CAData()),
			"tls-server-name":            "localhost",
		}, mvEntry(mvKubeconfig(t, kc), "clusters", "mv"))

		cfg(t, "config", "set-credentials", "mv-nobody", "--token="+env.NobodyToken()).expect(t, 0, "User \"mv-nobody\" set.\n")
		cfg(t, "config", "set-credentials", "mv-basic", "--username=u", "--password=p").expect(t, 0, "User \"mv-basic\" set.\n")
		file := mvKubeconfig(t, kc)
		mvDiff(t, "user mv-nobody", map[string]any{"token": env.NobodyToken()}, mvEntry(file, "users", "mv-nobody"))
		mvDiff(t, "user mv-basic", map[string]any{"username": "u", "password": "p"}, mvEntry(file, "users", "mv-basic"))

		cfg(t, "config", "set-context", "mv", "--cluster=mv", "--user=mv-nobody", "--namespace=default").expect(t, 0, "Context \"mv\" created.\n")
		cfg(t, "config", "set-context", "mv", "--user=admin", "--namespace="+ns).expect(t, 0, "Context \"mv\" modified.\n")
		mvDiff(t, "context mv", map[string]any{"cluster": "mv", "user": "admin", "namespace": ns}, mvEntry(mvKubeconfig(t, kc), "contexts", "mv"))

		cfg(t, "config", "use-context", "nope").expect(t, 1, "", `error: no context exists with the name: "nope"`)
		cfg(t, "config", "use", "admin").expect(t, 0, "Switched to context \"admin\".\n")
		cfg(t, "config", "use-context", "mv").expect(t, 0, "Switched to context \"mv\".\n")
		if cur := mvKubeconfig(t, kc)["current-context"]; cur != "mv" {
			t.Errorf("current-context in the file = %v, want mv", cur)
		}
		cfg(t, "config", "current-context").expect(t, 0, "mv\n")
		// The new context works: its cluster (embedded CA), user and
		// namespace.
		ocConfigMap(t, c, ns, "cfg-probe", nil, nil)
		cfg(t, "get", "configmap", "cfg-probe", "-o", "name").expect(t, 0, "configmap/cfg-probe\n")

		r := cfg(t, "config", "get-contexts").must(t)
		found := false
		for _, line := range strings.Split(r.stdout, "\n") {
			if f := strings.Fields(line); len(f) == 5 && f[0] == "*" {
				mvDiff(t, "current row of get-contexts", []string{"*", "mv", "mv", "admin", ns}, f)
				found = true
			}
		}
		if !found || !strings.HasPrefix(r.stdout, "CURRENT   NAME") {
			t.Errorf("get-contexts:\n%s", r.stdout)
		}
		cfg(t, "config", "get-contexts", "-o", "name").expect(t, 0, "admin\ncert-admin\nmv\nnobody\n")

		cfg(t, "config", "rename-context", "mv", "mv2").expect(t, 0, "Context \"mv\" renamed to \"mv2\".\n")
		file = mvKubeconfig(t, kc)
		if mvEntry(file, "contexts", "mv") != nil || mvEntry(file, "contexts", "mv2") == nil || file["current-context"] != "mv2" {
			t.Errorf("after rename-context: contexts %v, current-context %v", file["contexts"], file["current-context"])
		}

		// set and unset by property path.
		cfg(t, "config", "set", "contexts.mv2.user", "mv-nobody").expect(t, 0, "Property \"contexts.mv2.user\" set.\n")
		cfg(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").expect(t, 0, testenv.NobodyUserName)
		cfg(t, "config", "set", "users.mv-basic.username", "u2").expect(t, 0, "Property \"users.mv-basic.username\" set.\n")
		cfg(t, "config", "unset", "users.mv-basic.password").expect(t, 0, "Property \"users.mv-basic.password\" unset.\n")
		mvDiff(t, "user mv-basic after set and unset", map[string]any{"username": "u2"}, mvEntry(mvKubeconfig(t, kc), "users", "mv-basic"))

		// view: redacted unless --raw; --raw is the file.
		cfg(t, "config", "view", "-o", `jsonpath={.contexts[?(@.name=="mv2")].context.namespace}`).expect(t, 0, ns)
		cfg(t, "config", "view", "-o", `jsonpath={.users[?(@.name=="mv-nobody")].user.token}`).expect(t, 0, "REDACTED")
		cfg(t, "config", "view", "--raw", "-o", `jsonpath={.users[?(@.name=="mv-nobody")].user.token}`).expect(t, 0, env.NobodyToken())
		r = cfg(t, "config", "view", "--raw").must(t)
		mvDiff(t, "config view --raw", mvByName(mvKubeconfig(t, kc)), mvByName(mvJSON(t, r.stdout)))
		r = cfg(t, "config", "view").must(t)
		if strings.Contains(r.stdout, env.NobodyToken()) || strings.Contains(r.stdout, env.AdminToken()) {
			t.Errorf("config view printed a token:\n%s", r.stdout)
		}

		// delete-*: the current context may go, with a warning.
		cfg(t, "config", "delete-context", "mv2").expect(t, 0, "deleted context mv2 from "+kc+"\n", "warning: this removed your active context")
		cfg(t, "config", "delete-cluster", "mv").expect(t, 0, "deleted cluster mv from "+kc+"\n")
		cfg(t, "config", "delete-user", "mv-nobody").expect(t, 0, "deleted user mv-nobody from "+kc+"\n")
		cfg(t, "config", "delete-user", "mv-basic").expect(t, 0, "deleted user mv-basic from "+kc+"\n")
		cfg(t, "config", "delete-user", "nope").expect(t, 1, "", "cannot delete user nope, not in "+kc)
		file = mvKubeconfig(t, kc)
		for _, e := range []struct{ list, name string }{{"contexts", "mv2"}, {"clusters", "mv"}, {"users", "mv-nobody"}, {"users", "mv-basic"}} {
			if mvEntry(file, e.list, e.name) != nil {
				t.Errorf("%s %s is still in the file", e.list, e.name)
			}
		}
		if mvEntry(file, "contexts", "admin") == nil || mvEntry(file, "users", "admin") == nil || mvEntry(file, "clusters", testenv.ClusterName) == nil {
			t.Errorf("delete-* removed other entries:\n%s", ocRead(t, kc))
		}

		cfg(t, "config", "unset", "current-context").expect(t, 0, "Property \"current-context\" unset.\n")
		if cur := mvKubeconfig(t, kc)["current-context"]; cur != nil && cur != "" {
			t.Errorf("current-context still set in the file: %v", cur)
		}
		cfg(t, "config", "current-context").expect(t, 1, "", "current-context is not set")
		// The original kubeconfig is untouched.
		if cur := mvKubeconfig(t, env.KubeconfigPath(testenv.Admin))["current-context"]; cur != "admin" {
			t.Errorf("the shared kubeconfig changed: current-context %v", cur)
		}
	})

	t.Run("certificate", func(t *testing.T) {
		names := map[string]string{}
		for _, n := range []string{"a", "d", "f"} {
			names[n] = "mv-" + suffix + "-" + n
			mvDeleteLater(t, c, mvCSRGVR, names[n])
		}
		files := map[string]string{}
		for n, name := range names {
			files[n] = mfWrite(t, n+".yaml", mvCSRManifest(t, name))
			kdyn(t, env, "create", "-f", files[n]).expect(t, 0, "certificatesigningrequest.certificates.k8s.io/"+name+" created\n")
		}
		approved := []any{map[string]any{"type": "Approved", "status": "True", "reason": "KubectlApprove", "message": "This CSR was approved by kubectl certificate approve."}}
		denied := []any{map[string]any{"type": "Denied", "status": "True", "reason": "KubectlDeny", "message": "This CSR was denied by kubectl certificate deny."}}

		kdyn(t, env, "certificate", "approve", names["a"]).expect(t, 0, "certificatesigningrequest.certificates.k8s.io/"+names["a"]+" approved\n")
		mvDiff(t, "conditions after approve", approved, mvConditions(t, c, names["a"]))
		rv := ocGet(t, c, mvCSRGVR, "", names["a"]).GetResourceVersion()
		// Approved already: printed again, not changed.
		kdyn(t, env, "certificate", "approve", names["a"]).expect(t, 0, "certificatesigningrequest.certificates.k8s.io/"+names["a"]+" approved\n")
		mvUnchanged(t, c, mvCSRGVR, "", names["a"], rv, "a second approve")
		// --force sends it as it is: no second condition.
		kdyn(t, env, "certificate", "approve", names["a"], "--force").expect(t, 0, "certificatesigningrequest.certificates.k8s.io/"+names["a"]+" approved\n")
		mvDiff(t, "conditions after approve --force", approved, mvConditions(t, c, names["a"]))
		kdyn(t, env, "certificate", "deny", names["a"]).expect(t, 1, "", fmt.Sprintf("certificate signing request %q is already Approved", names["a"]))
		mvDiff(t, "conditions after a refused deny", approved, mvConditions(t, c, names["a"]))

		kdyn(t, env, "certificate", "deny", names["d"]).expect(t, 0, "certificatesigningrequest.certificates.k8s.io/"+names["d"]+" denied\n")
		mvDiff(t, "conditions after deny", denied, mvConditions(t, c, names["d"]))
		kdyn(t, env, "certificate", "approve", names["d"]).expect(t, 1, "", fmt.Sprintf("certificate signing request %q is already Denied", names["d"]))
		mvDiff(t, "conditions after a refused approve", denied, mvConditions(t, c, names["d"]))

		kdyn(t, env, "certificate", "approve", "-f", files["f"]).expect(t, 0, "certificatesigningrequest.certificates.k8s.io/"+names["f"]+" approved\n")
		mvDiff(t, "conditions after approve -f", approved, mvConditions(t, c, names["f"]))
	})

	t.Run("raw", func(t *testing.T) {
		base := "/api/v1/namespaces/" + ns + "/configmaps"
		r := kIn(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"raw"},"data":{"k":"one"}}`, "create", "--raw", base, "-f", "-").must(t)
		created := mvJSON(t, r.stdout)
		live := ocGet(t, c, ocConfigMapGVR, ns, "raw")
		if md := created["metadata"].(map[string]any); md["uid"] != string(live.GetUID()) || md["namespace"] != ns {
			t.Errorf("create --raw printed %s; stored uid %s", r.stdout, live.GetUID())
		}
		if v, _, _ := unstructured.NestedString(live.Object, "data", "k"); v != "one" {
			t.Errorf("stored data.k = %q", v)
		}

		r = k(t, "get", "--raw", base+"/raw").must(t)
		got := mvJSON(t, r.stdout)
		if md := got["metadata"].(map[string]any); got["kind"] != "ConfigMap" || md["resourceVersion"] != live.GetResourceVersion() {
			t.Errorf("get --raw printed %s; stored resourceVersion %s", r.stdout, live.GetResourceVersion())
		}

		// A stale resourceVersion is the server's conflict.
		stale := mfWrite(t, "stale.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"raw","resourceVersion":"1"},"data":{"k":"stale"}}`)
		k(t, "replace", "--raw", base+"/raw", "-f", stale).expect(t, 1, "", "Error from server (Conflict)")
		mvUnchanged(t, c, ocConfigMapGVR, ns, "raw", live.GetResourceVersion(), "a refused replace --raw")
		fresh := mfWrite(t, "fresh.json", fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"raw","resourceVersion":%q},"data":{"k":"two"}}`, live.GetResourceVersion()))
		r = k(t, "replace", "--raw", base+"/raw", "-f", fresh).must(t)
		if d := mvJSON(t, r.stdout)["data"].(map[string]any); d["k"] != "two" {
			t.Errorf("replace --raw printed %s", r.stdout)
		}
		if v, _, _ := unstructured.NestedString(ocGet(t, c, ocConfigMapGVR, ns, "raw").Object, "data", "k"); v != "two" {
			t.Errorf("stored data.k after replace --raw = %q", v)
		}

		r = k(t, "delete", "--raw", base+"/raw").must(t)
		status := mvJSON(t, r.stdout)
		if status["kind"] != "Status" || status["status"] != "Success" || status["details"].(map[string]any)["name"] != "raw" {
			t.Errorf("delete --raw printed %s", r.stdout)
		}
		if _, err := c.Resource(ocConfigMapGVR).Namespace(ns).Get(t.Context(), "raw", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("after delete --raw: %v", err)
		}
		k(t, "get", "--raw", base+"/raw").expect(t, 1, "", `Error from server (NotFound): configmaps "raw" not found`)
	})
}
