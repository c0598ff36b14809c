package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
	"sigs.k8s.io/yaml/kyaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/rest"
)

// defaultPodRunningTimeout is --pod-running-timeout's default, kubectl's.
const defaultPodRunningTimeout = 20 * time.Second

// dumpFormats are the -o values dump takes, kubectl's, in the order its
// error lists them.
var dumpFormats = []string{"go-template", "go-template-file", "json", "jsonpath", "jsonpath-as-json", "jsonpath-file", "kyaml", "name", "template", "templatefile", "yaml"}

type dumpOptions struct {
	output      string
	template    cli.TemplateFlags
	showManaged bool
	dir         string
	namespaces  []string
	all         bool
	podTimeout  time.Duration
}

func newDumpCommand(f *cli.Factory) *cobra.Command {
	o := &dumpOptions{output: "json"}
	cmd := &cobra.Command{
		Use:   "dump",
		Short: "Dump relevant information for debugging and diagnosis",
		Long: `Write out what is needed to look into a cluster's problems: the nodes, and
for each namespace its events, replication controllers, services, daemon
sets, deployments, replica sets and pods, then the log of every container
(init containers first) of every pod.

Everything goes to standard output unless --output-directory names a
directory, which then receives one file per list (nodes.json,
NAMESPACE/pods.json, ...; the extension follows -o) and one per pod for
its logs (NAMESPACE/POD/logs.txt). The namespaces are kube-system and the
current one, those --namespaces lists, or all of them with
--all-namespaces. The files are readable by their owner only: logs may
hold secrets.`,
		Example: `  # Dump the cluster's state to standard output
  kdyn cluster-info dump

  # Dump it into the directory /path/to/cluster-state
  kdyn cluster-info dump --output-directory=/path/to/cluster-state

  # Dump every namespace to standard output
  kdyn cluster-info dump --all-namespaces

  # Dump two namespaces into a directory
  kdyn cluster-info dump --namespaces default,kube-system --output-directory=/path/to/cluster-state`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDump(cmd.Context(), f, o, cmd.Flags().Changed("output"), cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.output, "output", "o", o.output, "Output format, one of: json, yaml, kyaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file.")
	o.template.Register(fl)
	fl.BoolVar(&o.showManaged, "show-managed-fields", false, "Keep metadata.managedFields in json and yaml output.")
	fl.StringVar(&o.dir, "output-directory", "", "Directory to write the dump into, as a tree of files; empty or '-' writes to standard output.")
	fl.StringSliceVar(&o.namespaces, "namespaces", nil, "Namespaces to dump, separated by commas.")
	fl.BoolVarP(&o.all, "all-namespaces", "A", false, "Dump every namespace (--namespaces is then ignored).")
	fl.DurationVar(&o.podTimeout, "pod-running-timeout", defaultPodRunningTimeout, "Accepted for kubectl compatibility: a duration more than zero (like 5s, 2m or 3h); dump waits for no pod.")
	return cmd
}

// dumpPrinter prints the lists in the -o format, as kubectl's printer of
// typed lists does.
type dumpPrinter struct {
	format string           // json, yaml, kyaml, name or template
	tmpl   printers.Printer // the template printer (Begun once)
	target retargetWriter   // where tmpl writes: the current list's file
	strip  bool             // leave out items' managedFields (json and yaml)
	docs   int              // YAML documents printed, in every file
	ext    string           // the files' extension
}

// newDumpPrinter resolves -o (output; set: given on the command line) and
// --template as kubectl's print flags do: json, yaml, kyaml and name
// whatever their case, a template format, or kubectl's refusal.
func newDumpPrinter(o *dumpOptions, set bool) (*dumpPrinter, error) {
	format := o.output
	if !set && o.template.Template != "" {
		format = "go-template"
	}
	p := &dumpPrinter{strip: !o.showManaged, ext: ".txt"}
	switch o.output {
	case "json":
		p.ext = ".json"
	case "yaml":
		p.ext = ".yaml"
	}
	switch lower := strings.ToLower(format); lower {
	case "json", "yaml", "kyaml", "name", "":
		p.format = lower
		if lower == "" {
			p.format = "name"
		}
		return p, nil
	}
	name, _, _ := strings.Cut(format, "=")
	switch name {
	case "go-template", "go-template-file", "template", "templatefile", "jsonpath", "jsonpath-as-json", "jsonpath-file":
	default:
		return nil, cli.Usagef("unable to match a printer suitable for the output format %q, allowed formats are: %s", o.output, strings.Join(dumpFormats, ","))
	}
	spec, err := o.template.Output(format)
	if err != nil {
		return nil, err
	}
	// One template printer prints every list, as kubectl's one printer
	// does (its JSONPath keeps state from one list to the next).
	tp, err := spec.ObjectPrinter(&p.target, false)
	if err != nil {
		return nil, err
	}
	if err := tp.Begin(true); err != nil {
		return nil, err
	}
	p.format, p.tmpl = "template", tp
	return p, nil
}

// print writes one list, raw as the server sent it, to w.
func (p *dumpPrinter) print(w io.Writer, raw []byte) error {
	raw = nullEmptyItems(raw)
	if p.strip && (p.format == "json" || p.format == "yaml" || p.format == "kyaml") {
		raw = stripItemsManagedFields(raw)
	}
	switch p.format {
	case "json":
		_, err := w.Write(pretty.PrettyOptions(raw, orderedJSON))
		return err
	case "yaml":
		p.docs++
		y, err := yaml.JSONToYAML(raw)
		if err != nil {
			return err
		}
		if p.docs > 1 {
			y = append([]byte("---\n"), y...)
		}
		_, err = w.Write(y)
		return err
	case "kyaml":
		var enc kyaml.Encoder
		return enc.FromYAML(bytes.NewReader(raw), w)
	case "name":
		return fmt.Errorf("list types are not supported by name printing: *v1.%s", gjson.GetBytes(raw, "kind").String())
	}
	p.target.w = w
	return p.tmpl.Print(printers.ItemFromRaw(raw))
}

// retargetWriter writes to w, which changes from file to file.
type retargetWriter struct{ w io.Writer }

func (r *retargetWriter) Write(b []byte) (int, error) { return r.w.Write(b) }

// orderedJSON is encoding/json's MarshalIndent(v, "", "    ") of a typed
// object, which keeps its members in order: kubectl's -o json of the lists
// it decodes.
var orderedJSON = &pretty.Options{Width: -1, Indent: "    "}

// nullEmptyItems makes an empty list's items null, as kubectl prints them:
// it reads lists as protocol buffers, in which an empty list of items and
// none are the same, and decodes them to a nil slice.
func nullEmptyItems(raw []byte) []byte {
	items := gjson.GetBytes(raw, "items")
	if !items.IsArray() || items.Index <= 0 || strings.TrimSpace(items.Raw[1:len(items.Raw)-1]) != "" {
		return raw
	}
	out := make([]byte, 0, len(raw))
	out = append(out, raw[:items.Index]...)
	out = append(out, "null"...)
	return append(out, raw[items.Index+len(items.Raw):]...)
}

// stripItemsManagedFields returns a list's JSON without its items'
// metadata.managedFields, everything else in place.
func stripItemsManagedFields(raw []byte) []byte {
	items := gjson.GetBytes(raw, "items")
	if !items.IsArray() || items.Index <= 0 || !strings.Contains(items.Raw, `"managedFields"`) {
		return raw
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	b.Write(raw[:items.Index])
	b.WriteByte('[')
	n := 0
	items.ForEach(func(_, item gjson.Result) bool {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(printers.StripManagedFieldsJSON([]byte(item.Raw)))
		return true
	})
	b.WriteByte(']')
	b.Write(raw[items.Index+len(items.Raw):])
	return b.Bytes()
}

// dumpOutput opens where each part of the dump goes: standard output, or
// a file below the output directory (its directories made as needed),
// both readable by the owner only.
type dumpOutput struct {
	dir string
	out io.Writer
}

// open returns the writer for name (a slash path without extension) and a
// function that closes it. A name that would leave the directory (a
// namespace or pod called "..") is refused. A file is written as a new
// file of mode 0600 and renamed into place when closed, so a file or link
// someone else put there beforehand is replaced, never written through;
// directories kdyn makes are 0700.
func (d dumpOutput) open(name, ext string) (io.Writer, func() error, error) {
	if d.dir == "" || d.dir == "-" {
		return d.out, func() error { return nil }, nil
	}
	rel := filepath.FromSlash(name) + ext
	if !filepath.IsLocal(rel) {
		return nil, nil, fmt.Errorf("cannot dump %q: the name leaves the output directory", name)
	}
	file := filepath.Join(d.dir, rel)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, nil, err
	}
	fh, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return nil, nil, err
	}
	done := func() error {
		err := fh.Close()
		if err == nil {
			err = os.Rename(fh.Name(), file)
		}
		if err != nil {
			os.Remove(fh.Name())
		}
		return err
	}
	return fh, done, nil
}

// dumpList is one list a namespace's dump holds: its file name and where
// the server serves it.
type dumpList struct {
	file, group, resource string
}

// namespaceLists are the lists dumped for each namespace, in kubectl's
// order.
var namespaceLists = []dumpList{
	{"events", "", "events"},
	{"replication-controllers", "", "replicationcontrollers"},
	{"services", "", "services"},
	{"daemonsets", "apps", "daemonsets"},
	{"deployments", "apps", "deployments"},
	{"replicasets", "apps", "replicasets"},
	{"pods", "", "pods"},
}

func runDump(ctx context.Context, f *cli.Factory, o *dumpOptions, outputSet bool, stdout io.Writer) error {
	p, err := newDumpPrinter(o, outputSet)
	if err != nil {
		return err
	}
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	if o.podTimeout <= 0 {
		return errors.New("--pod-running-timeout must be higher than zero")
	}
	current, _, err := f.Namespace()
	if err != nil {
		return err
	}
	out := dumpOutput{dir: o.dir, out: stdout}
	list := func(group, ns, resource string) ([]byte, error) {
		req := rc.Get().Group(group).Version("v1").Resource(resource)
		if ns != "" {
			req = req.Namespace(ns)
		}
		return req.DoRaw(ctx)
	}
	write := func(name string, raw []byte) error {
		w, done, err := out.open(name, p.ext)
		if err != nil {
			return err
		}
		err = p.print(w, raw)
		if cerr := done(); err == nil {
			err = cerr
		}
		return err
	}

	nodes, err := list("", "", "nodes")
	if err != nil {
		return err
	}
	if err := write("nodes", nodes); err != nil {
		return err
	}
	namespaces, err := dumpNamespaces(o, current, func() ([]byte, error) { return list("", "", "namespaces") })
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		var pods []byte
		for _, l := range namespaceLists {
			raw, err := list(l.group, ns, l.resource)
			if err != nil {
				return err
			}
			if err := write(path.Join(ns, l.file), raw); err != nil {
				return err
			}
			if l.resource == "pods" {
				pods = raw
			}
		}
		var ferr error
		gjson.GetBytes(pods, "items").ForEach(func(_, pod gjson.Result) bool {
			ferr = dumpPodLogs(ctx, rc, out, ns, pod)
			return ferr == nil
		})
		if ferr != nil {
			return ferr
		}
	}
	if o.dir != "" && o.dir != "-" {
		fmt.Fprintf(stdout, "Cluster info dumped to %s\n", o.dir)
	}
	return nil
}

// dumpNamespaces are the namespaces to dump: every one (listed by
// listNamespaces) with --all-namespaces, those of --namespaces, or else
// kube-system and the current one.
func dumpNamespaces(o *dumpOptions, current string, listNamespaces func() ([]byte, error)) ([]string, error) {
	switch {
	case o.all:
		raw, err := listNamespaces()
		if err != nil {
			return nil, err
		}
		var names []string
		gjson.GetBytes(raw, "items.#.metadata.name").ForEach(func(_, n gjson.Result) bool {
			names = append(names, n.String())
			return true
		})
		return names, nil
	case len(o.namespaces) > 0:
		return slices.Clone(o.namespaces), nil
	}
	return []string{metav1.NamespaceSystem, current}, nil
}

// dumpPodLogs writes the log of each of pod's init containers, then of
// each of its containers, between kubectl's START and END lines, to
// NAMESPACE/POD/logs.txt (or standard output). A log the server does not
// give is reported in its place.
func dumpPodLogs(ctx context.Context, rc *rest.Client, out dumpOutput, ns string, pod gjson.Result) error {
	name := pod.Get("metadata.name").String()
	podNS := pod.Get("metadata.namespace").String()
	w, done, err := out.open(path.Join(ns, name, "logs"), ".txt")
	if err != nil {
		return err
	}
	var containers []string
	for _, field := range []string{"spec.initContainers", "spec.containers"} {
		pod.Get(field).ForEach(func(_, c gjson.Result) bool {
			containers = append(containers, c.Get("name").String())
			return true
		})
	}
	for _, c := range containers {
		var b bytes.Buffer
		fmt.Fprintf(&b, "==== START logs for container %s of pod %s/%s ====\n", c, podNS, name)
		data, err := containerLog(ctx, rc, podNS, name, c)
		if err != nil {
			fmt.Fprintf(&b, "Request log error: %s\n", err.Error())
		} else {
			b.Write(data)
		}
		fmt.Fprintf(&b, "==== END logs for container %s of pod %s/%s ====\n", c, podNS, name)
		if _, err := w.Write(b.Bytes()); err != nil {
			done()
			return err
		}
	}
	return done()
}

// containerLog reads one container's log. An error answer is worded as
// kubectl's raw requests word it, whatever the body says: the status
// code's generic message ("the server rejected our request for an unknown
// reason (get pods NAME)"), with a text body's own words only where that
// message keeps them.
func containerLog(ctx context.Context, rc *rest.Client, ns, pod, container string) ([]byte, error) {
	res := rc.Get().Version("v1").Namespace(ns).Resource("pods").Name(pod).SubResource("log").Param("container", container).Do(ctx)
	body, err := res.Raw()
	if err == nil || res.StatusCode() == 0 {
		return body, err
	}
	msg := "unknown"
	if isTextResponse(res.ContentType()) {
		if len(body) > maxErrorTextBytes {
			body = body[:maxErrorTextBytes]
		}
		msg = strings.TrimSpace(string(body))
	}
	retry, _ := strconv.Atoi(res.Header().Get("Retry-After"))
	return nil, apierrors.NewGenericServerResponse(res.StatusCode(), http.MethodGet, schema.GroupResource{Resource: "pods"}, pod, msg, retry, true)
}

// maxErrorTextBytes is how much of an error answer's text kubectl keeps.
const maxErrorTextBytes = 2048

// isTextResponse reports a Content-Type that is text, or none.
func isTextResponse(contentType string) bool {
	if contentType == "" {
		return true
	}
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && strings.HasPrefix(media, "text/")
}
