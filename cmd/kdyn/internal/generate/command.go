package generate

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/rest"
)

// Commands returns the generators, for the root to add under "kdyn
// create": namespace, configmap, secret (generic, tls, docker-registry),
// serviceaccount, role, clusterrole, rolebinding, clusterrolebinding,
// deployment, job, cronjob, service (clusterip, nodeport, loadbalancer,
// externalname), quota, priorityclass, poddisruptionbudget, ingress and token (a
// service account token, requested rather than generated).
func Commands(f *cli.Factory) []*cobra.Command {
	return []*cobra.Command{
		newNamespaceCommand(f),
		newConfigMapCommand(f),
		newSecretCommand(f),
		newServiceAccountCommand(f),
		newRoleCommand(f),
		newClusterRoleCommand(f),
		newRoleBindingCommand(f),
		newClusterRoleBindingCommand(f),
		newDeploymentCommand(f),
		newJobCommand(f),
		newCronJobCommand(f),
		newServiceCommand(f),
		newQuotaCommand(f),
		newPriorityClassCommand(f),
		newPDBCommand(f),
		newIngressCommand(f),
		newTokenCommand(f),
	}
}

// options are the flags every generator has.
type options struct {
	output            string
	dryRun            *cli.DryRunFlag
	record            *cli.RecordFlag // run, expose and autoscale have --record; nil elsewhere
	saveConfig        bool
	fieldManager      string
	showManagedFields bool
}

// addFlags adds the common flags to cmd, with kubectl's create field
// manager.
func (o *options) addFlags(cmd *cobra.Command) { o.addFlagsFor(cmd, "kubectl-create") }

// addFlagsFor adds the common flags to cmd; manager is the default field
// manager, kubectl's for the command (kubectl-run, kubectl-expose, ...).
func (o *options) addFlagsFor(cmd *cobra.Command, manager string) {
	fl := cmd.Flags()
	cli.AddOutputFlags(fl, &o.output, "Print the object instead of a summary: name, json, yaml (or any object output of get). With --dry-run=client, the object is printed exactly as kubectl prints it.")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	fl.BoolVar(&o.saveConfig, "save-config", false, "Record the object's configuration in the last-applied-configuration annotation, for a later client-side apply.")
	fl.StringVar(&o.fieldManager, "field-manager", manager, "The name of the manager recorded for the created fields.")
	fl.BoolVar(&o.showManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in json and yaml output.")
}

// generator builds one kind of object from the command line: name is the
// NAME argument, and namespace is set only when -n was given (the object
// then names it, as kubectl's does).
type generator struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	// failure prefixes a server's refusal as kubectl words it ("failed to
	// create configmap: "); "" prints the server's error as usual.
	failure string
	build   func(name, namespace string) (*object, error)
	// done is what the summary line says ("created" when empty).
	done string
}

// nameArg returns the one NAME argument.
func nameArg(cmd *cobra.Command, args []string) (string, error) {
	n := cmd.ArgsLenAtDash()
	if n == -1 {
		n = len(args)
	}
	if n != 1 {
		return "", cli.Usagef("exactly one NAME is required, got %d\nSee '%s -h' for help and examples", n, cmd.CommandPath())
	}
	return args[0], nil
}

// run builds the object, creates it (unless --dry-run=client) and prints
// it: "configmap/x created", or the object with -o.
func (o *options) run(ctx context.Context, f *cli.Factory, cmd *cobra.Command, args []string, g generator) error {
	name, err := nameArg(cmd, args)
	if err != nil {
		return err
	}
	return o.runNamed(ctx, f, name, g)
}

// runNamed is run for the object name.
func (o *options) runNamed(ctx context.Context, f *cli.Factory, name string, g generator) error {
	m, err := o.make(ctx, f, name, g)
	if err != nil {
		return err
	}
	return o.print(f, m)
}

// made is an object a generator built and, unless --dry-run=client,
// created.
type made struct {
	g               generator
	raw             []byte // the server's answer, or what was built
	name, namespace string // as created
	dry             cli.DryRunMode
}

// make builds the object for name and creates it (unless
// --dry-run=client).
func (o *options) make(ctx context.Context, f *cli.Factory, name string, g generator) (*made, error) {
	dry, err := o.dryRun.Mode()
	if err != nil {
		return nil, err
	}
	if _, _, err := cli.WriteOutput(o.output); err != nil {
		return nil, err
	}
	ns, explicit, err := f.Namespace()
	if err != nil {
		if dry != cli.DryRunClient {
			return nil, err
		}
		// Nothing is sent: generate without a kubeconfig (in CI, say);
		// only -n matters.
		ns, explicit = f.Flags.Namespace, f.Flags.Namespace != ""
	}
	setNS := ""
	if explicit && g.namespaced {
		setNS = ns
	}
	obj, err := g.build(name, setNS)
	if err != nil {
		return nil, err
	}
	if cause := o.record.Cause(); cause != "" {
		ann := maps.Clone(obj.annotations)
		if ann == nil {
			ann = map[string]string{}
		}
		ann[cli.ChangeCauseAnnotation] = cause
		obj.annotations = ann
	}
	if o.saveConfig {
		if err := obj.saveConfig(); err != nil {
			return nil, err
		}
	}
	raw, err := obj.JSON()
	if err != nil {
		return nil, err
	}
	if !g.namespaced {
		ns = ""
	}
	if dry != cli.DryRunClient {
		if raw, err = o.create(ctx, f, g.gvr, ns, raw, dry); err != nil {
			return nil, o.failed(f, g, err)
		}
	}
	return &made{g: g, raw: raw, name: createdName(raw, obj.name), namespace: ns, dry: dry}, nil
}

// print prints what make made: "configmap/x created", or the object with
// -o.
func (o *options) print(f *cli.Factory, m *made) error {
	out, quiet, err := cli.WriteOutput(o.output)
	if err != nil {
		return err
	}
	if !quiet {
		kn := printers.KindName(schema.GroupKind{Group: m.g.gvr.Group, Kind: m.g.kind}, m.name)
		done := m.g.done
		if done == "" {
			done = "created"
		}
		_, err := fmt.Fprintf(f.Streams.Out, "%s %s%s\n", kn, done, m.dry.Suffix())
		return err
	}
	return cli.PrintObjectJSON(f.Streams.Out, out, m.raw, true, o.showManagedFields)
}

// create POSTs the object and returns the server's answer as it came, so
// that -o json keeps the server's (the typed object's) member order.
func (o *options) create(ctx context.Context, f *cli.Factory, gvr schema.GroupVersionResource, ns string, body []byte, dry cli.DryRunMode) ([]byte, error) {
	rc, err := f.RESTClient()
	if err != nil {
		return nil, err
	}
	opts := metav1.CreateOptions{FieldManager: o.fieldManager}
	if dry == cli.DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return cli.ResourceRequest(rc.Post(), gvr, ns).ContentType(rest.ContentTypeJSON).Body(body).VersionedParams(&opts).DoRaw(ctx)
}

// failed reports a refused create in kubectl's words ("error: failed to
// create configmap: configmaps "x" already exists") and returns a silent
// exit error that keeps the failure's exit code.
func (o *options) failed(f *cli.Factory, g generator, err error) error {
	if g.failure == "" {
		return err
	}
	msg := err.Error()
	fmt.Fprintf(f.Streams.ErrOut, "error: %s%s\n", g.failure, msg)
	return &cli.ExitError{Code: cli.FailureCode(f, err), Silent: true, Err: err}
}

// createdName is the name the server gave the object (the one sent,
// unless the server answered without one).
func createdName(raw []byte, sent string) string {
	var m struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &m) == nil && m.Metadata.Name != "" {
		return m.Metadata.Name
	}
	return sent
}
