package kuberc

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeStrictErrors(t *testing.T) {
	doc := "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\nzed: 1\nfoo: bar\ndefaults:\n- command: get\n  bad: 1\n  options:\n  - name: o\n    default: x\n"
	p, strict, err := Decode([]byte(doc), "f")
	if err != nil || p == nil || p.Defaults[0].Options[0].Default != "x" {
		t.Fatalf("the document is still used: %+v %v", p, err)
	}
	// kubectl's words: the fields' paths, in the order of the document's
	// keys sorted.
	want := `strict decoding error: unknown field "defaults[0].bad", unknown field "foo", unknown field "zed"`
	if strict == nil || strict.Error() != want {
		t.Errorf("strict error %v, want %s", strict, want)
	}
	_, strict, _ = Decode([]byte("apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ndefaults:\n- command: get\n  command: top\n"), "f")
	if strict == nil || !strings.HasPrefix(strict.Error(), "strict decoding error: yaml: unmarshal errors:\n  line 5: key \"command\" already set in map") {
		t.Errorf("duplicate key: %v", strict)
	}
	// An entry naming two commands cannot be read: no document is usable.
	if _, _, err := Decode([]byte("apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginAllowlist:\n- name: a\n  command: b\n"), "f"); err == nil {
		t.Error("an entry with a name and another command was read")
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kuberc")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadFile(t *testing.T) {
	alpha := writeTemp(t, "apiVersion: kubectl.config.k8s.io/v1alpha1\nkind: Preference\noverrides:\n- command: get\n  flags:\n  - name: o\n    default: wide\n")
	f, err := readFile(alpha)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(f)
	if want := `{"kind":"Preference","apiVersion":"kubectl.config.k8s.io/v1beta1","defaults":[{"command":"get","options":[{"name":"o","default":"wide"}]}],"aliases":null}`; string(b) != want {
		t.Errorf("v1alpha1 as v1beta1:\n got %s\nwant %s", b, want)
	}
	named := writeTemp(t, "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- name: helper\n")
	if f, err := readFile(named); err != nil || !reflect.DeepEqual(f.CredentialPluginAllowlist, []AllowlistEntry{{Command: "helper"}}) {
		t.Errorf("an entry's name becomes its command: %+v %v", f, err)
	}
	if _, err := readFile(writeTemp(t, "")); err == nil || err.Error() != errEmptyFile.Error() {
		t.Errorf("empty file: %v", err)
	}
	if _, err := readFile(writeTemp(t, "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\nfoo: 1\n")); err == nil || !strings.HasPrefix(err.Error(), "strict decoding error") {
		t.Errorf("an unknown field: %v", err)
	}
	if _, err := readFile(filepath.Join(t.TempDir(), "none")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestSetValidate(t *testing.T) {
	for _, c := range []struct {
		o    setOptions
		want string
	}{
		{setOptions{section: "x"}, `--section must be "defaults", "aliases", or "credentialplugin", got: x`},
		{setOptions{section: sectionAliases, command: "get"}, "--name is required when --section=aliases"},
		{setOptions{section: sectionDefaults, command: "get", aliasName: "g"}, "--name should not be specified when --section=defaults"},
		{setOptions{section: sectionDefaults, command: "get", appendArgs: []string{"x"}}, "--prependarg and --appendarg are only valid for --section=aliases"},
		{setOptions{section: sectionDefaults}, "--command is required when --section=aliases or --section=defaults"},
		{setOptions{section: sectionCredentialPlugin}, "--policy is required when --section=credentialplugin"},
		{setOptions{section: sectionCredentialPlugin, policy: policyDenyAll, allowlist: []string{"command=x"}}, "--allowlist-entry may only be used when --section=credentialplugin and --policy=Allowlist"},
		{setOptions{section: sectionCredentialPlugin, policy: policyAllowlist}, "--allowlist-entry is required when --section=credentialplugin and --policy=Allowlist"},
		{setOptions{section: sectionCredentialPlugin, policy: "Foo"}, ` --policy must be  "AllowAll", "DenyAll", or "Allowlist", got: Foo`},
		{setOptions{section: sectionCredentialPlugin, policy: policyAllowAll}, ""},
		{setOptions{section: sectionAliases, aliasName: "g", command: "get"}, ""},
	} {
		err := c.o.validate()
		if got := ""; err != nil {
			got = err.Error()
			if got != c.want {
				t.Errorf("%+v: %q, want %q", c.o, got, c.want)
			}
		} else if c.want != "" {
			t.Errorf("%+v: no error, want %q", c.o, c.want)
		}
	}
}

func TestSetApply(t *testing.T) {
	f := newFile()
	steps := []setOptions{
		{section: sectionDefaults, command: "get", options: []string{"--output=json", "namespace=a=b"}},
		{section: sectionAliases, aliasName: "g", command: "get", prependArgs: []string{"pods"}, options: []string{"o=wide"}},
		{section: sectionCredentialPlugin, policy: policyAllowlist, allowlist: []string{"command=a,command=b", "command=c"}},
		// --overwrite keeps what the flags leave out.
		{section: sectionDefaults, command: "get", overwrite: true},
		{section: sectionAliases, aliasName: "g", command: "describe", appendArgs: []string{"x"}, overwrite: true},
		// Another policy keeps the allowlist.
		{section: sectionCredentialPlugin, policy: policyDenyAll},
	}
	for _, o := range steps {
		if err := o.apply(f); err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
	}
	want := &v1beta1{Kind: "Preference", APIVersion: Group + "/v1beta1",
		Defaults:                  []CommandDefaults{{Command: "get", Options: []OptionDefault{{Name: "output", Default: "json"}, {Name: "namespace", Default: "a=b"}}}},
		Aliases:                   []Alias{{Name: "g", Command: "describe", PrependArgs: []string{"pods"}, AppendArgs: []string{"x"}, Options: []OptionDefault{{Name: "o", Default: "wide"}}}},
		CredentialPluginPolicy:    policyDenyAll,
		CredentialPluginAllowlist: []AllowlistEntry{{Command: "a"}, {Command: "b"}, {Command: "c"}},
	}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("got  %+v\nwant %+v", f, want)
	}
	for _, c := range []struct {
		o    setOptions
		want string
	}{
		{setOptions{section: sectionDefaults, command: "get"}, `defaults for command "get" already exist, use --overwrite to replace`},
		{setOptions{section: sectionAliases, aliasName: "g", command: "get"}, `alias "g" already exists, use --overwrite to replace`},
		{setOptions{section: sectionDefaults, command: "x", options: []string{"novalue"}}, `invalid option format "novalue", expected flag=value`},
		{setOptions{section: sectionCredentialPlugin, policy: policyAllowlist, allowlist: []string{"calvinball=x"}}, `unrecognized allowlist entry field: "calvinball"`},
		{setOptions{section: sectionCredentialPlugin, policy: policyAllowlist, allowlist: []string{"name=x,bad,command= ", "name=y"}},
			`[allowlist entry field "name" is deprecated, use "command" instead, improperly formatted allowlist entry: "bad", empty value in allowlist entry for field "command"]`},
	} {
		if err := c.o.apply(f); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", c.o, err, c.want)
		}
	}
	var lines entryErrors
	err := (&setOptions{section: sectionCredentialPlugin, policy: policyAllowlist, allowlist: []string{"name=x", "name=y"}}).apply(f)
	if !errors.As(err, &lines) || len(lines) != 2 {
		t.Errorf("every mistake is kept, one a line: %#v", err)
	}
}

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "kuberc")
	if err := writeFile(defaultFile(), path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// kubectl's YAML: keys sorted, no aliases as null.
	want := `aliases: null
apiVersion: kubectl.config.k8s.io/v1beta1
defaults:
- command: apply
  options:
  - default: "true"
    name: server-side
- command: delete
  options:
  - default: "true"
    name: interactive
kind: Preference
`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
