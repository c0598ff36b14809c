package debug

import (
	"fmt"
	"slices"
)

// style is how the target is debugged, which decides what a profile
// changes.
type style int

const (
	ephemeral style = iota // a container added to the running pod
	podCopy                // a copy of the pod, with a container added or changed
	node                   // a new pod on the node
)

// The profiles of --profile, as kubectl v1.37 has them.
const (
	// profileLegacy is kubectl 1.23's behaviour (deprecated, to be removed
	// in v1.39).
	profileLegacy = "legacy"
	// profileGeneral is the default: SYS_PTRACE for pod debugging, the
	// host's namespaces and root filesystem for a node.
	profileGeneral = "general"
	// profileBaseline drops what the baseline Pod Security level forbids.
	profileBaseline = "baseline"
	// profileRestricted also runs as non-root, drops every capability,
	// forbids privilege escalation and sets the RuntimeDefault seccomp
	// profile, as the restricted level requires.
	profileRestricted = "restricted"
	// profileNetadmin adds NET_ADMIN and NET_RAW.
	profileNetadmin = "netadmin"
	// profileSysadmin runs the container privileged.
	profileSysadmin = "sysadmin"
)

// keepFlags are the --keep-* flags: what a copy keeps of the pod.
type keepFlags struct {
	labels, annotations, liveness, readiness, startup, initContainers bool
}

// checkProfile refuses a profile kubectl does not know, in its words.
func checkProfile(name string) error {
	switch name {
	case profileLegacy, profileGeneral, profileBaseline, profileRestricted, profileNetadmin, profileSysadmin:
		return nil
	}
	return fmt.Errorf("unknown profile: %s", name)
}

// applyProfile changes pod (a pod's object, unstructured) for debugging
// with the container cn, as kubectl's profile of that name does for the
// style.
func applyProfile(profile string, keep keepFlags, pod map[string]any, cn string, s style) {
	spec := mapAt(pod, "spec")
	switch profile {
	case profileLegacy:
		switch s {
		case node:
			mountRootPartition(spec, cn)
			useHostNamespaces(spec)
		case podCopy:
			// The --keep-* flags are ignored, the labels always dropped.
			keepFlags{annotations: true, liveness: true, readiness: true, startup: true, initContainers: true}.strip(pod)
		}
	case profileGeneral:
		switch s {
		case node:
			mountRootPartition(spec, cn)
			delete(container(spec, cn, true), "securityContext")
			useHostNamespaces(spec)
		case podCopy:
			keep.strip(pod)
			addCapabilities(container(spec, cn, true), "SYS_PTRACE")
			shareProcessNamespace(spec)
		case ephemeral:
			addCapabilities(container(spec, cn, true), "SYS_PTRACE")
		}
	case profileBaseline, profileRestricted:
		c := container(spec, cn, true)
		if c == nil {
			return
		}
		delete(c, "securityContext")
		if profile == profileRestricted {
			sc := mapAt(c, "securityContext")
			sc["runAsNonRoot"] = true
			caps := mapAt(sc, "capabilities")
			caps["drop"] = []any{"ALL"}
			delete(caps, "add")
			sc["allowPrivilegeEscalation"] = false
			sc["seccompProfile"] = map[string]any{"type": "RuntimeDefault"}
		}
		if s == podCopy {
			keep.strip(pod)
			shareProcessNamespace(spec)
		}
	case profileNetadmin:
		addCapabilities(container(spec, cn, true), "NET_ADMIN", "NET_RAW")
		switch s {
		case node:
			useHostNamespaces(spec)
		case podCopy:
			keep.strip(pod)
			shareProcessNamespace(spec)
		}
	case profileSysadmin:
		if c := container(spec, cn, true); c != nil {
			mapAt(c, "securityContext")["privileged"] = true
		}
		switch s {
		case node:
			useHostNamespaces(spec)
			mountRootPartition(spec, cn)
		case podCopy:
			keep.strip(pod)
			shareProcessNamespace(spec)
		}
	}
}

// strip removes from a pod's copy what the flags do not keep: labels,
// annotations, the containers' probes, the init containers.
func (k keepFlags) strip(pod map[string]any) {
	md := mapAt(pod, "metadata")
	if !k.labels {
		delete(md, "labels")
	}
	if !k.annotations {
		delete(md, "annotations")
	}
	spec := mapAt(pod, "spec")
	for _, c := range containers(spec, "containers") {
		if !k.liveness {
			delete(c, "livenessProbe")
		}
		if !k.readiness {
			delete(c, "readinessProbe")
		}
		if !k.startup {
			delete(c, "startupProbe")
		}
	}
	if !k.initContainers {
		delete(spec, "initContainers")
	}
}

// mountRootPartition mounts the host's root directory at /host in the
// (init or regular) container cn, from a volume named host-root.
func mountRootPartition(spec map[string]any, cn string) {
	const volume = "host-root"
	spec["volumes"] = append(list(spec["volumes"]), map[string]any{"name": volume, "hostPath": map[string]any{"path": "/"}})
	if c := container(spec, cn, false); c != nil {
		c["volumeMounts"] = append(list(c["volumeMounts"]), map[string]any{"name": volume, "mountPath": "/host"})
	}
}

// useHostNamespaces runs the pod in the host's network, PID and IPC
// namespaces.
func useHostNamespaces(spec map[string]any) {
	spec["hostNetwork"] = true
	spec["hostPID"] = true
	spec["hostIPC"] = true
}

// shareProcessNamespace shares one process namespace between the pod's
// containers, unless the pod says otherwise (or --share-processes did).
func shareProcessNamespace(spec map[string]any) {
	if _, set := spec["shareProcessNamespace"]; !set {
		spec["shareProcessNamespace"] = true
	}
}

// addCapabilities adds capabilities to the container's
// securityContext.capabilities.add.
func addCapabilities(c map[string]any, caps ...string) {
	if c == nil {
		return
	}
	cs := mapAt(mapAt(c, "securityContext"), "capabilities")
	add := list(cs["add"])
	for _, capability := range caps {
		add = append(add, capability)
	}
	cs["add"] = add
}

// containerLists are the pod spec's container lists, in the order kubectl
// visits them.
var containerLists = []string{"initContainers", "containers", "ephemeralContainers"}

// container returns the container named cn among the init and regular
// containers, and with ephemerals the ephemeral ones too; nil if there is
// none.
func container(spec map[string]any, cn string, ephemerals bool) map[string]any {
	lists := containerLists
	if !ephemerals {
		lists = lists[:2]
	}
	for _, l := range lists {
		for _, c := range containers(spec, l) {
			if c["name"] == cn {
				return c
			}
		}
	}
	return nil
}

// containerNames are the names of all the pod's containers.
func containerNames(spec map[string]any) []string {
	var names []string
	for _, l := range containerLists {
		for _, c := range containers(spec, l) {
			if n, ok := c["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// containers returns the maps of one container list of the spec.
func containers(spec map[string]any, key string) []map[string]any {
	var out []map[string]any
	for _, c := range list(spec[key]) {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// mapAt returns m[key] as a map, setting an empty one there if it is
// missing or not a map.
func mapAt(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	v := map[string]any{}
	m[key] = v
	return v
}

// list returns v as a list (nil if it is not one).
func list(v any) []any {
	l, _ := v.([]any)
	return slices.Clone(l)
}
