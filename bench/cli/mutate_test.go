package cli

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestNodeCommandsMatchKubectl: cordon, uncordon and taint, each tool on a
// node of its own, print what kubectl prints and leave the node as
// kubectl leaves it.
func TestNodeCommandsMatchKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	for _, n := range []string{"node-kubectl", "node-kdyn"} {
		p.kubectl(t, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"`+n+`","labels":{"pool":"`+n+`"}}}`, "create", "-f", "-")
	}
	norm := func(b []byte) []byte {
		return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("node-kubectl"), []byte("NODE")), []byte("node-kdyn"), []byte("NODE"))
	}
	steps := [][]string{
		{"cordon", "NODE"},
		{"cordon", "NODE"},
		{"get", "node", "NODE", "-o", "jsonpath={.spec.unschedulable}"},
		{"uncordon", "NODE"},
		{"uncordon", "NODE", "--dry-run=client"},
		{"cordon", "-l", "pool=NODE", "--dry-run=server"},
		{"taint", "nodes", "NODE", "dedicated=web:NoSchedule"},
		{"taint", "nodes", "NODE", "dedicated=other:NoSchedule"},
		{"taint", "nodes", "NODE", "dedicated=other:NoSchedule", "--overwrite"},
		{"taint", "node", "NODE", "a=b:NoExecute", "c:PreferNoSchedule"},
		{"taint", "node", "NODE", "a:NoExecute-", "x=y:NoSchedule"},
		{"taint", "nodes", "NODE", "dedicated-"},
		{"taint", "nodes", "NODE", "nothere-"},
		{"taint", "nodes", "NODE", "bad=x:Sometimes"},
		{"taint", "nodes", "NODE", "k=v"},
		{"taint", "nodes", "NODE"},
		{"taint", "nodes", "NODE", "k=v:NoSchedule", "NODE"},
		{"get", "node", "NODE", "-o", "jsonpath={.spec.taints}"},
		{"taint", "nodes", "NODE", "c-", "x-", "-o", "name"},
		{"get", "node", "NODE", "-o", "jsonpath={.spec}"},
	}
	subst := func(args []string, node string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = string(bytes.ReplaceAll([]byte(a), []byte("NODE"), []byte(node)))
		}
		return out
	}
	for _, s := range steps {
		p.check(t, same{args: subst(s, "node-kubectl"), kdynArgs: subst(s, "node-kdyn"), norm: norm})
	}
}

// TestSetCommandsMatchKubectl: set image, resources, serviceaccount and
// subject and rollout pause and resume, each tool on objects of its own,
// print what kubectl prints and leave the objects as kubectl leaves them.
func TestSetCommandsMatchKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	dir := t.TempDir()
	for _, n := range []string{"obj-kubectl", "obj-kdyn"} {
		deploy := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + n + `","labels":{"owner":"` + n + `"}},"spec":{"selector":{"matchLabels":{"app":"` + n + `"}},"template":{"metadata":{"labels":{"app":"` + n + `"}},"spec":{"initContainers":[{"name":"init","image":"busybox"}],"containers":[{"name":"nginx","image":"nginx:1.25","resources":{"limits":{"cpu":"1"}}},{"name":"side-car","image":"busybox"}]}}}}`
		p.kubectl(t, deploy, "create", "-n", ns, "-f", "-")
		pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + n + `"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`
		p.kubectl(t, pod, "create", "-n", ns, "-f", "-")
		p.kubectl(t, "", "create", "rolebinding", n, "-n", ns, "--clusterrole=view", "--user=ann")
		p.kubectl(t, "", "create", "configmap", n, "-n", ns)
		p.kubectl(t, "", "create", "configmap", "settings-"+n, "-n", ns, "--from-literal=log.level=debug", "--from-literal=mode=fast")
		p.kubectl(t, "", "create", "service", "clusterip", n, "-n", ns, "--tcp=80")
		svc := "apiVersion: v1\nkind: Service\nmetadata:\n  name: " + n + "\nspec:\n  selector: {app: x}\n  ports: [{port: 80}]\n"
		if err := os.WriteFile(filepath.Join(dir, "svc-"+n+".yaml"), []byte(svc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "deploy-"+n+".yaml"), []byte(deploy), 0o600); err != nil {
			t.Fatal(err)
		}
		// One key: kubectl adds the keys of --from in map order (random); kdyn sorts them.
		p.kubectl(t, "", "create", "secret", "generic", "creds-"+n, "-n", ns, "--from-literal=pass-word=x")
	}
	norm := func(b []byte) []byte {
		return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("obj-kubectl"), []byte("OBJ")), []byte("obj-kdyn"), []byte("OBJ"))
	}
	steps := [][]string{
		{"set", "image", "deployment/OBJ", "nginx=nginx:1.27"},
		{"set", "image", "deployment/OBJ", "nginx=nginx:1.27"},
		{"set", "image", "deployment", "OBJ", "*=registry.example.com/x:1", "--dry-run=client", "-o", "jsonpath={.spec.template.spec.containers[*].image} {.spec.template.spec.initContainers[*].image}"},
		{"set", "image", "deploy/OBJ", "nginx=nginx:1.28", "nothere=x:1"},
		{"set", "image", "pod/OBJ", "c=busybox:1.36"},
		{"set", "image", "configmap/OBJ", "c=busybox:1.36"},
		{"get", "deploy", "OBJ", "-o", "jsonpath={.spec.template.spec.containers[*].image} {.spec.template.spec.initContainers[*].image}"},
		{"set", "resources", "deployment", "OBJ", "-c=nginx", "--limits=memory=256Mi", "--requests=cpu=100m,memory=64Mi"},
		{"set", "resources", "deployment", "OBJ", "-c=side*", "--limits=cpu=200m"},
		// The same values again: an empty patch, which kubectl neither
		// sends nor reports.
		{"set", "resources", "deployment", "OBJ", "-c=side*", "--limits=cpu=200m"},
		{"set", "resources", "deployment", "OBJ", "-c=side*", "--limits=cpu=200m", "--dry-run=client"},
		{"set", "resources", "deployment", "OBJ", "-c=none", "--limits=cpu=200m"},
		{"set", "resources", "deployment", "OBJ"},
		{"set", "resources", "deployment", "OBJ", "--limits=cpu"},
		{"get", "deploy", "OBJ", "-o", "jsonpath={.spec.template.spec.containers[*].resources} {.spec.template.spec.initContainers[*].resources}"},
		{"set", "serviceaccount", "deployment", "OBJ", "robot"},
		{"set", "sa", "deployment/OBJ", "robot"},
		{"get", "deploy", "OBJ", "-o", "jsonpath={.spec.template.spec.serviceAccountName}"},
		{"set", "subject", "rolebinding", "OBJ", "--user=bob", "--user=ann", "--group=devs", "--serviceaccount=:ci"},
		{"set", "subject", "rolebinding", "OBJ", "--user=bob"},
		{"set", "subject", "rolebinding", "OBJ"},
		{"set", "subject", "rolebinding", "OBJ", "--serviceaccount=bad"},
		{"get", "rolebinding", "OBJ", "-o", "jsonpath={.subjects}"},
		{"set", "env", "deployment/OBJ", "A=1", "B=two words", "-e", "C=3"},
		{"set", "env", "deployment/OBJ", "A=1"},
		{"set", "env", "deployment/OBJ", "A=changed", "-c", "nginx"},
		{"set", "env", "deployment/OBJ", "B-"},
		{"set", "env", "deployment/OBJ", "--from=configmap/settings-OBJ", "--keys=log.level", "--prefix=APP_"},
		{"set", "env", "deployment/OBJ", "--from=secret/creds-OBJ"},
		{"set", "env", "deployment/OBJ", "A=new", "--overwrite=false"},
		{"set", "env", "deployment/OBJ", "--list"},
		{"set", "env", "deployment/OBJ", "1BAD=x"},
		{"set", "env", "deployment/OBJ", "Z=1", "Z-"},
		{"set", "env", "deployment/OBJ", "Z=1", "-c", "none"},
		{"get", "deploy", "OBJ", "-o", "jsonpath={.spec.template.spec.containers[*].env} {.spec.template.spec.initContainers[*].env}"},
		{"set", "selector", "service/OBJ", "app=web,tier=fe"},
		{"set", "selector", "service", "OBJ", "app=other", "-o", "jsonpath={.spec.selector}"},
		{"set", "selector", "deployment/OBJ", "app=web"},
		{"set", "selector", "service/OBJ", "tier in (a,b)"},
		// --local: kubectl prints its typed object (zero values such as
		// targetPort: 0 added); kdyn the manifest with the change only.
		{"set", "selector", "-f", "DIR/svc-OBJ.yaml", "role=padawan", "--local", "-o", "jsonpath={.spec.selector}"},
		{"set", "image", "-f", "DIR/deploy-OBJ.yaml", "nginx=nginx:local", "--local", "-o", "jsonpath={.spec.template.spec.containers[0].image}"},
		{"set", "image", "-f", "DIR/deploy-OBJ.yaml", "nginx=nginx:1.29"},
		{"set", "env", "-f", "DIR/deploy-OBJ.yaml", "X=1", "--dry-run=client", "-o", "jsonpath={.spec.template.spec.containers[0].env}"},
		{"set", "resources", "--local", "deployment/OBJ", "--limits=cpu=1"},
		{"rollout", "pause", "deployment/OBJ"},
		{"set", "env", "deployment/OBJ", "A=1", "B=two words", "-e", "C=3"},
		{"set", "env", "deployment/OBJ", "A=1"},
		{"set", "env", "deployment/OBJ", "A=changed", "-c", "nginx"},
		{"set", "env", "deployment/OBJ", "B-"},
		{"set", "env", "deployment/OBJ", "--from=configmap/settings-OBJ", "--keys=log.level", "--prefix=APP_"},
		{"set", "env", "deployment/OBJ", "--from=secret/creds-OBJ"},
		{"set", "env", "deployment/OBJ", "A=new", "--overwrite=false"},
		{"set", "env", "deployment/OBJ", "--list"},
		{"set", "env", "deployment/OBJ", "1BAD=x"},
		{"set", "env", "deployment/OBJ", "Z=1", "Z-"},
		{"set", "env", "deployment/OBJ", "Z=1", "-c", "none"},
		{"get", "deploy", "OBJ", "-o", "jsonpath={.spec.template.spec.containers[*].env} {.spec.template.spec.initContainers[*].env}"},
		{"set", "selector", "service/OBJ", "app=web,tier=fe"},
		{"set", "selector", "service", "OBJ", "app=other", "-o", "jsonpath={.spec.selector}"},
		{"set", "selector", "deployment/OBJ", "app=web"},
		{"set", "selector", "service/OBJ", "tier in (a,b)"},
		// --local: kubectl prints its typed object (zero values such as
		// targetPort: 0 added); kdyn the manifest with the change only.
		{"set", "selector", "-f", "DIR/svc-OBJ.yaml", "role=padawan", "--local", "-o", "jsonpath={.spec.selector}"},
		{"set", "image", "-f", "DIR/deploy-OBJ.yaml", "nginx=nginx:local", "--local", "-o", "jsonpath={.spec.template.spec.containers[0].image}"},
		{"set", "image", "-f", "DIR/deploy-OBJ.yaml", "nginx=nginx:1.29"},
		{"set", "env", "-f", "DIR/deploy-OBJ.yaml", "X=1", "--dry-run=client", "-o", "jsonpath={.spec.template.spec.containers[0].env}"},
		{"set", "resources", "--local", "deployment/OBJ", "--limits=cpu=1"},
		{"rollout", "pause", "deployment/OBJ"},
		{"rollout", "resume", "deployment/OBJ"},
		{"rollout", "resume", "deployment/OBJ"},
		{"get", "deploy", "OBJ", "-o", "jsonpath={.spec.paused}"},
	}
	subst := func(args []string, obj string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = strings.ReplaceAll(strings.ReplaceAll(a, "OBJ", obj), "DIR", dir)
		}
		return append(out, "-n", ns)
	}
	for _, s := range steps {
		p.check(t, same{args: subst(s, "obj-kubectl"), kdynArgs: subst(s, "obj-kdyn"), norm: norm})
	}
	// Warnings and silence, on stderr too.
	for _, s := range [][]string{
		{"set", "env", "deploy/OBJ", "-c", "zzz", "X=1"},
		{"set", "resources", "deploy/OBJ", "-c", "nginx", "--limits=memory=256Mi"},
	} {
		p.check(t, same{args: subst(s, "obj-kubectl"), kdynArgs: subst(s, "obj-kdyn"), norm: norm, stderr: true})
	}
}

// TestCertificateMatchesKubectl: certificate approve and deny, each tool
// on requests of its own.
func TestCertificateMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "someone"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	request := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	dir := t.TempDir()
	for _, n := range []string{"a-kubectl", "b-kubectl", "c-kubectl", "a-kdyn", "b-kdyn", "c-kdyn"} {
		csr := `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"` + n + `"},"spec":{"request":"` + request + `","signerName":"example.com/signer","usages":["client auth"]}}`
		p.kubectl(t, csr, "create", "-f", "-")
		if err := os.WriteFile(filepath.Join(dir, n+".yaml"), []byte(csr), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	norm := toolNames
	for _, s := range [][]string{
		{"certificate", "approve", "a-TOOL"},
		{"certificate", "approve", "a-TOOL"},
		{"certificate", "deny", "a-TOOL"},
		{"certificate", "deny", "b-TOOL", "-o", "name"},
		{"certificate", "approve", "none-TOOL"},
		// --force sends a request that has the condition as it is.
		{"certificate", "approve", "a-TOOL", "--force"},
		{"certificate", "deny", "b-TOOL", "--force"},
		{"certificate", "approve", "b-TOOL", "--force"},
		{"certificate", "deny", "-f", "DIR/c-TOOL.yaml"},
		{"get", "csr", "a-TOOL", "b-TOOL", "-o", "jsonpath={range .items[*]}{.status.conditions[*].type} {.status.conditions[*].reason} {.status.conditions[*].message};{end}"},
	} {
		p.check(t, same{args: toolArgs(s, "kubectl", dir), kdynArgs: toolArgs(s, "kdyn", dir), norm: norm})
	}
}

// TestLastAppliedMatchesKubectl: apply view-last-applied,
// set-last-applied and edit-last-applied, each tool on objects of its own.
func TestLastAppliedMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	dir := t.TempDir()
	write := func(name, content string) string { return writeFile(t, dir, name, content) }
	for _, tool := range []string{"kubectl", "kdyn"} {
		write("cm-"+tool+".yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-"+tool+"\n  labels: {app: web}\ndata:\n  a: \"1\"\n")
		write("cm2-"+tool+".yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-"+tool+"\n  labels: {app: web}\ndata:\n  a: \"2\"\n  b: x\n")
		write("plain-"+tool+".yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain-"+tool+"\ndata:\n  a: \"1\"\n")
		p.kubectl(t, "", "create", "--save-config", "-n", ns, "-f", filepath.Join(dir, "cm-"+tool+".yaml"))
		p.kubectl(t, "", "create", "-n", ns, "-f", filepath.Join(dir, "plain-"+tool+".yaml"))
	}
	norm := toolNames
	for _, s := range [][]string{
		{"apply", "view-last-applied", "configmap/cm-TOOL"},
		{"apply", "view-last-applied", "configmap", "cm-TOOL", "-o", "json"},
		{"apply", "view-last-applied", "configmap/plain-TOOL"},
		{"apply", "view-last-applied", "-f", "DIR/cm-TOOL.yaml"},
		{"apply", "set-last-applied", "-f", "DIR/cm2-TOOL.yaml"},
		{"apply", "set-last-applied", "-f", "DIR/cm2-TOOL.yaml"},
		{"apply", "view-last-applied", "configmap/cm-TOOL", "-o", "json"},
		{"get", "configmap", "cm-TOOL", "-o", "jsonpath={.data}"},
		{"apply", "set-last-applied", "-f", "DIR/plain-TOOL.yaml"},
		{"apply", "set-last-applied", "-f", "DIR/plain-TOOL.yaml", "--create-annotation", "--dry-run=client"},
		{"apply", "set-last-applied", "-f", "DIR/plain-TOOL.yaml", "--create-annotation"},
		{"apply", "view-last-applied", "configmap/plain-TOOL"},
	} {
		p.check(t, same{args: toolArgs(s, "kubectl", dir, "-n", ns), kdynArgs: toolArgs(s, "kdyn", dir, "-n", ns), norm: norm})
	}

	// edit-last-applied: the file shown (EDITOR=cat prints it), edits by
	// a script, what the annotation then holds, and the refusals.
	to3 := writeFile(t, dir, "to3.sh", "#!/bin/sh\nsed -i 's/\"2\"/\"3\"/' \"$1\"\n")
	to4 := writeFile(t, dir, "to4.sh", "#!/bin/sh\nsed -i 's/\"3\"/\"4\"/' \"$1\"\n")
	for _, script := range []string{to3, to4} {
		if err := os.Chmod(script, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	tmpNorm := func(b []byte) []byte {
		return toolNames(regexp.MustCompile(`/tmp/[^ "]*`).ReplaceAll(b, []byte("TMPFILE")))
	}
	for _, c := range []struct {
		editor string
		step   []string
	}{
		{"cat", []string{"apply", "edit-last-applied", "configmap/cm-TOOL"}},
		{"cat", []string{"apply", "edit-last-applied", "configmap/cm-TOOL", "-o", "json"}},
		{"cat", []string{"apply", "edit-last-applied", "configmap/cm-TOOL", "--windows-line-endings"}},
		{"cat", []string{"apply", "edit-last-applied", "configmap", "cm-TOOL", "plain-TOOL"}},
		{"cat", []string{"apply", "edit-last-applied", "-f", "DIR/cm-TOOL.yaml"}},
		{to3, []string{"apply", "edit-last-applied", "configmap/cm-TOOL"}},
		{to4, []string{"apply", "edit-last-applied", "configmap/cm-TOOL", "configmap/plain-TOOL", "-o", "json"}},
		{"cat", []string{"apply", "view-last-applied", "configmap/cm-TOOL", "-o", "json"}},
		{"cat", []string{"get", "configmap", "cm-TOOL", "-o", "jsonpath={.data} {.metadata.managedFields[*].manager}"}},
		{"cat", []string{"apply", "edit-last-applied", "configmap/none-TOOL"}},
		{"cat", []string{"apply", "edit-last-applied", "-f", "DIR/cm-TOOL.yaml", "configmap/cm-TOOL"}},
		{"cat", []string{"apply", "edit-last-applied"}},
	} {
		p.env = []string{"EDITOR=" + c.editor}
		p.check(t, same{args: toolArgs(c.step, "kubectl", dir, "-n", ns), kdynArgs: toolArgs(c.step, "kdyn", dir, "-n", ns), norm: tmpNorm, stderr: true})
	}
	p.env = nil
	// An object without the annotation (kdyn lists only the -o formats it
	// has, where kubectl names kyaml too).
	ocm := writeFile(t, dir, "other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bare\n")
	p.kubectl(t, "", "create", "-n", ns, "-f", ocm)
	p.env = []string{"EDITOR=cat"}
	p.check(t, same{args: []string{"apply", "edit-last-applied", "configmap/bare", "-n", ns}, stderr: true})
	p.check(t, same{args: []string{"apply", "edit-last-applied", "configmap/cm-kubectl", "-n", ns, "-o", "name"}, kdynArgs: []string{"apply", "edit-last-applied", "configmap/cm-kdyn", "-n", ns, "-o", "name"}})
	p.env = nil
}

// --record writes the command line into kubernetes.io/change-cause as
// kubectl does (label, annotate, patch, create, apply, scale, set and run;
// the deprecation warning on stderr too).
func TestRecordMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	dir := t.TempDir()
	for _, tool := range []string{"kubectl", "kdyn"} {
		for _, n := range []string{"cm", "applied"} {
			writeFile(t, dir, n+"-"+tool+".yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+n+"-"+tool+"\ndata:\n  a: \"1\"\n")
		}
	}
	// The change cause names the program and every flag given: kdyn's
	// own --cache-dir and its name aside, the two must agree.
	norm := func(b []byte) []byte {
		b = toolNames(regexp.MustCompile(` --cache-dir=\S+`).ReplaceAll(b, nil))
		return bytes.ReplaceAll(b, []byte("kdyn "), []byte("kubectl "))
	}
	for _, s := range [][]string{
		{"create", "-f", "DIR/cm-TOOL.yaml", "--record"},
		{"label", "configmap", "cm-TOOL", "a=b", "--record=true"},
		{"annotate", "configmap", "cm-TOOL", "note=x", "--record"},
		{"label", "configmap", "cm-TOOL", "c=d", "--record=false"},
		{"patch", "configmap", "cm-TOOL", "-p", `{"data":{"b":"2"}}`, "--record"},
		{"apply", "-f", "DIR/applied-TOOL.yaml", "--record"},
		{"get", "configmaps", "cm-TOOL", "applied-TOOL", "-o", `jsonpath={range .items[*]}{.metadata.annotations.kubernetes\.io/change-cause}{"\n"}{end}`},
		{"create", "deployment", "dep-TOOL", "--image=nginx"},
		{"scale", "deployment", "dep-TOOL", "--replicas=0", "--record"},
		{"set", "image", "deployment/dep-TOOL", "nginx=nginx:1.27", "--record"},
		{"run", "pod-TOOL", "--image=nginx", "--record"},
		{"get", "deployment/dep-TOOL", "pod/pod-TOOL", "-o", `jsonpath={range .items[*]}{.metadata.annotations.kubernetes\.io/change-cause}{"\n"}{end}`},
	} {
		p.check(t, same{args: toolArgs(s, "kubectl", dir, "-n", ns), kdynArgs: toolArgs(s, "kdyn", dir, "-n", ns), norm: norm, stderr: true})
	}
}

// patch, label and annotate -f name the objects by manifests, and --local
// changes the manifests' objects without the server: a strategic merge
// patch is refused for a custom resource, in kubectl's words.
func TestPatchManifestsMatchKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	p.kubectl(t, describeCRD, "apply", "-f", "-")
	p.kubectl(t, "", "wait", "--for=condition=Established", "crd/widgets.describe.example.com")
	dir := t.TempDir()
	write := func(name, content string) string { return writeFile(t, dir, name, content) }
	for _, tool := range []string{"kubectl", "kdyn"} {
		write("cm-"+tool+".yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-"+tool+"\ndata:\n  a: \"1\"\n")
		p.kubectl(t, "", "create", "-n", ns, "-f", filepath.Join(dir, "cm-"+tool+".yaml"))
	}
	widget := write("widget.yaml", describeWidget)
	norm := func(b []byte) []byte {
		b = regexp.MustCompile(`"(uid|resourceVersion|creationTimestamp)": "[^"]*"`).ReplaceAll(b, []byte(`"$1": "X"`))
		b = regexp.MustCompile(`(?s)"managedFields": \[.*?\n        \],?\n`).ReplaceAll(b, nil)
		return toolNames(b)
	}
	for _, s := range [][]string{
		{"patch", "--local", "-f", "DIR/cm-TOOL.yaml", "-p", `{"data":{"a":"2"}}`, "-o", "json"},
		{"patch", "--local", "-f", "DIR/cm-TOOL.yaml", "-p", `{"data":{"b":"3"}}`},
		{"patch", "--local", "-f", widget, "-p", `{"spec":{"size":4}}`},
		{"patch", "--local", "-f", widget, "-p", `{"spec":{"size":4}}`, "--type=merge", "-o", "yaml"},
		{"patch", "-f", "DIR/cm-TOOL.yaml", "-p", `{"data":{"c":"4"}}`},
		{"get", "configmap", "cm-TOOL", "-o", "jsonpath={.data}"},
		{"label", "--local", "-f", "DIR/cm-TOOL.yaml", "tier=web", "-o", "json"},
		{"label", "--local", "-f", "DIR/cm-TOOL.yaml", "tier=web"},
		{"annotate", "--local", "-f", "DIR/cm-TOOL.yaml", "note=x", "-o", "yaml"},
		{"label", "--local", "-f", "DIR/cm-TOOL.yaml", "tier=web", "--dry-run=server"},
		{"label", "--local", "configmap", "cm-TOOL", "tier=web"},
		{"annotate", "--local", "note=x"},
		{"annotate", "--local", "configmap", "cm-TOOL", "note=x"},
		{"label", "--local", "tier=web"},
		{"label", "-f", "DIR/cm-TOOL.yaml", "tier=live"},
		{"annotate", "-f", "DIR/cm-TOOL.yaml", "note=live"},
		{"label", "-f", "DIR/cm-TOOL.yaml", "configmap", "tier=again"},
		{"get", "configmap", "cm-TOOL", "-o", "jsonpath={.metadata.labels.tier} {.metadata.annotations.note}"},
	} {
		p.check(t, same{args: toolArgs(s, "kubectl", dir, "-n", ns), kdynArgs: toolArgs(s, "kdyn", dir, "-n", ns), norm: norm, stderr: true})
	}
}

// edit and create --edit with kubectl's editor protocol: the file shown
// (EDITOR=cat prints it), a cancelled edit, an edit by a script, several
// objects as one List, Windows line endings, the objects a file names.
func TestEditMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	dir := t.TempDir()
	for _, tool := range []string{"kubectl", "kdyn"} {
		writeFile(t, dir, "cm-"+tool+".yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-"+tool+"\ndata:\n  a: mock\n")
	}
	sed := writeFile(t, dir, "editor.sh", "#!/bin/sh\nsed -i 's/mock/modified/g' \"$1\"\n")
	edited := writeFile(t, dir, "editor2.sh", "#!/bin/sh\nsed -i 's/modified/edited/g' \"$1\"\n")
	for _, script := range []string{sed, edited} {
		if err := os.Chmod(script, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	norm := func(b []byte) []byte {
		b = regexp.MustCompile(`("?)(uid|resourceVersion|creationTimestamp)("?): .*`).ReplaceAll(b, []byte(`$1$2$3: X`))
		b = regexp.MustCompile(`/tmp/[^ "]*`).ReplaceAll(b, []byte(`TMPFILE`))
		return toolNames(b)
	}
	for _, c := range []struct {
		editor string
		step   []string
	}{
		{"cat", []string{"create", "--edit", "-f", "DIR/cm-TOOL.yaml"}},
		{"cat", []string{"create", "--edit", "-f", "DIR/cm-TOOL.yaml", "-o", "json"}},
		{sed, []string{"create", "--edit", "-f", "DIR/cm-TOOL.yaml"}},
		{"cat", []string{"edit", "configmap", "cm-TOOL"}},
		{"cat", []string{"edit", "configmap", "cm-TOOL", "-o", "json"}},
		{"cat", []string{"edit", "configmap", "cm-TOOL", "--windows-line-endings"}},
		{sed, []string{"get", "configmap", "cm-TOOL", "-o", "jsonpath={.data.a}"}},
		{edited, []string{"edit", "configmap", "cm-TOOL", "--output-patch"}},
		{"cat", []string{"get", "configmap", "cm-TOOL", "-o", "jsonpath={.data.a} {.metadata.managedFields[*].manager}"}},
		{"cat", []string{"edit", "configmap"}},
		{"cat", []string{"edit", "-f", "DIR/cm-TOOL.yaml"}},
		{"cat", []string{"edit", "-f", "DIR/cm-TOOL.yaml", "-o", "json"}},
		{"cat", []string{"edit"}},
		{"cat", []string{"edit", "-f", "DIR/cm-TOOL.yaml", "configmap", "cm-TOOL"}},
	} {
		p.env = []string{"EDITOR=" + c.editor}
		p.check(t, same{args: toolArgs(c.step, "kubectl", dir, "-n", ns), kdynArgs: toolArgs(c.step, "kdyn", dir, "-n", ns), norm: norm, stderr: true})
	}
}

// toolArgs is a step of a comparison for one tool: TOOL in each argument
// becomes the tool's name (each tool works on objects of its own), DIR the
// directory of the step's files; extra follows.
func toolArgs(step []string, tool, dir string, extra ...string) []string {
	out := make([]string, 0, len(step)+len(extra))
	for _, a := range step {
		out = append(out, strings.ReplaceAll(strings.ReplaceAll(a, "TOOL", tool), "DIR", dir))
	}
	return append(out, extra...)
}

// toolNames makes the two tools' outputs comparable: the names of their
// objects, "-kubectl" and "-kdyn", read "-TOOL".
func toolNames(b []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("-kubectl"), []byte("-TOOL")), []byte("-kdyn"), []byte("-TOOL"))
}

// writeFile writes content to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A ConfigMap applied client-side, then server-side (kubectl migrates its
// fields to the server-side apply manager), then server-side without a
// key: the key goes, as with kubectl.
func TestServerSideApplyMigrationMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	dir := t.TempDir()
	for i, data := range []string{"  key: value\n  legacy: unused\n", "  key: value\n  ssaKey: ssaValue\n", "  key: value\n  ssaKey: ssaValue\n  csaKey: csaValue\n"} {
		for _, tool := range []string{"kubectl", "kdyn"} {
			writeFile(t, dir, fmt.Sprintf("cm%d-%s.yaml", i, tool), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mig-"+tool+"\ndata:\n"+data)
		}
	}
	for _, step := range [][]string{
		{"apply", "--server-side=false", "-f", "DIR/cm0-TOOL.yaml"},
		{"apply", "--server-side", "-f", "DIR/cm0-TOOL.yaml"},
		{"apply", "--server-side", "-f", "DIR/cm1-TOOL.yaml"},
		{"get", "configmap", "mig-TOOL", "-o", "jsonpath={.data} {.metadata.managedFields[*].manager} {.metadata.managedFields[*].operation}"},
		{"apply", "--server-side=false", "-f", "DIR/cm2-TOOL.yaml"},
		{"get", "configmap", "mig-TOOL", "-o", "jsonpath={.data}"},
	} {
		p.check(t, same{args: toolArgs(step, "kubectl", dir, "-n", ns), kdynArgs: toolArgs(step, "kdyn", dir, "-n", ns), norm: toolNames, stderr: true})
	}
}
