package leaderelection

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/dynamic/fake"
)

func TestNewDefaults(t *testing.T) {
	e, err := New(fake.NewClient(), Config{Namespace: "ns", Name: "lease", Identity: "a", Callbacks: Callbacks{OnStartedLeading: func(context.Context) {}}})
	if err != nil {
		t.Fatal(err)
	}
	c := e.cfg
	if c.LeaseDuration != 15*time.Second || c.RenewDeadline != 10*time.Second || c.RetryPeriod != 2*time.Second {
		t.Errorf("defaults: lease %v, renew %v, retry %v; want client-go's 15s, 10s, 2s", c.LeaseDuration, c.RenewDeadline, c.RetryPeriod)
	}
	if c.RequestTimeout != 2500*time.Millisecond {
		t.Errorf("RequestTimeout %v, want RenewDeadline/4 = 2.5s", c.RequestTimeout)
	}
	if e.leaseSeconds != 15 {
		t.Errorf("leaseDurationSeconds %d, want 15", e.leaseSeconds)
	}
	if c.Metrics == nil {
		t.Error("nil Logger or Metrics after defaults")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	ok := Config{Namespace: "ns", Name: "lease", Identity: "a", Callbacks: Callbacks{OnStartedLeading: func(context.Context) {}}}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want []string
	}{
		{"no namespace", func(c *Config) { c.Namespace = "" }, []string{"Namespace is empty"}},
		{"bad namespace", func(c *Config) { c.Namespace = "Kube_System" }, []string{`Namespace "Kube_System"`}},
		{"no name", func(c *Config) { c.Name = "" }, []string{"Name is empty"}},
		{"bad name", func(c *Config) { c.Name = "my lease" }, []string{`Name "my lease"`}},
		{"request timeout past the deadline", func(c *Config) { c.RequestTimeout = 11 * time.Second }, []string{"RequestTimeout 11s"}},
		{"no identity", func(c *Config) { c.Identity = "" }, []string{"Identity is empty"}},
		{"no OnStartedLeading", func(c *Config) { c.Callbacks.OnStartedLeading = nil }, []string{"OnStartedLeading is nil"}},
		{"lease not longer than renew deadline", func(c *Config) { c.LeaseDuration, c.RenewDeadline = 10*time.Second, 10*time.Second },
			[]string{"LeaseDuration 10s must be greater than RenewDeadline 10s"}},
		{"renew deadline within jittered retry", func(c *Config) { c.RenewDeadline, c.RetryPeriod = 2400*time.Millisecond, 2*time.Second },
			[]string{"RenewDeadline 2.4s must be greater than RetryPeriod×JitterFactor (2s×1.2)"}},
		{"fractional lease", func(c *Config) {
			c.LeaseDuration = 2500 * time.Millisecond
			c.RenewDeadline = time.Second
			c.RetryPeriod = 500 * time.Millisecond
		},
			[]string{"LeaseDuration 2.5s is not a whole number of seconds"}},
		{"negative", func(c *Config) {
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = -time.Second, -time.Second, -time.Second
		},
			[]string{"LeaseDuration -1s is negative", "RenewDeadline -1s is negative", "RetryPeriod -1s is negative"}},
		{"several", func(c *Config) { c.Namespace, c.Identity = "", "" }, []string{"Namespace is empty", "Identity is empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.mod(&cfg)
			_, err := New(fake.NewClient(), cfg)
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("err = %v, want ErrInvalidConfig", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
		})
	}
	t.Run("nil client", func(t *testing.T) {
		if _, err := New(nil, ok); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "client is nil") {
			t.Errorf("err = %v", err)
		}
	})
}
