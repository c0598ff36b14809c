package describe

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// describePod is kubectl's pod description, read from the pod's JSON.
func describePod(w *writer, obj *unstructured.Unstructured, pod gjson.Result) {
	spec, status := pod.Get("spec"), pod.Get("status")
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.write(0, "Namespace:\t%s\n", obj.GetNamespace())
	if p := spec.Get("priority"); p.Exists() {
		w.write(0, "Priority:\t%d\n", p.Int())
	}
	if s := spec.Get("priorityClassName").String(); s != "" {
		w.write(0, "Priority Class Name:\t%s\n", s)
	}
	if s := spec.Get("runtimeClassName").String(); s != "" {
		w.write(0, "Runtime Class Name:\t%s\n", s)
	}
	if s := spec.Get("serviceAccountName").String(); s != "" {
		w.write(0, "Service Account:\t%s\n", s)
	}
	if node := spec.Get("nodeName").String(); node == "" {
		w.write(0, "Node:\t<none>\n")
	} else {
		w.write(0, "Node:\t%s\n", node+"/"+status.Get("hostIP").String())
	}
	if t := status.Get("startTime"); t.Exists() {
		w.write(0, "Start Time:\t%s\n", t.Time().Format(time.RFC1123Z))
	}
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	phase := status.Get("phase").String()
	if del := obj.GetDeletionTimestamp(); del != nil && phase != "Failed" && phase != "Succeeded" {
		w.write(0, "Status:\tTerminating (lasts %s)\n", since(del.Time))
		if g := obj.GetDeletionGracePeriodSeconds(); g != nil {
			w.write(0, "Termination Grace Period:\t%ds\n", *g)
		}
	} else {
		w.write(0, "Status:\t%s\n", phase)
	}
	if s := status.Get("reason").String(); s != "" {
		w.write(0, "Reason:\t%s\n", s)
	}
	if s := status.Get("message").String(); s != "" {
		w.write(0, "Message:\t%s\n", s)
	}
	if sp := spec.Get("securityContext.seccompProfile"); sp.Exists() {
		w.write(0, "SeccompProfile:\t%s\n", sp.Get("type").String())
		if sp.Get("type").String() == "Localhost" {
			w.write(0, "LocalhostProfile:\t%s\n", sp.Get("localhostProfile").String())
		}
	}
	w.write(0, "IP:\t%s\n", status.Get("podIP").String())
	if ips := status.Get("podIPs").Array(); len(ips) == 0 {
		w.write(0, "IPs:\t<none>\n")
	} else {
		w.write(0, "IPs:\n")
		for _, ip := range ips {
			w.write(1, "IP:\t%s\n", ip.Get("ip").String())
		}
	}
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			w.write(0, "Controlled By:\t%s/%s\n", ref.Kind, ref.Name)
			break
		}
	}
	if s := status.Get("nominatedNodeName").String(); s != "" {
		w.write(0, "NominatedNodeName:\t%s\n", s)
	}
	if r := spec.Get("resources"); r.Exists() {
		w.write(0, "Resources:\n")
		resources(w, r, 1)
	}
	if cs := spec.Get("initContainers").Array(); len(cs) > 0 {
		containers(w, "Init Containers", "", cs, status.Get("initContainerStatuses").Array(), pod)
	}
	containers(w, "Containers", "", spec.Get("containers").Array(), status.Get("containerStatuses").Array(), pod)
	if cs := spec.Get("ephemeralContainers").Array(); len(cs) > 0 {
		containers(w, "Ephemeral Containers", "", cs, status.Get("ephemeralContainerStatuses").Array(), pod)
	}
	conditions := status.Get("conditions").Array()
	if gates := spec.Get("readinessGates").Array(); len(gates) > 0 {
		w.write(0, "Readiness Gates:\n  Type\tStatus\n")
		for _, g := range gates {
			st := "<none>"
			for _, c := range conditions {
				if c.Get("type").String() == g.Get("conditionType").String() {
					st = c.Get("status").String()
					break
				}
			}
			w.write(1, "%v \t%v \n", g.Get("conditionType").String(), st)
		}
	}
	if len(conditions) > 0 {
		w.write(0, "Conditions:\n  Type\tStatus\n")
		for _, c := range conditions {
			w.write(1, "%v \t%v \n", c.Get("type").String(), c.Get("status").String())
		}
	}
	volumes(w, "", spec.Get("volumes").Array())
	w.write(0, "QoS Class:\t%s\n", qosClass(spec, status))
	w.labels("Node-Selectors", stringMap(spec.Get("nodeSelector")))
	tolerations(w, "Tolerations", spec.Get("tolerations").Array())
}

// podTemplate is kubectl's description of a pod template (of a
// workload), two spaces in.
func podTemplate(w *writer, t gjson.Result) {
	w.write(0, "Pod Template:\n")
	if !t.Exists() {
		w.write(1, "<unset>")
		return
	}
	w.labels("  Labels", stringMap(t.Get("metadata.labels")))
	if ann := stringMap(t.Get("metadata.annotations")); len(ann) > 0 {
		w.annotations("  Annotations", ann)
	}
	spec := t.Get("spec")
	if sa := spec.Get("serviceAccountName").String(); sa != "" {
		w.write(1, "Service Account:\t%s\n", sa)
	}
	if cs := spec.Get("initContainers").Array(); len(cs) > 0 {
		containers(w, "Init Containers", "  ", cs, nil, gjson.Result{})
	}
	containers(w, "Containers", "  ", spec.Get("containers").Array(), nil, gjson.Result{})
	volumes(w, "  ", spec.Get("volumes").Array())
	if pc := spec.Get("priorityClassName").String(); pc != "" {
		w.write(1, "Priority Class Name:\t%s\n", pc)
	}
	w.labels("  Node-Selectors", stringMap(spec.Get("nodeSelector")))
	tolerations(w, "  Tolerations", spec.Get("tolerations").Array())
}

// containers writes one section of containers with their statuses.
func containers(w *writer, title, space string, cs, statuses []gjson.Result, pod gjson.Result) {
	if len(cs) == 0 {
		w.write(0, "%s%s: <none>\n", space, title)
	} else {
		w.write(0, "%s%s:\n", space, title)
	}
	nameIndent := ""
	if space != "" {
		nameIndent = " "
	}
	byName := map[string]gjson.Result{}
	for _, s := range statuses {
		byName[s.Get("name").String()] = s
	}
	for _, c := range cs {
		st, ok := byName[c.Get("name").String()]
		w.write(1, "%s%v:\n", nameIndent, c.Get("name").String())
		if ok {
			w.write(2, "Container ID:\t%s\n", st.Get("containerID").String())
		}
		w.write(2, "Image:\t%s\n", c.Get("image").String())
		if ok {
			w.write(2, "Image ID:\t%s\n", st.Get("imageID").String())
		}
		ports := c.Get("ports").Array()
		for _, p := range []struct{ title, field string }{{"Port", "containerPort"}, {"Host Port", "hostPort"}} {
			var list []string
			for _, port := range ports {
				s := fmt.Sprintf("%d/%s", port.Get(p.field).Int(), port.Get("protocol").String())
				if n := port.Get("name").String(); n != "" {
					s += " (" + n + ")"
				}
				list = append(list, s)
			}
			switch {
			case len(list) > 1:
				w.write(2, "%ss:\t%s\n", p.title, strings.Join(list, ", "))
			case len(list) == 1:
				w.write(2, "%s:\t%s\n", p.title, list[0])
			default:
				w.write(2, "%s:\t<none>\n", p.title)
			}
		}
		if sp := c.Get("securityContext.seccompProfile"); sp.Exists() {
			w.write(2, "SeccompProfile:\t%s\n", sp.Get("type").String())
			if sp.Get("type").String() == "Localhost" {
				w.write(3, "LocalhostProfile:\t%s\n", sp.Get("localhostProfile").String())
			}
		}
		for _, words := range []struct{ title, field string }{{"Command", "command"}, {"Args", "args"}} {
			if ws := c.Get(words.field).Array(); len(ws) > 0 {
				w.write(2, "%s:\n", words.title)
				for _, word := range ws {
					for _, s := range strings.Split(word.String(), "\n") {
						w.write(3, "%s\n", s)
					}
				}
			}
		}
		if ok {
			state(w, "State", st.Get("state"))
			if last := st.Get("lastState"); last.Get("terminated").Exists() {
				state(w, "Last State", last)
			}
			w.write(2, "Ready:\t%s\n", boolWord(st.Get("ready").Bool()))
			w.write(2, "Restart Count:\t%d\n", st.Get("restartCount").Int())
		}
		resources(w, c.Get("resources"), 2)
		for _, probe := range []struct{ title, field string }{{"Liveness", "livenessProbe"}, {"Readiness", "readinessProbe"}, {"Startup", "startupProbe"}} {
			if p := c.Get(probe.field); p.Exists() {
				w.write(2, "%s:\t%s\n", probe.title, describeProbe(p))
			}
		}
		if from := c.Get("envFrom").Array(); len(from) > 0 {
			w.write(2, "Environment Variables from:\n")
			for _, e := range from {
				kind, name := "ConfigMap", e.Get("configMapRef.name").String()
				optional := e.Get("configMapRef.optional").Bool()
				if e.Get("secretRef").Exists() {
					kind, name, optional = "Secret", e.Get("secretRef.name").String(), e.Get("secretRef.optional").Bool()
				}
				if prefix := e.Get("prefix").String(); prefix != "" {
					w.write(3, "%s\t%s with prefix '%s'\tOptional: %t\n", name, kind, prefix, optional)
				} else {
					w.write(3, "%s\t%s\tOptional: %t\n", name, kind, optional)
				}
			}
		}
		env(w, c.Get("env").Array(), pod)
		mounts := c.Get("volumeMounts").Array()
		if len(mounts) == 0 {
			w.write(2, "Mounts:\t<none>\n")
		} else {
			w.write(2, "Mounts:\n")
			sort.SliceStable(mounts, func(i, j int) bool { return mounts[i].Get("mountPath").String() < mounts[j].Get("mountPath").String() })
			for _, m := range mounts {
				flags := []string{"rw"}
				if m.Get("readOnly").Bool() {
					flags[0] = "ro"
				}
				if sub := m.Get("subPath").String(); sub != "" {
					flags = append(flags, fmt.Sprintf("path=%q", sub))
				}
				w.write(3, "%s from %s (%s)\n", m.Get("mountPath").String(), m.Get("name").String(), strings.Join(flags, ","))
			}
		}
	}
}

// state writes a container state: Running, Waiting or Terminated, with
// its details.
func state(w *writer, title string, s gjson.Result) {
	switch {
	case s.Get("running").Exists():
		w.write(2, "%s:\tRunning\n", title)
		w.write(3, "Started:\t%v\n", s.Get("running.startedAt").Time().Format(time.RFC1123Z))
	case s.Get("waiting").Exists():
		w.write(2, "%s:\tWaiting\n", title)
		if r := s.Get("waiting.reason").String(); r != "" {
			w.write(3, "Reason:\t%s\n", r)
		}
	case s.Get("terminated").Exists():
		t := s.Get("terminated")
		w.write(2, "%s:\tTerminated\n", title)
		if r := t.Get("reason").String(); r != "" {
			w.write(3, "Reason:\t%s\n", r)
		}
		if m := t.Get("message").String(); m != "" {
			w.write(3, "Message:\t%s\n", m)
		}
		w.write(3, "Exit Code:\t%d\n", t.Get("exitCode").Int())
		if sig := t.Get("signal").Int(); sig > 0 {
			w.write(3, "Signal:\t%d\n", sig)
		}
		w.write(3, "Started:\t%s\n", t.Get("startedAt").Time().Format(time.RFC1123Z))
		w.write(3, "Finished:\t%s\n", t.Get("finishedAt").Time().Format(time.RFC1123Z))
	default:
		w.write(2, "%s:\tWaiting\n", title)
	}
}

// resources writes limits and requests, each sorted by resource name.
func resources(w *writer, r gjson.Result, level int) {
	for _, part := range []struct{ title, field string }{{"Limits", "limits"}, {"Requests", "requests"}} {
		m := stringMap(r.Get(part.field))
		if len(m) == 0 {
			continue
		}
		w.write(level, "%s:\n", part.title)
		for _, k := range sortedKeys(m) {
			w.write(level+1, "%s:\t%s\n", k, m[k])
		}
	}
}

// env writes a container's environment as kubectl does: a field of the
// pod resolved, other references described.
func env(w *writer, vars []gjson.Result, pod gjson.Result) {
	if len(vars) == 0 {
		w.write(2, "Environment:\t<none>\n")
		return
	}
	w.write(2, "Environment:\n")
	for _, e := range vars {
		name, from := e.Get("name").String(), e.Get("valueFrom")
		switch {
		case !from.Exists():
			for i, s := range strings.Split(e.Get("value").String(), "\n") {
				if i == 0 {
					w.write(3, "%s:\t%s\n", name, s)
				} else {
					w.write(3, "\t%s\n", s)
				}
			}
		case from.Get("fieldRef").Exists():
			path := from.Get("fieldRef.fieldPath").String()
			w.write(3, "%s:\t%s (%s:%s)\n", name, podField(pod, path), from.Get("fieldRef.apiVersion").String(), path)
		case from.Get("resourceFieldRef").Exists():
			w.write(3, "%s:\t%s (%s)\n", name, "", from.Get("resourceFieldRef.resource").String())
		case from.Get("secretKeyRef").Exists():
			r := from.Get("secretKeyRef")
			w.write(3, "%s:\t<set to the key '%s' in secret '%s'>\tOptional: %t\n", name, r.Get("key").String(), r.Get("name").String(), r.Get("optional").Bool())
		case from.Get("configMapKeyRef").Exists():
			r := from.Get("configMapKeyRef")
			w.write(3, "%s:\t<set to the key '%s' of config map '%s'>\tOptional: %t\n", name, r.Get("key").String(), r.Get("name").String(), r.Get("optional").Bool())
		default:
			w.write(3, "%s:\t<unknown>\n", name)
		}
	}
}

// describeProbe is a probe on one line: the action, then its timing.
func describeProbe(p gjson.Result) string {
	attrs := fmt.Sprintf("delay=%ds timeout=%ds period=%ds successThreshold=%d failureThreshold=%d",
		p.Get("initialDelaySeconds").Int(), p.Get("timeoutSeconds").Int(), p.Get("periodSeconds").Int(),
		p.Get("successThreshold").Int(), p.Get("failureThreshold").Int())
	switch {
	case p.Get("exec").Exists():
		var cmd []string
		for _, c := range p.Get("exec.command").Array() {
			cmd = append(cmd, c.String())
		}
		return fmt.Sprintf("exec %v %s", cmd, attrs)
	case p.Get("httpGet").Exists():
		g := p.Get("httpGet")
		u := url.URL{Scheme: strings.ToLower(g.Get("scheme").String()), Host: g.Get("host").String(), Path: g.Get("path").String()}
		if port := g.Get("port").String(); port != "" {
			u.Host = net.JoinHostPort(u.Host, port)
		}
		return fmt.Sprintf("http-get %s %s", u.String(), attrs)
	case p.Get("tcpSocket").Exists():
		return fmt.Sprintf("tcp-socket %s:%s %s", p.Get("tcpSocket.host").String(), p.Get("tcpSocket.port").String(), attrs)
	case p.Get("grpc").Exists():
		return fmt.Sprintf("grpc <pod>:%d %s %s", p.Get("grpc.port").Int(), p.Get("grpc.service").String(), attrs)
	}
	return fmt.Sprintf("unknown %s", attrs)
}

// volumes writes the pod's volumes, the common sources in kubectl's words.
func volumes(w *writer, space string, vs []gjson.Result) {
	if len(vs) == 0 {
		w.write(0, "%sVolumes:\t<none>\n", space)
		return
	}
	w.write(0, "%sVolumes:\n", space)
	nameIndent := ""
	if space != "" {
		nameIndent = " "
	}
	for _, v := range vs {
		w.write(1, "%s%v:\n", nameIndent, v.Get("name").String())
		switch {
		case v.Get("hostPath").Exists():
			t := v.Get("hostPath.type").String()
			if !v.Get("hostPath.type").Exists() {
				t = "<none>"
			}
			w.write(2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%v\n    HostPathType:\t%v\n", v.Get("hostPath.path").String(), t)
		case v.Get("emptyDir").Exists():
			limit := v.Get("emptyDir.sizeLimit").String()
			if limit == "" || limit == "0" {
				limit = "<unset>"
			}
			w.write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t%v\n    SizeLimit:\t%v\n", v.Get("emptyDir.medium").String(), limit)
		case v.Get("secret").Exists():
			w.write(2, "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t%v\n    Optional:\t%v\n", v.Get("secret.secretName").String(), v.Get("secret.optional").Bool())
		case v.Get("configMap").Exists():
			w.write(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t%v\n    Optional:\t%v\n", v.Get("configMap.name").String(), v.Get("configMap.optional").Bool())
		case v.Get("persistentVolumeClaim").Exists():
			w.write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t%v\n    ReadOnly:\t%v\n", v.Get("persistentVolumeClaim.claimName").String(), v.Get("persistentVolumeClaim.readOnly").Bool())
		case v.Get("projected").Exists():
			w.write(2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n")
			for _, s := range v.Get("projected.sources").Array() {
				switch {
				case s.Get("secret").Exists():
					w.write(2, "SecretName:\t%v\n    Optional:\t%v\n", s.Get("secret.name").String(), s.Get("secret.optional").Bool())
				case s.Get("downwardAPI").Exists():
					w.write(2, "DownwardAPI:\ttrue\n")
				case s.Get("configMap").Exists():
					w.write(2, "ConfigMapName:\t%v\n    Optional:\t%v\n", s.Get("configMap.name").String(), s.Get("configMap.optional").Bool())
				case s.Get("serviceAccountToken").Exists():
					w.write(2, "TokenExpirationSeconds:\t%d\n", s.Get("serviceAccountToken.expirationSeconds").Int())
				}
			}
		default:
			w.write(1, "<unknown>\n")
		}
	}
}

// qosClass is the pod's QoS class as the server recorded it, else
// computed from its containers' requests and limits.
func qosClass(spec, status gjson.Result) string {
	if q := status.Get("qosClass").String(); q != "" {
		return q
	}
	any, guaranteed := false, true
	for _, c := range append(spec.Get("initContainers").Array(), spec.Get("containers").Array()...) {
		req, lim := stringMap(c.Get("resources.requests")), stringMap(c.Get("resources.limits"))
		if len(req)+len(lim) > 0 {
			any = true
		}
		for _, r := range []string{"cpu", "memory"} {
			l, ok := lim[r]
			if q, has := req[r]; !ok || (has && q != l) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return "BestEffort"
	case guaranteed:
		return "Guaranteed"
	}
	return "Burstable"
}

// tolerations writes the pod's tolerations sorted by key.
func tolerations(w *writer, title string, ts []gjson.Result) {
	w.write(0, "%s:\t", title)
	if len(ts) == 0 {
		w.line("<none>")
		return
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].Get("key").String() < ts[j].Get("key").String() })
	for i, t := range ts {
		if i > 0 {
			w.write(0, "\t")
		}
		key, value, effect := t.Get("key").String(), t.Get("value").String(), t.Get("effect").String()
		w.write(0, "%s", key)
		if value != "" {
			w.write(0, "=%s", value)
		}
		if effect != "" {
			w.write(0, ":%s", effect)
		}
		if t.Get("operator").String() == "Exists" && value == "" {
			if key != "" || effect != "" {
				w.write(0, " op=Exists")
			} else {
				w.write(0, "op=Exists")
			}
		}
		if s := t.Get("tolerationSeconds"); s.Exists() {
			w.write(0, " for %ds", s.Int())
		}
		w.write(0, "\n")
	}
}

// podField is the value of a downward-API field path of the pod
// (metadata.name, metadata.labels['app'], status.podIP, ...), "" when it
// has none.
func podField(pod gjson.Result, path string) string {
	for _, m := range []string{"metadata.labels", "metadata.annotations"} {
		if rest, ok := strings.CutPrefix(path, m+"['"); ok {
			key := strings.TrimSuffix(rest, "']")
			return stringMap(pod.Get(m))[key]
		}
	}
	switch path {
	case "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.podIP":
		return pod.Get(path).String()
	}
	return ""
}

func stringMap(r gjson.Result) map[string]string {
	out := map[string]string{}
	r.ForEach(func(k, v gjson.Result) bool {
		out[k.String()] = v.String()
		return true
	})
	return out
}

func boolWord(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
