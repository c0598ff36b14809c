package cli

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Raw sends one request to uri, a path below the server with its query, as
// kubectl's --raw does: body as is (nil sends none), and the answer copied
// to standard output unchanged, streamed (a watch=true query keeps it
// open). An answer other than success is the server's error.
func Raw(ctx context.Context, f *Factory, method, uri string, body []byte) error {
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return Usagef("--raw must be a valid URL path: %v", err)
	}
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	req := rc.Verb(method).AbsPath(u.Path)
	for k, vs := range u.Query() {
		for _, v := range vs {
			req.Param(k, v)
		}
	}
	if body != nil {
		req.Body(body)
	}
	stream, err := req.Stream(ctx)
	if err != nil {
		return err
	}
	defer stream.Close()
	_, err = io.Copy(f.Streams.Out, stream)
	return err
}

// AddRawFlag adds kubectl's --raw to a command that reads manifests
// (create, replace, delete); method is the request it sends.
func (m *ManifestFlags) AddRawFlag(cmd *cobra.Command, method string) {
	cmd.Flags().StringVar(&m.Raw, "raw", "", "Send the file of -f as is ("+method+") to this URI path of the server and print the answer, instead of acting on its objects.")
}

// SendRaw sends the --raw request with the file of -f as its body (none
// for a DELETE without -f) and prints the answer.
func (m *ManifestFlags) SendRaw(ctx context.Context, f *Factory, method string) error {
	body, err := m.rawBody(f, method != http.MethodDelete)
	if err != nil {
		return err
	}
	return Raw(ctx, f, method, m.Raw, body)
}

// rawBody reads what --raw sends: the one file -f names, or standard
// input for -f -, unparsed. Without -f it is nil or, when required, an
// error, as with kubectl.
func (m *ManifestFlags) rawBody(f *Factory, required bool) ([]byte, error) {
	switch {
	case m.Kustomize != "":
		return nil, Usagef("--raw and -k are mutually exclusive: --raw sends one file as is")
	case len(m.Filenames) == 0 && !required:
		return nil, nil
	case len(m.Filenames) != 1:
		return nil, Usagef("--raw can only use a single local file or stdin")
	case strings.HasPrefix(m.Filenames[0], "http://") || strings.HasPrefix(m.Filenames[0], "https://"):
		return nil, Usagef("--raw cannot read from a url")
	case m.Recursive:
		return nil, Usagef("--raw and --recursive are mutually exclusive")
	case m.Filenames[0] == "-":
		f.ClaimStdin(StdinManifestUse)
		return io.ReadAll(f.Streams.In)
	}
	return os.ReadFile(m.Filenames[0])
}
