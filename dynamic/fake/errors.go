package fake

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The messages below are the API server's, so that tests matching on them
// behave the same against the fake and a real server.
const (
	msgOptimisticLock    = "the object has been modified; please apply your changes to the latest version and try again"
	msgNamespaceMismatch = "the namespace of the provided object does not match the namespace sent on the request"
	msgRVOnCreate        = "resourceVersion should not be set on objects to be created"
)

func statusError(code int32, reason metav1.StatusReason, details *metav1.StatusDetails, format string, args ...any) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Details: details,
		Message: fmt.Sprintf(format, args...),
	}}
}

func badRequest(format string, args ...any) *apierrors.StatusError {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}

// noRoute is the fake's answer to a request a real server has no route for,
// such as a namespaced Get without a namespace: 404, naming the mistake.
func noRoute(gr schema.GroupResource, name, format string, args ...any) *apierrors.StatusError {
	return statusError(http.StatusNotFound, metav1.StatusReasonNotFound,
		&metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name},
		"fake: "+format, args...)
}

func unsupportedSubresource(gr schema.GroupResource, name, verb string, subresources []string) *apierrors.StatusError {
	return noRoute(gr, name, "%s of subresource %q of %s is not supported", verb, strings.Join(subresources, "/"), gr)
}

func noStatusSubresource(gr schema.GroupResource, name string) *apierrors.StatusError {
	return noRoute(gr, name, "%s has no status subresource; register it with fake.ResourceInfo{Status: true}", gr)
}

func conflict(gr schema.GroupResource, name, format string, args ...any) *apierrors.StatusError {
	return apierrors.NewConflict(gr, name, fmt.Errorf(format, args...))
}

func invalidOptions(kind string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

func tooLargeResourceVersion(requested, current uint64) *apierrors.StatusError {
	err := statusError(http.StatusGatewayTimeout, metav1.StatusReasonTimeout, &metav1.StatusDetails{
		Causes:            []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}},
		RetryAfterSeconds: 1,
	}, "Timeout: Too large resource version: %d, current: %d", requested, current)
	return err
}

func tooOldResourceVersion(requested, oldest uint64) *apierrors.StatusError {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", requested, oldest))
}

// errSeed wraps a seeding failure; every call on a client whose seeding
// failed returns it as an internal error.
var errSeed = errors.New("fake: seeding the client failed")
