package leaderelection

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
)

// leaseGVR is the resource of the lock: coordination.k8s.io/v1 Leases.
var leaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// record is the leader-election state a Lease's spec holds (client-go's
// LeaderElectionRecord as its LeaseLock maps it onto a LeaseSpec).
type record struct {
	HolderIdentity       string
	LeaseDurationSeconds int64
	AcquireTime          time.Time // microseconds, UTC, as stored
	RenewTime            time.Time // microseconds, UTC, as stored
	LeaseTransitions     int64
}

func (r record) equal(o record) bool {
	return r.HolderIdentity == o.HolderIdentity &&
		r.LeaseDurationSeconds == o.LeaseDurationSeconds &&
		r.AcquireTime.Equal(o.AcquireTime) &&
		r.RenewTime.Equal(o.RenewTime) &&
		r.LeaseTransitions == o.LeaseTransitions
}

// microTime is t as a Lease stores it (a metav1.MicroTime): UTC, to the
// microsecond, without a monotonic reading.
func microTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// formatMicroTime writes t as metav1.MicroTime marshals it, which is what
// client-go's LeaseLock sends: RFC 3339 in UTC with exactly six fractional
// digits ("2026-01-02T15:04:05.123456Z").
func formatMicroTime(t time.Time) string { return t.UTC().Format(metav1.RFC3339Micro) }

// readRecord reads the leader-election fields of a Lease's spec. Absent or
// null fields are zero, as in client-go.
func readRecord(u *unstructured.Unstructured) (record, error) {
	var r record
	specAny, ok := u.Object["spec"]
	if !ok || specAny == nil {
		return r, nil
	}
	spec, ok := specAny.(map[string]any)
	if !ok {
		return r, fmt.Errorf("spec is a %T, not an object", specAny)
	}
	var err error
	if r.HolderIdentity, err = stringField(spec, "holderIdentity"); err != nil {
		return r, err
	}
	if r.LeaseDurationSeconds, err = intField(spec, "leaseDurationSeconds"); err != nil {
		return r, err
	}
	if r.LeaseTransitions, err = intField(spec, "leaseTransitions"); err != nil {
		return r, err
	}
	if r.AcquireTime, err = timeField(spec, "acquireTime"); err != nil {
		return r, err
	}
	if r.RenewTime, err = timeField(spec, "renewTime"); err != nil {
		return r, err
	}
	return r, nil
}

// writeRecord sets the leader-election fields of u's spec to r, as
// client-go's LeaseLock does, and leaves other spec fields alone.
func writeRecord(u *unstructured.Unstructured, r record) {
	spec, ok := u.Object["spec"].(map[string]any)
	if !ok {
		spec = map[string]any{}
		u.Object["spec"] = spec
	}
	spec["holderIdentity"] = r.HolderIdentity
	spec["leaseDurationSeconds"] = r.LeaseDurationSeconds
	spec["leaseTransitions"] = r.LeaseTransitions
	setTime(spec, "acquireTime", r.AcquireTime)
	setTime(spec, "renewTime", r.RenewTime)
}

// setTime writes a MicroTime field; a zero time is null, as MicroTime
// marshals it.
func setTime(spec map[string]any, field string, t time.Time) {
	if t.IsZero() {
		spec[field] = nil
		return
	}
	spec[field] = formatMicroTime(t)
}

func stringField(spec map[string]any, field string) (string, error) {
	switch v := spec[field].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("spec.%s is a %T, not a string", field, v)
	}
}

func intField(spec map[string]any, field string) (int64, error) {
	switch v := spec[field].(type) {
	case nil:
		return 0, nil
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case int:
		return int64(v), nil
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > math.MaxInt32 {
			return 0, fmt.Errorf("spec.%s is %v, not a 32-bit integer", field, v)
		}
		return int64(v), nil
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			return 0, fmt.Errorf("spec.%s: %w", field, err)
		}
		return n, nil
	default:
		return 0, fmt.Errorf("spec.%s is a %T, not an integer", field, v)
	}
}

func timeField(spec map[string]any, field string) (time.Time, error) {
	switch v := spec[field].(type) {
	case nil:
		return time.Time{}, nil
	case string:
		if v == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("spec.%s: %w", field, err)
		}
		return microTime(t), nil
	default:
		return time.Time{}, fmt.Errorf("spec.%s is a %T, not a time", field, v)
	}
}

// lock reads and writes one Lease, with optimistic concurrency: an update
// carries the resourceVersion of the Lease as last read or written, so it
// fails with a Conflict when anyone else wrote it since. It is used by one
// goroutine at a time.
type lock struct {
	leases    dynamic.ResourceInterface
	namespace string
	name      string
	// timeout bounds each request (Config.RequestTimeout).
	timeout time.Duration
	// lease is the Lease as last read or written; nil before the first
	// read.
	lease *unstructured.Unstructured
}

func newLock(client dynamic.Interface, namespace, name string, timeout time.Duration) *lock {
	return &lock{leases: client.Resource(leaseGVR).Namespace(namespace), namespace: namespace, name: name, timeout: timeout}
}

func (l *lock) describe() string { return l.namespace + "/" + l.name }

// get reads the Lease and returns its record. A server error is returned
// wrapped, so apierrors.IsNotFound and the like work on it.
func (l *lock) get(ctx context.Context) (record, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	u, err := l.leases.Get(ctx, l.name, metav1.GetOptions{})
	if err != nil {
		return record{}, fmt.Errorf("leaderelection: get lease %s: %w", l.describe(), err)
	}
	r, err := readRecord(u)
	if err != nil {
		return record{}, fmt.Errorf("leaderelection: lease %s: %w", l.describe(), err)
	}
	l.lease = u
	return r, nil
}

// create creates the Lease holding r.
func (l *lock) create(ctx context.Context, r record) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": leaseGVR.GroupVersion().String(),
		"kind":       "Lease",
		"metadata":   map[string]any{"name": l.name, "namespace": l.namespace},
	}}
	writeRecord(u, r)
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	created, err := l.leases.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("leaderelection: create lease %s: %w", l.describe(), err)
	}
	l.lease = created
	return nil
}

// update writes r over the Lease as last read or written.
func (l *lock) update(ctx context.Context, r record) error {
	if l.lease == nil {
		return fmt.Errorf("leaderelection: update lease %s: not read yet", l.describe())
	}
	u := l.lease.DeepCopy()
	writeRecord(u, r)
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	updated, err := l.leases.Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("leaderelection: update lease %s: %w", l.describe(), err)
	}
	l.lease = updated
	return nil
}
