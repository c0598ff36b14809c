package dynamic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kdyn/kdyn/rest"
)

// metadataListBody is a protobuf PartialObjectMetadataList of n items in
// its envelope, as the server sends it.
func metadataListBody(t *testing.T, n int) []byte {
	t.Helper()
	l := metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "77", Continue: "next"}}
	for i := range n {
		l.Items = append(l.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("cm-%d", i), Namespace: "ns", ResourceVersion: fmt.Sprint(10 + i),
			Labels:        map[string]string{"i": fmt.Sprint(i)},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", FieldsV1: metav1.NewFieldsV1(`{"f:data":{}}`)}},
		}})
	}
	raw, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return envelope(t, "PartialObjectMetadataList", raw)
}

// trickle writes body in small flushed pieces, so the client reads items
// across many reads.
func trickle(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	for len(body) > 0 {
		n := min(37, len(body))
		_, _ = w.Write(body[:n])
		w.(http.Flusher).Flush()
		body = body[n:]
	}
}

func streamClient(t *testing.T, h http.HandlerFunc) *rest.Request {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rc, err := rest.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return rc.Get().Version("v1").Namespace("ns").Resource("configmaps")
}

func TestStreamMetadataList(t *testing.T) {
	body := metadataListBody(t, 300)
	for _, keep := range []bool{false, true} {
		var accept string
		req := streamClient(t, func(w http.ResponseWriter, r *http.Request) {
			accept = r.Header.Get("Accept")
			trickle(w, rest.ContentTypeProtobuf, body)
		})
		var got []*metav1.PartialObjectMetadata
		lm, err := StreamMetadataList(context.Background(), req, keep, func(p *metav1.PartialObjectMetadata) error {
			got = append(got, p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(accept, rest.ContentTypeProtobuf+";as=PartialObjectMetadataList") {
			t.Fatalf("Accept %q", accept)
		}
		if lm.ResourceVersion != "77" || lm.Continue != "next" || len(got) != 300 {
			t.Fatalf("list meta %+v, %d items", lm, len(got))
		}
		for i, p := range got {
			if p.Name != fmt.Sprintf("cm-%d", i) || p.Labels["i"] != fmt.Sprint(i) || p.Kind != "PartialObjectMetadata" || (len(p.ManagedFields) == 1) != keep {
				t.Fatalf("item %d (keep=%v): %+v", i, keep, p)
			}
		}
	}
}

func TestStreamMetadataListErrors(t *testing.T) {
	body := metadataListBody(t, 20)
	// The stream ends inside an item: an error, after the items before it.
	req := streamClient(t, func(w http.ResponseWriter, r *http.Request) {
		trickle(w, rest.ContentTypeProtobuf, body[:len(body)-10])
	})
	n := 0
	_, err := StreamMetadataList(context.Background(), req, false, func(*metav1.PartialObjectMetadata) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "unexpected EOF") || n == 0 || n == 20 {
		t.Fatalf("truncated: %v after %d items", err, n)
	}
	// Not protobuf despite the content type.
	req = streamClient(t, func(w http.ResponseWriter, r *http.Request) {
		trickle(w, rest.ContentTypeProtobuf, []byte("{}"))
	})
	if _, err := StreamMetadataList(context.Background(), req, false, func(*metav1.PartialObjectMetadata) error { return nil }); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("not protobuf: %v", err)
	}
	// The caller's error stops the list and comes back as is.
	stop := errors.New("enough")
	req = streamClient(t, func(w http.ResponseWriter, r *http.Request) { trickle(w, rest.ContentTypeProtobuf, body) })
	n = 0
	if _, err := StreamMetadataList(context.Background(), req, false, func(*metav1.PartialObjectMetadata) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	}); err != stop || n != 3 {
		t.Fatalf("stop: %v after %d", err, n)
	}
	// A server error is a StatusError.
	req = streamClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"no"}`))
	})
	if _, err := StreamMetadataList(context.Background(), req, false, func(*metav1.PartialObjectMetadata) error { return nil }); err == nil || !strings.Contains(err.Error(), "no") {
		t.Fatalf("forbidden: %v", err)
	}
}

func TestStreamMetadataListJSONFallback(t *testing.T) {
	req := streamClient(t, func(w http.ResponseWriter, r *http.Request) {
		trickle(w, "application/json", []byte(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},"items":[
			{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","managedFields":[{"manager":"m"}]}},
			{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"b"}}]}`))
	})
	var names []string
	lm, err := StreamMetadataList(context.Background(), req, false, func(p *metav1.PartialObjectMetadata) error {
		if p.ManagedFields != nil {
			t.Errorf("%s kept managedFields", p.Name)
		}
		names = append(names, p.Name)
		return nil
	})
	if err != nil || lm.ResourceVersion != "5" || strings.Join(names, ",") != "a,b" {
		t.Fatalf("%+v %v %v", lm, names, err)
	}
}

// A length-delimited field longer than any stream is malformed input, not
// a field to skip (its length would wrap to a negative count).
func TestSkipFieldRefusesImpossibleLength(t *testing.T) {
	b := binary.AppendUvarint(nil, 1<<63+5)
	err := skipField(bufio.NewReader(bytes.NewReader(b)), 2)
	if err == nil || !strings.Contains(err.Error(), "malformed protobuf") {
		t.Fatalf("skipField = %v", err)
	}
}
