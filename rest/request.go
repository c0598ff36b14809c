package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/kdyn/kdyn/internal/wire"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Content types used by Kubernetes API requests.
const (
	ContentTypeJSON           = "application/json"
	ContentTypeJSONPatch      = "application/json-patch+json"
	ContentTypeMergePatch     = "application/merge-patch+json"
	ContentTypeStrategicPatch = "application/strategic-merge-patch+json"
	ContentTypeApplyPatch     = "application/apply-patch+yaml"
)

// Request is one API request under construction. Builder methods record the
// first error and return the request, so a chain can be written without
// checks; the error is returned by Do, Stream or Watch. A Request is not
// safe for concurrent use and should be sent once.
type Request struct {
	c    *Client
	verb string

	absPath      string
	group        string
	version      string
	namespace    string
	namespaceSet bool
	resource     string
	name         string
	subresource  []string

	params  url.Values
	headers http.Header
	body    []byte
	maxBody int64

	err error
}

// Group sets the API group; "" is the core group, served under /api.
func (r *Request) Group(g string) *Request { r.group = g; return r }

// Version sets the API version.
func (r *Request) Version(v string) *Request { r.version = v; return r }

// GroupVersion sets group and version.
func (r *Request) GroupVersion(gv schema.GroupVersion) *Request {
	r.group, r.version = gv.Group, gv.Version
	return r
}

// Namespace scopes the request to a namespace. An empty namespace means
// all namespaces (or a cluster-scoped resource).
func (r *Request) Namespace(ns string) *Request {
	if r.err != nil {
		return r
	}
	if ns != "" {
		if msgs := content.IsPathSegmentName(ns); len(msgs) != 0 {
			r.err = fmt.Errorf("invalid namespace %q: %v", ns, msgs)
			return r
		}
	}
	r.namespaceSet = true
	r.namespace = ns
	return r
}

// Resource sets the resource (plural, lower case).
func (r *Request) Resource(res string) *Request {
	if r.err != nil {
		return r
	}
	if msgs := content.IsPathSegmentName(res); len(msgs) != 0 {
		r.err = fmt.Errorf("invalid resource %q: %v", res, msgs)
	}
	r.resource = res
	return r
}

// Name sets the object name.
func (r *Request) Name(name string) *Request {
	if r.err != nil {
		return r
	}
	if name == "" {
		r.err = errors.New("resource name may not be empty")
		return r
	}
	if msgs := content.IsPathSegmentName(name); len(msgs) != 0 {
		r.err = fmt.Errorf("invalid resource name %q: %v", name, msgs)
		return r
	}
	r.name = name
	return r
}

// SubResource sets the subresource path (e.g. "status", "scale").
func (r *Request) SubResource(sub ...string) *Request {
	if r.err != nil || len(sub) == 0 {
		return r
	}
	for _, s := range sub {
		if msgs := content.IsPathSegmentName(s); len(msgs) != 0 {
			r.err = fmt.Errorf("invalid subresource %q: %v", s, msgs)
			return r
		}
	}
	r.subresource = sub
	return r
}

// AbsPath sets a path below the server URL, ignoring group, version,
// namespace, resource and name (used for /version, /api, /apis, /openapi).
func (r *Request) AbsPath(segments ...string) *Request {
	r.absPath = path.Join(append([]string{"/"}, segments...)...)
	if len(segments) > 0 && strings.HasSuffix(segments[len(segments)-1], "/") {
		r.absPath += "/"
	}
	return r
}

// Param adds a query parameter.
func (r *Request) Param(key, value string) *Request {
	r.params.Add(key, value)
	return r
}

// VersionedParams encodes a metav1 options struct (ListOptions, GetOptions,
// CreateOptions, PatchOptions, DeleteOptions, …) into query parameters with
// apimachinery's parameter codec, exactly as client-go does.
func (r *Request) VersionedParams(opts runtime.Object) *Request {
	if r.err != nil || opts == nil {
		return r
	}
	q, err := metav1.ParameterCodec.EncodeParameters(opts, metav1.SchemeGroupVersion)
	if err != nil {
		r.err = fmt.Errorf("rest: encode %T as query parameters: %w", opts, err)
		return r
	}
	for k, vs := range q {
		for _, v := range vs {
			r.params.Add(k, v)
		}
	}
	return r
}

// SetHeader sets a request header.
func (r *Request) SetHeader(key string, values ...string) *Request {
	if r.headers == nil {
		r.headers = http.Header{}
	}
	r.headers.Del(key)
	for _, v := range values {
		r.headers.Add(key, v)
	}
	return r
}

// Accept sets the Accept header (content negotiation). The default is
// application/json.
func (r *Request) Accept(types ...string) *Request {
	return r.SetHeader("Accept", strings.Join(types, ", "))
}

// ContentType sets the Content-Type of the body.
func (r *Request) ContentType(ct string) *Request { return r.SetHeader("Content-Type", ct) }

// Body sets the request body. The bytes are sent as is (and re-sent on a
// retry); the default content type is application/json.
func (r *Request) Body(b []byte) *Request {
	r.body = b
	return r
}

// MaxResponseBytes bounds the size of the response body that Do reads; a
// larger answer fails with an error instead of exhausting memory. One whose
// Content-Length is past the bound is refused unread; reading one of
// unknown length costs about twice the bound in allocations.
func (r *Request) MaxResponseBytes(n int64) *Request {
	r.maxBody = n
	return r
}

// URL returns the full URL the request will be sent to.
func (r *Request) URL() *url.URL {
	u := *r.c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + r.path()
	if u.RawPath != "" {
		u.RawPath = ""
	}
	if len(r.params) > 0 {
		u.RawQuery = r.params.Encode()
	} else {
		u.RawQuery = ""
	}
	return &u
}

func (r *Request) path() string {
	if r.absPath != "" {
		return r.absPath
	}
	var b strings.Builder
	if r.group == "" {
		b.WriteString("/api")
	} else {
		b.WriteString("/apis/")
		b.WriteString(r.group)
	}
	if r.version != "" {
		b.WriteString("/")
		b.WriteString(r.version)
	}
	if r.namespaceSet && r.namespace != "" {
		b.WriteString("/namespaces/")
		b.WriteString(r.namespace)
	}
	if r.resource != "" {
		b.WriteString("/")
		b.WriteString(r.resource)
	}
	if r.name != "" {
		b.WriteString("/")
		b.WriteString(r.name)
	}
	for _, s := range r.subresource {
		b.WriteString("/")
		b.WriteString(s)
	}
	return b.String()
}

func (r *Request) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.group, Resource: r.resource}
}

func (r *Request) newHTTPRequest(ctx context.Context) (*http.Request, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.verb, r.URL().String(), body)
	if err != nil {
		return nil, fmt.Errorf("rest: build request: %w", err)
	}
	for k, vs := range r.headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", ContentTypeJSON)
	}
	if r.body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", ContentTypeJSON)
	}
	return req, nil
}

// Result is the outcome of Do.
type Result struct {
	body        []byte
	contentType string
	statusCode  int
	header      http.Header
	err         error
}

// Raw returns the response body and the error, if any.
func (r Result) Raw() ([]byte, error) { return r.body, r.err }

// succeeded reports whether an answer's status is a success: 200 to 206,
// as client-go counts it (a 207 Multi-Status or any later 2xx is not).
func succeeded(code int) bool {
	return code >= http.StatusOK && code <= http.StatusPartialContent
}

// Error returns the request's error: nil for a 200–206 answer, an
// *apierrors.StatusError for any other answer from the server, or a
// transport or context error.
func (r Result) Error() error { return r.err }

// StatusCode returns the HTTP status code (0 when no answer arrived).
func (r Result) StatusCode() int { return r.statusCode }

// ContentType returns the response's Content-Type.
func (r Result) ContentType() string { return r.contentType }

// Header returns the response headers.
func (r Result) Header() http.Header { return r.header }

// DoRaw sends the request and returns the body of a successful answer.
func (r *Request) DoRaw(ctx context.Context) ([]byte, error) {
	res := r.Do(ctx)
	return res.body, res.err
}

// Do sends the request, retrying as described in the package docs, and reads
// the whole response.
func (r *Request) Do(ctx context.Context) Result {
	if r.err != nil {
		return Result{err: r.err}
	}
	if r.c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.c.timeout)
		defer cancel()
	}
	resp, start, err := r.send(ctx, true)
	if err != nil {
		return Result{err: err}
	}
	defer resp.Body.Close()
	body, err := r.readBody(resp)
	r.logResponse(resp, start, body)
	res := Result{body: body, contentType: resp.Header.Get("Content-Type"), statusCode: resp.StatusCode, header: resp.Header}
	if err != nil {
		res.err = err
		return res
	}
	if !succeeded(resp.StatusCode) {
		res.err = r.decodeError(resp, body)
	}
	return res
}

func (r *Request) readBody(resp *http.Response) ([]byte, error) {
	if r.maxBody > 0 {
		return r.readBounded(resp)
	}
	var buf []byte
	if resp.ContentLength > 0 {
		buf = make([]byte, 0, resp.ContentLength)
	}
	b := bytes.NewBuffer(buf)
	if _, err := b.ReadFrom(resp.Body); err != nil {
		return nil, fmt.Errorf("rest: read response of %s %s: %w", r.verb, r.path(), err)
	}
	return b.Bytes(), nil
}

// readBounded reads a body of at most r.maxBody bytes. One that says it is
// larger (Content-Length) is refused unread; one of unknown length is read
// into a buffer that doubles but never grows past the bound, so a hostile
// endless answer costs about twice the bound, not the 4× of a doubling
// bytes.Buffer that must grow once more to hold the byte past it.
func (r *Request) readBounded(resp *http.Response) ([]byte, error) {
	tooLarge := func() error {
		return fmt.Errorf("rest: response of %s %s is larger than the %d-byte limit; refusing to read it", r.verb, r.path(), r.maxBody)
	}
	if resp.ContentLength > r.maxBody {
		return nil, tooLarge()
	}
	limit := r.maxBody + 1 // one byte past the bound tells that it was passed
	initial := min(512, limit)
	if resp.ContentLength >= 0 {
		initial = resp.ContentLength + 1 // room to see the end without growing
	}
	buf, err := readAtMost(io.LimitReader(resp.Body, limit), make([]byte, 0, initial), limit)
	if err != nil {
		return nil, fmt.Errorf("rest: read response of %s %s: %w", r.verb, r.path(), err)
	}
	if int64(len(buf)) > r.maxBody {
		return nil, tooLarge()
	}
	return buf, nil
}

// readAtMost reads rd to its end into buf, doubling buf's capacity as it
// fills but never past limit; it stops once limit bytes are read.
func readAtMost(rd io.Reader, buf []byte, limit int64) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) >= limit {
				return buf, nil
			}
			grown := make([]byte, len(buf), min(max(2*int64(cap(buf)), 512), limit))
			copy(grown, buf)
			buf = grown
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// Stream sends the request and returns the body of a successful answer for
// the caller to read and close. An answer other than 200–206 is read and
// returned as an error. Stream is not bounded by Config.Timeout.
func (r *Request) Stream(ctx context.Context) (io.ReadCloser, error) {
	resp, err := r.StreamResponse(ctx)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// StreamResponse is Stream returning the whole *http.Response, for a
// caller that decodes the body itself and needs its headers (the
// Content-Type a server chose from an Accept list, the Content-Encoding).
// A watch (the watch=true parameter) is sent as Watch sends one: not rate
// limited. The caller must close the body.
func (r *Request) StreamResponse(ctx context.Context) (*http.Response, error) {
	return r.open(ctx, !r.isWatch())
}

// open sends the request, rate limited if limited, and returns the open
// response of a 200–206 answer; any other answer is read and returned as
// an error.
func (r *Request) open(ctx context.Context, limited bool) (*http.Response, error) {
	if r.err != nil {
		return nil, r.err
	}
	resp, start, err := r.send(ctx, limited)
	if err != nil {
		return nil, err
	}
	if !succeeded(resp.StatusCode) {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		r.logResponse(resp, start, body)
		return nil, r.decodeError(resp, body)
	}
	r.logResponse(resp, start, nil)
	return resp, nil
}

// isWatch reports a request with the watch=true parameter.
func (r *Request) isWatch() bool {
	w := r.params.Get("watch")
	return w == "true" || w == "1"
}

// maxRetries bounds the retries of one request, and maxRetryAfter the delay
// honored from one Retry-After header.
const (
	maxRetries    = 10
	maxRetryAfter = 60 * time.Second
)

// send performs the request with rate limiting (unless limited is false)
// and the retry rules: 429 and 5xx answers with Retry-After are retried
// after that delay for every verb; a connection reset or EOF before any
// answer is retried for idempotent requests only (GET, server-side apply).
func (r *Request) send(ctx context.Context, limited bool) (*http.Response, time.Time, error) {
	// lastErr is the error of the attempt before a retry: when the
	// context ends during the retries, the error says what kept failing,
	// not only that time ran out.
	var lastErr error
	ended := func(ctxErr error) error {
		if lastErr != nil {
			return fmt.Errorf("rest: %s %s: %w (the last attempt failed: %v)", r.verb, r.URL().Redacted(), ctxErr, lastErr)
		}
		return fmt.Errorf("rest: %s %s: %w", r.verb, r.URL().Redacted(), ctxErr)
	}
	for attempt := 0; ; attempt++ {
		if limited {
			if err := r.c.wait(ctx, r); err != nil {
				return nil, time.Time{}, fmt.Errorf("rest: %s %s: waiting for the client-side rate limiter: %w", r.verb, r.path(), err)
			}
		}
		req, err := r.newHTTPRequest(ctx)
		if err != nil {
			return nil, time.Time{}, err
		}
		r.logRequest(req)
		start := time.Now()
		resp, err := r.httpClient(ctx).Do(req)
		if err != nil {
			r.c.metrics.RequestDone(r.verb, r.c.base.Host, errorCode, time.Since(start))
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, start, ended(ctxErr)
			}
			if r.idempotent() && attempt < maxRetries && isRetryableConnError(err) {
				d := connRetryDelay(attempt)
				r.c.log.V(4).Info("retrying an idempotent request after a connection error", "verb", r.verb, "url", r.URL().Redacted(), "error", err, "delay", d)
				lastErr = err
				if serr := r.c.sleep(ctx, d); serr != nil {
					return nil, start, ended(serr)
				}
				r.c.metrics.Retried(r.verb, r.c.base.Host, errorCode)
				continue
			}
			return nil, start, err
		}
		r.c.metrics.RequestDone(r.verb, r.c.base.Host, statusCode(resp.StatusCode), time.Since(start))
		if d, ok := retryAfter(resp); ok && attempt < maxRetries {
			r.logResponse(resp, start, nil)
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			r.c.log.V(4).Info("retrying after Retry-After", "url", r.URL().Redacted(), "status", resp.StatusCode, "delay", d, "attempt", attempt+1)
			if err := r.c.sleep(ctx, d); err != nil {
				return nil, start, fmt.Errorf("rest: %s %s: waiting %s to retry as the server asked: %w", r.verb, r.path(), d, err)
			}
			r.c.metrics.Retried(r.verb, r.c.base.Host, statusCode(resp.StatusCode))
			continue
		}
		r.c.handleWarnings(resp.Header)
		return resp, start, nil
	}
}

// idempotent reports requests that may be sent again when the connection
// broke before an answer: GET, and server-side apply (PATCH with
// application/apply-patch+yaml), whose result does not depend on how many
// times it is applied.
func (r *Request) idempotent() bool {
	switch r.verb {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodPatch:
		return r.headers.Get("Content-Type") == ContentTypeApplyPatch
	}
	return false
}

func (r *Request) decodeError(resp *http.Response, body []byte) error {
	return decodeStatusError(resp.StatusCode, r.verb, r.groupResource(), r.name, resp.Header, body)
}

// Watch sends a watch request and decodes its events: objects are
// *unstructured.Unstructured, decoded in one pass straight into maps;
// ERROR events carry a *metav1.Status. The caller is expected to have set
// watch=true (for example through VersionedParams with
// ListOptions{Watch: true}). Watches are not rate limited and not bounded
// by Config.Timeout; the caller's context and Stop end them. Unless the
// request names an Accept-Encoding or Config.CompressWatches is set, it
// asks for an uncompressed stream (see the package documentation).
//
// A frame that does not decode becomes one ERROR event carrying a
// *metav1.Status and the stream ends; the end of the stream by the server
// or the network closes the result channel without an event.
func (r *Request) Watch(ctx context.Context) (watch.Interface, error) {
	if r.headers.Get("Accept-Encoding") == "" && !r.c.compressWatches {
		r.SetHeader("Accept-Encoding", "identity")
	}
	ctx, cancel := context.WithCancel(ctx)
	resp, err := r.open(ctx, false)
	if err != nil {
		cancel()
		return nil, err
	}
	return wire.NewMapWatch(resp.Body, cancel, wire.MapOptions{}), nil
}

// httpClient is the client a request with ctx is sent through: the bulk
// one for a bulk transfer (see internal/wire.WithBulk) when the Client has
// one.
func (r *Request) httpClient(ctx context.Context) *http.Client {
	if r.c.bulk != nil && wire.IsBulk(ctx) {
		return r.c.bulk
	}
	return r.c.http
}
