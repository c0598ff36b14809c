package cli

import "testing"

func TestCountRequests(t *testing.T) {
	kdyn := []byte(`I1205 10:22:06.792306   23042 logging.go:61] "Response" verb="GET" url="https://127.0.0.1:1234/api" status="304 Not Modified" milliseconds=1` + "\n" +
		`I1205 10:22:06.792306   23042 logging.go:61] "Response" verb="GET" url="https://127.0.0.1:1234/apis" status="304 Not Modified" milliseconds=1` + "\n" +
		`I1205 10:22:06.792306   23042 logging.go:35] "Request" verb="GET" url="https://127.0.0.1:1234/api/v1/namespaces/x/configmaps?limit=500" headers="Accept: application/json"` + "\n" +
		`I1205 10:22:06.792306   23042 logging.go:61] "Response" verb="GET" url="https://127.0.0.1:1234/api/v1/namespaces/x/configmaps?limit=500" status="200 OK" milliseconds=2` + "\n")
	kubectl := []byte(`I1202 10:00:00.000000   1 round_trippers.go:632] "Response" verb="GET" url="https://127.0.0.1:1234/apis/apps/v1?timeout=32s" status="200 OK" milliseconds=2` + "\n" +
		`I1202 10:00:00.000000   1 round_trippers.go:632] "Response" verb="GET" url="https://127.0.0.1:1234/api/v1/namespaces/x/configmaps?limit=500" status="200 OK" milliseconds=2` + "\n" +
		`I1202 10:00:00.000000   1 loader.go:402] Config loaded from file:  /tmp/kubeconfig` + "\n")
	if r := CountRequests(kdyn); r.Discovery != 2 || r.Other != 1 || r.DiscoveryNotModified != 2 {
		t.Errorf("kdyn: %+v", r)
	}
	if r := CountRequests(kubectl); r.Discovery != 1 || r.Other != 1 || r.DiscoveryNotModified != 0 {
		t.Errorf("kubectl: %+v", r)
	}
}

func TestDiscoveryPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/api": true, "/api/v1": true, "/apis": true, "/apis/apps/v1": true, "/apis/apps": true,
		"/api/v1/namespaces": false, "/apis/apps/v1/deployments": false, "/openapi/v3": false, "/version": false,
	} {
		if got := isDiscoveryPath(p); got != want {
			t.Errorf("%s: %v", p, got)
		}
	}
}

func TestCompareTables(t *testing.T) {
	a := []byte("NAME       DATA   AGE\ncm-00000   4      5s\n")
	b := []byte("NAME       DATA   AGE\ncm-00000   4      7s\n")
	if d := CompareTables(a, b); !d.Identical || d.Exact {
		t.Errorf("tables: %s", d)
	}
	c := []byte("NAME       DATA   AGE\ncm-00000   3      7s\n")
	if d := CompareTables(a, c); d.Identical || d.FirstLine != 2 {
		t.Errorf("tables: %s", d)
	}
}

func TestCompareBytes(t *testing.T) {
	if d := CompareBytes([]byte("a\nb\n"), []byte("a\nb\n")); !d.Identical || !d.Exact || d.String() != "byte-identical (2 lines, 4 bytes)" {
		t.Error(d)
	}
	d := CompareBytes([]byte("a\nb\n"), []byte("a\nc\n"))
	if d.Identical || d.FirstLine != 2 || d.FirstByte != 2 {
		t.Error(d)
	}
	if d := CompareBytes([]byte("a\n"), []byte("a")); d.Identical {
		t.Error(d)
	}
}

func TestMedian(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Error(m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Error(m)
	}
}
