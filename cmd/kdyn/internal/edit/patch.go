package edit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/restmapper"
)

type patchOptions struct {
	patch        string
	patchFile    string
	patchType    string
	subresource  string
	output       string
	fieldManager string
	dryRun       *cli.DryRunFlag
	record       *cli.RecordFlag
	validate     *cli.ValidateFlag
	// showManagedFields keeps managedFields in json and yaml output.
	showManagedFields bool
	// manifests (-f) name the objects; with local the manifests' objects
	// themselves are patched and printed, and nothing is sent.
	manifests cli.ManifestFlags
	local     bool
}

// patchTypes are the --type values.
var patchTypes = map[string]types.PatchType{
	"json":      types.JSONPatchType,
	"merge":     types.MergePatchType,
	"strategic": types.StrategicMergePatchType,
	"apply":     types.ApplyPatchType,
}

// patchSubresources are the subresources patch and edit accept.
var patchSubresources = []string{"status", "scale"}

// NewPatchCommand returns "kdyn patch".
func NewPatchCommand(f *cli.Factory) *cobra.Command {
	o := &patchOptions{}
	cmd := &cobra.Command{
		Use:   "patch (TYPE NAME... | TYPE/NAME...) (-p PATCH | --patch-file FILE) [--type strategic|merge|json|apply]",
		Short: "Update fields of a resource",
		Long: `Update fields of one or more objects with a strategic merge patch, a JSON
merge patch (RFC 7386), a JSON patch (RFC 6902) or a server-side apply patch.
The patch may be written in JSON or YAML.

Without --type, kdyn sends a strategic merge patch to built-in resources and a
JSON merge patch to custom resources (which do not support strategic merge),
where kubectl would fail. A resource counts as custom when a
CustomResourceDefinition named <plural>.<group> exists; resources of groups
without a dot in their name (the core group, apps, batch, ...) are built in
and need no lookup.

--type apply sends the patch as a server-side apply under --field-manager;
apiVersion and kind are filled in when the patch leaves them out.

The result is "patched", or "patched (no change)" when the server did not
change the object (its resourceVersion stayed the same).`,
		Example: `  # Change a container's image with a strategic merge patch (containers merge by name)
  kdyn patch deploy web -p '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}}}'

  # The same patch written in YAML
  kdyn patch deploy/web -p $'spec:\n  replicas: 3'

  # A custom resource: a merge patch is chosen for you
  kdyn patch widgets.example.com/w1 -p '{"spec":{"color":"blue"}}'

  # A JSON patch with positional array indexes
  kdyn patch deploy web --type json -p '[{"op":"replace","path":"/spec/replicas","value":2}]'

  # Set a status field through the status subresource
  kdyn patch widget w1 --subresource status --type merge -p '{"status":{"phase":"Ready"}}'

  # Scale through the scale subresource
  kdyn patch deploy web --subresource scale --type merge -p '{"spec":{"replicas":5}}'

  # Server-side apply a fragment, as a named field manager
  kdyn patch cm settings --type apply --field-manager tuner -p '{"data":{"level":"3"}}'

  # See what the server would do, without persisting
  kdyn patch cm settings -p '{"data":{"x":"1"}}' --dry-run=server -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error { return runPatch(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.patch, "patch", "p", "", "The patch to apply, in JSON or YAML.")
	fl.StringVar(&o.patchFile, "patch-file", "", "A file holding the patch (\"-\" reads standard input).")
	fl.StringVar(&o.patchType, "type", "", "The type of patch: strategic, merge, json or apply (default: strategic for built-in resources, merge for custom resources).")
	fl.StringVar(&o.subresource, "subresource", "", "Patch this subresource of the object: status or scale.")
	cli.AddOutputFlags(fl, &o.output, "Output format: name, json, yaml, jsonl, jsonpath=..., gjson=..., custom-columns=... (default: \"KIND/NAME patched\").")
	fl.StringVar(&o.fieldManager, "field-manager", "kubectl-patch", "Name of the manager recorded in managedFields for this change.")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	o.record = cli.AddRecordFlag(cmd)
	o.validate = cli.AddValidateFlag(cmd)
	fl.BoolVar(&o.showManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in json and yaml output.")
	o.manifests.AddFlags(cmd, "with the objects to patch")
	fl.BoolVar(&o.local, "local", false, "Patch the objects of -f and print them, without contacting the server.")
	return cmd
}

// validatePatchFlags checks the flags that need no server.
func validatePatchFlags(o *patchOptions) error {
	switch {
	case o.patch != "" && o.patchFile != "":
		return cli.Usagef("cannot specify --patch and --patch-file together")
	case o.patch == "" && o.patchFile == "":
		return cli.Usagef("must specify --patch or --patch-file containing the contents of the patch")
	}
	if o.patchType != "" {
		if _, ok := patchTypes[strings.ToLower(o.patchType)]; !ok {
			names := make([]string, 0, len(patchTypes))
			for n := range patchTypes {
				names = append(names, n)
			}
			sort.Strings(names)
			return cli.Usagef("--type must be one of [%s], not %q", strings.Join(names, " "), o.patchType)
		}
	}
	if err := validateObjSubresource(o.subresource); err != nil {
		return err
	}
	if o.validate != nil {
		if _, err := o.validate.Directive(); err != nil {
			return err
		}
	}
	if strings.EqualFold(o.patchType, "apply") && o.fieldManager == "" {
		return cli.Usagef("--type apply needs a --field-manager")
	}
	return nil
}

func validateObjSubresource(sub string) error {
	if sub == "" {
		return nil
	}
	for _, s := range patchSubresources {
		if sub == s {
			return nil
		}
	}
	return cli.Usagef("invalid subresource value: %q. Must be one of [%s]", sub, strings.Join(patchSubresources, " "))
}

// readPatch returns the patch as JSON, converting YAML.
func readPatch(o *patchOptions, stdin io.Reader) ([]byte, error) {
	data := []byte(o.patch)
	if o.patchFile != "" {
		var err error
		if o.patchFile == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(o.patchFile)
		}
		if err != nil {
			return nil, fmt.Errorf("unable to read patch file: %v", err)
		}
	}
	js, err := utilyaml.ToJSON(data)
	if err != nil {
		src := o.patch
		if o.patchFile != "" {
			src = o.patchFile
		}
		return nil, fmt.Errorf("unable to parse %q: %v", src, err)
	}
	js = bytes.TrimSpace(js)
	if len(js) == 0 || string(js) == "null" {
		return nil, cli.Usagef("the patch is empty")
	}
	return js, checkPatchShape(js, strings.ToLower(o.patchType))
}

// checkPatchShape refuses, before anything is sent, a patch that no patch
// type accepts (a string, a number) or that --type does not: a JSON patch
// is a list of operations, the others are objects.
func checkPatchShape(js []byte, patchType string) error {
	switch {
	case js[0] == '[' && patchType == "":
		return cli.Usagef("this patch is a list of operations, a JSON patch: add --type=json")
	case js[0] == '[' && patchType != "json":
		return cli.Usagef("a %s patch is an object, but this patch is a list (a list of operations is --type=json)", patchType)
	case js[0] == '[':
		return nil
	case js[0] != '{':
		shown := string(js)
		if len(shown) > 40 {
			shown = shown[:40] + "…"
		}
		return cli.Usagef("the patch must be a JSON or YAML object (or, for --type=json, a list of operations), not %s", shown)
	case patchType == "json":
		return cli.Usagef("a JSON patch (--type=json) is a list of operations such as [{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":2}], but this patch is an object")
	}
	return nil
}

func runPatch(ctx context.Context, f *cli.Factory, o *patchOptions, args []string) error {
	if err := validatePatchFlags(o); err != nil {
		return err
	}
	dry, p, err := cli.NewWriteResultPrinter(f.Streams.Out, o.dryRun, o.output, o.showManagedFields)
	if err != nil {
		return err
	}
	// kubectl's patch prints "patched" in a dry run too, without the
	// suffix the other commands add.
	p.SetDryRun(cli.DryRunNone)
	data, err := readPatch(o, f.Streams.In)
	if err != nil {
		return err
	}
	if o.local {
		if len(args) > 0 {
			return cli.Usagef("cannot specify --local and server resources")
		}
		if !o.manifests.Given() {
			return cli.Usagef("must specify --filename with --local")
		}
		return patchManifests(f, o, p, data)
	}
	var targets []cli.Target
	if o.manifests.Given() {
		if len(args) > 0 {
			return cli.FilesAndArgsError()
		}
		targets, err = cli.LiveManifestTargets(ctx, f, &o.manifests, "patch")
	} else {
		targets, err = cli.NamedTargets(ctx, f, args)
	}
	if err != nil {
		return err
	}
	client, err := f.WriteClient(o.fieldManager, dry)
	if err != nil {
		return err
	}
	if client, err = o.validate.Client(client); err != nil {
		return err
	}
	pc := &patcher{f: f, o: o, client: client, dry: dry, data: data, p: p, chosen: map[schema.GroupVersionResource]types.PatchType{}}
	errs := &cli.ObjErrors{Factory: f}
	for _, t := range targets {
		if err := pc.patchOne(ctx, t); err != nil {
			if len(targets) == 1 {
				return err
			}
			errs.Add(err)
		}
	}
	return errs.Result()
}

type patcher struct {
	f *cli.Factory
	o *patchOptions
	// client writes under --field-manager, as a server dry run with
	// --dry-run=server.
	client dynamic.Interface
	dry    cli.DryRunMode
	data   []byte
	p      *cli.ResultPrinter
	// chosen caches the default patch type per resource.
	chosen map[schema.GroupVersionResource]types.PatchType
}

func (pc *patcher) patchOne(ctx context.Context, t cli.Target) error {
	rc := t.Resource(pc.client)
	sub := cli.Subresources(pc.o.subresource)
	before, err := rc.Get(ctx, t.Name, metav1.GetOptions{}, sub...)
	if err != nil {
		return err
	}
	pt, auto, err := pc.patchType(ctx, t.Match)
	if err != nil {
		return err
	}
	data := pc.data
	if pt == types.ApplyPatchType {
		if data, err = fillApplyTypeMeta(data, before); err != nil {
			return err
		}
	}
	if pc.dry == cli.DryRunClient {
		after, err := patchLocally(before, pt, data, t.Match.GVK.String())
		if errors.Is(err, errNeedsSchema) {
			// How the lists of a strategic merge patch merge is in the
			// type's schema, which the server has: it applies the patch
			// in a dry run of its own, storing nothing.
			after, err = pc.serverDryRun(ctx, t, pt, data, sub)
		}
		if err != nil {
			return err
		}
		op := "patched"
		if same, err := sameJSON(before, after); err != nil {
			return err
		} else if same {
			op = "patched (no change)"
		}
		return pc.p.Print(t.Match.GVK.GroupKind(), t.Name, op, after)
	}
	opts := metav1.PatchOptions{}
	after, err := rc.Patch(ctx, t.Name, pt, data, opts, sub...)
	if err != nil && auto && pt == types.StrategicMergePatchType && apierrors.IsUnsupportedMediaType(err) {
		// The CRD could not be looked up and the guess was wrong: the
		// server says it takes no strategic merge patch, so it is custom.
		pt = types.MergePatchType
		pc.chosen[t.Match.GVR] = pt
		after, err = rc.Patch(ctx, t.Name, pt, data, opts, sub...)
	}
	if err != nil {
		if apierrors.IsUnsupportedMediaType(err) {
			return fmt.Errorf("%s is not supported by %s: %s", pt, t.Match.GVK, patchAPIMessage(err))
		}
		return err
	}
	op := "patched"
	if !patchChanged(before, after, pc.dry == cli.DryRunServer) {
		op = "patched (no change)"
	}
	// As kubectl: the change cause in a merge patch of its own, after the
	// change (and, unlike kubectl's, a dry run's stays a dry run).
	if recorded, err := pc.o.record.Patch(ctx, rc, t.Name, opts); err != nil {
		return fmt.Errorf("%s/%s was patched, but recording the change cause (--record) failed: %w", t.Match.GVK.Kind, t.Name, err)
	} else if recorded != nil {
		after = recorded
	}
	return pc.p.Print(t.Match.GVK.GroupKind(), t.Name, op, after)
}

// serverDryRun is the object as the patch would make it, computed by the
// server (dryRun=All).
func (pc *patcher) serverDryRun(ctx context.Context, t cli.Target, pt types.PatchType, data []byte, sub []string) (*unstructured.Unstructured, error) {
	client, err := pc.f.WriteClient(pc.o.fieldManager, cli.DryRunServer)
	if err != nil {
		return nil, err
	}
	return t.Resource(client).Patch(ctx, t.Name, pt, data, metav1.PatchOptions{}, sub...)
}

// patchAPIMessage is the server's message of a status error.
func patchAPIMessage(err error) string {
	if se, ok := err.(apierrors.APIStatus); ok {
		return se.Status().Message
	}
	return err.Error()
}

// patchType returns the --type asked for, or the default for the
// resource; auto reports the default.
func (pc *patcher) patchType(ctx context.Context, m restmapper.Match) (pt types.PatchType, auto bool, err error) {
	if pc.o.patchType != "" {
		return patchTypes[strings.ToLower(pc.o.patchType)], false, nil
	}
	if pt, ok := pc.chosen[m.GVR]; ok {
		return pt, true, nil
	}
	state := patchCRDUnknown
	if patchCRDPossible(m.GVR.Group) {
		state, err = pc.lookupCRD(ctx, m.GVR)
		if err != nil {
			return "", false, err
		}
	}
	pt = defaultPatchType(m.GVR.Group, state)
	pc.chosen[m.GVR] = pt
	return pt, true, nil
}

var patchCRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// patchCRDState is what a lookup of a resource's CRD found.
type patchCRDState int

const (
	patchCRDUnknown patchCRDState = iota // not looked up, or the lookup failed (e.g. forbidden)
	patchCRDExists
	patchCRDMissing
)

// patchCRDPossible reports whether a group can hold custom resources: the API
// server requires a CRD's group to contain a dot, so the core group,
// "apps", "batch", "policy", ... are built in without asking.
func patchCRDPossible(group string) bool { return strings.Contains(group, ".") }

// lookupCRD asks for the metadata of the CRD <plural>.<group> (one GET).
// Not being allowed to read CRDs is not an error: the state is unknown.
func (pc *patcher) lookupCRD(ctx context.Context, gvr schema.GroupVersionResource) (patchCRDState, error) {
	client, err := pc.f.DynamicClient()
	if err != nil {
		return patchCRDUnknown, err
	}
	_, err = client.Metadata().Resource(patchCRDGVR).Get(ctx, gvr.Resource+"."+gvr.Group, metav1.GetOptions{})
	switch {
	case err == nil:
		return patchCRDExists, nil
	case apierrors.IsNotFound(err):
		return patchCRDMissing, nil
	case ctx.Err() != nil:
		return patchCRDUnknown, ctx.Err()
	}
	return patchCRDUnknown, nil
}

// defaultPatchType picks the patch type when --type is not given:
// strategic merge for built-in resources, JSON merge for custom ones. When
// the CRD lookup could not tell, groups under k8s.io are taken as built in
// (their rare CRDs are caught by the server's 415 answer, on which the
// patch is resent as a merge patch) and other dotted groups as custom.
func defaultPatchType(group string, state patchCRDState) types.PatchType {
	if !patchCRDPossible(group) {
		return types.StrategicMergePatchType
	}
	switch state {
	case patchCRDExists:
		return types.MergePatchType
	case patchCRDMissing:
		return types.StrategicMergePatchType
	}
	if group == "k8s.io" || strings.HasSuffix(group, ".k8s.io") {
		return types.StrategicMergePatchType
	}
	return types.MergePatchType
}

// fillApplyTypeMeta adds apiVersion and kind (those of the object patched)
// to an apply patch that leaves them out; the server requires both.
func fillApplyTypeMeta(data []byte, live *unstructured.Unstructured) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("an apply patch must be one object: %v", err)
	}
	changed := false
	if _, ok := m["apiVersion"]; !ok && live.GetAPIVersion() != "" {
		m["apiVersion"] = live.GetAPIVersion()
		changed = true
	}
	if _, ok := m["kind"]; !ok && live.GetKind() != "" {
		m["kind"] = live.GetKind()
		changed = true
	}
	if !changed {
		return data, nil
	}
	return json.Marshal(m)
}

// patchChanged reports whether a patch changed the object. A write that
// changes nothing keeps the resourceVersion. A dry run never changes it,
// so there the objects are compared, without managedFields (timestamps)
// and resourceVersion.
func patchChanged(before, after *unstructured.Unstructured, dryRun bool) bool {
	if !dryRun {
		return before.GetResourceVersion() != after.GetResourceVersion()
	}
	strip := func(u *unstructured.Unstructured) map[string]any {
		c := u.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
		unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
		return c.Object
	}
	return !reflect.DeepEqual(strip(before), strip(after))
}

// patchManifests is patch --local: each object of the manifests, patched
// here and printed. Without --type the patch is a strategic merge patch,
// as kubectl's, which a custom resource does not take.
func patchManifests(f *cli.Factory, o *patchOptions, p *cli.ResultPrinter, data []byte) error {
	entries, err := cli.ReadEntries(f, &o.manifests, "patch")
	if err != nil {
		return err
	}
	pt := types.StrategicMergePatchType
	if o.patchType != "" {
		pt = patchTypes[strings.ToLower(o.patchType)]
	}
	for _, e := range entries {
		if err := e.Err(); err != nil {
			return fmt.Errorf("%s: %w", e.Where(), err)
		}
		obj := e.Object()
		gvk := obj.GroupVersionKind()
		// Without the server, the group alone says whether the kind is
		// built in: the rule of the default patch type, no CRD looked up.
		if pt == types.StrategicMergePatchType && defaultPatchType(gvk.Group, patchCRDUnknown) != types.StrategicMergePatchType {
			return fmt.Errorf("strategic merge patch is not supported for %s locally, try --type merge", gvk)
		}
		after, err := patchLocally(obj, pt, data, gvk.String())
		if err != nil {
			return err
		}
		if err := p.Print(gvk.GroupKind(), obj.GetName(), "patched", after); err != nil {
			return err
		}
	}
	return nil
}
