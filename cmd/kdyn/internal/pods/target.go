package pods

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
)

// podsGVR is the core pods resource.
var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// defaultContainerAnnotation names the container commands use when none
// is given (kubectl's kubectl.kubernetes.io/default-container).
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// order is how the pods behind an object are ranked when one is picked.
type order int

const (
	// forLogs is kubectl's ByLogging: on a node first, Running before
	// Unknown before Pending, ready first, ready longest first, most
	// restarts first, oldest first.
	forLogs order = iota
	// forAttach is kubectl's reverse of ActivePods (exec, attach,
	// port-forward): on a node first, Running before Unknown before
	// Pending, ready first, ready longest first, fewest restarts first,
	// oldest first.
	forAttach
)

// object reads the object an argument names: NAME is a pod, TYPE/NAME (or
// TYPE NAME) any resource.
func object(ctx context.Context, f *cli.Factory, c dynamic.Interface, args []string) (*unstructured.Unstructured, error) {
	if len(args) == 1 && !strings.Contains(args[0], "/") {
		args = []string{"pods", args[0]}
	}
	targets, err := cli.NamedTargets(ctx, f, args)
	if err != nil {
		return nil, err
	}
	if len(targets) != 1 {
		return nil, errors.New("expected a resource")
	}
	return targets[0].Resource(c).Get(ctx, targets[0].Name, metav1.GetOptions{})
}

// goType is how kubectl names an object's type in its messages
// ("*v1.ConfigMap").
func goType(obj *unstructured.Unstructured) string {
	gv, _ := schema.ParseGroupVersion(obj.GetAPIVersion())
	return "*" + gv.Version + "." + obj.GetKind()
}

// selectorFor is the pod selector of a workload or Service, as kubectl's
// SelectorsForObject has it.
func selectorFor(obj *unstructured.Unstructured) (string, error) {
	switch obj.GetKind() {
	case "ReplicationController", "Service":
		m, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector")
		if obj.GetKind() == "Service" && len(m) == 0 {
			return "", errors.New("invalid service: service has no selector")
		}
		return labels.SelectorFromSet(m).String(), nil
	case "ReplicaSet", "StatefulSet", "DaemonSet", "Deployment", "Job":
		sel, _, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, &ls); err != nil {
			return "", fmt.Errorf("invalid label selector: %v", err)
		}
		s, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			return "", fmt.Errorf("invalid label selector: %v", err)
		}
		return s.String(), nil
	}
	return "", fmt.Errorf("selector for %s not implemented", goType(obj))
}

// podsFor returns obj itself when it is a Pod, else the pods its selector
// picks in its namespace, ranked by ord; when there are none yet it waits
// up to timeout for one to appear (the first that does is the result).
func podsFor(ctx context.Context, c dynamic.Interface, obj *unstructured.Unstructured, ord order, timeout time.Duration, verb string) ([]*unstructured.Unstructured, error) {
	if obj.GetKind() == "Pod" && obj.GetAPIVersion() == "v1" {
		return []*unstructured.Unstructured{obj}, nil
	}
	sel, err := selectorFor(obj)
	if err != nil {
		return nil, fmt.Errorf("cannot %s %s: %v", verb, goType(obj), err)
	}
	pods := c.Resource(podsGVR).Namespace(obj.GetNamespace())
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	if len(list.Items) > 0 {
		out := make([]*unstructured.Unstructured, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int { return comparePods(a, b, ord) })
		return out, nil
	}
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	w, err := pods.Watch(wctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("timed out waiting for the condition")
			}
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					return []*unstructured.Unstructured{u}, nil
				}
			}
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("timed out waiting for the condition")
		}
	}
}

// pickPod is the first of the pods behind obj, in kubectl's order for
// exec, attach and port-forward (which, unlike logs, do not say which pod
// they chose).
func pickPod(ctx context.Context, c dynamic.Interface, obj *unstructured.Unstructured, timeout time.Duration, verb string) (*unstructured.Unstructured, error) {
	pods, err := podsFor(ctx, c, obj, forAttach, timeout, verb)
	if err != nil {
		return nil, err
	}
	return pods[0], nil
}

// podFacts are what the rankings read of a pod.
type podFacts struct {
	node      string
	phase     string
	ready     bool
	readyAt   time.Time
	restarts  int64
	createdAt time.Time
	deletedAt time.Time // zero unless the pod is being deleted
}

func factsOf(p *unstructured.Unstructured) podFacts {
	var f podFacts
	f.node, _, _ = unstructured.NestedString(p.Object, "spec", "nodeName")
	f.phase, _, _ = unstructured.NestedString(p.Object, "status", "phase")
	conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			f.ready = m["status"] == "True"
			if s, _ := m["lastTransitionTime"].(string); s != "" {
				f.readyAt, _ = time.Parse(time.RFC3339, s)
			}
		}
	}
	statuses, _, _ := unstructured.NestedSlice(p.Object, "status", "containerStatuses")
	for _, s := range statuses {
		m, _ := s.(map[string]any)
		if n, ok := m["restartCount"].(int64); ok && n > f.restarts {
			f.restarts = n
		}
	}
	f.createdAt = p.GetCreationTimestamp().Time
	if d := p.GetDeletionTimestamp(); d != nil {
		f.deletedAt = d.Time
	}
	return f
}

// comparePods ranks two pods (negative: a first) in the order ord names.
func comparePods(a, b *unstructured.Unstructured, ord order) int {
	fa, fb := factsOf(a), factsOf(b)
	if ord == forAttach {
		// the reverse of kubectl's ActivePods: the most active first
		switch {
		case activeLess(fb, fa):
			return -1
		case activeLess(fa, fb):
			return 1
		}
		return 0
	}
	if fa.node != fb.node && (fa.node == "" || fb.node == "") {
		return boolFirst(fa.node != "")
	}
	logPhase := map[string]int{"Running": 0, "Unknown": 1, "Pending": 2}
	if logPhase[fa.phase] != logPhase[fb.phase] {
		return logPhase[fa.phase] - logPhase[fb.phase]
	}
	if fa.ready != fb.ready {
		return boolFirst(fa.ready)
	}
	if fa.ready && fb.ready && !fa.readyAt.Equal(fb.readyAt) {
		return earlierFirst(fa.readyAt, fb.readyAt)
	}
	if fa.restarts != fb.restarts {
		return int(fb.restarts - fa.restarts)
	}
	if !fa.createdAt.Equal(fb.createdAt) {
		return earlierFirst(fa.createdAt, fb.createdAt)
	}
	return 0
}

// activeLess is kubectl's ActivePods order: whether a is less active than
// b (unassigned, then Pending before Unknown before Running, not ready,
// being deleted (sooner first), ready for less time, more restarts, newer).
func activeLess(a, b podFacts) bool {
	if a.node != b.node && (a.node == "" || b.node == "") {
		return a.node == ""
	}
	phase := map[string]int{"Pending": 0, "Unknown": 1, "Running": 2}
	if phase[a.phase] != phase[b.phase] {
		return phase[a.phase] < phase[b.phase]
	}
	if a.ready != b.ready {
		return !a.ready
	}
	if ad, bd := !a.deletedAt.IsZero(), !b.deletedAt.IsZero(); ad != bd {
		return ad
	} else if ad && !a.deletedAt.Equal(b.deletedAt) {
		return a.deletedAt.Before(b.deletedAt)
	}
	if a.ready && b.ready && !a.readyAt.Equal(b.readyAt) {
		return afterOrZero(a.readyAt, b.readyAt)
	}
	if a.restarts != b.restarts {
		return a.restarts > b.restarts
	}
	if !a.createdAt.Equal(b.createdAt) {
		return afterOrZero(a.createdAt, b.createdAt)
	}
	return false
}

// afterOrZero reports whether t1 is zero or after t2 (when t2 is not zero).
func afterOrZero(t1, t2 time.Time) bool {
	if t1.IsZero() || t2.IsZero() {
		return t1.IsZero()
	}
	return t1.After(t2)
}

func boolFirst(aFirst bool) int {
	if aFirst {
		return -1
	}
	return 1
}

// earlierFirst puts the earlier time first and a zero time last.
func earlierFirst(a, b time.Time) int {
	switch {
	case a.IsZero():
		return 1
	case b.IsZero():
		return -1
	}
	return a.Compare(b)
}

// container is one container of a pod spec.
type container struct {
	name string
	kind string // "spec.containers", "spec.initContainers", "spec.ephemeralContainers"
	tty  bool
}

// containersOf lists a pod's containers: init containers, containers, then
// ephemeral containers (the order of logs --all-containers).
func containersOf(pod *unstructured.Unstructured) []container {
	var out []container
	for _, kind := range []string{"initContainers", "containers", "ephemeralContainers"} {
		list, _, _ := unstructured.NestedSlice(pod.Object, "spec", kind)
		for _, c := range list {
			m, _ := c.(map[string]any)
			name, _ := m["name"].(string)
			tty, _ := m["tty"].(bool)
			out = append(out, container{name: name, kind: "spec." + kind, tty: tty})
		}
	}
	return out
}

// allContainerNames is kubectl's list of a pod's containers in messages:
// "a, b, debugger (ephem), init (init)".
func allContainerNames(pod *unstructured.Unstructured) string {
	all := containersOf(pod)
	var names []string
	for _, k := range []struct{ kind, suffix string }{{"spec.containers", ""}, {"spec.ephemeralContainers", " (ephem)"}, {"spec.initContainers", " (init)"}} {
		for _, c := range all {
			if c.kind == k.kind {
				names = append(names, c.name+k.suffix)
			}
		}
	}
	return strings.Join(names, ", ")
}

// lookupContainer finds the pod's container of that name.
func lookupContainer(pod *unstructured.Unstructured, name string) (container, bool) {
	for _, c := range containersOf(pod) {
		if c.name == name {
			return c, true
		}
	}
	return container{}, false
}

// findContainer reports whether the pod has a container of that name.
func findContainer(pod *unstructured.Unstructured, name string) bool {
	_, ok := lookupContainer(pod, name)
	return ok
}

// defaultContainer is the container logs reads when none is named: the
// one the default-container annotation names (a warning, and the first
// container, when it names none of the pod's), else the first; when the
// pod has more than one container and quiet is false, errOut is told
// ("Defaulted container "a" out of: a, b").
func defaultContainer(pod *unstructured.Unstructured, errOut io.Writer, quiet bool) (string, error) {
	if name := pod.GetAnnotations()[defaultContainerAnnotation]; name != "" {
		if findContainer(pod, name) {
			return name, nil
		}
		fmt.Fprintf(errOut, "Default container name %q not found in pod %s\n", name, pod.GetName())
	}
	return firstContainer(pod, errOut, quiet)
}

// streamContainer is the container exec, attach and cp use when none is
// named, as kubectl's FindOrDefaultContainerByName: an annotation that
// names none of the pod's containers is an error.
func streamContainer(pod *unstructured.Unstructured, errOut io.Writer, quiet bool) (string, error) {
	if name := pod.GetAnnotations()[defaultContainerAnnotation]; name != "" {
		if !findContainer(pod, name) {
			return "", fmt.Errorf("container %s is not valid for pod %s out of: %s", name, pod.GetName(), allContainerNames(pod))
		}
		return name, nil
	}
	return firstContainer(pod, errOut, quiet)
}

// firstContainer is the pod's first container, with the "Defaulted
// container" note when it has others.
func firstContainer(pod *unstructured.Unstructured, errOut io.Writer, quiet bool) (string, error) {
	list, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	if len(list) == 0 {
		return "", fmt.Errorf("pod %s/%s does not have any containers", pod.GetNamespace(), pod.GetName())
	}
	m, _ := list[0].(map[string]any)
	name, _ := m["name"].(string)
	if len(containersOf(pod)) > 1 && !quiet {
		fmt.Fprintf(errOut, "Defaulted container %q out of: %s\n", name, allContainerNames(pod))
	}
	return name, nil
}

// QuietIfInterrupted ends a streaming command that was interrupted (ctx
// cancelled by SIGINT, SIGTERM or SIGHUP) with exit code 1 and no message,
// as kubectl does; other results pass through. run --attach and debug
// --attach use it too.
func QuietIfInterrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return &cli.ExitError{Code: 1, Silent: true}
	}
	return err
}
