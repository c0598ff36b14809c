package testenv

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultReadyTimeout bounds the wait for /readyz after the process starts.
const DefaultReadyTimeout = 90 * time.Second

// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const stopTimeout = 20 * time.Second

// ServiceAccountIssuer is the apiserver's --service-account-issuer.
const ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// ServiceClusterIPRange is the apiserver's --service-cluster-ip-range.
const ServiceClusterIPRange = "10.0.0.0/24"

// Options configures Start. The zero value is ready to use.
type Options struct {
	// Dir holds the generated credentials, the etcd data, the kubeconfig
	// files and the log. Empty means a new temporary directory, which Stop
	// removes. A Dir that a previous Env used is reused as it is: the same
	// credentials, the same data and, when they are free, the same ports.
	// A Dir can be used by one Env at a time.
	Dir string
	// KeepDir keeps a temporary directory that Start created when Stop
	// runs. Main and New keep it anyway when a test failed.
	KeepDir bool
	// ExtraArgs are appended to the kube-apiserver flags; a flag given again
	// here overrides testenv's value (for example "--watch-cache=false").
	ExtraArgs []string
	// Output, when set, receives a copy of the control plane's stdout and
	// stderr. They always go to the file LogPath names.
	Output io.Writer
	// ReadyTimeout bounds the wait for /readyz after each start. Zero
	// means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Binary is the control-plane binary. Empty means Binary(ctx).
	Binary string
	// ExtraTokens are more lines for the apiserver's static token file,
	// beside the admin and nobody tokens: TOKEN,USER,UID[,"GROUP1,GROUP2"]
	// (for example kubectl's test suite's "admin-token").
	ExtraTokens []string
	// Controllers also runs kube-controller-manager (v1.37.2, from the
	// same binary) beside the apiserver, a child process logging to
	// kube-controller-manager.log in Dir: namespaces are then deleted,
	// workloads get their ReplicaSets and Pods, garbage is collected and
	// every namespace gets its "default" ServiceAccount.
	Controllers bool
	// Scheduler also runs kube-scheduler (kube-scheduler.log), which binds
	// pods to ready nodes. There are no nodes unless a test adds them or
	// Nodes asks for some, so pods stay Pending.
	Scheduler bool
	// Nodes, when positive, also runs KWOK's controller (sigs.k8s.io/kwok
	// v0.8.0, from the same binary; kwok.log) and registers that many
	// simulated nodes, kwok-node-0, kwok-node-1, …, before Start returns
	// (they are Ready then). KWOK manages the nodes annotated
	// kwok.x-k8s.io/node=fake: it keeps them Ready with leases, and plays
	// the pods bound to them (Running with an IP from 10.244.0.0/16 and
	// Ready, Succeeded when every container has exited by spec, deleted
	// right away when deleted). It serves the kubelet API on
	// 127.0.0.1:KubeletPort over TLS, and the apiserver proxies pods'
	// log, exec, attach and portforward requests to it, as to a kubelet.
	// What they do is configured through kwok.x-k8s.io/v1alpha1 objects
	// (Logs, Exec, Attach, PortForward and their Cluster* forms): logs
	// and attach read a file in the CRI log format, exec runs the command
	// on this machine in a given directory, port-forward connects to a
	// local address. Use with Scheduler (pods need binding) and usually
	// Controllers. KWOK's kubelet API does not authenticate its clients:
	// while an Exec object is in place, any user of this machine who
	// reaches the port can run commands as the test's user, so run such
	// clusters on single-user machines.
	Nodes int
}

// Env is a running control plane: an embedded etcd and a kube-apiserver in
// one child process, listening on 127.0.0.1 only. Its methods are safe for
// concurrent use.
type Env struct {
	opts   Options
	bin    string
	dir    string
	ownDir bool
	creds  *credentials
	ports  ports
	log    *logSink

	unlockDir func()

	mu         sync.Mutex
	proc       *proc
	components []*proc // kube-controller-manager and kube-scheduler, as Options ask
	closed     bool
}

type ports struct {
	Secure     int `json:"securePort"`
	EtcdClient int `json:"etcdClientPort"`
	EtcdPeer   int `json:"etcdPeerPort"`
	Kubelet    int `json:"kubeletPort"` // KWOK's kubelet API, with Options.Nodes
}

// state is what a directory keeps between Envs (state.json).
type state struct {
	ports
	AdminToken  string `json:"adminToken"`
	NobodyToken string `json:"nobodyToken"`
}

const (
	stateFile = "state.json"
	logFile   = "controlplane.log"
	lockName  = "lock"
)

type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // valid after done is closed
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Start starts a control plane and waits until its /readyz answers 200 (or
// Options.ReadyTimeout passes, or the process exits: the error then ends
// with the last lines of its output). ctx bounds building the binary and
// the wait; the control plane runs until Stop.
func Start(ctx context.Context, opts Options) (*Env, error) {
	e := &Env{opts: opts, bin: opts.Binary}
	if e.bin == "" {
		bin, err := Binary(ctx)
		if err != nil {
			return nil, err
		}
		e.bin = bin
	}
	if opts.Dir == "" {
		d, err := os.MkdirTemp("", "kdyn-testenv-")
		if err != nil {
			return nil, fmt.Errorf("testenv: %w", err)
		}
		e.dir, e.ownDir = d, true
	} else {
		d, err := filepath.Abs(opts.Dir)
		if err == nil {
			err = os.MkdirAll(d, 0o700)
		}
		if err != nil {
			return nil, fmt.Errorf("testenv: %w", err)
		}
		e.dir = d
	}
	if err := e.start(ctx); err != nil {
		e.cleanup()
		if !e.ownDir || e.opts.KeepDir {
			return nil, fmt.Errorf("testenv: %w\n(directory kept: %s)", err, e.dir)
		}
		return nil, fmt.Errorf("testenv: %w", err)
	}
	return e, nil
}

func (e *Env) start(ctx context.Context) error {
	lock, err := os.OpenFile(filepath.Join(e.dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if err := tryLock(lock); err != nil {
		lock.Close()
		if errors.Is(err, errLocked) {
			return fmt.Errorf("%s is in use by another control plane", e.dir)
		}
		return fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	e.unlockDir = func() { lock.Close() }

	fixedPorts := false
	if st, err := readState(e.dir); err == nil {
		if e.creds, err = loadCredentials(e.dir, st); err != nil {
			return fmt.Errorf("reuse %s: %w", e.dir, err)
		}
		if portFree(st.Secure) && portFree(st.EtcdClient) && portFree(st.EtcdPeer) && (e.opts.Nodes == 0 || portFree(st.Kubelet)) {
			e.ports, fixedPorts = st.ports, true
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	} else if e.creds, err = generateCredentials(e.dir); err != nil {
		return fmt.Errorf("generate credentials: %w", err)
	}

	if err := ensureKubeletCerts(e.dir); err != nil {
		return fmt.Errorf("kubelet certificates: %w", err)
	}
	if len(e.opts.ExtraTokens) > 0 {
		base, err := os.ReadFile(filepath.Join(e.dir, tokenFile))
		if err != nil {
			return err
		}
		all := append(base, strings.Join(e.opts.ExtraTokens, "\n")+"\n"...)
		if err := os.WriteFile(filepath.Join(e.dir, extraTokenFile), all, 0o600); err != nil {
			return err
		}
	}
	if e.log, err = newLogSink(filepath.Join(e.dir, logFile), e.opts.Output); err != nil {
		return err
	}

	// Free ports are found by binding :0 and closing; another process can
	// take one before the control plane binds it, so retry on that error.
	for attempt := 1; ; attempt++ {
		if !fixedPorts {
			if e.ports, err = freePorts(); err != nil {
				return err
			}
		}
		err = e.launch(ctx)
		if err == nil {
			break
		}
		if !errors.Is(err, errAddrInUse) || attempt == 3 {
			return err
		}
		fixedPorts = false
		e.log.mark("testenv: port taken, retrying with other ports")
	}

	st := state{ports: e.ports, AdminToken: e.creds.adminToken, NobodyToken: e.creds.nobodyToken}
	data, _ := json.MarshalIndent(st, "", "  ")
	if err := os.WriteFile(filepath.Join(e.dir, stateFile), data, 0o600); err != nil {
		return err
	}
	for _, u := range users {
		if err := e.WriteKubeconfig(e.KubeconfigPath(u), u); err != nil {
			return err
		}
	}
	return nil
}

func readState(dir string) (*state, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	return &st, nil
}

// cleanup releases what a failed Start acquired.
func (e *Env) cleanup() {
	if e.proc != nil {
		e.stopProc()
	}
	if e.log != nil {
		e.log.Close()
	}
	if e.unlockDir != nil {
		e.unlockDir()
	}
	if e.ownDir && !e.opts.KeepDir {
		os.RemoveAll(e.dir)
	}
}

// apiserverArgs are the kube-apiserver flags.
func (e *Env) apiserverArgs() []string {
	f := func(name string) string { return filepath.Join(e.dir, name) }
	args := []string{
		"--etcd-servers=" + e.EtcdEndpoint(),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(e.ports.Secure),
		"--cert-dir=" + f(pkiDir),
		"--tls-cert-file=" + f(servingCertFile),
		"--tls-private-key-file=" + f(servingKeyFile),
		"--client-ca-file=" + f(clientCAFile),
		"--token-auth-file=" + f(e.tokenFile()),
		"--authorization-mode=RBAC",
		"--service-account-issuer=" + ServiceAccountIssuer,
		"--service-account-key-file=" + f(saPubFile),
		"--service-account-signing-key-file=" + f(saKeyFile),
		"--service-cluster-ip-range=" + ServiceClusterIPRange,
		// The reconciler would write 127.0.0.1 into the "kubernetes"
		// Endpoints, which validation rejects (loopback), every 10 s.
		"--endpoint-reconciler-type=none",
		// Without a controller manager no namespace gets a "default"
		// ServiceAccount, and this plugin would reject every pod.
		"--disable-admission-plugins=ServiceAccount",
		// Kubelets (KWOK's, with Options.Nodes) are reached at their
		// InternalIP, 127.0.0.1, and must present a certificate from the
		// serving CA.
		"--kubelet-certificate-authority=" + f(servingCAFile),
		"--kubelet-client-certificate=" + f(kubeletClientCertFile),
		"--kubelet-client-key=" + f(kubeletClientKeyFile),
		"--kubelet-preferred-address-types=InternalIP,Hostname",
	}
	return append(args, e.opts.ExtraArgs...)
}

// extraTokenFile holds the token file with Options.ExtraTokens added.
const extraTokenFile = "pki/tokens-extra.csv"

// tokenFile is the token file the apiserver reads.
func (e *Env) tokenFile() string {
	if len(e.opts.ExtraTokens) > 0 {
		return extraTokenFile
	}
	return tokenFile
}

var errAddrInUse = errors.New("address already in use")

// launch starts the process and waits for readiness. It is called with e.mu
// held or before e is shared.
func (e *Env) launch(ctx context.Context) error {
	args := []string{
		"--etcd-dir", filepath.Join(e.dir, "etcd"),
		"--etcd-client-port", strconv.Itoa(e.ports.EtcdClient),
		"--etcd-peer-port", strconv.Itoa(e.ports.EtcdPeer),
		"--",
	}
	args = append(args, e.apiserverArgs()...)
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = e.dir
	cmd.Stdout, cmd.Stderr = e.log, e.log
	cmd.SysProcAttr = sysProcAttr()
	e.log.resetTail()
	e.log.mark(fmt.Sprintf("testenv: starting %s %s", e.bin, strings.Join(args, " ")))
	if err := cmd.Start(); err != nil {
		return err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	e.proc = p

	timeout := e.opts.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	if err := e.waitReady(ctx, p, timeout); err != nil {
		e.stopProc()
		tail := e.log.tailLines(50)
		if strings.Contains(tail, "address already in use") {
			err = fmt.Errorf("%w (%w)", err, errAddrInUse)
		}
		return fmt.Errorf("%w\nlast lines of the control plane's output:\n%s", err, tail)
	}
	if e.opts.Controllers || e.opts.Scheduler || e.opts.Nodes > 0 {
		if err := e.startComponents(); err != nil {
			e.stopProc()
			return err
		}
	}
	if e.opts.Nodes > 0 {
		if err := e.registerNodes(ctx, timeout); err != nil {
			e.stopProc()
			return fmt.Errorf("%w\nlast lines of kwok.log:\n%s", err, lastLines(filepath.Join(e.dir, "kwok.log"), 30))
		}
	}
	return nil
}

// componentsKubeconfig is the kubeconfig of kube-controller-manager,
// kube-scheduler and kwok (the admin user).
const componentsKubeconfig = "components.kubeconfig"

// startComponents starts kube-controller-manager, kube-scheduler and kwok
// (as Options ask) from the control-plane binary, each logging to NAME.log in
// the directory.
// The first two neither serve HTTPS (--secure-port=0) nor elect a leader.
func (e *Env) startComponents() error {
	f := func(name string) string { return filepath.Join(e.dir, name) }
	if err := e.WriteKubeconfig(f(componentsKubeconfig), Admin); err != nil {
		return err
	}
	common := []string{"--kubeconfig=" + f(componentsKubeconfig), "--leader-elect=false", "--secure-port=0"}
	kwokCommon := []string{"--kubeconfig=" + f(componentsKubeconfig)}
	type component struct {
		name string
		args []string
	}
	var components []component
	if e.opts.Controllers {
		components = append(components, component{"kube-controller-manager", []string{
			"--service-account-private-key-file=" + f(saKeyFile),
			"--root-ca-file=" + f(servingCAFile),
			"--cluster-signing-cert-file=" + f(clientCAFile),
			"--cluster-signing-key-file=" + f(clientCAKeyFile),
			"--use-service-account-credentials=false",
		}})
	}
	if e.opts.Scheduler {
		components = append(components, component{"kube-scheduler", nil})
	}
	if e.opts.Nodes > 0 {
		kubelet := "127.0.0.1:" + strconv.Itoa(e.ports.Kubelet)
		components = append(components, component{"kwok", []string{
			"--manage-nodes-with-annotation-selector=" + KWOKNodeAnnotation + "=fake",
			"--server-address=" + kubelet,
			"--node-port=" + strconv.Itoa(e.ports.Kubelet),
			"--node-ip=127.0.0.1",
			"--node-name=localhost",
			"--tls-cert-file=" + f(kubeletCertFile),
			"--tls-private-key-file=" + f(kubeletKeyFile),
			"--cidr=10.244.0.0/16",
			"--node-lease-duration-seconds=40",
		}})
	}
	for _, c := range components {
		out, err := os.OpenFile(f(c.name+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		flags := common
		if c.name == "kwok" {
			flags = kwokCommon
		}
		cmd := exec.Command(e.bin, append(append([]string{c.name}, flags...), c.args...)...)
		cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = e.dir, out, out, sysProcAttr()
		err = cmd.Start()
		out.Close() // the child has its own descriptor
		if err != nil {
			return fmt.Errorf("start %s: %w", c.name, err)
		}
		p := &proc{cmd: cmd, done: make(chan struct{})}
		go func() {
			p.err = cmd.Wait()
			close(p.done)
		}()
		e.components = append(e.components, p)
		e.log.mark(fmt.Sprintf("testenv: started %s (log: %s)", c.name, f(c.name+".log")))
	}
	return nil
}

// stopComponents stops kube-controller-manager and kube-scheduler.
func (e *Env) stopComponents() {
	for _, p := range e.components {
		if !p.exited() {
			if err := terminate(p.cmd.Process); err != nil {
				kill(p.cmd.Process)
			}
		}
	}
	for _, p := range e.components {
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			kill(p.cmd.Process)
			<-p.done
		}
	}
	e.components = nil
}

func (e *Env) waitReady(ctx context.Context, p *proc, timeout time.Duration) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := e.HTTPClient(Admin)
	defer client.CloseIdleConnections()
	last := "no answer yet"
	for {
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, e.Host()+"/readyz", nil)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				rcancel()
				e.log.mark(fmt.Sprintf("testenv: ready after %s", time.Since(start).Round(time.Millisecond)))
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, bytes.TrimSpace(body))
		} else {
			last = err.Error()
		}
		rcancel()
		select {
		case <-p.done:
			return fmt.Errorf("control plane exited before it was ready: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("control plane not ready after %s (%w); last /readyz: %s",
				time.Since(start).Round(time.Second), ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stopProc stops the current process: SIGTERM, then SIGKILL after
// stopTimeout. It reports an error if the process had died on its own or
// had to be killed.
func (e *Env) stopProc() error {
	e.stopComponents()
	p := e.proc
	if p == nil {
		return nil
	}
	e.proc = nil
	if p.exited() {
		if p.err != nil {
			return fmt.Errorf("control plane had exited: %v\n%s", p.err, e.log.tailLines(50))
		}
		return errors.New("control plane had exited")
	}
	if err := terminate(p.cmd.Process); err != nil {
		kill(p.cmd.Process)
	}
	select {
	case <-p.done:
		e.log.mark(fmt.Sprintf("testenv: stopped (%v)", p.err))
		return nil
	case <-time.After(stopTimeout):
	}
	kill(p.cmd.Process)
	<-p.done
	e.log.mark("testenv: killed")
	return fmt.Errorf("control plane did not stop within %s of SIGTERM; killed", stopTimeout)
}

// Stop stops the control plane (SIGTERM, then SIGKILL after 20 s) and
// removes the directory if Start created it (unless Options.KeepDir). It
// returns an error if the process had exited before Stop or had to be
// killed. Calls after the first return nil.
func (e *Env) Stop() error { return e.stop(false) }

func (e *Env) stop(keepDir bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.stopProc()
	e.log.Close()
	e.unlockDir()
	if e.ownDir && !keepDir && !e.opts.KeepDir {
		if rerr := os.RemoveAll(e.dir); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	return nil
}

// Restart stops the control plane and starts it again on the same
// directory, data and ports, and waits for /readyz. Clients see connection
// errors meanwhile. The watch cache starts afresh, so watches from a
// resourceVersion before the restart may get 410 Gone.
func (e *Env) Restart(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errors.New("testenv: Restart after Stop")
	}
	if err := e.stopProc(); err != nil {
		e.log.mark("testenv: " + err.Error())
	}
	e.log.mark("testenv: restarting")
	if err := e.launch(ctx); err != nil {
		return fmt.Errorf("testenv: restart (log: %s): %w", e.LogPath(), err)
	}
	return nil
}

// Err returns nil while the control plane process runs, and otherwise why
// it does not (stopped, or exited on its own, with its last output).
func (e *Env) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || e.proc == nil {
		return errors.New("the control plane was stopped")
	}
	if e.proc.exited() {
		return fmt.Errorf("the control plane exited: %v\nlast lines of its output (%s):\n%s",
			e.proc.err, e.LogPath(), e.log.tailLines(50))
	}
	return nil
}

// Host returns the apiserver URL, "https://127.0.0.1:PORT".
func (e *Env) Host() string { return "https://127.0.0.1:" + strconv.Itoa(e.ports.Secure) }

// CAData returns the PEM certificate of the CA that signed the apiserver's
// serving certificate (valid for 127.0.0.1, ::1 and localhost).
func (e *Env) CAData() []byte { return bytes.Clone(e.creds.servingCA) }

// AdminToken returns the bearer token of AdminUserName (group system:masters).
func (e *Env) AdminToken() string { return e.creds.adminToken }

// NobodyToken returns the bearer token of NobodyUserName, who is
// authenticated but has no RBAC permissions beyond the defaults for
// system:authenticated.
func (e *Env) NobodyToken() string { return e.creds.nobodyToken }

// ClientCertData returns the PEM client certificate of CertAdminUserName
// (organization system:masters).
func (e *Env) ClientCertData() []byte { return bytes.Clone(e.creds.clientCertData) }

// ClientKeyData returns the PEM private key of ClientCertData.
func (e *Env) ClientKeyData() []byte { return bytes.Clone(e.creds.clientKeyData) }

// EtcdEndpoint returns etcd's client URL, "http://127.0.0.1:PORT" (no TLS,
// no authentication; its JSON gRPC gateway answers under /v3/).
func (e *Env) EtcdEndpoint() string {
	return "http://127.0.0.1:" + strconv.Itoa(e.ports.EtcdClient)
}

// Dir returns the env directory.
func (e *Env) Dir() string { return e.dir }

// LogPath returns the file that receives the control plane's output.
func (e *Env) LogPath() string { return filepath.Join(e.dir, logFile) }

// HTTPClient returns a new *http.Client that verifies the apiserver with
// CAData and authenticates as u. Each call makes a new transport; reuse the
// client.
func (e *Env) HTTPClient(u User) *http.Client {
	tc := &tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12}
	tc.RootCAs.AppendCertsFromPEM(e.creds.servingCA)
	if u == CertAdmin {
		cert, err := tls.X509KeyPair(e.creds.clientCertData, e.creds.clientKeyData)
		if err != nil {
			panic("testenv: client certificate: " + err.Error()) // generated by us
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{
		TLSClientConfig:     tc,
		ForceAttemptHTTP2:   true,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
	}
	var rt http.RoundTripper = tr
	if tok := e.token(u); tok != "" {
		rt = bearer{token: tok, next: tr}
	}
	return &http.Client{Transport: rt}
}

func (e *Env) token(u User) string {
	switch u {
	case Admin:
		return e.creds.adminToken
	case Nobody:
		return e.creds.nobodyToken
	}
	return ""
}

type bearer struct {
	token string
	next  *http.Transport
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func (b bearer) CloseIdleConnections() { b.next.CloseIdleConnections() }

func freePorts() (ports, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var p [4]int
	for i := range p {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ports{}, err
		}
		ls = append(ls, l)
		p[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports{Secure: p[0], EtcdClient: p[1], EtcdPeer: p[2], Kubelet: p[3]}, nil
}

func portFree(p int) bool {
	if p <= 0 {
		return false
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// logSink writes the child's output to a file, an optional writer and a
// bounded in-memory tail used in error messages.
type logSink struct {
	mu   sync.Mutex
	f    *os.File
	out  io.Writer
	tail []byte
}

const tailMax = 256 << 10

func newLogSink(path string, out io.Writer) (*logSink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &logSink{f: f, out: out}, nil
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Write(p)
	}
	if l.out != nil {
		l.out.Write(p)
	}
	l.tail = append(l.tail, p...)
	if len(l.tail) > tailMax {
		l.tail = append(l.tail[:0], l.tail[len(l.tail)-tailMax/2:]...)
	}
	return len(p), nil
}

// mark writes a testenv line into the log.
func (l *logSink) mark(s string) {
	l.Write([]byte(time.Now().Format("15:04:05.000 ") + s + "\n"))
}

func (l *logSink) resetTail() {
	l.mu.Lock()
	l.tail = l.tail[:0]
	l.mu.Unlock()
}

func (l *logSink) tailLines(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return lastLinesOf(l.tail, n)
}

// lastLinesOf is the last n lines of data, without trailing newlines.
func lastLinesOf(data []byte, n int) string {
	t := bytes.TrimRight(data, "\n")
	i := len(t)
	for ; n > 0 && i > 0; n-- {
		i = bytes.LastIndexByte(t[:i], '\n')
		if i < 0 {
			i = 0
			break
		}
	}
	return string(bytes.TrimLeft(t[i:], "\n"))
}

func (l *logSink) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
