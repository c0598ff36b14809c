package dynamic

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestResourceSlashesLikeClientGo: slashes at either end of a resource or
// subresource are left out of the path, as client-go's path.Join leaves
// them out; what remains must still be one valid path segment.
func TestResourceSlashesLikeClientGo(t *testing.T) {
	rec, c := newRecordingClient(t)
	ctx := t.Context()
	tests := []struct {
		name     string
		resource string
		sub      []string
		want     string // path, or the error's text
		wantErr  bool
	}{
		{"trailing slash", "rtest/", []string{"srtest"}, "/apis/gtest/vtest/namespaces/nstest/rtest/x/srtest", false},
		{"leading slash", "/rtest", nil, "/apis/gtest/vtest/namespaces/nstest/rtest/x", false},
		{"slashes both ends", "//rtest//", []string{"/srtest/"}, "/apis/gtest/vtest/namespaces/nstest/rtest/x/srtest", false},
		{"empty subresource", "rtest", []string{"", "srtest", "/"}, "/apis/gtest/vtest/namespaces/nstest/rtest/x/srtest", false},
		{"plain", "rtest", []string{"srtest"}, "/apis/gtest/vtest/namespaces/nstest/rtest/x/srtest", false},

		{"inner slash", "rtest/other", nil, `invalid resource "rtest/other"`, true},
		{"only slashes", "/", nil, `invalid resource "/"`, true},
		{"dot dot", "..", nil, `invalid resource ".."`, true},
		{"dot dot with slash", "../", nil, `invalid resource ".."`, true},
		{"dot", "./", nil, `invalid resource "."`, true},
		{"percent", "r%2ftest", nil, `invalid resource "r%2ftest"`, true},
		{"subresource inner slash", "rtest", []string{"a/b"}, `invalid subresource "a/b"`, true},
		{"subresource dot dot", "rtest", []string{"/../"}, `invalid subresource ".."`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec.mu.Lock()
			rec.last = ""
			rec.mu.Unlock()
			gvr := schema.GroupVersionResource{Group: "gtest", Version: "vtest", Resource: tt.resource}
			_, err := c.Resource(gvr).Namespace("nstest").Get(ctx, "x", metav1.GetOptions{}, tt.sub...)
			got := rec.lastRequest()
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				if got != "" {
					t.Fatalf("a request was sent: %s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, "GET "+tt.want+"\n") {
				t.Fatalf("request = %q, want GET %s", got, tt.want)
			}
		})
	}
}

func TestSubresourceSegmentsKeepsCleanSlice(t *testing.T) {
	subs := []string{"status"}
	if got := subresourceSegments(subs); &got[0] != &subs[0] {
		t.Error("a clean subresource slice was copied")
	}
	if n := testing.AllocsPerRun(100, func() { _ = subresourceSegments(subs) }); n != 0 {
		t.Errorf("%v allocations for a clean subresource slice", n)
	}
}
