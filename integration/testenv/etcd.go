package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// EtcdRevision returns etcd's current revision, which is the
// resourceVersion of the latest write to the apiserver.
func (e *Env) EtcdRevision(ctx context.Context) (int64, error) {
	var status struct {
		Header struct {
			Revision json.Number `json:"revision"`
		} `json:"header"`
	}
	if err := e.etcdCall(ctx, "/v3/maintenance/status", struct{}{}, &status); err != nil {
		return 0, err
	}
	rev, err := strconv.ParseInt(status.Header.Revision.String(), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("testenv: etcd status: revision %q: %w", status.Header.Revision, err)
	}
	return rev, nil
}

// Compact compacts etcd's history up to its current revision (physically,
// so it has finished when Compact returns). Watches and exact lists from an
// earlier resourceVersion that reach etcd then fail with 410 Gone ("The
// resourceVersion for the provided watch is too old.").
//
// The apiserver's watch cache (on by default) keeps its own window of
// recent events and serves such watches and lists from memory, so with it
// they still succeed after Compact. To see 410 right after Compact, start
// the Env with ExtraArgs "--watch-cache=false"; alternatively Restart,
// which resets the watch cache, so that watches from a resourceVersion
// before the restart get 410 ("too old resource version") with or without
// Compact. Compacting when nothing was written since the last compaction
// is not an error.
func (e *Env) Compact(ctx context.Context) error {
	rev, err := e.EtcdRevision(ctx)
	if err != nil {
		return err
	}
	req := struct {
		Revision string `json:"revision"` // int64 is a JSON string in proto3 JSON
		Physical bool   `json:"physical"`
	}{strconv.FormatInt(rev, 10), true}
	err = e.etcdCall(ctx, "/v3/kv/compaction", req, nil)
	if err != nil && strings.Contains(err.Error(), "required revision has been compacted") {
		return nil // already compacted at rev
	}
	return err
}

// etcdCall POSTs a JSON request to etcd's gRPC gateway.
func (e *Env) etcdCall(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.EtcdEndpoint()+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("testenv: etcd %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("testenv: etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("testenv: etcd %s: %s: %s", path, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("testenv: etcd %s: %w", path, err)
		}
	}
	return nil
}
