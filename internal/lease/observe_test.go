package lease

import (
	"strings"
	"testing"
	"time"
)

// A Lease expires LeaseDurationSeconds after its record was first seen;
// the same record seen again does not move that, a changed one or a
// forced observation (one's own write) does.
func TestObservation(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	var o Observation
	if o.Valid(t0) {
		t.Fatal("an Observation that saw nothing is valid")
	}
	r := Record{HolderIdentity: "a", LeaseDurationSeconds: 15, RenewTime: t0}
	if !o.Observe(r, t0, false) {
		t.Fatal("the first record did not start the clock")
	}
	if o.Observe(r, t0.Add(10*time.Second), false) {
		t.Fatal("the same record restarted the clock")
	}
	if !o.Valid(t0.Add(15*time.Second-1)) || o.Valid(t0.Add(15*time.Second)) {
		t.Fatalf("expiry %v, want %v", o.Expiry(), t0.Add(15*time.Second))
	}
	r.RenewTime = t0.Add(time.Second)
	if !o.Observe(r, t0.Add(12*time.Second), false) || !o.Expiry().Equal(t0.Add(27*time.Second)) {
		t.Fatalf("a renewal seen at +12s: expiry %v", o.Expiry())
	}
	if !o.Observe(r, t0.Add(20*time.Second), true) || !o.Expiry().Equal(t0.Add(35*time.Second)) {
		t.Fatalf("a forced observation at +20s: expiry %v", o.Expiry())
	}
}

// Timing takes client-go's defaults and names every field it refuses.
func TestTiming(t *testing.T) {
	d := Timing{}.WithDefaults()
	if d != (Timing{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second, RequestTimeout: 2500 * time.Millisecond}) {
		t.Fatalf("defaults %+v", d)
	}
	if p := d.Problems(); len(p) != 0 {
		t.Fatalf("the defaults have problems: %q", p)
	}
	bad := Timing{LeaseDuration: 1500 * time.Millisecond, RenewDeadline: 2 * time.Second, RetryPeriod: 2 * time.Second, RequestTimeout: 3 * time.Second}
	got := strings.Join(bad.Problems(), "; ")
	for _, want := range []string{"LeaseDuration 1.5s is not a whole number", "greater than RenewDeadline", "RetryPeriod×JitterFactor", "RequestTimeout 3s"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
}
