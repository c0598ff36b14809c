package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// OpenAPIV3Index is GET /openapi/v3: each group-version path ("api/v1",
// "apis/apps/v1") and the server-relative URL of its document, which carries
// a content hash ("/openapi/v3/apis/apps/v1?hash=…").
type OpenAPIV3Index struct {
	// Paths maps a group-version path to its document's URL.
	Paths map[string]OpenAPIV3Path `json:"paths"`
}

// OpenAPIV3Path is one entry of the index.
type OpenAPIV3Path struct {
	// ServerRelativeURL is the document's URL, with its hash.
	ServerRelativeURL string `json:"serverRelativeURL"`
}

// GroupVersionPaths returns the index's paths, sorted.
func (i *OpenAPIV3Index) GroupVersionPaths() []string {
	out := make([]string, 0, len(i.Paths))
	for p := range i.Paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// OpenAPIV3Index fetches the OpenAPI v3 index (1 request, not cached: it is
// small and its hashes are what make the documents cacheable).
func (c *Client) OpenAPIV3Index(ctx context.Context) (*OpenAPIV3Index, error) {
	body, err := c.rc.Get().AbsPath("/openapi/v3").MaxResponseBytes(c.opts.MaxDocumentBytes).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("discovery: GET /openapi/v3: %w", err)
	}
	var idx OpenAPIV3Index
	if err := json.Unmarshal(body, &idx); err != nil {
		return nil, fmt.Errorf("discovery: decode /openapi/v3: %w", err)
	}
	return &idx, nil
}

// PathForGroupVersion returns the OpenAPI v3 index path of a group-version:
// "api/v1" for the core group, "apis/GROUP/VERSION" otherwise.
func PathForGroupVersion(group, version string) string {
	if group == "" {
		return "api/" + version
	}
	return "apis/" + group + "/" + version
}

// OpenAPIV3Document returns the OpenAPI v3 document of one group-version
// path (as named in the index) as raw JSON. With a disk cache, documents
// are stored by the hash in their URL, so an unchanged document costs only
// the index request; otherwise 2 requests (index and document).
func (c *Client) OpenAPIV3Document(ctx context.Context, path string) ([]byte, error) {
	idx, err := c.OpenAPIV3Index(ctx)
	if err != nil {
		return nil, err
	}
	entry, ok := idx.Paths[strings.TrimPrefix(path, "/")]
	if !ok {
		return nil, fmt.Errorf("discovery: %q: %w", path, ErrNoOpenAPIV3Document)
	}
	u, err := url.Parse(entry.ServerRelativeURL)
	if err != nil {
		return nil, fmt.Errorf("discovery: OpenAPI v3 index has a bad URL for %q: %w", path, err)
	}
	hash := u.Query().Get("hash")
	var file string
	if c.docs.dir != "" && hash != "" {
		file = filepath.Join(c.docs.dir, "openapi", unsafeFileChars.ReplaceAllString(path, "_")+"-"+unsafeFileChars.ReplaceAllString(hash, "_")+".json")
		if b, err := os.ReadFile(file); err == nil && json.Valid(b) {
			return b, nil
		}
	}
	req := c.rc.Get().AbsPath(u.Path).MaxResponseBytes(c.opts.MaxDocumentBytes)
	for k, vs := range u.Query() {
		for _, v := range vs {
			req.Param(k, v)
		}
	}
	body, err := req.DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("discovery: GET %s: %w", u.Path, err)
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("discovery: the OpenAPI v3 document for %q is not JSON", path)
	}
	if file != "" {
		if err := writeFileAtomic(file, body); err != nil {
			c.log.V(4).Info("could not cache an OpenAPI document")
		}
	}
	return body, nil
}
