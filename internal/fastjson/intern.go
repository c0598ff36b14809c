package fastjson

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// Interner is a bounded, concurrency-safe pool of shared strings, for callers
// (informer caches, indexers) that want equal strings decoded at different
// times to share one allocation.
//
// The pool is a fixed-size, two-way set-associative table: each string
// hashes to a set of two slots, and a string that is not in its set replaces
// the less recently inserted of the two. Memory is therefore bounded by
// maxEntries strings of at most maxLen bytes, a stream of unique strings
// (UIDs, resource versions) cannot fill the table for good, and frequently
// seen strings stay resident. Sharing is best effort: two equal strings may
// occasionally be separate copies after a collision evicted the first one.
// The returned strings are ordinary, immutable Go strings and stay valid
// regardless of the pool.
//
// All methods are safe for concurrent use. Lookups take no lock.
type Interner struct {
	slots  []atomic.Value // each holds an any(string), boxed once and shared
	mask   uint64
	maxLen int
	seed   maphash.Seed
}

// NewInterner returns a pool with room for maxEntries strings (rounded up to
// a power of two between 16 and 1<<24) of at most maxLen bytes each; longer
// strings are never interned. maxLen <= 0 means 64.
func NewInterner(maxEntries, maxLen int) *Interner {
	if maxLen <= 0 {
		maxLen = 64
	}
	n := 16
	for n < maxEntries && n < 1<<24 {
		n <<= 1
	}
	return &Interner{
		slots:  make([]atomic.Value, n),
		mask:   uint64(n - 1),
		maxLen: maxLen,
		seed:   maphash.MakeSeed(),
	}
}

// MaxLen returns the length in bytes of the longest string the pool interns.
func (in *Interner) MaxLen() int { return in.maxLen }

// String returns a string equal to b, shared with earlier calls for equal
// bytes when possible. It allocates only when b is not already pooled.
func (in *Interner) String(b []byte) string {
	if len(b) > in.maxLen {
		return string(b)
	}
	return in.box(b).(string)
}

// Intern returns a pooled string equal to s; when s is not pooled yet, a
// copy of s is pooled and returned (a copy, so that a short s sliced from a
// large string does not keep the large one alive).
func (in *Interner) Intern(s string) string {
	if len(s) > in.maxLen || len(s) == 0 {
		return s
	}
	i := maphash.String(in.seed, s) & in.mask
	first := &in.slots[i]
	v := first.Load()
	if p, ok := v.(string); ok && p == s {
		return p
	}
	second := &in.slots[i^1]
	if p, ok := second.Load().(string); ok && p == s {
		return p
	}
	return in.insert(first, second, v, strings.Clone(s)).(string)
}

// box returns the pooled string equal to b as an interface value. The
// interface is stored in the pool, so a hit costs no allocation at all, not
// even the 16-byte string header that boxing a string normally needs.
// The caller has checked len(b) <= in.maxLen.
func (in *Interner) box(b []byte) any {
	if len(b) == 0 {
		return ""
	}
	i := maphash.Bytes(in.seed, b) & in.mask
	first := &in.slots[i]
	v := first.Load()
	if s, ok := v.(string); ok && s == string(b) {
		return v
	}
	second := &in.slots[i^1]
	w := second.Load()
	if s, ok := w.(string); ok && s == string(b) {
		return w
	}
	return in.insert(first, second, v, string(b))
}

// insert puts s in the first slot of its two-way set, moving the previous
// occupant v of the first slot to the second (evicting that one's), so the
// set keeps the two most recently inserted strings. Racing inserts may lose
// an entry, which only costs sharing.
func (in *Interner) insert(first, second *atomic.Value, v any, s string) any {
	if v != nil {
		second.Store(v)
	}
	var boxed any = s
	first.Store(boxed)
	return boxed
}
