package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/klog/v2/textlogger"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/restmapper"
)

// IOStreams are the command's standard streams.
type IOStreams struct {
	In     io.Reader // standard input: manifests (-f -), patches, editors
	Out    io.Writer // standard output: what the command prints
	ErrOut io.Writer // standard error: errors, warnings, -v logs
}

// GlobalFlags are kubectl's global flags, registered by AddFlags; each
// field holds the flag named beside it.
type GlobalFlags struct {
	Kubeconfig            string   // --kubeconfig
	Context               string   // --context
	Cluster               string   // --cluster
	User                  string   // --user
	Namespace             string   // -n, --namespace
	Server                string   // -s, --server
	Token                 string   // --token
	CertificateAuthority  string   // --certificate-authority
	ClientCertificate     string   // --client-certificate
	ClientKey             string   // --client-key
	InsecureSkipTLSVerify bool     // --insecure-skip-tls-verify
	TLSServerName         string   // --tls-server-name
	As                    string   // --as
	AsGroups              []string // --as-group
	AsUID                 string   // --as-uid
	RequestTimeout        string   // --request-timeout
	CacheDir              string   // --cache-dir
	Verbosity             int      // -v
	QPS                   float32  // --qps
	Burst                 int      // --burst
	RefreshDiscovery      bool     // --refresh-discovery
	ExitCodes             bool     // --exit-codes
	WarningsAsErrors      bool     // --warnings-as-errors
	MatchServerVersion    bool     // --match-server-version
	DisableCompression    bool     // --disable-compression
	Kuberc                string   // --kuberc (read by the root command before parsing)
	// PluginPolicy is the kuberc file's credential plugin policy, which the
	// root command sets before any command runs.
	PluginPolicy rest.ExecPluginPolicy
	// InsecureSet reports whether --insecure-skip-tls-verify was given,
	// so that an explicit false overrides the kubeconfig; the root command
	// sets it before any command runs.
	InsecureSet bool
}

// AddFlags registers the global flags on pf (the root command's persistent
// flags).
func (fl *GlobalFlags) AddFlags(pf *pflag.FlagSet) {
	pf.StringVar(&fl.Kubeconfig, "kubeconfig", "", "Path to the kubeconfig file to use (only that file).")
	pf.StringVar(&fl.Context, "context", "", "The kubeconfig context to use.")
	pf.StringVar(&fl.Cluster, "cluster", "", "The kubeconfig cluster to use.")
	pf.StringVar(&fl.User, "user", "", "The kubeconfig user to use.")
	pf.StringVarP(&fl.Namespace, "namespace", "n", "", "The namespace scope for this request.")
	pf.StringVarP(&fl.Server, "server", "s", "", "The address and port of the Kubernetes API server.")
	pf.StringVar(&fl.Token, "token", "", "Bearer token for authentication to the API server.")
	pf.StringVar(&fl.CertificateAuthority, "certificate-authority", "", "Path to a cert file for the certificate authority.")
	pf.StringVar(&fl.ClientCertificate, "client-certificate", "", "Path to a client certificate file for TLS.")
	pf.StringVar(&fl.ClientKey, "client-key", "", "Path to a client key file for TLS.")
	pf.BoolVar(&fl.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "Do not check the server's certificate (insecure).")
	pf.StringVar(&fl.TLSServerName, "tls-server-name", "", "Server name to use for server certificate validation.")
	pf.StringVar(&fl.As, "as", "", "Username to impersonate for the operation.")
	pf.StringArrayVar(&fl.AsGroups, "as-group", nil, "Group to impersonate for the operation (repeatable).")
	pf.StringVar(&fl.AsUID, "as-uid", "", "UID to impersonate for the operation.")
	pf.StringVar(&fl.RequestTimeout, "request-timeout", "0", "How long to wait for a single request (e.g. 30s, 2m; 0 = no limit).")
	pf.StringVar(&fl.CacheDir, "cache-dir", "", "Cache directory (default ~/.kube/cache/kdyn).")
	pf.IntVarP(&fl.Verbosity, "v", "v", 0, "Log level: 6 URLs and status, 8 bodies, 9 a curl command line (secrets redacted).")
	pf.Float32Var(&fl.QPS, "qps", 0, "Client-side request rate limit (default 50; negative disables).")
	pf.IntVar(&fl.Burst, "burst", 0, "Client-side request burst (default 100).")
	pf.BoolVar(&fl.RefreshDiscovery, "refresh-discovery", false, "Ask the server again what it serves, ignoring the discovery cache.")
	pf.BoolVar(&fl.DisableCompression, "disable-compression", false, "Do not ask the server to compress responses (faster on fast networks).")
	pf.StringVar(&fl.Kuberc, "kuberc", "", "Path to kubectl's preferences file (kuberc) to use; KUBERC=off turns preferences off (default ~/.kube/kuberc).")
	pf.BoolVar(&fl.MatchServerVersion, "match-server-version", false, "Require the server to run the Kubernetes minor release kdyn is built with.")
	pf.BoolVar(&fl.ExitCodes, "exit-codes", false, "Exit with a code that names the failure (see 'kdyn help exit-codes').")
	pf.BoolVar(&fl.WarningsAsErrors, "warnings-as-errors", false, "Treat warnings received from the server as errors and exit with a non-zero exit code.")
}

// Factory builds, once each and on first use, what commands need:
// kubeconfig → rest.Config → disk-cached discovery → mapper → clients.
// One Factory serves one command line. Its getters are not safe for
// concurrent first use (commands call them before they start goroutines);
// the clients they return are safe for concurrent use.
type Factory struct {
	Flags   *GlobalFlags // the global flags, as parsed
	Streams IOStreams    // the command's streams

	once     sync.Once
	err      error
	result   *kubeconfig.Result
	cfg      *rest.Config
	log      *logr.Logger
	rc       *rest.Client
	dc       *discovery.Client
	mapper   *restmapper.Mapper
	client   *dynamic.DynamicClient
	warnOnce sync.Map
	stale    *staleDiscovery
	warnings atomic.Int64 // the server's warnings printed
	stdinUse string       // what reads stdin; set by ClaimStdin
}

// NewFactory returns a Factory over flags, which the command line fills in
// before any getter is called. Nothing is loaded until then.
func NewFactory(flags *GlobalFlags, streams IOStreams) *Factory {
	return &Factory{Flags: flags, Streams: streams}
}

// Logger returns the logger the library packages are given, for -v: a
// logr.Logger writing klog's text format to stderr, as kubectl's -v does
// (`I1205 10:30:00.123456   12345 logging.go:61] "Response" verb="GET"
// url="..." status="200 OK" milliseconds=3`), so scripts that grep
// kubectl's request logs find kdyn's. By default it shows what the library
// logs at V(0) (warnings); from -v 1 also V(1) (its informational lines);
// from -v 6 everything: the requests (-v 6), their headers (-v 7) and
// bodies (-v 8), and curl command lines (-v 9).
func (f *Factory) Logger() logr.Logger {
	if f.log == nil {
		log := NewLogger(f.Streams.ErrOut, f.Flags.Verbosity)
		f.log = &log
	}
	return *f.log
}

// NewLogger returns a logger like Factory.Logger's, writing to w at
// verbosity (-v), for what runs before the command line is parsed.
func NewLogger(w io.Writer, verbosity int) logr.Logger {
	level := 0 // logr's V(0)
	if verbosity >= 6 {
		level = 127 // every V level
	} else if verbosity > 0 {
		level = 1
	}
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(level), textlogger.Output(w)))
}

func parseRequestTimeout(s string) (time.Duration, error) {
	if s == "" || s == "0" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		//lint:ignore ST1005 kubectl's words, capital and period included
		return 0, errors.New("Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)")
	}
	return d, nil
}

// RequestTimeout returns --request-timeout (0: no limit).
func (f *Factory) RequestTimeout() (time.Duration, error) {
	return parseRequestTimeout(f.Flags.RequestTimeout)
}

// WatchContext bounds a watch by --request-timeout, as kubectl's watches
// are: the watch ends then, without an error. stop releases the context.
func (f *Factory) WatchContext(ctx context.Context) (wctx context.Context, timeout time.Duration, stop context.CancelFunc, err error) {
	if timeout, err = f.RequestTimeout(); err != nil {
		return ctx, 0, func() {}, err
	}
	if timeout <= 0 {
		return ctx, 0, func() {}, nil
	}
	wctx, stop = context.WithTimeout(ctx, timeout)
	return wctx, timeout, stop, nil
}

func (f *Factory) overrides() (kubeconfig.Overrides, error) {
	fl := f.Flags
	timeout, err := parseRequestTimeout(fl.RequestTimeout)
	if err != nil {
		return kubeconfig.Overrides{}, err
	}
	o := kubeconfig.Overrides{
		Context: fl.Context, Cluster: fl.Cluster, User: fl.User, Namespace: fl.Namespace,
		Server: fl.Server, TLSServerName: fl.TLSServerName, CertificateAuthority: fl.CertificateAuthority,
		Token: fl.Token, ClientCertificate: fl.ClientCertificate, ClientKey: fl.ClientKey,
		Impersonate: fl.As, ImpersonateUID: fl.AsUID, ImpersonateGroups: fl.AsGroups,
		Timeout: timeout,
	}
	if fl.InsecureSet {
		v := fl.InsecureSkipTLSVerify
		o.InsecureSkipTLSVerify = &v
	}
	return o, nil
}

// LoadingRules are kubectl's kubeconfig loading rules, narrowed to the one
// file --kubeconfig names.
func (f *Factory) LoadingRules() *kubeconfig.LoadingRules {
	rules := kubeconfig.NewDefaultLoadingRules()
	if f.Flags.Kubeconfig != "" {
		rules.ExplicitPath = f.Flags.Kubeconfig
	}
	return rules
}

func (f *Factory) init() error {
	f.once.Do(func() {
		o, err := f.overrides()
		if err != nil {
			f.err = err
			return
		}
		res, err := kubeconfig.Resolve(f.LoadingRules(), o)
		if err != nil {
			f.err = err
			return
		}
		f.result = res
		cfg := res.Config
		if cfg.ExecProvider != nil {
			cfg.ExecProvider.PluginPolicy = f.Flags.PluginPolicy
			if f.stdinUse != "" {
				cfg.ExecProvider.StdinUnavailable = true
				cfg.ExecProvider.StdinUnavailableMessage = f.stdinUse
			}
		}
		cfg.Logger = f.Logger()
		cfg.LogVerbosity = f.Flags.Verbosity
		if f.Flags.QPS != 0 {
			cfg.QPS = f.Flags.QPS
		}
		if f.Flags.Burst != 0 {
			cfg.Burst = f.Flags.Burst
		}
		cfg.DisableCompression = cfg.DisableCompression || f.Flags.DisableCompression
		f.stale = &staleDiscovery{onHit: func() {
			if f.dc != nil {
				f.dc.MarkStale()
			}
		}}
		userWrap := cfg.WrapTransport
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			if userWrap != nil {
				rt = userWrap(rt)
			}
			f.stale.next = rt
			return f.stale
		}
		cfg.WarningHandler = rest.NewDeduplicatingWarningHandler(rest.WarningHandlerFunc(func(_ int, _ string, text string) {
			f.warnings.Add(1)
			fmt.Fprintf(f.Streams.ErrOut, "Warning: %s\n", text)
		}))
		f.cfg = cfg
		rc, err := rest.NewForConfig(cfg)
		if err != nil {
			f.err = err
			return
		}
		f.rc = rc
		f.client = dynamic.New(rc)
		if f.Flags.MatchServerVersion {
			f.err = f.matchServerVersion()
		}
	})
	return f.err
}

// matchServerVersion checks, for --match-server-version, that the server
// runs the Kubernetes minor release whose API kdyn is built with (that of
// its k8s.io/apimachinery module).
func (f *Factory) matchServerVersion() error {
	want := KubernetesRelease
	ctx := context.Background()
	if d, err := f.RequestTimeout(); err == nil && d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	var info version.Info
	body, err := f.rc.Get().AbsPath("/version").Do(ctx).Raw()
	if err == nil {
		err = json.Unmarshal(body, &info)
	}
	if err != nil {
		return fmt.Errorf("--match-server-version: reading the server's version: %w", err)
	}
	if got := strings.TrimSuffix(info.Major, "+") + "." + strings.TrimSuffix(info.Minor, "+"); got != want {
		return fmt.Errorf("server version (%s) differs from the Kubernetes release kdyn is built with (%s)", info.GitVersion, want)
	}
	return nil
}

// KubernetesRelease is the Kubernetes minor release whose API kdyn is
// built with: that of its k8s.io/apimachinery module (v0.37.x); a test
// keeps the two in step.
const KubernetesRelease = "1.37"

// Warnings returns how many of the server's warnings the command printed
// (each different one once), for --warnings-as-errors.
func (f *Factory) Warnings() int64 { return f.warnings.Load() }

// ClaimStdin records that the command reads standard input itself (use
// says for what, as kubectl words it: "used by stdin resource manifest
// reader"), so that an exec credential plugin does not get it: an
// interactive-only plugin then fails naming use. Call it before the first
// client is built.
func (f *Factory) ClaimStdin(use string) {
	f.stdinUse = use
}

// RESTConfig returns the resolved *rest.Config.
func (f *Factory) RESTConfig() (*rest.Config, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.cfg, nil
}

// Namespace returns the namespace to use and whether it was given with -n.
func (f *Factory) Namespace() (string, bool, error) {
	if err := f.init(); err != nil {
		return "", false, err
	}
	return f.result.Namespace, f.Flags.Namespace != "", nil
}

// RESTClient returns the client for the resolved configuration, with the
// CLI's logger, warning printer and stale-discovery detector in its
// transport. Every other client shares its connections.
func (f *Factory) RESTClient() (*rest.Client, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.rc, nil
}

// DynamicClient returns the dynamic client over RESTClient, for reads
// (writes go through WriteClient).
func (f *Factory) DynamicClient() (*dynamic.DynamicClient, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.client, nil
}

// WriteClient returns the dynamic client for a command's writes: every
// Create, Update, Patch and Apply records manager as its field manager
// (dynamic.WithFieldManager; "" records none), and with DryRunServer every
// write is sent with dryRun=All (dynamic.WithDryRun). Reads are unchanged,
// and the connections are the factory client's.
func (f *Factory) WriteClient(manager string, dry DryRunMode) (dynamic.Interface, error) {
	c, err := f.DynamicClient()
	if err != nil {
		return nil, err
	}
	return decorateWrites(c, manager, dry), nil
}

// CacheDir returns the kdyn cache root (--cache-dir, default
// ~/.kube/cache/kdyn).
func (f *Factory) CacheDir() string {
	if f.Flags.CacheDir != "" {
		return f.Flags.CacheDir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".kube", "cache", "kdyn")
}

// Discovery returns the disk-cached discovery client.
func (f *Factory) Discovery() (*discovery.Client, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	if f.dc != nil {
		return f.dc, nil
	}
	dir := ""
	if root := f.CacheDir(); root != "" {
		dir = filepath.Join(root, "discovery", discovery.HostDirName(f.rc.Base().Host+strings.TrimSuffix(f.rc.Base().Path, "/")))
	}
	dc, err := discovery.New(f.rc, discovery.Options{CacheDir: dir, Logger: f.Logger()})
	if err != nil {
		return nil, err
	}
	if f.Flags.RefreshDiscovery {
		dc.Invalidate()
	}
	f.dc = dc
	return dc, nil
}

// RESTMapper returns the self-refreshing mapper over the disk-cached
// discovery; short-name warnings go to stderr once each.
func (f *Factory) RESTMapper() (*restmapper.Mapper, error) {
	if f.mapper != nil {
		return f.mapper, nil
	}
	dc, err := f.Discovery()
	if err != nil {
		return nil, err
	}
	m, err := restmapper.New(dc, restmapper.Options{Logger: f.Logger(), Warn: func(msg string) {
		if _, dup := f.warnOnce.LoadOrStore(msg, true); !dup {
			fmt.Fprintf(f.Streams.ErrOut, "Warning: %s\n", msg)
		}
	}})
	if err != nil {
		return nil, err
	}
	f.mapper = m
	return m, nil
}

// Resolve parses resource arguments with the mapper.
func (f *Factory) Resolve(ctx context.Context, args []string) ([]restmapper.Match, error) {
	m, err := f.RESTMapper()
	if err != nil {
		return nil, err
	}
	return m.ResolveArgs(ctx, args)
}

// QuietDynamicClient is the factory's client, on the same connections,
// without the server's warnings.
func (f *Factory) QuietDynamicClient() (*dynamic.DynamicClient, error) {
	return f.derivedClient(func(c *rest.Config) { c.WarningHandler = rest.NoWarnings{} })
}

// derivedClient is a dynamic client on the factory's connections, with a
// copy of its configuration that change alters.
func (f *Factory) derivedClient(change func(*rest.Config)) (*dynamic.DynamicClient, error) {
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	rc, err := f.RESTClient()
	if err != nil {
		return nil, err
	}
	c := *cfg
	change(&c)
	dc, err := rest.NewForConfigAndClient(&c, rc.HTTPClient())
	if err != nil {
		return nil, err
	}
	return dynamic.New(dc), nil
}
