package cli

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// staleDiscovery watches answers for the server's "resource type not
// found" 404 — what comes back when the disk-cached discovery still lists a
// resource the server no longer serves (a deleted CRD) — and then marks the
// discovery cache stale, so that this command's next lookup and later
// commands ask the server again instead of trusting the cache until its TTL.
type staleDiscovery struct {
	next  http.RoundTripper
	onHit func()
	hits  atomic.Int32
}

func (s *staleDiscovery) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusNotFound || r.URL.Query().Get("watch") == "true" {
		return resp, err
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr == nil && isTypeNotFoundBody(body) {
		s.hits.Add(1)
		if s.onHit != nil {
			s.onHit()
		}
	}
	return resp, err
}

// isTypeNotFoundBody reports the generic 404 Status the server sends for a
// path it does not serve (no object name in the details).
func isTypeNotFoundBody(body []byte) bool {
	return bytes.Contains(body, []byte(`"reason":"NotFound"`)) &&
		bytes.Contains(body, []byte("the server could not find the requested resource"))
}

// IsTypeNotFound reports the same for an error.
func IsTypeNotFound(err error) bool {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || !apierrors.IsNotFound(err) {
		return false
	}
	d := se.ErrStatus.Details
	return (d == nil || d.Name == "") && strings.Contains(se.ErrStatus.Message, "the server could not find the requested resource")
}
