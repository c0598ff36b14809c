package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/streaming/pkg/httpstream"
)

// ProtocolPortForward is the SPDY protocol of pods' portforward subresource.
const ProtocolPortForward = "portforward.k8s.io"

// Forward is one forwarded port: connections to Local on this machine go
// to Remote in the pod. Local 0 asks for a free port.
type Forward struct {
	Local  int
	Remote int
}

// Listener is a local address kdyn forwards from, as reported to ready.
type Listener struct {
	Addr   string // "127.0.0.1:8080", "[::1]:8080"
	Remote int
}

// PortForward forwards the ports over one SPDY connection to u (a pod's
// portforward subresource) through hc (rest.Client.UpgradeClient). It listens on
// each of addresses (IPs, or "localhost" for 127.0.0.1 and ::1, where an
// address that cannot be listened on is skipped unless none can), calls
// ready with what it listens on, and writes "Handling connection for N"
// to out for each connection. Errors of one connection go to errOut; the
// forwarding goes on until ctx ends or the connection to the server is
// lost.
func PortForward(ctx context.Context, hc *http.Client, u *url.URL, addresses []string, ports []Forward, out, errOut io.Writer, ready func([]Listener)) error {
	conn, protocol, err := Upgrade(ctx, hc, u, ProtocolPortForward)
	if err != nil {
		return fmt.Errorf("error upgrading connection: %w", err)
	}
	defer conn.Close()
	if protocol != ProtocolPortForward {
		return fmt.Errorf("unable to negotiate protocol: client supports %q, server returned %q", ProtocolPortForward, protocol)
	}

	var listeners []net.Listener
	var reported []Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	listened := false
	for i, p := range ports {
		// kubectl's rule: the localhost addresses fail a port only when
		// none of them listens, an address given fails it alone; a port
		// that fails is reported and the others are forwarded
		var errs []error
		var localOK, localFailed, givenFailed int
		for _, addr := range expandAddresses(addresses) {
			l, err := net.Listen(addr.network, net.JoinHostPort(addr.ip, strconv.Itoa(p.Local)))
			if err != nil {
				errs = append(errs, fmt.Errorf("unable to create listener: Error %s", err))
				if addr.optional {
					localFailed++
				} else {
					givenFailed++
				}
				continue
			}
			if addr.optional {
				localOK++
			}
			if p.Local == 0 { // the other addresses take the same free port
				p.Local = l.Addr().(*net.TCPAddr).Port
				ports[i].Local = p.Local
			}
			listeners = append(listeners, l)
			reported = append(reported, Listener{Addr: l.Addr().String(), Remote: p.Remote})
			go accept(ctx, conn, l, p, out, errOut)
		}
		if (localOK == 0 && localFailed > 0) || givenFailed > 0 {
			fmt.Fprintf(errOut, "Unable to listen on port %d: Listeners failed to create with the following errors: %v\n", p.Local, errs)
			continue
		}
		listened = true
	}
	if !listened {
		var all []string
		for _, p := range ports {
			all = append(all, fmt.Sprintf("{%d %d}", p.Local, p.Remote))
		}
		return fmt.Errorf("unable to listen on any of the requested ports: [%s]", strings.Join(all, " "))
	}
	if ready != nil {
		ready(reported)
	}
	select {
	case <-ctx.Done():
		return nil
	case <-conn.CloseChan():
		return errors.New("lost connection to pod")
	}
}

type listenAddr struct {
	network, ip string
	optional    bool
}

// expandAddresses turns "localhost" into 127.0.0.1 and ::1 (each optional,
// as kubectl has them), other values into themselves.
func expandAddresses(addresses []string) []listenAddr {
	var out []listenAddr
	for _, a := range addresses {
		if a == "localhost" {
			out = append(out, listenAddr{"tcp4", "127.0.0.1", true}, listenAddr{"tcp6", "::1", true})
			continue
		}
		network := "tcp4"
		if ip := net.ParseIP(a); ip != nil && ip.To4() == nil {
			network = "tcp6"
		}
		out = append(out, listenAddr{network, a, false})
	}
	return out
}

var requestIDs atomic.Int64

// accept serves one local listener until it is closed.
func accept(ctx context.Context, conn httpstream.Connection, l net.Listener, p Forward, out, errOut io.Writer) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			fmt.Fprintf(out, "Handling connection for %d\n", p.Local)
			if err := forward(ctx, conn, c, p.Remote); err != nil {
				// as kubectl v1.37: an error from the pod ends the whole
				// forwarding ("lost connection to pod"), so that a loop
				// around the command reconnects
				fmt.Fprintf(errOut, "error: an error occurred forwarding %d -> %d: %v\n", p.Local, p.Remote, err)
				conn.Close()
			}
		}()
	}
}

// forward carries one local connection over a new pair of streams (error
// and data) with a fresh request ID.
func forward(ctx context.Context, conn httpstream.Connection, c net.Conn, port int) error {
	id := strconv.FormatInt(requestIDs.Add(1), 10)
	h := http.Header{}
	h.Set("streamType", "error")
	h.Set("port", strconv.Itoa(port))
	h.Set("requestID", id)
	errStream, err := conn.CreateStream(h)
	if err != nil {
		return fmt.Errorf("error creating error stream: %w", err)
	}
	errStream.Close() // kdyn writes nothing on it
	defer conn.RemoveStreams(errStream)
	remoteErr := make(chan error, 1)
	go func() {
		msg, err := io.ReadAll(errStream)
		switch {
		case err != nil:
			remoteErr <- fmt.Errorf("error reading from error stream: %w", err)
		case len(msg) > 0:
			remoteErr <- errors.New(string(msg))
		}
		close(remoteErr)
	}()

	h.Set("streamType", "data")
	data, err := conn.CreateStream(h)
	if err != nil {
		return fmt.Errorf("error creating forwarding stream: %w", err)
	}
	defer conn.RemoveStreams(data)
	var wg sync.WaitGroup
	done := make(chan struct{})
	localErr := make(chan error, 1)
	wg.Go(func() { // pod → local; when the pod's side ends, so does ours
		_, _ = io.Copy(c, data)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		close(done)
	})
	go func() { // local → pod; at the local end of input, half-close
		if _, err := io.Copy(data, c); err != nil {
			localErr <- err
			return
		}
		data.Close()
	}()
	select {
	case <-done:
	case <-localErr: // the local side broke off: reset below; the pod's error, if any, is the one reported
	case <-ctx.Done():
	}
	// As client-go does: discard what is unsent so that the error stream
	// is not held up, then read it.
	data.Reset()
	wg.Wait()
	return <-remoteErr
}
