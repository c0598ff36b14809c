package apply

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/restmapper"
)

// This file holds the ApplySet of KEP-3659 as kubectl v0.37.2 implements
// it (KUBECTL_APPLYSET=true kubectl apply --prune --applyset=…): a parent
// object names the set; every member carries the part-of label with the
// set's id; the parent lists the group-kinds (and other namespaces) its
// members may be in, so pruning lists only those. A set kdyn writes has
// the same labels and annotations as kubectl's, byte for byte, but for
// the tooling value (kdyn/<version> instead of kubectl/<version>).

// Labels and annotations of the ApplySet specification.
const (
	// applySetIDLabel marks the parent; its value is the set's id.
	applySetIDLabel = "applyset.kubernetes.io/id"
	// applySetPartOfLabel marks a member; its value is the set's id.
	applySetPartOfLabel = "applyset.kubernetes.io/part-of"
	// applySetParentTypeLabel on a CRD lets its custom resources be parents.
	applySetParentTypeLabel = "applyset.kubernetes.io/is-parent-type"
	// applySetToolingAnnotation names the tool that manages the set:
	// "<tool>/<version>". A tool does not change another tool's set.
	applySetToolingAnnotation = "applyset.kubernetes.io/tooling"
	// applySetGKsAnnotation lists the members' group-kinds: "Kind.group"
	// (or "Kind" in the core group), sorted, comma-separated.
	applySetGKsAnnotation = "applyset.kubernetes.io/contains-group-kinds"
	// applySetGRsAnnotation is the older form of applySetGKsAnnotation
	// ("resource.group"), read but no longer written.
	applySetGRsAnnotation = "applyset.kubernetes.io/contains-group-resources"
	// applySetNamespacesAnnotation lists the namespaces of members other
	// than the parent's own, sorted, comma-separated; kubectl always
	// writes it, empty when there are none.
	applySetNamespacesAnnotation = "applyset.kubernetes.io/additional-namespaces"
)

// applySetTool is kdyn's name in the tooling annotation; the parent's
// field manager is "<tool>-applyset", as kubectl's is "kubectl-applyset".
const (
	applySetTool         = "kdyn"
	applySetFieldManager = applySetTool + "-applyset"
)

// applySetTooling is the tooling annotation kdyn writes: kdyn/<version>.
func applySetTooling() string { return applySetTool + "/" + rest.Version }

// builtinParents are the resources kubectl accepts as parents without a
// labelled CRD, and creates when missing. A bare NAME is a Secret.
var builtinParents = map[schema.GroupVersionResource]bool{
	{Version: "v1", Resource: "secrets"}:    true,
	{Version: "v1", Resource: "configmaps"}: true,
}

// applySetID is the id of the set whose parent is the object name in
// namespace ("" for a cluster-scoped parent) of group-kind gk, as the KEP
// specifies: "applyset-" + base64url (RFC 4648, no padding) of the SHA-256
// of "<name>.<namespace>.<kind>.<group>" + "-v1".
func applySetID(name, namespace string, gk schema.GroupKind) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{name, namespace, gk.Kind, gk.Group}, ".")))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// parentRef is the parent object --applyset names.
type parentRef struct {
	name, namespace string
	mapping         *meta.RESTMapping
}

func (p parentRef) groupKind() schema.GroupKind { return p.mapping.GroupVersionKind.GroupKind() }

func (p parentRef) namespaced() bool { return p.mapping.Scope.Name() == meta.RESTScopeNameNamespace }

func (p parentRef) id() string { return applySetID(p.name, p.namespace, p.groupKind()) }

// String names the parent as kdyn's messages do: "secret/web -n prod".
func (p parentRef) String() string { return objKey{p.groupKind(), p.namespace, p.name}.String() }

// resource returns the client for the parent in c.
func (p parentRef) resource(c dynamic.Interface) dynamic.ResourceInterface {
	nri := c.Resource(p.mapping.Resource)
	if p.namespaced() {
		return nri.Namespace(p.namespace)
	}
	return nri
}

// parseParentRef reads --applyset: [RESOURCE][.GROUP]/NAME, a bare NAME
// being a Secret. The resource is any name the mapper knows (plural,
// singular, short name). namespace is -n's value ("" when not given):
// like kubectl, kdyn takes a namespaced parent's namespace from -n only,
// never from the kubeconfig.
func parseParentRef(ctx context.Context, s, namespace string, mapper *restmapper.Mapper) (parentRef, error) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	name := s
	if res, n, ok := strings.Cut(s, "/"); ok {
		name = n
		gvr = schema.ParseGroupResource(res).WithVersion("")
	}
	if name == "" {
		return parentRef{}, cli.Usagef("invalid --applyset %q: the parent's name cannot be blank (use [RESOURCE][.GROUP]/NAME)", s)
	}
	gvk, err := mapper.KindForWithContext(ctx, gvr)
	if err != nil {
		return parentRef{}, fmt.Errorf("invalid --applyset %q: %w", s, err)
	}
	m, err := mapper.RESTMappingWithContext(ctx, gvk.GroupKind())
	if err != nil {
		return parentRef{}, fmt.Errorf("invalid --applyset %q: %w", s, err)
	}
	p := parentRef{name: name, mapping: m}
	if p.namespaced() {
		if namespace == "" {
			return parentRef{}, cli.Usagef("the ApplySet parent %s is namespaced: give its namespace with -n (as kubectl, kdyn does not take it from the kubeconfig)", printers.KindName(p.groupKind(), name))
		}
		p.namespace = namespace
	}
	return p, nil
}

// checkParentType refuses a parent of a resource kubectl would refuse:
// Secrets and ConfigMaps, or custom resources whose CRD carries the
// applyset.kubernetes.io/is-parent-type label (the metadata of that one
// CRD, named "<plural>.<group>").
func checkParentType(ctx context.Context, c *dynamic.DynamicClient, p parentRef) error {
	if builtinParents[p.mapping.Resource] {
		return nil
	}
	crd, err := c.Metadata().Resource(cli.CRDGVR).Get(ctx, p.mapping.Resource.GroupResource().String(), metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("identifying allowed custom resource parent types: %w", err)
	}
	if err == nil {
		if _, ok := crd.Labels[applySetParentTypeLabel]; ok {
			return nil
		}
	}
	return cli.Usagef("resource %q is not permitted as an ApplySet parent: use a Secret (the default), a ConfigMap, or a custom resource whose CRD has the label %s",
		p.mapping.Resource.GroupResource().String(), applySetParentTypeLabel)
}

// gkSet is a set of group-kinds.
type gkSet map[schema.GroupKind]struct{}

// String is the contains-group-kinds annotation: sorted "Kind.group"
// strings, comma-separated.
func (s gkSet) String() string {
	out := make([]string, 0, len(s))
	for gk := range s {
		out = append(out, gk.String())
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// union returns a new set with the members of s and o.
func (s gkSet) union(o gkSet) gkSet {
	out := gkSet{}
	for gk := range s {
		out[gk] = struct{}{}
	}
	for gk := range o {
		out[gk] = struct{}{}
	}
	return out
}

// nsSet is a set of namespaces.
type nsSet map[string]struct{}

func (s nsSet) union(o nsSet) nsSet {
	out := nsSet{}
	for ns := range s {
		out[ns] = struct{}{}
	}
	for ns := range o {
		out[ns] = struct{}{}
	}
	return out
}

// annotation is the additional-namespaces annotation: the namespaces but
// skip, sorted, comma-separated.
func (s nsSet) annotation(skip string) string {
	out := make([]string, 0, len(s))
	for ns := range s {
		if ns != skip && ns != "" {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func (s nsSet) sorted() []string {
	out := make([]string, 0, len(s))
	for ns := range s {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// applySet is one apply --prune's view of its set: what the live parent
// lists (current) and what this apply's objects need (updated).
type applySet struct {
	parent  parentRef
	tooling string
	// live is the parent as fetch found it (nil when it does not exist
	// yet).
	live *unstructured.Unstructured
	// current and currentNS are what the live parent lists (its own
	// namespace included); updated and updatedNS what this apply's
	// objects are in.
	current, updated     gkSet
	currentNS, updatedNS nsSet
	// legacyGRs are the resources an older parent lists instead of kinds.
	legacyGRs []schema.GroupResource
}

func newApplySet(p parentRef) *applySet {
	return &applySet{parent: p, tooling: applySetTooling(), current: gkSet{}, updated: gkSet{}, currentNS: nsSet{}, updatedNS: nsSet{}}
}

// toolingBase is the tool of a tooling annotation: what comes before its
// last "/" ("kubectl" of "kubectl/v1.37.2"), or all of it.
func toolingBase(v string) string {
	if i := strings.LastIndex(v, "/"); i >= 0 {
		return v[:i]
	}
	return v
}

// otherToolError is the refusal of a parent that another tool manages.
type otherToolError struct {
	parent parentRef
	tool   string
}

func (e *otherToolError) Error() string {
	return fmt.Sprintf("ApplySet parent object %s already exists and is managed by tooling %q instead of %q; "+
		"kdyn, like kubectl, does not change a set another tool manages (KEP-3659): apply it with %s, or use another parent",
		e.parent, e.tool, applySetTool, e.tool)
}

// fetch reads the live parent and checks that kdyn may use it, as kubectl
// checks: a parent that exists must carry the tooling annotation of kdyn
// (any version), the id label with this set's id, and the group-kinds
// annotation. A missing Secret or ConfigMap parent is created by the first
// write; a missing custom resource parent is an error.
func (a *applySet) fetch(ctx context.Context, c dynamic.Interface) error {
	live, err := a.parent.resource(c).Get(ctx, a.parent.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if !builtinParents[a.parent.mapping.Resource] {
			return fmt.Errorf("the ApplySet parent %s does not exist: kdyn creates Secret and ConfigMap parents, but a custom resource parent must be created first", a.parent)
		}
		if a.parent.namespaced() {
			a.currentNS[a.parent.namespace] = struct{}{}
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to fetch ApplySet parent object %s: %w", a.parent, err)
	}
	return a.readParent(live)
}

// readParent checks the live parent and reads its lists.
func (a *applySet) readParent(live *unstructured.Unstructured) error {
	a.live = live
	labels, annotations := live.GetLabels(), live.GetAnnotations()
	tooling, ok := annotations[applySetToolingAnnotation]
	if !ok {
		return fmt.Errorf("ApplySet parent object %s already exists and is missing required annotation %q", a.parent, applySetToolingAnnotation)
	}
	if tool := toolingBase(tooling); tool != applySetTool {
		return &otherToolError{parent: a.parent, tool: tool}
	}
	id, ok := labels[applySetIDLabel]
	if !ok {
		return fmt.Errorf("ApplySet parent object %s exists and does not have required label %s", a.parent, applySetIDLabel)
	}
	if id != a.parent.id() {
		return fmt.Errorf("ApplySet parent object %s exists and has incorrect value for label %q (got: %s, want: %s)", a.parent, applySetIDLabel, id, a.parent.id())
	}
	gks, ok := annotations[applySetGKsAnnotation]
	switch {
	case ok:
		a.current = parseGroupKinds(gks)
	case annotations[applySetGRsAnnotation] != "":
		// Turned into kinds by resolveCurrent.
		for _, s := range strings.Split(annotations[applySetGRsAnnotation], ",") {
			a.legacyGRs = append(a.legacyGRs, schema.ParseGroupResource(s))
		}
	default:
		return fmt.Errorf("kdyn requires the %q annotation to be set on all ApplySet parent objects (the parent %s has none)", applySetGKsAnnotation, a.parent)
	}
	if v := annotations[applySetNamespacesAnnotation]; v != "" {
		for _, ns := range strings.Split(v, ",") {
			if ns != "" {
				a.currentNS[ns] = struct{}{}
			}
		}
	}
	if a.parent.namespaced() {
		a.currentNS[a.parent.namespace] = struct{}{}
	}
	return nil
}

// parseGroupKinds reads a contains-group-kinds annotation ("" is the empty
// set).
func parseGroupKinds(v string) gkSet {
	out := gkSet{}
	if v == "" {
		return out
	}
	for _, s := range strings.Split(v, ",") {
		out[schema.ParseGroupKind(s)] = struct{}{}
	}
	return out
}

// resolveCurrent turns the resources an older parent lists
// (contains-group-resources) into kinds, with the mapper.
func (a *applySet) resolveCurrent(ctx context.Context, mapper *restmapper.Mapper) error {
	for _, gr := range a.legacyGRs {
		gvk, err := mapper.KindForWithContext(ctx, gr.WithVersion(""))
		if err != nil {
			return fmt.Errorf("invalid group resource in %q annotation: %w", applySetGRsAnnotation, err)
		}
		a.current[gvk.GroupKind()] = struct{}{}
	}
	a.legacyGRs = nil
	return nil
}

// add records that an object of this apply goes to p.
func (a *applySet) add(p cli.Placement) {
	a.updated[p.GroupKind] = struct{}{}
	if p.Namespaced && p.Namespace != "" {
		a.updatedNS[p.Namespace] = struct{}{}
	}
}

// kinds are the group-kinds to look for members in: the parent's and this
// apply's.
func (a *applySet) kinds() gkSet { return a.current.union(a.updated) }

// namespaces are the namespaces to look for namespaced members in.
func (a *applySet) namespaces() nsSet {
	out := a.currentNS.union(a.updatedNS)
	if a.parent.namespaced() {
		out[a.parent.namespace] = struct{}{}
	}
	return out
}

// parentMode says which lists a parent write records.
type parentMode int

const (
	// parentSuperset, before applying and after a failure: what the live
	// parent listed and what this apply adds, so that no member is
	// forgotten whatever happens next.
	parentSuperset parentMode = iota
	// parentLatest, after pruning: only this apply's.
	parentLatest
)

// parentPatch is the server-side apply configuration of the parent, as
// kubectl sends it: apiVersion, kind, name, namespace, the id label, and
// the tooling, group-kinds and additional-namespaces annotations (the
// last one even when empty). Fields it no longer sends (the old
// contains-group-resources) are removed by the apply.
func (a *applySet) parentPatch(mode parentMode) *unstructured.Unstructured {
	gks, nss := a.updated, a.updatedNS
	if mode == parentSuperset {
		gks, nss = a.current.union(a.updated), a.currentNS.union(a.updatedNS)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetGroupVersionKind(a.parent.mapping.GroupVersionKind)
	obj.SetName(a.parent.name)
	if a.parent.namespace != "" {
		obj.SetNamespace(a.parent.namespace)
	}
	obj.SetLabels(map[string]string{applySetIDLabel: a.parent.id()})
	obj.SetAnnotations(map[string]string{
		applySetToolingAnnotation:    a.tooling,
		applySetGKsAnnotation:        gks.String(),
		applySetNamespacesAnnotation: nss.annotation(a.parent.namespace),
	})
	return obj
}

// writeParent server-side applies the parent as field manager
// kdyn-applyset through c (whose decorators add dryRun and
// fieldValidation); on a conflict it warns and forces, as kubectl does.
// With a client-side dry run it writes nothing.
func (a *applySet) writeParent(ctx context.Context, c dynamic.Interface, mode parentMode, dry cli.DryRunMode, warn func(string)) error {
	if dry == cli.DryRunClient {
		return nil
	}
	ri := a.parent.resource(c)
	body := a.parentPatch(mode)
	_, err := ri.Apply(ctx, a.parent.name, body, metav1.ApplyOptions{FieldManager: applySetFieldManager})
	if apierrors.IsConflict(err) {
		warn(fmt.Sprintf("failed to update ApplySet: %s\nApplySet field manager %s should own these fields. Retrying with conflicts forced.", err, applySetFieldManager))
		_, err = ri.Apply(ctx, a.parent.name, body, metav1.ApplyOptions{FieldManager: applySetFieldManager, Force: true})
	}
	if err != nil {
		return fmt.Errorf("failed to update ApplySet %s: %w", a.parent, err)
	}
	return nil
}

// labelMembers adds the part-of label to every object of entries; an
// object that sets it itself is refused, as kubectl refuses it.
func (a *applySet) labelMembers(entries []*cli.ManifestEntry) {
	id := a.parent.id()
	for _, e := range entries {
		obj := e.Object()
		if obj == nil {
			continue
		}
		labels := obj.GetLabels()
		if _, found := labels[applySetPartOfLabel]; found {
			e.Reject(fmt.Errorf("ApplySet label %q already set in input data", applySetPartOfLabel))
			continue
		}
		if labels == nil {
			labels = map[string]string{}
		}
		labels[applySetPartOfLabel] = id
		obj.SetLabels(labels)
	}
}
