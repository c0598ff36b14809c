package readiness

import (
	"fmt"
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// This file holds the checks that apply to every object, before and after
// the kind's rule, and the field readers the rules share.

// condition is one entry of status.conditions.
type condition struct {
	Type, Status, Reason, Message string
	// ObservedGeneration is the condition's own observedGeneration
	// (metav1.Condition's), when it has one.
	ObservedGeneration    int64
	HasObservedGeneration bool
}

// conditions reads status.conditions. A missing or null status or list is
// no conditions; anything else of the wrong shape is a *FieldError.
func conditions(obj *unstructured.Unstructured) ([]condition, error) {
	rawStatus, ok := obj.Object["status"]
	if !ok || rawStatus == nil {
		return nil, nil
	}
	status, ok := rawStatus.(map[string]any)
	if !ok {
		return nil, fieldError(obj, ".status", fmt.Sprintf("expected object, found %T", rawStatus))
	}
	raw, ok := status["conditions"]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fieldError(obj, ".status.conditions", fmt.Sprintf("expected list, found %T", raw))
	}
	out := make([]condition, 0, len(list))
	for i, item := range list {
		path := ".status.conditions[" + strconv.Itoa(i) + "]"
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fieldError(obj, path, fmt.Sprintf("expected object, found %T", item))
		}
		var c condition
		for _, f := range []struct {
			key string
			dst *string
		}{{"type", &c.Type}, {"status", &c.Status}, {"reason", &c.Reason}, {"message", &c.Message}} {
			v, ok := m[f.key]
			if !ok || v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return nil, fieldError(obj, path+"."+f.key, fmt.Sprintf("expected string, found %T", v))
			}
			*f.dst = s
		}
		if g, ok := asInt(m["observedGeneration"]); ok {
			c.ObservedGeneration, c.HasObservedGeneration = g, true
		}
		out = append(out, c)
	}
	return out, nil
}

// hasCondition reports whether a condition of type typ has status st.
func hasCondition(conds []condition, typ, st string) (condition, bool) {
	for _, c := range conds {
		if c.Type == typ && c.Status == st {
			return c, true
		}
	}
	return condition{}, false
}

// checkGeneric applies the checks that decide any object's status, in
// kstatus's order: a deletionTimestamp, an unobserved generation, then the
// first Reconciling=True or Stalled=True condition. It also treats a
// Ready, Reconciling or Stalled condition observed at an older generation
// (metav1.Condition's observedGeneration) as not yet observed, which
// kstatus does not look at.
func checkGeneric(obj *unstructured.Unstructured, conds []condition) (Result, bool) {
	if stringOr(obj.Object, "", "metadata", "deletionTimestamp") != "" {
		return Result{Status: Terminating, Message: "Resource scheduled for deletion"}, true
	}
	if res, ok := checkGeneration(obj); ok {
		return res, true
	}
	if generation, ok := intField(obj.Object, "metadata", "generation"); ok {
		for _, c := range conds {
			if (c.Type == "Ready" || c.Type == conditionReconciling || c.Type == conditionStalled) && c.HasObservedGeneration && c.ObservedGeneration < generation {
				return inProgress("LatestGenerationNotObserved", fmt.Sprintf("%s generation is %d, but its %s condition was observed at generation %d", obj.GetKind(), generation, c.Type, c.ObservedGeneration)), true
			}
		}
	}
	for _, c := range conds {
		if c.Type == conditionReconciling && c.Status == "True" {
			return inProgress(c.Reason, c.Message), true
		}
		if c.Type == conditionStalled && c.Status == "True" {
			return failed(c.Reason, c.Message), true
		}
	}
	return Result{}, false
}

// kstatus's standard conditions, "abnormal-true": present and True only
// while something is wrong or unfinished.
const (
	conditionReconciling = "Reconciling"
	conditionStalled     = "Stalled"
)

// checkGeneration: status.observedGeneration, when the object has one,
// must equal metadata.generation.
func checkGeneration(obj *unstructured.Unstructured) (Result, bool) {
	generation, ok := intField(obj.Object, "metadata", "generation")
	if !ok {
		return Result{}, false
	}
	observed, ok := intField(obj.Object, "status", "observedGeneration")
	if !ok || observed == generation {
		return Result{}, false
	}
	return inProgress("LatestGenerationNotObserved", fmt.Sprintf("%s generation is %d, but latest observed generation is %d", obj.GetKind(), generation, observed)), true
}

// checkGenerationSet: both metadata.generation and
// status.observedGeneration are set (for kinds whose controller always
// sets the latter, such as DaemonSets).
func checkGenerationSet(obj *unstructured.Unstructured) (Result, bool) {
	if _, ok := intField(obj.Object, "metadata", "generation"); !ok {
		return inProgress("NoGeneration", obj.GetKind()+" metadata.generation not found"), true
	}
	if _, ok := intField(obj.Object, "status", "observedGeneration"); !ok {
		return inProgress("NoObservedGeneration", obj.GetKind()+" status.observedGeneration not found"), true
	}
	return Result{}, false
}

// checkReady judges an object of no known kind by its Ready condition,
// if it has one: True is Current, False or Unknown InProgress.
func checkReady(conds []condition) (Result, bool) {
	for _, c := range conds {
		if c.Type != "Ready" {
			continue
		}
		switch c.Status {
		case "True":
			return Result{Status: Current, Message: "Resource is Ready"}, true
		case "False", "Unknown":
			return inProgress(c.Reason, c.Message), true
		}
	}
	return Result{}, false
}

func inProgress(reason, message string) Result {
	return Result{Status: InProgress, Reason: reason, Message: message}
}

func failed(reason, message string) Result {
	return Result{Status: Failed, Reason: reason, Message: message}
}

func current(message string) Result {
	return Result{Status: Current, Message: message}
}

// asInt reads a JSON integer: int64 as apimachinery decodes it, other Go
// integer types, or a float64 holding a whole number (encoding/json's
// numbers).
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}

// intField reads an integer field; absent or not an integer is !ok (the
// rules then use their defaults, as kstatus does).
func intField(obj map[string]any, fields ...string) (int64, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return 0, false
	}
	return asInt(v)
}

// intOr reads an integer field, or def.
func intOr(obj map[string]any, def int64, fields ...string) int64 {
	if n, ok := intField(obj, fields...); ok {
		return n
	}
	return def
}

// stringOr reads a string field, or def.
func stringOr(obj map[string]any, def string, fields ...string) string {
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return def
	}
	if s, ok := v.(string); ok {
		return s
	}
	return def
}
