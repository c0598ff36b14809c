package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/rest"
)

// kubectl's default filters: local hosts only, every path but exec and
// attach, every method.
const (
	defaultAcceptHosts   = `^localhost$,^127\.0\.0\.1$,^\[::1\]$`
	defaultAcceptPaths   = `^.*`
	defaultRejectPaths   = `^/api/.*/pods/.*/exec,^/api/.*/pods/.*/attach`
	defaultRejectMethods = `^$`
)

type options struct {
	port                                                 int
	address, unixSocket, www, wwwPrefix, apiPrefix       string
	acceptHosts, acceptPaths, rejectPaths, rejectMethods string
	disableFilter, appendServerPath                      bool
	keepalive                                            time.Duration
	errOut                                               io.Writer // where refusals and proxy errors are logged
}

// NewCommand returns "kdyn proxy".
func NewCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "proxy [--port=PORT] [--www=static-dir] [--www-prefix=prefix] [--api-prefix=prefix]",
		Short: "Run a proxy to the Kubernetes API server",
		Long: `Serve the API server on a local address, as kubectl proxy does: requests are
sent on with the kubeconfig's credentials, so local tools (curl, a browser)
reach the API without them. Only requests for local host names are
accepted, and exec and attach are refused, unless the filters say
otherwise; --disable-filter turns them off (dangerous on a shared address).
--www serves a directory of static files below --www-prefix.

The first line printed is "Starting to serve on ADDRESS:PORT" (with
--port=0, the port the system chose).`,
		Example: `  # The API on localhost:8001
  kdyn proxy

  # On a port the system chooses, with the API below /custom/
  kdyn proxy --port=0 --api-prefix=/custom/

  # Over a Unix socket
  kdyn proxy --unix-socket=/tmp/kdyn.sock`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.IntVarP(&o.port, "port", "p", 8001, "The port to serve on; 0 picks a free one.")
	fl.StringVar(&o.address, "address", "127.0.0.1", "The IP address to serve on.")
	fl.StringVarP(&o.unixSocket, "unix-socket", "u", "", "Serve on this Unix socket instead of a port.")
	fl.StringVarP(&o.www, "www", "w", "", "Also serve the static files of this directory, below --www-prefix.")
	fl.StringVarP(&o.wwwPrefix, "www-prefix", "P", "/static/", "The path the files of --www are served below.")
	fl.StringVar(&o.apiPrefix, "api-prefix", "/", "The path the API is served below.")
	fl.StringVar(&o.acceptHosts, "accept-hosts", defaultAcceptHosts, "Regular expressions (comma-separated) of the host names accepted.")
	fl.StringVar(&o.acceptPaths, "accept-paths", defaultAcceptPaths, "Regular expressions (comma-separated) of the paths accepted.")
	fl.StringVar(&o.rejectPaths, "reject-paths", defaultRejectPaths, "Regular expressions (comma-separated) of the paths refused (before --accept-paths).")
	fl.StringVar(&o.rejectMethods, "reject-methods", defaultRejectMethods, "Regular expressions (comma-separated) of the HTTP methods refused.")
	fl.BoolVar(&o.disableFilter, "disable-filter", false, "Accept every request (dangerous: exposes exec and any host name).")
	fl.BoolVar(&o.appendServerPath, "append-server-path", false, "Keep the path of the kubeconfig's server URL in front of each request's path.")
	fl.DurationVar(&o.keepalive, "keepalive", 0, "The keep-alive period of the connections to the server (0: the default).")
	return cmd
}

func (o *options) run(ctx context.Context, f *cli.Factory) error {
	cfg, err := f.RESTConfig()
	if err != nil {
		return err
	}
	o.errOut = f.Streams.ErrOut
	h, err := o.handler(cfg)
	if err != nil {
		return err
	}
	var l net.Listener
	if o.unixSocket != "" {
		l, err = net.Listen("unix", o.unixSocket)
	} else {
		l, err = net.Listen("tcp", net.JoinHostPort(o.address, fmt.Sprint(o.port)))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(f.Streams.Out, "Starting to serve on %s\n", l.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// handler is the local server: the API below --api-prefix, filtered, and
// the static files below --www-prefix.
func (o *options) handler(cfg *rest.Config) (http.Handler, error) {
	target, err := url.Parse(strings.TrimSuffix(cfg.Host, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("the server URL %q: %w", cfg.Host, err)
	}
	c := *cfg
	if o.keepalive > 0 {
		c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: o.keepalive}).DialContext
	}
	transport, err := rest.TransportFor(&c)
	if err != nil {
		return nil, err
	}
	proxy := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.Host = target.Scheme, target.Host, target.Host
			if o.appendServerPath {
				r.Out.URL.Path = path.Join(target.Path, r.In.URL.Path)
			}
		},
		FlushInterval: -1, // watches stream as they arrive
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			fmt.Fprintf(o.errOut, "proxy error: %s %s: %v\n", r.Method, r.URL.Path, err)
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
	}
	var api http.Handler = proxy
	if !o.disableFilter {
		filter, err := newFilter(o)
		if err != nil {
			return nil, err
		}
		api = filter.wrap(api, o.errOut)
	}
	prefix := o.apiPrefix
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if !strings.HasPrefix(prefix, "/api") {
		api = stripLeaveSlash(prefix, api)
	}
	mux := http.NewServeMux()
	mux.Handle(prefix, api)
	if o.www != "" {
		mux.Handle(o.wwwPrefix, http.StripPrefix(o.wwwPrefix, http.FileServer(http.Dir(o.www))))
	}
	return mux, nil
}

// stripLeaveSlash removes prefix from the path, keeping its leading slash.
func stripLeaveSlash(prefix string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, prefix)
		if len(p) >= len(r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = p
		r2.URL.RawPath = ""
		h.ServeHTTP(w, r2)
	})
}

// filter is kubectl proxy's request filter.
type filter struct {
	acceptHosts, acceptPaths, rejectPaths, rejectMethods []*regexp.Regexp
}

func newFilter(o *options) (*filter, error) {
	var f filter
	for _, s := range []struct {
		flag, value string
		into        *[]*regexp.Regexp
	}{
		{"accept-hosts", o.acceptHosts, &f.acceptHosts},
		{"accept-paths", o.acceptPaths, &f.acceptPaths},
		{"reject-paths", o.rejectPaths, &f.rejectPaths},
		{"reject-methods", o.rejectMethods, &f.rejectMethods},
	} {
		for _, expr := range strings.Split(s.value, ",") {
			if expr == "" {
				continue
			}
			re, err := regexp.Compile(expr)
			if err != nil {
				return nil, cli.Usagef("--%s: %v", s.flag, err)
			}
			*s.into = append(*s.into, re)
		}
	}
	return &f, nil
}

func matches(s string, res []*regexp.Regexp) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// accept is kubectl's rule: a rejected path or method never passes; else
// the path and the host must both be accepted.
func (f *filter) accept(method, path, host string) bool {
	if matches(path, f.rejectPaths) || matches(method, f.rejectMethods) {
		return false
	}
	return matches(path, f.acceptPaths) && matches(host, f.acceptHosts)
}

func (f *filter) wrap(h http.Handler, log io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		if f.accept(r.Method, r.URL.Path, host) {
			h.ServeHTTP(w, r)
			return
		}
		fmt.Fprintf(log, "Filter rejected: %s %s (host %q)\n", r.Method, r.URL.Path, r.Host)
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("<h3>Unauthorized</h3>"))
	})
}
