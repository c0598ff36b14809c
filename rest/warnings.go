package rest

import (
	"net/http"
	"sync"

	"github.com/go-logr/logr"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// WarningHandler receives the warnings a server sends in "Warning:" response
// headers (code 299). Implementations must be safe for concurrent use.
type WarningHandler interface {
	// HandleWarningHeader is called once per warning header of a response.
	HandleWarningHeader(code int, agent string, text string)
}

// WarningHandlerFunc adapts a function to WarningHandler.
type WarningHandlerFunc func(code int, agent, text string)

// HandleWarningHeader calls f.
func (f WarningHandlerFunc) HandleWarningHeader(code int, agent, text string) { f(code, agent, text) }

// NoWarnings discards every warning.
type NoWarnings struct{}

// HandleWarningHeader does nothing.
func (NoWarnings) HandleWarningHeader(int, string, string) {}

// NewWarningLogger returns the default handler: it logs each distinct
// warning text once, at warn level.
func NewWarningLogger(log logr.Logger) WarningHandler {
	return &dedupWarnings{next: WarningHandlerFunc(func(code int, agent, text string) {
		log.Info("server warning", "warning", text)
	})}
}

// NewDeduplicatingWarningHandler returns a handler that passes each distinct
// warning text to next only the first time it is seen.
func NewDeduplicatingWarningHandler(next WarningHandler) WarningHandler {
	return &dedupWarnings{next: next}
}

type dedupWarnings struct {
	next WarningHandler
	mu   sync.Mutex
	seen map[string]struct{}
}

func (d *dedupWarnings) HandleWarningHeader(code int, agent, text string) {
	if code != 299 || text == "" {
		return
	}
	d.mu.Lock()
	if d.seen == nil {
		d.seen = map[string]struct{}{}
	}
	_, dup := d.seen[text]
	d.seen[text] = struct{}{}
	d.mu.Unlock()
	if !dup {
		d.next.HandleWarningHeader(code, agent, text)
	}
}

func (c *Client) handleWarnings(h http.Header) {
	vs := h.Values("Warning")
	if len(vs) == 0 {
		return
	}
	warnings, _ := utilnet.ParseWarningHeaders(vs)
	for _, w := range warnings {
		c.warnings.HandleWarningHeader(w.Code, w.Agent, w.Text)
	}
}
