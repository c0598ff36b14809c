package faultproxy

import (
	"net/http"
	"strings"
)

// Match selects the requests a fault applies to. A nil Match selects every
// request.
type Match func(r *http.Request) bool

func (m Match) matches(r *http.Request) bool { return m == nil || m(r) }

// PathPrefix matches requests whose URL path starts with prefix.
func PathPrefix(prefix string) Match {
	return func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, prefix) }
}

// Method matches requests with this HTTP method (and m, when not nil).
func Method(method string, m Match) Match {
	return func(r *http.Request) bool { return r.Method == method && m.matches(r) }
}

// Watches matches watch requests (and m, when not nil).
func Watches(m Match) Match {
	return func(r *http.Request) bool { return IsWatch(r) && m.matches(r) }
}

// NotWatches matches requests that are not watches (and m, when not nil).
func NotWatches(m Match) Match {
	return func(r *http.Request) bool { return !IsWatch(r) && m.matches(r) }
}

// IsWatch reports whether r is a watch: watch=true or watch=1 in the query.
func IsWatch(r *http.Request) bool {
	v := r.URL.Query().Get("watch")
	return v == "true" || v == "1"
}
