package clientgodynamic

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const inPackageSrc = `package dynamic

import (
	"testing"

	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/util/watchlist"
)

func TestX(t *testing.T) {
	c, _ := NewForConfig(&restclient.Config{Host: "h"})
	_ = watchlist.DoesClientNotSupportWatchListSemantics(c)
	_ = restclient.Config{}
}
`

func TestPortInPackageTest(t *testing.T) {
	out, rep, err := Port("x_test.go", []byte(inPackageSrc), Options{CompressWatches: true})
	if err != nil {
		t.Fatal(err)
	}
	want := Report{Imports: []string{ClientGoREST + " -> " + KdynREST}, DotImport: true, ConfigLiterals: 2}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	for _, s := range []string{
		`restclient "` + KdynREST + `"`,
		`. "` + KdynDynamic + `"`,
		`"k8s.io/client-go/util/watchlist"`, // other client-go imports stay
		`restclient.Config{Host: "h", CompressWatches: true}`,
		`restclient.Config{CompressWatches: true}`,
	} {
		if !strings.Contains(string(out), s) {
			t.Errorf("ported file lacks %s:\n%s", s, out)
		}
	}
	if strings.Contains(string(out), `"`+ClientGoREST+`"`) {
		t.Errorf("client-go's rest is still imported:\n%s", out)
	}
}

func TestPortWithoutOptionsChangesOnlyImports(t *testing.T) {
	src := "package dynamic_test\n\nimport (\n\t\"k8s.io/client-go/dynamic\"\n\t\"k8s.io/client-go/rest\"\n)\n\nvar _ = dynamic.NewForConfig\nvar _ = rest.Config{}\n"
	out, rep, err := Port("y_test.go", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(`"`+ClientGoDynamic+`"`, `"`+KdynDynamic+`"`, `"`+ClientGoREST+`"`, `"`+KdynREST+`"`).Replace(src)
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("ported file (-want +got):\n%s", diff)
	}
	if rep.DotImport || rep.ConfigLiterals != 0 {
		t.Errorf("report %+v", rep)
	}
}

func TestPortRefusesAFileWithoutClientGoImports(t *testing.T) {
	_, _, err := Port("z_test.go", []byte("package dynamic\n\nimport \"testing\"\n\nvar _ testing.T\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), "upstream file changed") {
		t.Fatalf("err = %v", err)
	}
}
