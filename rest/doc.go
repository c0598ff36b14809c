// Package rest is how kdyn reaches a Kubernetes API server: the connection
// settings (Config), the HTTP transport (TLS, HTTP/2 health pings,
// authentication, impersonation), and a request builder that every higher
// layer (discovery, dynamic, informer) uses.
//
// # Lifecycle
//
// Build a Config (by hand, or with package kubeconfig), then one Client with
// NewForConfig and share it: it is safe for concurrent use and owns the
// connection pool, the client-side rate limiter and the warning state.
// There is nothing to close; idle connections are reaped by the transport.
//
//	c, err := rest.NewForConfig(&rest.Config{Host: "https://127.0.0.1:6443", BearerToken: tok,
//		TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
//	body, err := c.Get().AbsPath("/version").DoRaw(ctx)
//	res := c.Get().Group("apps").Version("v1").Namespace("prod").Resource("deployments").
//		Name("web").Do(ctx)
//
// # Paths
//
// The core group is served under /api/VERSION and named groups under
// /apis/GROUP/VERSION; namespace, resource, name and subresource follow.
// Names, namespaces and subresources are checked before anything is sent: a
// "/" in a name is an "invalid resource name" error.
//
// # Rate limit and retries
//
// Requests pass a token bucket (Config.QPS, default 50; Config.Burst,
// default 100; a negative QPS disables it). Watches are not rate limited.
// A request that waited more than one second is logged at info level.
//
// A 429 or 5xx answer that carries Retry-After is retried after that delay
// (capped at 60 s, at most 10 times) for every verb, because the server
// asked for it. A connection reset or EOF before any answer is retried, with
// a short backoff, for idempotent requests only — GET and server-side apply
// (a PATCH of type application/apply-patch+yaml gives the same result
// however often it is applied); other verbs may have been applied. Every
// wait respects the caller's context.
//
// # Errors
//
// Any answer other than 200–206 (client-go's success range) is an
// *apierrors.StatusError: the server's own Status when the body is one,
// otherwise one synthesized from the HTTP code and the first kilobyte of
// the body. apierrors.IsNotFound, IsConflict,
// IsAlreadyExists, IsForbidden, IsUnauthorized, IsTooManyRequests, IsGone
// and the rest work on them. Transport failures and context errors are
// returned as they are (wrapped with %w).
//
// # Watches
//
// Request.Watch decodes JSON watch frames into apimachinery's
// watch.Interface; objects are *unstructured.Unstructured. A frame that
// does not decode becomes one ERROR event carrying a *metav1.Status and the
// stream ends; the end of the stream by the server or the network closes
// the result channel without an event. Stop closes the connection and then
// the channel. Watches ask for an uncompressed stream (Accept-Encoding:
// identity) unless the request names an encoding, where client-go's ask for
// gzip: the server flushes every event, so each is a deflate block of its
// own, which costs both ends more CPU than it saves (docs/benchmarks.md:
// compressing metadata-only watches throughout raised their CPU per event
// from 0.7× to 0.86× client-go's). Config.CompressWatches asks for gzip on
// every watch, as client-go does, where bandwidth matters more or requests
// must be identical to client-go's.
//
// Request.StreamResponse hands over an open response for a caller that
// decodes the body itself; kdyn's informers read lists and watches that way
// (package internal/wire).
//
// # Connections
//
// Unless Config.Transport is set, each Client has its own http.Transport:
// HTTP/2 when the server offers it (one TCP connection carries every watch
// and request), HTTP/1.1 otherwise, with health pings on HTTP/2 connections
// so that a dead peer ends its watches. NewForConfig also builds an
// HTTP/1.1-only transport beside it, with the same TLS, dialer and
// credentials, for the bulk transfers of kdyn's informers (large lists):
// each takes a connection of its own, reused when its body was read to the
// end. A Client from NewForConfigAndClient, or with Config.Transport, sends
// those like any other request.
//
// On Linux, the TCP connections the transport dials (through Config.Dial
// or the default dialer) read and write with read(2) and write(2) directly
// (the reason is beside the code, in conn_linux.go); deadlines, Close and
// errors are those of *net.TCPConn, but an httptrace GotConn hook sees such
// a connection as an unexported type, not as *net.TCPConn.
//
// # Security
//
// TLS verification is on unless TLSClientConfig.Insecure is set.
// Credentials (bearer token, token file, basic auth, client certificate,
// exec plugin) are never sent over plain http:// — NewForConfig refuses —
// unless the host is loopback and Insecure is set. Credentials are attached
// only to requests for the configured host, and are removed from a request
// redirected to another host. Logs never contain credentials: tokens are
// masked in the verbosity-9 curl line, Secret data and credential fields
// are redacted from logged bodies, and Config.String redacts everything
// secret.
//
// An exec credential plugin gets the terminal (stdin, and its prompts on
// stderr) only when its interactiveMode allows it, stdin is a terminal, and
// ExecConfig.StdinUnavailable is not set: a program that reads its own
// input from stdin (kdyn's -f -) sets it, so an "Always" plugin fails with
// StdinUnavailableMessage instead of consuming that input.
//
// # Logging
//
// Config.Logger (nil: none) receives debug-level request logs according to
// Config.LogVerbosity, using kubectl's -v levels: 6 logs method, URL,
// status and latency; 8 adds bodies (redacted, truncated); 9 adds a curl
// command line. Server warnings go to Config.WarningHandler; the default
// logs each distinct warning once.
package rest
