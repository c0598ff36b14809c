package cli

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Diff describes how two outputs differ; the zero value means identical.
type Diff struct {
	Identical  bool
	Exact      bool // byte for byte, whatever normalization was allowed
	LinesA     int  // line counts
	LinesB     int
	DiffLines  int      // lines that differ, position by position
	FirstLine  int      // 1-based line of the first difference (0 if none)
	FirstByte  int      // 0-based offset of the first differing byte (-1 if none)
	Examples   []string // up to a few "line N: a | b" descriptions
	SizeA      int
	SizeB      int
	Normalized string // what was ignored, e.g. "AGE column"
}

func (d Diff) String() string {
	if d.Identical {
		s := fmt.Sprintf("byte-identical (%d lines, %d bytes)", d.LinesA, d.SizeA)
		if d.Normalized != "" && !d.Exact {
			s = fmt.Sprintf("identical except %s (%d lines)", d.Normalized, d.LinesA)
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "DIFFERENT: kdyn %d lines/%d bytes, kubectl %d lines/%d bytes; %d lines differ; first at line %d (byte %d)",
		d.LinesA, d.SizeA, d.LinesB, d.SizeB, d.DiffLines, d.FirstLine, d.FirstByte)
	for _, e := range d.Examples {
		b.WriteString("\n      ")
		b.WriteString(e)
	}
	return b.String()
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// compareLines compares a and b line by line after norm (nil = identity).
func compareLines(a, b []byte, norm func(string) string, normalized string) Diff {
	la, lb := splitLines(a), splitLines(b)
	d := Diff{LinesA: len(la), LinesB: len(lb), SizeA: len(a), SizeB: len(b), FirstByte: -1, Normalized: normalized}
	exact := norm == nil
	d.Exact = bytes.Equal(a, b)
	if exact {
		norm = func(s string) string { return s }
		if bytes.Equal(a, b) {
			d.Identical = true
			return d
		}
		n := min(len(a), len(b))
		for i := 0; i < n; i++ {
			if a[i] != b[i] {
				d.FirstByte = i
				break
			}
		}
		if d.FirstByte < 0 {
			d.FirstByte = n
		}
	}
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y string
		if i < len(la) {
			x = norm(la[i])
		}
		if i < len(lb) {
			y = norm(lb[i])
		}
		if x == y && i < len(la) && i < len(lb) {
			continue
		}
		d.DiffLines++
		if d.FirstLine == 0 {
			d.FirstLine = i + 1
		}
		if len(d.Examples) < 4 {
			d.Examples = append(d.Examples, fmt.Sprintf("line %d: kdyn %q | kubectl %q", i+1, clip(x, 100), clip(y, 100)))
		}
	}
	if !exact {
		d.Identical = d.DiffLines == 0
	} else if d.DiffLines == 0 {
		// The same lines but not the same bytes: a final newline.
		d.Examples = append(d.Examples, "the outputs differ only in a final newline")
	}
	return d
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// CommandDiff is the comparison of one command line's outputs.
type CommandDiff struct {
	Args []string
	Diff Diff
}

// CompareBytes compares two outputs that must be byte-identical.
func CompareBytes(kdyn, kubectl []byte) Diff { return compareLines(kdyn, kubectl, nil, "") }

var lastField = regexp.MustCompile(`\s+\S+\s*$`)

// dropLastColumn removes the last whitespace-separated field of a table
// line (AGE in `get`'s default table) and trailing blanks.
func dropLastColumn(s string) string { return lastField.ReplaceAllString(s, "") }

// CompareTables compares two table outputs line by line except their last
// column (AGE), which depends on when each ran.
func CompareTables(kdyn, kubectl []byte) Diff {
	return compareLines(kdyn, kubectl, dropLastColumn, "the AGE column")
}

// CompareText compares two outputs line by line, ignoring trailing blanks.
func CompareText(kdyn, kubectl []byte) Diff {
	return compareLines(kdyn, kubectl, func(s string) string { return strings.TrimRight(s, " \t") }, "trailing blanks")
}

var (
	urlRE    = regexp.MustCompile(`https?://[^\s"'\\]+`)
	statusRE = regexp.MustCompile(`status"?[=:]\s*"?(\d{3})`) // klog: status="304 Not Modified"
)

// Requests counts the HTTP requests in a -v 6 log (the klog "Response"
// lines both tools write): one per line that has both a URL and a status.
type Requests struct {
	Discovery int // GET /api, /api/v1, /apis, /apis/GROUP/VERSION
	Other     int
	// DiscoveryNotModified counts the discovery requests answered 304.
	DiscoveryNotModified int
	Paths                []string // every path, in order
}

func (r Requests) Total() int { return r.Discovery + r.Other }

// isDiscoveryPath reports the discovery documents' paths.
func isDiscoveryPath(p string) bool {
	p = strings.TrimSuffix(p, "/")
	seg := strings.Split(strings.TrimPrefix(p, "/"), "/")
	switch seg[0] {
	case "api":
		return len(seg) <= 2
	case "apis":
		return len(seg) <= 3
	}
	return false
}

// CountRequests parses a -v 6 log.
func CountRequests(log []byte) Requests {
	var r Requests
	for _, line := range splitLines(log) {
		if !strings.Contains(line, "status") {
			continue
		}
		m := urlRE.FindString(line)
		if m == "" {
			continue
		}
		u, err := url.Parse(m)
		if err != nil {
			continue
		}
		q := u.Query()
		q.Del("continue")
		q.Del("timeout")
		path := u.Path
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		r.Paths = append(r.Paths, path)
		if isDiscoveryPath(u.Path) {
			r.Discovery++
			if m := statusRE.FindStringSubmatch(line); m != nil && m[1] == "304" {
				r.DiscoveryNotModified++
			}
		} else {
			r.Other++
		}
	}
	return r
}
