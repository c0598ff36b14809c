package fake

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResourceInfo describes one resource to the fake: what a real server's
// discovery document says about it. Register it for custom resources whose
// plural is irregular, whose scope cannot be inferred from the objects, or
// that have a status subresource.
type ResourceInfo struct {
	// GVR is the resource's group, version and plural name. Version and
	// Resource are required.
	GVR schema.GroupVersionResource
	// Kind is the kind of the resource's objects, e.g. "Widget". Required.
	Kind string
	// ListKind is the kind of its lists; empty means Kind+"List".
	ListKind string
	// Namespaced is true for namespace-scoped resources.
	Namespaced bool
	// Status is true when the resource has a status subresource (as a CRD
	// with subresources.status does). Then Create drops status, Update and
	// Patch of the main resource keep the stored status, and
	// UpdateStatus, Patch(..., "status") and ApplyStatus change status only.
	Status bool
}

func (i ResourceInfo) validate() error {
	switch {
	case i.GVR.Version == "":
		return fmt.Errorf("fake: ResourceInfo for %q: GVR.Version is required", i.GVR.Resource)
	case i.GVR.Resource == "":
		return fmt.Errorf("fake: ResourceInfo for kind %q: GVR.Resource is required", i.Kind)
	case strings.Contains(i.GVR.Resource, "/"):
		return fmt.Errorf("fake: ResourceInfo for %q: GVR.Resource must not name a subresource", i.GVR.Resource)
	case i.Kind == "":
		return fmt.Errorf("fake: ResourceInfo for %s: Kind is required", i.GVR)
	}
	return nil
}

func (i ResourceInfo) listKind() string {
	if i.ListKind != "" {
		return i.ListKind
	}
	return i.Kind + "List"
}

// resource is what the fake knows about one GVR.
type resource struct {
	info ResourceInfo
	// kindKnown is false for a GVR nobody registered and no object has
	// been created in: info.Kind is then a guess from the plural.
	kindKnown bool
	// scopeKnown is false for a GVR whose scope is not known yet: the
	// namespace of each request (or object) decides.
	scopeKnown bool
	// nameFn validates object names.
	nameFn validation.ValidateNameFunc
}

func (r resource) gr() schema.GroupResource { return r.info.GVR.GroupResource() }

// builtin is a well-known Kubernetes resource, so that seeding typed or
// unstructured built-in objects needs no registration.
type builtin struct {
	group, resource, kind string
	namespaced, status    bool
	nameFn                validation.ValidateNameFunc
}

// pathSegmentName accepts any name that is a valid URL path segment, as RBAC
// objects' names (e.g. "system:controller:foo") are validated.
func pathSegmentName(name string, prefix bool) []string {
	var errs []string
	if !prefix && (name == "." || name == "..") {
		errs = append(errs, fmt.Sprintf("may not be '%s'", name))
	}
	for _, illegal := range []string{"/", "%"} {
		if strings.Contains(name, illegal) {
			errs = append(errs, fmt.Sprintf("may not contain '%s'", illegal))
		}
	}
	return errs
}

var builtins = []builtin{
	{"", "pods", "Pod", true, true, nil},
	{"", "services", "Service", true, true, nil},
	{"", "configmaps", "ConfigMap", true, false, nil},
	{"", "secrets", "Secret", true, false, nil},
	{"", "serviceaccounts", "ServiceAccount", true, false, nil},
	{"", "endpoints", "Endpoints", true, false, nil},
	{"", "events", "Event", true, false, nil},
	{"", "persistentvolumeclaims", "PersistentVolumeClaim", true, true, nil},
	{"", "replicationcontrollers", "ReplicationController", true, true, nil},
	{"", "resourcequotas", "ResourceQuota", true, true, nil},
	{"", "limitranges", "LimitRange", true, false, nil},
	{"", "namespaces", "Namespace", false, true, validation.NameIsDNSLabel},
	{"", "nodes", "Node", false, true, nil},
	{"", "persistentvolumes", "PersistentVolume", false, true, nil},
	{"apps", "deployments", "Deployment", true, true, nil},
	{"apps", "statefulsets", "StatefulSet", true, true, nil},
	{"apps", "daemonsets", "DaemonSet", true, true, nil},
	{"apps", "replicasets", "ReplicaSet", true, true, nil},
	{"apps", "controllerrevisions", "ControllerRevision", true, false, nil},
	{"batch", "jobs", "Job", true, true, nil},
	{"batch", "cronjobs", "CronJob", true, true, nil},
	{"autoscaling", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, true, nil},
	{"policy", "poddisruptionbudgets", "PodDisruptionBudget", true, true, nil},
	{"networking.k8s.io", "ingresses", "Ingress", true, true, nil},
	{"networking.k8s.io", "networkpolicies", "NetworkPolicy", true, false, nil},
	{"networking.k8s.io", "ingressclasses", "IngressClass", false, false, nil},
	{"discovery.k8s.io", "endpointslices", "EndpointSlice", true, false, nil},
	{"events.k8s.io", "events", "Event", true, false, nil},
	{"coordination.k8s.io", "leases", "Lease", true, false, nil},
	{"rbac.authorization.k8s.io", "roles", "Role", true, false, pathSegmentName},
	{"rbac.authorization.k8s.io", "rolebindings", "RoleBinding", true, false, pathSegmentName},
	{"rbac.authorization.k8s.io", "clusterroles", "ClusterRole", false, false, pathSegmentName},
	{"rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding", false, false, pathSegmentName},
	{"storage.k8s.io", "storageclasses", "StorageClass", false, false, nil},
	{"scheduling.k8s.io", "priorityclasses", "PriorityClass", false, false, nil},
	{"apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition", false, true, nil},
	{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false, false, nil},
	{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false, false, nil},
}

func (b builtin) toResource(version string) resource {
	fn := b.nameFn
	if fn == nil {
		fn = validation.NameIsDNSSubdomain
	}
	return resource{
		info: ResourceInfo{
			GVR:        schema.GroupVersionResource{Group: b.group, Version: version, Resource: b.resource},
			Kind:       b.kind,
			Namespaced: b.namespaced,
			Status:     b.status,
		},
		kindKnown:  true,
		scopeKnown: true,
		nameFn:     fn,
	}
}

func builtinByResource(gvr schema.GroupVersionResource) (resource, bool) {
	for _, b := range builtins {
		if b.group == gvr.Group && b.resource == gvr.Resource {
			return b.toResource(gvr.Version), true
		}
	}
	return resource{}, false
}

func builtinByKind(gvk schema.GroupVersionKind) (resource, bool) {
	for _, b := range builtins {
		if b.group == gvk.Group && b.kind == gvk.Kind {
			return b.toResource(gvk.Version), true
		}
	}
	return resource{}, false
}

func registered(info ResourceInfo) resource {
	return resource{info: info, kindKnown: true, scopeKnown: true, nameFn: validation.NameIsDNSSubdomain}
}

// guessed is what the fake assumes about a GVR it knows nothing about: the
// kind is the plural singularized and capitalized, and the scope follows
// each request.
func guessed(gvr schema.GroupVersionResource) resource {
	return resource{
		info:   ResourceInfo{GVR: gvr, Kind: kindFromResource(gvr.Resource)},
		nameFn: validation.NameIsDNSSubdomain,
	}
}

// pluralize returns the resource name the fake uses for kind when nothing
// registered says otherwise: the kind lower-cased, then "es" after s, x, z,
// ch and sh, "ies" in place of a y after a consonant, else "s". So "Widget"
// becomes "widgets" and "Policy" "policies", but "Person" becomes "persons"
// and "Endpoints" "endpointses": Register irregular plurals.
func pluralize(kind string) string {
	s := strings.ToLower(kind)
	switch {
	case s == "":
		return ""
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "z"),
		strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	default:
		return s + "s"
	}
}

// kindFromResource guesses a kind from a plural resource name, for a list
// of a resource with no objects and no registration. It is only a guess:
// "widgets" gives "Widget", "policies" "Policy".
func kindFromResource(plural string) string {
	s := plural
	switch {
	case strings.HasSuffix(s, "ies") && len(s) > 3:
		s = s[:len(s)-3] + "y"
	case strings.HasSuffix(s, "sses"), strings.HasSuffix(s, "xes"), strings.HasSuffix(s, "zes"),
		strings.HasSuffix(s, "ches"), strings.HasSuffix(s, "shes"):
		s = s[:len(s)-2]
	case strings.HasSuffix(s, "s") && len(s) > 1:
		s = s[:len(s)-1]
	}
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
