package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// The kube-apiserver in integration/ answers every upgrade kdyn asks for
// and its kubelet (KWOK) reports no exit codes, so these tests stand in for
// a server that refuses WebSockets (an old server or a proxy) and for a
// kubelet that reports a command's exit code.

// exitStatus is the Status a kubelet sends for a command that exited 3.
var exitStatus = metav1.Status{Status: metav1.StatusFailure, Reason: "NonZeroExitCode",
	Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: "3"}}}}

// echoServer runs "cat" with a twist: it sends stdin back on stdout upper
// cased, "err" on stderr, and exits 3. With websockets false it refuses
// WebSocket upgrades with 400, as a server without them does, and speaks
// SPDY v4.
func echoServer(t *testing.T, websockets bool) (*httptest.Server, *sync.Map) {
	seen := &sync.Map{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Method+" "+r.Header.Get("Upgrade"), true)
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			if !websockets {
				http.Error(w, "websockets not supported here", http.StatusBadRequest)
				return
			}
			serveWebSocket(t, w, r)
			return
		}
		serveSPDY(t, w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

func serveWebSocket(t *testing.T, w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{ProtocolV5}})
	if err != nil {
		t.Errorf("accept: %v", err)
		return
	}
	defer conn.CloseNow()
	ctx := r.Context()
	var in bytes.Buffer
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			t.Errorf("server read: %v", err)
			return
		}
		if msg[0] == chStdin {
			in.Write(msg[1:])
		}
		if msg[0] == chClose && msg[1] == chStdin {
			break
		}
	}
	_ = conn.Write(ctx, websocket.MessageBinary, append([]byte{chStdout}, bytes.ToUpper(in.Bytes())...))
	_ = conn.Write(ctx, websocket.MessageBinary, append([]byte{chStderr}, "err"...))
	st, _ := json.Marshal(exitStatus)
	_ = conn.Write(ctx, websocket.MessageBinary, append([]byte{chError}, st...))
	conn.Close(websocket.StatusNormalClosure, "")
}

func serveSPDY(t *testing.T, w http.ResponseWriter, r *http.Request) {
	if _, err := httpstream.Handshake(r, w, []string{ProtocolV4}); err != nil {
		t.Errorf("handshake: %v", err)
		return
	}
	streams := make(chan httpstream.Stream, 4)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, reply <-chan struct{}) error {
		streams <- s
		return nil
	})
	if conn == nil {
		return
	}
	defer conn.Close()
	byType := map[string]httpstream.Stream{}
	for len(byType) < 4 { // error, stdin, stdout, stderr
		s := <-streams
		byType[s.Headers().Get("streamType")] = s
	}
	in, _ := io.ReadAll(byType["stdin"])
	_, _ = byType["stdout"].Write(bytes.ToUpper(in))
	_, _ = byType["stderr"].Write([]byte("err"))
	byType["stdout"].Close()
	byType["stderr"].Close()
	_ = json.NewEncoder(byType["error"]).Encode(exitStatus)
	byType["error"].Close()
}

// TestStream: over WebSocket v5, and over SPDY v4 when the WebSocket
// upgrade is refused, stdin reaches the command and ends with EOF, stdout
// and stderr come back apart, and the exit code arrives as an *ExitError.
func TestStream(t *testing.T) {
	for _, websockets := range []bool{true, false} {
		name := map[bool]string{true: "websocket", false: "spdy-fallback"}[websockets]
		t.Run(name, func(t *testing.T) {
			srv, seen := echoServer(t, websockets)
			u, _ := url.Parse(srv.URL + "/api/v1/namespaces/ns/pods/p/exec?command=cat&stdin=true&stdout=true&stderr=true")
			var stdout, stderr bytes.Buffer
			var fellBack error
			err := Stream(t.Context(), srv.Client(), u, Streams{Stdin: strings.NewReader("hello"), Stdout: &stdout, Stderr: &stderr},
				func(err error) { fellBack = err })
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != 3 || ee.ExitStatus() != 3 {
				t.Fatalf("err = %v, want exit code 3", err)
			}
			if err.Error() != "command terminated with exit code 3" {
				t.Errorf("message = %q", err.Error())
			}
			if stdout.String() != "HELLO" || stderr.String() != "err" {
				t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
			}
			if _, ok := seen.Load("GET websocket"); !ok {
				t.Error("no WebSocket upgrade was asked for")
			}
			_, spdyAsked := seen.Load("POST SPDY/3.1")
			if websockets && (spdyAsked || fellBack != nil) {
				t.Errorf("SPDY was used although the WebSocket upgrade succeeded (fallback: %v)", fellBack)
			}
			if !websockets && (!spdyAsked || fellBack == nil) {
				t.Errorf("no SPDY fallback after the refused upgrade (fallback: %v)", fellBack)
			}
		})
	}
}

// TestDecodeStatus: the error stream's Status as kubectl reads it.
func TestDecodeStatus(t *testing.T) {
	for _, tc := range []struct {
		data, want string
	}{
		{``, ""},
		{`{"status":"Success"}`, ""},
		{`{"status":"Failure","message":"Internal error occurred: boom"}`, "Internal error occurred: boom"},
		{`{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"42"}]}}`, "command terminated with exit code 42"},
		{`{"status":"Failure","reason":"NonZeroExitCode"}`, "error stream protocol error: details must be set"},
		{`{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"x"}]}}`, `error stream protocol error: invalid exit code value "x"`},
		{`not json`, `error stream protocol error: invalid character 'o' in literal null (expecting 'u') in "not json"`},
	} {
		err := decodeStatus([]byte(tc.data))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("decodeStatus(%s) = %q, want %q", tc.data, got, tc.want)
		}
	}
}

// TestUpgradeRefusedWithStatus: a refused SPDY upgrade is the server's
// Status (here Forbidden), not a protocol error.
func TestUpgradeRefusedWithStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Reason: metav1.StatusReasonForbidden, Code: 403,
			Message: `pods "p" is forbidden: User "nobody" cannot create resource "pods/exec"`})
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/api/v1/namespaces/ns/pods/p/exec")
	err := Stream(t.Context(), srv.Client(), u, Streams{Stdout: io.Discard}, nil)
	if err == nil || !strings.Contains(err.Error(), `cannot create resource "pods/exec"`) {
		t.Fatalf("err = %v", err)
	}
}
