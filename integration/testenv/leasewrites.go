package testenv

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// OnLeaseWrites wraps rt so that noted learns, just before each write (a
// PUT or POST; a PATCH passes unseen) goes out, the spec.renewTime the
// written Lease carries and sent, that same moment read on this process's
// monotonic clock. Give it to the rest.Config.WrapTransport of a client
// that writes only Leases, and writes them whole. A test can then date the
// renewals the server recorded by sent rather than by renewTime, which is
// on the wall clock: it may jump (a suspended virtual machine's is set
// right when it resumes) where a renew deadline, counted on the monotonic
// clock, does not. sent is never after the moment noted is called, so a
// wall clock stepped back since renewTime can only date it earlier. A
// write whose body cannot be read again, is not JSON, or carries no
// spec.renewTime fails without being sent.
func OnLeaseWrites(rt http.RoundTripper, noted func(renewTime, sent time.Time)) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodPut && req.Method != http.MethodPost {
			return rt.RoundTrip(req)
		}
		if req.GetBody == nil {
			return nil, fmt.Errorf("testenv: a Lease write whose body cannot be read again (%s %s)", req.Method, req.URL.Path)
		}
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		var l struct {
			Spec struct {
				RenewTime string `json:"renewTime"`
			} `json:"spec"`
		}
		err = json.NewDecoder(body).Decode(&l)
		body.Close()
		if err != nil {
			return nil, fmt.Errorf("testenv: a Lease write that is not JSON (%s): %w", req.Header.Get("Content-Type"), err)
		}
		renew, err := time.Parse(time.RFC3339Nano, l.Spec.RenewTime)
		if err != nil {
			return nil, fmt.Errorf("testenv: a Lease write without renewTime: %w", err)
		}
		now := time.Now()
		sent := now.Add(renew.Sub(now.Round(0)))
		if sent.After(now) {
			sent = now
		}
		noted(renew, sent)
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
