package pods

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/moby/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
)

// DefaultDetachKeys is kubectl's key sequence that ends an attached
// terminal session without stopping the container.
const DefaultDetachKeys = "ctrl-p,ctrl-q"

// preAttachLogTimeout bounds the read of what a created container printed
// before the attach connects, as kubectl run's.
const preAttachLogTimeout = 5 * time.Second

// AttachOptions are how a command attaches to a container it has just
// made (run --attach, debug --attach), as kubectl's run and debug do
// through kubectl attach.
type AttachOptions struct {
	// Stdin sends the command's stdin to the container; TTY asks for a
	// terminal (reconciled with the container's own tty, as attach does).
	Stdin, TTY bool
	// Quiet leaves out the notes on stderr.
	Quiet bool
	// DetachKeys ends a -it session ("ctrl-p,ctrl-q" when empty).
	DetachKeys string
	// CommandName is the attach command for the hint after a -it session
	// ("kdyn attach").
	CommandName string
	// PreLogs prints what the container logged before the attach
	// connects (kubectl run does; debug does not).
	PreLogs bool
}

// Attach attaches to the container (the default one when "") of pod, which
// its creator waited for: a pod that has completed, or a container that has
// terminated, has its log printed instead. When the attach fails, a warning
// names why and the log is streamed instead ("falling back to streaming
// logs"), as kubectl does.
func (a AttachOptions) Attach(ctx context.Context, f *cli.Factory, cmd *cobra.Command, pod *unstructured.Unstructured, container string) error {
	o := &streamOptions{container: container, stdin: a.Stdin, tty: a.TTY, quiet: a.Quiet, detachKeys: a.DetachKeys}
	errOut := cmd.ErrOrStderr()
	name, err := o.pickContainer(pod, errOut)
	if err != nil {
		return fmt.Errorf("cannot attach to the container: %v", err)
	}
	out := cmd.OutOrStdout()
	if completed(pod, name) {
		return Logs(ctx, f, out, pod, name, time.Time{})
	}
	var since time.Time
	if a.PreLogs {
		lctx, cancel := context.WithTimeout(ctx, preAttachLogTimeout)
		if err := Logs(lctx, f, out, pod, name, time.Time{}); err != nil {
			fmt.Fprintf(errOut, "warning: couldn't fetch pre-attach logs: %v\n", err)
		} else {
			since = time.Now()
		}
		cancel()
	}
	if err := o.attach(ctx, f, cmd, pod, name, a.CommandName); err != nil {
		if ctx.Err() != nil {
			return err
		}
		fmt.Fprintf(errOut, "warning: couldn't attach to pod/%s, falling back to streaming logs: %v\n", pod.GetName(), err)
		return Logs(ctx, f, out, pod, name, since)
	}
	return nil
}

// completed reports whether the pod has finished, or (for a named
// container) the container has terminated.
func completed(pod *unstructured.Unstructured, container string) bool {
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	if phase == "Succeeded" || phase == "Failed" {
		return true
	}
	if container == "" {
		return false
	}
	_, terminated := ContainerState(pod, container)["terminated"]
	return terminated
}

// ContainerState is the state member of the named container's status
// (regular, init or ephemeral): {"running": ...}, {"waiting": ...} or
// {"terminated": ...}; nil while the container has no status.
func ContainerState(pod *unstructured.Unstructured, container string) map[string]any {
	for _, list := range []string{"containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"} {
		statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", list)
		for _, s := range statuses {
			m, _ := s.(map[string]any)
			if m["name"] == container {
				state, _ := m["state"].(map[string]any)
				return state
			}
		}
	}
	return nil
}

// Logs writes the container's log as it is now (not followed) to out,
// from since on when it is not zero.
func Logs(ctx context.Context, f *cli.Factory, out io.Writer, pod *unstructured.Unstructured, container string, since time.Time) error {
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	o := &logsOptions{tail: -1}
	if !since.IsZero() {
		o.sinceTime = since.UTC().Format(time.RFC3339)
	}
	return o.consume(ctx, rc, logRequest{pod: pod.GetName(), namespace: pod.GetNamespace(), container: container}, out, io.Discard)
}

// WaitPod watches pod namespace/name until done says it is what the caller
// waits for, and returns it. A deletion ends the wait with NotFound; done's
// error ends it with that error and the pod. The list and watch are
// informer.Follow's: a server that fails for a while (a dropped
// connection, 5xx, 429) is asked again after a growing pause, its
// refusals end the wait. A timeout of 0 waits until ctx ends; a timeout
// that passes is kubectl's "timed out waiting for the condition".
func WaitPod(ctx context.Context, c dynamic.Interface, namespace, name string, timeout time.Duration, done func(*unstructured.Unstructured) (bool, error)) (*unstructured.Unstructured, error) {
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var pod *unstructured.Unstructured
	check := func(p *unstructured.Unstructured) (bool, error) {
		ok, err := done(p)
		if ok || err != nil {
			pod = p
		}
		return ok, err
	}
	opts := informer.FollowOptions{
		ListOptions:    metav1.ListOptions{FieldSelector: "metadata.name=" + name},
		InitialBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second,
	}
	err := informer.Follow(wctx, cli.ResourceSource(c.Resource(podsGVR).Namespace(namespace)), opts, informer.FollowFuncs[*unstructured.Unstructured]{
		Listed: func(items []*unstructured.Unstructured) (bool, error) {
			if len(items) == 0 {
				return false, nil
			}
			return check(items[0])
		},
		Event: func(typ watch.EventType, p *unstructured.Unstructured) (bool, error) {
			if typ == watch.Deleted {
				return false, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "")
			}
			return check(p)
		},
	})
	return pod, waitError(ctx, wctx, err)
}

// waitError words the end of wctx (the wait's own deadline) as kubectl
// does; the caller's cancellation and other errors pass through.
func waitError(ctx, wctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return errors.New("timed out waiting for the condition")
	}
	return err
}

// detachable ends stdin with EOF when the detach keys are typed, as
// kubectl's attach does in a terminal.
func detachable(in io.Reader, keys string) (io.Reader, error) {
	if keys == "" {
		keys = DefaultDetachKeys
	}
	seq, err := term.ToBytes(keys)
	if err != nil {
		return nil, fmt.Errorf("could not bind detach keys: %w", err)
	}
	return &detachReader{r: term.NewEscapeProxy(in, seq)}, nil
}

type detachReader struct{ r io.Reader }

func (d *detachReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if errors.As(err, new(term.EscapeError)) {
		err = io.EOF
	}
	return n, err
}
