package generation

import "testing"

func TestIfCurrentRunsOnlyInTheSameGeneration(t *testing.T) {
	var c Counter
	cache := ""
	gen := c.Read(nil)
	if !c.IfCurrent(gen, func() { cache = "first" }) || cache != "first" {
		t.Fatalf("a store in the current generation did not run (cache %q)", cache)
	}
	c.Advance(func() { cache = "" })
	if c.IfCurrent(gen, func() { cache = "stale" }) || cache != "" {
		t.Fatalf("a store begun before Advance ran after it (cache %q)", cache)
	}
	var seen string
	if got := c.Read(func() { seen = cache }); got != gen+1 || seen != "" {
		t.Fatalf("Read = %d seeing %q, want %d seeing the cleared cache", got, seen, gen+1)
	}
}

func TestKeySeparatesGenerations(t *testing.T) {
	if Key("load", 1) == Key("load", 2) || Key("load", 3) != "load/3" {
		t.Fatalf("keys: %q %q %q", Key("load", 1), Key("load", 2), Key("load", 3))
	}
}
