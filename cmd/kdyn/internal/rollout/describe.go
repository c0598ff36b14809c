package rollout

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// describeTemplate writes a pod template in the layout of kubectl's
// describe.DescribePodTemplate: labels, annotations, service account,
// init containers and containers (image, ports, command and args,
// resources, environment, mounts), volumes (name and kind), node
// selectors and tolerations. Probes, volume details and topology spread
// constraints are left out.
func describeTemplate(b *strings.Builder, template map[string]any) {
	w := func(level int, format string, args ...any) {
		b.WriteString(strings.Repeat("  ", level))
		fmt.Fprintf(b, format, args...)
	}
	w(0, "Pod Template:\n")
	if template == nil {
		w(1, "<unset>")
		return
	}
	md, _ := template["metadata"].(map[string]any)
	spec, _ := template["spec"].(map[string]any)
	labels, _, _ := unstructured.NestedStringMap(md, "labels")
	writeMap(b, "  Labels", labels, "=")
	if ann, _, _ := unstructured.NestedStringMap(md, "annotations"); len(ann) > 0 {
		writeMap(b, "  Annotations", ann, ": ")
	}
	if sa, _, _ := unstructured.NestedString(spec, "serviceAccountName"); sa != "" {
		w(1, "Service Account:\t%s\n", sa)
	}
	if init, _, _ := unstructured.NestedSlice(spec, "initContainers"); len(init) > 0 {
		describeContainers(w, "Init Containers", init)
	}
	containers, _, _ := unstructured.NestedSlice(spec, "containers")
	describeContainers(w, "Containers", containers)
	volumes, _, _ := unstructured.NestedSlice(spec, "volumes")
	if len(volumes) == 0 {
		w(0, "  Volumes:\t<none>\n")
	} else {
		w(0, "  Volumes:\n")
		for _, v := range volumes {
			vm, _ := v.(map[string]any)
			w(1, " %v:\n", vm["name"])
			for k := range vm {
				if k != "name" {
					w(2, "Type:\t%s\n", k)
				}
			}
		}
	}
	if pc, _, _ := unstructured.NestedString(spec, "priorityClassName"); pc != "" {
		w(1, "Priority Class Name:\t%s\n", pc)
	}
	ns, _, _ := unstructured.NestedStringMap(spec, "nodeSelector")
	writeMap(b, "  Node-Selectors", ns, "=")
	tolerations, _, _ := unstructured.NestedSlice(spec, "tolerations")
	b.WriteString("  Tolerations:\t")
	if len(tolerations) == 0 {
		b.WriteString("<none>\n")
	}
	for i, t := range tolerations {
		tm, _ := t.(map[string]any)
		if i > 0 {
			b.WriteString("\t")
		}
		key, _ := tm["key"].(string)
		b.WriteString(key)
		if v, _ := tm["value"].(string); v != "" {
			b.WriteString("=" + v)
		}
		if e, _ := tm["effect"].(string); e != "" {
			b.WriteString(":" + e)
		}
		if op, _ := tm["operator"].(string); op == "Exists" && tm["value"] == nil {
			if key != "" || tm["effect"] != nil {
				b.WriteString(" ")
			}
			b.WriteString("op=Exists")
		}
		if s, ok := tm["tolerationSeconds"].(int64); ok {
			fmt.Fprintf(b, " for %ds", s)
		}
		b.WriteString("\n")
	}
}

// writeMap writes labels or annotations sorted, one per line after the
// first, as describe does.
func writeMap(b *strings.Builder, title string, m map[string]string, sep string) {
	b.WriteString(title + ":\t")
	if len(m) == 0 {
		b.WriteString("<none>\n")
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			b.WriteString("\t")
		}
		b.WriteString(k + sep + m[k] + "\n")
	}
}

func describeContainers(w func(int, string, ...any), label string, containers []any) {
	none := ""
	if len(containers) == 0 {
		none = " <none>"
	}
	w(0, "  %s:%s\n", label, none)
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		w(1, " %v:\n", cm["name"])
		w(2, "Image:\t%v\n", cm["image"])
		ports, _, _ := unstructured.NestedSlice(cm, "ports")
		var cp, hp []string
		for _, p := range ports {
			pm, _ := p.(map[string]any)
			proto, _ := pm["protocol"].(string)
			if proto == "" {
				proto = "TCP"
			}
			suffix := ""
			if n, _ := pm["name"].(string); n != "" {
				suffix = " (" + n + ")"
			}
			cp = append(cp, fmt.Sprintf("%v/%s%s", intOf(pm["containerPort"]), proto, suffix))
			hp = append(hp, fmt.Sprintf("%v/%s%s", intOf(pm["hostPort"]), proto, suffix))
		}
		writePorts(w, "Port", cp)
		writePorts(w, "Host Port", hp)
		for _, f := range []struct{ key, title string }{{"command", "Command"}, {"args", "Args"}} {
			if list, _, _ := unstructured.NestedStringSlice(cm, f.key); len(list) > 0 {
				w(2, "%s:\n", f.title)
				for _, s := range list {
					for _, line := range strings.Split(s, "\n") {
						w(3, "%s\n", line)
					}
				}
			}
		}
		for _, f := range []struct{ key, title string }{{"limits", "Limits"}, {"requests", "Requests"}} {
			if m, _, _ := unstructured.NestedMap(cm, "resources", f.key); len(m) > 0 {
				w(2, "%s:\n", f.title)
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					w(3, "%s:\t%v\n", k, m[k])
				}
			}
		}
		env, _, _ := unstructured.NestedSlice(cm, "env")
		if len(env) == 0 {
			w(2, "Environment:\t<none>\n")
		} else {
			w(2, "Environment:\n")
		}
		for _, e := range env {
			em, _ := e.(map[string]any)
			name := em["name"]
			switch {
			case em["valueFrom"] == nil:
				value, _ := em["value"].(string)
				for i, line := range strings.Split(value, "\n") {
					if i == 0 {
						w(3, "%s:\t%s\n", name, line)
					} else {
						w(3, "\t%s\n", line)
					}
				}
			default:
				from, _ := em["valueFrom"].(map[string]any)
				switch {
				case from["secretKeyRef"] != nil:
					ref, _ := from["secretKeyRef"].(map[string]any)
					opt, _ := ref["optional"].(bool)
					w(3, "%s:\t<set to the key '%v' in secret '%v'>\tOptional: %t\n", name, ref["key"], ref["name"], opt)
				case from["configMapKeyRef"] != nil:
					ref, _ := from["configMapKeyRef"].(map[string]any)
					opt, _ := ref["optional"].(bool)
					w(3, "%s:\t<set to the key '%v' of config map '%v'>\tOptional: %t\n", name, ref["key"], ref["name"], opt)
				case from["fieldRef"] != nil:
					ref, _ := from["fieldRef"].(map[string]any)
					w(3, "%s:\t (%v:%v)\n", name, ref["apiVersion"], ref["fieldPath"])
				case from["resourceFieldRef"] != nil:
					ref, _ := from["resourceFieldRef"].(map[string]any)
					w(3, "%s:\t (%v)\n", name, ref["resource"])
				}
			}
		}
		mounts, _, _ := unstructured.NestedSlice(cm, "volumeMounts")
		if len(mounts) == 0 {
			w(2, "Mounts:\t<none>\n")
			continue
		}
		w(2, "Mounts:\n")
		sort.SliceStable(mounts, func(i, j int) bool {
			a, _ := mounts[i].(map[string]any)
			b, _ := mounts[j].(map[string]any)
			return fmt.Sprint(a["mountPath"]) < fmt.Sprint(b["mountPath"])
		})
		for _, m := range mounts {
			mm, _ := m.(map[string]any)
			flags := []string{"rw"}
			if ro, _ := mm["readOnly"].(bool); ro {
				flags[0] = "ro"
			}
			if sp, _ := mm["subPath"].(string); sp != "" {
				flags = append(flags, fmt.Sprintf("path=%q", sp))
			}
			w(3, "%v from %v (%s)\n", mm["mountPath"], mm["name"], strings.Join(flags, ","))
		}
	}
}

// writePorts writes "Port:" with one port or none, "Ports:" with several.
func writePorts(w func(int, string, ...any), title string, ports []string) {
	switch len(ports) {
	case 0:
		w(2, "%s:\t<none>\n", title)
	case 1:
		w(2, "%s:\t%s\n", title, ports[0])
	default:
		w(2, "%ss:\t%s\n", title, strings.Join(ports, ", "))
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
