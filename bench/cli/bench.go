package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// Options configures Run.
type Options struct {
	// Objects is the size of the main list (10,000); Small the size of the
	// second namespace used to show that -o jsonl's memory is flat (2,000).
	Objects, Small int
	// Reps is how many times each command runs; medians are reported.
	Reps int
	// Workers is the number of parallel creates while seeding.
	Workers int
	// ApplyObjects ConfigMaps in ApplyFiles files are applied by each tool
	// (see applyBench); 1,000 in 50 by default, a negative ApplyObjects
	// skips it.
	ApplyObjects, ApplyFiles int
	// Bin, when its fields are set, are prebuilt binaries to use.
	Bin Binaries
	// WorkDir holds the binaries, caches and outputs; empty means a new
	// temporary directory, removed at the end unless Keep.
	WorkDir string
	Keep    bool
	// ProfileDir, when set, receives CPU and allocation profiles of kdyn
	// (a profiling build, see BuildProfilingKdyn), kubectl's own --profile
	// output and GODEBUG=gctrace=1 logs, with `go tool pprof -top` texts.
	ProfileDir string
	// QuietIdle and QuietWait: before each repetition, wait up to
	// QuietWait for the machine's CPU to be at least QuietIdle idle over a
	// second (the machine is shared). Zero QuietWait means no wait.
	QuietIdle float64
	QuietWait time.Duration
	// Log receives progress; Verbose adds a line per execution.
	Log     io.Writer
	Verbose bool
}

// Namespaces of the seeded objects.
const (
	Namespace      = "clibench"
	SmallNamespace = "clibench-small"
)

// Tools in the order of the report's columns.
const (
	Kdyn    = "kdyn"
	Kubectl = "kubectl"
)

// Results is what Run measured.
type Results struct {
	Objects, Small, Reps int
	Seed                 time.Duration
	SizeKdyn, SizeKubect int64
	// Stats are keyed tool + "/" + case (see the case names in Run).
	Stats map[string]Stats
	// FloorFull is one plain GET of the whole list, FloorPaged the same
	// list in pages of 500 (what both CLIs request); ListBytes its size.
	FloorFull, FloorPaged Stats
	ListBytes             int
	// FloorTable is the server's Table of the list in pages of 500, as
	// both CLIs request it for the default output; TableBytes its size.
	FloorTable Stats
	TableBytes int
	// FloorIdentity is FloorPaged without compression (both CLIs, like Go's
	// transport, ask for gzip; the server then compresses every page).
	FloorIdentity Stats
	// Requests are keyed like Stats, from -v 6 logs of extra runs.
	Requests map[string]Requests
	// Output comparisons. JSONDiffManaged compares the two with
	// --show-managed-fields.
	JSONDiff, JSONDiffManaged, TableDiff, APIResourcesDiff Diff
	JSONLLines                                             int
	// EventsDiffs compare `events` over the fixed Events of
	// EventsNamespace, byte for byte.
	EventsDiffs []CommandDiff
	// LauncherRSS is the peak RSS measured for /bin/true: the floor of the
	// method (the launcher's own RSS is folded into its child's).
	LauncherRSS int64
	// Load: the load average when measuring started and ended, and the
	// idle fraction of the machine's CPU seen before each repetition.
	LoadStart, LoadEnd string
	IdleBefore         []float64
	// Profiles lists the files written under Options.ProfileDir.
	Profiles []string
	// ApplyObjects and ApplyFiles: the apply cases' size (0: not run).
	ApplyObjects, ApplyFiles int
}

func (o *Options) defaults() {
	if o.Objects <= 0 {
		o.Objects = 10000
	}
	if o.Small <= 0 {
		o.Small = o.Objects / 5
	}
	if o.Reps <= 0 {
		o.Reps = 5
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.ApplyObjects == 0 {
		o.ApplyObjects = 1000
	}
	if o.ApplyFiles <= 0 {
		o.ApplyFiles = 50
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

type bench struct {
	opts    Options
	res     *Results
	r       *runner
	bin     Binaries
	kubecfg string
	work    string
	devnull *os.File
	cacheN  int
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.opts.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// Run builds the binaries, starts a control plane, seeds it, measures and
// compares, and stops the control plane.
func Run(ctx context.Context, opts Options) (res *Results, err error) {
	opts.defaults()
	b := &bench{opts: opts, res: &Results{
		Objects: opts.Objects, Small: opts.Small, Reps: opts.Reps,
		Stats: map[string]Stats{}, Requests: map[string]Requests{},
	}}
	if b.work = opts.WorkDir; b.work == "" {
		if b.work, err = os.MkdirTemp("", "clibench-"); err != nil {
			return nil, err
		}
		if !opts.Keep {
			defer os.RemoveAll(b.work)
		}
	} else if err := os.MkdirAll(b.work, 0o755); err != nil {
		return nil, err
	}
	home := filepath.Join(b.work, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	tmp := filepath.Join(b.work, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	launcher, err := BuildLauncher(ctx, b.work)
	if err != nil {
		return nil, err
	}
	b.r = newRunner(launcher, tmp, home)
	if opts.Verbose {
		b.r.verbose = opts.Log
	}
	if b.devnull, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
		return nil, err
	}
	defer b.devnull.Close()

	b.bin = opts.Bin
	if b.bin.Kdyn == "" || b.bin.Kubectl == "" {
		b.logf("building kdyn and kubectl (go build %q)", BuildFlags)
		built, err := BuildBinaries(ctx, b.work, b.logf)
		if err != nil {
			return nil, err
		}
		if b.bin.Kdyn == "" {
			b.bin.Kdyn = built.Kdyn
		}
		if b.bin.Kubectl == "" {
			b.bin.Kubectl = built.Kubectl
		}
	}
	if b.res.SizeKdyn, err = fileSize(b.bin.Kdyn); err != nil {
		return nil, err
	}
	if b.res.SizeKubect, err = fileSize(b.bin.Kubectl); err != nil {
		return nil, err
	}

	b.logf("starting the control plane")
	env, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := env.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	b.kubecfg = env.KubeconfigPath(testenv.Admin)
	if s, _, err := b.r.exec(ctx, b.devnull, "/bin/true"); err == nil {
		b.res.LauncherRSS = s.MaxRSS
	}

	if err := b.seed(ctx, env); err != nil {
		return nil, err
	}
	if err := b.floor(ctx, env); err != nil {
		return nil, err
	}
	if err := b.measure(ctx); err != nil {
		return nil, err
	}
	if err := b.countRequests(ctx); err != nil {
		return nil, err
	}
	if err := b.compare(ctx); err != nil {
		return nil, err
	}
	if err := b.applyBench(ctx, env); err != nil {
		return nil, err
	}
	if opts.ProfileDir != "" {
		if err := b.profile(ctx); err != nil {
			return nil, err
		}
	}
	return b.res, nil
}

func fileSize(p string) (int64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (b *bench) seed(ctx context.Context, env *testenv.Env) error {
	cfg := env.RESTConfig(testenv.Admin)
	cfg.QPS = -1 // no client-side rate limit
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	start := time.Now()
	for _, s := range []struct {
		ns string
		n  int
	}{{Namespace, b.opts.Objects}, {SmallNamespace, b.opts.Small}} {
		b.logf("seeding %d ConfigMaps in %s (%d parallel creates)", s.n, s.ns, b.opts.Workers)
		if err := Seed(ctx, client, s.ns, s.n, b.opts.Workers, func(done int) {
			if b.opts.Verbose {
				b.logf("  %d created", done)
			}
		}); err != nil {
			return err
		}
	}
	b.res.Seed = time.Since(start)
	b.logf("seeded in %s", b.res.Seed.Round(100*time.Millisecond))
	return SeedEvents(ctx, client, EventsNamespace, time.Now())
}

// floor times the server sending the list: one plain GET, and the same in
// pages of 500, with a warm connection, reading every byte.
func (b *bench) floor(ctx context.Context, env *testenv.Env) error {
	hc := env.HTTPClient(testenv.Admin)
	base := env.Host() + "/api/v1/namespaces/" + Namespace + "/configmaps"
	accept, identity := "application/json", false
	get := func(u string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", accept)
		if identity { // an explicit Accept-Encoding turns off Go's transparent gzip
			req.Header.Set("Accept-Encoding", "identity")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s: %s", u, resp.Status, clip(string(body), 300))
		}
		return body, nil
	}
	paged := func() (int, error) {
		total, cont := 0, ""
		for {
			u := base + "?limit=500"
			if cont != "" {
				u += "&continue=" + urlQueryEscape(cont)
			}
			body, err := get(u)
			if err != nil {
				return 0, err
			}
			total += len(body)
			if cont = continueToken(body); cont == "" {
				return total, nil
			}
		}
	}
	body, err := get(base) // warm the connection; check the count
	if err != nil {
		return err
	}
	if n := bytes.Count(body, []byte(`{"metadata":{"name":"cm-`)); n != b.opts.Objects {
		b.logf("note: counted %d items in the list by a rough byte search (expected %d)", n, b.opts.Objects)
	}
	b.res.ListBytes = len(body)
	var full, pg []Sample
	for range max(5, 2*b.opts.Reps) {
		start := time.Now()
		if _, err := get(base); err != nil {
			return err
		}
		full = append(full, Sample{Wall: time.Since(start)})
		start = time.Now()
		if _, err := paged(); err != nil {
			return err
		}
		pg = append(pg, Sample{Wall: time.Since(start)})
	}
	b.res.FloorFull, b.res.FloorPaged = summarize(full), summarize(pg)
	identity = true
	var id []Sample
	for range max(5, 2*b.opts.Reps) {
		start := time.Now()
		if _, err := paged(); err != nil {
			return err
		}
		id = append(id, Sample{Wall: time.Since(start)})
	}
	identity = false
	b.res.FloorIdentity = summarize(id)
	// The same pages as a Table, with the Accept header both CLIs send.
	accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	var tb []Sample
	for range max(5, 2*b.opts.Reps) {
		start := time.Now()
		n, err := paged()
		if err != nil {
			return err
		}
		tb = append(tb, Sample{Wall: time.Since(start)})
		b.res.TableBytes = n
	}
	b.res.FloorTable = summarize(tb)
	b.logf("floor: one GET %.0f ms, paged (500) %.0f ms (%.0f ms without gzip), %.1f MB; Table paged %.0f ms, %.1f MB",
		ms(b.res.FloorFull.Wall), ms(b.res.FloorPaged.Wall), ms(b.res.FloorIdentity.Wall), mb(int64(len(body))), ms(b.res.FloorTable.Wall), mb(int64(b.res.TableBytes)))
	return nil
}

// continueToken finds metadata.continue in a list's first bytes (the
// server writes metadata before items).
func continueToken(body []byte) string {
	head := body
	if i := bytes.Index(body, []byte(`"items":`)); i >= 0 {
		head = body[:i]
	}
	const key = `"continue":"`
	i := bytes.Index(head, []byte(key))
	if i < 0 {
		return ""
	}
	rest := head[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

func urlQueryEscape(s string) string {
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// newCache returns a fresh, empty --cache-dir.
func (b *bench) newCache(tool string) string {
	b.cacheN++
	d := filepath.Join(b.work, "cache", tool+"-"+strconv.Itoa(b.cacheN))
	os.MkdirAll(d, 0o755)
	return d
}

func (b *bench) binary(tool string) string {
	if tool == Kdyn {
		return b.bin.Kdyn
	}
	return b.bin.Kubectl
}

// args are the global flags plus the command.
func (b *bench) args(cache string, cmd ...string) []string {
	return append([]string{"--kubeconfig", b.kubecfg, "--cache-dir", cache}, cmd...)
}

func (b *bench) add(key string, s Sample, all map[string][]Sample) { all[key] = append(all[key], s) }

// The measured cases. Each runs with a fresh --cache-dir (cold) and then
// again with the same one (warm); api-resources also with --cached.
var (
	getJSON      = []string{"get", "configmaps", "-n", Namespace, "-o", "json"}
	getTable     = []string{"get", "configmaps", "-n", Namespace}
	apiResources = []string{"api-resources"}
	apiCached    = []string{"api-resources", "--cached"}
	jsonlBig     = []string{"get", "configmaps", "-n", Namespace, "-o", "jsonl"}
	jsonlSmall   = []string{"get", "configmaps", "-n", SmallNamespace, "-o", "jsonl"}
)

func (b *bench) measure(ctx context.Context) error {
	all := map[string][]Sample{}
	tools := []string{Kdyn, Kubectl}
	// One warm cache per tool for the jsonl runs.
	jsonlCache := b.newCache(Kdyn)
	if _, _, err := b.r.exec(ctx, b.devnull, b.bin.Kdyn, b.args(jsonlCache, apiResources...)...); err != nil {
		return err
	}
	b.res.LoadStart = loadAvg()
	defer func() { b.res.LoadEnd = loadAvg() }()
	for rep := range b.opts.Reps {
		idle := -1.0
		if b.opts.QuietWait > 0 {
			var err error
			if idle, err = waitQuiet(ctx, b.opts.QuietIdle, b.opts.QuietWait); err != nil {
				return err
			}
			b.res.IdleBefore = append(b.res.IdleBefore, idle)
		}
		b.logf("repetition %d/%d (machine %.0f%% idle, load %s)", rep+1, b.opts.Reps, 100*idle, loadAvg())
		order := tools
		if rep%2 == 1 { // alternate which tool goes first
			order = []string{Kubectl, Kdyn}
		}
		for _, c := range []struct {
			name   string
			cmd    []string
			cached []string // run a third time with these args, warm
		}{
			{"get-json", getJSON, nil},
			{"get-table", getTable, nil},
			{"api-resources", apiResources, apiCached},
		} {
			for _, tool := range order {
				cache := b.newCache(tool)
				bin := b.binary(tool)
				s, _, err := b.r.exec(ctx, b.devnull, bin, b.args(cache, c.cmd...)...)
				if err != nil {
					return err
				}
				b.add(tool+"/"+c.name+"-cold", s, all)
				if s, _, err = b.r.exec(ctx, b.devnull, bin, b.args(cache, c.cmd...)...); err != nil {
					return err
				}
				b.add(tool+"/"+c.name+"-warm", s, all)
				if c.cached != nil {
					if s, _, err = b.r.exec(ctx, b.devnull, bin, b.args(cache, c.cached...)...); err != nil {
						return err
					}
					b.add(tool+"/"+c.name+"-cached", s, all)
				}
			}
		}
		for _, c := range []struct {
			name string
			cmd  []string
		}{{"jsonl-big", jsonlBig}, {"jsonl-small", jsonlSmall}} {
			s, _, err := b.r.exec(ctx, b.devnull, b.bin.Kdyn, b.args(jsonlCache, c.cmd...)...)
			if err != nil {
				return err
			}
			b.add(Kdyn+"/"+c.name, s, all)
		}
	}
	for k, v := range all {
		b.res.Stats[k] = summarize(v)
	}
	return nil
}

// countRequests runs the commands again with -v 6 (untimed) and counts the
// requests in the logs.
func (b *bench) countRequests(ctx context.Context) error {
	b.logf("counting requests (-v 6)")
	for _, tool := range []string{Kdyn, Kubectl} {
		bin := b.binary(tool)
		for _, c := range []struct {
			name string
			cmd  []string
		}{{"api-resources", apiResources}, {"get-json", getJSON}, {"get-table", getTable}} {
			cache := b.newCache(tool)
			steps := []struct {
				suffix string
				cmd    []string
			}{{"-cold", c.cmd}, {"-warm", c.cmd}}
			if c.name == "api-resources" {
				steps = append(steps, struct {
					suffix string
					cmd    []string
				}{"-cached", apiCached})
			}
			for _, st := range steps {
				_, stderr, err := b.r.exec(ctx, b.devnull, bin, b.args(cache, append(st.cmd, "-v", "6")...)...)
				if err != nil {
					return err
				}
				b.res.Requests[tool+"/"+c.name+st.suffix] = CountRequests(stderr)
			}
		}
	}
	return nil
}

// compare runs each command once more per tool (warm caches) with stdout
// to a file and compares the outputs.
func (b *bench) compare(ctx context.Context) error {
	b.logf("comparing outputs")
	outDir := filepath.Join(b.work, "out")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	caches := map[string]string{Kdyn: b.newCache(Kdyn), Kubectl: b.newCache(Kubectl)}
	capture := func(tool, name string, cmd []string) ([]byte, error) {
		p := filepath.Join(outDir, tool+"-"+name)
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		_, _, err = b.r.exec(ctx, f, b.binary(tool), b.args(caches[tool], cmd...)...)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		return os.ReadFile(p)
	}
	pair := func(name string, cmd []string) (kd, kc []byte, err error) {
		if kd, err = capture(Kdyn, name, cmd); err != nil {
			return nil, nil, err
		}
		if kc, err = capture(Kubectl, name, cmd); err != nil {
			return nil, nil, err
		}
		return kd, kc, nil
	}
	kd, kc, err := pair("get.json", getJSON)
	if err != nil {
		return err
	}
	b.res.JSONDiff = CompareBytes(kd, kc)
	kd, kc, err = pair("get.json.managed", append(slices.Clone(getJSON), "--show-managed-fields=true"))
	if err != nil {
		return err
	}
	b.res.JSONDiffManaged = CompareBytes(kd, kc)
	if kd, kc, err = pair("get.table", getTable); err != nil {
		return err
	}
	b.res.TableDiff = CompareTables(kd, kc)
	if kd, kc, err = pair("api-resources", apiResources); err != nil {
		return err
	}
	b.res.APIResourcesDiff = CompareText(kd, kc)
	for i, cmd := range eventsCompared {
		kd, kc, err := pair(fmt.Sprintf("events.%d", i), cmd)
		if err != nil {
			return err
		}
		b.res.EventsDiffs = append(b.res.EventsDiffs, CommandDiff{Args: cmd, Diff: CompareBytes(kd, kc)})
	}
	jl, err := capture(Kdyn, "get.jsonl", jsonlBig)
	if err != nil {
		return err
	}
	b.res.JSONLLines = bytes.Count(jl, []byte("\n"))
	if b.opts.Keep || b.opts.WorkDir != "" {
		b.logf("outputs kept in %s", outDir)
	}
	return nil
}
