package rest

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/kdyn/kdyn/internal/wire"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxErrorBodyBytes is how much of a non-Status error body is quoted in a
// synthesized error message.
const maxErrorBodyBytes = 1024

// decodeStatusError turns a non-2xx answer into an *apierrors.StatusError:
// the server's own Status when the body is one, otherwise one synthesized
// from the code and the first bytes of the body.
func decodeStatusError(code int, verb string, gr schema.GroupResource, name string, h http.Header, body []byte) error {
	if st, ok := decodeStatus(body); ok && st.Status != metav1.StatusSuccess {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		return &apierrors.StatusError{ErrStatus: *st}
	}
	retry := 0
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s > 0 {
			retry = s
		}
	}
	msg := strings.TrimSpace(string(truncateUTF8(body, maxErrorBodyBytes)))
	se := apierrors.NewGenericServerResponse(code, verb, gr, name, msg, retry, true)
	if msg != "" && !strings.Contains(se.ErrStatus.Message, msg) {
		// Keep what the server (or a proxy in front of it) said visible in
		// Error(), not only in the details.
		se.ErrStatus.Message += ": " + msg
	}
	return se
}

// decodeStatus decodes body as a metav1.Status when it is one.
func decodeStatus(body []byte) (*metav1.Status, bool) {
	if raw, tm, err := wire.UnwrapProtobuf(body); err == nil {
		var st metav1.Status
		if tm.Kind != "Status" || st.Unmarshal(raw) != nil {
			return nil, false
		}
		return &st, true
	}
	if len(body) == 0 || body[0] != '{' {
		return nil, false
	}
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, false
	}
	if st.Kind != "Status" || (st.APIVersion != "v1" && st.APIVersion != "meta.k8s.io/v1" && st.APIVersion != "") {
		return nil, false
	}
	return &st, true
}

func truncateUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for len(b) > 0 && !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	return b
}

// retryAfter reports whether resp asks to be retried: 429 or 5xx with a
// Retry-After header in seconds. The delay is capped at maxRetryAfter.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return 0, false
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0, false
		}
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
		if d < 0 {
			d = 0
		}
	} else {
		return 0, false
	}
	if d > maxRetryAfter {
		d = maxRetryAfter
	}
	return d, true
}

// isRetryableConnError reports whether err means an established
// connection broke before any answer arrived (reset, EOF), which is safe
// to retry for GET. A refused connection is not retried, as client-go
// does not: nothing listens there, and the caller (a person at kdyn's
// command line, an informer with its own backoff) is told at once.
func isRetryableConnError(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "read"
}

func connRetryDelay(attempt int) time.Duration {
	d := 100 * time.Millisecond << attempt
	if d > 2*time.Second {
		d = 2 * time.Second
	}
	return d
}
