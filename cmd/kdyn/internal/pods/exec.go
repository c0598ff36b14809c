package pods

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/remote"
	"github.com/kdyn/kdyn/dynamic"
)

type streamOptions struct {
	container  string
	stdin      bool
	tty        bool
	quiet      bool
	podTimeout time.Duration
	// detachKeys end an attached terminal session (attach only; "" is
	// kubectl's ctrl-p,ctrl-q).
	detachKeys string
}

func (o *streamOptions) addFlags(cmd *cobra.Command, podTimeout time.Duration) {
	fl := cmd.Flags()
	fl.StringVarP(&o.container, "container", "c", "", "Container name. If omitted, use the kubectl.kubernetes.io/default-container annotation for selecting the container to be attached or the first container in the pod will be chosen")
	fl.BoolVarP(&o.stdin, "stdin", "i", false, "Pass stdin to the container")
	fl.BoolVarP(&o.tty, "tty", "t", false, "Stdin is a TTY")
	fl.BoolVarP(&o.quiet, "quiet", "q", false, "Only print output from the remote session")
	addPodTimeoutFlag(cmd, &o.podTimeout, podTimeout)
}

// addPodTimeoutFlag adds --pod-running-timeout.
func addPodTimeoutFlag(cmd *cobra.Command, p *time.Duration, def time.Duration) {
	cmd.Flags().DurationVar(p, "pod-running-timeout", def, "The length of time (like 5s, 2m, or 3h, higher than zero) to wait until at least one pod is running")
}

// livePod is the pod behind obj that exec or attach reaches (what, in
// kubectl's refusal: "exec into a container"), refused when it has
// completed.
func livePod(ctx context.Context, c dynamic.Interface, obj *unstructured.Unstructured, timeout time.Duration, what string) (*unstructured.Unstructured, error) {
	pod, err := pickPod(ctx, c, obj, timeout, "attach to")
	if err != nil {
		return nil, err
	}
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	if phase == "Succeeded" || phase == "Failed" {
		return nil, fmt.Errorf("cannot %s in a completed pod; current phase is %s", what, phase)
	}
	return pod, nil
}

type execOptions struct {
	streamOptions
	manifests cli.ManifestFlags
}

// NewExecCommand returns "kdyn exec".
func NewExecCommand(f *cli.Factory) *cobra.Command {
	o := &execOptions{}
	cmd := &cobra.Command{
		Use:   "exec (POD | TYPE/NAME) [-c CONTAINER] [flags] -- COMMAND [args...]",
		Short: "Execute a command in a container",
		Long: `Run a command in a container of a running pod, as kubectl exec does: the
pod's node runs it and the API server relays its input and output. kdyn
exits with the command's exit code ("command terminated with exit code 3").

A bare NAME is a pod; TYPE/NAME picks one pod of a workload or service
(waiting up to --pod-running-timeout for one), and -f the object a
manifest names. Without -c, the container is the one the pod's
kubectl.kubernetes.io/default-container annotation names, else its first.

The streams go over a WebSocket (protocol v5.channel.k8s.io), or over SPDY
when the server or a proxy refuses the WebSocket upgrade, as kubectl does
since v1.31.`,
		Example: `  # Run date in pod web-1's default container
  kdyn exec web-1 -- date

  # In a named container
  kdyn exec web-1 -c sidecar -- cat /etc/hostname

  # Pass stdin
  echo hello | kdyn exec -i web-1 -- cat

  # An interactive shell in a terminal
  kdyn exec -it web-1 -- sh

  # In the first pod of a deployment
  kdyn exec deploy/web -- ls /`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return QuietIfInterrupted(cmd.Context(), runExec(cmd, f, o, args))
		},
	}
	o.addFlags(cmd, time.Minute)
	o.manifests.AddFlags(cmd, "to use to exec into the resource")
	return cmd
}

func runExec(cmd *cobra.Command, f *cli.Factory, o *execOptions, args []string) error {
	ctx := cmd.Context()
	dash := cmd.ArgsLenAtDash()
	var resource string
	var command []string
	switch {
	case dash == 0 || dash == 1:
		if dash == 1 {
			resource = args[0]
		}
		command = args[dash:]
	case len(args) > 1 || (len(args) > 0 && o.manifests.Given()):
		return cli.Usagef("exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead")
	case len(args) == 1:
		resource = args[0]
	}
	if o.podTimeout <= 0 {
		return cli.Usagef("--pod-running-timeout must be higher than zero")
	}
	if resource == "" && !o.manifests.Given() {
		return errors.New("pod, type/name or --filename must be specified")
	}
	if len(command) == 0 {
		return errors.New("you must specify at least one command for the container")
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	var obj *unstructured.Unstructured
	if o.manifests.Given() {
		targets, err := cli.LiveManifestTargets(ctx, f, &o.manifests, "exec")
		if err != nil {
			return err
		}
		if len(targets) != 1 {
			return errors.New("cannot exec into multiple objects at a time")
		}
		if obj, err = targets[0].Resource(dc).Get(ctx, targets[0].Name, metav1.GetOptions{}); err != nil {
			return err
		}
	} else if obj, err = object(ctx, f, dc, []string{resource}); err != nil {
		return err
	}
	errOut := cmd.ErrOrStderr()
	pod, err := livePod(ctx, dc, obj, o.podTimeout, "exec into a container")
	if err != nil {
		return err
	}
	container, err := o.pickContainer(pod, errOut)
	if err != nil {
		return err
	}
	params := url.Values{"container": {container}, "command": command}
	_, err = o.stream(ctx, f, cmd, pod, "exec", params)
	return err
}

// pickContainer is -c, checked, or the pod's default container.
func (o *streamOptions) pickContainer(pod *unstructured.Unstructured, errOut io.Writer) (string, error) {
	if o.container == "" {
		return streamContainer(pod, errOut, o.quiet)
	}
	if !findContainer(pod, o.container) {
		return "", fmt.Errorf("container %s is not valid for pod %s out of: %s", o.container, pod.GetName(), allContainerNames(pod))
	}
	return o.container, nil
}

// stream connects the command's stdin, stdout and stderr to the pod's
// sub subresource (exec or attach), with a raw terminal for -it on a
// terminal.
//
// It reports whether the terminal was raw.
func (o *streamOptions) stream(ctx context.Context, f *cli.Factory, cmd *cobra.Command, pod *unstructured.Unstructured, sub string, params url.Values) (bool, error) {
	s := remote.Streams{Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
	tty := false
	if o.stdin {
		s.Stdin = cmd.InOrStdin()
		if o.tty {
			in, isFile := s.Stdin.(*os.File)
			if isFile && term.IsTerminal(int(in.Fd())) {
				tty = true
			} else if !o.quiet {
				fmt.Fprintln(cmd.ErrOrStderr(), "Unable to use a TTY - input is not a terminal or the right kind of file")
			}
		}
	}
	if tty {
		in := s.Stdin.(*os.File)
		state, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			return false, fmt.Errorf("cannot put the terminal in raw mode: %w", err)
		}
		defer term.Restore(int(in.Fd()), state)
		s.TTY, s.Stderr = true, nil
		// attach first sends a size one larger, then the real one, as
		// kubectl does, so that a reattached program redraws its screen
		sizeCtx, stop := context.WithCancel(ctx) // the watch ends with the stream
		defer stop()
		s.Resize = watchSize(sizeCtx, in, sub == "attach")
		if sub == "attach" {
			d, err := detachable(s.Stdin, o.detachKeys)
			if err != nil {
				return false, err
			}
			s.Stdin = d
		}
	}
	params.Set("tty", boolString(tty))
	return tty, podStream(ctx, f, pod, sub, params, s)
}

// podStream runs the streams s against the pod's sub subresource (exec or
// attach) with the query params (container, command; stdin, stdout and
// stderr are set from s).
func podStream(ctx context.Context, f *cli.Factory, pod *unstructured.Unstructured, sub string, params url.Values, s remote.Streams) error {
	params.Set("stdout", boolString(s.Stdout != nil))
	params.Set("stderr", boolString(s.Stderr != nil))
	params.Set("stdin", boolString(s.Stdin != nil))
	if params.Get("tty") == "" {
		params.Set("tty", "false")
	}
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	u := rc.Get().Version("v1").Namespace(pod.GetNamespace()).Resource("pods").Name(pod.GetName()).SubResource(sub).URL()
	u.RawQuery = params.Encode()
	hc := rc.UpgradeClient()
	log := f.Logger()
	return remote.Stream(ctx, hc, u, s, func(err error) {
		log.V(4).Info("falling back to SPDY", "err", err)
	})
}

// watchSize sends the terminal's size now and after every SIGWINCH; with
// redraw, the first size sent is one column and one row larger.
func watchSize(ctx context.Context, t *os.File, redraw bool) <-chan remote.TerminalSize {
	ch := make(chan remote.TerminalSize, 2)
	send := func(grow uint16) {
		w, h, err := term.GetSize(int(t.Fd()))
		if err != nil {
			return
		}
		select {
		case ch <- remote.TerminalSize{Width: uint16(w) + grow, Height: uint16(h) + grow}:
		default:
		}
	}
	if redraw {
		send(1)
	}
	send(0)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	go func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sig:
				send(0)
			}
		}
	}()
	return ch
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// attachOptions are attach's flags.
type attachOptions struct{ streamOptions }

// NewAttachCommand returns "kdyn attach".
func NewAttachCommand(f *cli.Factory) *cobra.Command {
	o := &attachOptions{}
	cmd := &cobra.Command{
		Use:   "attach (POD | TYPE/NAME) -c CONTAINER",
		Short: "Attach to a running container",
		Long: `Attach to the main process of a running container, as kubectl attach does:
its output is shown and, with -i, kdyn's stdin becomes its stdin (the
container must have stdin: true, and tty: true for -t). A bare NAME is a
pod; TYPE/NAME picks one pod of a workload or service. The streams go over
a WebSocket, or SPDY when the upgrade is refused.`,
		Example: `  # The output of pod web-1's default container
  kdyn attach web-1

  # Send stdin to container app of the first pod of a deployment
  kdyn attach deploy/web -c app -i

  # An interactive terminal
  kdyn attach -it web-1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return QuietIfInterrupted(cmd.Context(), runAttach(cmd, f, o, args))
		},
	}
	o.addFlags(cmd, time.Minute)
	cmd.Flags().StringVar(&o.detachKeys, "detach-keys", DefaultDetachKeys, "Override the key sequence for detaching a container")
	return cmd
}

func runAttach(cmd *cobra.Command, f *cli.Factory, o *attachOptions, args []string) error {
	ctx := cmd.Context()
	if len(args) == 0 {
		return errors.New("at least 1 argument is required for attach")
	}
	if len(args) > 2 {
		return fmt.Errorf("expected POD, TYPE/NAME, or TYPE NAME, (at most 2 arguments) saw %d: %v", len(args), args)
	}
	if o.podTimeout <= 0 {
		return errors.New("--pod-running-timeout must be higher than zero")
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	obj, err := object(ctx, f, dc, args)
	if err != nil {
		return err
	}
	errOut := cmd.ErrOrStderr()
	pod, err := livePod(ctx, dc, obj, o.podTimeout, "attach a container")
	if err != nil {
		return err
	}
	container, err := o.pickContainer(pod, errOut)
	if err != nil {
		return fmt.Errorf("cannot attach to the container: %v", err)
	}
	return o.attach(ctx, f, cmd, pod, container, cmd.CommandPath())
}

// attach attaches to a container of a running pod as kubectl attach does
// once it has them: the terminal follows the container's tty, the notes
// go to stderr and a -it session ends with the hint to resume it (attach
// is the command's name in it).
func (o *streamOptions) attach(ctx context.Context, f *cli.Factory, cmd *cobra.Command, pod *unstructured.Unstructured, container, attach string) error {
	errOut := cmd.ErrOrStderr()
	c, _ := lookupContainer(pod, container)
	hasTTY := c.tty
	if o.tty && !hasTTY {
		o.tty = false
		if !o.quiet {
			fmt.Fprintf(errOut, "error: Unable to use a TTY - container %s did not allocate one\n", container)
		}
	} else if !o.tty && hasTTY {
		o.tty = true // a container with a TTY sends no stream headers: attach with one too
	}
	if !o.quiet {
		fmt.Fprintln(errOut, "All commands and output from this session will be recorded in container logs, including credentials and sensitive information passed through the command prompt.")
		fmt.Fprintln(errOut, "If you don't see a command prompt, try pressing enter.")
	}
	raw, err := o.stream(ctx, f, cmd, pod, "attach", url.Values{"container": {container}})
	if err != nil {
		return err
	}
	if raw && o.stdin && !o.quiet {
		if c.kind == "spec.ephemeralContainers" {
			fmt.Fprintf(cmd.OutOrStdout(), "Session ended, the ephemeral container will not be restarted but may be reattached using '%s %s -c %s -n %s -i -t' if it is still running\n", attach, pod.GetName(), container, pod.GetNamespace())
		} else {
			fmt.Fprintf(cmd.OutOrStdout(), "Session ended, resume using '%s %s -c %s -n %s -i -t' command\n", attach, pod.GetName(), container, pod.GetNamespace())
		}
	}
	return nil
}
