package lease

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// TestRecordWireFormatIsClientGos checks that the spec kdyn writes is, byte
// for byte, the one client-go's LeaseLock writes for the same record (a
// typed coordination/v1 LeaseSpec with MicroTimes), and that kdyn reads
// client-go's back to the same record. (Tests may use the typed API; the
// package may not.)
func TestRecordWireFormatIsClientGos(t *testing.T) {
	acquire := time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.FixedZone("CET", 3600))
	renew := acquire.Add(2*time.Second + 345*time.Nanosecond)
	for _, tc := range []struct {
		name string
		rec  Record
		spec coordinationv1.LeaseSpec
	}{
		{"held",
			Record{HolderIdentity: "pod-a_1234", LeaseDurationSeconds: 15, AcquireTime: MicroTime(acquire), RenewTime: MicroTime(renew), LeaseTransitions: 3},
			coordinationv1.LeaseSpec{HolderIdentity: ptr.To("pod-a_1234"), LeaseDurationSeconds: ptr.To[int32](15),
				AcquireTime: &metav1.MicroTime{Time: acquire}, RenewTime: &metav1.MicroTime{Time: renew}, LeaseTransitions: ptr.To[int32](3)}},
		{"released",
			Record{LeaseDurationSeconds: 1, AcquireTime: MicroTime(renew), RenewTime: MicroTime(renew), LeaseTransitions: 3},
			coordinationv1.LeaseSpec{HolderIdentity: ptr.To(""), LeaseDurationSeconds: ptr.To[int32](1),
				AcquireTime: &metav1.MicroTime{Time: renew}, RenewTime: &metav1.MicroTime{Time: renew}, LeaseTransitions: ptr.To[int32](3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			Write(u, tc.rec)
			got, err := json.Marshal(u.Object["spec"])
			if err != nil {
				t.Fatal(err)
			}
			wantBytes, err := json.Marshal(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			// Compare as JSON values: key order is the marshaller's business.
			var gotV, wantV any
			_ = json.Unmarshal(got, &gotV)
			_ = json.Unmarshal(wantBytes, &wantV)
			if d := cmp.Diff(wantV, gotV); d != "" {
				t.Errorf("spec (-client-go +kdyn):\n%s\nkdyn: %s", d, got)
			}

			var back map[string]any
			if err := json.Unmarshal(wantBytes, &back); err != nil {
				t.Fatal(err)
			}
			read, err := Read(&unstructured.Unstructured{Object: map[string]any{"spec": back}})
			if err != nil {
				t.Fatal(err)
			}
			if !read.Equal(tc.rec) {
				t.Errorf("read %+v, want %+v", read, tc.rec)
			}
		})
	}
	// The exact text, for the record: UTC, six fractional digits.
	if got := FormatMicroTime(acquire); got != "2026-03-04T04:06:07.891234Z" {
		t.Errorf("formatMicroTime = %s", got)
	}
}

func TestReadRecordTolerance(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec any
		want Record
		err  string
	}{
		{"no spec", nil, Record{}, ""},
		{"empty spec", map[string]any{}, Record{}, ""},
		{"nulls", map[string]any{"holderIdentity": nil, "acquireTime": nil, "leaseDurationSeconds": nil}, Record{}, ""},
		{"float numbers", map[string]any{"leaseDurationSeconds": float64(15), "leaseTransitions": float64(2)}, Record{LeaseDurationSeconds: 15, LeaseTransitions: 2}, ""},
		{"nanoseconds truncated", map[string]any{"renewTime": "2026-01-01T00:00:00.123456789Z"},
			Record{RenewTime: time.Date(2026, 1, 1, 0, 0, 0, 123456000, time.UTC)}, ""},
		{"wrong type", map[string]any{"holderIdentity": int64(3)}, Record{}, "spec.holderIdentity is a int64, not a string"},
		{"bad time", map[string]any{"renewTime": "yesterday"}, Record{}, "spec.renewTime"},
		{"fractional seconds", map[string]any{"leaseDurationSeconds": 1.5}, Record{}, "spec.leaseDurationSeconds is 1.5"},
		{"spec not an object", "x", Record{}, "spec is a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := map[string]any{}
			if tc.spec != nil {
				obj["spec"] = tc.spec
			}
			got, err := Read(&unstructured.Unstructured{Object: obj})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
