package wire

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/internal/fastjson"
)

// DecodePartialObjectMetadata decodes a PartialObjectMetadata (or any
// object, of which only type and metadata are kept) in one pass without
// reflection. With keepManagedFields false, metadata.managedFields is
// dropped (decoding it is most of the work for metadata-only caches).
func DecodePartialObjectMetadata(data []byte, keepManagedFields bool) (*metav1.PartialObjectMetadata, error) {
	m, err := fastjson.DecodeObjectShared(data)
	if err != nil {
		return nil, fmt.Errorf("decode object metadata: %w", err)
	}
	return PartialObjectMetadataFromMap(m, keepManagedFields)
}

// PartialObjectMetadataFromMap builds a PartialObjectMetadata from a decoded
// object (apiVersion, kind and metadata; the rest is ignored).
func PartialObjectMetadataFromMap(m map[string]any, keepManagedFields bool) (*metav1.PartialObjectMetadata, error) {
	p := &metav1.PartialObjectMetadata{}
	p.APIVersion, _ = m["apiVersion"].(string)
	p.Kind, _ = m["kind"].(string)
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		return p, nil
	}
	o := &p.ObjectMeta
	o.Name, _ = md["name"].(string)
	o.GenerateName, _ = md["generateName"].(string)
	o.Namespace, _ = md["namespace"].(string)
	//lint:ignore SA1019 decoded as the server's own decoding does, for old servers and recorded objects that still carry it
	o.SelfLink, _ = md["selfLink"].(string)
	if uid, ok := md["uid"].(string); ok {
		o.UID = types.UID(uid)
	}
	o.ResourceVersion, _ = md["resourceVersion"].(string)
	o.Generation, _ = md["generation"].(int64)
	if t, ok := timeField(md, "creationTimestamp"); ok {
		o.CreationTimestamp = t
	}
	if t, ok := timeField(md, "deletionTimestamp"); ok {
		o.DeletionTimestamp = &t
	}
	if g, ok := md["deletionGracePeriodSeconds"].(int64); ok {
		o.DeletionGracePeriodSeconds = &g
	}
	o.Labels = stringMap(md["labels"])
	o.Annotations = stringMap(md["annotations"])
	if fs, ok := md["finalizers"].([]any); ok {
		for _, f := range fs {
			if s, ok := f.(string); ok {
				o.Finalizers = append(o.Finalizers, s)
			}
		}
	}
	if refs, ok := md["ownerReferences"].([]any); ok {
		for _, r := range refs {
			rm, _ := r.(map[string]any)
			if rm == nil {
				continue
			}
			var ref metav1.OwnerReference
			ref.APIVersion, _ = rm["apiVersion"].(string)
			ref.Kind, _ = rm["kind"].(string)
			ref.Name, _ = rm["name"].(string)
			if uid, ok := rm["uid"].(string); ok {
				ref.UID = types.UID(uid)
			}
			if b, ok := rm["controller"].(bool); ok {
				ref.Controller = &b
			}
			if b, ok := rm["blockOwnerDeletion"].(bool); ok {
				ref.BlockOwnerDeletion = &b
			}
			o.OwnerReferences = append(o.OwnerReferences, ref)
		}
	}
	if mf, ok := md["managedFields"]; ok && keepManagedFields && mf != nil {
		b, err := json.Marshal(mf)
		if err != nil {
			return nil, fmt.Errorf("decode managedFields: %w", err)
		}
		if err := json.Unmarshal(b, &o.ManagedFields); err != nil {
			return nil, fmt.Errorf("decode managedFields: %w", err)
		}
	}
	return p, nil
}

func timeField(md map[string]any, key string) (metav1.Time, bool) {
	s, ok := md[key].(string)
	if !ok || s == "" {
		return metav1.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return metav1.Time{}, false
	}
	return metav1.NewTime(t.Local()), true
}

func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, val := range m {
		if s, ok := val.(string); ok {
			out[k] = s
		}
	}
	return out
}

// decodeMetadataListJSON decodes a JSON PartialObjectMetadataList without
// reflection.
func decodeMetadataListJSON(body []byte, keepManagedFields bool) (*metav1.PartialObjectMetadataList, error) {
	l := &metav1.PartialObjectMetadataList{}
	list, err := fastjson.DecodeListShared(body, func(_ int, obj map[string]any) error {
		p, err := PartialObjectMetadataFromMap(obj, keepManagedFields)
		if err != nil {
			return err
		}
		l.Items = append(l.Items, *p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("decode metadata list: %w", err)
	}
	l.APIVersion, _ = list["apiVersion"].(string)
	l.Kind, _ = list["kind"].(string)
	if md, ok := list["metadata"].(map[string]any); ok {
		l.ResourceVersion, _ = md["resourceVersion"].(string)
		l.Continue, _ = md["continue"].(string)
		if n, ok := md["remainingItemCount"].(int64); ok {
			l.RemainingItemCount = &n
		}
		if si, ok := md["shardInfo"].(map[string]any); ok {
			sel, _ := si["selector"].(string)
			l.ShardInfo = &metav1.ShardInfo{Selector: sel}
		}
	}
	return l, nil
}
