package cli_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kdyn/kdyn/integration/testenv"
)

func TestExplainBuiltIn(t *testing.T) {
	env := testenv.Shared(t)

	out := kdyn(t, env, "explain", "deployments").must(t).stdout
	if !strings.HasPrefix(out, "GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nDESCRIPTION:\n    Deployment enables declarative updates for Pods and ReplicaSets.\n") {
		t.Errorf("explain deployments: header:\n%s", out)
	}
	for _, want := range []string{"\nFIELDS:\n  apiVersion\t<string>\n", "  spec\t<DeploymentSpec>"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain deployments lacks %q:\n%s", want, out)
		}
	}

	// A field path through an array, with an enum.
	out = kdyn(t, env, "explain", "pods.spec.containers.imagePullPolicy").must(t).stdout
	want := "KIND:       Pod\nVERSION:    v1\n\nFIELD: imagePullPolicy <string>\nENUM:\n    Always\n    IfNotPresent\n    Never\n\nDESCRIPTION:\n    Image pull policy."
	if !strings.HasPrefix(out, want) {
		t.Errorf("explain pods.spec.containers.imagePullPolicy:\n%s", out)
	}

	out = kdyn(t, env, "explain", "deploy.spec", "--recursive").must(t).stdout
	for _, want := range []string{
		"FIELD: spec <DeploymentSpec>\n\n\nDESCRIPTION:\n",
		"  selector\t<LabelSelector> -required-\n    matchExpressions\t<[]LabelSelectorRequirement>\n      key\t<string> -required-\n",
		"  strategy\t<DeploymentStrategy>\n    rollingUpdate\t<RollingUpdateDeployment>\n      maxSurge\t<IntOrString>\n",
		"\n    type\t<string>\n    enum: Recreate, RollingUpdate\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain deploy.spec --recursive lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Minimum number of seconds") {
		t.Errorf("--recursive printed field descriptions")
	}

	out = kdyn(t, env, "explain", "hpa", "--api-version", "autoscaling/v1").must(t).stdout
	if !strings.HasPrefix(out, "GROUP:      autoscaling\nKIND:       HorizontalPodAutoscaler\nVERSION:    v1\n") {
		t.Errorf("explain hpa --api-version autoscaling/v1:\n%s", out)
	}
	out = kdyn(t, env, "explain", "hpa").must(t).stdout
	if !strings.Contains(out, "VERSION:    v2\n") {
		t.Errorf("explain hpa is not at the preferred version:\n%s", out)
	}
}

func TestExplainErrors(t *testing.T) {
	env := testenv.Shared(t)
	r := kdyn(t, env, "explain", "deploy.spec.nope.deeper")
	if r.code != 1 || r.stdout != "" || r.stderr != "error: field \"spec.nope\" does not exist\n" {
		t.Errorf("unknown field: code %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	r = kdyn(t, env, "explain", "nosuchtype")
	if r.code != 1 || !strings.Contains(r.stderr, `the server doesn't have a resource type "nosuchtype"`) {
		t.Errorf("unknown type: code %d %q", r.code, r.stderr)
	}
	r = kdyn(t, env, "--exit-codes", "explain")
	if r.code != 2 || !strings.Contains(r.stderr, "You must specify the type of resource to explain") {
		t.Errorf("no argument: code %d %q", r.code, r.stderr)
	}
	r = kdyn(t, env, "explain", "deployments", "--api-version", "v1")
	if r.code != 1 || !strings.Contains(r.stderr, `doesn't have a resource type "deployments" in v1`) {
		t.Errorf("wrong --api-version: code %d %q", r.code, r.stderr)
	}
}

// TestExplainCRD explains a CRD created by the test, named with its group.
func TestExplainCRD(t *testing.T) {
	env := testenv.Shared(t)
	group := "explain" + rand.String(6) + ".kdyn.test"
	createDiscoveryTestCRD(t, env, group, "Sprocket", nil, map[string]any{
		"type":        "object",
		"description": "A Sprocket is a wheel with teeth.",
		"properties": map[string]any{
			"spec": map[string]any{
				"type":        "object",
				"description": "What the sprocket should be.",
				"required":    []any{"teeth"},
				"properties": map[string]any{
					"teeth": map[string]any{"type": "integer", "description": "How many teeth."},
					"color": map[string]any{"type": "string", "enum": []any{"red", "green"}},
					"hubs": map[string]any{"type": "array", "items": map[string]any{
						"type":       "object",
						"properties": map[string]any{"bore": map[string]any{"type": "number"}},
					}},
				},
			},
		},
	})
	// The CRD's OpenAPI document is published a moment after it is
	// Established.
	var r result
	deadline := time.Now().Add(30 * time.Second)
	for {
		r = kdyn(t, env, "explain", "sprockets."+group+".spec")
		if r.code == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	r.must(t)
	want := "GROUP:      " + group + "\nKIND:       Sprocket\nVERSION:    v1\n\nFIELD: spec <Object>\n\n\nDESCRIPTION:\n    What the sprocket should be.\n    \nFIELDS:\n" +
		"  color\t<string>\n  enum: red, green\n    <no description>\n\n" +
		"  hubs\t<[]Object>\n    <no description>\n\n" +
		"  teeth\t<integer> -required-\n    How many teeth.\n\n\n"
	if r.stdout != want {
		t.Errorf("explain sprockets.%s.spec:\n%s\nwant:\n%s", group, r.stdout, want)
	}
	r = kdyn(t, env, "explain", "sprocket", "--recursive").must(t)
	for _, want := range []string{"DESCRIPTION:\n    A Sprocket is a wheel with teeth.\n", "  spec\t<Object>\n    color\t<string>\n    enum: red, green\n    hubs\t<[]Object>\n      bore\t<number>\n    teeth\t<integer> -required-\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("explain sprocket --recursive lacks %q:\n%s", want, r.stdout)
		}
	}
	r = kdyn(t, env, "explain", "sprockets.spec.hubs.bore").must(t)
	if !strings.Contains(r.stdout, "FIELD: bore <number>\n") {
		t.Errorf("explain sprockets.spec.hubs.bore:\n%s", r.stdout)
	}
}
