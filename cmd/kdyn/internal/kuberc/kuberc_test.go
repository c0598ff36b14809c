package kuberc

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// tree is a small command tree: get (-o, -n global) and create secret
// generic.
func tree() (root *cobra.Command, out *string, ran *[]string) {
	var o, ns string
	var args []string
	root = &cobra.Command{Use: "kdyn"}
	root.PersistentFlags().StringVarP(&ns, "namespace", "n", "", "")
	get := &cobra.Command{Use: "get", Run: func(_ *cobra.Command, a []string) { args = a }}
	get.Flags().StringVarP(&o, "output", "o", "", "")
	get.Flags().BoolP("watch", "w", false, "")
	create := &cobra.Command{Use: "create"}
	secret := &cobra.Command{Use: "secret"}
	generic := &cobra.Command{Use: "generic", Run: func(*cobra.Command, []string) {}}
	generic.Flags().String("type", "", "")
	secret.AddCommand(generic)
	create.AddCommand(secret)
	root.AddCommand(get, create)
	return root, &o, &args
}

func TestDecodeVersions(t *testing.T) {
	beta := []byte("apiVersion: v1\nkind: ConfigMap\n---\napiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ndefaults:\n- command: get\n  options:\n  - name: output\n    default: wide\n")
	p, strict, err := Decode(beta, "f")
	if err != nil || strict != nil || len(p.Defaults) != 1 || p.Defaults[0].Options[0] != (OptionDefault{Name: "output", Default: "wide"}) {
		t.Fatalf("v1beta1 after another document: %+v %v %v", p, strict, err)
	}
	alpha := []byte("apiVersion: kubectl.config.k8s.io/v1alpha1\nkind: Preference\noverrides:\n- command: get\n  flags:\n  - name: output\n    default: wide\naliases:\n- name: g\n  command: get\n  flags:\n  - name: watch\n    default: \"true\"\n")
	p, strict, err = Decode(alpha, "f")
	if err != nil || strict != nil || p.Defaults[0].Options[0].Default != "wide" || p.Aliases[0].Options[0].Name != "watch" {
		t.Fatalf("v1alpha1: %+v %v %v", p, strict, err)
	}
	if p, _, err := Decode([]byte("\n---\n"), "f"); p != nil || err != nil {
		t.Fatalf("an empty file: %+v %v", p, err)
	}
	if _, _, err := Decode([]byte("kind: Preference\napiVersion: kubectl.config.k8s.io/v9\n"), "f"); err == nil || !strings.Contains(err.Error(), "no valid preferences found in f") {
		t.Fatalf("unknown version: %v", err)
	}
}

func TestPath(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	home, _ := os.UserHomeDir()
	for _, tc := range []struct {
		flag, env, want string
		explicit        bool
		err             bool
	}{
		{"", "", filepath.Join(home, ".kube", "kuberc"), false, false},
		{"", "/e", "/e", true, false},
		{"/f", "/e", "/f", true, false},
		{"", "off", "", false, false},
		{"/f", "off", "", false, true},
	} {
		got, explicit, err := Path(tc.flag, env(tc.env))
		if got != tc.want || explicit != tc.explicit || (err != nil) != tc.err {
			t.Errorf("Path(%q, KUBERC=%q) = %q %v %v", tc.flag, tc.env, got, explicit, err)
		}
	}
}

func TestApplyDefaultsAndAliases(t *testing.T) {
	p := &Preference{
		Defaults: []CommandDefaults{
			{Command: "get", Options: []OptionDefault{{Name: "output", Default: "wide"}, {Name: "namespace", Default: "team"}}},
			{Command: "create secret generic", Options: []OptionDefault{{Name: "type", Default: "opaque"}}},
		},
		Aliases: []Alias{{Name: "pods", Command: "get", PrependArgs: []string{"pod"}, AppendArgs: []string{"--watch"}, Options: []OptionDefault{{Name: "output", Default: "json"}}}},
	}
	for _, tc := range []struct {
		args     []string
		wantArgs []string
		wantO    string
	}{
		{[]string{"get", "ns"}, []string{"get", "ns"}, "wide"},
		{[]string{"get", "ns", "-o", "yaml"}, []string{"get", "ns", "-o", "yaml"}, "yaml"},
		{[]string{"get", "ns", "-oyaml"}, []string{"get", "ns", "-oyaml"}, "yaml"},
		{[]string{"get", "ns", "-wo", "yaml"}, []string{"get", "ns", "-wo", "yaml"}, "yaml"},
		{[]string{"get", "ns", "--output=name"}, []string{"get", "ns", "--output=name"}, "name"},
		{[]string{"-n", "x", "pods", "web"}, []string{"-n", "x", "pods", "pod", "web", "--watch"}, "json"},
	} {
		root, o, _ := tree()
		var warn bytes.Buffer
		args, err := p.Apply(root, tc.args, &warn)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if !slices.Equal(args, tc.wantArgs) {
			t.Errorf("%v: args %v, want %v", tc.args, args, tc.wantArgs)
		}
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if *o != tc.wantO {
			t.Errorf("%v: -o %q, want %q", tc.args, *o, tc.wantO)
		}
		if warn.Len() > 0 {
			t.Errorf("%v: warnings %q", tc.args, warn.String())
		}
	}

	// A default for a subcommand applies to it only.
	root, _, _ := tree()
	if _, err := p.Apply(root, []string{"create", "secret", "generic", "s"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	generic, _, _ := root.Find([]string{"create", "secret", "generic"})
	if v := generic.Flags().Lookup("type").Value.String(); v != "opaque" {
		t.Errorf("create secret generic --type = %q", v)
	}

	// An alias may not shadow a command, nor be given defaults.
	root, _, _ = tree()
	var warn bytes.Buffer
	shadow := &Preference{Aliases: []Alias{{Name: "get", Command: "create"}}}
	if _, err := shadow.Apply(root, []string{"get"}, &warn); err != nil || warn.Len() != 0 {
		t.Errorf("an existing command is not an alias: %v %q", err, warn.String())
	}
	aliased := &Preference{Aliases: []Alias{{Name: "g", Command: "get"}}, Defaults: []CommandDefaults{{Command: "g", Options: []OptionDefault{{Name: "output", Default: "x"}}}}}
	root, _, _ = tree()
	if _, err := aliased.Apply(root, []string{"g", "ns"}, &warn); err == nil || err.Error() != "alias g can not be overridden" {
		t.Errorf("defaults for an alias: %v", err)
	}
	missing := &Preference{Aliases: []Alias{{Name: "g", Command: "nothing"}}}
	root, _, _ = tree()
	if _, err := missing.Apply(root, []string{"g"}, &warn); err == nil || !strings.Contains(err.Error(), `command "nothing" not found to set alias "g"`) {
		t.Errorf("alias of a missing command: %v", err)
	}
}

func TestFlagValue(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		err  bool
	}{
		{[]string{"get", "--kuberc", "/k"}, "/k", false},
		{[]string{"--kuberc=/k", "get"}, "/k", false},
		{[]string{"get", "--", "--kuberc", "/k"}, "", false},
		{[]string{"get", "--kuberc"}, "", true},
		{[]string{"get", "--kuberc="}, "", true},
	} {
		got, err := FlagValue(tc.args)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("FlagValue(%v) = %q, %v", tc.args, got, err)
		}
	}
}

func TestPolicy(t *testing.T) {
	p := &Preference{CredentialPluginPolicy: "Allowlist", CredentialPluginAllowlist: []AllowlistEntry{{Name: "old"}, {Command: "/usr/bin/new"}}}
	if got := p.Policy(); got.Type != "Allowlist" || !slices.Equal(got.Allowlist, []string{"old", "/usr/bin/new"}) {
		t.Fatalf("Policy() = %+v", got)
	}
	for body, want := range map[string]string{
		"credentialPluginPolicy: Sometimes\n":                                                 `unknown credential plugin policy "Sometimes"`,
		"credentialPluginPolicy: Allowlist\n":                                                 `credential plugin policy set to "Allowlist", but allowlist is empty`,
		"credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- command: /a/../b\n": `non-normalized file path "/a/../b"`,
	} {
		p, _, err := Decode([]byte("apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\n"+body), "f")
		if err != nil {
			t.Fatal(err)
		}
		if err := p.validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}
