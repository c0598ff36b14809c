package pods

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/moby/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
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
// error ends it with that error and the pod. A server that fails for a
// while (a dropped connection, 5xx, 429) is asked again with a growing
// pause, as a reflector does; its refusals (4xx) end the wait. A timeout of
// 0 waits until ctx ends; a timeout that passes is kubectl's "timed out
// waiting for the condition".
func WaitPod(ctx context.Context, c dynamic.Interface, namespace, name string, timeout time.Duration, done func(*unstructured.Unstructured) (bool, error)) (*unstructured.Unstructured, error) {
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	gone := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "")
	pods := c.Resource(podsGVR).Namespace(namespace)
	sel := "metadata.name=" + name
	pause := newPause()
	for {
		list, err := pods.List(wctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			if permanent(err) || !pause.wait(wctx) {
				return nil, waitError(ctx, wctx, err)
			}
			continue
		}
		if len(list.Items) > 0 {
			pod := &list.Items[0]
			if ok, err := done(pod); ok || err != nil {
				return pod, err
			}
		}
		w, err := pods.Watch(wctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			if permanent(err) || !pause.wait(wctx) {
				return nil, waitError(ctx, wctx, err)
			}
			continue
		}
		started := time.Now()
		pod, err := watchPod(wctx, w, gone, done)
		w.Stop()
		if pod != nil || err != nil {
			return pod, waitError(ctx, wctx, err)
		}
		// The watch ended (expired or dropped): list again, after a
		// pause when it ended at once.
		if time.Since(started) > time.Minute {
			pause = newPause()
		} else if !pause.wait(wctx) {
			return nil, waitError(ctx, wctx, wctx.Err())
		}
	}
}

// pause is WaitPod's growing wait between attempts: 100 ms doubling up to
// 5 s, with jitter.
type pause struct{ b wait.Backoff }

func newPause() *pause {
	return &pause{b: wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: math.MaxInt32, Cap: 5 * time.Second}}
}

// wait sleeps for the next step, or returns false when ctx ends first.
func (p *pause) wait(ctx context.Context) bool {
	t := time.NewTimer(p.b.Step())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// permanent reports a server's refusal that asking again would not
// change: a 4xx other than 408 and 429 (network errors, 5xx and
// throttling are worth a retry).
func permanent(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	code := st.Status().Code
	return code >= 400 && code < 500 && code != 408 && code != 429
}

// watchPod reads w until done is satisfied (the pod), fails (the pod and
// the error), the pod is deleted (gone) or w ends (nil, nil).
func watchPod(ctx context.Context, w watch.Interface, gone error, done func(*unstructured.Unstructured) (bool, error)) (*unstructured.Unstructured, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, nil
			}
			switch ev.Type {
			case watch.Deleted:
				return nil, gone
			case watch.Error:
				return nil, nil // list again
			}
			pod, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if ok, err := done(pod); ok || err != nil {
				return pod, err
			}
		}
	}
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
