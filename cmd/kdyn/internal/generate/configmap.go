package generate

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// sourceFlags are --from-file, --from-literal and --from-env-file.
type sourceFlags struct {
	files    []string
	literals []string
	envFiles []string
}

func (s *sourceFlags) addFlags(cmd *cobra.Command, what string) {
	fl := cmd.Flags()
	fl.StringSliceVar(&s.files, "from-file", nil, "A file ([KEY=]PATH: the key defaults to the file's base name) or a directory (each regular file, under its name) to add to the "+what+" (repeatable).")
	fl.StringArrayVar(&s.literals, "from-literal", nil, "A KEY=VALUE to add to the "+what+" (repeatable; the value may hold '=').")
	fl.StringSliceVar(&s.envFiles, "from-env-file", nil, "A file of KEY=VALUE lines to add to the "+what+" (repeatable; # comments and blank lines skipped; a KEY alone takes the environment's value).")
}

func (s *sourceFlags) validate() error {
	if len(s.envFiles) > 0 && (len(s.files) > 0 || len(s.literals) > 0) {
		return errors.New("from-env-file cannot be combined with from-file or from-literal")
	}
	return nil
}

var configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func newConfigMapCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	src := &sourceFlags{}
	appendHash := false
	cmd := &cobra.Command{
		Use:     "configmap NAME [--from-file=[KEY=]SOURCE] [--from-literal=KEY=VALUE] [--from-env-file=FILE] [--dry-run=server|client|none]",
		Aliases: []string{"cm"},
		Short:   "Create a config map from local files, directories or literal values",
		Long: `Create a ConfigMap from files, directories, env files or literal values.

A file's key is its base name unless given (--from-file=KEY=PATH); a
directory adds each of its regular files under its own name. Text that is
valid UTF-8 goes to data, anything else to binaryData. Keys must be valid
ConfigMap keys, and each may appear once.

With --dry-run=client -o yaml (or json) nothing is sent, and the output is
byte for byte kubectl's for the same input, ready for kdyn apply -f -.`,
		Example: `  # A config map of every file in a directory
  kdyn create configmap my-config --from-file=path/to/dir

  # Keys of your choice for two files
  kdyn create configmap my-config --from-file=key1=/path/to/file1.txt --from-file=key2=/path/to/file2.txt

  # Literal values
  kdyn create configmap my-config --from-literal=key1=config1 --from-literal=key2=config2

  # KEY=VALUE lines of an env file
  kdyn create configmap my-config --from-env-file=path/to/app.env

  # Generate the manifest and apply it, with a name that changes with the content
  kdyn create configmap app-settings --from-file=settings.ini --append-hash --dry-run=client -o yaml | kdyn apply -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: configMapGVR, kind: "ConfigMap", namespaced: true, failure: "failed to create configmap: ",
				build: func(name, ns string) (*object, error) { return buildConfigMap(name, ns, src, appendHash) },
			})
		},
	}
	o.addFlags(cmd)
	src.addFlags(cmd, "config map")
	cmd.Flags().BoolVar(&appendHash, "append-hash", false, "Append a hash of the config map's content to its name.")
	return cmd
}

// buildConfigMap builds the ConfigMap as kubectl's create configmap does:
// files first, then literals, then env files.
func buildConfigMap(name, ns string, src *sourceFlags, appendHash bool) (*object, error) {
	if err := src.validate(); err != nil {
		return nil, err
	}
	data := map[string]string{}
	binary := map[string][]byte{}
	add := func(key string) error {
		if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
			return fmt.Errorf("%q is not a valid key name for a ConfigMap: %s", key, strings.Join(errs, ","))
		}
		if _, ok := data[key]; ok {
			return fmt.Errorf("cannot add key %q, another key by that name already exists in Data for ConfigMap %q", key, name)
		}
		if _, ok := binary[key]; ok {
			return fmt.Errorf("cannot add key %q, another key by that name already exists in BinaryData for ConfigMap %q", key, name)
		}
		return nil
	}
	addText := func(key, value string) error {
		if err := add(key); err != nil {
			return err
		}
		data[key] = value
		return nil
	}
	if err := readFileSources(src.files, func(key string, b []byte) error {
		if utf8.Valid(b) {
			return addText(key, string(b))
		}
		if err := add(key); err != nil {
			return err
		}
		binary[key] = b
		return nil
	}); err != nil {
		return nil, err
	}
	for _, l := range src.literals {
		key, value, err := parseLiteralSource(l)
		if err != nil {
			return nil, err
		}
		if err := addText(key, value); err != nil {
			return nil, err
		}
	}
	if err := readEnvFiles(src.envFiles, "config", addText); err != nil {
		return nil, err
	}
	if appendHash {
		content := map[string]any{"kind": "ConfigMap", "name": name, "data": data}
		if len(binary) > 0 {
			content["binaryData"] = binary
		}
		h, err := nameHash(content)
		if err != nil {
			return nil, err
		}
		name += "-" + h
	}
	obj := &object{gvr: configMapGVR, kind: "ConfigMap", name: name, namespace: ns}
	if len(data) > 0 {
		obj.body = append(obj.body, field{"data", data})
	}
	if len(binary) > 0 {
		obj.body = append(obj.body, field{"binaryData", binary})
	}
	return obj, nil
}
