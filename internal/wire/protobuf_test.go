package wire

import "testing"

func TestKnownStringDoesNotAllocate(t *testing.T) {
	b := []byte("PartialObjectMetadata")
	if n := testing.AllocsPerRun(100, func() { _ = knownString(b) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
	if got := knownString([]byte("apps/v1")); got != "apps/v1" {
		t.Fatal(got)
	}
}
