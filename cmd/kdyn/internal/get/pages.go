package get

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/rest"
)

// page is one list page as the server sent it.
type page struct {
	body []byte
	err  error
}

// fetchPages lists a resource page by page, requesting the next page as soon
// as the current one has arrived (its continue token is read with gjson,
// without decoding), so the server works on page N+1 while page N is
// printed. At most two pages are held at a time. The channel is closed after
// the last page or the first error; cancel ctx to stop early.
func fetchPages(ctx context.Context, rc *rest.Client, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, chunked bool) <-chan page {
	out := make(chan page, 1)
	go func() {
		defer close(out)
		for {
			body, err := cli.ListRaw(ctx, rc, gvr, ns, opts)
			select {
			case out <- page{body: body, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
			next := gjson.GetBytes(body, "metadata.continue").String()
			if next == "" || !chunked {
				return
			}
			opts.Continue = next
		}
	}()
	return out
}

// bytesView is a string sharing b's memory: gjson then returns results
// that point into the page instead of copying it.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// eachListItem calls fn with the JSON of each item of a list page, adding
// apiVersion and kind (from the list) to items that lack them and, unless
// keepManagedFields, removing metadata.managedFields as kubectl's printers
// do. Items are read with gjson straight from the page, never decoded into
// maps on this path; each item handed to fn is its own copy. It returns the
// page's continue token.
func eachListItem(body []byte, keepManagedFields bool, fn func(raw []byte) bool) (string, error) {
	if !gjson.ValidBytes(body) {
		return "", errors.New("the server sent a list that is not valid JSON")
	}
	doc := bytesView(body)
	res := gjson.GetMany(doc, "apiVersion", "kind", "metadata.continue")
	apiVersion, listKind, cont := res[0].String(), res[1].String(), res[2].String()
	prefix := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,`, apiVersion, strings.TrimSuffix(listKind, "List"))
	gjson.Get(doc, "items").ForEach(func(_, item gjson.Result) bool {
		raw := item.Raw
		var out []byte
		if !item.Get("kind").Exists() && !item.Get("apiVersion").Exists() {
			trimmed := strings.TrimSpace(raw)
			out = make([]byte, 0, len(prefix)+len(trimmed))
			out = append(out, prefix...)
			if len(trimmed) > 2 {
				out = append(out, trimmed[1:]...)
			} else {
				out = append(out[:len(out)-1], '}')
			}
		} else {
			out = []byte(raw)
		}
		if !keepManagedFields {
			out = printers.StripManagedFieldsJSON(out)
		}
		return fn(out)
	})
	return cont, nil
}
