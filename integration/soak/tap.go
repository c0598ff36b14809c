package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// watchTap splits handler lag in two: it notes when each event of the
// full-object ConfigMap watch is read from the response body (by kdyn's
// decoder), so lag = (completion → read: server, network and the read
// itself) + (read → handler: decode, cache, handler buffer). It only
// scans bytes; it does not change them.
type watchTap struct {
	next http.RoundTripper
	tr   *tracker
}

func (t *watchTap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || !isFullConfigMapWatch(req) {
		return resp, err
	}
	resp.Body = &tapBody{ReadCloser: resp.Body, tr: t.tr}
	return resp, nil
}

func isFullConfigMapWatch(req *http.Request) bool {
	w := req.URL.Query().Get("watch")
	return (w == "true" || w == "1") && strings.HasSuffix(req.URL.Path, "/api/v1/configmaps") &&
		!strings.Contains(req.Header.Get("Accept"), "PartialObjectMetadata")
}

type tapBody struct {
	io.ReadCloser
	tr    *tracker
	carry []byte
	buf   []byte
}

var rvField = []byte(`"resourceVersion":"`)

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.scan(p[:n], time.Now(), b.tr.arrived)
	}
	return n, err
}

// scan reports every resourceVersion field in the stream, including one
// cut across two reads.
func (b *tapBody) scan(chunk []byte, at time.Time, report func(uint64, time.Time)) {
	b.buf = append(append(b.buf[:0], b.carry...), chunk...)
	data := b.buf
	done := 0
	// keep is where the unscanned tail starts: a pattern cut at the end
	// needs at most len(rvField)-1 bytes; a cut value, its whole match.
	keep := -1
	for {
		i := bytes.Index(data[done:], rvField)
		if i < 0 {
			break
		}
		start := done + i + len(rvField)
		end := bytes.IndexByte(data[start:], '"')
		if end < 0 {
			keep = done + i
			break
		}
		if rv, err := strconv.ParseUint(string(data[start:start+end]), 10, 64); err == nil {
			report(rv, at)
		}
		done = start + end + 1
	}
	if keep < 0 {
		keep = max(done, len(data)-len(rvField)+1)
	}
	if len(data)-keep > 256 {
		keep = len(data) // not a resourceVersion after all
	}
	b.carry = append(b.carry[:0], data[keep:]...)
}
