package informer

import (
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The estimate of a cache's bytes (Metrics.Cached) counts what each entry
// holds on the heap: the key, and the object — decoded (its Go values:
// structs, strings' bytes, maps' groups, slices' arrays) or encoded (the
// compact stores' bytes) — each allocation rounded up to the allocator's
// size class. It leaves out what the cache shares among entries (interned
// type metadata), the indexes, and the cache map's spare room, so it
// tracks the heap the objects cost, not the whole process. The figures
// are for 64-bit platforms.
const (
	// stringHeader is a string's header where it is a value of its own (in
	// an interface, a slice, a struct field, a map slot).
	stringHeader = 16
	// ifaceSize is an interface value (type word and data word).
	ifaceSize = 16
	// mapHeader is a Go map's own header.
	mapHeader = 48
)

// sizeClasses are the Go allocator's size classes up to 32 KiB
// (runtime/sizeclasses.go); a larger allocation takes whole 8 KiB pages.
var sizeClasses = []int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048,
	2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880,
	12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// alloc is what an allocation of n bytes takes: its size class.
func alloc(n int64) int64 {
	if n <= 0 {
		return 0
	}
	if i, _ := slices.BinarySearch(sizeClasses, n); i < len(sizeClasses) {
		return sizeClasses[i]
	}
	return (n + 8191) &^ 8191
}

// allocBytes is an allocation of n bytes without pointers (a string's or a
// byte slice's): under 16 bytes the allocator packs several into one
// block, so they cost about their length.
func allocBytes(n int64) int64 {
	if n < 16 {
		return n
	}
	return alloc(n)
}

// mapAlloc is a Go map's storage for n entries of slot bytes each: the
// header and, from the first entry, groups of 8 slots with a control word,
// filled to at most 7/8 in a power-of-two table.
func mapAlloc(n int, slot int64) int64 {
	if n == 0 {
		return mapHeader
	}
	group := 8 + 8*slot
	if n <= 8 {
		return mapHeader + alloc(group)
	}
	groups := int64(1)
	for groups*7 < int64(n) {
		groups *= 2
	}
	return mapHeader + groups*group
}

// entryBytes is the estimate of one cache entry of key whose value (as
// stored in the map, and what it holds) has valueBytes; the map's slot
// for the key's header counts too.
func entryBytes(key string, valueBytes int64) int64 {
	return stringHeader + allocBytes(int64(len(key))) + valueBytes
}

// objectBytes estimates the heap a decoded object holds: the common kinds
// by hand (an object's JSON tree, an ObjectMeta), others by reflection.
func objectBytes(obj any) int64 {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return alloc(int64(reflect.TypeFor[unstructured.Unstructured]().Size())) + mapBytes(o.Object)
	case *metav1.PartialObjectMetadata:
		return alloc(int64(reflect.TypeFor[metav1.PartialObjectMetadata]().Size())) +
			allocBytes(int64(len(o.APIVersion))) + allocBytes(int64(len(o.Kind))) + objectMetaBytes(&o.ObjectMeta)
	}
	return reflectBytes(reflect.ValueOf(obj))
}

// mapBytes is a decoded JSON object's estimate: the map, its keys, and
// each value.
func mapBytes(m map[string]any) int64 {
	if m == nil {
		return 0
	}
	n := mapAlloc(len(m), stringHeader+ifaceSize)
	for k, v := range m {
		n += allocBytes(int64(len(k))) + jsonValueBytes(v)
	}
	return n
}

// jsonValueBytes is what a decoded JSON value boxed in an interface
// holds besides the interface itself.
func jsonValueBytes(v any) int64 {
	switch x := v.(type) {
	case string:
		return alloc(stringHeader) + allocBytes(int64(len(x)))
	case map[string]any:
		return mapBytes(x)
	case []any:
		n := alloc(24) + alloc(int64(ifaceSize*cap(x)))
		for _, e := range x {
			n += jsonValueBytes(e)
		}
		return n
	case int64, float64:
		return 8
	case bool, nil:
		return 0
	}
	return reflectBytes(reflect.ValueOf(v))
}

// objectMetaBytes is an ObjectMeta's estimate besides the struct itself.
func objectMetaBytes(m *metav1.ObjectMeta) int64 {
	var n int64
	for _, s := range []string{m.Name, m.GenerateName, m.Namespace, string(m.UID), m.ResourceVersion} {
		n += allocBytes(int64(len(s)))
	}
	if m.DeletionTimestamp != nil {
		n += alloc(int64(reflect.TypeFor[metav1.Time]().Size()))
	}
	if m.DeletionGracePeriodSeconds != nil {
		n += 8
	}
	n += stringMapBytes(m.Labels) + stringMapBytes(m.Annotations)
	if m.OwnerReferences != nil {
		n += alloc(int64(cap(m.OwnerReferences)) * int64(reflect.TypeFor[metav1.OwnerReference]().Size()))
		for _, r := range m.OwnerReferences {
			n += allocBytes(int64(len(r.APIVersion))) + allocBytes(int64(len(r.Kind))) + allocBytes(int64(len(r.Name))) + allocBytes(int64(len(r.UID)))
			if r.Controller != nil {
				n++
			}
			if r.BlockOwnerDeletion != nil {
				n++
			}
		}
	}
	if m.Finalizers != nil {
		n += alloc(int64(cap(m.Finalizers)) * stringHeader)
		for _, f := range m.Finalizers {
			n += allocBytes(int64(len(f)))
		}
	}
	if m.ManagedFields != nil {
		n += reflectBytes(reflect.ValueOf(m.ManagedFields))
	}
	return n
}

// stringMapBytes is a map[string]string's estimate.
func stringMapBytes(m map[string]string) int64 {
	if m == nil {
		return 0
	}
	n := mapAlloc(len(m), 2*stringHeader)
	for k, v := range m {
		n += allocBytes(int64(len(k))) + allocBytes(int64(len(v)))
	}
	return n
}

// reflectBytes estimates, by reflection, what v holds on the heap: a
// pointer's target (its size and what it holds), a slice's backing
// array, a map's entries, a string's bytes, an interface's value. A
// struct's or array's own size counts where it is stored (in its parent,
// or behind a pointer).
func reflectBytes(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return alloc(int64(v.Type().Elem().Size())) + reflectBytes(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return alloc(int64(e.Type().Size())) + reflectBytes(e)
	case reflect.String:
		return allocBytes(int64(v.Len()))
	case reflect.Slice, reflect.Array:
		var n int64
		if v.Kind() == reflect.Slice {
			if v.IsNil() {
				return 0
			}
			n = alloc(int64(v.Cap()) * int64(v.Type().Elem().Size()))
		}
		for i := range v.Len() {
			n += reflectBytes(v.Index(i))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return 0
		}
		n := mapAlloc(v.Len(), int64(v.Type().Key().Size()+v.Type().Elem().Size()))
		for it := v.MapRange(); it.Next(); {
			n += reflectBytes(it.Key()) + reflectBytes(it.Value())
		}
		return n
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += reflectBytes(v.Field(i))
		}
		return n
	}
	return 0
}
