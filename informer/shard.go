package informer

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ShardKey is what a shard hashes to place an object (KEP-5866's field
// paths).
type ShardKey string

const (
	// ShardByUID places each object by its UID: shards of even size.
	ShardByUID ShardKey = "object.metadata.uid"
	// ShardByNamespace places each object by its namespace: a namespace's
	// objects — owners and their dependents — stay together.
	ShardByNamespace ShardKey = "object.metadata.namespace"
)

// Hash is the 64-bit FNV-1a hash the API server places objects by (of a
// UID or a namespace), the same function as
// k8s.io/apimachinery/pkg/sharding.HashField.
func Hash(value string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(value))
	return h.Sum64()
}

// Shard is a live selection of part of a resource's objects: those whose
// Key hashes into one of its ranges. An informer given a Shard
// (Options.Shard, InformerOptions.Shard) asks the server for those objects
// only — the shardSelector of sharded list and watch (KEP-5866, feature
// gate ShardedListAndWatch) — checks every object's hash itself as well,
// so a server that ignores the selector costs traffic but never
// correctness, and follows every Set: objects that leave the ranges are
// delivered as deletes marked Deleted.ShardMove, objects that enter as
// adds. One Shard may serve many informers (a member of a sharded
// controller gives the same one to all of its informers). It is safe for
// concurrent use.
//
// A Shard may also carry a fence (Fence): a moment after which Holds — the
// check a sharded controller makes right before it writes — reports false
// for every object. A shard.Member fences its Shard with its Lease's renew
// deadline, so Holds is true only while no other member can have taken the
// object's range. Contains, and the informers' own filtering, ignore the
// fence.
type Shard struct {
	key ShardKey
	cur atomic.Pointer[shardState]
	// fence, when set, is when Holds starts to report false.
	fence atomic.Pointer[time.Time]

	mu   sync.Mutex
	subs map[int]func()
	next int
}

// shardState is one immutable setting of a Shard.
type shardState struct {
	ranges   []HashRange
	selector string
}

// NewShard returns a shard of key over ranges (see Set).
func NewShard(key ShardKey, ranges ...HashRange) (*Shard, error) {
	switch key {
	case ShardByUID, ShardByNamespace:
	default:
		return nil, fmt.Errorf("informer: shard key %q is not %q or %q", key, ShardByUID, ShardByNamespace)
	}
	s := &Shard{key: key, subs: map[int]func(){}}
	if err := s.store(ranges); err != nil {
		return nil, err
	}
	return s, nil
}

// Key returns what the shard hashes.
func (s *Shard) Key() ShardKey { return s.key }

// Ranges returns the current ranges, sorted and merged.
func (s *Shard) Ranges() []HashRange { return slices.Clone(s.cur.Load().ranges) }

// Selector returns the current ranges as the server's shard selector, for
// example "shardRange(object.metadata.uid, '0x0000000000000000',
// '0x8000000000000000')", several joined with " || "; "" when the shard has
// no range.
func (s *Shard) Selector() string { return s.cur.Load().selector }

// Set replaces the ranges (overlapping and adjacent ones are merged), and
// tells every informer of the shard, which then drops the objects that
// left and lists those that entered. No range at all selects nothing.
func (s *Shard) Set(ranges ...HashRange) error {
	if err := s.store(ranges); err != nil {
		return err
	}
	s.mu.Lock()
	subs := make([]func(), 0, len(s.subs))
	for _, f := range s.subs {
		subs = append(subs, f)
	}
	s.mu.Unlock()
	for _, f := range subs {
		f()
	}
	return nil
}

func (s *Shard) store(ranges []HashRange) error {
	merged, err := MergeRanges(ranges)
	if err != nil {
		return err
	}
	s.cur.Store(&shardState{ranges: merged, selector: selector(s.key, merged)})
	return nil
}

// Contains reports whether obj is in the shard's current ranges.
func (s *Shard) Contains(obj metav1.Object) bool {
	return s.cur.Load().contains(s.value(obj))
}

// Fence makes Holds report false for every object from the moment until
// on, by this process's monotonic clock, until the next call of Fence; the
// zero time closes the fence at once. A Shard that was never fenced has no
// such moment: Holds is Contains.
func (s *Shard) Fence(until time.Time) { s.fence.Store(&until) }

// Holds reports whether obj is in the shard's current ranges and the
// fence (see Fence) has not passed: for a member of a ring, whether obj is
// this member's to act on at this moment, with a Lease fresh enough that
// no other member can have taken its range. Call it right before a write;
// the one gap it cannot close — a process frozen between this check and
// its write — is closed by the write's own precondition (a
// resourceVersion), as the shard package documentation explains.
func (s *Shard) Holds(obj metav1.Object) bool {
	return s.open() && s.Contains(obj)
}

// HoldsValue is Holds for the value the shard hashes (a UID, or a
// namespace, as its Key says).
func (s *Shard) HoldsValue(v string) bool {
	return s.open() && s.ContainsValue(v)
}

// open reports whether the fence, if any, has not passed.
func (s *Shard) open() bool {
	f := s.fence.Load()
	return f == nil || time.Now().Before(*f)
}

// ContainsValue reports whether the value the shard hashes (a UID, or a
// namespace, as its Key says) is in the shard's current ranges: for code
// that holds keys rather than objects, such as a controller's work queue.
func (s *Shard) ContainsValue(v string) bool { return s.cur.Load().contains(v) }

// value is what the shard hashes of obj.
func (s *Shard) value(obj metav1.Object) string {
	if s.key == ShardByNamespace {
		return obj.GetNamespace()
	}
	return string(obj.GetUID())
}

func (st *shardState) contains(value string) bool {
	h := Hash(value)
	for _, r := range st.ranges {
		if h >= r.From && h <= r.To {
			return true
		}
	}
	return false
}

// subscribe calls f after every Set until the returned cancel is called.
func (s *Shard) subscribe(f func()) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.next
	s.next++
	s.subs[id] = f
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.subs, id)
	}
}

// selector renders ranges as KEP-5866's shard selector: each range
// [From, To] as shardRange(key, 'From', 'To+1'), bounds in 16-digit hex,
// the end of the space as '0x10000000000000000'.
func selector(key ShardKey, ranges []HashRange) string {
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		end := fmt.Sprintf("0x%016x", r.To+1)
		if r.To == math.MaxUint64 {
			end = "0x10000000000000000"
		}
		parts[i] = fmt.Sprintf("shardRange(%s, '0x%016x', '%s')", key, r.From, end)
	}
	return strings.Join(parts, " || ")
}
