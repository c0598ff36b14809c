package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestListMetadata(t *testing.T) {
	body := metadataListBody(t, 300)
	for _, keep := range []bool{false, true} {
		var accept string
		ep := testEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
			accept = r.Header.Get("Accept")
			trickle(w, ContentTypeProtobuf, body)
		})
		var got []*metav1.PartialObjectMetadata
		lm, err := ep.ListMetadata(context.Background(), metav1.ListOptions{}, keep, func(p *metav1.PartialObjectMetadata) error {
			got = append(got, p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(accept, ContentTypeProtobuf+";as=PartialObjectMetadataList") {
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

func TestListMetadataErrors(t *testing.T) {
	body := metadataListBody(t, 20)
	// The stream ends inside an item: an error, after the items before it.
	ep := testEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		trickle(w, ContentTypeProtobuf, body[:len(body)-10])
	})
	n := 0
	_, err := ep.ListMetadata(context.Background(), metav1.ListOptions{}, false, func(*metav1.PartialObjectMetadata) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "unexpected EOF") || n == 0 || n == 20 {
		t.Fatalf("truncated: %v after %d items", err, n)
	}
	// Not protobuf despite the content type.
	ep = testEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		trickle(w, ContentTypeProtobuf, []byte("{}"))
	})
	if _, err := ep.ListMetadata(context.Background(), metav1.ListOptions{}, false, func(*metav1.PartialObjectMetadata) error { return nil }); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("not protobuf: %v", err)
	}
	// The caller's error stops the list and comes back as is.
	stop := errors.New("enough")
	ep = testEndpoint(t, func(w http.ResponseWriter, r *http.Request) { trickle(w, ContentTypeProtobuf, body) })
	n = 0
	if _, err := ep.ListMetadata(context.Background(), metav1.ListOptions{}, false, func(*metav1.PartialObjectMetadata) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	}); err != stop || n != 3 {
		t.Fatalf("stop: %v after %d", err, n)
	}
	// An error of the Opener (rest's StatusError of a 403, say) comes back
	// as is.
	forbidden := errors.New("forbidden")
	ep = Endpoint{Open: func(context.Context, *metav1.ListOptions, http.Header) (*http.Response, error) { return nil, forbidden }}
	if _, err := ep.ListMetadata(context.Background(), metav1.ListOptions{}, false, func(*metav1.PartialObjectMetadata) error { return nil }); err != forbidden {
		t.Fatalf("forbidden: %v", err)
	}
}

func TestListMetadataJSONFallback(t *testing.T) {
	ep := testEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		trickle(w, "application/json", []byte(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},"items":[
			{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","managedFields":[{"manager":"m"}]}},
			{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"b"}}]}`))
	})
	var names []string
	lm, err := ep.ListMetadata(context.Background(), metav1.ListOptions{}, false, func(p *metav1.PartialObjectMetadata) error {
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
