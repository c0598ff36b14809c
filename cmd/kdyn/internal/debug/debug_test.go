package debug

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"
)

// The tests check kdyn's maps against what kubectl computes with its typed
// objects and apimachinery's strategic merge patch (test files may import
// k8s.io/api; the command does not).

// toMap decodes v's JSON into an unstructured map.
func toMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// typedJSON is m's JSON as kubectl's typed T encodes it (unknown members
// and empty values dropped).
func typedJSON[T any](t *testing.T, m any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var typed T
	if err := json.Unmarshal(b, &typed); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(typed); err != nil {
		t.Fatal(err)
	}
	return b
}

func targetPod(ecs ...corev1.EphemeralContainer) *corev1.Pod {
	user := int64(1000)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target", Namespace: "ns"},
		Spec: corev1.PodSpec{
			Containers:          []corev1.Container{{Name: "app", Image: "nginx"}},
			SecurityContext:     &corev1.PodSecurityContext{RunAsUser: &user},
			EphemeralContainers: ecs,
		},
	}
}

// TestEphemeralPatchIsKubectls: the patch is the two-way strategic merge
// patch from the pod to the pod with the debug container, for every
// profile, with and without ephemeral containers already there.
func TestEphemeralPatchIsKubectls(t *testing.T) {
	existing := corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "old", Image: "busybox"}}
	for _, profile := range []string{profileLegacy, profileGeneral, profileBaseline, profileRestricted, profileNetadmin, profileSysadmin} {
		for _, pod := range []*corev1.Pod{targetPod(), targetPod(existing)} {
			o := &options{profile: profile, container: "dbg", image: "busybox", interactive: true, tty: true, target: "app",
				args: []string{"sh", "-c", "x"}, env: map[string]string{"B": "2", "A": ""}, pullPolicy: "Never",
				out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}
			obj := &unstructured.Unstructured{Object: toMap(t, pod)}
			got, cn, err := o.ephemeralPatch(obj)
			if err != nil || cn != "dbg" {
				t.Fatalf("%s: %q %v", profile, cn, err)
			}
			// The debugging copy kubectl would have built: the pod with the
			// container the patch adds.
			var p struct {
				Spec struct {
					ECs []corev1.EphemeralContainer `json:"ephemeralContainers"`
				} `json:"spec"`
			}
			if err := json.Unmarshal(got, &p); err != nil || len(p.Spec.ECs) != 1 {
				t.Fatalf("%s: patch %s: %v", profile, got, err)
			}
			debugPod := pod.DeepCopy()
			debugPod.Spec.EphemeralContainers = append(debugPod.Spec.EphemeralContainers, p.Spec.ECs[0])
			podJS, _ := json.Marshal(pod)
			debugJS, _ := json.Marshal(debugPod)
			want, err := strategicpatch.CreateTwoWayMergePatch(podJS, debugJS, pod)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%s: patch\n got %s\nwant %s", profile, got, want)
			}
		}
	}
}

// TestProfilesOfEphemeralContainer: each profile's security context on an
// ephemeral container, and the non-root warning where kubectl gives it.
func TestProfilesOfEphemeralContainer(t *testing.T) {
	for profile, want := range map[string]string{
		profileLegacy:     `{"image":"busybox","name":"dbg","resources":{},"terminationMessagePolicy":"File"}`,
		profileGeneral:    `{"image":"busybox","name":"dbg","resources":{},"securityContext":{"capabilities":{"add":["SYS_PTRACE"]}},"terminationMessagePolicy":"File"}`,
		profileBaseline:   `{"image":"busybox","name":"dbg","resources":{},"terminationMessagePolicy":"File"}`,
		profileRestricted: `{"image":"busybox","name":"dbg","resources":{},"securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},"terminationMessagePolicy":"File"}`,
		profileNetadmin:   `{"image":"busybox","name":"dbg","resources":{},"securityContext":{"capabilities":{"add":["NET_ADMIN","NET_RAW"]}},"terminationMessagePolicy":"File"}`,
		profileSysadmin:   `{"image":"busybox","name":"dbg","resources":{},"securityContext":{"privileged":true},"terminationMessagePolicy":"File"}`,
	} {
		var errOut bytes.Buffer
		o := &options{profile: profile, container: "dbg", image: "busybox", out: &bytes.Buffer{}, errOut: &errOut}
		got, _, err := o.ephemeralPatch(&unstructured.Unstructured{Object: toMap(t, targetPod())})
		if err != nil {
			t.Fatal(err)
		}
		if w := `{"spec":{"ephemeralContainers":[` + want + `]}}`; string(got) != w {
			t.Errorf("%s:\n got %s\nwant %s", profile, got, w)
		}
		warned := strings.Contains(errOut.String(), "Warning: Non-root user is configured")
		if wantWarn := strings.Contains(want, `"add"`) || strings.Contains(want, "privileged"); warned != wantWarn {
			t.Errorf("%s: warned %v, want %v", profile, warned, wantWarn)
		}
	}
}

// TestCustomMergeIsStrategicMerge: --custom merged into a container gives
// what apimachinery's strategic merge patch of a typed Container gives.
func TestCustomMergeIsStrategicMerge(t *testing.T) {
	base := corev1.Container{
		Name: "dbg", Image: "busybox",
		Env:          []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}, {Name: "C", Value: "3"}},
		Ports:        []corev1.ContainerPort{{ContainerPort: 80}},
		VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/v"}},
		SecurityContext: &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_PTRACE"}},
		},
		Args: []string{"a"},
	}
	for _, custom := range []string{
		`{"env":[{"name":"ENV_VAR1","value":"value1"},{"name":"ENV_VAR2","value":"value2"}]}`,
		"env:\n- name: C\n  value: x\n- name: Z\n  value: z\n- name: A\n",
		`{"securityContext":{"runAsUser":0,"capabilities":{"add":["NET_ADMIN"]}},"args":["b","c"],"stdin":false,"unknown":1}`,
		`{"ports":[{"containerPort":81},{"containerPort":80,"name":"http"}],"volumeMounts":[{"name":"w","mountPath":"/w"}],"workingDir":"/tmp","resources":{"limits":{"cpu":"1"}}}`,
	} {
		path := filepath.Join(t.TempDir(), "custom")
		if err := os.WriteFile(path, []byte(custom), 0o600); err != nil {
			t.Fatal(err)
		}
		spec, err := readCustom(path)
		if err != nil {
			t.Fatal(err)
		}
		c := toMap(t, base)
		spec["name"] = "dbg"
		if err := mergeCustom(c, spec); err != nil {
			t.Fatal(err)
		}
		got := typedJSON[corev1.Container](t, c)

		var typed corev1.Container
		if err := yaml.Unmarshal([]byte(custom), &typed); err != nil {
			t.Fatal(err)
		}
		typed.Name = "dbg"
		customJS, _ := json.Marshal(typed)
		baseJS, _ := json.Marshal(base)
		want, err := strategicpatch.StrategicMergePatch(baseJS, customJS, corev1.Container{})
		if err != nil {
			t.Fatal(err)
		}
		want = typedJSON[corev1.Container](t, toMap(t, json.RawMessage(want)))
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("custom %s: (-kubectl +kdyn)\n%s", custom, diff)
		}
	}
}

// TestCustomChecks: what --custom may not set, and files that are not a
// container.
func TestCustomChecks(t *testing.T) {
	dir := t.TempDir()
	for content, wantErr := range map[string]string{
		`{"image":"x"}`:         "name, command, image, lifecycle and volume devices are not modifiable via custom profile",
		"command: [sh]\n":       "name, command, image, lifecycle and volume devices are not modifiable via custom profile",
		`{"command":[]}`:        "",
		`[1,2]`:                 "does not contain a valid container spec",
		`{"env":[{"name":"A"}]`: "does not contain a valid container spec",
	} {
		path := filepath.Join(dir, "c")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		spec, err := readCustom(path)
		if err == nil {
			err = checkCustom(spec)
		}
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%s: %v", content, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s: error %v, want %q", content, err, wantErr)
		}
	}
}

// TestPodCopy: a copy keeps what the --keep-* flags say, drops the node
// and the ephemeral containers, and takes --set-image.
func TestPodCopy(t *testing.T) {
	pod := targetPod(corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "old", Image: "busybox"}})
	pod.Labels = map[string]string{"run": "target"}
	pod.Annotations = map[string]string{"test": "test"}
	pod.Spec.NodeName = "n1"
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{}
	o := &options{profile: profileGeneral, copyTo: "copy", image: "busybox", container: "dbg", keep: keepFlags{labels: true, initContainers: false},
		setImages: map[string]string{"*": "alpine"}, out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}
	copied, cn, err := o.podCopy(&unstructured.Unstructured{Object: toMap(t, pod)})
	if err != nil || cn != "dbg" {
		t.Fatal(cn, err)
	}
	got := string(typedJSON[corev1.Pod](t, copied))
	want := `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"copy","namespace":"ns","labels":{"run":"target"}},"spec":{"containers":[{"name":"app","image":"alpine","resources":{}},{"name":"dbg","image":"busybox","resources":{},"terminationMessagePolicy":"File","securityContext":{"capabilities":{"add":["SYS_PTRACE"]}}}],"shareProcessNamespace":true,"securityContext":{"runAsUser":1000}},"status":{}}`
	if got != want {
		t.Errorf("copy\n got %s\nwant %s", got, want)
	}
}
