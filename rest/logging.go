package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// Log verbosity thresholds, following kubectl's -v levels.
const (
	verbosityURLs    = 6
	verbosityHeaders = 7
	verbosityBodies  = 8
	verbosityCurl    = 9
)

// maxLoggedBody bounds how much of a body is logged at verbosity 8.
const maxLoggedBody = 10 << 10

// logRequest logs a request as kubectl does: from -v 7 its method, URL and
// headers (credentials masked), from -v 8 its body too.
func (r *Request) logRequest(req *http.Request) {
	if r.c.verbose < verbosityHeaders {
		return
	}
	fields := []any{"verb", req.Method, "url", req.URL.Redacted(), "headers", headerLines(req.Header)}
	if r.c.verbose >= verbosityBodies && r.body != nil {
		fields = append(fields, "body", string(r.redactBody(r.body)))
	}
	r.c.log.V(4).Info("Request", fields...)
}

// logResponse logs a response as kubectl does: from -v 6 the request's
// method and URL, the status and the time taken ("Response" verb="GET"
// url="..." status="200 OK" milliseconds=3), from -v 8 the response's
// headers and body too.
func (r *Request) logResponse(resp *http.Response, start time.Time, body []byte) {
	if r.c.verbose < verbosityURLs {
		return
	}
	fields := []any{
		"verb", r.verb,
		"url", resp.Request.URL.Redacted(),
		"status", resp.Status,
		"milliseconds", time.Since(start).Milliseconds(),
	}
	if r.c.verbose >= verbosityBodies {
		fields = append(fields, "headers", headerLines(resp.Header))
		if body != nil {
			fields = append(fields, "body", string(r.redactBody(body)))
		}
	}
	r.c.log.V(4).Info("Response", fields...)
}

// headerLines renders headers as "Key: value" lines, sorted, credentials
// masked.
func headerLines(h http.Header) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range h[k] {
			b.WriteString(k + ": " + maskHeader(k, v) + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// debugRoundTripper logs an equivalent curl command line for every request
// at verbosity 9, with credentials masked. It sits inside the
// authentication round tripper so that it sees the final headers.
type debugRoundTripper struct {
	next http.RoundTripper
	log  logr.Logger
}

func (d *debugRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	d.log.V(4).Info("curl", "command", curlCommand(req))
	return d.next.RoundTrip(req)
}

// curlCommand renders req as a curl command line with credentials masked.
func curlCommand(req *http.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "curl -v -X%s", req.Method)
	keys := make([]string, 0, len(req.Header))
	for k := range req.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range req.Header[k] {
			fmt.Fprintf(&b, " -H %q", k+": "+maskHeader(k, v))
		}
	}
	fmt.Fprintf(&b, " '%s'", req.URL.Redacted())
	return b.String()
}

func maskHeader(key, value string) string {
	if strings.EqualFold(key, "Cookie") || strings.EqualFold(key, "Set-Cookie") {
		return "<masked>"
	}
	if !strings.EqualFold(key, "Authorization") && !strings.EqualFold(key, "Proxy-Authorization") {
		return value
	}
	scheme, _, ok := strings.Cut(value, " ")
	if !ok {
		return "<masked>"
	}
	return scheme + " <masked>"
}

// secretKeys are field names whose values are never logged.
var secretKeys = map[string]bool{
	"token": true, "password": true, "clientKeyData": true, "client-key-data": true,
	"access-token": true, "id-token": true, "refresh-token": true, "secret": true,
}

// redactBody returns a loggable form of a JSON body: Secret data and
// credential-like fields replaced by "REDACTED", truncated to
// maxLoggedBody. A body that is not JSON is summarized by its size, since
// its content cannot be checked for secrets. With allSecrets (a body of a
// request for secrets, which carries Secret data without kind: Secret: a
// patch, the rows of a Table, a metadata-only list) every object in it is
// redacted as a Secret, and a body that is not an object, such as a JSON
// patch whose values cannot be told apart, is summarized by its size.
func redactBody(b []byte, allSecrets bool) []byte {
	if len(b) > 4*maxLoggedBody*16 {
		return fmt.Appendf(nil, "<%d bytes, not logged>", len(b))
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Appendf(nil, "<%d bytes of non-JSON, not logged>", len(b))
	}
	if _, ok := v.(map[string]any); !ok && allSecrets {
		return fmt.Appendf(nil, "<%d bytes of a body for secrets, not logged>", len(b))
	}
	redactValue(v, false, allSecrets)
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Appendf(nil, "<%d bytes, not logged>", len(b))
	}
	if len(out) > maxLoggedBody {
		out = append(out[:maxLoggedBody:maxLoggedBody], fmt.Sprintf("… (%d bytes in all)", len(out))...)
	}
	return out
}

// redactBody is redactBody for a body of r: those of a request for the
// core secrets resource are all Secrets.
func (r *Request) redactBody(b []byte) []byte {
	return redactBody(b, r.group == "" && r.resource == "secrets")
}

// lastApplied is the annotation in which kubectl apply keeps an object's
// applied configuration, a Secret's data included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// redactValue redacts, at any depth, credential fields and, in each
// object that is a Secret (kind Secret, an item of a SecretList, or any
// object when allSecrets), the values of data and stringData and the
// last-applied annotation.
func redactValue(v any, inSecretList, allSecrets bool) {
	switch t := v.(type) {
	case map[string]any:
		kind, _ := t["kind"].(string)
		isSecret := allSecrets || kind == "Secret" || (inSecretList && kind == "")
		for k, val := range t {
			switch {
			case secretKeys[k]:
				if _, ok := val.(string); ok {
					t[k] = "REDACTED"
				}
			case isSecret && (k == "data" || k == "stringData"):
				if m, ok := val.(map[string]any); ok {
					for dk := range m {
						m[dk] = "REDACTED"
					}
				} else {
					redactValue(val, false, allSecrets)
				}
			case k == "items":
				redactValue(val, kind == "SecretList", allSecrets)
			default:
				redactValue(val, false, allSecrets)
			}
		}
		// last-applied-configuration of a Secret holds its data too.
		if isSecret {
			if md, ok := t["metadata"].(map[string]any); ok {
				if ann, ok := md["annotations"].(map[string]any); ok {
					if _, ok := ann[lastApplied]; ok {
						ann[lastApplied] = "REDACTED"
					}
				}
			}
		}
	case []any:
		for _, e := range t {
			redactValue(e, inSecretList, allSecrets)
		}
	}
}
