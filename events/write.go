package events

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/ctxsleep"
)

// GVR is the resource the recorder writes: events.k8s.io/v1 events.
var GVR = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}

// writes sends Events to the server, with retries. Used by Run's goroutine
// alone.
type writes struct {
	client      dynamic.Interface
	log         logr.Logger
	metrics     Metrics
	stats       *counters
	controller  string
	instance    string
	maxAttempts int
	backoffBase time.Duration
	backoffMax  time.Duration
	lastNano    int64 // the timestamp of the last name made, kept increasing
}

// write brings the server's Event up to s — creating it, or patching its
// series — retrying conflicts, server errors and transport failures up to
// maxAttempts times with backoff. It reports whether the write was done; a
// write given up on is logged and counted as dropped.
func (w *writes) write(ctx context.Context, s *series) bool {
	var err error
	for attempt := 1; ; attempt++ {
		if err = w.writeOnce(ctx, s); err == nil {
			break
		}
		if attempt >= w.maxAttempts || !retryable(err) || ctx.Err() != nil {
			break
		}
		w.stats.retries.Add(1)
		if ctxsleep.Sleep(ctx, w.backoff(attempt, err)) != nil {
			break
		}
	}
	s.lastWrite = time.Now()
	if err == nil {
		return true
	}
	reason := DropWriteFailed
	if ctx.Err() != nil {
		reason = DropShutdown
	}
	w.log.Info("events: giving up writing an Event", "namespace", s.namespace, "name", s.name, "reason", s.first.reason, "count", s.count, "error", err)
	w.stats.drop(w.metrics, reason)
	return false
}

// writeOnce is one attempt of write.
func (w *writes) writeOnce(ctx context.Context, s *series) error {
	events := w.client.Resource(GVR).Namespace(s.namespace)
	count, last := s.count, s.lastObserved
	if s.written > 0 {
		_, err := events.Patch(ctx, s.name, types.StrategicMergePatchType, seriesPatch(count, last), metav1.PatchOptions{})
		if err == nil {
			s.written = count
			w.stats.seriesUpdates.Add(1)
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		// The Event expired (the server keeps Events an hour by default) or
		// was deleted: create it again, series included.
	}
	_, err := events.Create(ctx, w.object(s, count, last), metav1.CreateOptions{})
	switch {
	case err == nil:
	case apierrors.IsAlreadyExists(err) && s.written == 0 && s.maybeLanded:
		// An earlier attempt failed in transport after the server had
		// created the Event: it is ours.
	case apierrors.IsAlreadyExists(err) && s.written == 0:
		// Another Event has this name (another recorder, the same object,
		// the same nanosecond): take the next name.
		s.name = w.newName(s.first.regarding.Name, s.first.at)
		return err
	default:
		// An AlreadyExists here means the series Event came back between
		// the 404 and the create: the next attempt patches it.
		var status apierrors.APIStatus
		if s.written == 0 && !errors.As(err, &status) {
			s.maybeLanded = true
		}
		return err
	}
	s.written = count
	w.stats.created.Add(1)
	return nil
}

// object returns the Event for s, with count occurrences up to last.
func (w *writes) object(s *series, count int32, last time.Time) *unstructured.Unstructured {
	o := s.first
	obj := map[string]any{
		"apiVersion":          GVR.GroupVersion().String(),
		"kind":                "Event",
		"metadata":            map[string]any{"name": s.name, "namespace": s.namespace},
		"eventTime":           microTime(o.at),
		"reportingController": w.controller,
		"reportingInstance":   w.instance,
		"action":              o.action,
		"reason":              o.reason,
		"type":                o.eventType,
		"regarding":           o.regarding.content(),
	}
	if o.note != "" {
		obj["note"] = o.note
	}
	if o.related != nil {
		obj["related"] = o.related.content()
	}
	if count > 1 {
		obj["series"] = map[string]any{"count": int64(count), "lastObservedTime": microTime(last)}
	}
	return &unstructured.Unstructured{Object: obj}
}

// seriesPatch is the patch client-go sends for a series: the series alone.
func seriesPatch(count int32, last time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"series": map[string]any{"count": count, "lastObservedTime": microTime(last)}})
	return b
}

// microTime formats t as metav1.MicroTime does.
func microTime(t time.Time) string { return t.UTC().Format(metav1.RFC3339Micro) }

// newName returns client-go's Event name, "<regarding name>.<time in hex
// nanoseconds>", the time kept increasing so that one recorder never makes a
// name twice; or, when that is not a valid name (the regarding name has
// characters Event names may not, or is too long), a random UUID, as
// client-go does.
func (w *writes) newName(regarding string, at time.Time) string {
	nano := max(at.UnixNano(), w.lastNano+1)
	w.lastNano = nano
	name := fmt.Sprintf("%s.%x", regarding, nano)
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return randomUUID()
	}
	return name
}

func randomUUID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// retryable reports whether a failed write may succeed if sent again:
// conflicts (409, AlreadyExists included: write decides what to change
// first), 429, server errors and timeouts, and transport failures. Other
// client errors (400, 403, 404, 422) would fail the same way again, and a
// done context ends the write.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	code := status.Status().Code
	return code == 409 || code == 429 || code >= 500 || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
}

// backoff returns the wait before attempt+1: backoffBase doubling up to
// backoffMax, up to a quarter more at random, or longer if the server asked
// for it (Retry-After).
func (w *writes) backoff(attempt int, err error) time.Duration {
	d := w.backoffBase
	for i := 1; i < attempt && d < w.backoffMax; i++ {
		d *= 2
	}
	d = min(d, w.backoffMax)
	d += time.Duration(rand.Int64N(int64(d)/4 + 1))
	if s, ok := apierrors.SuggestsClientDelay(err); ok {
		d = max(d, time.Duration(s)*time.Second)
	}
	return d
}
