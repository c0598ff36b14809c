package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/restmapper"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// defaultPruneKinds are the kinds kubectl's --prune without --applyset
// considers unless --prune-allowlist names others ("group/version/Kind",
// core for the core group).
var defaultPruneKinds = []string{
	"core/v1/ConfigMap", "core/v1/Endpoints", "core/v1/PersistentVolumeClaim", "core/v1/Pod",
	"core/v1/ReplicationController", "core/v1/Secret", "core/v1/Service",
	"batch/v1/Job", "batch/v1/CronJob", "networking.k8s.io/v1/Ingress",
	"apps/v1/DaemonSet", "apps/v1/Deployment", "apps/v1/ReplicaSet", "apps/v1/StatefulSet",
	"core/v1/Namespace", "core/v1/PersistentVolume",
}

// legacyPrune is kubectl's older --prune, without an ApplySet: after the
// manifests are applied, it deletes the objects of the allowlisted kinds —
// in the namespaces the manifests were applied to, and cluster-scoped
// ones — that match the label selector (every one with --all), carry the
// last-applied-configuration annotation (client-side apply made them) and
// that the manifests do not declare. Unlike an ApplySet it cannot tell the
// objects this set of manifests made from others applied with the same
// labels; kubectl documents it as such.
type legacyPrune struct {
	selector string
	tasks    []listTask
	keep     map[objKey]bool
	dry      cli.DryRunMode
	workers  int
}

// parsePruneKinds maps "group/version/Kind" entries (core for the core
// group) to the server's resources.
func parsePruneKinds(ctx context.Context, mapper *restmapper.Mapper, kinds []string) ([]*meta.RESTMapping, error) {
	var out []*meta.RESTMapping
	for _, k := range kinds {
		parts := strings.Split(k, "/")
		if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
			return nil, cli.Usagef("invalid --prune-allowlist entry %q: it names a kind as GROUP/VERSION/KIND, with core for the core group (core/v1/ConfigMap, apps/v1/Deployment)", k)
		}
		group := parts[0]
		if group == "core" {
			group = ""
		}
		m, err := mapper.RESTMappingWithContext(ctx, schema.GroupKind{Group: group, Kind: parts[2]}, parts[1])
		if err != nil {
			return nil, fmt.Errorf("invalid resource %s: %w", k, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// newLegacyPrune plans a --prune without --applyset for the manifests of
// entries (those -l kept): what they declare is kept, and the namespaces
// they go to are where namespaced kinds are listed.
func newLegacyPrune(ctx context.Context, f *cli.Factory, r *cli.ManifestRun, entries []*cli.ManifestEntry, allowlist []string, selector string, dry cli.DryRunMode, workers int) (*legacyPrune, error) {
	mapper, err := f.RESTMapper()
	if err != nil {
		return nil, err
	}
	if len(allowlist) == 0 {
		allowlist = defaultPruneKinds
	}
	mappings, err := parsePruneKinds(ctx, mapper, allowlist)
	if err != nil {
		return nil, err
	}
	p := &legacyPrune{selector: selector, keep: map[objKey]bool{}, dry: dry, workers: workers}
	namespaces := map[string]bool{}
	scopes := cli.CRDScopes(entries)
	for _, e := range entries {
		pl, err := r.Place(ctx, e, scopes)
		if err != nil {
			continue // the run reports it, and a run with failures prunes nothing
		}
		p.keep[objKey{gk: pl.GroupKind, namespace: pl.Namespace, name: e.Object().GetName()}] = true
		if pl.Namespaced {
			namespaces[pl.Namespace] = true
		}
	}
	nss := make([]string, 0, len(namespaces))
	for ns := range namespaces {
		nss = append(nss, ns)
	}
	slices.Sort(nss)
	for _, m := range mappings {
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			p.tasks = append(p.tasks, listTask{mapping: m})
			continue
		}
		for _, ns := range nss {
			p.tasks = append(p.tasks, listTask{mapping: m, namespace: ns})
		}
	}
	return p, nil
}

// candidates lists what the prune would delete.
func (p *legacyPrune) candidates(ctx context.Context, c dynamic.Interface) ([]pruneCandidate, error) {
	applied := func(obj *unstructured.Unstructured) bool {
		_, ok := obj.GetAnnotations()[kunstructured.LastAppliedAnnotation]
		return ok
	}
	return listCandidates(ctx, c, p.tasks, p.selector, applied, p.keep, p.workers)
}

// finish prunes once every document was applied (when one failed it
// prunes nothing, as kubectl), printing "kind/name pruned" for each
// deletion, and a failed deletion as kubectl words it.
func (p *legacyPrune) finish(ctx context.Context, f *cli.Factory, r *cli.ManifestRun, out cli.OutputSpec, quiet bool) error {
	if r.Failures > 0 {
		return nil
	}
	cands, err := p.candidates(ctx, r.Client)
	if err != nil {
		return err
	}
	printLines := !quiet || out.Kind == cli.OutName
	var firstErr error
	for _, res := range prune(ctx, r.Client, cands, p.dry, p.workers) {
		if res.err != nil {
			fmt.Fprintf(f.Streams.ErrOut, "%s\n", pruneErrorMessage(res))
			if firstErr == nil {
				firstErr = res.err
			}
			continue
		}
		if printLines {
			fmt.Fprintf(f.Streams.Out, "%s pruned%s\n", printers.KindName(res.cand.key.gk, res.cand.key.name), p.dry.Suffix())
		}
	}
	if firstErr != nil {
		return &cli.ExitError{Code: cli.FailureCode(f, firstErr), Silent: true}
	}
	return nil
}

// diff shows the objects the prune would delete as removals.
func (p *legacyPrune) diff(ctx context.Context, r *cli.ManifestRun, d *differ) error {
	cands, err := p.candidates(ctx, r.Client)
	if err != nil {
		return err
	}
	return diffRemovals(d, cands)
}
