package generation

import (
	"strconv"
	"sync"
)

// Counter counts invalidations. Its zero value is generation 0, ready to
// use. Its lock also guards whatever the functions passed to its methods
// read and write, so a cache field written only through them needs no lock
// of its own.
type Counter struct {
	mu sync.Mutex
	n  uint64
}

// Advance counts an invalidation and runs drop, which clears the caches,
// under the lock: no IfCurrent of an earlier generation runs after it.
func (c *Counter) Advance(drop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if drop != nil {
		drop()
	}
}

// Read returns the current generation, running read (if not nil) under the
// lock, so that what read sees belongs to that generation.
func (c *Counter) Read(read func()) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if read != nil {
		read()
	}
	return c.n
}

// IfCurrent runs store under the lock unless an invalidation came since
// Read returned gen, and reports whether it ran.
func (c *Counter) IfCurrent(gen uint64, store func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n != gen {
		return false
	}
	store()
	return true
}

// Key returns name qualified by gen, a singleflight key that callers of
// other generations do not share.
func Key(name string, gen uint64) string {
	return name + "/" + strconv.FormatUint(gen, 10)
}
