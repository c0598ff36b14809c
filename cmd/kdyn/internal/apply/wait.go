package apply

import (
	"context"
	"io"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/readiness"
)

// This file holds apply --wait: after the writes, wait until every object
// applied is ready (readiness.Compute says Current), watching them.

// appliedObjects collects the objects a run wrote, for --wait.
type appliedObjects struct {
	mu      sync.Mutex // objects are applied concurrently
	targets []cli.ReadyTarget
}

// record wraps do so that each object it writes is remembered.
func (a *appliedObjects) record(do applyFunc) applyFunc {
	return func(ctx context.Context, t *cli.ManifestTarget, out io.Writer) (*unstructured.Unstructured, error) {
		res, err := do(ctx, t, out)
		if err == nil {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.targets = append(a.targets, cli.ReadyTarget{
				GVR: t.Mapping.Resource, Namespace: t.Obj.GetNamespace(), Name: t.Obj.GetName(), Display: t.Name,
			})
		}
		return res, err
	}
}

// wait waits up to timeout for the recorded objects to be ready, printing
// "KIND/NAME ready" as each becomes so (unless quiet, when -o prints the
// objects). The error names every object not ready and why.
func (a *appliedObjects) wait(ctx context.Context, f *cli.Factory, timeout time.Duration, quiet bool) error {
	if len(a.targets) == 0 {
		return nil
	}
	client, err := f.DynamicClient()
	if err != nil {
		return err
	}
	return cli.WaitReady(ctx, client, a.targets, timeout, func(t cli.ReadyTarget, _ readiness.Result) {
		cli.Summary(f, quiet, t.Display, "ready")
	})
}
