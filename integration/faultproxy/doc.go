// Package faultproxy is a test-only HTTPS reverse proxy, on 127.0.0.1, that
// sits between a kdyn client and a real kube-apiserver and breaks the
// connection between them on command: it cuts connections, stalls them,
// delays requests, answers 429 and 5xx, cuts watch streams in the middle of
// a frame, injects malformed frames, and refuses connections for a while.
// It records every request so tests can count what the client sent.
//
// # Lifecycle
//
// New starts the proxy on a free loopback port with its own self-signed CA
// (CAData) and forwards to Options.Upstream over TLS verified with
// Options.UpstreamCAData. RESTConfig turns a *rest.Config for the upstream
// into one for the proxy (same credentials, the proxy's URL and CA). Close
// stops it and waits for every goroutine it started. All methods are safe
// for concurrent use; the fault controls take effect at once, for the
// exchanges in flight and for the following ones.
//
//	p, err := faultproxy.New(faultproxy.Options{Upstream: env.Host(), UpstreamCAData: env.CAData()})
//	defer p.Close()
//	rc, err := rest.NewForConfig(p.RESTConfig(env.RESTConfig(testenv.Admin)))
//	p.Respond429(5, time.Second, faultproxy.PathPrefix("/api/v1/namespaces/"))
//	p.CutAll()
//
// # Protocol
//
// The proxy speaks HTTP/1.1 only, on both sides: each exchange has its own
// connection, so cutting, stalling or ending one is a plain TCP matter and
// needs no HTTP/2 stream bookkeeping. kdyn negotiates HTTP/1.1 through ALPN,
// so its HTTP/2 health pings (which only run on HTTP/2 connections) are not
// in play behind the proxy; a stall is then noticed only by what the client
// itself bounds (for a watch, the informer's idle deadline). Upgrades
// (exec, port-forward) are not supported.
//
// Response bytes are copied by the proxy itself and flushed after every
// write, so streaming responses arrive as the server sends them. A watch
// (a request with watch=true or watch=1) is copied frame by frame, a frame
// being one line of a JSON stream (kube-apiserver ends every JSON watch
// event with a newline) or one length-prefixed message of a protobuf
// stream. That is what lets CloseWatchMidFrame cut inside a frame and
// InjectMalformedFrame insert a broken one between two.
//
// # Faults
//
//   - CutAll closes every client connection and cancels every upstream
//     request: clients see a reset or an unexpected EOF.
//   - Stall(true) holds every response byte (headers and body) of the
//     exchanges in flight and of new ones; connections stay open, no FIN is
//     sent. Stall(false) delivers what was held and carries on. StallOpen
//     holds only the exchanges in flight, as a connection that went dead
//     would, while new requests go through.
//   - Delay(d) waits d before forwarding each request; DelayMatching(d, n,
//     match) waits d before forwarding the next n matching ones.
//   - Respond429 and Respond5xx answer the next n matching requests
//     themselves, with a metav1.Status body (n < 0: every one until Reset).
//   - CutBeforeForward closes the connection of the next n matching
//     requests without forwarding them (the server never sees them);
//     CutAfterForward forwards them, waits for the server's answer, then
//     closes the connection without delivering it (the server applied the
//     request; the client cannot know).
//   - CloseWatchMidFrame makes every open watch deliver the first half of
//     its next frame, then closes its connection.
//   - InjectMalformedFrame writes MalformedFrame into every open watch at
//     once, between two frames; the stream then carries on.
//   - Down(d) cuts everything and, for d, closes every new connection as
//     soon as it is accepted, before the TLS handshake.
//   - Reset clears every rule, the delay and the stall.
//
// When the upstream cannot be reached (a control plane restarting), the
// proxy answers 502 with a Status body, as a load balancer would.
//
// # Records
//
// Records returns one Record per request (method, path, query, status sent,
// upstream status, the fault applied, watch frames delivered, whether the
// client went away first); Requests counts them by path and status.
package faultproxy
