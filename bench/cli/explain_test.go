package cli

import (
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// explain prints what kubectl prints from the OpenAPI v3 documents:
// descriptions, --recursive field trees and their --max-depth, errors.
func TestExplainMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	for _, args := range [][]string{
		{"explain", "pods"},
		{"explain", "deploy.spec.strategy"},
		{"explain", "pods", "--recursive", "--max-depth=1"},
		{"explain", "deployments", "--recursive", "--max-depth=2"},
		{"explain", "deploy.spec", "-R", "--max-depth=3"},
		{"explain", "cronjobs.spec.jobTemplate", "--recursive"},
		{"explain", "pods", "-o", "plaintext-openapiv2"},
		{"explain", "pods.spec.containers", "-o", "plaintext-openapiv2"},
		{"explain", "pods.spec.containers.name", "-o", "plaintext-openapiv2"},
		{"explain", "deploy.spec.template.metadata.labels", "-o", "plaintext-openapiv2"},
		{"explain", "deployments", "--recursive", "--max-depth=2", "-o", "plaintext-openapiv2"},
		{"explain", "cronjobs.spec", "--recursive", "-o", "plaintext-openapiv2"},
		{"explain", "crd.spec.versions.schema", "-o", "plaintext-openapiv2"},
		{"explain", "svc.spec.ports", "-o", "plaintext-openapiv2"},
		{"explain", "nodes.status", "-o", "plaintext-openapiv2"},
	} {
		p.check(t, same{args: args})
	}
	for _, args := range [][]string{
		{"explain", "pods", "--max-depth=2"},
		{"explain", "pods", "--recursive", "--max-depth=-1"},
		{"explain", "pods.spec.nosuch", "-o", "plaintext-openapiv2"},
	} {
		p.check(t, same{args: args, stderr: true})
	}
}
