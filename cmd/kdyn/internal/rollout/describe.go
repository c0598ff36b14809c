package rollout

import (
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// This file describes a pod template in the layout of kubectl's
// describe.DescribePodTemplate, which rollout history --revision and
// undo --dry-run=client print: labels, annotations, service account, init
// containers and containers (image, ports, seccomp profile, command and
// args, resources, probes, environment, mounts and devices), volumes,
// topology spread constraints, priority class, node selectors,
// tolerations and scheduling group. Volumes of the in-tree cloud and
// network drivers that kubectl describes field by field (gcePersistentDisk,
// iscsi, rbd, cephfs, azureFile and the like) are shown by their type's
// name only.

// prefixWriter writes as kubectl's describe.PrefixWriter does: every piece
// written is indented by two spaces per level, plus the writer's own
// indent (a nested writer's), continuation pieces included.
type prefixWriter struct {
	b      *strings.Builder
	indent int
}

func (w prefixWriter) write(level int, format string, args ...any) {
	w.b.WriteString(strings.Repeat("  ", level+w.indent))
	fmt.Fprintf(w.b, format, args...)
}

// line is WriteLine: s and a newline, indented by the writer's own indent.
func (w prefixWriter) line(s string) { w.write(0, "%s\n", s) }

func (w prefixWriter) nested(levels int) prefixWriter {
	return prefixWriter{b: w.b, indent: w.indent + levels}
}

// describeTemplate writes template (nil when the object has none).
func describeTemplate(b *strings.Builder, template map[string]any) {
	var out strings.Builder
	w := prefixWriter{b: &out}
	w.write(0, "Pod Template:\n")
	if template == nil {
		w.write(1, "<unset>")
		b.WriteString(printers.EscapeTerminal(out.String()))
		return
	}
	md, _ := template["metadata"].(map[string]any)
	spec, _ := template["spec"].(map[string]any)
	labelsMultiline(w, "  Labels", stringMap(md, "labels"))
	if ann := stringMap(md, "annotations"); len(ann) > 0 {
		annotationsMultiline(w, "  Annotations", ann)
	}
	if sa := str(spec, "serviceAccountName"); sa != "" {
		w.write(1, "Service Account:\t%s\n", sa)
	}
	if init := slice(spec, "initContainers"); len(init) > 0 {
		describeContainers(w, "Init Containers", init)
	}
	describeContainers(w, "Containers", slice(spec, "containers"))
	describeVolumes(w, slice(spec, "volumes"))
	describeSpreadConstraints(w, slice(spec, "topologySpreadConstraints"))
	if pc := str(spec, "priorityClassName"); pc != "" {
		w.write(1, "Priority Class Name:\t%s\n", pc)
	}
	labelsMultiline(w, "  Node-Selectors", stringMap(spec, "nodeSelector"))
	describeTolerations(w, slice(spec, "tolerations"))
	if group, ok := spec["schedulingGroup"].(map[string]any); ok {
		w.write(0, "  SchedulingGroup:\n")
		w.write(1, "PodGroupName:\t%s\n", str(group, "podGroupName"))
	}
	b.WriteString(printers.EscapeTerminal(out.String()))
}

// Readers of a JSON object's members ("" or nil when absent).

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func slice(m map[string]any, key string) []any {
	s, _ := m[key].([]any)
	return s
}

func object(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

func boolean(m map[string]any, key string) bool {
	v, _ := m[key].(bool)
	return v
}

func stringMap(m map[string]any, key string) map[string]string {
	out, _, _ := unstructured.NestedStringMap(m, key)
	return out
}

// labelsMultiline is kubectl's printLabelsMultiline: sorted key=value
// pairs, one a line, or <none>.
func labelsMultiline(w prefixWriter, title string, labels map[string]string) {
	keyValueLines(w, 0, title, labels, 0)
}

// keyValueLines writes "title:" at level and m's sorted key=value pairs,
// one a line (each cut at truncate characters when truncate > 0), or
// <none>; as kubectl's writer does, each line after the first starts with
// a piece for the indent and one for the tab.
func keyValueLines(w prefixWriter, level int, title string, m map[string]string, truncate int) {
	w.write(level, "%s:\t", title)
	if len(m) == 0 {
		w.line("<none>")
		return
	}
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			w.write(level, "")
			w.write(level, "\t")
		}
		line := k + "=" + m[k]
		if truncate > 0 && len(line) > truncate {
			line = line[:truncate] + "..."
		}
		w.write(level, "%s\n", line)
	}
}

// maxAnnotationLen is where kubectl breaks an annotation over lines.
const maxAnnotationLen = 140

// annotationsMultiline is kubectl's printAnnotationsMultiline: sorted
// "key: value" pairs without the last-applied configuration; a value
// with a newline, or too long, on lines of its own, each cut at 138
// characters.
func annotationsMultiline(w prefixWriter, title string, annotations map[string]string) {
	w.write(0, "%s:\t", title)
	delete(annotations, kunstructured.LastAppliedAnnotation)
	if len(annotations) == 0 {
		w.line("<none>")
		return
	}
	for i, k := range slices.Sorted(maps.Keys(annotations)) {
		if i > 0 {
			w.write(0, "\t")
		}
		value := strings.TrimSuffix(annotations[k], "\n")
		if len(value)+len(k)+2 <= maxAnnotationLen && !strings.Contains(value, "\n") {
			w.write(0, "%s: %s\n", k, value)
			continue
		}
		w.write(0, "%s:\n", k)
		for _, s := range strings.Split(value, "\n") {
			if len(s) > maxAnnotationLen-2 {
				s = s[:maxAnnotationLen-2] + "..."
			}
			w.write(0, "\t  %s\n", s)
		}
	}
}

func describeContainers(w prefixWriter, label string, containers []any) {
	none := ""
	if len(containers) == 0 {
		none = " <none>"
	}
	w.write(0, "  %s:%s\n", label, none)
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		w.write(1, " %v:\n", cm["name"])
		w.write(2, "Image:\t%s\n", str(cm, "image"))
		var cp, hp []string
		for _, p := range slice(cm, "ports") {
			pm, _ := p.(map[string]any)
			suffix := ""
			if n := str(pm, "name"); n != "" {
				suffix = " (" + n + ")"
			}
			cp = append(cp, fmt.Sprintf("%d/%s%s", intOf(pm["containerPort"]), str(pm, "protocol"), suffix))
			hp = append(hp, fmt.Sprintf("%d/%s%s", intOf(pm["hostPort"]), str(pm, "protocol"), suffix))
		}
		writePorts(w, "Port", cp)
		writePorts(w, "Host Port", hp)
		if sp := object(object(cm, "securityContext"), "seccompProfile"); sp != nil {
			w.write(2, "SeccompProfile:\t%s\n", str(sp, "type"))
			if str(sp, "type") == "Localhost" {
				w.write(3, "LocalhostProfile:\t%s\n", str(sp, "localhostProfile"))
			}
		}
		for _, f := range []struct{ key, title string }{{"command", "Command"}, {"args", "Args"}} {
			if list, _, _ := unstructured.NestedStringSlice(cm, f.key); len(list) > 0 {
				w.write(2, "%s:\n", f.title)
				for _, s := range list {
					for _, line := range strings.Split(s, "\n") {
						w.write(3, "%s\n", line)
					}
				}
			}
		}
		for _, f := range []struct{ key, title string }{{"limits", "Limits"}, {"requests", "Requests"}} {
			m := object(object(cm, "resources"), f.key)
			if len(m) > 0 {
				w.write(2, "%s:\n", f.title)
			}
			for _, k := range slices.Sorted(maps.Keys(m)) {
				w.write(3, "%s:\t%s\n", k, quantityString(m[k]))
			}
		}
		for _, f := range []struct{ key, title string }{{"livenessProbe", "Liveness"}, {"readinessProbe", "Readiness"}, {"startupProbe", "Startup"}} {
			if p := object(cm, f.key); p != nil {
				w.write(2, "%s:\t%s\n", f.title, describeProbe(p))
			}
		}
		describeEnv(w, cm)
		describeMounts(w, cm)
	}
}

// writePorts writes "Port:" with one port or none, "Ports:" with several.
func writePorts(w prefixWriter, title string, ports []string) {
	switch len(ports) {
	case 0:
		w.write(2, "%s:\t<none>\n", title)
	case 1:
		w.write(2, "%s:\t%s\n", title, ports[0])
	default:
		w.write(2, "%ss:\t%s\n", title, strings.Join(ports, ", "))
	}
}

// quantityString is a quantity in its canonical form (as the server sends
// it, and as kubectl prints it).
func quantityString(v any) string {
	s := fmt.Sprint(v)
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return s
	}
	return q.String()
}

// describeProbe is kubectl's DescribeProbe.
func describeProbe(p map[string]any) string {
	attrs := fmt.Sprintf("delay=%ds timeout=%ds period=%ds successThreshold=%d failureThreshold=%d",
		intOf(p["initialDelaySeconds"]), intOf(p["timeoutSeconds"]), intOf(p["periodSeconds"]), intOf(p["successThreshold"]), intOf(p["failureThreshold"]))
	switch {
	case p["exec"] != nil:
		command, _, _ := unstructured.NestedStringSlice(p, "exec", "command")
		return fmt.Sprintf("exec %v %s", command, attrs)
	case p["httpGet"] != nil:
		get := object(p, "httpGet")
		u := &url.URL{Scheme: strings.ToLower(str(get, "scheme")), Host: str(get, "host"), Path: str(get, "path")}
		if port := intOrString(get["port"]); port != "" {
			u.Host = net.JoinHostPort(u.Host, port)
		}
		return fmt.Sprintf("http-get %s %s", u.String(), attrs)
	case p["tcpSocket"] != nil:
		tcp := object(p, "tcpSocket")
		return fmt.Sprintf("tcp-socket %s:%s %s", str(tcp, "host"), intOrString(tcp["port"]), attrs)
	case p["grpc"] != nil:
		grpc := object(p, "grpc")
		return fmt.Sprintf("grpc <pod>:%d %s %s", intOf(grpc["port"]), str(grpc, "service"), attrs)
	}
	return "unknown " + attrs
}

// intOrString is an int-or-string field as kubectl prints it (0 when
// absent).
func intOrString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return strconv.FormatInt(intOf(v), 10)
}

func describeEnv(w prefixWriter, c map[string]any) {
	if from := slice(c, "envFrom"); len(from) > 0 {
		w.write(2, "Environment Variables from:\n")
		for _, e := range from {
			em, _ := e.(map[string]any)
			ref, kind := object(em, "configMapRef"), "ConfigMap"
			if ref == nil {
				ref, kind = object(em, "secretRef"), "Secret"
			}
			if ref == nil {
				kind = ""
			}
			if prefix := str(em, "prefix"); prefix != "" {
				w.write(3, "%s\t%s with prefix '%s'\tOptional: %t\n", str(ref, "name"), kind, prefix, boolean(ref, "optional"))
			} else {
				w.write(3, "%s\t%s\tOptional: %t\n", str(ref, "name"), kind, boolean(ref, "optional"))
			}
		}
	}
	env := slice(c, "env")
	if len(env) == 0 {
		w.write(2, "Environment:\t<none>\n")
	} else {
		w.write(2, "Environment:\n")
	}
	for _, e := range env {
		em, _ := e.(map[string]any)
		name := str(em, "name")
		from := object(em, "valueFrom")
		if from == nil {
			for i, line := range strings.Split(str(em, "value"), "\n") {
				if i == 0 {
					w.write(3, "%s:\t%s\n", name, line)
				} else {
					w.write(3, "\t%s\n", line)
				}
			}
			continue
		}
		switch {
		case from["fieldRef"] != nil:
			ref := object(from, "fieldRef")
			w.write(3, "%s:\t (%s:%s)\n", name, str(ref, "apiVersion"), str(ref, "fieldPath"))
		case from["resourceFieldRef"] != nil:
			ref := object(from, "resourceFieldRef")
			value := containerResourceValue(c, ref)
			if value == "0" && (str(ref, "resource") == "limits.cpu" || str(ref, "resource") == "limits.memory") {
				value = "node allocatable"
			}
			w.write(3, "%s:\t%s (%s)\n", name, value, str(ref, "resource"))
		case from["secretKeyRef"] != nil:
			ref := object(from, "secretKeyRef")
			w.write(3, "%s:\t<set to the key '%s' in secret '%s'>\tOptional: %t\n", name, str(ref, "key"), str(ref, "name"), boolean(ref, "optional"))
		case from["configMapKeyRef"] != nil:
			ref := object(from, "configMapKeyRef")
			w.write(3, "%s:\t<set to the key '%s' of config map '%s'>\tOptional: %t\n", name, str(ref, "key"), str(ref, "name"), boolean(ref, "optional"))
		}
	}
}

// containerResourceValue is the value a resourceFieldRef gives container
// c, as the kubelet computes it: the limit or request (0 when unset)
// divided by the divisor (1 when unset or 0), rounded up; "" for a
// resource the kubelet does not expose.
func containerResourceValue(c map[string]any, ref map[string]any) string {
	divisor := resource.MustParse("1")
	if d, err := resource.ParseQuantity(fmt.Sprint(ref["divisor"])); err == nil && !d.IsZero() {
		divisor = d
	}
	field, name, _ := strings.Cut(str(ref, "resource"), ".")
	if (field != "limits" && field != "requests") ||
		(name != "cpu" && name != "memory" && name != "ephemeral-storage" && !strings.HasPrefix(name, "hugepages-")) {
		return ""
	}
	var q resource.Quantity
	if v, ok := object(object(c, "resources"), field)[name]; ok {
		if parsed, err := resource.ParseQuantity(fmt.Sprint(v)); err == nil {
			q = parsed
		}
	}
	if name == "cpu" {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10)
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10)
}

func describeMounts(w prefixWriter, c map[string]any) {
	mounts := slice(c, "volumeMounts")
	none := ""
	if len(mounts) == 0 {
		none = "\t<none>"
	}
	w.write(2, "Mounts:%s\n", none)
	sortBy(mounts, "mountPath")
	for _, m := range mounts {
		mm, _ := m.(map[string]any)
		flags := []string{"rw"}
		if boolean(mm, "readOnly") {
			flags[0] = "ro"
		}
		if sp := str(mm, "subPath"); sp != "" {
			flags = append(flags, fmt.Sprintf("path=%q", sp))
		}
		w.write(3, "%s from %s (%s)\n", str(mm, "mountPath"), str(mm, "name"), strings.Join(flags, ","))
	}
	if devices := slice(c, "volumeDevices"); len(devices) > 0 {
		w.write(2, "Devices:%s\n", none)
		sortBy(devices, "devicePath")
		for _, d := range devices {
			dm, _ := d.(map[string]any)
			w.write(3, "%s from %s\n", str(dm, "devicePath"), str(dm, "name"))
		}
	}
}

// sortBy sorts a list of objects by a string member, keeping the order of
// equal ones.
func sortBy(list []any, key string) {
	sort.SliceStable(list, func(i, j int) bool {
		a, _ := list[i].(map[string]any)
		b, _ := list[j].(map[string]any)
		return str(a, key) < str(b, key)
	})
}

// volumeKinds are the volume sources kubectl describes, in the order it
// looks for them.
var volumeKinds = []string{
	"hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "configMap", "nfs", "iscsi",
	"glusterfs", "persistentVolumeClaim", "ephemeral", "rbd", "quobyte", "downwardAPI", "azureDisk", "vsphereVolume", "cinder",
	"photonPersistentDisk", "portworxVolume", "scaleIO", "cephfs", "storageos", "fc", "azureFile", "flexVolume", "flocker",
	"projected", "csi", "image",
}

func describeVolumes(w prefixWriter, volumes []any) {
	if len(volumes) == 0 {
		w.write(0, "  Volumes:\t<none>\n")
		return
	}
	w.write(0, "  Volumes:\n")
	for _, v := range volumes {
		vm, _ := v.(map[string]any)
		w.write(1, " %v:\n", vm["name"])
		kind := ""
		for _, k := range volumeKinds {
			if vm[k] != nil {
				kind = k
				break
			}
		}
		src := object(vm, kind)
		switch kind {
		case "":
			w.write(1, "<unknown>\n")
		case "hostPath":
			typ := str(src, "type")
			if _, ok := src["type"]; !ok {
				typ = "<none>"
			}
			w.write(2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%s\n    HostPathType:\t%s\n", str(src, "path"), typ)
		case "emptyDir":
			limit := "<unset>"
			if q, err := resource.ParseQuantity(fmt.Sprint(src["sizeLimit"])); err == nil && q.Sign() > 0 {
				limit = q.String()
			}
			w.write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t%s\n    SizeLimit:\t%s\n", str(src, "medium"), limit)
		case "secret":
			w.write(2, "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t%s\n    Optional:\t%t\n", str(src, "secretName"), boolean(src, "optional"))
		case "configMap":
			w.write(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t%s\n    Optional:\t%t\n", str(src, "name"), boolean(src, "optional"))
		case "nfs":
			w.write(2, "Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n    Server:\t%s\n    Path:\t%s\n    ReadOnly:\t%t\n", str(src, "server"), str(src, "path"), boolean(src, "readOnly"))
		case "persistentVolumeClaim":
			w.write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t%s\n    ReadOnly:\t%t\n", str(src, "claimName"), boolean(src, "readOnly"))
		case "ephemeral":
			w.write(2, "Type:\tEphemeralVolume (an inline specification for a volume that gets created and deleted with the pod)\n")
			if claim := object(src, "volumeClaimTemplate"); claim != nil {
				describeClaimTemplate(w.nested(2), claim)
			}
		case "downwardAPI":
			w.write(2, "Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n")
			for _, it := range slice(src, "items") {
				im, _ := it.(map[string]any)
				if ref := object(im, "fieldRef"); ref != nil {
					w.write(3, "%s -> %s\n", str(ref, "fieldPath"), str(im, "path"))
				}
				if ref := object(im, "resourceFieldRef"); ref != nil {
					w.write(3, "%s -> %s\n", str(ref, "resource"), str(im, "path"))
				}
			}
		case "projected":
			w.write(2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n")
			for _, s := range slice(src, "sources") {
				sm, _ := s.(map[string]any)
				switch {
				case sm["secret"] != nil:
					w.write(2, "SecretName:\t%s\n    Optional:\t%t\n", str(object(sm, "secret"), "name"), boolean(object(sm, "secret"), "optional"))
				case sm["downwardAPI"] != nil:
					w.write(2, "DownwardAPI:\ttrue\n")
				case sm["configMap"] != nil:
					w.write(2, "ConfigMapName:\t%s\n    Optional:\t%t\n", str(object(sm, "configMap"), "name"), boolean(object(sm, "configMap"), "optional"))
				case sm["serviceAccountToken"] != nil:
					w.write(2, "TokenExpirationSeconds:\t%d\n", intOf(object(sm, "serviceAccountToken")["expirationSeconds"]))
				}
			}
		case "csi":
			w.write(2, "Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t%s\n    FSType:\t%s\n    ReadOnly:\t%t\n", str(src, "driver"), str(src, "fsType"), boolean(src, "readOnly"))
			describeVolumeAttributes(w, stringMap(src, "volumeAttributes"))
		case "image":
			w.write(2, "Type:\tImage (a container image or OCI artifact)\n    Reference:\t%s\n    PullPolicy:\t%s\n", str(src, "reference"), str(src, "pullPolicy"))
		default:
			w.write(2, "Type:\t%s\n", kind)
		}
	}
}

// describeVolumeAttributes is kubectl's layout of a CSI volume's
// attributes, whose continuation lines are indented three times.
func describeVolumeAttributes(w prefixWriter, attrs map[string]string) {
	keyValueLines(w, 2, "VolumeAttributes", attrs, maxAnnotationLen)
}

// describeClaimTemplate is kubectl's description of an ephemeral volume's
// claim template (its printPersistentVolumeClaim of a partial claim).
func describeClaimTemplate(w prefixWriter, claim map[string]any) {
	md, spec := object(claim, "metadata"), object(claim, "spec")
	ann := stringMap(md, "annotations")
	class, ok := ann["volume.beta.kubernetes.io/storage-class"]
	if !ok {
		class = str(spec, "storageClassName")
	}
	w.write(0, "StorageClass:\t%s\n", class)
	w.write(0, "Volume:\t%s\n", str(spec, "volumeName"))
	labelsMultiline(w, "Labels", stringMap(md, "labels"))
	annotationsMultiline(w, "Annotations", ann)
	capacity := ""
	if str(spec, "volumeName") != "" {
		// A template has no status: kubectl prints its zero capacity.
		capacity = "0"
	}
	w.write(0, "Capacity:\t%s\n", capacity)
	w.write(0, "Access Modes:\t\n")
	if mode, ok := spec["volumeMode"].(string); ok {
		w.write(0, "VolumeMode:\t%s\n", mode)
	}
	if ds := object(spec, "dataSource"); ds != nil {
		w.write(0, "DataSource:\n")
		if group, ok := ds["apiGroup"].(string); ok {
			w.write(1, "APIGroup:\t%s\n", group)
		}
		w.write(1, "Kind:\t%s\n", str(ds, "kind"))
		w.write(1, "Name:\t%s\n", str(ds, "name"))
	}
}

// describeSpreadConstraints is kubectl's describeTopologySpreadConstraints:
// sorted by topology key.
func describeSpreadConstraints(w prefixWriter, constraints []any) {
	if len(constraints) == 0 {
		return
	}
	sortBy(constraints, "topologyKey")
	w.write(0, "  Topology Spread Constraints:\t")
	for i, c := range constraints {
		cm, _ := c.(map[string]any)
		if i > 0 {
			w.write(0, "  ")
			w.write(0, "\t")
		}
		w.write(0, "%s:%s when max skew %d is exceeded", str(cm, "topologyKey"), str(cm, "whenUnsatisfiable"), intOf(cm["maxSkew"]))
		if sel := object(cm, "labelSelector"); sel != nil {
			var ls metav1.LabelSelector
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, &ls); err == nil {
				w.write(0, " for selector %s", metav1.FormatLabelSelector(&ls))
			}
		}
		w.write(0, "\n")
	}
}

// describeTolerations is kubectl's printPodTolerationsMultiline: sorted by
// key.
func describeTolerations(w prefixWriter, tolerations []any) {
	w.write(0, "  Tolerations:\t")
	if len(tolerations) == 0 {
		w.line("<none>")
		return
	}
	sortBy(tolerations, "key")
	for i, t := range tolerations {
		tm, _ := t.(map[string]any)
		if i > 0 {
			w.write(0, "\t")
		}
		key, value, effect := str(tm, "key"), str(tm, "value"), str(tm, "effect")
		w.write(0, "%s", key)
		if value != "" {
			w.write(0, "=%s", value)
		}
		if effect != "" {
			w.write(0, ":%s", effect)
		}
		if str(tm, "operator") == "Exists" && value == "" {
			if key != "" || effect != "" {
				w.write(0, " op=Exists")
			} else {
				w.write(0, "op=Exists")
			}
		}
		if s, ok := tm["tolerationSeconds"]; ok && s != nil {
			w.write(0, " for %ds", intOf(s))
		}
		w.write(0, "\n")
	}
}

func intOf(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}
