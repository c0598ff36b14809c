package events

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/rest"
)

// coreEvents is what kubectl events reads.
var coreEvents = schema.GroupVersionResource{Version: "v1", Resource: "events"}

type options struct {
	allNamespaces     bool
	watch             bool
	noHeaders         bool
	showManagedFields bool
	forObject         string
	output            string
	types             []string
	chunkSize         int64
}

// NewCommand returns "kdyn events".
func NewCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:                   "events [-o json|yaml|jsonl] [--for TYPE/NAME] [--watch] [--types=Normal,Warning]",
		DisableFlagsInUseLine: true,
		Short:                 "List events",
		Long: `List the Events of the current namespace (-n), of every namespace (-A) or of one
object (--for TYPE/NAME), oldest first by when each was last seen: a series'
last observation, else the last timestamp, else the event time. The table
has kubectl events' columns: LAST SEEN (with "(xN over T)" for repeated
events), TYPE, REASON, OBJECT and MESSAGE.

-o json and -o yaml print an EventList as kubectl events does, byte for byte;
-o jsonl prints one Event per line. With -w, the list is followed by the
Events created or updated after it, as they come: the watch resumes when the
server ends it, and after a 410 (expired resourceVersion) lists again and
prints only what it had not printed. Deletions (Events expire after an hour
by default) are not printed.

kdyn reads core/v1 Events, as kubectl does; Events written through
events.k8s.io/v1 (kdyn's events package, client-go's tools/events) are the
same objects.`,
		Example: `  # Recent events in the current namespace
  kdyn events

  # In every namespace
  kdyn events -A

  # Of one Pod, then wait for more and print them as they come
  kdyn events --for pod/web-5d9c7b9f4-x2x9z --watch

  # Warnings only, as YAML
  kdyn events --types=Warning -o yaml

  # One JSON object per line, for jq
  kdyn events -A -o jsonl | jq -r .reason`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), f, o) },
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.watch, "watch", "w", false, "After listing the requested events, watch for more events.")
	fl.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "List the events of every namespace. The namespace of the current context, or -n, is ignored.")
	fl.StringVar(&o.forObject, "for", "", "Only the events of this object, as TYPE/NAME (pod/web, deployment.apps/api).")
	fl.StringSliceVar(&o.types, "types", nil, "Only events of these types: Normal, Warning (comma-separated).")
	fl.BoolVar(&o.noHeaders, "no-headers", false, "Print the table without its header line.")
	fl.StringVarP(&o.output, "output", "o", "", "Output format: json, yaml or jsonl. Default: a table.")
	fl.Int64Var(&o.chunkSize, "chunk-size", 500, "List in pages of this many events; 0 lists all at once.")
	fl.BoolVar(&o.showManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in json, yaml and jsonl output.")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml", "jsonl"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("types", completeTypes)
	return cmd
}

// completeTypes completes the last element of a comma list of types.
func completeTypes(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	prefix, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []string
	for _, t := range []string{"Normal", "Warning"} {
		if strings.HasPrefix(strings.ToLower(t), strings.ToLower(last)) && !strings.Contains(","+strings.ToLower(prefix), ","+strings.ToLower(t)+",") {
			out = append(out, prefix+t)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func run(ctx context.Context, f *cli.Factory, o *options) error {
	format, err := parseFormat(o.output)
	if err != nil {
		return err
	}
	for _, t := range o.types {
		if !strings.EqualFold(t, "Normal") && !strings.EqualFold(t, "Warning") {
			return cli.Usagef("valid --types are Normal or Warning")
		}
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	listNS := ns
	if o.allNamespaces {
		listNS = ""
	}
	selector, err := forSelector(ctx, f, o.forObject)
	if err != nil {
		return err
	}
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	opts := metav1.ListOptions{FieldSelector: selector, Limit: o.chunkSize}
	evs, rv, err := list(ctx, rc, listNS, opts)
	if err != nil {
		return err
	}
	evs = o.filter(evs)
	// sort.Sort, not sort.Stable: kubectl's order, ties included, comes
	// from the same algorithm over the same list.
	sort.Sort(byLastSeen(evs))
	p := newPrinter(f.Streams.Out, format, o)
	if o.watch {
		ctx, _, stop, err := f.WatchContext(ctx)
		if err != nil {
			return err
		}
		defer stop()
		return watchEvents(ctx, eventSource{rc: rc, ns: listNS, selector: selector}, o, p, f.Streams.ErrOut, evs, rv)
	}
	if len(evs) == 0 {
		if o.allNamespaces {
			fmt.Fprintln(f.Streams.ErrOut, "No events found.")
		} else {
			fmt.Fprintf(f.Streams.ErrOut, "No events found in %s namespace.\n", ns)
		}
		return nil
	}
	return p.printList(evs)
}

// forSelector returns the field selector of --for TYPE/NAME, as kubectl
// builds it: the object's kind, apiVersion (the preferred version of its
// group) and name.
func forSelector(ctx context.Context, f *cli.Factory, arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	typ, name, ok := strings.Cut(arg, "/")
	if !ok {
		return "", cli.Usagef("--for must be in resource/name form")
	}
	if strings.Contains(name, "/") {
		return "", cli.Usagef("arguments in resource/name form may not have more than one slash")
	}
	matches, err := f.Resolve(ctx, []string{strings.ToLower(typ) + "/" + name})
	if err != nil {
		return "", err
	}
	if len(matches) != 1 || matches[0].Name == "" {
		return "", cli.Usagef("--for must name one object, as TYPE/NAME")
	}
	m := matches[0]
	return fields.AndSelectors(
		fields.OneTermEqualSelector("involvedObject.kind", m.GVK.Kind),
		fields.OneTermEqualSelector("involvedObject.apiVersion", m.GVK.GroupVersion().String()),
		fields.OneTermEqualSelector("involvedObject.name", m.Name),
	).String(), nil
}

// list reads every page of Events and returns them with the list's
// resourceVersion.
func list(ctx context.Context, rc *rest.Client, ns string, opts metav1.ListOptions) ([]*event, string, error) {
	var out []*event
	for {
		evs, page, err := listPage(ctx, rc, ns, opts)
		if err != nil {
			return nil, "", err
		}
		out = append(out, evs...)
		if page.Continue == "" || opts.Limit <= 0 {
			return out, page.ResourceVersion, nil
		}
		opts.Continue = page.Continue
	}
}

// listPage reads one page of Events.
func listPage(ctx context.Context, rc *rest.Client, ns string, opts metav1.ListOptions) ([]*event, informer.ListPage, error) {
	raw, err := cli.ListRaw(ctx, rc, coreEvents, ns, opts)
	if err != nil {
		return nil, informer.ListPage{}, err
	}
	res := gjson.GetManyBytes(raw, "items", "metadata.resourceVersion", "metadata.continue")
	items := res[0].Array()
	evs := make([]*event, len(items))
	for i, it := range items {
		evs[i] = parseEvent([]byte(it.Raw))
	}
	return evs, informer.ListPage{ResourceVersion: res[1].String(), Continue: res[2].String()}, nil
}

// filter keeps the events of --types (any case, as kubectl).
func (o *options) filter(evs []*event) []*event {
	if len(o.types) == 0 {
		return evs
	}
	out := evs[:0]
	for _, e := range evs {
		if o.wants(e) {
			out = append(out, e)
		}
	}
	return out
}

func (o *options) wants(e *event) bool {
	if len(o.types) == 0 {
		return true
	}
	for _, t := range o.types {
		if strings.EqualFold(t, e.typ) {
			return true
		}
	}
	return false
}

// event is what the table and the sort read of one Event, with its JSON as
// the server sent it.
type event struct {
	raw                                      []byte
	uid, resourceVersion, namespace          string
	typ, reason, kind, name, message         string
	eventTime, firstTimestamp, lastTimestamp time.Time
	count                                    int64
	series                                   bool
	seriesCount                              int64
	seriesLast                               time.Time
}

var eventPaths = []string{
	"metadata.uid", "metadata.resourceVersion", "metadata.namespace",
	"type", "reason", "involvedObject.kind", "involvedObject.name", "message",
	"eventTime", "firstTimestamp", "lastTimestamp", "count",
	"series", "series.count", "series.lastObservedTime",
}

func parseEvent(raw []byte) *event {
	r := gjson.GetManyBytes(raw, eventPaths...)
	return &event{
		raw: raw, uid: r[0].String(), resourceVersion: r[1].String(), namespace: r[2].String(),
		typ: r[3].String(), reason: r[4].String(), kind: r[5].String(), name: r[6].String(), message: r[7].String(),
		eventTime: parseTime(r[8]), firstTimestamp: parseTime(r[9]), lastTimestamp: parseTime(r[10]),
		count:  r[11].Int(),
		series: r[12].IsObject(), seriesCount: r[13].Int(), seriesLast: parseTime(r[14]),
	}
}

// parseTime reads a metav1.Time or MicroTime; null or junk is the zero
// time, as kubectl's decoding leaves it.
func parseTime(r gjson.Result) time.Time {
	if r.Type != gjson.String {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, r.Str)
	if err != nil {
		return time.Time{}
	}
	return t
}

// lastSeen is kubectl events' sort key: the series' last observation, else
// lastTimestamp, else eventTime.
func (e *event) lastSeen() time.Time {
	if e.series {
		return e.seriesLast
	}
	if !e.lastTimestamp.IsZero() {
		return e.lastTimestamp
	}
	return e.eventTime
}

type byLastSeen []*event

func (l byLastSeen) Len() int           { return len(l) }
func (l byLastSeen) Swap(i, j int)      { l[i], l[j] = l[j], l[i] }
func (l byLastSeen) Less(i, j int) bool { return l[i].lastSeen().Before(l[j].lastSeen()) }
