package generate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// field is one member of a JSON object.
type field struct {
	key   string
	value any // anything encoding/json encodes: a string, a map (its keys sorted), fields
}

// fields is a JSON object whose members keep their order. kubectl prints
// the objects it generates from Go structs, in the order the struct
// declares its fields ("kind", "apiVersion", "metadata", ...), so -o json
// must keep that order to be byte-identical; -o yaml sorts keys anyway.
type fields []field

// MarshalJSON writes the members in order; values are encoded by
// encoding/json, so strings are escaped (HTML characters included) and map
// keys sorted exactly as for kubectl's typed objects.
func (fs fields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// object is a generated object: its kind, name, namespace, annotations and
// the members that follow metadata, in the order of the typed object
// kubectl would build.
type object struct {
	gvr  schema.GroupVersionResource
	kind string

	name string
	// namespace is set in metadata only when -n was given, as kubectl
	// does; the object is still created in the current namespace.
	namespace   string
	labels      map[string]string
	annotations map[string]string
	// ownerReferences, when set, follow the annotations.
	ownerReferences []any
	// body are the members after metadata: "data", "type", "spec", ...
	body fields
}

// apiVersion is the object's group/version.
func (o *object) apiVersion() string {
	return schema.GroupVersion{Group: o.gvr.Group, Version: o.gvr.Version}.String()
}

// JSON encodes the object compactly, members in kubectl's order: kind,
// apiVersion, metadata (name, namespace, labels, annotations,
// ownerReferences), then the body.
func (o *object) JSON() ([]byte, error) {
	md := fields{{"name", o.name}}
	if o.namespace != "" {
		md = append(md, field{"namespace", o.namespace})
	}
	if len(o.labels) > 0 {
		md = append(md, field{"labels", o.labels})
	}
	if len(o.annotations) > 0 {
		md = append(md, field{"annotations", o.annotations})
	}
	if len(o.ownerReferences) > 0 {
		md = append(md, field{"ownerReferences", o.ownerReferences})
	}
	doc := append(fields{{"kind", o.kind}, {"apiVersion", o.apiVersion()}, {"metadata", md}}, o.body...)
	return json.Marshal(doc)
}

// saveConfig records the object's configuration in the
// last-applied-configuration annotation, as kubectl's --save-config does
// for a typed object: its JSON without that annotation, with the trailing
// newline of kubectl's encoder.
func (o *object) saveConfig() error {
	ann := map[string]string{}
	for k, v := range o.annotations {
		if k != kunstructured.LastAppliedAnnotation {
			ann[k] = v
		}
	}
	o.annotations = ann
	b, err := o.JSON()
	if err != nil {
		return err
	}
	ann[kunstructured.LastAppliedAnnotation] = string(b) + "\n"
	return nil
}

// nameHash is kubectl's --append-hash suffix: the first 10 hex digits of
// the SHA-256 of the JSON of content (a map, so its keys are sorted), with
// 0, 1, 3, a and e changed to g, h, k, m and t so that no word is formed.
func nameHash(content map[string]any) (string, error) {
	b, err := json.Marshal(content)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return strings.NewReplacer("0", "g", "1", "h", "3", "k", "a", "m", "e", "t").Replace(hex.EncodeToString(sum[:])[:10]), nil
}
