package readiness

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Status is how far an object's controller has brought it towards its
// spec: kstatus's statuses, with the same names.
type Status string

const (
	// Current: the object's controller has done what the spec asks
	// (a Deployment's replicas are all updated and available, a CRD is
	// Established, a custom resource reports Ready=True). Objects without
	// a controller, such as ConfigMaps, are always Current.
	Current Status = "Current"
	// InProgress: the controller is still working, or has not yet seen
	// the latest spec (status.observedGeneration behind
	// metadata.generation).
	InProgress Status = "InProgress"
	// Failed: the controller reports that it cannot make progress
	// (Stalled=True, a Deployment past its progress deadline, a failed
	// Job, a crash-looping or unschedulable Pod). It may still recover.
	Failed Status = "Failed"
	// Terminating: the object has a deletionTimestamp.
	Terminating Status = "Terminating"
	// NotFound: the object does not exist (Compute returns it for a nil
	// object).
	NotFound Status = "NotFound"
	// Unknown: the status fields say something no rule understands, such
	// as a Pod in the Unknown phase.
	Unknown Status = "Unknown"
)

// Result is an object's computed status.
type Result struct {
	// Status is the verdict.
	Status Status
	// Reason is one CamelCase word: for InProgress, the reason of
	// kstatus's Reconciling condition ("LessReplicas",
	// "LatestGenerationNotObserved"); for Failed, of its Stalled condition
	// ("ProgressDeadlineExceeded", "JobFailed"); often empty for Current.
	Reason string
	// Message says why, for people: "Available: 1/3".
	Message string
}

// Ready reports whether the status is Current.
func (r Result) Ready() bool { return r.Status == Current }

// String is "Status: message" ("Current" alone when there is no
// message).
func (r Result) String() string {
	if r.Message == "" {
		return string(r.Status)
	}
	return string(r.Status) + ": " + r.Message
}

// Rule computes the status of one kind of object once the generic checks
// (deletion, observedGeneration, Reconciling and Stalled conditions) have
// not decided it.
type Rule func(obj *unstructured.Unstructured) (Result, error)

// Options configure a Checker. The zero value uses the built-in rules and
// the system clock.
type Options struct {
	// Rules add rules for more kinds, or replace built-in ones, keyed by
	// group and kind (any version). A nil Rule removes the built-in rule:
	// objects of that kind are then judged by the generic checks and the
	// Ready condition only.
	Rules map[schema.GroupKind]Rule
	// Now is the clock of the Pod rule, which gives a Pod 15 seconds to be
	// scheduled before calling it Failed; nil means time.Now.
	Now func() time.Time
}

// Checker computes statuses with a set of rules. It is immutable once
// built and safe for concurrent use.
type Checker struct {
	rules map[schema.GroupKind]Rule
	now   func() time.Time
}

// New returns a Checker with the built-in rules and those of opts.
func New(opts Options) *Checker {
	c := &Checker{now: opts.Now}
	if c.now == nil {
		c.now = time.Now
	}
	c.rules = builtinRules(c.now)
	for gk, r := range opts.Rules {
		if r == nil {
			delete(c.rules, gk)
			continue
		}
		c.rules[gk] = r
	}
	return c
}

var defaultChecker = New(Options{})

// Compute returns obj's status with the built-in rules (see the package
// documentation for the order of the checks). A nil obj is NotFound. An
// error means a status field has the wrong shape (a condition that is not
// an object, a type that is not a string); it names the field.
func Compute(obj *unstructured.Unstructured) (Result, error) {
	return defaultChecker.Compute(obj)
}

// Compute returns obj's status with c's rules; see the package function
// Compute.
func (c *Checker) Compute(obj *unstructured.Unstructured) (Result, error) {
	if obj == nil {
		return Result{Status: NotFound, Message: "Resource not found"}, nil
	}
	conds, err := conditions(obj)
	if err != nil {
		return Result{}, err
	}
	if res, ok := checkGeneric(obj, conds); ok {
		return res, nil
	}
	if rule, ok := c.rules[obj.GroupVersionKind().GroupKind()]; ok {
		return rule(obj)
	}
	if res, ok := checkReady(conds); ok {
		return res, nil
	}
	return Result{Status: Current, Message: "Resource is current"}, nil
}

// FieldError is a status field of the wrong shape.
type FieldError struct {
	Kind, Namespace, Name string
	// Path is the field: ".status.conditions[2].type".
	Path string
	// Problem says what is wrong with it: "expected string, found int64".
	Problem string
}

func (e *FieldError) Error() string {
	name := e.Name
	if e.Namespace != "" {
		name = e.Namespace + "/" + e.Name
	}
	return fmt.Sprintf("readiness: %s %s: %s: %s", e.Kind, name, e.Path, e.Problem)
}

func fieldError(obj *unstructured.Unstructured, path, problem string) *FieldError {
	return &FieldError{Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), Path: path, Problem: problem}
}
