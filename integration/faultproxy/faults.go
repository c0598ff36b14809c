package faultproxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fault names what the proxy did to an exchange (see Record.Faults).
type Fault string

// The faults an exchange can record.
const (
	// FaultRespond: the proxy answered (Respond429, Respond5xx) instead of
	// the upstream.
	FaultRespond Fault = "respond"
	// FaultCutBeforeForward: closed without forwarding (CutBeforeForward).
	FaultCutBeforeForward Fault = "cut-before-forward"
	// FaultCutAfterForward: forwarded, answer dropped (CutAfterForward).
	FaultCutAfterForward Fault = "cut-after-forward"
	// FaultCut: cut by CutAll or Down.
	FaultCut Fault = "cut"
	// FaultMidFrame: cut inside a watch frame (CloseWatchMidFrame).
	FaultMidFrame Fault = "mid-frame"
	// FaultMalformed: a malformed frame was written (InjectMalformedFrame).
	FaultMalformed Fault = "malformed-frame"
	// FaultDelay: held before forwarding (DelayMatching).
	FaultDelay Fault = "delay"
	// FaultUpstream: the upstream could not be reached (answered 502) or
	// broke mid-body (the client connection was cut).
	FaultUpstream Fault = "upstream-error"
)

type ruleKind int

const (
	kindForward ruleKind = iota
	kindRespond
	kindCutBefore
	kindCutAfter
	kindDelay
)

// rule applies to the next n matching requests (n < 0: all of them).
type rule struct {
	kind       ruleKind
	n          int
	match      Match
	code       int
	retryAfter time.Duration
	delay      time.Duration
}

func (p *Proxy) addRule(rl *rule) {
	if rl.n == 0 {
		return
	}
	p.mu.Lock()
	p.rules = append(p.rules, rl)
	p.mu.Unlock()
}

// takeRule consumes the first rule that matches r; the zero rule forwards.
func (p *Proxy) takeRule(r *http.Request) rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, rl := range p.rules {
		if !rl.match.matches(r) {
			continue
		}
		out := *rl
		if rl.n > 0 {
			rl.n--
			if rl.n == 0 {
				p.rules = append(p.rules[:i:i], p.rules[i+1:]...)
			}
		}
		return out
	}
	return rule{}
}

// Respond429 answers the next n requests that match (nil: any; n < 0:
// every one until Reset) with 429 Too Many Requests, a Retry-After header
// of retryAfter rounded up to whole seconds (none when retryAfter <= 0),
// and a Status body with details.retryAfterSeconds.
func (p *Proxy) Respond429(n int, retryAfter time.Duration, match Match) {
	p.addRule(&rule{kind: kindRespond, n: n, match: match, code: http.StatusTooManyRequests, retryAfter: retryAfter})
}

// Respond5xx answers the next n requests that match (nil: any; n < 0:
// every one until Reset) with code and a Status body, without Retry-After.
func (p *Proxy) Respond5xx(code, n int, match Match) {
	p.addRule(&rule{kind: kindRespond, n: n, match: match, code: code})
}

// CutBeforeForward closes the connection of the next n requests that match
// (n < 0: all until Reset) without forwarding them: the upstream never sees
// them.
func (p *Proxy) CutBeforeForward(n int, match Match) {
	p.addRule(&rule{kind: kindCutBefore, n: n, match: match})
}

// CutAfterForward forwards the next n requests that match (n < 0: all
// until Reset), reads the upstream's answer, then closes the client's
// connection without delivering it: the upstream acted on the request and
// the client cannot know. It is meant for requests with a bounded answer,
// not watches.
func (p *Proxy) CutAfterForward(n int, match Match) {
	p.addRule(&rule{kind: kindCutAfter, n: n, match: match})
}

// DelayMatching makes the next n requests that match (n < 0: all until
// Reset) wait d before they are forwarded, on top of Delay: a slow path to
// one kind of request while the others go through at once.
func (p *Proxy) DelayMatching(d time.Duration, n int, match Match) {
	p.addRule(&rule{kind: kindDelay, n: n, match: match, delay: d})
}

// Delay makes every request wait d before it is forwarded (0: none).
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

func (p *Proxy) currentDelay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

// Stall(true) holds every response byte, of the exchanges in flight and of
// new ones, keeping the connections open (no FIN); requests are still
// accepted. Stall(false) delivers what was held and carries on.
func (p *Proxy) Stall(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && !p.stalled && !p.closed:
		p.stalled = true
		p.resume = make(chan struct{})
	case !on && p.stalled:
		p.stalled = false
		close(p.resume)
	}
	if !on {
		p.releaseHeldLocked()
	}
}

// StallOpen stalls the exchanges in flight only, as a connection that went
// dead would: their response bytes are held (connections open, no FIN)
// while new requests go through. Stall(false) releases them. It returns
// the number of exchanges stalled.
func (p *Proxy) StallOpen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for ex := range p.exchanges {
		if ex.release == nil {
			ex.release = make(chan struct{})
			n++
		}
	}
	return n
}

func (p *Proxy) releaseHeldLocked() {
	for ex := range p.exchanges {
		if ex.release != nil {
			close(ex.release)
			ex.release = nil
		}
	}
}

// CutAll closes every client connection (idle ones too) and cancels every
// upstream request. It returns the number of exchanges it cut.
func (p *Proxy) CutAll() int {
	p.mu.Lock()
	exs := make([]*exchange, 0, len(p.exchanges))
	for ex := range p.exchanges {
		ex.cut = true
		p.addFaultLocked(ex, FaultCut)
		exs = append(exs, ex)
	}
	p.mu.Unlock()
	p.ln.closeAll()
	for _, ex := range exs {
		ex.cancel()
	}
	if p.ownTr != nil {
		p.ownTr.CloseIdleConnections()
	}
	return len(exs)
}

// Down cuts everything (CutAll) and, for d, closes every new connection as
// soon as it is accepted, before the TLS handshake.
func (p *Proxy) Down(d time.Duration) {
	p.ln.mu.Lock()
	p.ln.downUntil = time.Now().Add(d)
	p.ln.mu.Unlock()
	p.CutAll()
}

// Up ends a Down early: new connections are accepted again.
func (p *Proxy) Up() {
	p.ln.mu.Lock()
	p.ln.downUntil = time.Time{}
	p.ln.mu.Unlock()
}

// Refused returns how many connections Down closed on arrival.
func (p *Proxy) Refused() int {
	p.ln.mu.Lock()
	defer p.ln.mu.Unlock()
	return p.ln.refused
}

// CloseWatchMidFrame makes every open watch deliver the first half of its
// next frame and then closes its connection. It returns the number of
// watches armed.
func (p *Proxy) CloseWatchMidFrame() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for ex := range p.exchanges {
		if ex.watch {
			ex.midFrame = true
			n++
		}
	}
	return n
}

// InjectMalformedFrame writes MalformedFrame into every open watch at once
// (after the frame being written, if any; when stalled, once the stall
// ends). It returns the number of watches it applies to.
func (p *Proxy) InjectMalformedFrame() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for ex := range p.exchanges {
		if !ex.watch {
			continue
		}
		ex.inject++
		n++
		select {
		case ex.wake <- struct{}{}:
		default:
		}
	}
	return n
}

// OpenWatches returns the number of watches the proxy is streaming.
func (p *Proxy) OpenWatches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for ex := range p.exchanges {
		if ex.watch && p.records[ex.rec].Status != 0 {
			n++
		}
	}
	return n
}

// Reset clears every rule, the delay, the stall and Down.
func (p *Proxy) Reset() {
	p.Stall(false)
	p.mu.Lock()
	p.rules = nil
	p.delay = 0
	p.mu.Unlock()
	p.ln.mu.Lock()
	p.ln.downUntil = time.Time{}
	p.ln.mu.Unlock()
}

func (p *Proxy) takeInject(ex *exchange) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := ex.inject
	ex.inject = 0
	if n > 0 {
		p.addFaultLocked(ex, FaultMalformed)
	}
	return n
}

func (p *Proxy) takeMidFrame(ex *exchange) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := ex.midFrame
	ex.midFrame = false
	return m
}

// respond answers the exchange itself with a metav1.Status.
func (p *Proxy) respond(ctx context.Context, w http.ResponseWriter, ex *exchange, code int, retryAfter time.Duration, msg string) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  msg,
		Reason:   reasonFor(code),
		Code:     int32(code),
	}
	if retryAfter > 0 {
		secs := int((retryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		st.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(secs)}
	}
	body, _ := json.Marshal(&st)
	w.Header().Set("Content-Type", "application/json")
	if !p.waitStall(ctx, ex) {
		return
	}
	w.WriteHeader(code)
	p.setRecord(ex, func(rec *Record) { rec.Status = code })
	_, _ = w.Write(body)
}

func reasonFor(code int) metav1.StatusReason {
	switch code {
	case http.StatusTooManyRequests:
		return metav1.StatusReasonTooManyRequests
	case http.StatusServiceUnavailable:
		return metav1.StatusReasonServiceUnavailable
	case http.StatusGatewayTimeout:
		return metav1.StatusReasonTimeout
	case http.StatusInternalServerError:
		return metav1.StatusReasonInternalError
	}
	return metav1.StatusReasonUnknown
}
