package faultproxy

import "testing"

// NewForTest starts a proxy for one test, failing the test if it cannot,
// and closes it when the test ends (after clearing every fault, so that
// exchanges held by a stall or a Down end at once).
func NewForTest(t testing.TB, opts Options) *Proxy {
	t.Helper()
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Reset()
		p.Up()
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}
