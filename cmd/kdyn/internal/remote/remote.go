package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// pingPeriod is how often an idle stream is pinged (SPDY pings, WebSocket
// pings), as client-go does, so that proxies and load balancers keep it and
// a dead peer is noticed.
const pingPeriod = 5 * time.Second

// pingTimeout bounds the wait for a WebSocket pong.
const pingTimeout = 60 * time.Second

// Protocol names of the streams of exec and attach.
const (
	// ProtocolV5 is the WebSocket protocol with half-close of stdin.
	ProtocolV5 = "v5.channel.k8s.io"
	// ProtocolV4 is the SPDY protocol with a JSON Status on the error stream.
	ProtocolV4 = "v4.channel.k8s.io"
)

// WebSocket channel numbers (the first byte of each message).
const (
	chStdin  = 0
	chStdout = 1
	chStderr = 2
	chError  = 3
	chResize = 4
	chClose  = 255 // v5: the next byte names a channel the sender closes
)

// TerminalSize is a terminal's size in characters.
type TerminalSize struct {
	Width  uint16
	Height uint16
}

// Streams are the local ends of a remote command. A nil Stdin, Stdout or
// Stderr is not requested (the URL must say the same). With TTY the
// remote side merges stderr into stdout.
type Streams struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	TTY    bool
	// Resize, when set, carries the terminal's sizes (the first one at
	// once); it is read until the stream ends.
	Resize <-chan TerminalSize
}

// ExitError is a remote command's non-zero exit code.
type ExitError struct{ Code int }

// Error is kubectl's message for it.
func (e *ExitError) Error() string {
	return fmt.Sprintf("command terminated with exit code %d", e.Code)
}

// Fallback, when set, is called with the reason when a WebSocket upgrade
// fails and SPDY is tried (for -v logs).
type Fallback func(err error)

// Stream runs the streams of a pods/exec or pods/attach request: u is the
// subresource's URL with its query (container, command, stdin, stdout,
// stderr, tty), hc an HTTP/1.1 client (rest.Client.UpgradeClient). As kubectl
// does since v1.31, it asks for a WebSocket (v5.channel.k8s.io, GET) and,
// when the server or a proxy on the way refuses the upgrade, uses SPDY
// (v4.channel.k8s.io, POST). It returns when the remote command ends: nil
// for success, an *ExitError for a non-zero exit code, the server's
// message for another failure.
func Stream(ctx context.Context, hc *http.Client, u *url.URL, s Streams, onFallback Fallback) error {
	err := streamWebSocket(ctx, hc, u, s)
	var uf *upgradeFailure
	if !errors.As(err, &uf) {
		return err
	}
	if onFallback != nil {
		onFallback(err)
	}
	return streamSPDY(ctx, hc, u, s)
}

// upgradeFailure is a WebSocket handshake the server did not accept.
type upgradeFailure struct{ err error }

func (e *upgradeFailure) Error() string { return "websocket upgrade failed: " + e.err.Error() }
func (e *upgradeFailure) Unwrap() error { return e.err }

// streamWebSocket is Stream over WebSocket, protocol v5.
func streamWebSocket(ctx context.Context, hc *http.Client, u *url.URL, s Streams) error {
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{
		HTTPClient:      hc,
		Subprotocols:    []string{ProtocolV5},
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		// only a handshake the server answered otherwise is worth
		// another protocol (a network or TLS error is not)
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return &upgradeFailure{err: err}
		}
		return err
	}
	defer conn.CloseNow()
	if conn.Subprotocol() != ProtocolV5 {
		return &upgradeFailure{err: fmt.Errorf("the server chose protocol %q, not %s", conn.Subprotocol(), ProtocolV5)}
	}
	conn.SetReadLimit(-1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	go func() { // keepalive: a pong missing for pingTimeout ends the stream
		t := time.NewTicker(pingPeriod)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				pctx, cancelPing := context.WithTimeout(ctx, pingTimeout)
				err := conn.Ping(pctx)
				cancelPing()
				if err != nil && ctx.Err() == nil {
					conn.CloseNow()
					return
				}
			}
		}
	}()
	var writeMu sync.Mutex
	send := func(msg []byte) error {
		writeMu.Lock()
		defer writeMu.Unlock()
		return conn.Write(ctx, websocket.MessageBinary, msg)
	}
	if s.Stdin != nil {
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := s.Stdin.Read(buf)
				if n > 0 {
					if send(append([]byte{chStdin}, buf[:n]...)) != nil {
						return
					}
				}
				if err != nil {
					_ = send([]byte{chClose, chStdin}) // EOF: close the remote stdin
					return
				}
			}
		}()
	}
	if s.Resize != nil && s.TTY {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case size, ok := <-s.Resize:
					if !ok {
						return
					}
					data, _ := json.Marshal(size)
					if send(append([]byte{chResize}, data...)) != nil {
						return
					}
				}
			}
		}()
	}

	var status []byte
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusNormalClosure || errors.Is(err, io.EOF) {
				break
			}
			if status != nil { // the server ends the connection after the status
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("reading the remote streams: %w", err)
		}
		if len(msg) == 0 {
			continue
		}
		var w io.Writer
		switch msg[0] {
		case chStdout:
			w = s.Stdout
		case chStderr:
			w = s.Stderr
		case chError:
			status = append(status, msg[1:]...)
			continue
		case chClose:
			continue
		}
		if w != nil && len(msg) > 1 {
			if _, err := w.Write(msg[1:]); err != nil {
				return err
			}
		}
	}
	conn.Close(websocket.StatusNormalClosure, "")
	return decodeStatus(status)
}

// decodeStatus reads the v4/v5 error stream: a metav1.Status, or nothing
// for success.
func decodeStatus(data []byte) error {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	var st metav1.Status
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("error stream protocol error: %v in %q", err, data)
	}
	switch st.Status {
	case metav1.StatusSuccess:
		return nil
	case metav1.StatusFailure:
		if st.Reason == "NonZeroExitCode" {
			if st.Details == nil {
				return errors.New("error stream protocol error: details must be set")
			}
			for _, c := range st.Details.Causes {
				if c.Type != "ExitCode" {
					continue
				}
				rc, err := strconv.ParseUint(c.Message, 10, 8)
				if err != nil {
					return fmt.Errorf("error stream protocol error: invalid exit code value %q", c.Message)
				}
				return &ExitError{Code: int(rc)}
			}
			return errors.New("error stream protocol error: no ExitCode cause given")
		}
		return errors.New(st.Message)
	}
	return errors.New("error stream protocol error: unknown error")
}

// Upgrade sends a SPDY upgrade request (POST, as kubectl's SPDY executor
// and port-forward do) offering protocols, and returns the SPDY
// connection and the protocol the server chose. A refusal is "unable to
// upgrade connection: " and the server's message, as kubectl words it.
func Upgrade(ctx context.Context, hc *http.Client, u *url.URL, protocols ...string) (httpstream.Connection, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "SPDY/3.1")
	for _, p := range protocols {
		req.Header.Add(httpstream.HeaderProtocolVersion, p)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		return nil, "", responseError(resp)
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		resp.Body.Close()
		return nil, "", errors.New("the upgraded connection cannot be written to (is the client HTTP/1.1?)")
	}
	conn, err := spdy.NewClientConnectionWithPings(&upgradedConn{ReadWriteCloser: rwc}, pingPeriod)
	if err != nil {
		rwc.Close()
		return nil, "", err
	}
	return conn, resp.Header.Get(httpstream.HeaderProtocolVersion), nil
}

// streamSPDY is Stream over SPDY, protocol v4.
func streamSPDY(ctx context.Context, hc *http.Client, u *url.URL, s Streams) error {
	conn, protocol, err := Upgrade(ctx, hc, u, ProtocolV4)
	if err != nil {
		return err
	}
	defer conn.Close()
	if protocol != ProtocolV4 {
		return fmt.Errorf("the server chose stream protocol %q; kdyn speaks %s", protocol, ProtocolV4)
	}
	open := func(typ string) (httpstream.Stream, error) {
		h := http.Header{}
		h.Set("streamType", typ)
		return conn.CreateStream(h)
	}
	errStream, err := open("error")
	if err != nil {
		return err
	}
	statusCh := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(errStream)
		statusCh <- data
	}()
	if s.TTY && s.Resize != nil {
		rs, err := open("resize")
		if err != nil {
			return err
		}
		go func() {
			enc := json.NewEncoder(rs)
			for size := range s.Resize {
				if enc.Encode(size) != nil {
					return
				}
			}
		}()
	}
	if s.Stdin != nil {
		in, err := open("stdin")
		if err != nil {
			return err
		}
		go func() {
			_, _ = io.Copy(in, s.Stdin)
			in.Close()
		}()
	}
	var wg sync.WaitGroup
	for _, out := range []struct {
		typ string
		w   io.Writer
	}{{"stdout", s.Stdout}, {"stderr", s.Stderr}} {
		if out.w == nil || (s.TTY && out.typ == "stderr") {
			continue
		}
		st, err := open(out.typ)
		if err != nil {
			return err
		}
		wg.Go(func() { _, _ = io.Copy(out.w, st) })
	}
	select {
	case data := <-statusCh:
		wg.Wait()
		return decodeStatus(data)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// responseError is the error of a refused upgrade, in kubectl's words:
// "unable to upgrade connection: " and the message of the server's Status
// (or its error field, or the body).
func responseError(resp *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return errors.New("unable to upgrade connection: unable to read error from server response")
	}
	var st struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &st) == nil {
		if m := strings.TrimSpace(st.Message); m != "" {
			msg = m
		} else if m := strings.TrimSpace(st.Error); m != "" {
			msg = m
		}
	}
	if msg == "" {
		msg = "empty server response"
	}
	return fmt.Errorf("unable to upgrade connection: %s", msg)
}

// upgradedConn gives an upgraded HTTP/1.1 connection the net.Conn methods
// the SPDY framer asks for; deadlines are not supported (the context and
// Close end it).
type upgradedConn struct{ io.ReadWriteCloser }

func (upgradedConn) LocalAddr() net.Addr              { return dummyAddr{} }
func (upgradedConn) RemoteAddr() net.Addr             { return dummyAddr{} }
func (upgradedConn) SetDeadline(time.Time) error      { return nil }
func (upgradedConn) SetReadDeadline(time.Time) error  { return nil }
func (upgradedConn) SetWriteDeadline(time.Time) error { return nil }

type dummyAddr struct{}

func (dummyAddr) Network() string { return "tcp" }
func (dummyAddr) String() string  { return "upgraded-connection" }

// ExitStatus is the remote exit code, which kdyn exits with.
func (e *ExitError) ExitStatus() int { return e.Code }
