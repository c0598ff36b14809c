package kuberc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// This file is the pure part of "kdyn kuberc": the file read as kubectl's
// kuberc command reads it, kuberc set's changes, and the file written as
// kubectl writes it.

// The sections kuberc set changes.
const (
	sectionDefaults         = "defaults"
	sectionAliases          = "aliases"
	sectionCredentialPlugin = "credentialplugin"
)

// The credential plugin policies.
const (
	policyAllowAll  = "AllowAll"
	policyDenyAll   = "DenyAll"
	policyAllowlist = "Allowlist"
)

// errEmptyFile is kubectl's error for a file without any document.
var errEmptyFile = errors.New("error converting Preferences to v1beta1.Preferences: expected pointer, but got invalid kind")

// readFile reads the Preference of the file at path in the v1beta1 shape
// kubectl's kuberc command works on (a v1alpha1 file converted, an
// allowlist entry's older name field moved to command). A missing file
// is an error for which os.IsNotExist holds; a field kubectl does not
// know, or a file without any document, is an error here, as in
// kubectl's kuberc view and set.
func readFile(path string) (*v1beta1, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, strictErr, err := Decode(data, path)
	switch {
	case err != nil:
		return nil, err
	case strictErr != nil:
		return nil, strictErr
	case p == nil:
		return nil, errEmptyFile
	}
	return p.file(), nil
}

// file is p as a v1beta1 document.
func (p *Preference) file() *v1beta1 {
	f := &v1beta1{Kind: "Preference", APIVersion: Group + "/v1beta1", Defaults: p.Defaults, Aliases: p.Aliases,
		CredentialPluginPolicy: p.CredentialPluginPolicy}
	if p.CredentialPluginAllowlist != nil {
		f.CredentialPluginAllowlist = make([]AllowlistEntry, len(p.CredentialPluginAllowlist))
		for i, e := range p.CredentialPluginAllowlist {
			if e.Command == "" {
				e.Command = e.Name
			}
			f.CredentialPluginAllowlist[i] = AllowlistEntry{Command: e.Command}
		}
	}
	return f
}

// newFile is the document kuberc set starts from when there is no file.
func newFile() *v1beta1 {
	return &v1beta1{Kind: "Preference", APIVersion: Group + "/v1beta1"}
}

// defaultFile is the file kuberc view offers to write when there is
// none: server-side apply and interactive delete by default.
func defaultFile() *v1beta1 {
	f := newFile()
	f.Defaults = []CommandDefaults{
		{Command: "apply", Options: []OptionDefault{{Name: "server-side", Default: "true"}}},
		{Command: "delete", Options: []OptionDefault{{Name: "interactive", Default: "true"}}},
	}
	return f
}

// writeFile writes f to path as kubectl does (YAML, keys sorted), making
// its directory if needed.
func writeFile(f *v1beta1, path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create directory %s: %w", dir, err)
	}
	data, err := yaml.Marshal(f)
	if err != nil {
		return fmt.Errorf("failed to marshal preferences: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("failed to write kuberc file: %w", err)
	}
	return nil
}

// setOptions are kuberc set's flags.
type setOptions struct {
	section     string   // defaults, aliases or credentialplugin
	command     string   // the command ("get", "create role")
	aliasName   string   // for aliases
	options     []string // FLAG=VALUE
	prependArgs []string
	appendArgs  []string
	overwrite   bool
	policy      string   // for credentialplugin
	allowlist   []string // FIELD=VALUE[,FIELD=VALUE...] for credentialplugin
}

// validate checks the flags as kubectl does, in its order and words.
func (o *setOptions) validate() error {
	switch {
	case o.section != sectionDefaults && o.section != sectionAliases && o.section != sectionCredentialPlugin:
		return fmt.Errorf("--section must be %q, %q, or %q, got: %s", sectionDefaults, sectionAliases, sectionCredentialPlugin, o.section)
	case o.section == sectionAliases && o.aliasName == "":
		return fmt.Errorf("--name is required when --section=%s", sectionAliases)
	case o.section == sectionDefaults && o.aliasName != "":
		return fmt.Errorf("--name should not be specified when --section=%s", sectionDefaults)
	case o.section == sectionDefaults && (len(o.prependArgs) > 0 || len(o.appendArgs) > 0):
		return fmt.Errorf("--prependarg and --appendarg are only valid for --section=%s", sectionAliases)
	case o.section != sectionCredentialPlugin && o.command == "":
		return fmt.Errorf("--command is required when --section=%s or --section=%s", sectionAliases, sectionDefaults)
	case o.section != sectionCredentialPlugin:
		return nil
	}
	switch o.policy {
	case "":
		return fmt.Errorf("--policy is required when --section=%s", sectionCredentialPlugin)
	case policyAllowAll, policyDenyAll:
		if len(o.allowlist) != 0 {
			return fmt.Errorf("--allowlist-entry may only be used when --section=%s and --policy=%s", sectionCredentialPlugin, policyAllowlist)
		}
	case policyAllowlist:
		if len(o.allowlist) == 0 {
			return fmt.Errorf("--allowlist-entry is required when --section=%s and --policy=%s", sectionCredentialPlugin, policyAllowlist)
		}
	default:
		// kubectl's message, its two spaces included.
		return fmt.Errorf(" --policy must be  %q, %q, or %q, got: %s", policyAllowAll, policyDenyAll, policyAllowlist, o.policy)
	}
	return nil
}

// apply makes the change the flags ask for in f: a command's defaults, an
// alias, or the credential plugin policy. An existing command's defaults
// or alias is replaced only with Overwrite, keeping what the flags leave
// out (options, and an alias's arguments).
func (o *setOptions) apply(f *v1beta1) error {
	options, err := o.parseOptions()
	if err != nil {
		return err
	}
	switch o.section {
	case sectionDefaults:
		return o.setDefaults(f, options)
	case sectionAliases:
		return o.setAlias(f, options)
	}
	return o.setPolicy(f)
}

// parseOptions parses --option FLAG=VALUE (leading dashes dropped from FLAG).
func (o *setOptions) parseOptions() ([]OptionDefault, error) {
	var out []OptionDefault
	for _, opt := range o.options {
		name, value, ok := strings.Cut(opt, "=")
		if !ok {
			return nil, fmt.Errorf("invalid option format %q, expected flag=value", opt)
		}
		out = append(out, OptionDefault{Name: strings.TrimLeft(name, "-"), Default: value})
	}
	return out, nil
}

func (o *setOptions) setDefaults(f *v1beta1, options []OptionDefault) error {
	for i, d := range f.Defaults {
		if d.Command != o.command {
			continue
		}
		if !o.overwrite {
			return fmt.Errorf("defaults for command %q already exist, use --overwrite to replace", o.command)
		}
		if len(options) > 0 {
			f.Defaults[i].Options = options
		}
		return nil
	}
	f.Defaults = append(f.Defaults, CommandDefaults{Command: o.command, Options: options})
	return nil
}

func (o *setOptions) setAlias(f *v1beta1, options []OptionDefault) error {
	alias := Alias{Name: o.aliasName, Command: o.command, PrependArgs: o.prependArgs, AppendArgs: o.appendArgs, Options: options}
	for i, a := range f.Aliases {
		if a.Name != o.aliasName {
			continue
		}
		if !o.overwrite {
			return fmt.Errorf("alias %q already exists, use --overwrite to replace", o.aliasName)
		}
		if len(alias.Options) == 0 {
			alias.Options = a.Options
		}
		if len(alias.PrependArgs) == 0 {
			alias.PrependArgs = a.PrependArgs
		}
		if len(alias.AppendArgs) == 0 {
			alias.AppendArgs = a.AppendArgs
		}
		f.Aliases[i] = alias
		return nil
	}
	f.Aliases = append(f.Aliases, alias)
	return nil
}

// setPolicy sets the credential plugin policy; the allowlist changes only
// with the Allowlist policy (the others keep the one the file has).
func (o *setOptions) setPolicy(f *v1beta1) error {
	if o.policy == policyAllowlist {
		entries, err := allowlistEntries(o.allowlist)
		if err != nil {
			return err
		}
		f.CredentialPluginAllowlist = entries
	}
	f.CredentialPluginPolicy = o.policy
	return nil
}

// allowlistEntries parses --allowlist-entry values (command=NAME, several
// apart by commas); every mistake is reported.
func allowlistEntries(values []string) ([]AllowlistEntry, error) {
	var errs entryErrors
	var out []AllowlistEntry
	for _, v := range values {
		for pair := range strings.SplitSeq(v, ",") {
			field, value, ok := strings.Cut(pair, "=")
			switch {
			case !ok:
				errs = append(errs, fmt.Sprintf("improperly formatted allowlist entry: %q", pair))
			case field == "name":
				errs = append(errs, `allowlist entry field "name" is deprecated, use "command" instead`)
			case field != "command":
				errs = append(errs, fmt.Sprintf("unrecognized allowlist entry field: %q", field))
			case strings.TrimSpace(value) == "":
				errs = append(errs, fmt.Sprintf("empty value in allowlist entry for field %q", field))
			default:
				out = append(out, AllowlistEntry{Command: value})
			}
		}
	}
	switch len(errs) {
	case 0:
		return out, nil
	case 1:
		return nil, errors.New(errs[0])
	}
	return nil, errs
}

// entryErrors are the mistakes in --allowlist-entry values, which kubectl
// prints one a line, without "error: " (an aggregate error).
type entryErrors []string

// Error joins the messages as kubectl's aggregate error does: the one
// message, or the distinct ones in brackets.
func (e entryErrors) Error() string {
	var distinct []string
	for _, m := range e {
		if !slices.Contains(distinct, m) {
			distinct = append(distinct, m)
		}
	}
	if len(distinct) == 1 {
		return distinct[0]
	}
	return "[" + strings.Join(distinct, ", ") + "]"
}
