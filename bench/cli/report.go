package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Row is one line of the results table.
type Row struct {
	Metric, Kdyn, Kubectl, Ratio, Target, Result string
}

// Targets of the CLI benchmark (same run, same server).
const (
	targetJSONWall   = 0.30 // get -o json wall time, × kubectl's
	targetJSONRSS    = 0.30 // get -o json peak RSS, × kubectl's
	targetTableWall  = 0.30 // get (table) wall time, × kubectl's
	targetJSONLRSS   = 40e6 // get -o jsonl peak RSS, bytes, at any list size
	targetJSONLFlat  = 1.20 // peak RSS at Objects ÷ peak RSS at Small
	targetBinarySize = 0.50 // kdyn binary size, × kubectl's
)

func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", ms(d))
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

func fmtMB(b int64) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f MB", mb(b))
}

func ratio(a, b float64) (float64, string) {
	if a <= 0 || b <= 0 {
		return 0, "—"
	}
	r := a / b
	return r, fmt.Sprintf("%.2f×", r)
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// Rows builds the results table.
func (r *Results) Rows() []Row {
	var rows []Row
	st := func(tool, c string) Stats { return r.Stats[tool+"/"+c] }
	// cmp adds wall, CPU and RSS rows for one case; wallTarget/rssTarget
	// (0 = informative only) are maximum ratios kdyn/kubectl.
	cmp := func(label, c string, wallTarget, rssTarget float64) {
		kd, kc := st(Kdyn, c), st(Kubectl, c)
		add := func(metric string, a, b float64, fa, fb string, target float64) {
			rv, rs := ratio(a, b)
			row := Row{Metric: label + ": " + metric, Kdyn: fa, Kubectl: fb, Ratio: rs, Target: "—", Result: ""}
			if target > 0 {
				row.Target = fmt.Sprintf("≤ %.2f×", target)
				row.Result = verdict(rs != "—" && rv <= target)
			}
			rows = append(rows, row)
		}
		add("wall", float64(kd.Wall), float64(kc.Wall), fmtDur(kd.Wall), fmtDur(kc.Wall), wallTarget)
		add("CPU (user+sys)", float64(kd.CPU), float64(kc.CPU), fmtDur(kd.CPU), fmtDur(kc.CPU), 0)
		add("peak RSS", float64(kd.MaxRSS), float64(kc.MaxRSS), fmtMB(kd.MaxRSS), fmtMB(kc.MaxRSS), rssTarget)
	}
	n := fmt.Sprintf("%d", r.Objects)
	cmp("get cm -o json ("+n+", cold cache)", "get-json-cold", targetJSONWall, targetJSONRSS)
	cmp("get cm -o json ("+n+", warm cache)", "get-json-warm", targetJSONWall, targetJSONRSS)
	best := func(label, c string) {
		kd, kc := st(Kdyn, c), st(Kubectl, c)
		_, rs := ratio(float64(kd.MinWall), float64(kc.MinWall))
		rows = append(rows, Row{label + fmt.Sprintf(": wall, best of %d", kd.N), fmtDur(kd.MinWall), fmtDur(kc.MinWall), rs, "—", ""})
	}
	best("get cm -o json ("+n+", warm cache)", "get-json-warm")
	cmp("get cm table ("+n+", cold cache)", "get-table-cold", targetTableWall, 0)
	cmp("get cm table ("+n+", warm cache)", "get-table-warm", targetTableWall, 0)
	best("get cm table ("+n+", warm cache)", "get-table-warm")
	cmp("api-resources (cold cache)", "api-resources-cold", 0, 0)

	// Warm api-resources: faster than kubectl's and no discovery request.
	apiRows := func(label, c string) {
		kd, kc := st(Kdyn, c), st(Kubectl, c)
		rv, rs := ratio(float64(kd.Wall), float64(kc.Wall))
		rows = append(rows, Row{label + ": wall", fmtDur(kd.Wall), fmtDur(kc.Wall), rs, "< 1.00×", verdict(rs != "—" && rv < 1)})
		_, rs = ratio(float64(kd.CPU), float64(kc.CPU))
		rows = append(rows, Row{label + ": CPU (user+sys)", fmtDur(kd.CPU), fmtDur(kc.CPU), rs, "—", ""})
		_, rs = ratio(float64(kd.MaxRSS), float64(kc.MaxRSS))
		rows = append(rows, Row{label + ": peak RSS", fmtMB(kd.MaxRSS), fmtMB(kc.MaxRSS), rs, "—", ""})
		qd, okd := r.Requests[Kdyn+"/"+c]
		qc := r.Requests[Kubectl+"/"+c]
		res := ""
		if okd {
			res = verdict(qd.Discovery == 0)
		}
		rows = append(rows, Row{label + ": discovery GETs (-v 6)",
			reqString(qd), reqString(qc), "—", "0", res})
	}
	apiRows("api-resources (warm cache)", "api-resources-warm")
	apiRows("api-resources --cached (warm cache)", "api-resources-cached")

	for _, c := range []string{"get-json-cold", "get-json-warm"} {
		qd, qc := r.Requests[Kdyn+"/"+c], r.Requests[Kubectl+"/"+c]
		label := "get cm -o json (cold cache): requests (-v 6)"
		if strings.HasSuffix(c, "warm") {
			label = "get cm -o json (warm cache): requests (-v 6)"
		}
		rows = append(rows, Row{label, reqString(qd), reqString(qc), "—", "—", ""})
	}

	big, small := st(Kdyn, "jsonl-big"), st(Kdyn, "jsonl-small")
	rows = append(rows,
		Row{fmt.Sprintf("get cm -o jsonl (%d): peak RSS", r.Objects), fmtMB(big.MaxRSS), "n/a", "—", "< 40 MB", verdict(big.MaxRSS > 0 && big.MaxRSS < targetJSONLRSS)},
		Row{fmt.Sprintf("get cm -o jsonl (%d): peak RSS", r.Small), fmtMB(small.MaxRSS), "n/a", "—", "< 40 MB", verdict(small.MaxRSS > 0 && small.MaxRSS < targetJSONLRSS)},
	)
	fv, fs := ratio(float64(big.MaxRSS), float64(small.MaxRSS))
	rows = append(rows,
		Row{fmt.Sprintf("get cm -o jsonl: RSS %d ÷ RSS %d", r.Objects, r.Small), fs, "n/a", "—", fmt.Sprintf("≤ %.2f× (flat)", targetJSONLFlat), verdict(fs != "—" && fv <= targetJSONLFlat)},
		Row{fmt.Sprintf("get cm -o jsonl (%d): wall", r.Objects), fmtDur(big.Wall), "n/a", "—", "—", ""},
		Row{fmt.Sprintf("get cm -o jsonl (%d): CPU (user+sys)", r.Objects), fmtDur(big.CPU), "n/a", "—", "—", ""},
	)
	rows = append(rows, r.applyRows()...)
	bv, bs := ratio(float64(r.SizeKdyn), float64(r.SizeKubect))
	rows = append(rows, Row{"binary size (-trimpath -s -w)", fmtMB(r.SizeKdyn), fmtMB(r.SizeKubect), bs, fmt.Sprintf("≤ %.2f×", targetBinarySize), verdict(bs != "—" && bv <= targetBinarySize)})

	// The floor, and each tool's warm get -o json over it.
	kdw, kcw := st(Kdyn, "get-json-warm").Wall, st(Kubectl, "get-json-warm").Wall
	_, rkd := ratio(float64(kdw), float64(r.FloorPaged.Wall))
	_, rkc := ratio(float64(kcw), float64(r.FloorPaged.Wall))
	_, rtd := ratio(float64(st(Kdyn, "get-table-warm").Wall), float64(r.FloorTable.Wall))
	_, rtc := ratio(float64(st(Kubectl, "get-table-warm").Wall), float64(r.FloorTable.Wall))
	rows = append(rows,
		Row{fmt.Sprintf("floor: server sends the list, one GET (%.1f MB)", mb(int64(r.ListBytes))), fmtDur(r.FloorFull.Wall), "", "—", "—", ""},
		Row{"floor: the same in pages of 500", fmtDur(r.FloorPaged.Wall), "", "—", "—", ""},
		Row{"floor: pages of 500 without gzip (Accept-Encoding: identity)", fmtDur(r.FloorIdentity.Wall), "", "—", "—", ""},
		Row{"get -o json (warm) ÷ paged floor", rkd, rkc, "—", "—", ""},
		Row{fmt.Sprintf("floor: server sends the Table, pages of 500 (%.1f MB)", mb(int64(r.TableBytes))), fmtDur(r.FloorTable.Wall), "", "—", "—", ""},
		Row{"get table (warm) ÷ Table floor", rtd, rtc, "—", "—", ""},
	)
	return rows
}

func reqString(q Requests) string {
	s := fmt.Sprintf("%d", q.Discovery)
	if q.DiscoveryNotModified > 0 {
		s += fmt.Sprintf(" (%d× 304)", q.DiscoveryNotModified)
	}
	if q.Other > 0 {
		s += fmt.Sprintf(" +%d other", q.Other)
	}
	return s
}

// Print writes the table (Markdown) and the comparisons to w.
func (r *Results) Print(w io.Writer) {
	rows := r.Rows()
	head := Row{"metric", "kdyn", "kubectl", "ratio", "target", "PASS/MISS"}
	all := append([]Row{head}, rows...)
	width := make([]int, 6)
	cells := func(x Row) []string { return []string{x.Metric, x.Kdyn, x.Kubectl, x.Ratio, x.Target, x.Result} }
	for _, x := range all {
		for i, c := range cells(x) {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(cs []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range cs {
			b.WriteString(" ")
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", width[i]-len([]rune(c))))
			b.WriteString(" |")
		}
		fmt.Fprintln(w, b.String())
	}
	fmt.Fprintf(w, "\nkdyn vs kubectl v0.37.2, %d ConfigMaps (~1 KiB data, 5 labels, 2 annotations), one control plane, same run.\n", r.Objects)
	fmt.Fprintf(w, "Each command ran %d times, alternating which tool went first; figures are medians. Cold = fresh --cache-dir, warm = second run with it.\n", r.Reps)
	fmt.Fprintf(w, "MB = 10^6 bytes. Wall = exec to exit; CPU = child's user+sys; RSS = child's ru_maxrss.\n\n")
	line(cells(head))
	sep := make([]string, 6)
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, x := range rows {
		line(cells(x))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "wall spread (min–max), get -o json warm: kdyn %s–%s, kubectl %s–%s; table warm: kdyn %s–%s, kubectl %s–%s\n",
		fmtDur(r.Stats[Kdyn+"/get-json-warm"].MinWall), fmtDur(r.Stats[Kdyn+"/get-json-warm"].MaxWall),
		fmtDur(r.Stats[Kubectl+"/get-json-warm"].MinWall), fmtDur(r.Stats[Kubectl+"/get-json-warm"].MaxWall),
		fmtDur(r.Stats[Kdyn+"/get-table-warm"].MinWall), fmtDur(r.Stats[Kdyn+"/get-table-warm"].MaxWall),
		fmtDur(r.Stats[Kubectl+"/get-table-warm"].MinWall), fmtDur(r.Stats[Kubectl+"/get-table-warm"].MaxWall))
	fmt.Fprintf(w, "seeding %d+%d ConfigMaps took %s\n", r.Objects, r.Small, r.Seed.Round(100*time.Millisecond))
	fmt.Fprintf(w, "RSS floor of the method (/bin/true through the launcher): %s\n", fmtMB(r.LauncherRSS))
	fmt.Fprintf(w, "shared machine: load average %s at the start of the measurements, %s at the end", r.LoadStart, r.LoadEnd)
	if len(r.IdleBefore) > 0 {
		var parts []string
		for _, x := range r.IdleBefore {
			parts = append(parts, fmt.Sprintf("%.0f%%", 100*x))
		}
		fmt.Fprintf(w, "; CPU idle before each repetition: %s", strings.Join(parts, " "))
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintln(w, "Output agreement (warm caches):")
	fmt.Fprintf(w, "  get cm -o json, byte for byte: %s\n", r.JSONDiff)
	fmt.Fprintf(w, "  get cm -o json --show-managed-fields, byte for byte: %s\n", r.JSONDiffManaged)
	fmt.Fprintf(w, "  get cm (table), line by line:  %s\n", r.TableDiff)
	fmt.Fprintf(w, "  api-resources, line by line:   %s\n", r.APIResourcesDiff)
	for _, d := range r.EventsDiffs {
		fmt.Fprintf(w, "  %s, byte for byte: %s\n", strings.Join(d.Args, " "), d.Diff)
	}
	jl := "OK"
	if r.JSONLLines != r.Objects {
		jl = "WRONG"
	}
	fmt.Fprintf(w, "  get cm -o jsonl: %d lines for %d objects (%s)\n", r.JSONLLines, r.Objects, jl)
	fmt.Fprintln(w, "\nRequests seen in -v 6 logs (paths, in order):")
	for _, k := range []string{"api-resources-cold", "api-resources-warm", "api-resources-cached", "get-json-cold", "get-json-warm", "get-table-warm"} {
		for _, tool := range []string{Kdyn, Kubectl} {
			q := r.Requests[tool+"/"+k]
			fmt.Fprintf(w, "  %-8s %-22s %2d discovery (%d answered 304), %2d other: %s\n", tool, k, q.Discovery, q.DiscoveryNotModified, q.Other, summarizePaths(q.Paths))
		}
	}
	if len(r.Profiles) > 0 {
		fmt.Fprintln(w, "\nProfiles:")
		for _, p := range r.Profiles {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
}

// summarizePaths joins paths, collapsing runs of the same path ("x ×20").
func summarizePaths(paths []string) string {
	var parts []string
	for i := 0; i < len(paths); {
		j := i
		for j < len(paths) && paths[j] == paths[i] {
			j++
		}
		if j-i > 1 {
			parts = append(parts, fmt.Sprintf("%s ×%d", paths[i], j-i))
		} else {
			parts = append(parts, paths[i])
		}
		i = j
	}
	s := strings.Join(parts, ", ")
	return clip(s, 400)
}
