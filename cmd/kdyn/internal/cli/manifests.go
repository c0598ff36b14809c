package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/ctxsleep"
	"github.com/kdyn/kdyn/readiness"
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

// ManifestFlags are -f, -R and -k.
type ManifestFlags struct {
	Filenames []string // -f: files, directories, or - for stdin
	Recursive bool     // -R: read subdirectories too
	Kustomize string   // -k: a kustomization directory, built as kubectl kustomize builds it
	Raw       string   // --raw: a URI path the file of -f is sent to as is (see AddRawFlag)
}

// AddFlags adds -f, -R and -k to cmd; what ends their help ("with the
// objects to apply").
func (m *ManifestFlags) AddFlags(cmd *cobra.Command, what string) {
	fl := cmd.Flags()
	fl.StringSliceVarP(&m.Filenames, "filename", "f", nil, "A file, a directory (its *.yaml, *.yml and *.json files) or - for stdin, "+what+" (repeatable).")
	fl.BoolVarP(&m.Recursive, "recursive", "R", false, "Read the directories given with -f and all their subdirectories.")
	fl.StringVarP(&m.Kustomize, "kustomize", "k", "", "A kustomization directory, "+what+" (built as 'kdyn kustomize DIR' prints it).")
	_ = cmd.MarkFlagDirname("kustomize")
}

// Given reports whether -f or -k names manifests.
func (m *ManifestFlags) Given() bool { return len(m.Filenames) > 0 || m.Kustomize != "" }

// validate refuses -k with -f or -R, as kubectl does.
func (m *ManifestFlags) validate() error {
	if m.Kustomize == "" {
		return nil
	}
	if len(m.Filenames) > 0 {
		return Usagef("only one of -f or -k can be specified")
	}
	if m.Recursive {
		return Usagef("the -k flag can't be used with -f or -R")
	}
	return nil
}

// ManifestEntry is one document read from -f: an object, or the error that
// kept it from being read.
type ManifestEntry struct {
	obj *unstructured.Unstructured
	doc kunstructured.Document
	err error
}

// Where names the entry's document: "app.yaml", "app.yaml: document 3".
func (e *ManifestEntry) Where() string { return e.where() }

// where names the document: "app.yaml: document 3" (": item 2" for an
// item of a List).
func (e *ManifestEntry) where() string {
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
// from stdin. A bad document or a missing file becomes an entry with its
// error; ReadEntries refuses the whole set when there is one.
func readManifests(paths []string, recursive bool, stdin io.Reader) []*ManifestEntry {
	var out []*ManifestEntry
	readStdin := false
	for _, p := range paths {
		if p == "-" {
			if readStdin {
				out = append(out, &ManifestEntry{doc: kunstructured.Document{Source: stdinSource}, err: errors.New("standard input can only be read once")})
				continue
			}
			readStdin = true
			out = append(out, readManifestStream(stdin, stdinSource)...)
			continue
		}
		if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
			out = append(out, &ManifestEntry{doc: kunstructured.Document{Source: p}, err: errors.New("reading manifests from a URL is not supported; download the file first")})
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("the path %q does not exist", p)
			}
			out = append(out, &ManifestEntry{doc: kunstructured.Document{Source: p}, err: err})
			continue
		}
		if !info.IsDir() {
			out = append(out, readManifestFile(p)...)
			continue
		}
		files, err := manifestFiles(p, recursive)
		if err != nil {
			out = append(out, &ManifestEntry{doc: kunstructured.Document{Source: p}, err: err})
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

func readManifestFile(path string) []*ManifestEntry {
	f, err := os.Open(path)
	if err != nil {
		return []*ManifestEntry{{doc: kunstructured.Document{Source: path}, err: err}}
	}
	defer f.Close()
	return readManifestStream(f, path)
}

func readManifestStream(r io.Reader, source string) []*ManifestEntry {
	var out []*ManifestEntry
	for doc, err := range kunstructured.Manifests(r, source) {
		out = append(out, &ManifestEntry{obj: doc.Object, doc: doc, err: err})
	}
	return out
}

// FilterManifests keeps the entries whose object matches the label
// selector (entries with errors are kept, so they are still reported).
func FilterManifests(entries []*ManifestEntry, selector string) ([]*ManifestEntry, error) {
	if selector == "" {
		return entries, nil
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, Usagef("invalid label selector %q: %v", selector, err)
	}
	var out []*ManifestEntry
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

// ApplyOrder puts Namespaces and CustomResourceDefinitions first, then
// everything else; each part keeps the order of the files. Bad documents
// stay among the rest, where they were.
func ApplyOrder(entries []*ManifestEntry) []*ManifestEntry {
	out := make([]*ManifestEntry, 0, len(entries))
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

// DeleteOrder is ApplyOrder reversed in its two parts: other objects first
// (while their CRDs still exist), then CustomResourceDefinitions and
// Namespaces; each part keeps the order of the files.
func DeleteOrder(entries []*ManifestEntry) []*ManifestEntry {
	out := make([]*ManifestEntry, 0, len(entries))
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

// StripServerFields returns a copy of obj without the metadata that the
// server owns and that a write must not (apply, create) or need not send.
func StripServerFields(obj *unstructured.Unstructured) *unstructured.Unstructured {
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

var crdGK = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// CRDGVR is the resource of CustomResourceDefinitions.
var CRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

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
// Established (once: the first object waits, the others share its result).
type pendingCRD struct {
	name string
	once sync.Once
	err  error
}

// ManifestTarget is a manifest object ready to be sent: its namespace
// filled in (or dropped, for cluster-scoped kinds), its resource mapped.
type ManifestTarget struct {
	entry *ManifestEntry
	// Obj is the manifest's object with its namespace set as it will be
	// sent.
	Obj *unstructured.Unstructured
	// Mapping is its resource and scope.
	Mapping *meta.RESTMapping
	// Resource is the run's client for the object's resource and
	// namespace.
	Resource dynamic.ResourceInterface
	// Name is "kind[.group]/name", as -o name prints it.
	Name string
}

// Namespaced reports whether the object's resource is namespaced.
func (t *ManifestTarget) Namespaced() bool {
	return t.Mapping.Scope.Name() == meta.RESTScopeNameNamespace
}

// ManifestOptions configure a ManifestRun. The zero value writes for real,
// records no field manager, does not wait for CRDs and carries on past
// failures.
type ManifestOptions struct {
	// Action is the verb in messages: "applying", "creating".
	Action string
	// FieldManager is recorded on every write (dynamic.WithFieldManager).
	FieldManager string
	// DryRun is the mode of every write: with DryRunServer each is sent with
	// dryRun=All (dynamic.WithDryRun); with DryRunClient the command sends
	// none.
	DryRun DryRunMode
	// FailFast stops at the first document that fails.
	FailFast bool
	// TrackCRDs makes objects of a CRD this run wrote wait for it (apply,
	// create, replace; not diff, whose writes are dry runs, nor delete).
	TrackCRDs bool
	// CRDTimeout bounds the wait for a CRD of this run to be Established
	// (with TrackCRDs).
	CRDTimeout time.Duration
	// Hint, when set, adds lines after an error message.
	Hint func(error) string
	// Bulk sends the run's requests without the client-side rate limit
	// (Factory.BulkWriteClient), for EachConcurrent.
	Bulk bool
	// FieldValidation, when set, is sent as fieldValidation on every write
	// (dynamic.WithFieldValidation; see ValidateFlag).
	FieldValidation string
}

// ManifestRun carries one command's pass over its manifests.
type ManifestRun struct {
	f      *Factory
	opts   ManifestOptions
	mapper *restmapper.Mapper
	// Client is the factory's client decorated for the run's writes (see
	// Factory.WriteClient); targets' Resource comes from it.
	Client dynamic.Interface
	// Namespace is the namespace of namespaced objects that name none.
	Namespace string
	// ExplicitNS says whether Namespace was given with -n (an object in
	// another namespace is then an error, as in kubectl).
	ExplicitNS bool

	// crdMu guards crds (EachConcurrent's workers share them); it is not
	// held while a pendingCRD is waited for.
	crdMu sync.Mutex
	crds  map[schema.GroupKind]*pendingCRD
	// Failures counts the failures reported so far.
	Failures int
	// FirstErr is the first of them.
	FirstErr error
}

// NewManifestRun starts a pass over manifests with the factory's mapper,
// namespace and write client (decorated as opts say).
func NewManifestRun(f *Factory, opts ManifestOptions) (*ManifestRun, error) {
	mapper, err := f.RESTMapper()
	if err != nil {
		return nil, err
	}
	writeClient := f.WriteClient
	if opts.Bulk {
		writeClient = f.BulkWriteClient
	}
	client, err := writeClient(opts.FieldManager, opts.DryRun)
	if err != nil {
		return nil, err
	}
	client = dynamic.WithFieldValidation(client, opts.FieldValidation)
	ns, explicit, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	return &ManifestRun{
		f: f, opts: opts, mapper: mapper, Client: client, Namespace: ns, ExplicitNS: explicit,
		crds: map[schema.GroupKind]*pendingCRD{},
	}, nil
}

// Each runs do for every entry in order, reporting failures as they
// happen; with FailFast it stops at the first. It returns the objects do
// returned.
func (r *ManifestRun) Each(ctx context.Context, entries []*ManifestEntry, do func(context.Context, *ManifestTarget) (*unstructured.Unstructured, error)) []*unstructured.Unstructured {
	var results []*unstructured.Unstructured
	for _, e := range entries {
		if ctx.Err() != nil {
			r.report(e, "", ctx.Err())
			return results
		}
		object, res, err := r.sendOne(ctx, e, do)
		if err != nil {
			r.report(e, object, err)
			if r.opts.FailFast {
				return results
			}
			continue
		}
		if res != nil {
			results = append(results, res)
		}
	}
	return results
}

// sendOne sends one entry for Each and EachConcurrent: its own error, or
// its target through do. object names it in the report ("" when it was not
// read). A CRD it wrote is remembered, so that objects of its kind wait
// for it.
func (r *ManifestRun) sendOne(ctx context.Context, e *ManifestEntry, do func(context.Context, *ManifestTarget) (*unstructured.Unstructured, error)) (object string, res *unstructured.Unstructured, err error) {
	if e.err != nil {
		return "", nil, e.err
	}
	t, err := r.target(ctx, e)
	if err != nil {
		return TargetName(e.obj), nil, err
	}
	res, err = do(ctx, t)
	if err == nil && r.opts.TrackCRDs && r.opts.DryRun == DryRunNone && t.Mapping.GroupVersionKind.GroupKind() == crdGK {
		r.noteCRD(t.Obj)
	}
	return t.Name, res, err
}

// TargetName is obj's "kind[.group]/name", as -o name prints it ("" for
// nil).
func TargetName(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	return printers.KindName(obj.GroupVersionKind().GroupKind(), obj.GetName())
}

// noteCRD remembers a CRD this run wrote, so that objects of its kind
// wait for it.
func (r *ManifestRun) noteCRD(obj *unstructured.Unstructured) {
	r.crdMu.Lock()
	defer r.crdMu.Unlock()
	if gk, ok := crdKind(obj); ok && obj.GetName() != "" {
		r.crds[gk] = &pendingCRD{name: obj.GetName()}
	}
}

// target maps e's object to its resource and fills in its namespace.
func (r *ManifestRun) target(ctx context.Context, e *ManifestEntry) (*ManifestTarget, error) {
	obj := e.obj
	gvk := obj.GroupVersionKind()
	r.crdMu.Lock()
	crd := r.crds[gvk.GroupKind()]
	r.crdMu.Unlock()
	if crd != nil {
		if err := r.waitEstablished(ctx, crd); err != nil {
			return nil, err
		}
	}
	mapping, err := r.mapping(ctx, gvk, crd != nil)
	if err != nil {
		return nil, err
	}
	t := &ManifestTarget{entry: e, Mapping: mapping, Name: TargetName(obj)}
	nri := r.Client.Resource(mapping.Resource)
	if t.Namespaced() {
		ns, err := r.objectNamespace(obj.GetNamespace())
		if err != nil {
			return nil, err
		}
		if obj.GetNamespace() == "" {
			obj = obj.DeepCopy()
			obj.SetNamespace(ns)
		}
		t.Resource = nri.Namespace(obj.GetNamespace())
	} else {
		if obj.GetNamespace() != "" {
			// kubectl ignores a namespace on a cluster-scoped object.
			obj = obj.DeepCopy()
			obj.SetNamespace("")
		}
		t.Resource = nri
	}
	t.Obj = obj
	return t, nil
}

// mapping finds the resource of gvk. For a kind whose CRD this run has
// just written, discovery may lag a little behind Established: a miss is
// retried, refreshing discovery, for a few seconds.
//
// A kind this run did not define, with no match even after the mapper's
// own refresh, may still be a CRD an earlier command has just created
// (kubectl apply -f crd.yaml; kubectl apply -f cr.yaml): when the server
// has a CRD of that group and kind, kdyn waits for it as for its own.
func (r *ManifestRun) mapping(ctx context.Context, gvk schema.GroupVersionKind, justCreated bool) (*meta.RESTMapping, error) {
	m, err := r.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	if !justCreated && err != nil && meta.IsNoMatchError(err) && gvk.Group != "" {
		if name, ok := r.serverCRD(ctx, gvk); ok {
			if werr := waitCRDEstablished(ctx, r.Client.Resource(CRDGVR), name, min(10*time.Second, max(r.opts.CRDTimeout, time.Second))); werr != nil {
				return nil, werr
			}
			justCreated = true
		}
	}
	if justCreated && err != nil && meta.IsNoMatchError(err) {
		deadline := time.Now().Add(min(10*time.Second, max(r.opts.CRDTimeout, time.Second)))
		for time.Now().Before(deadline) && meta.IsNoMatchError(err) {
			if serr := ctxsleep.Sleep(ctx, 250*time.Millisecond); serr != nil {
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

// serverCRD returns the name of the server's CRD that serves gvk, if it
// has one that is not being deleted (a list of CRDs, made only when a kind
// has no match; a client that may not list them gets no answer).
func (r *ManifestRun) serverCRD(ctx context.Context, gvk schema.GroupVersionKind) (string, bool) {
	list, err := r.Client.Resource(CRDGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", false
	}
	for i := range list.Items {
		crd := &list.Items[i]
		if k, ok := crdKind(crd); !ok || k != gvk.GroupKind() || crd.GetDeletionTimestamp() != nil {
			continue
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			m, _ := v.(map[string]any)
			if m["name"] == gvk.Version && m["served"] == true {
				return crd.GetName(), true
			}
		}
	}
	return "", false
}

// waitEstablished waits, once per CRD and at most opts.CRDTimeout, for the
// CRD to report Established=True; objects of other kinds go on meanwhile.
// NamesAccepted=False fails at once, with the server's reason.
func (r *ManifestRun) waitEstablished(ctx context.Context, c *pendingCRD) error {
	c.once.Do(func() { c.err = waitCRDEstablished(ctx, r.Client.Resource(CRDGVR), c.name, r.opts.CRDTimeout) })
	return c.err
}

func waitCRDEstablished(ctx context.Context, ri dynamic.ResourceInterface, name string, timeout time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		obj, err := ri.Get(wctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			// readiness's rule for CRDs: Established=True is Current;
			// NamesAccepted=False (or Established=False other than while
			// installing) is Failed.
			res, rerr := readiness.Compute(obj)
			if rerr == nil && res.Ready() {
				return nil
			}
			if res.Status == readiness.Failed {
				return fmt.Errorf("CustomResourceDefinition %q was not accepted: %s", name, res.Message)
			}
		case wctx.Err() != nil:
		case !apierrors.IsNotFound(err):
			return err
		}
		if serr := ctxsleep.Sleep(wctx, 200*time.Millisecond); serr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%w after %s waiting for CustomResourceDefinition %q to be Established", ErrTimeout, timeout, name)
		}
	}
}

// report prints a failure of one entry and remembers it for the exit code.
func (r *ManifestRun) report(e *ManifestEntry, object string, err error) {
	r.Failures++
	if r.FirstErr == nil {
		r.FirstErr = err
	}
	w := r.f.Streams.ErrOut
	fmt.Fprintln(w, objectErrorMessage(r.opts.Action, e, object, err))
	if r.opts.Hint != nil {
		if h := r.opts.Hint(err); h != "" {
			fmt.Fprint(w, h)
		}
	}
}

// Fail prints an error that belongs to no manifest document (a name on
// the command line, a wait) and remembers it for the exit code.
func (r *ManifestRun) Fail(err error) {
	r.Failures++
	if r.FirstErr == nil {
		r.FirstErr = err
	}
	PrintError(r.f.Streams.ErrOut, err)
}

// objectErrorMessage words the failure of one manifest document, naming
// the file and document:
//
//	error: app.yaml: document 2 (line 9): error converting YAML to JSON: ...
//	error: app.yaml: document 3: widget.example.com/w: no matches for kind ...
//	Error from server (AlreadyExists): error when creating configmap/x (app.yaml: document 1): configmaps "x" already exists
func objectErrorMessage(action string, e *ManifestEntry, object string, err error) string {
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
	msg := strings.TrimPrefix(ErrorMessage(err), "error: ")
	if e.doc.Index == 0 {
		// A file that could not be read; the message names it.
		return "error: " + msg
	}
	if object != "" {
		return fmt.Sprintf("error: %s: %s: %s", e.where(), object, msg)
	}
	return fmt.Sprintf("error: %s: %s", e.where(), msg)
}

// Finish returns the command's error: nil, or a silent exit code 1 (the
// failures were printed), or with --exit-codes the code of the first.
func (r *ManifestRun) Finish() error {
	if r.Failures == 0 {
		return nil
	}
	return &ExitError{Code: FailureCode(r.f, r.FirstErr), Silent: true}
}

// FailureCode is 1, or with --exit-codes the code that names err.
func FailureCode(f *Factory, err error) int {
	if f.Flags.ExitCodes {
		if c := ExitCode(err, true); c != ExitOK {
			return c
		}
	}
	return ExitGeneric
}

// StdinManifestUse is what -f - uses standard input for, in the words of
// kubectl's error when an interactive credential plugin cannot have it.
const StdinManifestUse = "used by stdin resource manifest reader"

// ReadEntries reads -f or -k for a command, failing when they name
// nothing. With -f - it claims standard input (Factory.ClaimStdin).
func ReadEntries(f *Factory, m *ManifestFlags, verb string) ([]*ManifestEntry, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	if !m.Given() {
		return nil, Usagef("no manifests given: use -f FILE, -f DIR, -f - or -k DIR (see 'kdyn %s -h')", verb)
	}
	if slices.Contains(m.Filenames, "-") {
		f.ClaimStdin(StdinManifestUse)
	}
	var entries []*ManifestEntry
	if m.Kustomize != "" {
		entries = readKustomization(m.Kustomize)
	} else {
		entries = readManifests(m.Filenames, m.Recursive, f.Streams.In)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("no objects passed to %s", verb)
	}
	// Every document is read before any is sent: one that cannot be read
	// (bad YAML or JSON, no kind, a missing file) stops the command before
	// it changes anything. kubectl stops at it too, but only after sending
	// the documents before it.
	for _, e := range entries {
		if e.err == nil {
			continue
		}
		var de *kunstructured.DocumentError
		if errors.As(e.err, &de) {
			return nil, &ManifestReadError{Source: de.Source, Err: de}
		}
		return nil, e.err
	}
	return entries, nil
}

// ManifestReadError is a document of -f that could not be read; nothing
// was sent. Its message is kubectl's ("error parsing FILE: …"); Err names
// the document and its line.
type ManifestReadError struct {
	Source string
	Err    *kunstructured.DocumentError
}

// Error words the failure as kubectl does.
func (e *ManifestReadError) Error() string {
	return fmt.Sprintf("error parsing %s: %v", e.Source, e.Err.Err)
}

// Unwrap returns the document's error.
func (e *ManifestReadError) Unwrap() error { return e.Err }

// PrintResults prints the objects of a write with -o (name, json, yaml and
// the other object outputs); json, yaml and jsonl leave out managedFields,
// as kubectl's do. Several objects in json or yaml are printed one by one,
// as kubectl's create and replace print them: JSON objects in a row, YAML
// documents separated by "---".
func PrintResults(f *Factory, out OutputSpec, results []*unstructured.Unstructured, single bool) error {
	if (out.Kind == OutJSON || out.Kind == OutYAML) && len(results) > 1 {
		for i, obj := range results {
			if i > 0 && out.Kind == OutYAML {
				if _, err := io.WriteString(f.Streams.Out, "---\n"); err != nil {
					return err
				}
			}
			raw, err := json.Marshal(kunstructured.StripManagedFields(obj).Object)
			if err != nil {
				return err
			}
			if err := PrintObjectJSON(f.Streams.Out, out, raw, false, true); err != nil {
				return err
			}
		}
		return nil
	}
	p, err := out.ObjectPrinter(f.Streams.Out, false)
	if err != nil {
		return err
	}
	if err := p.Begin(single && len(results) == 1); err != nil {
		return err
	}
	for _, obj := range results {
		if out.HidesManagedFields() {
			obj = kunstructured.StripManagedFields(obj)
		}
		if err := p.Print(printers.ItemFromObject(obj)); err != nil {
			return err
		}
	}
	return p.Finish()
}

// PrintAppliedResults prints apply's objects with -o as kubectl apply
// does: the object of a single document alone, and otherwise, in json and
// yaml, one typed v1 List ({"kind":"List","apiVersion":"v1","metadata":{},
// "items":[...]}, members in that order in json); other outputs as
// PrintResults.
func PrintAppliedResults(f *Factory, out OutputSpec, results []*unstructured.Unstructured, single bool) error {
	if (out.Kind != OutJSON && out.Kind != OutYAML) || (single && len(results) == 1) {
		return PrintResults(f, out, results, single)
	}
	var b bytes.Buffer
	b.WriteString(`{"kind":"List","apiVersion":"v1","metadata":{},"items":[`)
	for i, obj := range results {
		if i > 0 {
			b.WriteByte(',')
		}
		raw, err := json.Marshal(kunstructured.StripManagedFields(obj).Object)
		if err != nil {
			return err
		}
		b.Write(raw)
	}
	b.WriteString("]}")
	return PrintObjectJSON(f.Streams.Out, out, b.Bytes(), true, true)
}

// WriteOutput parses -o for a write command: "" prints the one-line
// summaries; table outputs make no sense here.
func WriteOutput(o string) (OutputSpec, bool, error) {
	if o == "" {
		return OutputSpec{}, false, nil
	}
	out, err := ParseOutput(o)
	if err != nil {
		return OutputSpec{}, false, err
	}
	if out.IsTable() {
		return OutputSpec{}, false, Usagef("unable to match a printer suitable for the output format %q, allowed formats are: name,json,yaml,jsonl,jsonpath,gjson,custom-columns", o)
	}
	return out, true, nil
}

// Summary prints "configmap/x created" unless -o was given.
func Summary(f *Factory, quiet bool, name, op string) {
	if !quiet {
		fmt.Fprintf(f.Streams.Out, "%s %s\n", name, op)
	}
}

// PatchResourceVersion sets metadata.resourceVersion in a JSON (merge or
// strategic merge) patch, so that the server refuses it (Conflict) once
// the object has changed past rv; with override false, a resourceVersion
// the patch sets already stays.
func PatchResourceVersion(patch []byte, rv string, override bool) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, err
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	if _, set := md["resourceVersion"]; override || !set {
		md["resourceVersion"] = rv
	}
	return json.Marshal(m)
}
