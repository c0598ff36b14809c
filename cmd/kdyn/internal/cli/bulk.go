package cli

import (
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/rest"
)

// BulkWriteClient is WriteClient for commands that send many objects with
// a bounded number in flight (apply's --concurrency): on the factory's
// connections, without the client-side rate limit, unless --qps or
// --burst was given. kubectl's apply is not throttled either (each object
// gets its own REST client, so its 5 QPS limit never bites); the bound
// on concurrent requests, and the server's priority and fairness (whose
// 429 answers are retried after their Retry-After), stand in for it.
// Reads through it are unthrottled too.
func (f *Factory) BulkWriteClient(manager string, dry DryRunMode) (dynamic.Interface, error) {
	if f.Flags.QPS != 0 || f.Flags.Burst != 0 {
		return f.WriteClient(manager, dry)
	}
	c, err := f.derivedClient(func(c *rest.Config) { c.QPS = -1 })
	if err != nil {
		return nil, err
	}
	return decorateWrites(c, manager, dry), nil
}

// decorateWrites adds the field manager ("" adds none) and, for a server
// dry run, dryRun=All to c's writes.
func decorateWrites(c dynamic.Interface, manager string, dry DryRunMode) dynamic.Interface {
	if manager != "" {
		c = dynamic.WithFieldManager(c, manager)
	}
	if dry == DryRunServer {
		c = dynamic.WithDryRun(c)
	}
	return c
}
