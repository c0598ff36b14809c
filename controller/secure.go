package controller

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
)

// SecureMetrics serves the Manager's address over TLS and lets only
// callers the API server authorizes read /metrics, as controller-runtime's
// secure metrics serving (its WithAuthenticationAndAuthorization filter)
// does: a caller presents a bearer token, which the API server
// authenticates (a TokenReview) and authorizes for the verb get on the
// non-resource URL /metrics (a SubjectAccessReview) — what a Prometheus
// whose ServiceAccount is bound to a ClusterRole with
// `nonResourceURLs: ["/metrics"], verbs: ["get"]` has. /healthz and
// /readyz stay open: the kubelet's probes carry no token.
type SecureMetrics struct {
	// Client makes the reviews: it needs create on
	// tokenreviews.authentication.k8s.io and
	// subjectaccessreviews.authorization.k8s.io (the ClusterRole
	// system:auth-delegator grants both); required.
	Client dynamic.Interface
	// CertFile and KeyFile are the serving certificate and key (PEM).
	// Empty: a self-signed certificate made at start, as
	// controller-runtime does, for a scraper that skips verification or
	// pins it.
	CertFile, KeyFile string
	// CacheTTL is how long the answer for one token is reused; zero means
	// 30 s. Answers are kept by the token's SHA-256, never the token.
	CacheTTL time.Duration
}

var (
	tokenReviewGVR  = schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: "tokenreviews"}
	accessReviewGVR = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"}
)

// decision is what the reviews said about a token.
type decision struct {
	status int    // http.StatusOK, StatusUnauthorized or StatusForbidden
	why    string // for the caller
	at     time.Time
}

// reviewer decides whether a token may read a path.
type reviewer interface {
	review(ctx context.Context, token, path string) (decision, error)
}

// apiReviewer asks the API server.
type apiReviewer struct{ client dynamic.Interface }

func (a apiReviewer) review(ctx context.Context, token, path string) (decision, error) {
	tr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
		"spec": map[string]any{"token": token},
	}}
	out, err := a.client.Resource(tokenReviewGVR).Create(ctx, tr, metav1.CreateOptions{})
	if err != nil {
		return decision{}, fmt.Errorf("TokenReview: %w", err)
	}
	if ok, _, _ := unstructured.NestedBool(out.Object, "status", "authenticated"); !ok {
		return decision{status: http.StatusUnauthorized, why: "the token was not authenticated"}, nil
	}
	user, _, _ := unstructured.NestedMap(out.Object, "status", "user")
	spec := map[string]any{"nonResourceAttributes": map[string]any{"path": path, "verb": "get"}}
	for from, to := range map[string]string{"username": "user", "uid": "uid", "groups": "groups", "extra": "extra"} {
		if v, ok := user[from]; ok {
			spec[to] = v
		}
	}
	sar := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec,
	}}
	out, err = a.client.Resource(accessReviewGVR).Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return decision{}, fmt.Errorf("SubjectAccessReview: %w", err)
	}
	name, _ := user["username"].(string)
	if ok, _, _ := unstructured.NestedBool(out.Object, "status", "allowed"); !ok {
		return decision{status: http.StatusForbidden, why: fmt.Sprintf("user %q may not get %s", name, path)}, nil
	}
	return decision{status: http.StatusOK}, nil
}

// authorizing is the filter before /metrics: a bearer token, reviewed
// (answers cached by the token's hash), or 401/403.
type authorizing struct {
	next     http.Handler
	reviewer reviewer
	ttl      time.Duration

	mu    sync.Mutex
	cache map[[sha256.Size]byte]decision
}

func newAuthorizing(next http.Handler, r reviewer, ttl time.Duration) *authorizing {
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	return &authorizing{next: next, reviewer: r, ttl: ttl, cache: map[[sha256.Size]byte]decision{}}
}

func (a *authorizing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
		http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
		return
	}
	d, err := a.decide(r.Context(), strings.TrimSpace(token), r.URL.Path)
	if err != nil {
		http.Error(w, "the reviews of the token failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	switch d.status {
	case http.StatusOK:
		a.next.ServeHTTP(w, r)
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
		http.Error(w, "Unauthorized: "+d.why, d.status)
	default:
		http.Error(w, "Forbidden: "+d.why, d.status)
	}
}

// decide returns the cached answer for token, or reviews it.
func (a *authorizing) decide(ctx context.Context, token, path string) (decision, error) {
	key := sha256.Sum256([]byte(path + "\x00" + token))
	now := time.Now()
	a.mu.Lock()
	d, ok := a.cache[key]
	if ok && now.Sub(d.at) >= a.ttl {
		delete(a.cache, key)
		ok = false
	}
	if len(a.cache) > 1024 { // a flood of distinct tokens: start over
		clear(a.cache)
	}
	a.mu.Unlock()
	if ok {
		return d, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := a.reviewer.review(ctx, token, path)
	if err != nil {
		return d, err
	}
	d.at = now
	a.mu.Lock()
	a.cache[key] = d
	a.mu.Unlock()
	return d, nil
}

// tlsConfig is the serving TLS of s: its certificate files, or a
// self-signed certificate for addr's host.
func (s *SecureMetrics) tlsConfig(addr string) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	switch {
	case s.CertFile != "" || s.KeyFile != "":
		if s.CertFile == "" || s.KeyFile == "" {
			return nil, errors.New("SecureMetrics: CertFile and KeyFile go together")
		}
		cert, err = tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("SecureMetrics: load the serving certificate: %w", err)
		}
	default:
		cert, err = selfSigned(addr)
		if err != nil {
			return nil, fmt.Errorf("SecureMetrics: make a self-signed certificate: %w", err)
		}
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// selfSigned makes a certificate valid for a year for localhost, the
// loopback addresses and addr's host.
func selfSigned(addr string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "kdyn-controller-metrics"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if host, _, err := net.SplitHostPort(addr); err == nil && host != "" {
		if ip := net.ParseIP(host); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, host)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
