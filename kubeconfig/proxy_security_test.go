package kubeconfig

import (
	"strings"
	"testing"
)

// BUG: a proxy-url with a password that kdyn refuses (another scheme, no
// host, or a URL that does not parse) is quoted whole in the error, with
// its password, although "tokens, passwords and keys never appear in
// errors" (doc.go). Fix: quote u.Redacted() in the scheme and no-host
// errors of build(), and for a URL that does not parse say so without
// quoting it (url.Parse's error quotes the input too).
func TestProxyURLPasswordNeverInErrors(t *testing.T) {
	for _, proxy := range []string{
		"ftp://user:pw-SECRET-proxy@proxy.example:21",
		"http://user:pw-SECRET-proxy@",
		"http://user:pw-SECRET-proxy@proxy.example:%zz",
		// No "//": url.Parse reads these as opaque URLs with no user
		// info, so u.Redacted() hides nothing.
		"user:pw-SECRET-proxy@proxy.example:3128",
		"http:user:pw-SECRET-proxy@proxy.example:3128",
	} {
		c, err := Parse([]byte("clusters:\n- name: c\n  cluster: {server: \"https://k.example\", proxy-url: \""+proxy+"\"}\ncontexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n"), "/fuzz/config")
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.ClientConfig(Overrides{})
		if err == nil {
			t.Errorf("proxy-url %q was accepted", proxy)
			continue
		}
		if strings.Contains(err.Error(), "pw-SECRET-proxy") {
			t.Errorf("the error quotes the proxy password: %v", err)
		}
	}
}
