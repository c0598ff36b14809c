package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/restmapper"
)

// IOStreams are the command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// globalFlags are kubectl's global flags.
type globalFlags struct {
	kubeconfig         string
	context            string
	cluster            string
	user               string
	namespace          string
	server             string
	token              string
	certAuthority      string
	clientCert         string
	clientKey          string
	insecure           bool
	tlsServerName      string
	as                 string
	asGroups           []string
	asUID              string
	requestTimeout     string
	cacheDir           string
	verbosity          int
	qps                float32
	burst              int
	refreshDiscovery   bool
	exitCodes          bool
	disableCompression bool
	insecureSet        bool
}

// factory builds, once each and on first use, what commands need:
// kubeconfig → rest.Config → disk-cached discovery → mapper → clients.
type factory struct {
	flags   *globalFlags
	streams IOStreams

	once     sync.Once
	err      error
	result   *kubeconfig.Result
	cfg      *rest.Config
	log      *zap.Logger
	rc       *rest.Client
	dc       *discovery.Client
	mapper   *restmapper.Mapper
	client   *dynamic.DynamicClient
	warnOnce sync.Map
	stale    *staleDiscovery
}

func newFactory(flags *globalFlags, streams IOStreams) *factory {
	return &factory{flags: flags, streams: streams}
}

// logger returns the logger for -v: debug-level request logs at 6 and
// above, otherwise warnings only. Logs go to stderr.
func (f *factory) logger() *zap.Logger {
	if f.log != nil {
		return f.log
	}
	level := zapcore.WarnLevel
	if f.flags.verbosity >= 6 {
		level = zapcore.DebugLevel
	} else if f.flags.verbosity > 0 {
		level = zapcore.InfoLevel
	}
	enc := zap.NewDevelopmentEncoderConfig()
	enc.TimeKey = ""
	enc.CallerKey = ""
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(zapcore.AddSync(f.streams.ErrOut)), level)
	f.log = zap.New(core)
	return f.log
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
		return 0, fmt.Errorf("invalid --request-timeout %q: use a duration such as 30s or 2m, or a number of seconds", s)
	}
	return d, nil
}

func (f *factory) overrides() (kubeconfig.Overrides, error) {
	fl := f.flags
	timeout, err := parseRequestTimeout(fl.requestTimeout)
	if err != nil {
		return kubeconfig.Overrides{}, err
	}
	o := kubeconfig.Overrides{
		Context: fl.context, Cluster: fl.cluster, User: fl.user, Namespace: fl.namespace,
		Server: fl.server, TLSServerName: fl.tlsServerName, CertificateAuthority: fl.certAuthority,
		Token: fl.token, ClientCertificate: fl.clientCert, ClientKey: fl.clientKey,
		Impersonate: fl.as, ImpersonateUID: fl.asUID, ImpersonateGroups: fl.asGroups,
		Timeout: timeout,
	}
	if fl.insecureSet {
		v := fl.insecure
		o.InsecureSkipTLSVerify = &v
	}
	return o, nil
}

func (f *factory) loadingRules() *kubeconfig.LoadingRules {
	rules := kubeconfig.NewDefaultLoadingRules()
	if f.flags.kubeconfig != "" {
		rules.ExplicitPath = f.flags.kubeconfig
	}
	return rules
}

func (f *factory) init() error {
	f.once.Do(func() {
		o, err := f.overrides()
		if err != nil {
			f.err = err
			return
		}
		res, err := kubeconfig.Resolve(f.loadingRules(), o)
		if err != nil {
			f.err = err
			return
		}
		f.result = res
		cfg := res.Config
		cfg.Logger = f.logger()
		cfg.LogVerbosity = f.flags.verbosity
		if f.flags.qps != 0 {
			cfg.QPS = f.flags.qps
		}
		if f.flags.burst != 0 {
			cfg.Burst = f.flags.burst
		}
		cfg.DisableCompression = cfg.DisableCompression || f.flags.disableCompression
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
			fmt.Fprintf(f.streams.ErrOut, "Warning: %s\n", text)
		}))
		f.cfg = cfg
		rc, err := rest.NewForConfig(cfg)
		if err != nil {
			f.err = err
			return
		}
		f.rc = rc
		f.client = dynamic.New(rc)
	})
	return f.err
}

// restConfig returns the resolved *rest.Config.
func (f *factory) restConfig() (*rest.Config, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.cfg, nil
}

// namespace returns the namespace to use and whether it was given with -n.
func (f *factory) namespace() (string, bool, error) {
	if err := f.init(); err != nil {
		return "", false, err
	}
	return f.result.Namespace, f.flags.namespace != "", nil
}

func (f *factory) restClient() (*rest.Client, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.rc, nil
}

func (f *factory) dynamicClient() (*dynamic.DynamicClient, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	return f.client, nil
}

// cacheDir returns the kdyn cache root (--cache-dir, default
// ~/.kube/cache/kdyn).
func (f *factory) cacheDir() string {
	if f.flags.cacheDir != "" {
		return f.flags.cacheDir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".kube", "cache", "kdyn")
}

// discovery returns the disk-cached discovery client.
func (f *factory) discovery() (*discovery.Client, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	if f.dc != nil {
		return f.dc, nil
	}
	dir := ""
	if root := f.cacheDir(); root != "" {
		dir = filepath.Join(root, "discovery", discovery.HostDirName(f.rc.Base().Host+strings.TrimSuffix(f.rc.Base().Path, "/")))
	}
	dc, err := discovery.New(f.rc, discovery.Options{CacheDir: dir, Logger: f.logger()})
	if err != nil {
		return nil, err
	}
	if f.flags.refreshDiscovery {
		dc.Invalidate()
	}
	f.dc = dc
	return dc, nil
}

// restMapper returns the self-refreshing mapper over the disk-cached
// discovery; short-name warnings go to stderr once each.
func (f *factory) restMapper() (*restmapper.Mapper, error) {
	if f.mapper != nil {
		return f.mapper, nil
	}
	dc, err := f.discovery()
	if err != nil {
		return nil, err
	}
	m, err := restmapper.New(dc, restmapper.Options{Logger: f.logger(), Warn: func(msg string) {
		if _, dup := f.warnOnce.LoadOrStore(msg, true); !dup {
			fmt.Fprintf(f.streams.ErrOut, "Warning: %s\n", msg)
		}
	}})
	if err != nil {
		return nil, err
	}
	f.mapper = m
	return m, nil
}

// resolve parses resource arguments with the mapper.
func (f *factory) resolve(ctx context.Context, args []string) ([]restmapper.Match, error) {
	m, err := f.restMapper()
	if err != nil {
		return nil, err
	}
	return m.ResolveArgs(ctx, args)
}
