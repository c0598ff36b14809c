package printers

import (
	"bytes"
	"testing"
)

// TestNamePrinterUnknownName: an object without a name prints as
// kubectl's does, "<unknown>" in place of the name.
func TestNamePrinterUnknownName(t *testing.T) {
	var b bytes.Buffer
	p := NewNamePrinter(&b)
	for _, raw := range []string{
		`{"kind":"Preference","apiVersion":"kubectl.config.k8s.io/v1beta1"}`,
		`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}`,
	} {
		if err := p.Print(ItemFromRaw([]byte(raw))); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	if want := "preference.kubectl.config.k8s.io/<unknown>\nconfigmap/x\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
