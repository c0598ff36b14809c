package serverinfo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/discovery"
)

type apiResourcesOptions struct {
	output     string
	namespaced bool
	apiGroup   string
	verbs      []string
	categories []string
	sortBy     string
	noHeaders  bool
	cached     bool

	// Set from the command line: the filters apply only when given, so
	// that --api-group= selects the core group and the --namespaced
	// default (true) filters nothing.
	namespacedSet bool
	apiGroupSet   bool
}

// NewAPIResourcesCommand returns "kdyn api-resources".
func NewAPIResourcesCommand(f *cli.Factory) *cobra.Command {
	o := &apiResourcesOptions{namespaced: true}
	cmd := &cobra.Command{
		Use:   "api-resources",
		Short: "Print the supported API resources on the server",
		Long: `Print the resource types the server serves: one row per resource, at its
group's preferred version (plus resources that exist only at another version
of the group), sorted by group and then by name.

Without --cached the server is asked again, as kubectl does: the cached
discovery documents are revalidated with their ETags, which costs two small
requests (two 304 answers when nothing changed), so a CRD created a moment
ago is listed. With --cached the disk cache is used as it is: within its
time to live (6h) no request is sent at all.

When some API group-versions cannot be discovered (an aggregated API whose
backend is down), the resources that could be discovered are printed, the
failed group-versions are named on stderr and the exit code is 1.

-o json prints one APIResourceList per group-version (kind, apiVersion,
groupVersion, resources), one document after the other; -o yaml the same as
YAML documents separated by ---.`,
		Example: `  # Every resource type
  kdyn api-resources

  # With verbs and categories
  kdyn api-resources -o wide

  # Namespaced types that can be listed and watched, as TYPE.GROUP
  kdyn api-resources --namespaced=true --verbs=list,watch -o name

  # The core group only, sorted by kind
  kdyn api-resources --api-group= --sort-by=kind

  # From the disk cache, without asking the server
  kdyn api-resources --cached`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.namespacedSet = cmd.Flags().Changed("namespaced")
			o.apiGroupSet = cmd.Flags().Changed("api-group")
			return runAPIResources(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.output, "output", "o", "", "Output format: wide, name, json or yaml.")
	fl.BoolVar(&o.namespaced, "namespaced", true, "With =true only namespaced resources, with =false only cluster-scoped ones (no filter unless given).")
	fl.StringVar(&o.apiGroup, "api-group", "", "Only resources of this API group (--api-group= for the core group).")
	fl.StringSliceVar(&o.verbs, "verbs", nil, "Only resources that support all of these verbs (e.g. list,watch).")
	fl.StringSliceVar(&o.categories, "categories", nil, "Only resources in all of these categories (e.g. all).")
	fl.StringVar(&o.sortBy, "sort-by", "", "Sort by name or kind instead of by group.")
	fl.BoolVar(&o.noHeaders, "no-headers", false, "Do not print the header line.")
	fl.BoolVar(&o.cached, "cached", false, "Use the cached discovery documents without asking the server (when the cache is warm).")
	return cmd
}

func (o *apiResourcesOptions) validate() error {
	switch o.output {
	case "", "wide", "name", "json", "yaml":
	default:
		return cli.Usagef("--output %v is not available; use wide, name, json or yaml", o.output)
	}
	switch o.sortBy {
	case "", "name", "kind":
	default:
		return cli.Usagef("--sort-by accepts only name or kind")
	}
	return nil
}

// discoverySnapshot returns the server's discovery: from the caches with
// cached (0 requests when warm), otherwise revalidated with the server.
func discoverySnapshot(ctx context.Context, f *cli.Factory, cached bool) (*discovery.Snapshot, error) {
	dc, err := f.Discovery()
	if err != nil {
		return nil, err
	}
	if cached {
		return dc.Snapshot(ctx)
	}
	return dc.Refresh(ctx)
}

func runAPIResources(ctx context.Context, f *cli.Factory, o *apiResourcesOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	snap, err := discoverySnapshot(ctx, f, o.cached)
	if err != nil {
		return err
	}
	if err := printAPIResources(f.Streams.Out, selectAPIResources(snap, o), o); err != nil {
		return err
	}
	return reportPartialDiscovery(f.Streams.ErrOut, snap)
}

// reportPartialDiscovery names the group-versions that failed discovery
// on stderr, the way kubectl words it, and returns a silent exit 1; nil
// when discovery was complete.
func reportPartialDiscovery(w io.Writer, snap *discovery.Snapshot) error {
	if snap.Failed == nil || len(snap.Failed.Groups) == 0 {
		return nil
	}
	fmt.Fprintln(w, "error: "+strings.TrimPrefix(snap.Failed.Error(), "discovery: "))
	return &cli.ExitError{Code: cli.ExitGeneric, Silent: true, Err: snap.Failed}
}

// selectAPIResources returns, in discovery order, one APIResourceList per
// group-version holding the preferred resources that pass the filters.
// Resources without verbs are left out, as kubectl does.
func selectAPIResources(snap *discovery.Snapshot, o *apiResourcesOptions) []*metav1.APIResourceList {
	var out []*metav1.APIResourceList
	for _, l := range snap.PreferredResources(false) {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		kept := &metav1.APIResourceList{TypeMeta: l.TypeMeta, GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			switch {
			case len(r.Verbs) == 0:
			case o.apiGroupSet && o.apiGroup != gv.Group:
			case o.namespacedSet && o.namespaced != r.Namespaced:
			case !hasAll(r.Verbs, o.verbs):
			case !hasAll(r.Categories, o.categories):
			default:
				kept.APIResources = append(kept.APIResources, r)
			}
		}
		if len(kept.APIResources) > 0 {
			out = append(out, kept)
		}
	}
	return out
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// apiResourceRow is one resource with the group-version it is listed at.
type apiResourceRow struct {
	group, groupVersion string
	res                 metav1.APIResource
}

// sortedAPIResourceRows flattens lists and sorts them as kubectl does:
// stably by group (or by name or kind with --sort-by), ties by name.
func sortedAPIResourceRows(lists []*metav1.APIResourceList, sortBy string) []apiResourceRow {
	var rows []apiResourceRow
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, r := range l.APIResources {
			rows = append(rows, apiResourceRow{group: gv.Group, groupVersion: l.GroupVersion, res: r})
		}
	}
	key := func(r apiResourceRow) string {
		switch sortBy {
		case "name":
			return r.res.Name
		case "kind":
			return r.res.Kind
		}
		return r.group
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if a, b := key(rows[i]), key(rows[j]); a != b {
			return a < b
		}
		return rows[i].res.Name < rows[j].res.Name
	})
	return rows
}

// printAPIResources writes the selected resources in the output format.
func printAPIResources(w io.Writer, lists []*metav1.APIResourceList, o *apiResourcesOptions) error {
	switch o.output {
	case "json":
		for _, l := range lists {
			b, err := json.MarshalIndent(l, "", "    ")
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
				return err
			}
		}
		return nil
	case "yaml":
		for i, l := range lists {
			b, err := yaml.Marshal(l)
			if err != nil {
				return err
			}
			if i > 0 {
				if _, err := io.WriteString(w, "---\n"); err != nil {
					return err
				}
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	}
	rows := sortedAPIResourceRows(lists, o.sortBy)
	if o.output == "name" {
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(r.res.Name)
			if r.group != "" {
				b.WriteString("." + r.group)
			}
			b.WriteString("\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	wide := o.output == "wide"
	tw := printers.NewTabWriter(w)
	if !o.noHeaders {
		h := []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"}
		if wide {
			h = append(h, "VERBS", "CATEGORIES")
		}
		if err := printers.WriteRow(tw, h); err != nil {
			return err
		}
	}
	for _, r := range rows {
		cells := []string{r.res.Name, strings.Join(r.res.ShortNames, ","), r.groupVersion, strconv.FormatBool(r.res.Namespaced), r.res.Kind}
		if wide {
			cells = append(cells, strings.Join(r.res.Verbs, ","), strings.Join(r.res.Categories, ","))
		}
		if err := printers.WriteRow(tw, cells); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// NewAPIVersionsCommand returns "kdyn api-versions".
func NewAPIVersionsCommand(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "api-versions",
		Short: "Print the supported API versions on the server, in the form \"group/version\"",
		Long: `Print every group/version the server serves, sorted, one per line.

As kubectl does, the server is asked again (the cached discovery documents
are revalidated with their ETags). Group-versions whose resources could not
be discovered (an aggregated API whose backend is down) are still printed:
the server does serve them.`,
		Example: `  # Every group/version
  kdyn api-versions

  # Is the metrics API there?
  kdyn api-versions | grep metrics.k8s.io`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			snap, err := discoverySnapshot(cmd.Context(), f, false)
			if err != nil {
				return err
			}
			_, err = io.WriteString(f.Streams.Out, strings.Join(apiVersions(snap), "\n")+"\n")
			return err
		},
	}
}

// apiVersions returns every group-version of snap, including the ones
// that failed discovery, sorted.
func apiVersions(snap *discovery.Snapshot) []string {
	seen := map[string]bool{}
	var out []string
	add := func(gv schema.GroupVersion) {
		if s := gv.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, g := range snap.Groups {
		for _, v := range g.Versions {
			add(schema.GroupVersion{Group: g.Name, Version: v.Version})
		}
	}
	if snap.Failed != nil {
		for _, gv := range snap.Failed.GroupVersions() {
			add(gv)
		}
	}
	sort.Strings(out)
	return out
}
