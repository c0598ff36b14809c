package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Exit codes with --exit-codes. Without it every failure exits 1, as
// kubectl does.
const (
	ExitOK          = 0
	ExitGeneric     = 1
	ExitUsage       = 2
	ExitNotFound    = 3
	ExitConflict    = 4
	ExitForbidden   = 5
	ExitInvalid     = 6
	ExitTimeout     = 7
	ExitUnreachable = 8
)

// ExitCodesHelp is the text of 'kdyn help exit-codes'.
const ExitCodesHelp = `With --exit-codes, kdyn exits with a code that names the failure, for
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

// ExitStatuser is an error that carries the exit code of a command run
// elsewhere (exec's remote command): kdyn exits with that code, with or
// without --exit-codes, and prints the message as it is ("command
// terminated with exit code 3"), as kubectl does.
type ExitStatuser interface {
	error
	ExitStatus() int
}

// UsageError marks a mistake in flags or arguments (exit code 2 with
// --exit-codes).
type UsageError struct {
	Msg string // the message, as printed after "error: "
}

// Error returns the message.
func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a *UsageError with a formatted message.
func Usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

// NoResourcesMessage is kubectl's refusal of a command that needs objects
// when neither arguments nor -f name any.
const NoResourcesMessage = `You must provide one or more resources by argument or filename.
Example resource specifications include:
   '-f rsrc.yaml'
   '--filename=rsrc.json'
   '<resource> <name>'
   '<resource>'`

// FilesAndArgsError is kubectl's refusal of -f (or -k) together with
// resource arguments.
func FilesAndArgsError() error {
	return Usagef("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")
}

// ErrEmpty is returned by --fail-if-empty.
var ErrEmpty = errors.New("no resources found")

// ErrTimeout marks a wait that ran out of time.
var ErrTimeout = errors.New("timed out")

// ExitCode is the process exit code for err: 0 for nil, otherwise 1, or
// with typed (--exit-codes) the code that names the failure (see
// ExitCodesHelp). An *ExitError's own code wins.
func ExitCode(err error, typed bool) int {
	if err == nil {
		return ExitOK
	}
	var es ExitStatuser
	if errors.As(err, &es) {
		return es.ExitStatus()
	}
	if !typed {
		return ExitGeneric
	}
	var ee *ExitError
	if errors.As(err, &ee) && ee.Code != 0 {
		return ee.Code
	}
	var ue *UsageError
	switch {
	case errors.As(err, &ue):
		return ExitUsage
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err), errors.Is(err, ErrEmpty):
		return ExitNotFound
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return ExitConflict
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return ExitForbidden
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return ExitInvalid
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrTimeout):
		return ExitTimeout
	case isUnreachable(err):
		return ExitUnreachable
	}
	return ExitGeneric
}

func isUnreachable(err error) bool {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var urlErr *url.Error
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dnsErr) || errors.As(err, &opErr) ||
		(errors.As(err, &urlErr) && !errors.Is(err, context.Canceled))
}

// PrintError writes err the way kubectl words it.
func PrintError(w io.Writer, err error) {
	msg := ErrorMessage(err)
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	fmt.Fprint(w, msg)
}

// ErrorMessage words err as kubectl does: "Error from server (Reason):
// message" for a server's Status, "The X is invalid: ..." for an invalid
// object, otherwise "error: " and the message without the library
// package's prefix.
func ErrorMessage(err error) string {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err != nil {
		err = ee.Err
	}
	var es ExitStatuser
	if errors.As(err, &es) {
		return err.Error()
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		if st.Reason == metav1.StatusReasonInvalid && st.Message != "" {
			// kubectl's wording: `The ConfigMap "x" is invalid: ...` when the
			// server names the object, else `The request is invalid: ...`.
			msg := st.Message
			if m, ok := invalidCauses(st); ok {
				return m
			}
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
	// A server that cannot be reached: kubectl's words, with the hint for
	// a refused connection (nothing listens at that host and port).
	var ue *url.Error
	if errors.As(err, &ue) && !errors.Is(err, context.Canceled) {
		if errors.Is(err, syscall.ECONNREFUSED) {
			host := ue.URL
			if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
				host = u.Host
			}
			return fmt.Sprintf("The connection to the server %s was refused - did you specify the right host or port?", host)
		}
		return "Unable to connect to the server: " + ue.Err.Error()
	}
	// A resource the server does not serve, as kubectl words a mapper's
	// NoResourceMatchError.
	if nm, ok := err.(*meta.NoResourceMatchError); ok {
		pr := nm.PartialResource
		msg := fmt.Sprintf("error: the server doesn't have a resource type %q", pr.Resource)
		switch {
		case pr.Group != "" && pr.Version != "":
			msg += fmt.Sprintf(" in group %q and version %q", pr.Group, pr.Version)
		case pr.Group != "":
			msg += fmt.Sprintf(" in group %q", pr.Group)
		case pr.Version != "":
			msg += fmt.Sprintf(" in version %q", pr.Version)
		}
		return msg
	}
	msg := err.Error()
	for _, p := range []string{"restmapper: ", "dynamic: ", "discovery: ", "rest: ", "kubeconfig: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return "error: " + msg
}

// ExitError carries an exit code; silent ones print nothing more (the
// command already reported).
type ExitError struct {
	Code   int   // the exit code; 0 lets ExitCode classify Err
	Silent bool  // the command already printed what went wrong
	Err    error // the failure, when there is one to classify or print
}

// Error returns Err's message, or names the code.
func (e *ExitError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("exit code %d", e.Code)
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// GroupCommand makes cmd, a command that only groups subcommands (config,
// auth, rollout), behave as kubectl's do when called without one: an
// unknown subcommand is a usage error naming it ("unknown command"), and
// no subcommand at all prints the help on standard error and fails.
func GroupCommand(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return Usagef("unknown command %q\nSee '%s -h' for help and examples", strings.Join(args, " "), c.CommandPath())
		}
		c.SetOut(c.ErrOrStderr())
		if err := c.Help(); err != nil {
			return err
		}
		return &ExitError{Code: ExitGeneric, Silent: true}
	}
	return cmd
}

// invalidCauses words an invalid object's several causes as kubectl does,
// one a line: "The Pod \"x\" is invalid: " then "* field: message" lines
// (repeated ones once). It reports false for an error with one cause or
// none, or that names no object, which the server's message words as
// kubectl does.
func invalidCauses(st metav1.Status) (string, bool) {
	d := st.Details
	if d == nil || (d.Kind == "" && d.Name == "") {
		return "", false
	}
	var lines []string
	for _, c := range d.Causes {
		if l := "* " + c.Field + ": " + c.Message; !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 {
		return "", false
	}
	return fmt.Sprintf("The %s %q is invalid: \n%s\n", d.Kind, d.Name, strings.Join(lines, "\n")), true
}
