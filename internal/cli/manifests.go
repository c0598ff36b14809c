package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/printers"
	"github.com/kdyn/kdyn/restmapper"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// This file holds what the commands that read manifests (apply, create,
// replace, delete -f, diff) share: reading -f paths into documents,
// ordering them, mapping each object to its resource and namespace, waiting
// for CRDs applied in the same run, and reporting per-object failures.

// stdinSource names standard input in messages.
const stdinSource = "STDIN"

// manifestExtensions are the files read from a directory.
var manifestExtensions = []string{".yaml", ".yml", ".json"}

// manifestFlags are -f and -R.
type manifestFlags struct {
	filenames []string
	recursive bool
}

func (m *manifestFlags) addFlags(cmd *cobra.Command, what string) {
	fl := cmd.Flags()
	fl.StringSliceVarP(&m.filenames, "filename", "f", nil, "A file, a directory (its *.yaml, *.yml and *.json files) or - for stdin, "+what+" (repeatable).")
	fl.BoolVarP(&m.recursive, "recursive", "R", false, "Read the directories given with -f and all their subdirectories.")
}

// manifestEntry is one document read from -f: an object, or the error that
// kept it from being read.
type manifestEntry struct {
	obj *unstructured.Unstructured
	doc kunstructured.Document
	err error
}

// where names the document: "app.yaml: document 3" (": item 2" for an
// item of a List).
func (e *manifestEntry) where() string {
	if e.doc.Index == 0 {
		return e.doc.Source
	}
	s := e.doc.Source + ": document " + strconv.Itoa(e.doc.Index)
	if e.doc.Item > 0 {
		s += ": item " + strconv.Itoa(e.doc.Item)
	}
	return s
}

// readManifests reads every document of paths, in order: files as given,
// directories in lexical order (subdirectories only with recursive), "-"
// from stdin. Nothing stops at a bad document or a missing file: each
// becomes an entry with its error, so the good ones can still be used.
func readManifests(paths []string, recursive bool, stdin io.Reader) []*manifestEntry {
	var out []*manifestEntry
	readStdin := false
	for _, p := range paths {
		if p == "-" {
			if readStdin {
				out = append(out, &manifestEntry{doc: kunstructured.Document{Source: stdinSource}, err: errors.New("standard input can only be read once")})
				continue
			}
			readStdin = true
			out = append(out, readManifestStream(stdin, stdinSource)...)
			continue
		}
		if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
			out = append(out, &manifestEntry{doc: kunstructured.Document{Source: p}, err: errors.New("reading manifests from a URL is not supported; download the file first")})
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("the path %q does not exist", p)
			}
			out = append(out, &manifestEntry{doc: kunstructured.Document{Source: p}, err: err})
			continue
		}
		if !info.IsDir() {
			out = append(out, readManifestFile(p)...)
			continue
		}
		files, err := manifestFiles(p, recursive)
		if err != nil {
			out = append(out, &manifestEntry{doc: kunstructured.Document{Source: p}, err: err})
		}
		for _, file := range files {
			out = append(out, readManifestFile(file)...)
		}
	}
	return out
}

// manifestFiles lists the manifest files of dir in lexical order.
func manifestFiles(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		ext := strings.ToLower(filepath.Ext(path))
		for _, e := range manifestExtensions {
			if ext == e {
				files = append(files, path)
				break
			}
		}
		return nil
	})
	return files, err
}

func readManifestFile(path string) []*manifestEntry {
	f, err := os.Open(path)
	if err != nil {
		return []*manifestEntry{{doc: kunstructured.Document{Source: path}, err: err}}
	}
	defer f.Close()
	return readManifestStream(f, path)
}

func readManifestStream(r io.Reader, source string) []*manifestEntry {
	var out []*manifestEntry
	for doc, err := range kunstructured.Manifests(r, source) {
		out = append(out, &manifestEntry{obj: doc.Object, doc: doc, err: err})
	}
	return out
}

// filterManifests keeps the entries whose object matches the label
// selector (entries with errors are kept, so they are still reported).
func filterManifests(entries []*manifestEntry, selector string) ([]*manifestEntry, error) {
	if selector == "" {
		return entries, nil
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, usagef("invalid label selector %q: %v", selector, err)
	}
	var out []*manifestEntry
	for _, e := range entries {
		if e.obj == nil || sel.Matches(labels.Set(e.obj.GetLabels())) {
			out = append(out, e)
		}
	}
	return out, nil
}

// isNamespaceOrCRD reports the kinds that other objects may need to exist
// first.
func isNamespaceOrCRD(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	gk := obj.GroupVersionKind().GroupKind()
	return gk == schema.GroupKind{Kind: "Namespace"} || gk == crdGK
}

// applyOrder puts Namespaces and CustomResourceDefinitions first, then
// everything else; each part keeps the order of the files. Bad documents
// stay among the rest, where they were.
func applyOrder(entries []*manifestEntry) []*manifestEntry {
	out := make([]*manifestEntry, 0, len(entries))
	for _, e := range entries {
		if isNamespaceOrCRD(e.obj) {
			out = append(out, e)
		}
	}
	for _, e := range entries {
		if !isNamespaceOrCRD(e.obj) {
			out = append(out, e)
		}
	}
	return out
}

// deleteOrder is applyOrder reversed in its two parts: other objects first
// (while their CRDs still exist), then CustomResourceDefinitions and
// Namespaces; each part keeps the order of the files.
func deleteOrder(entries []*manifestEntry) []*manifestEntry {
	out := make([]*manifestEntry, 0, len(entries))
	for _, e := range entries {
		if !isNamespaceOrCRD(e.obj) {
			out = append(out, e)
		}
	}
	for _, e := range entries {
		if isNamespaceOrCRD(e.obj) {
			out = append(out, e)
		}
	}
	return out
}

// dryRunMode is --dry-run.
type dryRunMode int

const (
	dryRunNone dryRunMode = iota
	dryRunClient
	dryRunServer
)

func addDryRunFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "dry-run", "none", `"none", "server" (the server checks and answers but stores nothing) or "client" (print what would be sent, send nothing that changes the cluster).`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
}

func parseDryRun(s string) (dryRunMode, error) {
	switch s {
	case "", "none", "false":
		return dryRunNone, nil
	case "client", "true":
		return dryRunClient, nil
	case "server":
		return dryRunServer, nil
	}
	return dryRunNone, usagef(`invalid --dry-run value %q: must be "none", "server" or "client"`, s)
}

// suffix is what kubectl appends to the operation it prints.
func (d dryRunMode) suffix() string {
	switch d {
	case dryRunClient:
		return " (dry run)"
	case dryRunServer:
		return " (server dry run)"
	}
	return ""
}

// server is the dryRun option for requests.
func (d dryRunMode) server() []string {
	if d == dryRunServer {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// stripServerFields returns a copy of obj without the metadata that the
// server owns and that a write must not (apply, create) or need not send.
func stripServerFields(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	md, ok := out.Object["metadata"].(map[string]any)
	if !ok {
		return out
	}
	for _, k := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		delete(md, k)
	}
	return out
}

var (
	crdGK  = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// crdKind returns the group and kind a CRD manifest defines.
func crdKind(obj *unstructured.Unstructured) (schema.GroupKind, bool) {
	group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
	if group == "" || kind == "" {
		return schema.GroupKind{}, false
	}
	return schema.GroupKind{Group: group, Kind: kind}, true
}

// pendingCRD is a CRD this run wrote; objects of its kind wait until it is
// Established.
type pendingCRD struct {
	name    string
	checked bool
	err     error
}

// manifestTarget is a manifest object ready to be sent: its namespace
// filled in (or dropped, for cluster-scoped kinds), its resource mapped.
type manifestTarget struct {
	entry   *manifestEntry
	obj     *unstructured.Unstructured
	mapping *meta.RESTMapping
	ri      dynamic.ResourceInterface
	// name is "kind[.group]/name", as -o name prints it.
	name string
}

func (t *manifestTarget) namespaced() bool {
	return t.mapping.Scope.Name() == meta.RESTScopeNameNamespace
}

// manifestRun carries one command's pass over its manifests.
type manifestRun struct {
	f          *factory
	mapper     *restmapper.Mapper
	client     *dynamic.DynamicClient
	ns         string
	explicitNS bool
	dryRun     dryRunMode
	// crdTimeout bounds the wait for a CRD of this run to be Established.
	crdTimeout time.Duration
	failFast   bool
	// trackCRDs makes objects of a CRD this run wrote wait for it (apply,
	// create, replace; not diff, whose writes are dry runs, nor delete).
	trackCRDs bool
	// action is the verb in messages: "applying", "creating".
	action string
	// hint, when set, adds lines after an error message.
	hint func(error) string

	crds     map[schema.GroupKind]*pendingCRD
	failures int
	firstErr error
}

func newManifestRun(f *factory, action string) (*manifestRun, error) {
	mapper, err := f.restMapper()
	if err != nil {
		return nil, err
	}
	client, err := f.dynamicClient()
	if err != nil {
		return nil, err
	}
	ns, explicit, err := f.namespace()
	if err != nil {
		return nil, err
	}
	return &manifestRun{
		f: f, mapper: mapper, client: client, ns: ns, explicitNS: explicit,
		action: action, crdTimeout: 60 * time.Second, crds: map[schema.GroupKind]*pendingCRD{},
	}, nil
}

// each runs do for every entry in order, reporting failures as they
// happen; with failFast it stops at the first. It returns the objects do
// returned.
func (r *manifestRun) each(ctx context.Context, entries []*manifestEntry, do func(context.Context, *manifestTarget) (*unstructured.Unstructured, error)) []*unstructured.Unstructured {
	var results []*unstructured.Unstructured
	for _, e := range entries {
		if ctx.Err() != nil {
			r.report(e, "", ctx.Err())
			return results
		}
		if e.err != nil {
			r.report(e, "", e.err)
			if r.failFast {
				return results
			}
			continue
		}
		t, err := r.target(ctx, e)
		if err != nil {
			r.report(e, targetName(e.obj), err)
			if r.failFast {
				return results
			}
			continue
		}
		res, err := do(ctx, t)
		if err != nil {
			r.report(e, t.name, err)
			if r.failFast {
				return results
			}
			continue
		}
		if r.trackCRDs && r.dryRun == dryRunNone && t.mapping.GroupVersionKind.GroupKind() == crdGK {
			r.noteCRD(t.obj)
		}
		if res != nil {
			results = append(results, res)
		}
	}
	return results
}

func targetName(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	return printers.KindName(obj.GroupVersionKind().GroupKind(), obj.GetName())
}

// noteCRD remembers a CRD this run wrote, so that objects of its kind
// wait for it.
func (r *manifestRun) noteCRD(obj *unstructured.Unstructured) {
	if gk, ok := crdKind(obj); ok && obj.GetName() != "" {
		r.crds[gk] = &pendingCRD{name: obj.GetName()}
	}
}

// target maps e's object to its resource and fills in its namespace.
func (r *manifestRun) target(ctx context.Context, e *manifestEntry) (*manifestTarget, error) {
	obj := e.obj
	gvk := obj.GroupVersionKind()
	crd := r.crds[gvk.GroupKind()]
	if crd != nil {
		if err := r.waitEstablished(ctx, crd); err != nil {
			return nil, err
		}
	}
	mapping, err := r.mapping(ctx, gvk, crd != nil)
	if err != nil {
		return nil, err
	}
	t := &manifestTarget{entry: e, mapping: mapping, name: targetName(obj)}
	nri := r.client.Resource(mapping.Resource)
	if t.namespaced() {
		switch objNS := obj.GetNamespace(); {
		case objNS == "":
			obj = obj.DeepCopy()
			obj.SetNamespace(r.ns)
		case r.explicitNS && objNS != r.ns:
			//lint:ignore ST1005 kubectl's exact wording, which scripts may match
			return nil, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", objNS, r.ns, objNS)
		}
		t.ri = nri.Namespace(obj.GetNamespace())
	} else {
		if obj.GetNamespace() != "" {
			// kubectl ignores a namespace on a cluster-scoped object.
			obj = obj.DeepCopy()
			obj.SetNamespace("")
		}
		t.ri = nri
	}
	t.obj = obj
	return t, nil
}

// mapping finds the resource of gvk. For a kind whose CRD this run has
// just written, discovery may lag a little behind Established: a miss is
// retried, refreshing discovery, for a few seconds.
func (r *manifestRun) mapping(ctx context.Context, gvk schema.GroupVersionKind, justCreated bool) (*meta.RESTMapping, error) {
	m, err := r.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	if justCreated && err != nil && meta.IsNoMatchError(err) {
		deadline := time.Now().Add(min(10*time.Second, max(r.crdTimeout, time.Second)))
		for time.Now().Before(deadline) && meta.IsNoMatchError(err) {
			if serr := pauseCtx(ctx, 250*time.Millisecond); serr != nil {
				return nil, serr
			}
			if rerr := r.mapper.Refresh(ctx); rerr != nil {
				continue
			}
			m, err = r.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
		}
	}
	if err != nil && meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("%w; ensure CRDs are installed first", err)
	}
	return m, err
}

func pauseCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// waitEstablished waits, once per CRD and at most crdTimeout, for the CRD
// to report Established=True. NamesAccepted=False fails at once, with the
// server's reason.
func (r *manifestRun) waitEstablished(ctx context.Context, c *pendingCRD) error {
	if c.checked {
		return c.err
	}
	c.checked = true
	c.err = waitCRDEstablished(ctx, r.client.Resource(crdGVR), c.name, r.crdTimeout)
	return c.err
}

func waitCRDEstablished(ctx context.Context, ri dynamic.ResourceInterface, name string, timeout time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		obj, err := ri.Get(wctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			established, _ := crdCondition(obj, "Established")
			if established == "True" {
				return nil
			}
			if accepted, msg := crdCondition(obj, "NamesAccepted"); accepted == "False" {
				return fmt.Errorf("CustomResourceDefinition %q was not accepted: %s", name, msg)
			}
		case wctx.Err() != nil:
		case !apierrors.IsNotFound(err):
			return err
		}
		if serr := pauseCtx(wctx, 200*time.Millisecond); serr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%w after %s waiting for CustomResourceDefinition %q to be Established", errTimeout, timeout, name)
		}
	}
}

// crdCondition returns the status and message of a CRD condition.
func crdCondition(obj *unstructured.Unstructured, typ string) (status, message string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		status, _ = m["status"].(string)
		message, _ = m["message"].(string)
		return status, message
	}
	return "", ""
}

// report prints a failure of one entry and remembers it for the exit code.
func (r *manifestRun) report(e *manifestEntry, object string, err error) {
	r.failures++
	if r.firstErr == nil {
		r.firstErr = err
	}
	w := r.f.streams.ErrOut
	fmt.Fprintln(w, objectErrorMessage(r.action, e, object, err))
	if r.hint != nil {
		if h := r.hint(err); h != "" {
			fmt.Fprint(w, h)
		}
	}
}

// fail prints an error that belongs to no manifest document (a name on
// the command line, a wait) and remembers it for the exit code.
func (r *manifestRun) fail(err error) {
	r.failures++
	if r.firstErr == nil {
		r.firstErr = err
	}
	printError(r.f.streams.ErrOut, err)
}

// objectErrorMessage words the failure of one manifest document, naming
// the file and document:
//
//	error: app.yaml: document 2 (line 9): error converting YAML to JSON: ...
//	error: app.yaml: document 3: widget.example.com/w: no matches for kind ...
//	Error from server (AlreadyExists): error when creating configmap/x (app.yaml: document 1): configmaps "x" already exists
func objectErrorMessage(action string, e *manifestEntry, object string, err error) string {
	var de *kunstructured.DocumentError
	if errors.As(err, &de) {
		return "error: " + de.Error()
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		reason := string(st.Reason)
		if reason == "" {
			reason = "Unknown"
		}
		return fmt.Sprintf("Error from server (%s): error when %s %s (%s): %s", reason, action, object, e.where(), st.Message)
	}
	msg := strings.TrimPrefix(errorMessage(err), "error: ")
	if e.doc.Index == 0 {
		// A file that could not be read; the message names it.
		return "error: " + msg
	}
	if object != "" {
		return fmt.Sprintf("error: %s: %s: %s", e.where(), object, msg)
	}
	return fmt.Sprintf("error: %s: %s", e.where(), msg)
}

// finish returns the command's error: nil, or a silent exit code 1 (the
// failures were printed), or with --exit-codes the code of the first.
func (r *manifestRun) finish() error {
	if r.failures == 0 {
		return nil
	}
	return &exitError{code: failureCode(r.f, r.firstErr), silent: true}
}

// failureCode is 1, or with --exit-codes the code that names err.
func failureCode(f *factory, err error) int {
	if f.flags.exitCodes {
		if c := exitCode(err, true); c != exitOK {
			return c
		}
	}
	return exitGeneric
}

// readEntries reads -f for a command, failing when it names nothing.
func readEntries(f *factory, m *manifestFlags, verb string) ([]*manifestEntry, error) {
	if len(m.filenames) == 0 {
		return nil, usagef("no manifests given: use -f FILE, -f DIR or -f - (see 'kdyn %s -h')", verb)
	}
	entries := readManifests(m.filenames, m.recursive, f.streams.In)
	if len(entries) == 0 {
		return nil, fmt.Errorf("no objects passed to %s", verb)
	}
	return entries, nil
}

// printResults prints the objects of a write with -o (name, json, yaml and
// the other object outputs).
func printResults(f *factory, out outputSpec, results []*unstructured.Unstructured, single bool) error {
	p, err := out.objectPrinter(f.streams.Out, false)
	if err != nil {
		return err
	}
	if err := p.Begin(single && len(results) == 1); err != nil {
		return err
	}
	for _, obj := range results {
		if err := p.Print(printers.ItemFromObject(obj)); err != nil {
			return err
		}
	}
	return p.Finish()
}

// writeOutput parses -o for a write command: "" prints the one-line
// summaries; table outputs make no sense here.
func writeOutput(o string) (outputSpec, bool, error) {
	if o == "" {
		return outputSpec{}, false, nil
	}
	out, err := parseOutput(o)
	if err != nil {
		return outputSpec{}, false, err
	}
	if out.isTable() {
		return outputSpec{}, false, usagef("unable to match a printer suitable for the output format %q, allowed formats are: name,json,yaml,jsonl,jsonpath,gjson,custom-columns", o)
	}
	return out, true, nil
}

// summary prints "configmap/x created" unless -o was given.
func summary(f *factory, quiet bool, name, op string) {
	if !quiet {
		fmt.Fprintf(f.streams.Out, "%s %s\n", name, op)
	}
}
