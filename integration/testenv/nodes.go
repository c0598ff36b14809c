package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// KWOKNodeAnnotation marks the nodes KWOK manages (value "fake"), as
// kwokctl's nodes are marked.
const KWOKNodeAnnotation = "kwok.x-k8s.io/node"

// NodeName is the name of the i-th simulated node of Options.Nodes.
func NodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

// KubeletPort is the port on 127.0.0.1 of KWOK's kubelet API (with
// Options.Nodes), which every simulated node names in its
// status.daemonEndpoints.
func (e *Env) KubeletPort() int { return e.ports.Kubelet }

// registerNodes creates the nodes Options.Nodes asks for (keeping those
// that exist) and waits until KWOK has made each Ready.
func (e *Env) registerNodes(ctx context.Context, timeout time.Duration) error {
	client := e.HTTPClient(Admin)
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	do := func(method, path string, body any) (int, []byte, error) {
		var data []byte
		if body != nil {
			var err error
			if data, err = json.Marshal(body); err != nil {
				return 0, nil, err
			}
		}
		contentType := "application/json"
		if method == http.MethodPatch {
			contentType = "application/merge-patch+json"
		}
		return send(ctx, client, method, e.Host()+path, contentType, data)
	}
	for i := range e.opts.Nodes {
		name := NodeName(i)
		node := map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{
				"name":        name,
				"annotations": map[string]string{KWOKNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
				"labels": map[string]string{
					"type": "kwok", "kubernetes.io/hostname": name,
					"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				},
			},
		}
		code, body, err := do(http.MethodPost, "/api/v1/nodes", node)
		if err != nil {
			return fmt.Errorf("register node %s: %w", name, err)
		}
		switch code {
		case http.StatusCreated:
		case http.StatusConflict:
			// a node kept in a reused directory may name the kubelet port
			// of an earlier start, which KWOK does not rewrite on a Ready
			// node: name this start's
			port := map[string]any{"status": map[string]any{"daemonEndpoints": map[string]any{
				"kubeletEndpoint": map[string]any{"Port": e.ports.Kubelet}}}}
			if code, body, err = do(http.MethodPatch, "/api/v1/nodes/"+name+"/status", port); err != nil || code != http.StatusOK {
				return fmt.Errorf("update node %s's kubelet port: %d %s %v", name, code, bytes.TrimSpace(body), err)
			}
		default:
			return fmt.Errorf("register node %s: %d %s", name, code, bytes.TrimSpace(body))
		}
	}
	for i := range e.opts.Nodes {
		name := NodeName(i)
		for {
			code, body, err := do(http.MethodGet, "/api/v1/nodes/"+name, nil)
			if err == nil && code == http.StatusOK && nodeReady(body) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("node %s not Ready after %s: %w", name, timeout, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	e.log.mark(fmt.Sprintf("testenv: %d KWOK nodes Ready", e.opts.Nodes))
	return nil
}

// send sends one request with an optional body and reads the answer.
func send(ctx context.Context, client *http.Client, method, url, contentType string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// nodeReady reports whether a Node's JSON has the Ready condition True.
func nodeReady(data []byte) bool {
	var n struct {
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(data, &n) != nil {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// lastLines is the last n lines of a file, or a note that it cannot be read.
func lastLines(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return lastLinesOf(data, n)
}
