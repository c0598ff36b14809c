package mutate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// NewCordonCommand returns "kdyn cordon" (desired true) or "kdyn
// uncordon".
func NewCordonCommand(f *cli.Factory, cordon bool) *cobra.Command {
	o := &Options{}
	verb, done := "cordon", "cordoned"
	short := "Mark node as unschedulable"
	if !cordon {
		verb, done = "uncordon", "uncordoned"
		short = "Mark node as schedulable"
	}
	cmd := &cobra.Command{
		Use:   verb + " NODE",
		Short: short,
		Long: fmt.Sprintf(`%s.

kdyn sets the nodes' spec.unschedulable to %t, so the scheduler %s new
pods on them; pods already there stay. Prints "node/NAME %s", or "already
%s" when there was nothing to change.`, short, cordon, map[bool]string{true: "places no", false: "may place"}[cordon], done, done),
		Example: fmt.Sprintf(`  # Mark node "foo" as %s
  kdyn %s foo

  # Every node with a label
  kdyn %s -l pool=batch`, map[bool]string{true: "unschedulable", false: "schedulable"}[cordon], verb, verb),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNodeArgs(cmd, args, o.Sel.Selector); err != nil {
				return err
			}
			o.QuietEmpty = true
			return Run(cmd.Context(), f, o, nodeArgs(args), cordonChange(cordon))
		},
	}
	o.AddFlags(cmd, "kubectl-cordon", false)
	cmd.Flags().StringVarP(&o.Sel.Selector, "selector", "l", "", "Label selector of the nodes.")
	return cmd
}

// cordonChange sets a node's spec.unschedulable to cordon (removing the
// field to uncordon): "cordoned", or "already cordoned" with nothing to
// send; "uncordoned" likewise.
func cordonChange(cordon bool) Change {
	done := "cordoned"
	if !cordon {
		done = "uncordoned"
	}
	return func(obj *unstructured.Unstructured) (Result, error) {
		current, _, _ := unstructured.NestedBool(obj.Object, "spec", "unschedulable")
		if current == cordon {
			return Result{Op: "already " + done}, nil
		}
		if cordon {
			_ = unstructured.SetNestedField(obj.Object, true, "spec", "unschedulable")
		} else {
			unstructured.RemoveNestedField(obj.Object, "spec", "unschedulable")
		}
		return Result{Op: done, Changed: true}, nil
	}
}

// checkNodeArgs refuses the node arguments of cordon, uncordon and drain
// as kubectl does: none and no --selector, both names and a selector, or
// an empty --selector= and no names.
func checkNodeArgs(cmd *cobra.Command, names []string, selector string) error {
	switch {
	case len(names) == 0 && !cmd.Flags().Changed("selector"):
		return cli.Usagef("USAGE: %s [flags]\nSee '%s -h' for help and examples", cmd.Use, cmd.CommandPath())
	case len(names) > 0 && selector != "":
		return cli.Usagef("cannot specify both a node name and a --selector option\nSee '%s -h' for help and examples", cmd.CommandPath())
	case len(names) == 0 && strings.TrimSpace(selector) == "":
		return cli.Usagef("%s", cli.NoResourcesMessage)
	}
	return nil
}

// nodeArgs turns node names into resource arguments; none means every
// node the selector picks.
//
// A name may be given as node/NAME (or nodes/NAME, no/NAME), as kubectl
// takes it.
func nodeArgs(names []string) []string {
	out := []string{"nodes"}
	for _, n := range names {
		for _, prefix := range []string{"node/", "nodes/", "no/"} {
			n = strings.TrimPrefix(n, prefix)
		}
		out = append(out, n)
	}
	return out
}

// taint is a node taint: key, value and effect.
type taint struct{ key, value, effect string }

// String is kubectl's KEY[=VALUE][:EFFECT].
func (t taint) String() string {
	s := t.key
	if t.value != "" {
		s += "=" + t.value
		if t.effect == "" {
			return s + ":"
		}
	}
	if t.effect != "" {
		s += ":" + t.effect
	}
	return s
}

// parseTaint parses KEY[=VALUE]:EFFECT (or KEY[:EFFECT] to remove), with
// kubectl's checks and words.
func parseTaint(spec string) (taint, error) {
	var t taint
	parts := strings.Split(spec, ":")
	switch len(parts) {
	case 1:
		t.key = parts[0]
	case 2:
		t.effect = parts[1]
		switch t.effect {
		case "NoSchedule", "PreferNoSchedule", "NoExecute":
		default:
			return t, fmt.Errorf("invalid taint effect: %v, unsupported taint effect", t.effect)
		}
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return t, fmt.Errorf("invalid taint spec: %v", spec)
		}
		t.key = kv[0]
		if len(kv) == 2 {
			t.value = kv[1]
			if errs := validation.IsValidLabelValue(t.value); len(errs) > 0 {
				return t, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
			}
		}
	default:
		return t, fmt.Errorf("invalid taint spec: %v", spec)
	}
	if errs := validation.IsQualifiedName(t.key); len(errs) > 0 {
		return t, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
	}
	return t, nil
}

// parseTaints splits the taint arguments into those to add and those to
// remove (ending in "-").
func parseTaints(specs []string) (add, remove []taint, err error) {
	seen := map[string]bool{}
	for _, spec := range specs {
		if s, ok := strings.CutSuffix(spec, "-"); ok {
			t, err := parseTaint(s)
			if err != nil {
				return nil, nil, err
			}
			remove = append(remove, taint{key: t.key, effect: t.effect})
			continue
		}
		t, err := parseTaint(spec)
		if err != nil {
			return nil, nil, err
		}
		if t.effect == "" {
			return nil, nil, fmt.Errorf("invalid taint spec: %v", spec)
		}
		if seen[t.effect+"/"+t.key] {
			return nil, nil, fmt.Errorf("duplicated taints with the same key and effect: {%s %s %s <nil>}", t.key, t.value, t.effect)
		}
		seen[t.effect+"/"+t.key] = true
		add = append(add, t)
	}
	return add, remove, nil
}

// NewTaintCommand returns "kdyn taint".
func NewTaintCommand(f *cli.Factory) *cobra.Command {
	o := &Options{}
	var overwrite bool
	cmd := &cobra.Command{
		Use:   "taint NODE NAME KEY_1=VAL_1:TAINT_EFFECT_1 ... KEY_N=VAL_N:TAINT_EFFECT_N",
		Short: "Update the taints on one or more nodes",
		Long: `Add, change or remove taints of nodes, as kubectl taint does: KEY=VALUE:EFFECT
(or KEY:EFFECT) adds one, with EFFECT NoSchedule, PreferNoSchedule or
NoExecute; KEY:EFFECT- removes one, KEY- every taint of the key. A taint of
a key and effect the node has already needs --overwrite.`,
		Example: `  # Taint node foo: no pod without a matching toleration is scheduled there
  kdyn taint nodes foo dedicated=special-user:NoSchedule

  # Remove that taint, then every taint with the key "bar"
  kdyn taint nodes foo dedicated:NoSchedule-
  kdyn taint nodes foo bar-

  # Every node of a pool
  kdyn taint node -l pool=gpu dedicated=gpu:PreferNoSchedule`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var resources, specs []string
			for _, a := range args {
				isTaint := strings.Contains(a, "=") || strings.Contains(a, ":") || strings.HasSuffix(a, "-")
				switch {
				case isTaint:
					specs = append(specs, a)
				case len(specs) > 0:
					return fmt.Errorf("all resources must be specified before taint changes: %s", a)
				default:
					resources = append(resources, a)
				}
			}
			if len(resources) < 1 {
				return errors.New("one or more resources must be specified as <resource> <name>")
			}
			if len(specs) < 1 {
				return errors.New("at least one taint update is required")
			}
			add, remove, err := parseTaints(specs)
			if err != nil {
				return cli.Usagef("%s", err.Error())
			}
			if o.Sel.Selector != "" || o.Sel.All {
				resources = resources[:1]
			}
			return Run(cmd.Context(), f, o, resources, func(obj *unstructured.Unstructured) (Result, error) {
				return retaint(obj, add, remove, overwrite)
			})
		},
	}
	o.AddFlags(cmd, "kubectl-taint", false)
	fl := cmd.Flags()
	fl.BoolVar(&overwrite, "overwrite", false, "Replace a taint of the same key and effect instead of refusing.")
	fl.StringVarP(&o.Sel.Selector, "selector", "l", "", "Label selector of the nodes.")
	fl.BoolVar(&o.Sel.All, "all", false, "Every node in the cluster.")
	return cmd
}

// retaint changes a node's taints as kubectl taint does.
func retaint(obj *unstructured.Unstructured, add, remove []taint, overwrite bool) (Result, error) {
	if obj.GetKind() != "Node" {
		return Result{}, fmt.Errorf("unexpected type %s, expected Node", obj.GetKind())
	}
	raw, _, _ := unstructured.NestedSlice(obj.Object, "spec", "taints")
	if !overwrite {
		var exist []string
		for _, t := range add {
			for _, o := range raw {
				m, _ := o.(map[string]any)
				if m["key"] == t.key && m["effect"] == t.effect {
					exist = append(exist, t.key)
				}
			}
		}
		if len(exist) > 0 {
			return Result{}, fmt.Errorf("node %s already has %v taint(s) with same effect(s) and --overwrite is false", obj.GetName(), strings.Join(exist, ","))
		}
	}
	// The new taints first, then the old ones they do not replace.
	var taints []any
	for _, t := range add {
		m := map[string]any{"key": t.key, "effect": t.effect}
		if t.value != "" {
			m["value"] = t.value
		}
		taints = append(taints, m)
	}
	for _, o := range raw {
		m, _ := o.(map[string]any)
		replaced := false
		for _, t := range add {
			if m["key"] == t.key && m["effect"] == t.effect {
				replaced = true
			}
		}
		if !replaced {
			taints = append(taints, o)
		}
	}
	// kubectl's rule: "tainted" when the node has more taints than before.
	added := len(raw) != len(taints)
	var errs []string
	removed := false
	for _, r := range remove {
		kept := taints[:0:0]
		for _, o := range taints {
			m, _ := o.(map[string]any)
			if m["key"] == r.key && (r.effect == "" || m["effect"] == r.effect) {
				continue
			}
			kept = append(kept, o)
		}
		removed = len(kept) != len(taints)
		if !removed {
			errs = append(errs, fmt.Sprintf("taint %q not found", r.String()))
		}
		taints = kept
	}
	if len(errs) > 0 {
		if len(errs) == 1 {
			return Result{}, errors.New(errs[0])
		}
		return Result{}, fmt.Errorf("[%s]", strings.Join(errs, ", "))
	}
	op := "untainted"
	switch {
	case (added && removed) || overwrite:
		op = "modified"
	case added:
		op = "tainted"
	}
	if len(taints) == 0 {
		unstructured.RemoveNestedField(obj.Object, "spec", "taints")
	} else if err := unstructured.SetNestedSlice(obj.Object, taints, "spec", "taints"); err != nil {
		return Result{}, err
	}
	return Result{Op: op, Changed: true}, nil
}

// NewCertificateCommand returns "kdyn certificate" with approve and deny.
func NewCertificateCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "certificate SUBCOMMAND",
		Short: "Modify certificate resources",
		Long:  "Approve or deny certificate signing requests.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.Usagef("certificate needs a subcommand: approve or deny (see 'kdyn certificate -h')")
		},
	}
	cmd.AddCommand(newCSRCommand(f, "approve", "Approved", "Denied", "KubectlApprove", "This CSR was approved by kubectl certificate approve.", "approved"),
		newCSRCommand(f, "deny", "Denied", "Approved", "KubectlDeny", "This CSR was denied by kubectl certificate deny.", "denied"))
	return cmd
}

// newCSRCommand adds condition (Approved or Denied) to certificate signing
// requests through their approval subresource, refusing one that has the
// other already, as kubectl certificate approve and deny do.
func newCSRCommand(f *cli.Factory, verb, condition, other, reason, message, done string) *cobra.Command {
	o := &Options{Subresource: "approval"}
	var force bool
	var manifests cli.ManifestFlags
	cmd := &cobra.Command{
		Use:   verb + " (-f FILENAME | NAME)",
		Short: map[string]string{"approve": "Approve a certificate signing request", "deny": "Deny a certificate signing request"}[verb],
		Long: fmt.Sprintf(`Add the %s condition to certificate signing requests (reason %s), as
kubectl certificate %s does. One that already has it is left alone (unless
--force); one that has the %s condition is refused.`, condition, reason, verb, other),
		Example: fmt.Sprintf("  kdyn certificate %s csr-sqgzp", verb),
		RunE: func(cmd *cobra.Command, args []string) error {
			if manifests.Given() {
				entries, err := cli.ReadEntries(f, &manifests, "certificate "+verb)
				if err != nil {
					return err
				}
				for _, e := range entries {
					if err := e.Err(); err != nil {
						return fmt.Errorf("%s: %w", e.Where(), err)
					}
					args = append(args, e.Object().GetName())
				}
			}
			if len(args) == 0 {
				return cli.Usagef("one or more CSRs must be specified as <name> or -f <filename>")
			}
			return Run(cmd.Context(), f, o, append([]string{"certificatesigningrequests.certificates.k8s.io"}, args...), func(obj *unstructured.Unstructured) (Result, error) {
				conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
				has := false
				for _, c := range conds {
					m, _ := c.(map[string]any)
					switch m["type"] {
					case other:
						return Result{}, fmt.Errorf("certificate signing request %q is already %s", obj.GetName(), other)
					case condition:
						has = true
					}
				}
				if has {
					// As kubectl: with --force the request is sent back
					// as it is (no second condition, which the server
					// would refuse).
					return Result{Op: done, Changed: force}, nil
				}
				conds = append(conds, map[string]any{"type": condition, "status": "True", "reason": reason, "message": message,
					"lastUpdateTime": time.Now().UTC().Format(time.RFC3339)})
				if err := unstructured.SetNestedSlice(obj.Object, conds, "status", "conditions"); err != nil {
					return Result{}, err
				}
				return Result{Op: done, Changed: true}, nil
			})
		},
	}
	o.AddFlags(cmd, "kubectl-certificate", false)
	manifests.AddFlags(cmd, "with the requests")
	cmd.Flags().BoolVar(&force, "force", false, "Update the request even if it already has the condition.")
	return cmd
}
