package wire_test

import (
	"net/http"
	"strings"
	"testing"

	cgrest "k8s.io/client-go/rest"

	"github.com/kdyn/kdyn/rest"
)

// TestSameServerURLAsClientGo proves kdyn turns Config.Host into the same
// server URL as client-go's rest.DefaultServerUrlFor: an empty Host is
// localhost, and a Host without a scheme gets https exactly when a
// certificate authority, a client certificate or Insecure is set. Where
// client-go would send a client certificate or key over plain http, kdyn
// refuses instead, as it does for every credential.
func TestSameServerURLAsClientGo(t *testing.T) {
	hosts := []string{"", "localhost", "h:8080", "10.0.0.1", "[::1]:6443", "https://h:6443", "http://h", "https://h:6443/prefix"}
	tlsSettings := map[string]rest.TLSClientConfig{
		"none":        {},
		"CA file":     {CAFile: "ca.pem"},
		"CA data":     {CAData: []byte("ca")},
		"cert file":   {CertFile: "c.pem"},
		"cert data":   {CertData: []byte("c")},
		"insecure":    {Insecure: true},
		"server name": {ServerName: "k"},
		"key only":    {KeyFile: "k.pem"},
	}
	for _, host := range hosts {
		for name, tls := range tlsSettings {
			kcfg := &rest.Config{Host: host, TLSClientConfig: tls}
			ccfg := &cgrest.Config{Host: host, TLSClientConfig: cgrest.TLSClientConfig{
				Insecure: tls.Insecure, ServerName: tls.ServerName, CertFile: tls.CertFile, KeyFile: tls.KeyFile,
				CAFile: tls.CAFile, CertData: tls.CertData, KeyData: tls.KeyData, CAData: tls.CAData,
			}}
			want, _, err := cgrest.DefaultServerUrlFor(ccfg)
			if err != nil {
				t.Fatalf("client-go, Host %q, TLS %s: %v", host, name, err)
			}
			// NewForConfigAndClient resolves the URL without building a
			// transport, so the TLS fields need not hold real files or PEM.
			c, err := rest.NewForConfigAndClient(kcfg, &http.Client{})
			if err != nil {
				// The one deliberate difference: a client certificate or key
				// is a credential, which kdyn never sends over plain http.
				if want.Scheme != "http" || !strings.Contains(err.Error(), "refusing to send credentials over plain http") {
					t.Errorf("kdyn, Host %q, TLS %s: %v (client-go: %s)", host, name, err, want)
				}
				continue
			}
			if got := c.Base(); got.String() != want.String() {
				t.Errorf("Host %q, TLS %s: kdyn %s, client-go %s", host, name, got, want)
			}
		}
	}
}
