package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Exit codes with --exit-codes. Without it every failure exits 1, as
// kubectl does.
const (
	exitOK          = 0
	exitGeneric     = 1
	exitUsage       = 2
	exitNotFound    = 3
	exitConflict    = 4
	exitForbidden   = 5
	exitInvalid     = 6
	exitTimeout     = 7
	exitUnreachable = 8
)

const exitCodesHelp = `With --exit-codes, kdyn exits with a code that names the failure, for
scripts (without it, every failure exits 1, as kubectl does):

  0  success
  1  any other error
  2  usage error (bad flags or arguments)
  3  not found (object or resource type; also --fail-if-empty on an empty result)
  4  conflict (a stale resourceVersion, an object that already exists, an apply conflict)
  5  forbidden or unauthorized
  6  invalid (the server rejected the object)
  7  timeout (a server timeout, --request-timeout, or wait --timeout)
  8  unreachable (the server could not be reached)
`

// usageError marks a mistake in flags or arguments.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// errEmpty is returned by --fail-if-empty.
var errEmpty = errors.New("no resources found")

// errTimeout marks a wait that ran out of time.
var errTimeout = errors.New("timed out")

func exitCode(err error, typed bool) int {
	if err == nil {
		return exitOK
	}
	if !typed {
		return exitGeneric
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.code != 0 {
		return ee.code
	}
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err), errors.Is(err, errEmpty):
		return exitNotFound
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return exitConflict
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return exitForbidden
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return exitInvalid
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), errors.Is(err, context.DeadlineExceeded), errors.Is(err, errTimeout):
		return exitTimeout
	case isUnreachable(err):
		return exitUnreachable
	}
	return exitGeneric
}

func isUnreachable(err error) bool {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var urlErr *url.Error
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dnsErr) || errors.As(err, &opErr) ||
		(errors.As(err, &urlErr) && !errors.Is(err, context.Canceled))
}

// printError writes err the way kubectl words it.
func printError(w io.Writer, err error) {
	fmt.Fprintln(w, errorMessage(err))
}

func errorMessage(err error) string {
	var ee *exitError
	if errors.As(err, &ee) && ee.err != nil {
		err = ee.err
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		if st.Reason == metav1.StatusReasonInvalid && st.Message != "" {
			// kubectl's wording: `The ConfigMap "x" is invalid: ...` when the
			// server names the object, else `The request is invalid: ...`.
			msg := st.Message
			switch {
			case strings.HasPrefix(msg, "The "):
				return msg
			case msg[0] >= 'A' && msg[0] <= 'Z':
				return "The " + msg
			}
			return "The request is invalid: " + msg
		}
		reason := string(st.Reason)
		if reason == "" {
			reason = "Unknown"
		}
		return fmt.Sprintf("Error from server (%s): %s", reason, st.Message)
	}
	msg := err.Error()
	for _, p := range []string{"restmapper: ", "dynamic: ", "discovery: ", "rest: ", "kubeconfig: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return "error: " + msg
}
