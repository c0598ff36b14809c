package debug

//lint:file-ignore ST1005 the errors are kubectl's words, periods included, which scripts may match

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/distribution/reference"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/pods"
	"github.com/kdyn/kdyn/dynamic"
)

// fieldManager is recorded on debug's writes: the name the server gives
// kubectl's, which sends none (so the server names its user agent).
const fieldManager = "kubectl"

var podGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// options are kubectl debug's flags and what is derived from them.
type options struct {
	filenames                                     []string
	argsOnly, attach, replace, interactive, quiet bool
	sameNode, shareProcesses, tty                 bool
	container, copyTo, image, pullPolicy, target  string
	profile, customFile                           string
	env, setImages                                map[string]string
	keep                                          keepFlags
	attachChanged, shareChanged                   bool
	names, args                                   []string
	custom                                        map[string]any
	out, errOut                                   io.Writer
	client                                        dynamic.Interface
	namespace                                     string
}

// NewCommand returns "kdyn debug": kubectl debug's ephemeral containers,
// pod copies and node debugging pods.
func NewCommand(f *cli.Factory) *cobra.Command {
	o := &options{shareProcesses: true, keep: keepFlags{initContainers: true}}
	cmd := &cobra.Command{
		Use:                   "debug (POD | TYPE[[.VERSION].GROUP]/NAME) [ -- COMMAND [args...] ]",
		DisableFlagsInUseLine: true,
		Short:                 "Create debugging sessions for troubleshooting workloads and nodes",
		Long: `Debug a pod or a node with a container of --image, as kubectl debug does:

* A pod (NAME or pod/NAME): an ephemeral container is added to it (a
  strategic merge patch of its ephemeralcontainers subresource), or with
  --copy-to a copy of the pod is created with a debug container added, or
  the container -c changed (--set-image changes images).
* A node (node/NAME): a pod named node-debugger-NAME-xxxxx is created on it,
  in the host's namespaces with the host's root filesystem at /host.

--profile sets the container's privileges: general (the default),
baseline, restricted, netadmin, sysadmin, or legacy (deprecated); --custom
merges a partial container spec (JSON or YAML) into the debug container.
Words after -- are the container's command (its args with
--arguments-only).

With --attach (implied by -i) kdyn waits for the debug container to run
and attaches to it as 'attach' does (-i sends stdin, -t a terminal); a
container that has already ended has its log printed instead.`,
		Example: `  # A shell in an ephemeral busybox container added to pod mypod
  kdyn debug -it mypod --image=busybox

  # Add an ephemeral container without attaching to it
  kdyn debug mypod --image=busybox -c debugger -i --attach=false

  # A copy of mypod with a debug container added, sharing process namespaces
  kdyn debug mypod --image=busybox --copy-to=my-debugger

  # A copy of mypod running a shell in container app instead of its command
  kdyn debug mypod --copy-to=my-debugger --container=app -- sh

  # A copy of mypod with every image changed to busybox
  kdyn debug mypod --copy-to=my-debugger --set-image=*=busybox

  # A pod on node mynode, in the host's namespaces with its filesystem at /host
  kdyn debug node/mynode --image=busybox -- sleep 3600`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			return pods.QuietIfInterrupted(cmd.Context(), o.run(cmd.Context(), f, cmd))
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&o.filenames, "filename", "f", nil, "A file (JSON or YAML) with the pods or nodes to debug.")
	fl.BoolVar(&o.argsOnly, "arguments-only", false, "Pass the words after -- to the container as its args instead of its command.")
	fl.BoolVar(&o.attach, "attach", false, "Attach to the container once it runs, as 'attach' does (default: true with -i).")
	fl.StringVarP(&o.container, "container", "c", "", "The debug container's name (default debugger-xxxxx); with --copy-to, an existing container to change.")
	fl.StringVar(&o.copyTo, "copy-to", "", "Create a copy of the target pod with this name.")
	fl.BoolVar(&o.replace, "replace", false, "With --copy-to, delete the original pod.")
	fl.StringToStringVar(&o.env, "env", nil, "Environment variables of the container, KEY=VALUE,...")
	fl.StringVar(&o.image, "image", "", "The debug container's image.")
	fl.BoolVar(&o.keep.labels, "keep-labels", false, "With --copy-to, keep the pod's labels.")
	fl.BoolVar(&o.keep.annotations, "keep-annotations", false, "With --copy-to, keep the pod's annotations.")
	fl.BoolVar(&o.keep.liveness, "keep-liveness", false, "With --copy-to, keep the containers' liveness probes.")
	fl.BoolVar(&o.keep.readiness, "keep-readiness", false, "With --copy-to, keep the containers' readiness probes.")
	fl.BoolVar(&o.keep.startup, "keep-startup", false, "With --copy-to, keep the containers' startup probes.")
	fl.BoolVar(&o.keep.initContainers, "keep-init-containers", true, "With --copy-to, keep the pod's init containers.")
	fl.StringToStringVar(&o.setImages, "set-image", nil, "With --copy-to, NAME=IMAGE,... the containers' new images (* for all), as 'set image' takes them.")
	fl.StringVar(&o.pullPolicy, "image-pull-policy", "", "The container's image pull policy: Always, IfNotPresent or Never (default: the server's).")
	fl.BoolVarP(&o.interactive, "stdin", "i", false, "Keep stdin open on the container, even if nothing is attached.")
	fl.BoolVarP(&o.quiet, "quiet", "q", false, "Print no informational messages.")
	fl.BoolVar(&o.sameNode, "same-node", false, "With --copy-to, schedule the copy on the pod's node.")
	fl.BoolVar(&o.shareProcesses, "share-processes", true, "With --copy-to, share one process namespace between the copy's containers.")
	fl.StringVar(&o.target, "target", "", "With an ephemeral container, the container whose processes it sees.")
	fl.BoolVarP(&o.tty, "tty", "t", false, "Allocate a TTY for the container (needs -i).")
	fl.StringVar(&o.profile, "profile", profileGeneral, `The container's privileges: "general", "baseline", "restricted", "netadmin", "sysadmin" or "legacy" (deprecated).`)
	fl.StringVar(&o.customFile, "custom", "", "A JSON or YAML file with a partial container spec merged into the debug container.")
	return cmd
}

// complete reads the arguments, the custom profile and what depends on
// whether flags were given, in kubectl's order.
func (o *options) complete(f *cli.Factory, cmd *cobra.Command, args []string) error {
	o.out, o.errOut = f.Streams.Out, f.Streams.ErrOut
	o.names = args
	if dash := cmd.ArgsLenAtDash(); dash >= 0 && len(args) > dash {
		o.names, o.args = args[:dash], args[dash:]
	}
	o.attachChanged = cmd.Flags().Changed("attach")
	if !o.attachChanged && o.interactive {
		o.attach = true
	}
	o.shareChanged = cmd.Flags().Changed("share-processes")
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	o.namespace = ns
	if err := checkProfile(o.profile); err != nil {
		return err
	}
	if o.customFile != "" {
		if o.custom, err = readCustom(o.customFile); err != nil {
			return err
		}
	}
	return nil
}

// validate checks the flags together, in kubectl's order and words.
func (o *options) validate() error {
	switch {
	case o.attach && o.attachChanged && o.image == "" && o.container == "":
		return errors.New("you must specify --container or create a new container using --image in order to attach.")
	case o.copyTo != "" && o.image == "" && len(o.setImages) == 0 && len(o.args) == 0:
		return errors.New("you must specify --image, --set-image or command arguments.")
	case o.copyTo != "" && len(o.args) > 0 && o.container == "" && o.image == "":
		return errors.New("you must specify an existing container or a new image when specifying args.")
	case o.copyTo == "" && o.replace:
		return errors.New("--replace may only be used with --copy-to.")
	case o.copyTo == "" && o.sameNode:
		return errors.New("--same-node may only be used with --copy-to.")
	case o.copyTo == "" && len(o.setImages) > 0:
		return errors.New("--set-image may only be used with --copy-to.")
	case o.copyTo == "" && o.image == "":
		return errors.New("you must specify --image when not using --copy-to.")
	case o.image != "" && !reference.ReferenceRegexp.MatchString(o.image):
		return fmt.Errorf("invalid image name %q: %w", o.image, reference.ErrReferenceInvalidFormat)
	case len(o.names) == 0 && len(o.filenames) == 0:
		return errors.New("NAME or filename is required for debug")
	}
	switch o.pullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		return fmt.Errorf("invalid image pull policy: %s", o.pullPolicy)
	}
	for _, name := range sortedKeys(o.setImages) {
		if image := o.setImages[name]; !reference.ReferenceRegexp.MatchString(image) {
			return fmt.Errorf("invalid image name %q for container %q: %w", image, name, reference.ErrReferenceInvalidFormat)
		}
	}
	if o.target != "" {
		if o.copyTo != "" {
			return errors.New("--target is incompatible with --copy-to. Use --share-processes instead.")
		}
		o.inform("Targeting container %q. If you don't see processes from this container it may be because the container runtime doesn't support this feature.\n", o.target)
	}
	if o.tty && !o.interactive {
		return errors.New("-i/--stdin is required for containers with -t/--tty=true")
	}
	if o.custom != nil {
		if err := checkCustom(o.custom); err != nil {
			return err
		}
	}
	if o.profile == profileLegacy {
		fmt.Fprintln(o.errOut, `--profile=legacy is deprecated and planned to be removed in v1.39. It is recommended to specify other profile, for example "--profile=general".`)
	}
	return nil
}

// inform prints an informational message to stdout, unless -q.
func (o *options) inform(format string, args ...any) {
	if !o.quiet {
		fmt.Fprintf(o.out, format, args...)
	}
}

// run debugs each target in turn, stopping at the first failure.
func (o *options) run(ctx context.Context, f *cli.Factory, cmd *cobra.Command) error {
	client, err := f.WriteClient(fieldManager, cli.DryRunNone)
	if err != nil {
		return err
	}
	o.client = client
	targets, err := o.targets(ctx, f)
	if err != nil {
		return err
	}
	for _, obj := range targets {
		var pod *unstructured.Unstructured
		var cn string
		switch gvk := obj.GroupVersionKind(); gvk.GroupKind() {
		case schema.GroupKind{Kind: "Node"}:
			pod, cn, err = o.debugNode(ctx, obj)
		case schema.GroupKind{Kind: "Pod"}:
			if o.copyTo != "" {
				pod, cn, err = o.debugByCopy(ctx, obj)
			} else {
				pod, cn, err = o.debugByEphemeralContainer(ctx, obj)
			}
		default:
			err = fmt.Errorf("%q not supported by debug", gvk.String())
		}
		if err != nil {
			return err
		}
		if o.attach && cn != "" {
			if err := o.attachTo(ctx, f, cmd, pod, cn); err != nil {
				return err
			}
		}
	}
	return nil
}

// targets are the objects to debug: those of -f as written (in their
// namespace, or the current one), or the named ones as stored (a bare NAME
// is a pod's).
func (o *options) targets(ctx context.Context, f *cli.Factory) ([]*unstructured.Unstructured, error) {
	if len(o.filenames) > 0 {
		if len(o.names) > 0 {
			return nil, errors.New("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")
		}
		return o.fileTargets(ctx, f)
	}
	args := make([]string, len(o.names))
	for i, n := range o.names {
		args[i] = n
		if !strings.Contains(n, "/") {
			args[i] = "pods/" + n
		}
	}
	matches, err := f.Resolve(ctx, args)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, m := range matches {
		obj, err := o.client.Resource(m.GVR).Namespace(cli.NamespaceFor(m, o.namespace)).Get(ctx, m.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// fileTargets are the objects of -f, placed as kubectl places them.
func (o *options) fileTargets(ctx context.Context, f *cli.Factory) ([]*unstructured.Unstructured, error) {
	entries, err := cli.ReadEntries(f, &cli.ManifestFlags{Filenames: o.filenames}, "debug")
	if err != nil {
		return nil, err
	}
	run, err := cli.NewManifestRun(f, cli.ManifestOptions{})
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, e := range entries {
		p, err := run.Place(ctx, e, nil)
		if err != nil {
			return nil, err
		}
		obj := e.Object()
		if p.Namespaced {
			obj.SetNamespace(p.Namespace)
		}
		out = append(out, obj)
	}
	return out, nil
}

// containerName is -c, or a new "debugger-xxxxx" that no container of the
// spec has, announced unless -q.
func (o *options) containerName(spec map[string]any) string {
	if o.container != "" {
		return o.container
	}
	taken := containerNames(spec)
	cn := ""
	for cn == "" || slices.Contains(taken, cn) {
		cn = "debugger-" + cli.RandomSuffix(5)
	}
	o.inform("Defaulting debug container name to %s.\n", cn)
	return cn
}

// newContainer is the debug container before its profile: name, image,
// command (or args), env, pull policy, stdin, tty.
func (o *options) newContainer(name string) map[string]any {
	c := map[string]any{"name": name, "resources": map[string]any{}, "terminationMessagePolicy": "File"}
	if o.image != "" {
		c["image"] = o.image
	}
	o.setArgs(c)
	if env := o.envList(); env != nil {
		c["env"] = env
	}
	if o.pullPolicy != "" {
		c["imagePullPolicy"] = o.pullPolicy
	}
	o.setStdio(c)
	return c
}

// setArgs sets the words after -- as the container's command, or with
// --arguments-only its args.
func (o *options) setArgs(c map[string]any) {
	if len(o.args) == 0 {
		return
	}
	words := make([]any, len(o.args))
	for i, a := range o.args {
		words[i] = a
	}
	if o.argsOnly {
		c["args"] = words
	} else {
		c["command"] = words
		delete(c, "args")
	}
}

// setStdio sets stdin and tty as -i and -t say (false leaves them out, as
// kubectl's typed container does).
func (o *options) setStdio(c map[string]any) {
	for key, on := range map[string]bool{"stdin": o.interactive, "tty": o.tty} {
		if on {
			c[key] = true
		} else {
			delete(c, key)
		}
	}
}

// envList is --env as a container's env, sorted by name (kubectl's order
// is its map's, random).
func (o *options) envList() []any {
	var env []any
	for _, k := range sortedKeys(o.env) {
		e := map[string]any{"name": k}
		if v := o.env[k]; v != "" {
			e["value"] = v
		}
		env = append(env, e)
	}
	return env
}

// customize merges --custom into the container named cn of the pod's list.
func (o *options) customize(spec map[string]any, list, cn, podName string) error {
	if o.custom == nil {
		return nil
	}
	for _, c := range containers(spec, list) {
		if c["name"] == cn {
			custom := clone(o.custom).(map[string]any)
			custom["name"] = cn
			return mergeCustom(c, custom)
		}
	}
	what := "container"
	if list == "ephemeralContainers" {
		what = "ephemeral container"
	}
	return fmt.Errorf("unable to find the %s %s in the pod %s", cn, what, podName)
}

// debugByEphemeralContainer adds the debug container to the pod through
// its ephemeralcontainers subresource, with the strategic merge patch
// kubectl sends.
func (o *options) debugByEphemeralContainer(ctx context.Context, pod *unstructured.Unstructured) (*unstructured.Unstructured, string, error) {
	patch, cn, err := o.ephemeralPatch(pod)
	if err != nil {
		return nil, "", err
	}
	res, err := o.client.Resource(podGVR).Namespace(pod.GetNamespace()).Patch(ctx, pod.GetName(), types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "ephemeralcontainers")
	if err != nil {
		// A server without ephemeral containers answers 404 for the
		// subresource, with no name in the details (a missing pod has
		// one).
		var se *apierrors.StatusError
		if errors.As(err, &se) && se.ErrStatus.Reason == metav1.StatusReasonNotFound && (se.ErrStatus.Details == nil || se.ErrStatus.Details.Name == "") {
			return nil, "", fmt.Errorf("ephemeral containers are disabled for this cluster (error from server: %q)", err)
		}
		return nil, "", err
	}
	return res, cn, nil
}

// ephemeralPatch is the strategic merge patch that adds the debug
// container to the pod, as kubectl's two-way merge patch from the pod to
// its debugging copy gives it, and the container's name. It warns when the
// pod runs as non-root.
func (o *options) ephemeralPatch(pod *unstructured.Unstructured) ([]byte, string, error) {
	copied := pod.DeepCopy()
	spec := mapAt(copied.Object, "spec")
	cn := o.containerName(spec)
	ec := o.newContainer(cn)
	if o.target != "" {
		ec["targetContainerName"] = o.target
	}
	hadList := len(list(spec["ephemeralContainers"])) > 0
	spec["ephemeralContainers"] = append(list(spec["ephemeralContainers"]), ec)
	applyProfile(o.profile, o.keep, copied.Object, cn, ephemeral)
	if err := o.customize(spec, "ephemeralContainers", cn, pod.GetName()); err != nil {
		return nil, "", err
	}
	o.warnNonRoot(ec, pod.Object)

	patchSpec := map[string]any{"ephemeralContainers": []any{ec}}
	if hadList {
		// A list the pod had is merged by name; the patch also gives the
		// order of every element, as kubectl's two-way merge patch does.
		var order []any
		for _, c := range containers(spec, "ephemeralContainers") {
			order = append(order, map[string]any{"name": c["name"]})
		}
		patchSpec["$setElementOrder/ephemeralContainers"] = order
	}
	patch, err := json.Marshal(map[string]any{"spec": patchSpec})
	return patch, cn, err
}

// debugByCopy creates a copy of the pod with the debug container added
// (or the container -c changed), and with --replace deletes the pod.
func (o *options) debugByCopy(ctx context.Context, pod *unstructured.Unstructured) (*unstructured.Unstructured, string, error) {
	copied, cn, err := o.podCopy(pod)
	if err != nil {
		return nil, "", err
	}
	if cn != "" {
		for _, c := range containers(mapAt(copied, "spec"), "containers") {
			if c["name"] == cn {
				o.warnNonRoot(c, copied)
			}
		}
	}
	created, err := o.client.Resource(podGVR).Namespace(pod.GetNamespace()).Create(ctx, &unstructured.Unstructured{Object: copied}, metav1.CreateOptions{})
	if err != nil {
		return nil, "", err
	}
	if o.replace {
		zero := int64(0)
		if err := o.client.Resource(podGVR).Namespace(pod.GetNamespace()).Delete(ctx, pod.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			return nil, "", err
		}
	}
	return created, cn, nil
}

// podCopy is the pod's copy for --copy-to, and the name of its debug
// container ("" when only --set-image changed it).
func (o *options) podCopy(pod *unstructured.Unstructured) (map[string]any, string, error) {
	md := map[string]any{"name": o.copyTo, "namespace": pod.GetNamespace()}
	if l := pod.GetLabels(); len(l) > 0 {
		md["labels"] = clone(pod.Object["metadata"].(map[string]any)["labels"])
	}
	if a := pod.GetAnnotations(); len(a) > 0 {
		md["annotations"] = clone(pod.Object["metadata"].(map[string]any)["annotations"])
	}
	spec, _ := clone(pod.Object["spec"]).(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	copied := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
	delete(spec, "ephemeralContainers")
	if o.shareChanged {
		spec["shareProcessNamespace"] = o.shareProcesses
	}
	if !o.sameNode {
		delete(spec, "nodeName")
	}
	for _, c := range containers(spec, "containers") {
		image := o.setImages["*"]
		if img, ok := o.setImages[fmt.Sprint(c["name"])]; ok {
			image = img
		}
		if image != "" {
			c["image"] = image
		}
	}
	cn := o.container
	c := container(spec, cn, true)
	if c == nil {
		if o.image == "" {
			if len(o.setImages) > 0 {
				return copied, "", nil
			}
			return nil, "", errors.New("you must specify image when creating new container")
		}
		if cn == "" {
			cn = o.containerName(spec)
		}
		c = map[string]any{"name": cn, "resources": map[string]any{}, "terminationMessagePolicy": "File"}
		spec["containers"] = append(list(spec["containers"]), c)
	}
	o.setArgs(c)
	if env := o.envList(); env != nil {
		c["env"] = env
	}
	if o.image != "" {
		c["image"] = o.image
	}
	if o.pullPolicy != "" {
		c["imagePullPolicy"] = o.pullPolicy
	}
	o.setStdio(c)
	applyProfile(o.profile, o.keep, copied, fmt.Sprint(c["name"]), podCopy)
	if err := o.customize(spec, "containers", cn, o.copyTo); err != nil {
		return nil, "", err
	}
	return copied, cn, nil
}

// debugNode creates the node's debugging pod.
func (o *options) debugNode(ctx context.Context, n *unstructured.Unstructured) (*unstructured.Unstructured, string, error) {
	cn := "debugger"
	if o.container != "" {
		cn = o.container
	}
	name := fmt.Sprintf("node-debugger-%s-%s", n.GetName(), cli.RandomSuffix(5))
	o.inform("Creating debugging pod %s with container %s on node %s.\n", name, cn, n.GetName())
	c := o.newContainer(cn)
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"app.kubernetes.io/managed-by": "kubectl-debug"}},
		"spec": map[string]any{
			"containers":    []any{c},
			"nodeName":      n.GetName(),
			"restartPolicy": "Never",
			"tolerations":   []any{map[string]any{"operator": "Exists"}},
		},
	}
	applyProfile(o.profile, o.keep, pod, cn, node)
	if err := o.customize(mapAt(pod, "spec"), "containers", cn, name); err != nil {
		return nil, "", err
	}
	created, err := o.client.Resource(podGVR).Namespace(o.namespace).Create(ctx, &unstructured.Unstructured{Object: pod}, metav1.CreateOptions{})
	if err != nil {
		return nil, "", err
	}
	return created, cn, nil
}

// warnNonRoot warns, as kubectl does, when the pod runs as a non-root user
// and the profile gave the container privileges or capabilities that may
// then not work.
func (o *options) warnNonRoot(c, pod map[string]any) {
	user, found, _ := unstructured.NestedFieldNoCopy(pod, "spec", "securityContext", "runAsUser")
	if !found || isZero(jsonNumber(user)) {
		return
	}
	sc, ok := c["securityContext"].(map[string]any)
	if !ok {
		return
	}
	if u, set := sc["runAsUser"]; set && isZero(jsonNumber(u)) {
		return
	}
	privileged, _ := sc["privileged"].(bool)
	add, _, _ := unstructured.NestedSlice(sc, "capabilities", "add")
	if !privileged && len(add) == 0 {
		return
	}
	fmt.Fprintln(o.errOut, `Warning: Non-root user is configured for the entire target Pod, and some capabilities granted by debug profile may not work. Please consider using "--custom" with a custom profile that specifies "securityContext.runAsUser: 0".`)
}

// jsonNumber is a number of an unstructured object as a json.Number (as
// isZero takes numbers).
func jsonNumber(v any) any {
	switch v.(type) {
	case int64, float64, int:
		return json.Number(fmt.Sprint(v))
	}
	return v
}

// sortedKeys are a map's keys, sorted.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// attachTo waits (without a deadline, as kubectl) for the debug container
// to run or end, noting why it waits, then attaches to it.
func (o *options) attachTo(ctx context.Context, f *cli.Factory, cmd *cobra.Command, pod *unstructured.Unstructured, container string) error {
	noted := ""
	pod, err := pods.WaitPod(ctx, o.client, pod.GetNamespace(), pod.GetName(), 0, func(p *unstructured.Unstructured) (bool, error) {
		state := pods.ContainerState(p, container)
		if state == nil {
			return false, nil
		}
		if state["running"] != nil || state["terminated"] != nil {
			return true, nil
		}
		waiting, _ := state["waiting"].(map[string]any)
		if msg, _ := waiting["message"].(string); msg != "" && msg != noted && !o.quiet {
			noted = msg
			fmt.Fprintf(o.errOut, "Warning: container %s: %s\n", container, msg)
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	a := pods.AttachOptions{Stdin: o.interactive, TTY: o.tty, Quiet: o.quiet, CommandName: cmd.Parent().CommandPath() + " attach"}
	return a.Attach(ctx, f, cmd, pod, container)
}
