package mutate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// kubectl drain's words for the pods it will not delete, or deletes with
// a warning.
const (
	daemonSetFatal      = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
	daemonSetWarning    = "ignoring DaemonSet-managed Pods"
	localStorageFatal   = "Pods with local storage (use --delete-emptydir-data to override)"
	localStorageWarning = "deleting Pods with local storage"
	unmanagedFatal      = "Pods that declare no controller (use --force to override)"
	unmanagedWarning    = "deleting Pods that declare no controller"
)

// mirrorPodAnnotation marks a static pod's mirror, which the kubelet owns
// and the API cannot delete.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// verdictKind is how a pod's verdict is reported.
type verdictKind int

const (
	verdictOkay    verdictKind = iota // evicted, nothing said
	verdictSkip                       // left alone, nothing said
	verdictWarning                    // message is a warning; delete says whether it goes
	verdictError                      // left alone, and the node is not drained
)

// podVerdict is what drain does with one pod: whether it goes, and what is
// said about it.
type podVerdict struct {
	delete  bool
	kind    verdictKind
	message string
}

var (
	okay = podVerdict{delete: true, kind: verdictOkay}
	skip = podVerdict{kind: verdictSkip}
)

func warnVerdict(del bool, msg string) podVerdict {
	return podVerdict{delete: del, kind: verdictWarning, message: msg}
}

func errVerdict(msg string) podVerdict { return podVerdict{kind: verdictError, message: msg} }

// podFilters are drain's rules for which pods of a node go, kubectl's:
// pods already being deleted for longer than skipWaitSeconds are left
// alone, DaemonSet pods need ignoreDaemonSets (and stay), mirror pods stay,
// pods with emptyDir volumes need deleteEmptyDir, pods without a
// controller need force. Finished pods (Succeeded, Failed) always go.
type podFilters struct {
	force            bool
	ignoreDaemonSets bool
	deleteEmptyDir   bool
	skipWaitSeconds  int
	now              time.Time
	// daemonSet reads the DaemonSet of a namespace and name: nil when it
	// exists, the server's error otherwise.
	daemonSet func(namespace, name string) error
}

// verdict runs the rules on pod in kubectl's order; the first that keeps
// the pod decides, otherwise the last one's warning (if any) is reported.
func (f podFilters) verdict(pod *unstructured.Unstructured) podVerdict {
	var v podVerdict
	for _, rule := range []func(*unstructured.Unstructured) podVerdict{f.skipDeleted, f.daemonSetPod, mirrorPod, f.localStorage, f.unreplicated} {
		if v = rule(pod); !v.delete {
			break
		}
	}
	return v
}

// skipDeleted leaves alone a pod deleted more than skipWaitSeconds ago.
func (f podFilters) skipDeleted(pod *unstructured.Unstructured) podVerdict {
	if deletedLongAgo(pod, f.skipWaitSeconds, f.now) {
		return skip
	}
	return okay
}

// deletedLongAgo reports whether pod's deletion started more than seconds
// (when positive) before now.
func deletedLongAgo(pod *unstructured.Unstructured, seconds int, now time.Time) bool {
	ts := pod.GetDeletionTimestamp()
	return seconds > 0 && ts != nil && int(now.Sub(ts.Time).Seconds()) > seconds
}

// finished reports a pod in phase Succeeded or Failed.
func finished(pod *unstructured.Unstructured) bool {
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	return phase == "Succeeded" || phase == "Failed"
}

// daemonSetPod keeps a DaemonSet's running pod (its controller would put
// it back), an error without ignoreDaemonSets. An orphan, whose DaemonSet
// is gone, goes with force.
func (f podFilters) daemonSetPod(pod *unstructured.Unstructured) podVerdict {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "DaemonSet" || ref.APIVersion != "apps/v1" || finished(pod) {
		return okay
	}
	if err := f.daemonSet(pod.GetNamespace(), ref.Name); err != nil {
		if apierrors.IsNotFound(err) && f.force {
			return warnVerdict(true, err.Error())
		}
		return errVerdict(err.Error())
	}
	if !f.ignoreDaemonSets {
		return errVerdict(daemonSetFatal)
	}
	return warnVerdict(false, daemonSetWarning)
}

// mirrorPod leaves a static pod's mirror alone.
func mirrorPod(pod *unstructured.Unstructured) podVerdict {
	if _, ok := pod.GetAnnotations()[mirrorPodAnnotation]; ok {
		return skip
	}
	return okay
}

// localStorage refuses a running pod with an emptyDir volume unless
// deleteEmptyDir.
func (f podFilters) localStorage(pod *unstructured.Unstructured) podVerdict {
	if !hasEmptyDir(pod) || finished(pod) {
		return okay
	}
	if !f.deleteEmptyDir {
		return errVerdict(localStorageFatal)
	}
	return warnVerdict(true, localStorageWarning)
}

func hasEmptyDir(pod *unstructured.Unstructured) bool {
	volumes, _, _ := unstructured.NestedSlice(pod.Object, "spec", "volumes")
	for _, v := range volumes {
		if m, ok := v.(map[string]any); ok && m["emptyDir"] != nil {
			return true
		}
	}
	return false
}

// unreplicated refuses a running pod without a controller unless force.
func (f podFilters) unreplicated(pod *unstructured.Unstructured) podVerdict {
	if finished(pod) || metav1.GetControllerOf(pod) != nil {
		return okay
	}
	if f.force {
		return warnVerdict(true, unmanagedWarning)
	}
	return errVerdict(unmanagedFatal)
}

// judgedPods are a node's pods with their verdicts, in list order.
type judgedPods struct {
	pods     []*unstructured.Unstructured
	verdicts []podVerdict
}

// judge gives each pod its verdict.
func (f podFilters) judge(pods []*unstructured.Unstructured) judgedPods {
	j := judgedPods{pods: pods}
	for _, p := range pods {
		j.verdicts = append(j.verdicts, f.verdict(p))
	}
	return j
}

// deletable returns the pods that go.
func (j judgedPods) deletable() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for i, p := range j.pods {
		if j.verdicts[i].delete {
			out = append(out, p)
		}
	}
	return out
}

// grouped collects "namespace/name" of the pods of a kind by message, the
// messages in the order of their first pod (kubectl's order is a map's).
func (j judgedPods) grouped(kind verdictKind) (messages []string, pods map[string][]string) {
	pods = map[string][]string{}
	for i, p := range j.pods {
		v := j.verdicts[i]
		if v.kind != kind {
			continue
		}
		msg := v.message
		if msg == "" && kind == verdictError {
			msg = "unexpected error"
		}
		if _, seen := pods[msg]; !seen {
			messages = append(messages, msg)
		}
		pods[msg] = append(pods[msg], p.GetNamespace()+"/"+p.GetName())
	}
	return messages, pods
}

// warnings is kubectl's one warning line: "MESSAGE: ns/a, ns/b; MESSAGE:
// ...", or "" when there is nothing to warn about.
func (j judgedPods) warnings() string {
	messages, pods := j.grouped(verdictWarning)
	parts := make([]string, 0, len(messages))
	for _, m := range messages {
		parts = append(parts, m+": "+strings.Join(pods[m], ", "))
	}
	return strings.Join(parts, "; ")
}

// errors is one error per message of the pods that stop the drain:
// "cannot delete MESSAGE: ns/a, ns/b"; nil when none does.
func (j judgedPods) errors() error {
	messages, pods := j.grouped(verdictError)
	if len(messages) == 0 {
		return nil
	}
	errs := make([]error, 0, len(messages))
	for _, m := range messages {
		errs = append(errs, fmt.Errorf("cannot delete %s: %s", m, strings.Join(pods[m], ", ")))
	}
	return utilerrors.NewAggregate(errs)
}

// finalMessage words the errors of the nodes that were not drained as
// kubectl's drain ends with them: one node's error as kubectl words any
// error (errorMessage), but a list of errors (the pods that stop the
// drain, the evictions that failed) one a line without "error: "; several
// nodes' errors one a line, each as a list's text ("[a, b]") or a server's
// error ("Error from server (Reason): ...").
func finalMessage(errs []error, errorMessage func(error) string) string {
	if len(errs) == 1 {
		var agg utilerrors.Aggregate
		if !errors.As(errs[0], &agg) {
			return errorMessage(errs[0])
		}
		errs = agg.Errors()
	}
	var b strings.Builder
	for _, err := range errs {
		msg := err.Error()
		if _, ok := err.(apierrors.APIStatus); ok {
			// A server's own error, not one that quotes it.
			msg = errorMessage(err)
		}
		b.WriteString(msg + "\n")
	}
	return b.String()
}
