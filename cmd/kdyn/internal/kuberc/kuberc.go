package kuberc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kdyn/kdyn/rest"
)

// Group is the API group of the Preference kind.
const Group = "kubectl.config.k8s.io"

// Env names the environment variable that chooses the file ("off": none).
const Env = "KUBERC"

// FlagName is the global flag that names the file.
const FlagName = "kuberc"

// Preference is a kuberc file's content, in its v1beta1 shape.
type Preference struct {
	// Defaults are new flag defaults, per command.
	Defaults []CommandDefaults
	// Aliases are new command names.
	Aliases []Alias
	// CredentialPluginPolicy is "", "AllowAll", "DenyAll" or "Allowlist".
	CredentialPluginPolicy string
	// CredentialPluginAllowlist are the plugins an "Allowlist" policy lets
	// run.
	CredentialPluginAllowlist []AllowlistEntry
}

// CommandDefaults are new defaults for the flags of one command.
type CommandDefaults struct {
	// Command is the command as typed after kdyn: "apply", "create secret".
	Command string `json:"command"`
	// Options are the flags and their new defaults.
	Options []OptionDefault `json:"options"`
}

// OptionDefault is one flag's new default value.
type OptionDefault struct {
	// Name is the flag's long name, without dashes.
	Name string `json:"name"`
	// Default is its value, as it would be written on the command line.
	Default string `json:"default"`
}

// Alias is a command name of the user's own.
type Alias struct {
	// Name is the alias, letters only.
	Name string `json:"name"`
	// Command is the command it runs: "get", "create secret".
	Command string `json:"command"`
	// PrependArgs go right after the alias name.
	PrependArgs []string `json:"prependArgs,omitempty"`
	// AppendArgs go at the end of the command line.
	AppendArgs []string `json:"appendArgs,omitempty"`
	// Options are flag defaults for the alias.
	Options []OptionDefault `json:"options,omitempty"`
}

// AllowlistEntry names a credential plugin an "Allowlist" policy lets run.
type AllowlistEntry struct {
	// Name is the older field for Command.
	Name string `json:"name,omitempty"`
	// Command is the plugin's command: a name looked up in PATH, or a path.
	Command string `json:"command,omitempty"`
}

// v1beta1 and v1alpha1 are the two versions of the file; v1alpha1 named
// the defaults "overrides" and the options "flags". Their members are in
// the order of kubectl's Go types, which kuberc view -o json prints.
type v1beta1 struct {
	Kind                      string            `json:"kind,omitempty"`
	APIVersion                string            `json:"apiVersion,omitempty"`
	Defaults                  []CommandDefaults `json:"defaults"`
	Aliases                   []Alias           `json:"aliases"`
	CredentialPluginPolicy    string            `json:"credentialPluginPolicy,omitempty"`
	CredentialPluginAllowlist []AllowlistEntry  `json:"credentialPluginAllowlist,omitempty"`
}

type v1alpha1 struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Overrides  []struct {
		Command string          `json:"command"`
		Flags   []OptionDefault `json:"flags"`
	} `json:"overrides"`
	Aliases []struct {
		Name        string          `json:"name"`
		Command     string          `json:"command"`
		PrependArgs []string        `json:"prependArgs,omitempty"`
		AppendArgs  []string        `json:"appendArgs,omitempty"`
		Flags       []OptionDefault `json:"flags,omitempty"`
	} `json:"aliases"`
}

var (
	aliasName = regexp.MustCompile(`^[a-zA-Z]+$`)
)

// Path returns the kuberc file to read and whether it was asked for
// explicitly (by --kuberc or $KUBERC). "" means none: KUBERC=off.
func Path(flag string, getenv func(string) string) (string, bool, error) {
	env := getenv(Env)
	switch {
	case env == "off" && flag != "":
		return "", false, errors.New("disabling kuberc via KUBERC=off and passing kuberc flag are mutually exclusive")
	case env == "off":
		return "", false, nil
	case flag != "":
		return flag, true, nil
	case env != "":
		return env, true, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", false, nil // no home, no default file
	}
	return filepath.Join(home, ".kube", "kuberc"), false, nil
}

// FeatureEnv names kubectl's feature gate of kuberc: "false" turns
// kuberc off altogether (no file read, no kuberc command).
const FeatureEnv = "KUBECTL_KUBERC"

// Enabled reports whether kuberc is on (KUBECTL_KUBERC is not "false").
func Enabled(getenv func(string) string) bool {
	return !strings.EqualFold(getenv(FeatureEnv), "false")
}

// Load reads the file Path chooses. Warnings (an unknown field, a broken
// default file) go to warn, and a file without any document is noted on
// log (kubectl notes it at -v 5); what is fatal is returned. A nil
// Preference with a nil error means there are no preferences.
func Load(flag string, getenv func(string) string, warn io.Writer, log logr.Logger) (*Preference, error) {
	path, explicit, err := Path(flag, getenv)
	if err != nil || path == "" {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err == nil {
		var strictErr error
		var p *Preference
		p, strictErr, err = Decode(data, path)
		if err == nil {
			if strictErr != nil {
				fmt.Fprintf(warn, "kuberc: ignoring strict decoding error in %s: %v\n", path, strictErr)
			}
			if p == nil {
				log.Info("kuberc: no preferences found in " + path)
			}
			if p != nil {
				if err = p.validate(); err != nil {
					return nil, fmt.Errorf("kuberc: %s: %w", path, err)
				}
			}
			return p, nil
		}
	}
	switch {
	case explicit:
		return nil, fmt.Errorf("kuberc: %w", err)
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	}
	fmt.Fprintf(warn, "kuberc: no preferences loaded from %s: %v\n", path, err)
	return nil, nil
}

// Decode returns the first Preference document of data (file names it in
// errors). strictErr is set when that document has fields kubectl does not
// know (the rest of it is still used); err when no document is a
// Preference or one cannot be read. A file with no documents has no
// preferences.
func Decode(data []byte, file string) (p *Preference, strictErr, err error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	attempted := 0
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		attempted++
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if yaml.Unmarshal(doc, &tm) != nil || tm.Kind != "Preference" {
			continue
		}
		switch tm.APIVersion {
		case Group + "/v1beta1":
			var v v1beta1
			if strictErr, err = decodeDoc(doc, &v); err != nil || conflictingEntry(v.CredentialPluginAllowlist) {
				continue
			}
			return &Preference{Defaults: v.Defaults, Aliases: v.Aliases, CredentialPluginPolicy: v.CredentialPluginPolicy, CredentialPluginAllowlist: v.CredentialPluginAllowlist}, strictErr, nil
		case Group + "/v1alpha1":
			var v v1alpha1
			if strictErr, err = decodeDoc(doc, &v); err != nil {
				continue
			}
			p := &Preference{}
			for _, o := range v.Overrides {
				p.Defaults = append(p.Defaults, CommandDefaults{Command: o.Command, Options: o.Flags})
			}
			for _, a := range v.Aliases {
				p.Aliases = append(p.Aliases, Alias{Name: a.Name, Command: a.Command, PrependArgs: a.PrependArgs, AppendArgs: a.AppendArgs, Options: a.Flags})
			}
			return p, strictErr, nil
		}
	}
	if attempted > 0 {
		return nil, nil, fmt.Errorf("no valid preferences found in %s (a document with apiVersion %s/v1beta1 and kind Preference)", file, Group)
	}
	return nil, nil, nil
}

// decodeDoc decodes one YAML document into into as kubectl's decoder of
// the file does: what strictness refuses (a duplicate key, a field the
// version does not have) is strictErr, worded as kubectl's ("strict
// decoding error: unknown field "defaults[0].x", ..."), and the document
// is still used; err (a malformed document, a value of the wrong type)
// makes it unusable.
func decodeDoc(doc []byte, into any) (strictErr, err error) {
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var errs []error
	if _, err := yaml.YAMLToJSONStrict(doc); err != nil {
		errs = append(errs, err)
	}
	unknown, err := kjson.UnmarshalStrict(data, into, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, err
	}
	errs = append(errs, unknown...)
	if len(errs) == 0 {
		return nil, nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New("strict decoding error: " + strings.Join(msgs, ", ")), nil
}

// conflictingEntry reports an allowlist entry whose older name field
// names another command than its command field, which kubectl cannot
// read.
func conflictingEntry(entries []AllowlistEntry) bool {
	return slices.ContainsFunc(entries, func(e AllowlistEntry) bool {
		return e.Name != "" && e.Command != "" && e.Name != e.Command
	})
}

// validate checks what kubectl checks before using the file.
func (p *Preference) validate() error {
	flagNames := func(opts []OptionDefault) error {
		for _, o := range opts {
			if strings.HasPrefix(o.Name, "-") {
				return fmt.Errorf("flag name %s should be in long form without dashes", o.Name)
			}
		}
		return nil
	}
	seen := map[string]bool{}
	for _, a := range p.Aliases {
		if !aliasName.MatchString(a.Name) {
			return fmt.Errorf("invalid alias name %q, can only include alphabetical characters", a.Name)
		}
		if err := flagNames(a.Options); err != nil {
			return err
		}
		if seen[a.Name] {
			return fmt.Errorf("duplicate alias name %s", a.Name)
		}
		seen[a.Name] = true
	}
	for _, d := range p.Defaults {
		if err := flagNames(d.Options); err != nil {
			return err
		}
	}
	return p.Policy().Validate()
}

// Apply applies p to a kdyn command line: it adds the alias args name (if
// any) to root, and sets the flag defaults of the command args run. It
// returns the command line to run (with an alias's arguments added).
// Warnings go to warn.
func (p *Preference) Apply(root *cobra.Command, args []string, warn io.Writer) ([]string, error) {
	if len(args) == 0 {
		return args, nil
	}
	args, alias, err := p.applyAlias(root, args, warn)
	if err != nil {
		return args, err
	}
	cmd, _, err := root.Find(args)
	if err != nil {
		return args, nil // cobra reports the unknown command
	}
	for _, d := range p.Defaults {
		target, rest, err := root.Find(strings.Fields(d.Command))
		if err != nil || len(rest) > 0 {
			fmt.Fprintf(warn, "Warning: command %q not found to set kuberc override\n", d.Command)
			continue
		}
		if target != cmd {
			continue
		}
		if alias != "" {
			return args, fmt.Errorf("alias %s can not be overridden", alias)
		}
		if err := setDefaults(cmd, d.Options, args, func(name string) string {
			return fmt.Sprintf("invalid flag %s for command %s", name, d.Command)
		}); err != nil {
			return args, err
		}
	}
	return args, nil
}

// applyAlias adds the alias that args run, when the first word is one, to
// root and returns args with its arguments, and its name.
func (p *Preference) applyAlias(root *cobra.Command, args []string, warn io.Writer) ([]string, string, error) {
	if _, _, err := root.Find(args); err == nil {
		return args, "", nil // an existing command: no alias
	}
	at := commandIndex(root, args)
	if at < 0 {
		return args, "", nil
	}
	name := args[at]
	for _, a := range p.Aliases {
		if a.Name != name {
			continue
		}
		if c, _, err := root.Find([]string{name}); err == nil && c != root {
			fmt.Fprintf(warn, "Warning: Setting alias %q to a built-in command is not supported\n", name)
			return args, "", nil
		}
		target, rest, err := root.Find(strings.Fields(a.Command))
		if err != nil || len(rest) > 0 || target == root {
			return args, "", fmt.Errorf("command %q not found to set alias %q", a.Command, a.Name)
		}
		aliasCmd := *target
		aliasCmd.Use = name
		aliasCmd.Aliases = nil
		root.AddCommand(&aliasCmd)
		if err := setDefaults(&aliasCmd, a.Options, args, func(flag string) string {
			return fmt.Sprintf("invalid alias flag %s in alias %s", flag, name)
		}); err != nil {
			return args, "", err
		}
		out := append([]string{}, args[:at+1]...)
		out = append(out, a.PrependArgs...)
		out = append(out, args[at+1:]...)
		out = append(out, a.AppendArgs...)
		return out, name, nil
	}
	return args, "", nil
}

// commandIndex returns the index in args of the command name: the first
// word that is neither a global flag nor its value (-n prod), or -1.
func commandIndex(root *cobra.Command, args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return -1
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if strings.HasPrefix(a, cobra.ShellCompRequestCmd) {
				return -1
			}
			return i
		}
		if strings.Contains(a, "=") {
			continue
		}
		var fl *pflag.Flag
		if name, ok := strings.CutPrefix(a, "--"); ok {
			fl = root.PersistentFlags().Lookup(name)
		} else if len(a) == 2 {
			fl = root.PersistentFlags().ShorthandLookup(a[1:])
		}
		if fl != nil && fl.NoOptDefVal == "" {
			i++ // the flag's value
		}
	}
	return -1
}

// setDefaults sets each option on cmd unless args give the flag.
func setDefaults(cmd *cobra.Command, opts []OptionDefault, args []string, unknown func(string) string) error {
	_ = cmd.InheritedFlags() // merges the global flags into cmd.Flags()
	shorthands := map[string]bool{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Shorthand != "" {
			shorthands[f.Shorthand] = true
		}
	})
	for _, o := range opts {
		fl := cmd.Flags().Lookup(o.Name)
		if fl == nil {
			return errors.New(unknown(o.Name))
		}
		if given(fl, shorthands, args) {
			continue
		}
		if err := cmd.Flags().Set(o.Name, o.Default); err != nil {
			return fmt.Errorf("could not apply value %s to flag %s of %s: %w", o.Default, o.Name, cmd.CommandPath(), err)
		}
	}
	return nil
}

// given reports whether args set fl: --name, --name=..., -s, -sVALUE, or
// -s among other shorthands (-abs).
func given(fl *pflag.Flag, shorthands map[string]bool, args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--"+fl.Name || strings.HasPrefix(a, "--"+fl.Name+"=") {
			return true
		}
		if fl.Shorthand == "" || !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
			continue
		}
		if strings.HasPrefix(a, "-"+fl.Shorthand) {
			return true
		}
		group := a[1:]
		all := group != ""
		for _, r := range group {
			all = all && shorthands[string(r)]
		}
		if all && strings.Contains(group, fl.Shorthand) {
			return true
		}
	}
	return false
}

// Policy returns the credential plugin policy of the file, for
// rest.ExecConfig.PluginPolicy (an entry's older name field stands for
// command).
func (p *Preference) Policy() rest.ExecPluginPolicy {
	policy := rest.ExecPluginPolicy{Type: p.CredentialPluginPolicy}
	if p.CredentialPluginAllowlist != nil {
		policy.Allowlist = []string{}
	}
	for _, e := range p.CredentialPluginAllowlist {
		c := e.Command
		if c == "" {
			c = e.Name
		}
		policy.Allowlist = append(policy.Allowlist, c)
	}
	return policy
}

// FlagValue returns the value of --kuberc in args, which are read before
// the command line is parsed (the file decides how it is parsed).
func FlagValue(args []string) (string, error) {
	for i, a := range args {
		switch {
		case a == "--":
			return "", nil
		case a == "--"+FlagName:
			if i+1 < len(args) && args[i+1] != "" {
				return args[i+1], nil
			}
			return "", errors.New("--kuberc needs a file name")
		case strings.HasPrefix(a, "--"+FlagName+"="):
			if v := strings.TrimPrefix(a, "--"+FlagName+"="); v != "" {
				return v, nil
			}
			return "", errors.New("--kuberc needs a file name")
		}
	}
	return "", nil
}
