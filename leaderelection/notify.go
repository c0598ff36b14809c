package leaderelection

import "sync"

// notifier calls OnNewLeader on a goroutine of its own, one call at a
// time and in order, so a slow callback never delays a renewal. A change
// pushed while a call runs waits for it; later pushes replace it.
type notifier struct {
	fn   func(identity string)
	wake chan struct{} // capacity 1: a push while the loop is busy
	quit chan struct{}
	done chan struct{}

	// mu guards pending and has.
	mu      sync.Mutex
	pending string
	has     bool
}

// startNotifier starts the loop; nil fn gives a nil notifier, which
// ignores pushes.
func startNotifier(fn func(string)) *notifier {
	if fn == nil {
		return nil
	}
	n := &notifier{fn: fn, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go n.loop()
	return n
}

func (n *notifier) push(identity string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	n.pending, n.has = identity, true
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) take() (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	id, has := n.pending, n.has
	n.has = false
	return id, has
}

func (n *notifier) loop() {
	defer close(n.done)
	for {
		select {
		case <-n.wake:
			if id, ok := n.take(); ok {
				n.fn(id)
			}
		case <-n.quit:
			// Deliver what was observed last, so every change seen before
			// Run returns is reported.
			if id, ok := n.take(); ok {
				n.fn(id)
			}
			return
		}
	}
}

// stop delivers a pending change, then waits for the loop to exit.
func (n *notifier) stop() {
	if n == nil {
		return
	}
	close(n.quit)
	<-n.done
}
