package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestDescribe: describe prints a pod in kubectl's layout and other kinds
// field by field, with their events; a NAME without an object is a prefix;
// nothing found is an error.
func TestDescribe(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n  labels: {app: web}\nspec:\n  containers:\n  - name: c\n    image: nginx\n    env: [{name: A, value: \"1\"}]\n"
	mfStdin(t, env, pod, "create", "-f", "-", "-n", ns).must(t)
	mfStdin(t, env, strings.Replace(pod, "web-1", "web-2", 1), "create", "-f", "-", "-n", ns).must(t)
	uid := kdyn(t, env, "get", "pod", "web-1", "-n", ns, "-o", "jsonpath={.metadata.uid}").must(t).stdout
	event := "apiVersion: v1\nkind: Event\nmetadata:\n  name: web-1.e\ninvolvedObject: {kind: Pod, name: web-1, namespace: " + ns + ", uid: " + uid + "}\nreason: Testing\nmessage: hello from the test\ntype: Normal\nsource: {component: tester}\n"
	mfStdin(t, env, event, "create", "-f", "-", "-n", ns).must(t)

	// The columns' widths depend on what is in them; compare words.
	words := func(s string) string { return spaces.ReplaceAllString(s, " ") }
	r := kdyn(t, env, "describe", "pod", "web-1", "-n", ns).must(t)
	for _, want := range []string{"Name: web-1\n", "Namespace: " + ns + "\n", "Labels: app=web\n", "Node: <none>\n",
		"Containers:\n c:\n Image: nginx\n", " Environment:\n A: 1\n", "QoS Class: BestEffort\n",
		"Events:\n Type Reason Age From Message\n ---- ------ ---- ---- -------\n Normal Testing ", " tester hello from the test\n"} {
		if !strings.Contains(words(r.stdout), want) {
			t.Errorf("describe pod lacks %q:\n%s", want, r.stdout)
		}
	}
	r = kdyn(t, env, "describe", "pods", "web", "-n", ns, "--show-events=false").must(t)
	if strings.Count(words(r.stdout), "Name: web-") != 2 || !strings.Contains(r.stdout, "\n\nName:") || strings.Contains(r.stdout, "\n\n\nName:") || strings.Contains(r.stdout, "Events:") {
		t.Errorf("describe by prefix:\n%s", r.stdout)
	}
	mfStdin(t, env, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: \"3\"\n", "create", "-f", "-", "-n", ns).must(t)
	r = kdyn(t, env, "describe", "cm/settings", "-n", ns).must(t)
	for _, want := range []string{"Name: settings\n", "API Version: v1\n", "Data:\n Level: 3\n", "Kind: ConfigMap\n", " Resource Version: ", "Events: <none>\n"} {
		if !strings.Contains(words(r.stdout), want) {
			t.Errorf("describe configmap lacks %q:\n%s", want, r.stdout)
		}
	}
	r = kdyn(t, env, "describe", "pod", "nothing", "-n", ns)
	if r.code != 1 || !strings.Contains(r.stderr, `Error from server (NotFound): pods "nothing" not found`) {
		t.Errorf("describe of nothing: exit %d, %q", r.code, r.stderr)
	}
}

var spaces = regexp.MustCompile(` +`)
