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
	} {
		p.check(t, same{args: args})
	}
	for _, args := range [][]string{
		{"explain", "pods", "--max-depth=2"},
		{"explain", "pods", "--recursive", "--max-depth=-1"},
	} {
		p.check(t, same{args: args, stderr: true})
	}
}
