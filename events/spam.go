package events

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
)

// spamCacheSize bounds the objects the spam filter remembers, as client-go's
// (its LRU cache of 4096 entries): the least recently seen is forgotten,
// and starts again with a full bucket.
const spamCacheSize = 4096

// spamKey is what the spam filter counts per: client-go's source + object +
// type (the source, reporting controller and instance, is the recorder's).
// The resourceVersion is left out, so an object that keeps changing does not
// get a fresh bucket.
type spamKey struct {
	apiVersion, kind, namespace, name string
	uid                               types.UID
	eventType                         string
}

// spamFilter is a token bucket per spamKey, in an LRU cache. It is safe for
// concurrent use.
type spamFilter struct {
	burst int
	every time.Duration
	size  int

	// mu guards the fields below.
	mu    sync.Mutex
	lru   *list.List // of *spamEntry, most recent first
	index map[spamKey]*list.Element
}

type spamEntry struct {
	key     spamKey
	limiter *rate.Limiter
}

func newSpamFilter(burst int, every time.Duration, size int) *spamFilter {
	return &spamFilter{burst: burst, every: every, size: size, lru: list.New(), index: map[spamKey]*list.Element{}}
}

// allow takes a token from k's bucket at now, and reports whether there was
// one.
func (f *spamFilter) allow(k spamKey, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	el, ok := f.index[k]
	if ok {
		f.lru.MoveToFront(el)
	} else {
		if f.lru.Len() >= f.size {
			oldest := f.lru.Back()
			delete(f.index, oldest.Value.(*spamEntry).key)
			f.lru.Remove(oldest)
		}
		// The bucket starts full: burst tokens, then one per every.
		lim := rate.NewLimiter(rate.Every(f.every), f.burst)
		el = f.lru.PushFront(&spamEntry{key: k, limiter: lim})
		f.index[k] = el
	}
	return el.Value.(*spamEntry).limiter.AllowN(now, 1)
}
