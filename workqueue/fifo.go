package workqueue

// fifo is a growable ring buffer: push at the tail, pop at the head, both
// O(1) amortised, and popped slots are zeroed so the queue does not keep
// items alive.
type fifo[T any] struct {
	buf  []T
	head int
	n    int
}

func (f *fifo[T]) push(v T) {
	if f.n == len(f.buf) {
		grown := make([]T, max(8, 2*len(f.buf)))
		for i := range f.n {
			grown[i] = f.buf[(f.head+i)%len(f.buf)]
		}
		f.buf, f.head = grown, 0
	}
	f.buf[(f.head+f.n)%len(f.buf)] = v
	f.n++
}

// pop removes and returns the head; the fifo must not be empty.
func (f *fifo[T]) pop() T {
	var zero T
	v := f.buf[f.head]
	f.buf[f.head] = zero
	f.head = (f.head + 1) % len(f.buf)
	f.n--
	if f.n == 0 && len(f.buf) > 1024 {
		// Give back the memory of a burst once it has been worked off.
		f.buf, f.head = nil, 0
	}
	return v
}

func (f *fifo[T]) clear() {
	f.buf, f.head, f.n = nil, 0, 0
}
