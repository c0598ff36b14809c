package lease

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GVR is the resource of Leases.
var GVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// Record is the state a Lease's spec holds (client-go's
// LeaderElectionRecord as its LeaseLock maps it onto a LeaseSpec).
type Record struct {
	HolderIdentity       string
	LeaseDurationSeconds int64
	AcquireTime          time.Time // microseconds, UTC, as stored
	RenewTime            time.Time // microseconds, UTC, as stored
	LeaseTransitions     int64
}

// Equal reports whether r and o hold the same values.
func (r Record) Equal(o Record) bool {
	return r.HolderIdentity == o.HolderIdentity &&
		r.LeaseDurationSeconds == o.LeaseDurationSeconds &&
		r.AcquireTime.Equal(o.AcquireTime) &&
		r.RenewTime.Equal(o.RenewTime) &&
		r.LeaseTransitions == o.LeaseTransitions
}

// Duration is LeaseDurationSeconds as a duration.
func (r Record) Duration() time.Duration { return time.Duration(r.LeaseDurationSeconds) * time.Second }

// MicroTime is t as a Lease stores it (a metav1.MicroTime): UTC, to the
// microsecond, without a monotonic reading.
func MicroTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// FormatMicroTime writes t as metav1.MicroTime marshals it, which is what
// client-go's LeaseLock sends: RFC 3339 in UTC with exactly six fractional
// digits ("2026-01-02T15:04:05.123456Z").
func FormatMicroTime(t time.Time) string { return t.UTC().Format(metav1.RFC3339Micro) }

// Read reads the record of a Lease's spec. Absent or null fields are zero,
// as in client-go; a field of the wrong type is an error naming it.
func Read(u *unstructured.Unstructured) (Record, error) {
	var r Record
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

// Write sets the record fields of u's spec to r, as client-go's LeaseLock
// does, and leaves other spec fields alone.
func Write(u *unstructured.Unstructured, r Record) {
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
	spec[field] = FormatMicroTime(t)
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
		return MicroTime(t), nil
	default:
		return time.Time{}, fmt.Errorf("spec.%s is a %T, not a time", field, v)
	}
}

// Observation is a Lease's record as last seen, and the local time it was
// first seen to hold it: the basis of expiry by observed change.
type Observation struct {
	Record Record
	// At is when the record was first seen (zero: never observed).
	At time.Time
}

// Observe notes r as read (or written) at seenAt — for a read, the moment
// it returned. A record that differs from the one observed, or the first
// one, restarts the expiry clock; the same record again does not. force
// restarts it whatever the record (a write of one's own). It reports
// whether the clock restarted.
func (o *Observation) Observe(r Record, seenAt time.Time, force bool) bool {
	if force || o.At.IsZero() || !r.Equal(o.Record) {
		o.Record, o.At = r, seenAt
		return true
	}
	return false
}

// Expiry is when the observed Lease expires in this observer's view:
// LeaseDurationSeconds after it was first seen to hold its record.
func (o Observation) Expiry() time.Time { return o.At.Add(o.Record.Duration()) }

// Valid reports whether a Lease was observed and has not expired at now.
func (o Observation) Valid(now time.Time) bool { return !o.At.IsZero() && o.Expiry().After(now) }
