package describe

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/rest"
)

var eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// event is what the Events section shows of a core/v1 Event.
type event struct {
	typ, reason, source, message string
	first, last                  time.Time
	eventTime                    time.Time
	count                        int64
	series                       bool
	seriesCount                  int64
	seriesLast                   time.Time
}

// listEvents lists the events about obj (by kind, name, namespace and uid),
// chunk objects a page.
func listEvents(ctx context.Context, rc *rest.Client, obj *unstructured.Unstructured, chunk int64) ([]event, error) {
	sel := []string{
		"involvedObject.kind=" + obj.GetKind(),
		"involvedObject.name=" + obj.GetName(),
		"involvedObject.namespace=" + obj.GetNamespace(),
	}
	if obj.GetUID() != "" {
		sel = append(sel, "involvedObject.uid="+string(obj.GetUID()))
	}
	opts := metav1.ListOptions{FieldSelector: strings.Join(sel, ","), Limit: chunk}
	var out []event
	for {
		raw, err := cli.ListRaw(ctx, rc, eventsGVR, obj.GetNamespace(), opts)
		if err != nil {
			return nil, err
		}
		list := gjson.ParseBytes(raw)
		for _, e := range list.Get("items").Array() {
			out = append(out, event{
				typ: e.Get("type").String(), reason: e.Get("reason").String(),
				source:  firstOf(e.Get("source.component").String(), e.Get("reportingComponent").String()),
				message: e.Get("message").String(),
				first:   e.Get("firstTimestamp").Time(), last: e.Get("lastTimestamp").Time(),
				eventTime: e.Get("eventTime").Time(), count: e.Get("count").Int(),
				series: e.Get("series").Exists(), seriesCount: e.Get("series.count").Int(),
				seriesLast: e.Get("series.lastObservedTime").Time(),
			})
			if fp := e.Get("involvedObject.fieldPath").String(); fp != "" {
				out[len(out)-1].message = fp + ": " + strings.TrimSpace(out[len(out)-1].message)
			}
		}
		c := list.Get("metadata.continue").String()
		if c == "" {
			return out, nil
		}
		opts.Continue = c
	}
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// writeEvents writes the Events section as kubectl does: oldest (by last
// timestamp) first, a repeated event with its count and first time.
func writeEvents(w *writer, events []event) {
	if len(events) == 0 {
		w.write(0, "Events:\t<none>\n")
		return
	}
	w.flush()
	sort.SliceStable(events, func(i, j int) bool { return events[i].last.Before(events[j].last) })
	w.write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
	w.write(1, "----\t------\t----\t----\t-------\n")
	for _, e := range events {
		first := since(e.eventTime)
		if e.eventTime.IsZero() {
			first = since(e.first)
		}
		interval := first
		switch {
		case e.series:
			interval = fmt.Sprintf("%s (x%d over %s)", since(e.seriesLast), e.seriesCount, first)
		case e.count > 1:
			interval = fmt.Sprintf("%s (x%d over %s)", since(e.last), e.count, first)
		}
		w.write(1, "%v\t%v\t%s\t%v\t%v\n", e.typ, e.reason, interval, e.source, strings.TrimSpace(e.message))
	}
}
