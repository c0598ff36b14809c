package generate

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

var secretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// The secret types and keys the generators fill in.
const (
	secretTypeTLS          = "kubernetes.io/tls"
	secretTypeDockerConfig = "kubernetes.io/dockerconfigjson"
	dockerConfigJSONKey    = ".dockerconfigjson"
	tlsCertKey             = "tls.crt"
	tlsKeyKey              = "tls.key"
)

// secretFailure is kubectl's prefix for a refused secret (no colon).
const secretFailure = "failed to create secret "

func newSecretCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret (generic | tls | docker-registry)",
		Short: "Create a secret using a specified subcommand",
		Long: `Create a Secret of one of three kinds:

  generic          from files, directories, env files or literal values
                   (type Opaque unless --type says otherwise)
  tls              from a PEM certificate and its private key
  docker-registry  credentials for a container registry`,
		Example: `  kdyn create secret generic db-pass --from-literal=password=s3cr3t
  kdyn create secret tls web-tls --cert=tls.crt --key=tls.key
  kdyn create secret docker-registry regcred --docker-server=registry.example.com --docker-username=me --docker-password=pw`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSecretGenericCommand(f), newSecretTLSCommand(f), newSecretDockerRegistryCommand(f))
	return cmd
}

// secretObject is a Secret with data and type, members in the order of
// the typed Secret.
func secretObject(name, ns, typ string, data map[string][]byte) *object {
	obj := &object{gvr: secretGVR, kind: "Secret", name: name, namespace: ns}
	if len(data) > 0 {
		obj.body = append(obj.body, field{"data", data})
	}
	if typ != "" {
		obj.body = append(obj.body, field{"type", typ})
	}
	return obj
}

// secretName appends the content hash to name with --append-hash.
func secretName(name, typ string, data map[string][]byte, appendHash bool) (string, error) {
	if !appendHash {
		return name, nil
	}
	h, err := nameHash(map[string]any{"kind": "Secret", "type": typ, "name": name, "data": data})
	if err != nil {
		return "", err
	}
	return name + "-" + h, nil
}

// addSecretKey adds one key to a secret's data, as kubectl checks it.
func addSecretKey(data map[string][]byte, key string, value []byte) error {
	if errs := validation.IsConfigMapKey(key); len(errs) != 0 {
		return fmt.Errorf("%q is not valid key name for a Secret %s", key, strings.Join(errs, ";"))
	}
	if _, ok := data[key]; ok {
		return fmt.Errorf("cannot add key %s, another key by that name already exists", key)
	}
	data[key] = value
	return nil
}

func newSecretGenericCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	src := &sourceFlags{}
	typ := ""
	appendHash := false
	cmd := &cobra.Command{
		Use:   "generic NAME [--type=string] [--from-file=[KEY=]SOURCE] [--from-literal=KEY=VALUE] [--from-env-file=FILE] [--dry-run=server|client|none]",
		Short: "Create a secret from local files, directories or literal values",
		Long: `Create a Secret from files, directories, env files or literal values.

A file's key is its base name unless given (--from-file=KEY=PATH); a
directory adds each of its regular files under its own name. Keys must be
valid Secret keys, and each may appear once. Values are stored base64
encoded in data.

With --dry-run=client -o yaml (or json) nothing is sent, and the output is
byte for byte kubectl's for the same input.`,
		Example: `  # A key per file of a directory
  kdyn create secret generic my-secret --from-file=path/to/dir

  # Keys of your choice for two files
  kdyn create secret generic my-secret --from-file=ssh-privatekey=path/to/id_rsa --from-file=ssh-publickey=path/to/id_rsa.pub

  # Literal values
  kdyn create secret generic my-secret --from-literal=key1=supersecret --from-literal=key2=topsecret

  # A file and a literal
  kdyn create secret generic my-secret --from-file=ssh-privatekey=path/to/id_rsa --from-literal=passphrase=topsecret

  # From env files, printed rather than created
  kdyn create secret generic my-secret --from-env-file=path/to/foo.env --from-env-file=path/to/bar.env --dry-run=client -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: secretGVR, kind: "Secret", namespaced: true, failure: secretFailure,
				build: func(name, ns string) (*object, error) { return buildSecretGeneric(name, ns, typ, src, appendHash) },
			})
		},
	}
	o.addFlags(cmd)
	src.addFlags(cmd, "secret")
	cmd.Flags().StringVar(&typ, "type", "", "The type of secret to create (default: none, which the server takes as Opaque).")
	cmd.Flags().BoolVar(&appendHash, "append-hash", false, "Append a hash of the secret's content to its name.")
	return cmd
}

// buildSecretGeneric builds the Secret as kubectl's create secret generic
// does: literals first, then files, then env files.
func buildSecretGeneric(name, ns, typ string, src *sourceFlags, appendHash bool) (*object, error) {
	if err := src.validate(); err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	for _, l := range src.literals {
		key, value, err := parseLiteralSource(l)
		if err != nil {
			return nil, err
		}
		if err := addSecretKey(data, key, []byte(value)); err != nil {
			return nil, err
		}
	}
	if err := readFileSources(src.files, func(key string, b []byte) error { return addSecretKey(data, key, b) }); err != nil {
		return nil, err
	}
	if err := readEnvFiles(src.envFiles, "secret", func(key, value string) error { return addSecretKey(data, key, []byte(value)) }); err != nil {
		return nil, err
	}
	name, err := secretName(name, typ, data, appendHash)
	if err != nil {
		return nil, err
	}
	return secretObject(name, ns, typ, data), nil
}

func newSecretTLSCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	var cert, key string
	appendHash := false
	cmd := &cobra.Command{
		Use:   "tls NAME --cert=path/to/cert/file --key=path/to/key/file [--dry-run=server|client|none]",
		Short: "Create a TLS secret",
		Long: `Create a Secret of type kubernetes.io/tls from a PEM encoded certificate and
its private key, which must match (they are checked before anything is sent).`,
		Example: `  # A TLS secret from a key pair
  kdyn create secret tls tls-secret --cert=path/to/tls.crt --key=path/to/tls.key`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: secretGVR, kind: "Secret", namespaced: true, failure: secretFailure,
				build: func(name, ns string) (*object, error) { return buildSecretTLS(name, ns, cert, key, appendHash) },
			})
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&cert, "cert", "", "Path to the PEM encoded public key certificate.")
	cmd.Flags().StringVar(&key, "key", "", "Path to the private key of the certificate.")
	cmd.Flags().BoolVar(&appendHash, "append-hash", false, "Append a hash of the secret's content to its name.")
	return cmd
}

func buildSecretTLS(name, ns, certFile, keyFile string, appendHash bool) (*object, error) {
	if keyFile == "" || certFile == "" {
		return nil, errors.New("key and cert must be specified")
	}
	read := func(file string) ([]byte, error) {
		b, err := os.ReadFile(file)
		if err != nil {
			//lint:ignore ST1005 kubectl's exact wording
			return nil, fmt.Errorf("Cannot read file %v, %v", file, err)
		}
		return b, nil
	}
	cert, err := read(certFile)
	if err != nil {
		return nil, err
	}
	key, err := read(keyFile)
	if err != nil {
		return nil, err
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		return nil, err
	}
	data := map[string][]byte{tlsCertKey: cert, tlsKeyKey: key}
	if name, err = secretName(name, secretTypeTLS, data, appendHash); err != nil {
		return nil, err
	}
	return secretObject(name, ns, secretTypeTLS, data), nil
}

// dockerConfigEntry and dockerConfigJSON are the .dockerconfigjson
// document, members in kubectl's order.
type dockerConfigEntry struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Email    string `json:"email,omitempty"`
	Auth     string `json:"auth,omitempty"`
}

type dockerConfigJSON struct {
	Auths map[string]dockerConfigEntry `json:"auths"`
}

type dockerOptions struct {
	username, password, email, server string
	files                             []string
	appendHash                        bool
}

func newSecretDockerRegistryCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	d := &dockerOptions{}
	cmd := &cobra.Command{
		Use:   "docker-registry NAME --docker-username=user --docker-password=password --docker-email=email [--docker-server=string] [--from-file=[KEY=]SOURCE] [--dry-run=server|client|none]",
		Short: "Create a secret for use with a Docker registry",
		Long: `Create a Secret of type kubernetes.io/dockerconfigjson holding credentials for
a container registry, for nodes to pull images on a pod's behalf (reference
it from the pod's or its service account's imagePullSecrets).

Give either the credentials (--docker-username, --docker-password,
--docker-server, and optionally --docker-email) or an existing Docker
config file with --from-file (its key defaults to .dockerconfigjson).`,
		Example: `  # Credentials for a registry
  kdyn create secret docker-registry my-secret --docker-server=DOCKER_REGISTRY_SERVER --docker-username=DOCKER_USER --docker-password=DOCKER_PASSWORD --docker-email=DOCKER_EMAIL

  # From ~/.docker/config.json
  kdyn create secret docker-registry my-secret --from-file=path/to/.docker/config.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: secretGVR, kind: "Secret", namespaced: true, failure: secretFailure,
				build: d.build,
			})
		},
	}
	o.addFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&d.username, "docker-username", "", "Username for the registry.")
	fl.StringVar(&d.password, "docker-password", "", "Password for the registry.")
	fl.StringVar(&d.email, "docker-email", "", "Email for the registry.")
	fl.StringVar(&d.server, "docker-server", "https://index.docker.io/v1/", "Server location of the registry.")
	fl.StringSliceVar(&d.files, "from-file", nil, "A Docker config file ([KEY=]PATH; the key defaults to .dockerconfigjson), instead of the --docker-* credentials (repeatable).")
	fl.BoolVar(&d.appendHash, "append-hash", false, "Append a hash of the secret's content to its name.")
	return cmd
}

func (d *dockerOptions) build(name, ns string) (*object, error) {
	if len(d.files) == 0 && (d.username == "" || d.password == "" || d.server == "") {
		return nil, errors.New("either --from-file or the combination of --docker-username, --docker-password and --docker-server is required")
	}
	data := map[string][]byte{}
	if len(d.files) > 0 {
		files := make([]string, len(d.files))
		for i, f := range d.files {
			if !strings.Contains(f, "=") {
				f = dockerConfigJSONKey + "=" + f
			}
			files[i] = f
		}
		if err := readFileSources(files, func(key string, b []byte) error { return addSecretKey(data, key, b) }); err != nil {
			return nil, err
		}
	} else {
		cfg := dockerConfigJSON{Auths: map[string]dockerConfigEntry{d.server: {
			Username: d.username, Password: d.password, Email: d.email,
			Auth: base64.StdEncoding.EncodeToString([]byte(d.username + ":" + d.password)),
		}}}
		b, err := json.Marshal(cfg)
		if err != nil {
			return nil, err
		}
		data[dockerConfigJSONKey] = b
	}
	name, err := secretName(name, secretTypeDockerConfig, data, d.appendHash)
	if err != nil {
		return nil, err
	}
	return secretObject(name, ns, secretTypeDockerConfig, data), nil
}
