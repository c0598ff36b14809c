package wait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/readiness"
	"github.com/kdyn/kdyn/restmapper"
)

type waitOptions struct {
	forConds []string
	timeout  time.Duration
	sel      cli.Selection
	output   string
}

// NewCommand returns "kdyn wait".
func NewCommand(f *cli.Factory) *cobra.Command {
	o := &waitOptions{}
	cmd := &cobra.Command{
		Use:   "wait (TYPE NAME... | TYPE/NAME... | TYPE -l SELECTOR | TYPE --all) --for=create|delete|ready|condition=NAME[=VALUE]|jsonpath='{PATH}'[=VALUE] [--for=...] [--timeout=30s]",
		Short: "Wait for a specific condition on one or many resources",
		Long: `Wait until every given object meets the --for conditions.

  --for=create                 the object exists
  --for=ready                  the object is ready: its status is Current by
                               kstatus's rules (observedGeneration caught up,
                               no Reconciling or Stalled condition, the rules
                               of Deployments, StatefulSets, DaemonSets, Jobs,
                               Pods, PVCs, Services and CRDs, else a Ready
                               condition; see 'go doc
                               github.com/kdyn/kdyn/readiness'). On timeout
                               each object is named with its status and why
  --for=delete                 the object is gone (or was replaced by one with
                               another UID)
  --for=condition=NAME[=VALUE] status.conditions has an entry of type NAME
                               whose status is VALUE (default true; both
                               compared without regard to case), observed at
                               the object's current generation
  --for=jsonpath=PATH[=VALUE]  the JSONPath finds exactly one value and, with
                               =VALUE, it prints as VALUE; without =VALUE any
                               value counts, even "" or false

--for may be repeated: all conditions must hold at once for each object.
With -l or --all, the objects are those that match when the command starts
(with --for=create, those that appear, at least one).

kdyn lists the objects once and then follows a watch from the list's
resourceVersion: nothing is polled. A watch the server closes is resumed
where it stopped, and an expired resourceVersion (410 Gone) is answered by
listing again. "KIND/NAME condition met" is printed for each object as it
meets the conditions (kubectl prints the same for --for=delete).

--timeout bounds the whole wait (default 30s; 0 checks once without waiting;
negative waits a week). On timeout kdyn reports every object still waited
for and exits 1, or 7 with --exit-codes.`,
		Example: `  # Wait for a condition of a custom resource
  kdyn wait --for=condition=Ready widget/w1

  # Wait until a deployment and a custom resource are ready, whatever their kinds
  kdyn wait --for=ready deploy/web widget/w1 --timeout=5m

  # Wait for a condition to be False
  kdyn wait --for=condition=Ready=false pod/busybox1

  # Wait for a field to have a value
  kdyn wait --for=jsonpath='{.status.phase}'=Running pod/busybox1

  # A JSONPath filter, quoted as a whole
  kdyn wait --for='jsonpath={.status.conditions[?(@.type=="Ready")].status}=True' pod/busybox1

  # Wait for a field to exist, whatever its value
  kdyn wait --for=jsonpath='{.status.loadBalancer.ingress}' svc/lb

  # Several conditions at once
  kdyn wait --for=condition=Available --for=jsonpath='{.status.readyReplicas}'=3 deploy/web

  # Wait for an object to be created, then deleted
  kdyn wait --for=create cm/settings --timeout=1m
  kdyn wait --for=delete cm/settings --timeout=60s

  # Every pod with a label, across namespaces
  kdyn wait pods -l app=web -A --for=condition=Ready --timeout=5m`,
		RunE: func(cmd *cobra.Command, args []string) error { return runWait(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&o.forConds, "for", nil, "The condition to wait for: create, delete, ready, condition=NAME[=VALUE] or jsonpath='{PATH}'[=VALUE] (repeatable; all must hold).")
	_ = cmd.RegisterFlagCompletionFunc("for", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"create", "delete", "ready", "condition=", "jsonpath="}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
	fl.DurationVar(&o.timeout, "timeout", 30*time.Second, "How long to wait; 0 checks once, negative waits a week.")
	fl.StringVarP(&o.sel.Selector, "selector", "l", "", "Label selector of the objects to wait for (e.g. -l app=web).")
	fl.StringVar(&o.sel.FieldSelector, "field-selector", "", "Field selector of the objects to wait for.")
	fl.BoolVar(&o.sel.All, "all", false, "Wait for every object of the given types in the namespace.")
	fl.BoolVarP(&o.sel.AllNamespaces, "all-namespaces", "A", false, "With -l or --all, select objects in every namespace.")
	cli.AddOutputFlags(fl, &o.output, "Output format for each object that meets the conditions: name, json, yaml, jsonl, jsonpath=..., gjson=... (default: \"KIND/NAME condition met\").")
	return cmd
}

// waitCondKind is the kind of a --for condition.
type waitCondKind int

const (
	waitForDelete waitCondKind = iota + 1
	waitForCreate
	waitForCondition
	waitForJSONPath
	waitForReady
)

// waitCond is one parsed --for.
type waitCond struct {
	kind waitCondKind
	text string
	// condition=NAME=VALUE
	condType   string
	condStatus string
	// jsonpath=PATH=VALUE
	path     *jsonpath.JSONPath
	value    string
	anyValue bool
}

// parseWaitConds parses every --for and checks they can hold together.
func parseWaitConds(list []string) ([]waitCond, error) {
	if len(list) == 0 {
		return nil, cli.Usagef("--for is required: --for=create, --for=delete, --for=ready, --for=condition=NAME[=VALUE] or --for=jsonpath='{PATH}'[=VALUE]")
	}
	var out []waitCond
	hasDelete := false
	for _, s := range list {
		c, err := parseWaitCond(s)
		if err != nil {
			return nil, err
		}
		if c.kind == waitForDelete {
			hasDelete = true
		}
		out = append(out, c)
	}
	if hasDelete && len(out) > 1 {
		return nil, cli.Usagef("--for=delete cannot be combined with other conditions")
	}
	return out, nil
}

func parseWaitCond(s string) (waitCond, error) {
	switch strings.ToLower(s) {
	case "delete":
		return waitCond{kind: waitForDelete, text: s}, nil
	case "create":
		return waitCond{kind: waitForCreate, text: s}, nil
	case "ready":
		return waitCond{kind: waitForReady, text: s}, nil
	}
	if rest, ok := strings.CutPrefix(s, "condition="); ok {
		name, value, found := strings.Cut(rest, "=")
		if !found {
			value = "true"
		}
		if name == "" {
			return waitCond{}, cli.Usagef("--for=%s: the condition name is empty", s)
		}
		return waitCond{kind: waitForCondition, text: s, condType: name, condStatus: value}, nil
	}
	if rest, ok := strings.CutPrefix(s, "jsonpath="); ok {
		expr, value, hasValue := splitJSONPathCond(rest)
		if strings.TrimSpace(expr) == "" {
			return waitCond{}, cli.Usagef("jsonpath expression cannot be empty")
		}
		rel, err := printers.RelaxedJSONPath(expr)
		if err != nil {
			return waitCond{}, cli.Usagef("--for=%s: %v", s, err)
		}
		j, err := printers.ParseJSONPath("wait", rel)
		if err != nil {
			return waitCond{}, cli.Usagef("--for=%s: %v", s, err)
		}
		c := waitCond{kind: waitForJSONPath, text: s, path: j, anyValue: !hasValue}
		if hasValue {
			c.value = strings.Trim(value, `'"`)
			if c.value == "" {
				return waitCond{}, cli.Usagef("jsonpath wait has to have a value after equal sign, like --for=jsonpath='{.status.readyReplicas}'=3")
			}
		}
		return c, nil
	}
	return waitCond{}, cli.Usagef("unrecognized condition: %q", s)
}

// splitJSONPathCond splits "PATH=VALUE" at the first "=" outside braces,
// brackets, parentheses and quotes that is not part of "==" (or "!=",
// "<=", ">="), so filters like {.a[?(@.b=="c")].d}=e work unquoted.
func splitJSONPathCond(s string) (expr, value string, hasValue bool) {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '{' || c == '[' || c == '(':
			depth++
		case c == '}' || c == ']' || c == ')':
			depth--
		case c == '=' && depth <= 0:
			if i+1 < len(s) && s[i+1] == '=' {
				i++
				continue
			}
			if i > 0 && strings.IndexByte("=!<>", s[i-1]) >= 0 {
				continue
			}
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// met reports whether obj (nil when the object does not exist) meets c.
func (c waitCond) met(obj *unstructured.Unstructured) (bool, error) {
	switch c.kind {
	case waitForDelete:
		return obj == nil, nil
	case waitForCreate:
		return obj != nil, nil
	}
	if obj == nil {
		return false, nil
	}
	switch c.kind {
	case waitForCondition:
		return conditionMet(obj, c.condType, c.condStatus), nil
	case waitForReady:
		res, err := readiness.Compute(obj)
		return res.Ready(), err
	}
	return c.jsonPathMet(obj)
}

// conditionMet looks for a status.conditions entry of type name (any case)
// with the wanted status (any case). An entry observed at an older
// generation than the object's does not count yet.
func conditionMet(obj *unstructured.Unstructured, name, want string) bool {
	status, _ := obj.Object["status"].(map[string]any)
	conds, ok := status["conditions"].([]any)
	if !ok {
		return false
	}
	generation, hasGeneration, _ := unstructured.NestedInt64(obj.Object, "metadata", "generation")
	for _, raw := range conds {
		cond, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := cond["type"].(string)
		if !strings.EqualFold(typ, name) {
			continue
		}
		st, ok := cond["status"].(string)
		if !ok {
			continue
		}
		if hasGeneration {
			observed, found, _ := unstructured.NestedInt64(cond, "observedGeneration")
			if !found {
				observed, found, _ = unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
			}
			if found && observed < generation {
				return false
			}
		}
		return strings.EqualFold(st, want)
	}
	return false
}

// jsonPathMet evaluates the JSONPath the way kubectl's wait does: it must
// find exactly one value; without a wanted value any value counts, else the
// value (a scalar) printed with %v must equal it, ignoring surrounding
// blanks. The JSONPath is evaluated directly rather than through
// printers.ColumnValue, which cannot tell "found nothing" from "<none>" or
// one value from several joined by commas.
func (c waitCond) jsonPathMet(obj *unstructured.Unstructured) (bool, error) {
	results, err := printers.SafeFindResults(c.path, obj.Object)
	if err != nil {
		return false, fmt.Errorf("--for=%s: %v", c.text, err)
	}
	if len(results) == 0 || len(results[0]) == 0 {
		return false, nil
	}
	if len(results) > 1 {
		return false, fmt.Errorf("--for=%s: given jsonpath expression matches more than one list", c.text)
	}
	if len(results[0]) > 1 {
		return false, fmt.Errorf("--for=%s: given jsonpath expression matches more than one value", c.text)
	}
	if c.anyValue {
		return true, nil
	}
	v := results[0][0].Interface()
	switch v.(type) {
	case map[string]any, []any:
		return false, fmt.Errorf("--for=%s: jsonpath leads to a nested object or list which is not supported", c.text)
	}
	return strings.TrimSpace(fmt.Sprintf("%v", v)) == strings.TrimSpace(c.value), nil
}

// allMet reports whether obj meets every condition.
func allMet(conds []waitCond, obj *unstructured.Unstructured) (bool, error) {
	for _, c := range conds {
		ok, err := c.met(obj)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// waitTimeoutError is a wait that ran out of time (errors.Is ErrTimeout,
// so --exit-codes exits 7).
type waitTimeoutError struct{ msg string }

func (e *waitTimeoutError) Error() string { return e.msg }
func (e *waitTimeoutError) Unwrap() error { return cli.ErrTimeout }

var errNoMatchingResources = errors.New("no matching resources found")

func runWait(ctx context.Context, f *cli.Factory, o *waitOptions, args []string) error {
	conds, err := parseWaitConds(o.forConds)
	if err != nil {
		return err
	}
	p, err := cli.NewResultPrinter(f.Streams.Out, o.output, false)
	if err != nil {
		return err
	}
	matches, ns, err := cli.ResolveSelection(ctx, f, args, o.sel)
	if err != nil {
		return err
	}
	client, err := f.DynamicClient()
	if err != nil {
		return err
	}
	w := &waiter{f: f, client: client, conds: conds, p: p, once: o.timeout == 0, sel: o.sel}
	for _, c := range conds {
		switch c.kind {
		case waitForDelete:
			w.forDelete = true
		case waitForCreate:
			w.forCreate = true
		case waitForReady:
			w.forReady = true
		}
	}
	groups := waitGroups(matches, ns, o.sel)

	wctx, cancel := ctx, context.CancelFunc(func() {})
	switch {
	case o.timeout > 0:
		wctx, cancel = context.WithTimeout(ctx, o.timeout)
	case o.timeout < 0:
		wctx, cancel = context.WithTimeout(ctx, 7*24*time.Hour)
	}
	defer cancel()

	type groupResult struct {
		unmet []unmetTarget
		err   error
	}
	results := make([]groupResult, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unmet, err := w.runGroup(wctx, g)
			results[i] = groupResult{unmet, err}
			if err != nil {
				cancel() // one failure ends the whole wait
			}
		}()
	}
	wg.Wait()
	var unmet []unmetTarget
	for _, r := range results {
		if r.err != nil {
			return r.err
		}
		unmet = append(unmet, r.unmet...)
	}
	if len(unmet) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	format := "timed out waiting for the condition on %s"
	if w.once {
		format = "condition not met for %s"
	}
	msg := func(t unmetTarget) error {
		m := fmt.Sprintf(format, t.ObjectName())
		if t.why != "" {
			m += ": " + t.why
		}
		return &waitTimeoutError{m}
	}
	for _, t := range unmet[:len(unmet)-1] {
		cli.PrintError(f.Streams.ErrOut, msg(t))
	}
	return msg(unmet[len(unmet)-1])
}

// unmetTarget is an object that did not meet the conditions in time, and
// with --for=ready why not: its status ("InProgress: Available: 1/3").
type unmetTarget struct {
	cli.Target
	why string
}

// waitGroup is one type in one namespace, watched as one stream.
type waitGroup struct {
	match restmapper.Match
	ns    string   // "" for all namespaces or a cluster-scoped type
	names []string // named objects, in argument order; nil with a selector
}

// waitGroups puts named objects of the same type together.
func waitGroups(matches []restmapper.Match, ns string, sel cli.Selection) []waitGroup {
	var out []waitGroup
	index := map[string]int{}
	for _, m := range matches {
		key := m.GVR.String()
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, waitGroup{match: m, ns: cli.NamespaceFor(m, ns)})
		}
		if !sel.Selecting() && m.Name != "" {
			out[i].names = append(out[i].names, m.Name)
		}
	}
	return out
}

type waiter struct {
	f         *cli.Factory
	client    dynamic.Interface
	conds     []waitCond
	p         *cli.ResultPrinter
	sel       cli.Selection
	once      bool // --timeout=0: check once, no watch
	forDelete bool
	forCreate bool
	forReady  bool // say why each object left is not ready

	mu sync.Mutex // serializes output
}

type waitKey struct{ ns, name string }

// groupWait is the state of one group's wait: what the list and watch say
// exists, and which targets are done. Once a target meets the conditions
// it is done for good, as in kubectl, which checks objects one by one.
type groupWait struct {
	w       *waiter
	g       waitGroup
	dynamic bool // targets are whatever appears (selector with --for=create)
	targets []waitKey
	want    map[waitKey]bool
	state   map[waitKey]*unstructured.Unstructured
	last    map[waitKey]*unstructured.Unstructured // last version seen, for printing
	uids    map[waitKey]types.UID                  // first UID seen, for --for=delete
	done    map[waitKey]bool
	ndone   int
}

func (w *waiter) runGroup(ctx context.Context, g waitGroup) ([]unmetTarget, error) {
	gw := &groupWait{w: w, g: g, want: map[waitKey]bool{}, done: map[waitKey]bool{}, last: map[waitKey]*unstructured.Unstructured{}, uids: map[waitKey]types.UID{}}
	for _, n := range g.names {
		k := waitKey{g.ns, n}
		if !gw.want[k] {
			gw.want[k] = true
			gw.targets = append(gw.targets, k)
		}
	}
	rc := w.client.Resource(g.match.GVR).Namespace(g.ns)
	opts := w.sel.ListOptions()
	if len(g.names) == 1 {
		opts.FieldSelector = "metadata.name=" + g.names[0]
	}
	first := true
	err := cli.Follow(ctx, rc, opts, informer.FollowFuncs[*unstructured.Unstructured]{
		Listed: func(items []*unstructured.Unstructured) (bool, error) {
			gw.listed(items)
			if first {
				first = false
				if done, err := gw.firstList(); done || err != nil {
					return done, err
				}
			}
			if err := gw.check(); err != nil {
				return false, err
			}
			return gw.finished() || w.once, nil
		},
		Event: gw.event,
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return gw.unmet(), nil // out of time: report what is left
	case err != nil:
		return nil, err
	}
	return gw.unmet(), nil
}

// firstList settles, after the first list, which objects a selector
// waits for: those that match now. With none, --for=delete is done at
// once, --for=create waits for whatever appears, and the others fail.
func (gw *groupWait) firstList() (done bool, err error) {
	if gw.g.names != nil {
		return false, nil
	}
	for k := range gw.state {
		gw.want[k] = true
		gw.targets = append(gw.targets, k)
	}
	sortWaitKeys(gw.targets)
	if len(gw.targets) > 0 {
		return false, nil
	}
	switch w := gw.w; {
	case w.forDelete:
		return true, nil
	case w.forCreate && !w.once:
		gw.dynamic = true
		return false, nil
	default:
		return false, errNoMatchingResources
	}
}

func sortWaitKeys(keys []waitKey) {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && (keys[j].ns < keys[j-1].ns || keys[j].ns == keys[j-1].ns && keys[j].name < keys[j-1].name); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}

func (gw *groupWait) wanted(k waitKey) bool { return gw.dynamic || gw.want[k] }

// listed replaces the state with a fresh list.
func (gw *groupWait) listed(items []*unstructured.Unstructured) {
	gw.state = map[waitKey]*unstructured.Unstructured{}
	for _, obj := range items {
		k := waitKey{obj.GetNamespace(), obj.GetName()}
		if gw.g.names != nil && !gw.want[k] {
			continue
		}
		gw.seen(k, obj)
	}
}

// seen records that obj exists now.
func (gw *groupWait) seen(k waitKey, obj *unstructured.Unstructured) {
	gw.state[k] = obj
	gw.last[k] = obj
	if _, ok := gw.uids[k]; !ok {
		gw.uids[k] = obj.GetUID()
	}
}

func (gw *groupWait) finished() bool {
	return len(gw.targets) > 0 && gw.ndone == len(gw.targets)
}

func (gw *groupWait) unmet() []unmetTarget {
	var out []unmetTarget
	for _, k := range gw.targets {
		if gw.done[k] {
			continue
		}
		u := unmetTarget{Target: cli.Target{Match: gw.g.match, Namespace: k.ns, Name: k.name}}
		if gw.w.forReady {
			if res, err := readiness.Compute(gw.state[k]); err != nil {
				u.why = err.Error()
			} else {
				u.why = res.String()
			}
		}
		out = append(out, u)
	}
	if len(gw.targets) == 0 && gw.dynamic {
		// Waiting for any object to appear: report the type.
		out = append(out, unmetTarget{Target: cli.Target{Match: gw.g.match, Name: "(" + gw.w.sel.Describe() + ")"}})
	}
	return out
}

// check evaluates the targets not done yet and prints those that meet the
// conditions. An object waited for with a condition (not create) that
// does not exist is an error, as in kubectl.
func (gw *groupWait) check() error {
	w := gw.w
	for _, k := range gw.targets {
		if gw.done[k] {
			continue
		}
		obj := gw.state[k]
		if obj != nil && w.forDelete && gw.uids[k] != "" && obj.GetUID() != gw.uids[k] {
			obj = nil // deleted and created again: the object waited for is gone
		}
		if obj == nil && !w.forCreate && !w.forDelete {
			return apierrors.NewNotFound(gw.g.match.GVR.GroupResource(), k.name)
		}
		ok, err := allMet(w.conds, obj)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		gw.done[k] = true
		gw.ndone++
		shown := gw.last[k]
		if shown == nil {
			shown = &unstructured.Unstructured{}
			shown.SetGroupVersionKind(gw.g.match.GVK)
			shown.SetNamespace(k.ns)
			shown.SetName(k.name)
		}
		w.mu.Lock()
		err = w.p.Print(gw.g.match.GVK.GroupKind(), k.name, "condition met", shown)
		w.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// event applies one watch event and checks the targets again.
func (gw *groupWait) event(typ watch.EventType, u *unstructured.Unstructured) (bool, error) {
	k := waitKey{u.GetNamespace(), u.GetName()}
	if !gw.wanted(k) {
		return false, nil
	}
	if gw.dynamic && !gw.want[k] && typ != watch.Deleted {
		gw.want[k] = true
		gw.targets = append(gw.targets, k)
	}
	if typ == watch.Deleted {
		gw.last[k] = u
		delete(gw.state, k)
	} else {
		gw.seen(k, u)
	}
	if err := gw.check(); err != nil {
		return false, err
	}
	return gw.finished(), nil
}
