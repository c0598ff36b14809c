package rest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
)

// Exec credential plugins (client.authentication.k8s.io).
//
// The plugin is run on demand: for the first request, when the cached
// credential is about to expire, and after the server rejected the cached
// credential with 401. Concurrent requests share one run. The credential
// is never logged and never appears in an error.

// ExecCredential API versions kdyn speaks.
const (
	execAPIv1      = "client.authentication.k8s.io/v1"
	execAPIv1beta1 = "client.authentication.k8s.io/v1beta1"
)

// Interactive modes of ExecConfig.InteractiveMode.
const (
	execNever       = "Never"
	execIfAvailable = "IfAvailable"
	execAlways      = "Always"
)

const (
	// execExpirySkew is how long before its expirationTimestamp a cached
	// credential is replaced, so requests in flight do not carry a token
	// that expires on the way.
	execExpirySkew = 10 * time.Second
	// execStderrLimit bounds the plugin stderr quoted in errors.
	execStderrLimit = 4 << 10
	// execStdoutLimit bounds the plugin output kdyn reads.
	execStdoutLimit = 1 << 20
)

// execCredentialJSON is the ExecCredential object of both API versions, as
// sent to the plugin (spec) and read back from it (status).
type execCredentialJSON struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Spec       execSpecJSON    `json:"spec"`
	Status     *execStatusJSON `json:"status,omitempty"`
}

type execSpecJSON struct {
	Cluster     *execClusterJSON `json:"cluster,omitempty"`
	Interactive bool             `json:"interactive"`
}

type execClusterJSON struct {
	Server                   string `json:"server"`
	TLSServerName            string `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
	ProxyURL                 string `json:"proxy-url,omitempty"`
	Config                   any    `json:"config,omitempty"`
}

type execStatusJSON struct {
	ExpirationTimestamp   string `json:"expirationTimestamp,omitempty"`
	Token                 string `json:"token,omitempty"`
	ClientCertificateData string `json:"clientCertificateData,omitempty"`
	ClientKeyData         string `json:"clientKeyData,omitempty"`
}

// execCredential is a credential obtained from one plugin run.
type execCredential struct {
	token  string
	cert   *tls.Certificate // nil when the plugin returned no certificate
	expiry time.Time        // zero: valid until the server rejects it
}

// execAuthenticator runs an exec credential plugin and attaches its
// credential to requests for one API server. It is safe for concurrent use.
type execAuthenticator struct {
	command         string
	args            []string
	env             []string // extra NAME=VALUE entries, after the parent's
	apiVersion      string
	installHint     string
	interactiveMode string
	stdinIsTerminal func() bool
	stdinInUse      string // why stdin is unavailable; "" when it is available
	policy          ExecPluginPolicy
	cluster         *execClusterJSON // nil unless ProvideClusterInfo
	host            string           // requests for other hosts get nothing
	logger          logr.Logger

	// Seams for tests.
	now     func() time.Time
	environ func() []string

	group singleflight.Group

	// mu guards cached.
	mu     sync.Mutex
	cached *execCredential
}

func newExecAuthenticator(cfg *Config, server *url.URL) (*execAuthenticator, error) {
	e := cfg.ExecProvider
	if e == nil {
		return nil, errors.New("rest: no exec provider configured")
	}
	if strings.TrimSpace(e.Command) == "" {
		return nil, errors.New("rest: exec plugin: command is empty; set the command of the user's exec stanza")
	}
	name := e.Command
	switch e.APIVersion {
	case execAPIv1, execAPIv1beta1:
	case "":
		return nil, fmt.Errorf("rest: exec plugin %q: apiVersion is empty; set it to %q (or %q for older plugins)", name, execAPIv1, execAPIv1beta1)
	default:
		return nil, fmt.Errorf("rest: exec plugin %q: apiVersion %q is not supported; use %q or %q", name, e.APIVersion, execAPIv1, execAPIv1beta1)
	}
	mode := e.InteractiveMode
	switch mode {
	case execNever, execIfAvailable, execAlways:
	case "":
		if e.APIVersion == execAPIv1 {
			return nil, fmt.Errorf("rest: exec plugin %q: interactiveMode must be set for %s; use %q, %q or %q", name, execAPIv1, execNever, execIfAvailable, execAlways)
		}
		mode = execIfAvailable
	default:
		return nil, fmt.Errorf("rest: exec plugin %q: interactiveMode %q is not valid; use %q, %q or %q", name, mode, execNever, execIfAvailable, execAlways)
	}
	a := &execAuthenticator{
		command:         e.Command,
		args:            append([]string(nil), e.Args...),
		apiVersion:      e.APIVersion,
		installHint:     e.InstallHint,
		interactiveMode: mode,
		stdinIsTerminal: e.StdinIsTerminal,
		host:            server.Host,
		logger:          cfg.Logger,
		now:             time.Now,
		environ:         os.Environ,
	}
	if err := e.PluginPolicy.Validate(); err != nil {
		return nil, fmt.Errorf("rest: exec plugin %q: %w", name, err)
	}
	a.policy = e.PluginPolicy
	if e.StdinUnavailable {
		a.stdinInUse = "standard input is unavailable"
		if e.StdinUnavailableMessage != "" {
			a.stdinInUse += ": " + e.StdinUnavailableMessage
		}
	}
	for _, v := range e.Env {
		if v.Name == "" || strings.ContainsAny(v.Name, "=\x00") {
			return nil, fmt.Errorf("rest: exec plugin %q: environment variable name %q is not valid", name, v.Name)
		}
		a.env = append(a.env, v.Name+"="+v.Value)
	}
	if e.ProvideClusterInfo {
		c, err := execClusterInfo(cfg, server)
		if err != nil {
			return nil, fmt.Errorf("rest: exec plugin %q: %w", name, err)
		}
		a.cluster = c
	}
	return a, nil
}

// execClusterInfo builds spec.cluster of KUBERNETES_EXEC_INFO.
func execClusterInfo(cfg *Config, server *url.URL) (*execClusterJSON, error) {
	t := cfg.TLSClientConfig
	c := &execClusterJSON{
		Server:                   server.String(),
		TLSServerName:            t.ServerName,
		InsecureSkipTLSVerify:    t.Insecure,
		CertificateAuthorityData: append([]byte(nil), t.CAData...),
		Config:                   cfg.ExecProvider.Config,
	}
	if len(c.CertificateAuthorityData) == 0 && t.CAFile != "" {
		b, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read certificate-authority %q for the plugin's cluster info: %w", t.CAFile, err)
		}
		c.CertificateAuthorityData = b
	}
	if cfg.Proxy != nil {
		if p, err := cfg.Proxy(&http.Request{URL: server, Header: http.Header{}}); err == nil && p != nil {
			c.ProxyURL = p.String()
		}
	}
	return c, nil
}

// wrap returns a RoundTripper that authenticates requests for the server
// with the plugin's credential.
func (a *execAuthenticator) wrap(rt http.RoundTripper) http.RoundTripper {
	return &execRoundTripper{auth: a, next: rt}
}

// getClientCertificate is tls.Config.GetClientCertificate: it presents the
// plugin's client certificate, or none when the plugin returns a token.
func (a *execAuthenticator) getClientCertificate(info *tls.CertificateRequestInfo) (*tls.Certificate, error) {
	ctx := context.Background()
	if info != nil {
		ctx = info.Context()
	}
	c, err := a.credential(ctx)
	if err != nil {
		return nil, err
	}
	if c.cert == nil {
		return &tls.Certificate{}, nil // send no certificate
	}
	return c.cert, nil
}

// fresh reports whether a cached credential may still be used.
func (a *execAuthenticator) fresh(c *execCredential) bool {
	return c != nil && (c.expiry.IsZero() || a.now().Before(c.expiry.Add(-execExpirySkew)))
}

// credential returns the cached credential, or runs the plugin for a new
// one. Concurrent callers share one run; a caller whose ctx ends stops
// waiting, but the run goes on for the others.
func (a *execAuthenticator) credential(ctx context.Context) (*execCredential, error) {
	a.mu.Lock()
	c := a.cached
	a.mu.Unlock()
	if a.fresh(c) {
		return c, nil
	}
	ch := a.group.DoChan("credential", func() (any, error) {
		a.mu.Lock()
		c := a.cached
		a.mu.Unlock()
		if a.fresh(c) {
			return c, nil
		}
		c, err := a.run()
		if err != nil {
			return nil, err
		}
		a.mu.Lock()
		a.cached = c
		a.mu.Unlock()
		return c, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*execCredential), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("rest: exec plugin %q: waiting for credentials: %w", a.command, ctx.Err())
	}
}

// invalidate drops the cached credential if it is still c, so the next
// request runs the plugin again. Comparing with c keeps many concurrent 401s
// for the same credential from causing more than one new run.
func (a *execAuthenticator) invalidate(c *execCredential) {
	a.mu.Lock()
	if a.cached == c {
		a.cached = nil
	}
	a.mu.Unlock()
}

// interactive decides spec.interactive and whether the plugin gets stdin.
func (a *execAuthenticator) interactive() (bool, error) {
	terminal := a.stdinInUse == "" && a.stdinIsTerminal != nil && a.stdinIsTerminal()
	switch a.interactiveMode {
	case execNever:
		return false, nil
	case execAlways:
		if a.stdinInUse != "" {
			return false, fmt.Errorf("rest: exec plugin %q: interactiveMode is %q but %s; give the input another way (a file) or change the plugin's interactiveMode", a.command, execAlways, a.stdinInUse)
		}
		if !terminal {
			return false, fmt.Errorf("rest: exec plugin %q: interactiveMode is %q but standard input is not a terminal; run from a terminal or change the plugin's interactiveMode", a.command, execAlways)
		}
		return true, nil
	default:
		return terminal, nil
	}
}

// run executes the plugin once and parses its credential.
func (a *execAuthenticator) run() (*execCredential, error) {
	interactive, err := a.interactive()
	if err != nil {
		return nil, err
	}
	info, err := json.Marshal(execCredentialJSON{
		APIVersion: a.apiVersion,
		Kind:       "ExecCredential",
		Spec:       execSpecJSON{Cluster: a.cluster, Interactive: interactive},
	})
	if err != nil {
		return nil, fmt.Errorf("rest: exec plugin %q: encode KUBERNETES_EXEC_INFO: %w", a.command, err)
	}

	path, err := a.policy.resolve(a.command)
	if err != nil {
		return nil, fmt.Errorf("rest: exec plugin: %w", err)
	}
	cmd := exec.Command(path, a.args...)
	env := append(a.environ(), a.env...)
	cmd.Env = append(env, "KUBERNETES_EXEC_INFO="+string(info))
	stdout := &limitedBuffer{limit: execStdoutLimit}
	stderr := &tailBuffer{limit: execStderrLimit}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	if interactive {
		// The user must see the plugin's prompts; keep a copy for errors.
		cmd.Stdin = os.Stdin
		cmd.Stderr = io.MultiWriter(os.Stderr, stderr)
	}

	start := a.now()
	err = cmd.Run()
	a.logger.V(4).Info("exec credential plugin ran", "command", a.command, "duration", a.now().Sub(start), "interactive", interactive, "success", err == nil)
	if err != nil {
		return nil, a.runError(err, stderr)
	}
	if stdout.overflow {
		return nil, fmt.Errorf("rest: exec plugin %q: output is larger than %d bytes; the plugin must print one ExecCredential object", a.command, execStdoutLimit)
	}
	return a.parse(stdout.Bytes())
}

// runError explains why the plugin could not run or failed.
func (a *execAuthenticator) runError(err error, stderr *tailBuffer) error {
	var exitErr *exec.ExitError
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		where := "in PATH"
		if strings.ContainsRune(a.command, os.PathSeparator) || strings.ContainsRune(a.command, '/') {
			where = "at that path"
		}
		msg := fmt.Sprintf("rest: exec plugin %q: executable not found %s", a.command, where)
		if a.installHint != "" {
			msg += "\n\n" + strings.TrimSpace(a.installHint)
		} else {
			msg += "; install it or fix the command of the user's exec stanza"
		}
		return errors.New(msg)
	case errors.Is(err, exec.ErrDot):
		return fmt.Errorf("rest: exec plugin %q: found only in the current directory, which kdyn does not run plugins from; use an absolute path or %q", a.command, "./"+a.command)
	case errors.As(err, &exitErr):
		var msg string
		if code := exitErr.ExitCode(); code >= 0 {
			msg = fmt.Sprintf("rest: exec plugin %q failed with exit code %d", a.command, code)
		} else {
			msg = fmt.Sprintf("rest: exec plugin %q was terminated (%s)", a.command, exitErr.ProcessState)
		}
		if s := stderr.String(); s != "" {
			msg += "; its stderr:\n" + s
		} else {
			msg += " and wrote nothing to stderr"
		}
		return errors.New(msg)
	default:
		return fmt.Errorf("rest: exec plugin %q: %w", a.command, err)
	}
}

// parse validates the plugin output. Errors never quote the output, which
// may hold a token.
func (a *execAuthenticator) parse(out []byte) (*execCredential, error) {
	var ec execCredentialJSON
	if err := json.Unmarshal(out, &ec); err != nil {
		return nil, fmt.Errorf("rest: exec plugin %q: output is not a JSON ExecCredential object (%d bytes, not shown since it may hold a credential); the plugin must print one ExecCredential to stdout", a.command, len(out))
	}
	// As client-go's decoder: a missing kind is the one asked for.
	if ec.Kind != "ExecCredential" && ec.Kind != "" {
		return nil, fmt.Errorf("rest: exec plugin %q: output has kind %q, want \"ExecCredential\"", a.command, ec.Kind)
	}
	if ec.APIVersion != a.apiVersion {
		return nil, fmt.Errorf("rest: exec plugin %q: output has apiVersion %q, but the exec config asks for %q; set the exec stanza's apiVersion to the one the plugin speaks", a.command, ec.APIVersion, a.apiVersion)
	}
	s := ec.Status
	if s == nil {
		return nil, fmt.Errorf("rest: exec plugin %q: output has no status", a.command)
	}
	c := &execCredential{token: s.Token}
	switch {
	case s.ClientCertificateData != "" && s.ClientKeyData != "":
		cert, err := tls.X509KeyPair([]byte(s.ClientCertificateData), []byte(s.ClientKeyData))
		if err != nil {
			return nil, fmt.Errorf("rest: exec plugin %q: status.clientCertificateData and status.clientKeyData are not a valid PEM certificate and key: %w", a.command, err)
		}
		c.cert = &cert
	case s.ClientCertificateData != "":
		return nil, fmt.Errorf("rest: exec plugin %q: status.clientCertificateData is set without status.clientKeyData", a.command)
	case s.ClientKeyData != "":
		return nil, fmt.Errorf("rest: exec plugin %q: status.clientKeyData is set without status.clientCertificateData", a.command)
	}
	if c.token == "" && c.cert == nil {
		return nil, fmt.Errorf("rest: exec plugin %q: status has neither a token nor a client certificate and key", a.command)
	}
	if s.ExpirationTimestamp != "" {
		t, err := time.Parse(time.RFC3339, s.ExpirationTimestamp)
		if err != nil {
			return nil, fmt.Errorf("rest: exec plugin %q: status.expirationTimestamp %q is not an RFC 3339 time", a.command, s.ExpirationTimestamp)
		}
		if !a.now().Before(t) {
			return nil, fmt.Errorf("rest: exec plugin %q: returned a credential that expired at %s; the plugin's own cache may be stale (log in again or clear it)", a.command, t.UTC().Format(time.RFC3339))
		}
		c.expiry = t
	}
	return c, nil
}

// execRoundTripper attaches the plugin's token and retries once after a 401.
type execRoundTripper struct {
	auth *execAuthenticator
	next http.RoundTripper
}

// closeIdler is implemented by transports that can drop idle connections,
// so that a new client certificate is used for the next handshake.
type closeIdler interface{ CloseIdleConnections() }

func (t *execRoundTripper) CloseIdleConnections() {
	if c, ok := t.next.(closeIdler); ok {
		c.CloseIdleConnections()
	}
}

func (t *execRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.EqualFold(req.URL.Host, t.auth.host) || req.Header.Get("Authorization") != "" {
		return t.next.RoundTrip(req)
	}
	cred, err := t.auth.credential(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.next.RoundTrip(withExecToken(req, cred))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}

	// The server rejected the plugin's credential: forget it, so this or the
	// next request runs the plugin again.
	t.auth.invalidate(cred)
	retry, ok := replayable(req)
	if !ok {
		return resp, nil
	}
	fresh, err := t.auth.credential(req.Context())
	if err != nil || sameExecCredential(cred, fresh) {
		// Keep the server's answer rather than a plugin error, or a retry
		// that cannot do better.
		if retry.Body != nil {
			retry.Body.Close()
		}
		return resp, nil
	}
	drain(resp)
	if fresh.cert != nil {
		t.CloseIdleConnections()
	}
	return t.next.RoundTrip(withExecToken(retry, fresh))
}

// withExecToken returns req with the credential's token, leaving req itself
// unmodified as RoundTrippers must.
func withExecToken(req *http.Request, c *execCredential) *http.Request {
	if c.token == "" {
		return req
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+c.token)
	return r
}

// replayable returns a copy of req with a fresh body for a retry.
func replayable(req *http.Request) (*http.Request, bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, true
}

func sameExecCredential(a, b *execCredential) bool {
	if a.token != b.token || (a.cert == nil) != (b.cert == nil) {
		return false
	}
	if a.cert == nil {
		return true
	}
	if len(a.cert.Certificate) != len(b.cert.Certificate) {
		return false
	}
	for i := range a.cert.Certificate {
		if !bytes.Equal(a.cert.Certificate[i], b.cert.Certificate[i]) {
			return false
		}
	}
	return true
}

// drain reads a little of the body and closes it, so the connection can be
// reused.
func drain(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
}

// limitedBuffer keeps the first limit bytes written and notes overflow.
type limitedBuffer struct {
	bytes.Buffer
	limit    int
	overflow bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); len(p) > room {
		b.overflow = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// tailBuffer keeps the last limit bytes written: a failing plugin's
// reason is usually at the end of what it printed.
type tailBuffer struct {
	mu        sync.Mutex
	buf       []byte
	limit     int
	truncated bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.truncated = true
	}
	return len(p), nil
}

// String returns the captured text, trimmed, marked when cut.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(strings.ToValidUTF8(string(b.buf), "\uFFFD"))
	if b.truncated && s != "" {
		s = "[…] " + s
	}
	return s
}
