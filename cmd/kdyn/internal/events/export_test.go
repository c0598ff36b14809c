package events

import "time"

// SetNow fixes the time LAST SEEN counts from, until the returned function
// restores the clock.
func SetNow(t time.Time) (restore func()) {
	old := now
	now = func() time.Time { return t }
	return func() { now = old }
}
