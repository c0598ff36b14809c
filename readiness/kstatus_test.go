package readiness_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/readiness"
)

// kstatusCase is one document of testdata/kstatus.yaml.
type kstatusCase struct {
	Name      string          `json:"name"`
	Status    string          `json:"status"`
	Reason    string          `json:"reason"`
	Object    json.RawMessage `json:"object"`
	Deviation *struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
		Why    string `json:"why"`
	} `json:"deviation"`
}

// decodeObject decodes JSON as the API machinery does (integers as int64).
func decodeObject(t *testing.T, raw []byte) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return u
}

// TestKstatusCases runs kstatus's own test cases: every status and reason
// must be kstatus's, except the documented deviations.
func TestKstatusCases(t *testing.T) {
	data, err := os.ReadFile("testdata/kstatus.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// podBeingScheduled was created at 2026-01-01T00:00:00Z: five seconds
	// later it is still within the scheduling window.
	now := time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)
	c := readiness.New(readiness.Options{Now: func() time.Time { return now }})
	n := 0
	for _, doc := range strings.Split(string(data), "\n---\n")[1:] {
		var tc kstatusCase
		if err := yaml.Unmarshal([]byte(doc), &tc); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		n++
		t.Run(tc.Name, func(t *testing.T) {
			wantStatus, wantReason := tc.Status, tc.Reason
			if tc.Deviation != nil {
				t.Logf("kstatus says %s (%s); kdyn deviates: %s", tc.Status, tc.Reason, tc.Deviation.Why)
				wantStatus, wantReason = tc.Deviation.Status, tc.Deviation.Reason
			}
			res, err := c.Compute(decodeObject(t, tc.Object))
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Status) != wantStatus || res.Reason != wantReason {
				t.Errorf("got %s (reason %q, %q), want %s (reason %q)", res.Status, res.Reason, res.Message, wantStatus, wantReason)
			}
		})
	}
	if n != 53 {
		t.Errorf("ran %d of kstatus's 53 cases", n)
	}
}
