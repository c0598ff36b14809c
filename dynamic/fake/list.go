package fake

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// msgContinueExpired is the server's message for a continue token whose
// snapshot is gone.
const msgContinueExpired = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

// listRequest is a parsed and validated ListOptions.
type listRequest struct {
	// opts holds the options after the server's defaulting (a watch from
	// resourceVersion "" or "0" sends initial events).
	opts   metainternalversion.ListOptions
	labels labels.Selector
	fields fields.Selector
	// rv is opts.ResourceVersion as a number; 0 for "" and "0".
	rv uint64
}

// parseListOptions validates opts the way the API server does (with the
// WatchList feature on, its default in v1.37) and parses the selectors.
// Field selectors may use metadata.name and metadata.namespace only.
func parseListOptions(opts metav1.ListOptions, watch bool) (listRequest, error) {
	in := metainternalversion.ListOptions{
		Watch:                watch,
		AllowWatchBookmarks:  opts.AllowWatchBookmarks,
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		TimeoutSeconds:       opts.TimeoutSeconds,
		Limit:                opts.Limit,
		Continue:             opts.Continue,
		SendInitialEvents:    opts.SendInitialEvents,
	}
	metainternalversion.SetListOptionsDefaults(&in, true)
	if err := invalidOptions("ListOptions", metainternalversionvalidation.ValidateListOptions(&in, true)); err != nil {
		return listRequest{}, err
	}
	req := listRequest{opts: in}
	var err error
	if req.labels, err = labels.Parse(opts.LabelSelector); err != nil {
		return listRequest{}, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return listRequest{}, apierrors.NewBadRequest(err.Error())
	}
	if req.fields, err = fs.Transform(runtime.DefaultMetaV1FieldSelectorConversion); err != nil {
		return listRequest{}, apierrors.NewBadRequest(err.Error())
	}
	if rv := opts.ResourceVersion; rv != "" && rv != "0" {
		if req.rv, err = strconv.ParseUint(rv, 10, 64); err != nil {
			return listRequest{}, badRequest("invalid resource version: resourceVersion: Invalid value: %q: %v", rv, err)
		}
	}
	return req, nil
}

// matches reports whether obj is in namespace (all when "") and passes the
// selectors.
func matches(obj *unstructured.Unstructured, namespace string, ls labels.Selector, fs fields.Selector) bool {
	if namespace != "" && obj.GetNamespace() != namespace {
		return false
	}
	return ls.Matches(labels.Set(obj.GetLabels())) &&
		fs.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()})
}

// continueToken is the content of a continue token: the snapshot's
// resourceVersion and the last key returned.
type continueToken struct {
	Resource string `json:"r"`
	RV       uint64 `json:"v"`
	Start    string `json:"k"`
}

func encodeContinue(t continueToken) string {
	b, _ := json.Marshal(t) // a struct of strings and ints always encodes.
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string, gvr schema.GroupVersionResource) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil {
		return t, badRequest("fake: continue token %q is not one this server issued: %v", s, err)
	}
	if t.Resource != gvr.String() {
		return t, badRequest("fake: continue token is for %s, not %s", t.Resource, gvr)
	}
	return t, nil
}

// snapshotLocked returns the objects of gvr as they were at rv, rebuilt by
// undoing the changes after it; it fails once those have left history.
// The map must not be modified.
func (c *Client) snapshotLocked(gvr schema.GroupVersionResource, rv uint64) (map[string]*unstructured.Unstructured, bool) {
	if rv >= c.rv {
		return c.objects[gvr], true
	}
	if rv < c.compacted {
		return nil, false
	}
	m := maps.Clone(c.objects[gvr])
	if m == nil {
		m = map[string]*unstructured.Unstructured{}
	}
	for i := len(c.history) - 1; i >= 0 && c.history[i].rv > rv; i-- {
		ch := c.history[i]
		if ch.gvr != gvr {
			continue
		}
		if ch.prev == nil {
			delete(m, ch.key)
		} else {
			m[ch.key] = ch.prev
		}
	}
	return m, true
}

// listLocked serves one page of a list.
func (c *Client) listLocked(res resource, namespace string, req listRequest) (*unstructured.UnstructuredList, error) {
	gvr := res.info.GVR
	snapshot, start := c.rv, ""
	switch {
	case req.opts.Continue != "":
		tok, err := decodeContinue(req.opts.Continue, gvr)
		if err != nil {
			return nil, err
		}
		if tok.RV > c.rv {
			return nil, badRequest("fake: continue token names resourceVersion %d, newer than this server's %d", tok.RV, c.rv)
		}
		snapshot, start = tok.RV, tok.Start
	case req.rv > c.rv:
		return nil, tooLargeResourceVersion(req.rv, c.rv)
	case req.rv > 0 && req.opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact:
		snapshot = req.rv
	}
	objs, ok := c.snapshotLocked(gvr, snapshot)
	if !ok {
		if req.opts.Continue != "" {
			return nil, apierrors.NewResourceExpired(msgContinueExpired)
		}
		return nil, tooOldResourceVersion(snapshot, c.compacted+1)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(),
		"kind":       res.info.listKind(),
	}}
	list.SetResourceVersion(strconv.FormatUint(snapshot, 10))
	list.Items = []unstructured.Unstructured{}
	remaining := int64(0)
	lastKey := ""
	for _, k := range sortedKeys(objs) {
		if k <= start && start != "" {
			continue
		}
		obj := objs[k]
		if !matches(obj, namespace, req.labels, req.fields) {
			continue
		}
		if req.opts.Limit > 0 && int64(len(list.Items)) >= req.opts.Limit {
			remaining++
			continue
		}
		list.Items = append(list.Items, *obj.DeepCopy())
		lastKey = k
	}
	if remaining > 0 {
		list.SetContinue(encodeContinue(continueToken{Resource: gvr.String(), RV: snapshot, Start: lastKey}))
		// Like the server, count the rest only when nothing is filtered.
		if req.labels.Empty() && req.fields.Empty() {
			list.SetRemainingItemCount(&remaining)
		}
	}
	return list, nil
}
