package apply

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/restmapper"
)

// pruneFlags are --prune and --applyset, on apply and diff.
type pruneFlags struct {
	prune    bool
	applySet string
	// allowlist overrides the kinds --prune without --applyset considers.
	allowlist []string
	// all (apply's --all) prunes without --applyset and without -l.
	all bool
}

func (p *pruneFlags) addFlags(cmd *cobra.Command, prune string) {
	fl := cmd.Flags()
	fl.BoolVar(&p.prune, "prune", false, prune)
	fl.StringVar(&p.applySet, "applyset", "", "The ApplySet (KEP-3659) whose members --prune considers: [RESOURCE][.GROUP]/NAME of its parent object, a Secret when only NAME is given (namespaced parents take their namespace from -n). kdyn creates a missing Secret or ConfigMap parent; a custom resource parent must exist and its CRD carry the label applyset.kubernetes.io/is-parent-type.")
	fl.StringArrayVar(&p.allowlist, "prune-allowlist", nil, "Without --applyset: the kinds --prune considers, as GROUP/VERSION/KIND (core for the core group; repeatable), instead of kubectl's default list (ConfigMap, Endpoints, PersistentVolumeClaim, Pod, ReplicationController, Secret, Service, Job, CronJob, Ingress, DaemonSet, Deployment, ReplicaSet, StatefulSet, Namespace, PersistentVolume).")
}

// pruneMode is what --prune does: nothing, prune an ApplySet, or prune as
// kubectl's older --prune (legacyPrune).
type pruneMode int

const (
	noPrune pruneMode = iota
	pruneApplySet
	pruneLegacy
)

// check validates the flags; selector is -l (which kubectl refuses with
// --applyset). needSelection refuses a --prune without --applyset that
// names neither -l nor --all, as kubectl's apply does.
func (p *pruneFlags) check(selector string, needSelection bool) (pruneMode, error) {
	switch {
	case p.applySet != "" && !p.prune:
		return noPrune, cli.Usagef("--applyset requires --prune")
	case p.applySet != "" && p.all:
		return noPrune, cli.Usagef("--all is incompatible with --applyset")
	case p.applySet != "" && selector != "":
		return noPrune, cli.Usagef("--selector is incompatible with --applyset")
	case p.applySet != "" && len(p.allowlist) > 0:
		return noPrune, cli.Usagef("--prune-allowlist is incompatible with --applyset")
	case p.all && selector != "":
		return noPrune, cli.Usagef("cannot set --all and --selector at the same time")
	case !p.prune:
		return noPrune, nil
	case p.applySet != "":
		return pruneApplySet, nil
	case needSelection && !p.all && selector == "":
		return noPrune, cli.Usagef("all resources selected for prune without explicitly passing --all. To prune all resources, pass the --all flag. If you did not mean to prune all resources, specify a label selector")
	}
	return pruneLegacy, nil
}

// pruneRun carries one apply --prune --applyset: the set, what this apply
// declares, what it applied.
type pruneRun struct {
	f       *cli.Factory
	set     *applySet
	mapper  *restmapper.Mapper
	dry     cli.DryRunMode
	workers int
	// parentClient writes the parent as kdyn-applyset.
	parentClient dynamic.Interface
	// keep holds the objects this apply declares: never pruned.
	keep map[objKey]bool

	mu      sync.Mutex
	applied []objKey
	failed  []objKey
}

// startApplySet prepares the set before anything is applied, as kubectl's
// BeforeApply (see prepareApplySet), and writes the parent with the kinds
// and namespaces it listed plus this apply's, so that an apply interrupted
// half-way forgets no member.
func startApplySet(ctx context.Context, f *cli.Factory, ref string, r *cli.ManifestRun, entries []*cli.ManifestEntry, dry cli.DryRunMode, validation string, workers int) (*pruneRun, error) {
	p, err := prepareApplySet(ctx, f, ref, r, entries, dry, workers)
	if err != nil {
		return nil, err
	}
	pc, err := f.WriteClient(applySetFieldManager, dry)
	if err != nil {
		return nil, err
	}
	p.parentClient = dynamic.WithFieldValidation(pc, validation)
	if err := p.set.writeParent(ctx, p.parentClient, parentSuperset, dry, p.warn); err != nil {
		return nil, err
	}
	return p, nil
}

// prepareApplySet checks the parent (its type, its tooling, its id), adds
// the part-of label to every object and notes where each goes; it writes
// nothing. Refusals (another tool's set, a bad parent) come before any
// object is sent.
func prepareApplySet(ctx context.Context, f *cli.Factory, ref string, r *cli.ManifestRun, entries []*cli.ManifestEntry, dry cli.DryRunMode, workers int) (*pruneRun, error) {
	mapper, err := f.RESTMapper()
	if err != nil {
		return nil, err
	}
	nsFlag := ""
	if r.ExplicitNS {
		nsFlag = r.Namespace
	}
	parent, err := parseParentRef(ctx, ref, nsFlag, mapper)
	if err != nil {
		return nil, err
	}
	read, err := f.DynamicClient()
	if err != nil {
		return nil, err
	}
	if err := checkParentType(ctx, read, parent); err != nil {
		return nil, err
	}
	set := newApplySet(parent)
	if err := set.fetch(ctx, read); err != nil {
		return nil, err
	}
	if err := set.resolveCurrent(ctx, mapper); err != nil {
		return nil, err
	}
	p := &pruneRun{f: f, set: set, mapper: mapper, dry: dry, workers: workers, keep: map[objKey]bool{}}
	set.labelMembers(entries)
	p.plan(ctx, r, entries)
	return p, nil
}

// plan records where each object goes. Objects that cannot be placed are
// left out: the run reports them, and a run with failures prunes nothing.
func (p *pruneRun) plan(ctx context.Context, r *cli.ManifestRun, entries []*cli.ManifestEntry) {
	scopes := cli.CRDScopes(entries)
	for _, e := range entries {
		if e.Err() != nil {
			continue
		}
		pl, err := r.Place(ctx, e, scopes)
		if err != nil {
			continue
		}
		p.set.add(pl)
		p.keep[objKey{gk: pl.GroupKind, namespace: pl.Namespace, name: e.Object().GetName()}] = true
	}
}

func (p *pruneRun) warn(msg string) { fmt.Fprintf(p.f.Streams.ErrOut, "Warning: %s\n", msg) }

// track wraps an apply function to record what was applied and what
// failed.
func (p *pruneRun) track(do applyFunc) applyFunc {
	return func(ctx context.Context, t *cli.ManifestTarget, out io.Writer) (*unstructured.Unstructured, error) {
		res, err := do(ctx, t, out)
		k := objKey{gk: t.Mapping.GroupVersionKind.GroupKind(), name: t.Obj.GetName()}
		if t.Namespaced() {
			k.namespace = t.Obj.GetNamespace()
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if err == nil {
			p.applied = append(p.applied, k)
		} else {
			p.failed = append(p.failed, k)
		}
		return res, err
	}
}

// members lists the set's members this apply does not declare (the prune
// candidates), warning of each kind the parent lists that the server no
// longer serves.
func (p *pruneRun) members(ctx context.Context, c dynamic.Interface) ([]pruneCandidate, error) {
	tasks, gone, err := p.set.listTasks(ctx, p.mapper)
	if err != nil {
		return nil, err
	}
	for _, gk := range gone {
		p.warn(fmt.Sprintf("the ApplySet %s lists the kind %s, which the server no longer serves; no member of it can be left", p.set.parent, gk))
	}
	return p.set.candidates(ctx, c, tasks, p.keep, p.workers)
}

// finish prunes after the objects were applied, as kubectl's Prune: when
// every document was applied, it deletes the set's members that this apply
// does not declare and then writes the parent with this apply's kinds and
// namespaces only. When something failed it prunes nothing and leaves the
// parent listing both, so nothing is forgotten. Either way a failure ends
// with a summary on stderr of what was applied, pruned and left, and exit
// code 1 (or, with --exit-codes, the first failure's).
func (p *pruneRun) finish(ctx context.Context, r *cli.ManifestRun, out cli.OutputSpec, quiet bool) error {
	cands, listErr := p.members(ctx, r.Client)
	s := &pruneSummary{set: p.set, dry: p.dry, applied: p.applied, failed: p.failed, otherFailures: r.Failures - len(p.failed)}
	if r.Failures > 0 {
		s.left = cands
		s.listErr = listErr
		s.reason = "nothing was pruned because not every object was applied"
		s.write(p.f.Streams.ErrOut)
		return r.Finish()
	}
	if listErr != nil {
		s.listErr = listErr
		s.reason = "nothing was pruned because the set's members could not be listed"
		s.write(p.f.Streams.ErrOut)
		return &cli.ExitError{Code: cli.FailureCode(p.f, listErr), Silent: true}
	}
	printLines := !quiet || out.Kind == cli.OutName
	var firstErr error
	for _, res := range prune(ctx, r.Client, cands, p.dry, p.workers) {
		if res.err != nil {
			if firstErr == nil {
				firstErr = res.err
			}
			s.pruneFailed = append(s.pruneFailed, res)
			fmt.Fprintf(p.f.Streams.ErrOut, "%s\n", pruneErrorMessage(res))
			continue
		}
		s.pruned = append(s.pruned, res.cand)
		if printLines {
			fmt.Fprintf(p.f.Streams.Out, "%s pruned%s\n", printers.KindName(res.cand.key.gk, res.cand.key.name), p.dry.Suffix())
		}
	}
	if firstErr != nil {
		s.reason = "some members could not be pruned"
		s.write(p.f.Streams.ErrOut)
		return &cli.ExitError{Code: cli.FailureCode(p.f, firstErr), Silent: true}
	}
	if err := p.set.writeParent(ctx, p.parentClient, parentLatest, p.dry, p.warn); err != nil {
		return fmt.Errorf("apply and prune succeeded, but ApplySet update failed: %w", err)
	}
	return nil
}

// pruneErrorMessage words a failed deletion: "Error from server
// (Forbidden): error when pruning secret/old -n prod: ...".
func pruneErrorMessage(res pruneResult) string {
	msg := cli.ErrorMessage(res.err)
	if rest, ok := strings.CutPrefix(msg, "error: "); ok {
		return "error: error when pruning " + res.cand.key.String() + ": " + rest
	}
	if i := strings.Index(msg, "): "); strings.HasPrefix(msg, "Error from server (") && i > 0 {
		return msg[:i+3] + "error when pruning " + res.cand.key.String() + ": " + msg[i+3:]
	}
	return "error when pruning " + res.cand.key.String() + ": " + msg
}

// pruneSummary is what an apply --prune that did not finish reports.
type pruneSummary struct {
	set           *applySet
	dry           cli.DryRunMode
	reason        string
	applied       []objKey
	failed        []objKey
	otherFailures int
	pruned        []pruneCandidate
	pruneFailed   []pruneResult
	left          []pruneCandidate
	listErr       error
}

// write prints the summary:
//
//	ApplySet secret/web -n prod: apply --prune did not finish: nothing was pruned because not every object was applied
//	  applied (2):
//	    configmap/a -n prod
//	    configmap/b -n prod
//	  not applied (1):
//	    serviceaccount/robot -n prod
//	  pruned (0)
//	  left in the set, not pruned (1):
//	    configmap/old -n prod
//	  The parent lists the kinds and namespaces of the previous apply and of this one, so the next apply --prune that succeeds prunes what is left.
func (s *pruneSummary) write(w io.Writer) {
	fmt.Fprintf(w, "ApplySet %s: apply --prune did not finish%s: %s\n", s.set.parent, s.dry.Suffix(), s.reason)
	list := func(title string, keys []string) {
		if len(keys) == 0 {
			fmt.Fprintf(w, "  %s (0)\n", title)
			return
		}
		fmt.Fprintf(w, "  %s (%d):\n", title, len(keys))
		for _, k := range keys {
			fmt.Fprintf(w, "    %s\n", k)
		}
	}
	names := func(keys []objKey) []string {
		keys = slices.Clone(keys)
		slices.SortFunc(keys, compareKeys)
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = k.String()
		}
		return out
	}
	candNames := func(cs []pruneCandidate) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.key.String()
		}
		return out
	}
	list("applied", names(s.applied))
	notApplied := names(s.failed)
	if s.otherFailures > 0 {
		notApplied = append(notApplied, fmt.Sprintf("(and %d document(s) that could not be sent, reported above)", s.otherFailures))
	}
	if len(notApplied) > 0 {
		list("not applied", notApplied)
	}
	list("pruned", candNames(s.pruned))
	left := candNames(s.left)
	for _, r := range s.pruneFailed {
		left = append(left, r.cand.key.String()+": "+strings.TrimPrefix(cli.ErrorMessage(r.err), "error: "))
	}
	if s.listErr != nil {
		left = append(left, "(the members could not all be listed: "+strings.TrimPrefix(cli.ErrorMessage(s.listErr), "error: ")+")")
	}
	list("left in the set, not pruned", left)
	if s.dry == cli.DryRunNone {
		fmt.Fprintln(w, "  The parent lists the kinds and namespaces of the previous apply and of this one, so the next apply --prune that succeeds prunes what is left.")
	}
}

// diff gives d, for diff --prune, what apply --prune would change beyond
// the objects: the parent (a forced server-side dry-run apply of what a
// successful apply --prune writes, against the live parent) and each
// member it would prune (the live object against nothing).
func (p *pruneRun) diff(ctx context.Context, f *cli.Factory, r *cli.ManifestRun, d *differ) error {
	live := p.set.live // as fetch read it: diff changes nothing
	pc, err := f.WriteClient(applySetFieldManager, cli.DryRunServer)
	if err != nil {
		return err
	}
	merged, err := p.set.parent.resource(pc).Apply(ctx, p.set.parent.name, p.set.parentPatch(parentLatest), metav1.ApplyOptions{FieldManager: applySetFieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("ApplySet parent %s: %w", p.set.parent, err)
	}
	if err := addObjectDiff(d, diffFileName(merged), live, merged); err != nil {
		return err
	}
	cands, err := p.members(ctx, r.Client)
	if err != nil {
		return err
	}
	return diffRemovals(d, cands)
}

// diffRemovals gives d each candidate as an object that would be deleted.
func diffRemovals(d *differ, cands []pruneCandidate) error {
	for _, c := range cands {
		if err := addObjectDiff(d, diffFileName(c.obj), c.obj, nil); err != nil {
			return err
		}
	}
	return nil
}
