package generate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/rest"
)

// boundObjectKinds are the kinds a token can be bound to, with their
// apiVersion, as kubectl lists them (sorted).
var boundObjectKinds = map[string]string{"Node": "v1", "Pod": "v1", "Secret": "v1"}

// boundObjectKindList is boundObjectKinds' keys, in kubectl's wording.
const boundObjectKindList = "Node, Pod, Secret"

// tokenOptions are the flags of "create token".
type tokenOptions struct {
	output            string
	showManagedFields bool
	audiences         []string
	duration          time.Duration
	boundKind         string
	boundName         string
	boundUID          string
}

// newTokenCommand returns "create token": a TokenRequest for a service
// account, its token printed.
func newTokenCommand(f *cli.Factory) *cobra.Command {
	o := &tokenOptions{}
	cmd := &cobra.Command{
		Use:   "token SERVICE_ACCOUNT_NAME",
		Short: "Request a service account token",
		Long: `Request a service account token: an authentication.k8s.io/v1 TokenRequest
is created for the service account (its token subresource), and the token
the server issues is printed (with a newline only on a terminal, as kubectl
prints it), or the whole TokenRequest with -o.`,
		Example: `  # A token for the service account "myapp" in the current namespace
  kdyn create token myapp

  # In another namespace, valid for 10 minutes
  kdyn create token myapp --namespace myns --duration 10m

  # For another audience
  kdyn create token myapp --audience https://example.com

  # Bound to a Secret: the token expires when the Secret is deleted
  kdyn create token myapp --bound-object-kind Secret --bound-object-name mysecret`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	cli.AddOutputFlags(fl, &o.output, "Print the TokenRequest instead of the token: name, json, yaml (or any object output of get).")
	fl.BoolVar(&o.showManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in json and yaml output.")
	fl.StringArrayVar(&o.audiences, "audience", nil, "Audience of the requested token. If unset, defaults to requesting a token for use with the Kubernetes API server. May be repeated to request a token valid for multiple audiences.")
	fl.DurationVar(&o.duration, "duration", 0, "Requested lifetime of the issued token. If not set or if set to 0, the lifetime will be determined by the server automatically. The server may return a token with a longer or shorter lifetime.")
	fl.StringVar(&o.boundKind, "bound-object-kind", "", "Kind of an object to bind the token to. Supported kinds are "+boundObjectKindList+". If set, --bound-object-name must be provided.")
	fl.StringVar(&o.boundName, "bound-object-name", "", "Name of an object to bind the token to. The token will expire when the object is deleted. Requires --bound-object-kind.")
	fl.StringVar(&o.boundUID, "bound-object-uid", "", "UID of an object to bind the token to. Requires --bound-object-kind and --bound-object-name. If unset, the UID of the existing object is used.")
	return cmd
}

// validate refuses the flags kubectl refuses, in its words and order.
func (o *tokenOptions) validate(name, ns string) error {
	switch {
	case name == "":
		return errors.New("service account name is required")
	case ns == "":
		return errors.New("--namespace is required")
	case o.duration < 0:
		return errors.New("--duration must be greater than or equal to 0")
	case o.duration%time.Second != 0:
		return errors.New("--duration cannot be expressed in units less than seconds")
	}
	for _, a := range o.audiences {
		if a == "" {
			return errors.New("--audience must not be an empty string")
		}
	}
	if o.boundKind == "" {
		switch {
		case o.boundName != "":
			return errors.New("--bound-object-name can only be set if --bound-object-kind is provided")
		case o.boundUID != "":
			return errors.New("--bound-object-uid can only be set if --bound-object-kind is provided")
		}
		return nil
	}
	if _, ok := boundObjectKinds[o.boundKind]; !ok {
		return errors.New("supported --bound-object-kind values are " + boundObjectKindList)
	}
	if o.boundName == "" {
		return errors.New("--bound-object-name is required if --bound-object-kind is provided")
	}
	return nil
}

// request is the TokenRequest to send, as JSON.
func (o *tokenOptions) request() ([]byte, error) {
	spec := fields{}
	if len(o.audiences) > 0 {
		spec = append(spec, field{"audiences", o.audiences})
	}
	if o.duration > 0 {
		spec = append(spec, field{"expirationSeconds", int64(o.duration / time.Second)})
	}
	if o.boundKind != "" {
		ref := fields{{"kind", o.boundKind}, {"apiVersion", boundObjectKinds[o.boundKind]}, {"name", o.boundName}}
		if o.boundUID != "" {
			ref = append(ref, field{"uid", o.boundUID})
		}
		spec = append(spec, field{"boundObjectRef", ref})
	}
	return json.Marshal(fields{{"kind", "TokenRequest"}, {"apiVersion", "authentication.k8s.io/v1"}, {"metadata", fields{}}, {"spec", spec}})
}

// run checks the arguments and flags as kubectl does (the name, the
// namespace, -o, then the flags), requests the token and prints it.
func (o *tokenOptions) run(cmd *cobra.Command, f *cli.Factory, args []string) error {
	name, err := nameArg(cmd, args)
	if err != nil {
		return err
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	out, withOutput, err := cli.WriteOutput(o.output)
	if err != nil {
		return err
	}
	if err := o.validate(name, ns); err != nil {
		return err
	}
	body, err := o.request()
	if err != nil {
		return err
	}
	raw, err := cli.ResourceRequest(rc.Post(), serviceAccountGVR, ns).Name(name).SubResource("token").
		ContentType(rest.ContentTypeJSON).Body(body).DoRaw(cmd.Context())
	if err != nil {
		fmt.Fprintf(f.Streams.ErrOut, "error: failed to create token: %s\n", err.Error())
		return &cli.ExitError{Code: cli.FailureCode(f, err), Silent: true, Err: err}
	}
	var resp struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("failed to create token: %v", err)
	}
	if resp.Status.Token == "" {
		return errors.New("failed to create token: no token in server response")
	}
	// As kubectl: --template alone does not replace the token; -o does.
	if withOutput && cmd.Flags().Changed("output") {
		return cli.PrintObjectJSON(f.Streams.Out, out, raw, true, o.showManagedFields)
	}
	// kubectl ends the token with a newline only on a terminal, so that
	// $(kubectl create token x) and pipes get the token alone.
	format := "%s"
	if file, ok := f.Streams.Out.(*os.File); ok && term.IsTerminal(int(file.Fd())) {
		format = "%s\n"
	}
	_, err = fmt.Fprintf(f.Streams.Out, format, resp.Status.Token)
	return err
}
