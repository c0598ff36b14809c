package generate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/delete"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/pods"
)

// removeTimeout bounds --rm's deletions, which run even when the session
// was interrupted.
const removeTimeout = 30 * time.Second

// errPodCompleted ends the wait for a running pod when it has already
// finished.
var errPodCompleted = errors.New("pod ran to completion")

// run creates the pod (and --expose's service), then prints them or, with
// --attach, attaches to the pod.
func (r *runFlags) run(cmd *cobra.Command, f *cli.Factory, o *options, name string, pod, service generator) error {
	ctx := cmd.Context()
	p, err := o.make(ctx, f, name, pod)
	if err != nil {
		return err
	}
	created := []*made{p}
	var serviceErr error
	if r.expose {
		s, err := o.make(ctx, f, name, service)
		if err != nil {
			serviceErr = err
		} else {
			created = append(created, s)
		}
	}
	if r.attach {
		if serviceErr != nil {
			fmt.Fprintf(f.Streams.ErrOut, "warning: %v\n", serviceErr)
		}
		return r.attachTo(cmd, f, created)
	}
	out, _, _ := cli.WriteOutput(o.output)
	for i, m := range created {
		if i > 0 && out.Kind == cli.OutYAML {
			fmt.Fprintln(f.Streams.Out, "---")
		}
		if err := o.print(f, m); err != nil {
			return err
		}
	}
	return serviceErr
}

// attachTo waits for the created pod to run, attaches to it and, with
// --restart=Never or OnFailure (and stdin closed after the first attach),
// waits for it to finish and returns its container's exit code, as
// kubectl run does. --rm deletes what was created at the end.
func (r *runFlags) attachTo(cmd *cobra.Command, f *cli.Factory, created []*made) error {
	ctx := cmd.Context()
	if r.rm {
		defer r.remove(ctx, f, created)
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	p := created[0]
	pod, err := pods.WaitPod(ctx, dc, p.namespace, p.name, r.podTimeout, runningAndReady)
	if err != nil && !errors.Is(err, errPodCompleted) {
		return err
	}
	a := pods.AttachOptions{Stdin: r.stdin, TTY: r.tty, Quiet: r.quiet, DetachKeys: r.detachKeys,
		CommandName: cmd.Parent().CommandPath() + " attach", PreLogs: true}
	if err := a.Attach(ctx, f, cmd, pod, ""); err != nil {
		return err
	}
	if r.leaveStdinOpen || r.restart == "Always" {
		return nil
	}
	finished := func(u *unstructured.Unstructured) (bool, error) {
		phase := podPhase(u)
		return phase == "Succeeded" || (phase == "Failed" && r.restart == "Never"), nil
	}
	if pod, err = pods.WaitPod(ctx, dc, p.namespace, p.name, r.podTimeout, finished); err != nil {
		return err
	}
	return podResult(pod)
}

// runningAndReady is kubectl run's wait before attaching: the pod runs and
// is Ready, or has already completed (errPodCompleted).
func runningAndReady(u *unstructured.Unstructured) (bool, error) {
	switch podPhase(u) {
	case "Succeeded", "Failed":
		return false, errPodCompleted
	case "Running":
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Ready" && m["status"] == "True" {
				return true, nil
			}
		}
	}
	return false, nil
}

func podPhase(u *unstructured.Unstructured) string {
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return phase
}

// podResult is the finished pod's outcome as kubectl run words it: nil
// when it succeeded, its (first) container's exit code when it failed.
func podResult(pod *unstructured.Unstructured) error {
	ns, name := pod.GetNamespace(), pod.GetName()
	switch phase := podPhase(pod); phase {
	case "Succeeded":
		return nil
	case "Failed":
		statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
		var term map[string]any
		if len(statuses) > 0 {
			s, _ := statuses[0].(map[string]any)
			term, _, _ = unstructured.NestedMap(s, "state", "terminated")
		}
		code, _, _ := unstructured.NestedInt64(term, "exitCode")
		if code == 0 {
			return fmt.Errorf("pod %s/%s failed with unknown exit code", ns, name)
		}
		reason, _ := term["reason"].(string)
		message, _ := term["message"].(string)
		return &exitCodeError{msg: fmt.Sprintf("pod %s/%s terminated (%s)\n%s", ns, name, reason, message), code: int(code)}
	default:
		return fmt.Errorf("pod %s/%s left in phase %s", ns, name, phase)
	}
}

// exitCodeError carries the exit code of the pod's container, which kdyn
// exits with (cli.ExitStatuser).
type exitCodeError struct {
	msg  string
	code int
}

func (e *exitCodeError) Error() string { return e.msg }

// ExitStatus is the container's exit code.
func (e *exitCodeError) ExitStatus() int { return e.code }

// remove deletes what run created (--rm), printing kubectl's lines unless
// --quiet; it runs even when ctx was cancelled (an interrupted session), and
// a failure is a warning, as the run's own result is what kdyn reports.
func (r *runFlags) remove(ctx context.Context, f *cli.Factory, created []*made) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	policy, err := delete.ParseCascade(f, r.cascade)
	if err != nil {
		fmt.Fprintf(f.Streams.ErrOut, "warning: --rm: %v\n", err)
		return
	}
	rc, err := f.RESTClient()
	if err != nil {
		fmt.Fprintf(f.Streams.ErrOut, "warning: --rm: %v\n", err)
		return
	}
	for _, m := range created {
		item := &delete.Item{GVR: m.g.gvr, GroupKind: schema.GroupKind{Group: m.g.gvr.Group, Kind: m.g.kind},
			Namespaced: m.g.namespaced, Namespace: m.namespace, Name: m.name}
		_, err := delete.Send(ctx, rc, item, policy, -1, cli.DryRunNone)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			fmt.Fprintf(f.Streams.ErrOut, "warning: --rm could not delete %s/%s: %v\n", item.GroupKind.Kind, m.name, err)
		case !r.quiet:
			fmt.Fprintln(f.Streams.Out, delete.DeletedLine(item, "deleted"))
		}
	}
}
