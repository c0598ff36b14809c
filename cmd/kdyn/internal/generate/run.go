package generate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/pods"
)

var (
	podGVR     = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	serviceGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

// runFlags are kubectl run's own flags.
type runFlags struct {
	image, port, labels, restart, pullPolicy string
	envs, annotations                        []string
	command, privileged, expose              bool
	// attaching: --attach (implied by -i), -i, -t, --rm, and how
	attach, stdin, tty, rm, quiet, leaveStdinOpen bool
	detachKeys, cascade                           string
	podTimeout                                    time.Duration
}

// NewRunCommand returns "kdyn run": create a pod (and with --expose a
// service) from flags, as kubectl run does.
func NewRunCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	r := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run NAME --image=image [--env=\"key=value\"] [--port=port] [--dry-run=server|client] [--command] -- [COMMAND] [args...]",
		Short: "Run a particular image on the cluster",
		Long: `Create a Pod that runs one container of the image, labelled run=NAME (or with
-l), as kubectl run does; words after NAME are the container's args, or its
command with --command. --expose also creates a ClusterIP Service for
--port. With --dry-run=client -o yaml (or json) the output is byte for byte
kubectl's.

With --attach (implied by -i) kdyn waits up to --pod-running-timeout for the
pod to run and be ready, prints what it logged so far and attaches to it
as kubectl attach does (-i sends stdin, -t a terminal; ctrl-p,ctrl-q
detaches); when the attach fails it streams the log instead. With
--restart=Never or OnFailure it then waits for the pod to finish and exits
with its container's exit code. --rm deletes the pod (and service) at the
end.`,
		Example: `  # A pod running nginx
  kdyn run nginx --image=nginx

  # With environment variables, labels and a port, exposed by a service
  kdyn run web --image=nginx --env="DNS_DOMAIN=cluster" -l app=web --port=80 --expose

  # A command instead of the image's default
  kdyn run sleeper --image=busybox --restart=Never --command -- sleep 3600

  # An interactive shell in a pod that is deleted when it ends
  kdyn run -it --rm shell --image=busybox --restart=Never -- sh

  # Run a command, print its output and exit with its exit code
  kdyn run check --image=busybox --restart=Never --attach --rm -- sh -c 'exit 3'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("attach") && r.stdin {
				r.attach = true
			}
			pod, service, err := r.check(cmd, args)
			if err != nil {
				return err
			}
			dry, err := o.dryRun.Mode()
			if err != nil {
				return err
			}
			switch {
			case !r.attach && r.rm:
				return errors.New("--rm should only be used for attached containers")
			case r.attach && dry != cli.DryRunNone:
				return errors.New("--dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)")
			case r.podTimeout <= 0:
				return cli.Usagef("--pod-running-timeout must be higher than zero")
			}
			// kubectl records --save-config only for what it sends.
			o.saveConfig = o.saveConfig && dry != cli.DryRunClient
			return pods.QuietIfInterrupted(cmd.Context(), r.run(cmd, f, o, args[0], pod, service))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&r.image, "image", "", "The image of the container.")
	_ = cmd.MarkFlagRequired("image")
	fl.StringArrayVar(&r.envs, "env", nil, "An environment variable of the container, KEY=VALUE (repeatable).")
	fl.StringVar(&r.port, "port", "", "The port the container exposes.")
	fl.StringVarP(&r.labels, "labels", "l", "", "Labels of the pod, KEY=VALUE,... (default run=NAME).")
	fl.StringArrayVar(&r.annotations, "annotations", nil, "An annotation of the pod, KEY=VALUE (repeatable).")
	fl.StringVar(&r.restart, "restart", "Always", "The pod's restart policy: Always, OnFailure or Never.")
	fl.StringVar(&r.pullPolicy, "image-pull-policy", "", "The container's image pull policy: Always, IfNotPresent or Never (default: the server's).")
	fl.BoolVar(&r.command, "command", false, "Use the words after NAME as the container's command instead of its args.")
	fl.BoolVar(&r.privileged, "privileged", false, "Run the container privileged.")
	fl.BoolVar(&r.expose, "expose", false, "Also create a ClusterIP service for --port, selecting the pod.")
	fl.BoolVar(&r.attach, "attach", false, "Wait for the pod to run, then attach to it as 'attach' does (default: true with -i); with --restart=Never or OnFailure, exit with its container's exit code.")
	fl.BoolVarP(&r.stdin, "stdin", "i", false, "Keep stdin open on the container (and attach, sending stdin to it).")
	fl.BoolVarP(&r.tty, "tty", "t", false, "Allocate a TTY for the container.")
	fl.BoolVar(&r.rm, "rm", false, "Delete the pod (and --expose's service) after it exits; only when attaching.")
	fl.BoolVarP(&r.quiet, "quiet", "q", false, "Suppress the notes on stderr and the deletion lines of --rm.")
	fl.BoolVar(&r.leaveStdinOpen, "leave-stdin-open", false, "Leave the container's stdin open after the first attach ends (stdinOnce: false); kdyn then does not wait for the pod to finish.")
	fl.StringVar(&r.detachKeys, "detach-keys", pods.DefaultDetachKeys, "The key sequence that detaches from a -it session.")
	fl.StringVar(&r.cascade, "cascade", "background", "How --rm deletes: background, foreground or orphan.")
	fl.Lookup("cascade").NoOptDefVal = "background"
	// kubectl run has delete's flags; like kubectl's, --rm deletes with
	// the objects' own grace period and does not wait, whatever they say
	var ignoredGrace int
	var ignoredBool bool
	var ignoredTimeout time.Duration
	fl.IntVar(&ignoredGrace, "grace-period", -1, "Accepted as kubectl run accepts it; --rm uses the objects' own grace period, as kubectl's does.")
	fl.BoolVar(&ignoredBool, "force", false, "Accepted as kubectl run accepts it; --rm does not force, as kubectl's does not.")
	fl.BoolVar(&ignoredBool, "now", false, "Accepted as kubectl run accepts it (ignored, as by kubectl).")
	fl.BoolVar(&ignoredBool, "wait", false, "Accepted as kubectl run accepts it; --rm does not wait, as kubectl's does not.")
	fl.DurationVar(&ignoredTimeout, "timeout", 0, "Accepted as kubectl run accepts it (ignored, as by kubectl).")
	fl.DurationVar(&r.podTimeout, "pod-running-timeout", time.Minute, "How long to wait for the pod to run (and, when attached with --restart=Never or OnFailure, to finish).")
	o.addFlagsFor(cmd, "kubectl-run")
	o.record = cli.AddRecordFlag(cmd)
	return cmd
}

// check validates the flags in kubectl's order and words, and returns the
// pod's generator and the service's.
func (r *runFlags) check(cmd *cobra.Command, args []string) (pod, service generator, err error) {
	annotations, err := pairs(r.annotations, "annotations")
	if err != nil {
		return pod, service, err
	}
	labels, err := runLabels(r.labels)
	if err != nil {
		return pod, service, err
	}
	var envs []any
	for _, e := range r.envs {
		name, value, ok := strings.Cut(e, "=")
		if !ok || name == "" || len(validation.IsEnvVarName(name)) != 0 {
			return pod, service, fmt.Errorf("invalid env: %v", e)
		}
		envs = append(envs, fields{{"name", name}, {"value", value}})
	}
	switch r.restart {
	case "":
		// kubectl's default when the flag is given empty
		r.restart = "Always"
		if r.stdin {
			r.restart = "OnFailure"
		}
	case "Always", "OnFailure", "Never":
	default:
		return pod, service, fmt.Errorf("invalid restart policy: %s, valid values are: Always, OnFailure, Never", r.restart)
	}
	switch r.pullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		return pod, service, fmt.Errorf("invalid image pull policy: %s, valid values are: Always, IfNotPresent, Never", r.pullPolicy)
	}
	switch {
	case len(args) == 0 || cmd.ArgsLenAtDash() == 0:
		return pod, service, errors.New("NAME is required for run")
	case r.image == "":
		return pod, service, errors.New("--image is required")
	case !reference.ReferenceRegexp.MatchString(r.image):
		return pod, service, fmt.Errorf("invalid image name %q: %w", r.image, reference.ErrReferenceInvalidFormat)
	case r.tty && !r.stdin:
		return pod, service, errors.New("-i/--stdin is required for containers with -t/--tty=true")
	case r.expose && r.port == "":
		return pod, service, errors.New("--port must be set when exposing a service")
	}
	port := -1
	if r.port != "" {
		if port, err = strconv.Atoi(r.port); err != nil {
			return pod, service, errors.New("--port must be a number")
		}
	}
	words := args[1:]
	podLabels := labels
	if len(podLabels) == 0 {
		podLabels = map[string]string{"run": args[0]}
	}
	pod = generator{gvr: podGVR, kind: "Pod", namespaced: true,
		build: func(name, ns string) (*object, error) {
			c := fields{{"name", name}, {"image", r.image}}
			if len(words) > 0 {
				if r.command {
					c = append(c, field{"command", words})
				} else {
					c = append(c, field{"args", words})
				}
			}
			if port >= 0 {
				c = append(c, field{"ports", []any{fields{{"containerPort", port}}}})
			}
			if len(envs) > 0 {
				c = append(c, field{"env", envs})
			}
			c = append(c, field{"resources", fields{}})
			if r.pullPolicy != "" {
				c = append(c, field{"imagePullPolicy", r.pullPolicy})
			}
			if r.privileged {
				c = append(c, field{"securityContext", fields{{"privileged", true}}})
			}
			if r.stdin {
				c = append(c, field{"stdin", true})
				if !r.leaveStdinOpen {
					c = append(c, field{"stdinOnce", true})
				}
			}
			if r.tty {
				c = append(c, field{"tty", true})
			}
			spec := fields{{"containers", []any{c}}, {"restartPolicy", r.restart}, {"dnsPolicy", "ClusterFirst"}}
			return &object{gvr: podGVR, kind: "Pod", name: name, namespace: ns, labels: podLabels, annotations: annotations,
				body: fields{{"spec", spec}, {"status", fields{}}}}, nil
		}}
	service = generator{gvr: serviceGVR, kind: "Service", namespaced: true,
		build: func(name, ns string) (*object, error) {
			ports := []any{fields{{"protocol", "TCP"}, {"port", port}, {"targetPort", port}}}
			return &object{gvr: serviceGVR, kind: "Service", name: name, namespace: ns, labels: labels,
				body: fields{{"spec", fields{{"ports", ports}, {"selector", podLabels}}}, {"status", fields{{"loadBalancer", fields{}}}}}}, nil
		}}
	return pod, service, nil
}

// pairs parses KEY=VALUE arguments as kubectl does, naming every bad one.
func pairs(args []string, what string) (map[string]string, error) {
	out := map[string]string{}
	var bad []string
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			bad = append(bad, a)
			continue
		}
		out[k] = v
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("invalid %s format: %s", what, strings.Join(bad, ", "))
	}
	return out, nil
}

// runLabels parses -l KEY=VALUE,... as kubectl run does.
func runLabels(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, spec := range strings.Split(s, ",") {
		parts := strings.Split(spec, "=")
		if len(parts) != 2 {
			return nil, fmt.Errorf("unexpected label spec: %s", spec)
		}
		if parts[0] == "" {
			return nil, errors.New("unexpected empty label key")
		}
		out[parts[0]] = parts[1]
	}
	return out, nil
}
