package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/rest"
)

// selfSubjectReviewVersions are the versions of authentication.k8s.io
// asked in turn: the next only when the server does not serve one (404).
var selfSubjectReviewVersions = []string{"v1", "v1beta1", "v1alpha1"}

var (
	errReviewsNotEnabled = errors.New("the selfsubjectreviews API is not enabled in the cluster")
	errReviewsForbidden  = errors.New("the selfsubjectreviews API is not enabled in the cluster or you do not have permission to call it")
)

func newWhoAmICommand(f *cli.Factory) *cobra.Command {
	output := ""
	showManaged := false
	cmd := &cobra.Command{
		Use:   "whoami",
		Short: "Check who you are: your user name, UID, groups and extra attributes",
		Long: `Print who the server takes you for, with a SelfSubjectReview: user name, UID,
groups and extra attributes, as the authenticator (a token webhook, an
authenticating proxy, OIDC, a client certificate...) and any impersonation
(--as, --as-group) make them.`,
		Example: `  # Who am I?
  kdyn auth whoami

  # The same, as the review the server answered
  kdyn auth whoami -o json

  # Only the user name
  kdyn auth whoami -o jsonpath='{.status.userInfo.username}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWhoAmI(cmd.Context(), f, output, showManaged)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json, yaml, name, jsonl, jsonpath=..., gjson=... (default: a table of the attributes).")
	cmd.Flags().BoolVar(&showManaged, "show-managed-fields", false, "Keep metadata.managedFields in json and yaml output.")
	return cmd
}

func runWhoAmI(ctx context.Context, f *cli.Factory, output string, showManaged bool) error {
	var spec cli.OutputSpec
	if output != "" {
		var err error
		if spec, _, err = cli.WriteOutput(output); err != nil {
			return err
		}
	}
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	var raw []byte
	for _, v := range selfSubjectReviewVersions {
		body := fmt.Appendf(nil, `{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/%s","metadata":{},"status":{"userInfo":{}}}`, v)
		raw, err = rc.Post().Group("authentication.k8s.io").Version(v).Resource("selfsubjectreviews").
			ContentType(rest.ContentTypeJSON).Body(body).DoRaw(ctx)
		if !apierrors.IsNotFound(err) {
			break
		}
	}
	switch {
	case apierrors.IsForbidden(err):
		return &cli.ExitError{Code: cli.FailureCode(f, err), Err: errReviewsForbidden}
	case apierrors.IsNotFound(err):
		return &cli.ExitError{Code: cli.FailureCode(f, err), Err: errReviewsNotEnabled}
	case err != nil:
		return err
	}
	if output != "" {
		return cli.PrintObjectJSON(f.Streams.Out, spec, raw, true, showManaged)
	}
	return printUserInfo(f.Streams.Out, raw)
}

// userInfo is a review's status.userInfo.
type userInfo struct {
	Username string              `json:"username"`
	UID      string              `json:"uid"`
	Groups   []string            `json:"groups"`
	Extra    map[string][]string `json:"extra"`
}

// printUserInfo prints kubectl's whoami table: the attributes the review
// has, extras sorted by key.
func printUserInfo(w io.Writer, raw []byte) error {
	var review struct {
		Status struct {
			UserInfo userInfo `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &review); err != nil {
		return fmt.Errorf("decode the SelfSubjectReview: %w", err)
	}
	ui := review.Status.UserInfo
	tw := newTabWriter(w)
	fmt.Fprintf(tw, "ATTRIBUTE\tVALUE\n")
	if ui.Username != "" {
		fmt.Fprintf(tw, "Username\t%s\n", ui.Username)
	}
	if ui.UID != "" {
		fmt.Fprintf(tw, "UID\t%s\n", ui.UID)
	}
	if len(ui.Groups) > 0 {
		fmt.Fprintf(tw, "Groups\t%v\n", ui.Groups)
	}
	for _, k := range slices.Sorted(maps.Keys(ui.Extra)) {
		fmt.Fprintf(tw, "Extra: %s\t%v\n", k, ui.Extra[k])
	}
	return tw.Flush()
}
