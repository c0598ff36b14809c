package lib

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/crcache/examples/secretsync"
)

func TestCRCacheParseKV(t *testing.T) {
	kv, err := parseKV("stats reconciles=12 creates=0 updates=3 cpu_us=4567 peak_heap=1048576 peak_live=-1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"reconciles": 12, "creates": 0, "updates": 3, "cpu_us": 4567, "peak_heap": 1 << 20, "peak_live": -1}
	if len(kv) != len(want) {
		t.Errorf("got %v, want %v", kv, want)
	}
	for k, v := range want {
		if kv[k] != v {
			t.Errorf("%s = %d, want %d", k, kv[k], v)
		}
	}
	if kv, err := parseKV("synced configmaps"); err == nil {
		t.Errorf("a word without = parsed as %v", kv)
	}
	if kv, err := parseKV("reconciled n=1x"); err == nil {
		t.Errorf("a non-integer parsed as %v", kv)
	}
	if _, err := parseKV(""); err == nil {
		t.Error("an empty line parsed")
	}
	if kv, err := parseKV("reconciled"); err != nil || len(kv) != 0 {
		t.Errorf("a line without fields: %v, %v", kv, err)
	}
}

func TestCRCacheSeedObjects(t *testing.T) {
	cm := crSource(123)
	if cm.GetNamespace() != crNamespace(123) || cm.GetNamespace() != "bench-crcache-03" || cm.GetName() != "cm-00123" {
		t.Errorf("source 123 is %s/%s", cm.GetNamespace(), cm.GetName())
	}
	if cm.GetLabels()[secretsync.SourceLabel] != "true" || len(cm.GetLabels()) != 6 || len(cm.GetAnnotations()) != 2 {
		t.Errorf("labels %v, annotations %v", cm.GetLabels(), cm.GetAnnotations())
	}
	if crNamespace(123) != ConfigMap(crNamespace(123), 123).GetNamespace() {
		t.Error("the source is not the seeded ConfigMap")
	}
	s := crSecret(cm, "uid-1")
	if s.GetName() != "cm-00123"+secretsync.Suffix || s.GetNamespace() != cm.GetNamespace() {
		t.Errorf("secret %s/%s", s.GetNamespace(), s.GetName())
	}
	refs := s.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != "uid-1" || refs[0].Name != "cm-00123" || refs[0].Kind != "ConfigMap" || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("owner references %+v", refs)
	}
	// secretsync compares the Secret's data with the ConfigMap's: equal.
	data := s.Object["data"].(map[string]any)
	cmData := cm.Object["data"].(map[string]any)
	if len(data) != len(cmData) || len(data) != 4 {
		t.Fatalf("%d keys in the secret, %d in the configmap", len(data), len(cmData))
	}
	for k, v := range cmData {
		b, err := base64.StdEncoding.DecodeString(data[k].(string))
		if err != nil || string(b) != v.(string) {
			t.Errorf("key %s: %q, want %q (%v)", k, b, v, err)
		}
	}
}

func TestCRCacheUpdatePatch(t *testing.T) {
	var p map[string]map[string]string
	if err := json.Unmarshal(crUpdatePatch(7, 3), &p); err != nil {
		t.Fatal(err)
	}
	v := p["data"]["key-0"]
	if len(p) != 1 || len(p["data"]) != 1 || len(v) != 256 || !strings.HasPrefix(v, "update 3 of source 7") {
		t.Errorf("patch %v", p)
	}
	if bytes.Equal(crUpdatePatch(7, 3), crUpdatePatch(7, 4)) {
		t.Error("two runs' updates are the same")
	}
	for _, tc := range []struct{ n, k int }{{1000, 500}, {3000, 1500}, {10000, 2000}, {100000, 5000}} {
		if k := crUpdates(tc.n); k != tc.k {
			t.Errorf("crUpdates(%d) = %d, want %d", tc.n, k, tc.k)
		}
	}
}

func TestCRCacheGrid(t *testing.T) {
	run := func(heap, rss, hwm int64, cpu time.Duration, recs int64) crRun {
		return crRun{heap: heap * mib, rss: rss * mib, hwm: hwm * mib, cpu: cpu, recs: recs, synced: time.Second}
	}
	runs := [][]crRun{
		{run(100, 200, 300, 400*time.Millisecond, 4000), run(110, 210, 300, 400*time.Millisecond, 4000), run(90, 190, 300, 400*time.Millisecond, 4000)},
		{run(80, 150, 200, 300*time.Millisecond, 4000)},
		{run(40, 80, 100, 320*time.Millisecond, 4000)}, // every goal met
		{run(57, 90, 130, 400*time.Millisecond, 4000)}, // heap 0.71× strip, peak 1.44×, CPU 1.33× strip
	}
	g := crGrid(runs)
	find := func(prefix string) GridRow {
		for _, r := range g.Rows {
			if strings.HasPrefix(r.Metric, prefix) {
				return r
			}
		}
		t.Fatalf("no row %q", prefix)
		return GridRow{}
	}
	live := find("live heap")
	if live.Values[0] != 100 || live.Values[1] != 80 {
		t.Errorf("medians %v", live.Values)
	}
	if v := live.Verdict(2); v != "PASS" {
		t.Errorf("kdyn live heap 40 (0.4× default, 0.5× strip): %s", v)
	}
	if v := live.Verdict(3); v != "MISS" {
		t.Errorf("compact live heap 57 (0.57× default, 0.71× strip): %s", v)
	}
	peak := find("initial-list peak ÷")
	if peak.Values[2] != 1.25 || peak.Verdict(2) != "PASS" || peak.Verdict(3) != "MISS" {
		t.Errorf("peak ratios %v, verdicts %s %s", peak.Values, peak.Verdict(2), peak.Verdict(3))
	}
	cpu := find("CPU per reconcile")
	if cpu.Values[0] != 100 || cpu.Values[1] != 75 || cpu.Values[2] != 80 {
		t.Errorf("CPU per reconcile %v", cpu.Values)
	}
	if cpu.Verdict(2) != "PASS" || cpu.Verdict(3) != "MISS" {
		t.Errorf("CPU 80 and 100 µs against 100 and 75: %s, %s", cpu.Verdict(2), cpu.Verdict(3))
	}
	if r := (crRun{}).cpuPerReconcile(); !math.IsNaN(r) {
		t.Errorf("no reconciles: %v", r)
	}
	if r := (crRun{}).peakRatio(); !math.IsNaN(r) {
		t.Errorf("no RSS: %v", r)
	}
	if find("start → cache synced").Verdict(2) != "" {
		t.Error("a row without goals has a verdict")
	}

	var out bytes.Buffer
	(&Table{Title: "crcache", Grid: g}).Print(&out)
	byMetric := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if m, _, ok := strings.Cut(strings.TrimPrefix(l, "| "), " |"); ok {
			byMetric[m] = l
		}
	}
	want := map[string]string{
		"metric": "| metric | default (÷ strip) | strip (÷ default) | kdyn (÷ default / ÷ strip) | kdyn-compact (÷ default / ÷ strip) | target | kdyn | kdyn-compact |",
		"live heap after a GC (heap probe, right after the RSS)": "| live heap after a GC (heap probe, right after the RSS) | 100 MB (1.25×) | 80 MB (0.80×) | 40 MB (0.40× / 0.50×) | 57 MB (0.57× / 0.71×) | ≤ 0.5× default, ≤ 0.7× strip | PASS | MISS |",
		"initial-list peak ÷ steady RSS (VmHWM / VmRSS)":         "| initial-list peak ÷ steady RSS (VmHWM / VmRSS) | 1.50× | 1.33× | 1.25× | 1.44× | ≤ 1.3 | PASS | MISS |",
	}
	for m, l := range want {
		if byMetric[m] != l {
			t.Errorf("row %q:\n got %s\nwant %s", m, byMetric[m], l)
		}
	}
	if len(byMetric) != len(g.Rows)+1 { // and the header
		t.Errorf("%d table lines, want %d:\n%s", len(byMetric), len(g.Rows)+1, out.String())
	}
}
