package informer

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// compactMetadataStorage keeps each PartialObjectMetadata as its protobuf
// encoding (the ObjectMeta message, as the server sends it) and decodes
// it on every read: the compact mode of metadata-only informers
// (InformerOptions.Compact). A decoded PartialObjectMetadata costs far
// more than its encoding — the struct alone is about 290 bytes, and each
// of labels and annotations is a Go map of about 330 bytes however few
// entries it has, plus one allocation per string — so caches of many small
// objects shrink to about a third; reads cost a decode of a few
// microseconds.
type compactMetadataStorage struct {
	m map[string]compactMetaEntry
	// types interns the entries' TypeMeta: every object of an informer
	// has the same one.
	types map[metav1.TypeMeta]*metav1.TypeMeta
}

type compactMetaEntry struct {
	raw []byte // the ObjectMeta's PartialObjectMetadata protobuf encoding
	rv  string
	tm  *metav1.TypeMeta
}

func newCompactMetadataStorage() *compactMetadataStorage {
	return &compactMetadataStorage{m: map[string]compactMetaEntry{}, types: map[metav1.TypeMeta]*metav1.TypeMeta{}}
}

func (c *compactMetadataStorage) decode(e compactMetaEntry) (*metav1.PartialObjectMetadata, bool) {
	p := &metav1.PartialObjectMetadata{TypeMeta: *e.tm}
	if err := p.Unmarshal(e.raw); err != nil {
		return nil, false
	}
	return p, true
}

func (c *compactMetadataStorage) get(key string) (*metav1.PartialObjectMetadata, bool) {
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	return c.decode(e)
}

// put encodes obj (raw, a whole object's JSON text, does not apply).
func (c *compactMetadataStorage) put(key string, obj *metav1.PartialObjectMetadata, _ []byte) error {
	raw, err := obj.Marshal() // exactly sized
	if err != nil {
		return fmt.Errorf("informer: encode %s for the compact store: %w", key, err)
	}
	tm, ok := c.types[obj.TypeMeta]
	if !ok {
		tm = &metav1.TypeMeta{APIVersion: obj.APIVersion, Kind: obj.Kind}
		c.types[*tm] = tm
	}
	c.m[key] = compactMetaEntry{raw: raw, rv: strings.Clone(obj.ResourceVersion), tm: tm}
	return nil
}

func (c *compactMetadataStorage) remove(key string) { delete(c.m, key) }

func (c *compactMetadataStorage) loader(key string) func() (*metav1.PartialObjectMetadata, bool) {
	e, ok := c.m[key]
	if !ok {
		return nil
	}
	return func() (*metav1.PartialObjectMetadata, bool) { return c.decode(e) }
}

func (c *compactMetadataStorage) resourceVersion(key string) (string, bool) {
	e, ok := c.m[key]
	return e.rv, ok
}

func (c *compactMetadataStorage) each(fn func(string, *metav1.PartialObjectMetadata) bool) {
	for k, e := range c.m {
		obj, ok := c.decode(e)
		if !ok {
			continue
		}
		if !fn(k, obj) {
			return
		}
	}
}

func (c *compactMetadataStorage) keys() []string { return slices.Collect(maps.Keys(c.m)) }

func (c *compactMetadataStorage) size() int { return len(c.m) }

// bytes leaves out the entry's TypeMeta, which the informer's entries
// share.
func (c *compactMetadataStorage) bytes(key string) int64 {
	e, ok := c.m[key]
	if !ok {
		return 0
	}
	return entryBytes(key, int64(unsafe.Sizeof(e))+allocBytes(int64(len(e.raw)))+allocBytes(int64(len(e.rv))))
}
