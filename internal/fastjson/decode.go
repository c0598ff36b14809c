package fastjson

import (
	"errors"
	"strconv"
	"sync"
	"unsafe"
)

// Options configures a [Decoder].
type Options struct {
	// InternKeys interns object keys of at most 64 bytes in a bounded table
	// (4096 entries) owned by the Decoder, so that the objects it decodes
	// share their keys ("apiVersion", "metadata", label keys, ...).
	InternKeys bool
	// InternValues also interns string values of at most 64 bytes (the
	// longest label value or DNS label Kubernetes allows is 63) in a second
	// bounded table of 4096 entries: label values, "v1", kinds, namespaces,
	// timestamps shared within an object. An interned value also shares its
	// boxed interface representation, so a repeated value costs no
	// allocation at all. Unique short values (UIDs, resource versions) pass
	// through the table without crowding out the common ones for long.
	InternValues bool
	// Interner, if not nil, is used instead of the Decoder's private tables
	// for whatever InternKeys and InternValues select, so that several
	// Decoders (one per goroutine) share one pool. Its MaxLen applies.
	Interner *Interner
	// OmitManagedFields, if > 0, leaves "managedFields" out of the
	// "metadata" object of every object at that nesting depth (1: the
	// decoded value itself, 2: the objects one level down, such as the
	// "object" of a watch event): the value is checked for syntax but not
	// decoded, which saves most of the cost of decoding a Kubernetes object
	// whose managedFields would be dropped anyway.
	OmitManagedFields int
}

const (
	internTableSize = 4096
	maxInternKeyLen = 64
	maxInternValLen = 64
)

// Decoder decodes JSON into apimachinery's unstructured representation and
// keeps state across calls: scratch buffers, value stacks and, when enabled,
// intern tables. A Decoder is not safe for concurrent use; its zero value is
// not usable, create one with [NewDecoder].
type Decoder struct {
	data    []byte
	depth   int
	keys    []string // pending keys of the objects being parsed
	vals    []any    // pending values of the objects and arrays being parsed
	scratch []byte   // unescaped string bytes
	keyTab  *Interner
	valTab  *Interner
	unique  bool // the next value belongs to a uniqueValueKeys key
	omitMF  int  // Options.OmitManagedFields
	meta    bool // the next value is the "metadata" of an object at depth omitMF

	// For DecodeObjectSharedRaw: rawOn is set during such a decode, whose
	// wanted object is data itself (rawKey "") or the value of its member
	// rawKey. trackNext says the value about to be parsed is that member's
	// and trackThis passes that on to the object it opens; trackDepth is
	// the wanted object's depth while it is being parsed (else 0). objSpan
	// is its byte range in data and omSpan the range to cut from it (the
	// omitted managedFields member with one adjacent comma), {-1, -1} when
	// none; omCount counts the omissions (a duplicate member makes the
	// cut ambiguous).
	rawOn      bool
	rawKey     string
	trackNext  bool
	trackThis  bool
	trackDepth int
	objSpan    [2]int
	omSpan     [2]int
	omCount    int
}

// NewDecoder returns a Decoder configured by opts.
func NewDecoder(opts Options) *Decoder {
	d := &Decoder{omitMF: opts.OmitManagedFields}
	if opts.InternKeys {
		d.keyTab = opts.Interner
		if d.keyTab == nil {
			d.keyTab = NewInterner(internTableSize, maxInternKeyLen)
		}
	}
	if opts.InternValues {
		d.valTab = opts.Interner
		if d.valTab == nil {
			d.valTab = NewInterner(internTableSize, maxInternValLen)
		}
	}
	return d
}

var decoderPool = sync.Pool{New: func() any { return NewDecoder(Options{}) }}

// Decode parses data, which must hold exactly one JSON value (surrounding
// whitespace allowed), into its unstructured form: map[string]any, []any,
// string, bool, nil, int64 or float64. It does not intern.
func Decode(data []byte) (any, error) {
	d := decoderPool.Get().(*Decoder)
	v, err := d.Decode(data)
	decoderPool.Put(d)
	return v, err
}

// DecodeObject is like [Decode] but requires the value to be a JSON object.
func DecodeObject(data []byte) (map[string]any, error) {
	d := decoderPool.Get().(*Decoder)
	m, err := d.DecodeObject(data)
	decoderPool.Put(d)
	return m, err
}

// Decode parses data, which must hold exactly one JSON value (surrounding
// whitespace allowed). See the package documentation for the result types.
func (d *Decoder) Decode(data []byte) (any, error) {
	d.begin(data)
	v, i, err := d.value(skipWS(data, 0))
	if err == nil {
		err = d.end(i)
	}
	d.finish()
	if err != nil {
		return nil, err
	}
	return v, nil
}

// DecodeObject parses data, which must hold exactly one JSON object
// (surrounding whitespace allowed).
func (d *Decoder) DecodeObject(data []byte) (map[string]any, error) {
	d.begin(data)
	defer d.finish()
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		if i < len(data) && isValueStart(data[i]) {
			return nil, syntaxErr("value is not an object", i)
		}
		return nil, badChar(data, i, "looking for beginning of value")
	}
	m, i, err := d.object(i)
	if err == nil {
		err = d.end(i)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// DecodeList parses a Kubernetes list body ({"apiVersion":..., "kind":...,
// "metadata":{...}, "items":[{...}, ...]}) in a single pass. It returns the
// list's fields other than "items" and calls item for each element of
// "items", in order, as soon as that element is parsed; the Decoder keeps no
// reference to it. An element that is not an object is an error naming its
// index; an error returned by item stops decoding and is returned as is.
// "items" may be absent or null (no calls), must otherwise be an array, and
// may appear only once. If item is nil, the items are instead collected into
// list["items"] as a []any of map[string]any, as encoding/json would return.
//
// item may keep obj (the Decoder does not reuse it) but must not call
// methods of d. Unlike apimachinery's UnstructuredList decoding, DecodeList
// does not fill in an item's apiVersion and kind from the list's.
func (d *Decoder) DecodeList(data []byte, item func(i int, obj map[string]any) error) (list map[string]any, err error) {
	d.begin(data)
	defer d.finish()
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		if i < len(data) && isValueStart(data[i]) {
			return nil, syntaxErr("list is not an object", i)
		}
		return nil, badChar(data, i, "looking for beginning of value")
	}
	d.depth++ // the list object itself
	i = skipWS(data, i+1)
	kbase, vbase := len(d.keys), len(d.vals)
	seenItems := false
	var collected []any
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			if i >= len(data) || data[i] != '"' {
				return nil, badChar(data, i, "looking for beginning of object key string")
			}
			keyStart := i
			var key string
			key, i, err = d.key(i + 1)
			if err != nil {
				return nil, err
			}
			i = skipWS(data, i)
			if i >= len(data) || data[i] != ':' {
				return nil, badChar(data, i, "after object key")
			}
			i = skipWS(data, i+1)
			if key == "items" {
				if seenItems {
					return nil, syntaxErr(`duplicate "items" key in list`, keyStart)
				}
				seenItems = true
				i, collected, err = d.items(i, item)
				if err != nil {
					return nil, err
				}
			} else {
				var v any
				v, i, err = d.value(i)
				if err != nil {
					return nil, err
				}
				d.keys = append(d.keys, key)
				d.vals = append(d.vals, v)
			}
			i = skipWS(data, i)
			if i < len(data) && data[i] == ',' {
				i = skipWS(data, i+1)
				continue
			}
			if i < len(data) && data[i] == '}' {
				i++
				break
			}
			return nil, badChar(data, i, "after object key:value pair")
		}
	}
	if err := d.end(i); err != nil {
		return nil, err
	}
	n := len(d.keys) - kbase
	extra := 0
	if item == nil && seenItems {
		extra = 1
	}
	list = make(map[string]any, n+extra)
	for j := 0; j < n; j++ {
		list[d.keys[kbase+j]] = d.vals[vbase+j]
	}
	if extra == 1 {
		if collected == nil {
			// "items": null
			list["items"] = nil
		} else {
			list["items"] = collected
		}
	}
	return list, nil
}

// items parses the value of a list's "items" key starting at data[i].
func (d *Decoder) items(i int, item func(int, map[string]any) error) (int, []any, error) {
	data := d.data
	if hasLiteral(data, i, "null") {
		return i + 4, nil, nil
	}
	if i >= len(data) || data[i] != '[' {
		if i < len(data) && isValueStart(data[i]) {
			return i, nil, syntaxErr(`list "items" is not an array`, i)
		}
		return i, nil, badChar(data, i, "looking for beginning of value")
	}
	d.depth++
	if d.depth > maxDepth {
		return i, nil, depthErr(i)
	}
	i = skipWS(data, i+1)
	var collected []any
	if item == nil {
		collected = []any{}
	}
	if i < len(data) && data[i] == ']' {
		d.depth--
		return i + 1, collected, nil
	}
	for n := 0; ; n++ {
		if i >= len(data) || data[i] != '{' {
			if i < len(data) && isValueStart(data[i]) {
				return i, nil, syntaxErr("list item "+strconv.Itoa(n)+" is not an object", i)
			}
			return i, nil, badChar(data, i, "looking for beginning of value")
		}
		obj, j, err := d.object(i)
		if err != nil {
			return j, nil, err
		}
		i = j
		if item == nil {
			collected = append(collected, obj)
		} else if err := item(n, obj); err != nil {
			return i, nil, err
		}
		i = skipWS(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipWS(data, i+1)
			continue
		}
		if i < len(data) && data[i] == ']' {
			d.depth--
			return i + 1, collected, nil
		}
		return i, nil, badChar(data, i, "after array element")
	}
}

func (d *Decoder) begin(data []byte) {
	d.data = data
	d.depth = 0
}

// end checks that only whitespace follows the top-level value ending at i.
func (d *Decoder) end(i int) error {
	i = skipWS(d.data, i)
	if i < len(d.data) {
		return badChar(d.data, i, "after top-level value")
	}
	return nil
}

// finish drops every reference to the input and to decoded values, so that
// a Decoder kept around does not pin memory the caller has released.
func (d *Decoder) finish() {
	d.data = nil
	clear(d.keys)
	d.keys = d.keys[:0]
	clear(d.vals)
	d.vals = d.vals[:0]
	if cap(d.scratch) > 64<<10 {
		d.scratch = nil
	}
	if cap(d.vals) > 64<<10 {
		d.vals = nil
		d.keys = nil
	}
}

func isValueStart(c byte) bool {
	switch c {
	case '{', '[', '"', 't', 'f', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r'
}

func skipWS(data []byte, i int) int {
	for i < len(data) && data[i] <= ' ' && isSpace(data[i]) {
		i++
	}
	return i
}

func hasLiteral(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && unsafe.String(unsafe.SliceData(data[i:]), len(lit)) == lit
}

// uniqueValueKeys name fields whose string values are unique per object or
// per change (identifiers, versions, timestamps), which value interning
// skips.
var uniqueValueKeys = map[string]bool{
	"uid": true, "resourceVersion": true, "creationTimestamp": true, "deletionTimestamp": true,
	"time": true, "lastTransitionTime": true, "lastUpdateTime": true, "lastHeartbeatTime": true,
	"continue": true,
}

// value parses the JSON value starting at data[i] (whitespace already
// skipped) and returns it with the offset just past it.
func (d *Decoder) value(i int) (any, int, error) {
	data := d.data
	unique, meta, track := d.unique, d.meta, d.trackNext
	d.unique, d.meta, d.trackNext = false, false, false
	if i >= len(data) {
		return nil, i, syntaxErr("unexpected end of JSON input", i)
	}
	switch c := data[i]; c {
	case '"':
		b, j, err := d.str(i + 1)
		if err != nil {
			return nil, j, err
		}
		if d.valTab != nil && len(b) <= d.valTab.maxLen && !unique {
			return d.valTab.box(b), j, nil
		}
		return string(b), j, nil
	case '{':
		d.trackThis = track
		if meta {
			return d.objectOmitting(i, "managedFields")
		}
		m, j, err := d.object(i)
		if err != nil {
			return nil, j, err
		}
		return m, j, nil
	case '[':
		return d.array(i)
	case 't':
		if hasLiteral(data, i, "true") {
			return true, i + 4, nil
		}
		return nil, i, literalErr(data, i, "true")
	case 'f':
		if hasLiteral(data, i, "false") {
			return false, i + 5, nil
		}
		return nil, i, literalErr(data, i, "false")
	case 'n':
		if hasLiteral(data, i, "null") {
			return nil, i + 4, nil
		}
		return nil, i, literalErr(data, i, "null")
	default:
		if c == '-' || c-'0' <= 9 {
			return number(data, i)
		}
		return nil, i, badChar(data, i, "looking for beginning of value")
	}
}

func literalErr(data []byte, i int, lit string) error {
	for k := 1; k < len(lit); k++ {
		if i+k >= len(data) {
			return syntaxErr("unexpected end of JSON input", i+k)
		}
		if data[i+k] != lit[k] {
			return syntaxErr("invalid character "+quoteChar(data[i+k])+" in literal "+lit+" (expecting '"+lit[k:k+1]+"')", i+k)
		}
	}
	return syntaxErr("invalid literal", i) // not reached
}

// key parses an object key whose opening quote is at data[i-1].
func (d *Decoder) key(i int) (string, int, error) {
	b, j, err := d.str(i)
	if err != nil {
		return "", j, err
	}
	if d.keyTab != nil && len(b) <= d.keyTab.maxLen {
		return d.keyTab.String(b), j, nil
	}
	return string(b), j, nil
}

// object parses the object whose '{' is at data[i].
func (d *Decoder) object(i int) (map[string]any, int, error) {
	return d.objectOmitting(i, "")
}

// objectOmitting is object leaving out the member named omit (if not ""),
// whose value is only checked for syntax.
func (d *Decoder) objectOmitting(i int, omit string) (map[string]any, int, error) {
	data := d.data
	start := i
	depth := d.depth + 1 // this object's
	d.depth++
	if d.depth > maxDepth {
		return nil, i, depthErr(i)
	}
	tracked := d.rawOn && (d.trackThis || (d.rawKey == "" && depth == 1))
	d.trackThis = false
	outerTrack := d.trackDepth
	if tracked {
		d.trackDepth = depth
		d.omSpan, d.omCount = [2]int{-1, -1}, 0
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		d.depth--
		if tracked {
			d.objSpan, d.trackDepth = [2]int{start, i + 1}, outerTrack
		}
		return map[string]any{}, i + 1, nil
	}
	kbase, vbase := len(d.keys), len(d.vals)
	prevEnd := -1   // end of the previous member's value
	omitFirst := -1 // key offset of an omitted first member, until its comma
	for {
		keyStart := i
		if i >= len(data) || data[i] != '"' {
			return nil, i, badChar(data, i, "looking for beginning of object key string")
		}
		key, j, err := d.key(i + 1)
		if err != nil {
			return nil, j, err
		}
		i = j
		if i < len(data) && data[i] == ':' {
			i++
		} else {
			i = skipWS(data, i)
			if i >= len(data) || data[i] != ':' {
				return nil, i, badChar(data, i, "after object key")
			}
			i++
		}
		i = skipWS(data, i)
		if omit != "" && key == omit {
			_, end, err := Scan(data[i:])
			if err != nil {
				if err == ErrIncomplete {
					return nil, len(data), syntaxErr("unexpected end of JSON input", len(data))
				}
				var se *SyntaxError
				if errors.As(err, &se) {
					se.Offset += int64(i)
				}
				return nil, i, err
			}
			valEnd := i + end
			i = skipWS(data, valEnd)
			if d.trackDepth > 0 && depth == d.trackDepth+1 {
				// The wanted object's metadata: the cut takes the comma
				// before the member, or after it when it comes first.
				d.omCount++
				if prevEnd >= 0 {
					d.omSpan = [2]int{prevEnd, valEnd}
				} else {
					d.omSpan, omitFirst = [2]int{keyStart, valEnd}, keyStart
				}
			}
		} else {
			// Values of these keys are different in (almost) every
			// object: interning them costs a lookup and evicts useful
			// entries.
			d.unique = d.valTab != nil && uniqueValueKeys[key]
			d.meta = depth == d.omitMF && key == "metadata"
			if d.rawOn && d.rawKey != "" && depth == 1 && key == d.rawKey {
				// The wanted member (a later duplicate replaces it).
				d.trackNext, d.objSpan = true, [2]int{-1, -1}
			}
			v, j, err := d.value(i)
			if err != nil {
				return nil, j, err
			}
			d.keys = append(d.keys, key)
			d.vals = append(d.vals, v)
			prevEnd = j
			i = skipWS(data, j)
		}
		if i < len(data) {
			if c := data[i]; c == ',' {
				i = skipWS(data, i+1)
				if omitFirst >= 0 {
					d.omSpan, omitFirst = [2]int{omitFirst, i}, -1
				}
				continue
			} else if c == '}' {
				i++
				break
			}
		}
		return nil, i, badChar(data, i, "after object key:value pair")
	}
	keys, vals := d.keys[kbase:], d.vals[vbase:]
	vals = vals[:len(keys)]
	m := make(map[string]any, len(keys))
	for j, k := range keys {
		m[k] = vals[j]
	}
	clear(keys)
	clear(vals)
	d.keys, d.vals = d.keys[:kbase], d.vals[:vbase]
	d.depth--
	if tracked {
		d.objSpan, d.trackDepth = [2]int{start, i}, outerTrack
	}
	return m, i, nil
}

// array parses the array whose '[' is at data[i].
func (d *Decoder) array(i int) (any, int, error) {
	data := d.data
	d.depth++
	if d.depth > maxDepth {
		return nil, i, depthErr(i)
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == ']' {
		d.depth--
		return []any{}, i + 1, nil
	}
	base := len(d.vals)
	for {
		v, j, err := d.value(i)
		if err != nil {
			return nil, j, err
		}
		d.vals = append(d.vals, v)
		i = skipWS(data, j)
		if i < len(data) {
			if c := data[i]; c == ',' {
				i = skipWS(data, i+1)
				continue
			} else if c == ']' {
				i++
				break
			}
		}
		return nil, i, badChar(data, i, "after array element")
	}
	elems := d.vals[base:]
	a := make([]any, len(elems))
	copy(a, elems)
	clear(elems)
	d.vals = d.vals[:base]
	d.depth--
	return a, i, nil
}

// Shared is the process-wide intern pool used by DecodeObjectShared, so
// that objects decoded anywhere in the process (list pages, watch events,
// informer caches) share their keys and short common values.
var Shared = NewInterner(1<<14, 64)

var sharedPool = sync.Pool{New: func() any {
	return NewDecoder(Options{InternKeys: true, InternValues: true, Interner: Shared})
}}

// sharedOmitting[d-1] pools shared decoders with OmitManagedFields d.
var sharedOmitting = [2]sync.Pool{
	{New: func() any {
		return NewDecoder(Options{InternKeys: true, InternValues: true, Interner: Shared, OmitManagedFields: 1})
	}},
	{New: func() any {
		return NewDecoder(Options{InternKeys: true, InternValues: true, Interner: Shared, OmitManagedFields: 2})
	}},
}

// DecodeObjectSharedOmittingManagedFields is DecodeObjectShared with
// Options.OmitManagedFields set to depth, which must be 1 (an object) or 2
// (a watch event). It is safe for concurrent use.
func DecodeObjectSharedOmittingManagedFields(data []byte, depth int) (map[string]any, error) {
	if depth != 1 && depth != 2 {
		return nil, errors.New("fastjson: managedFields can be omitted at depth 1 or 2")
	}
	p := &sharedOmitting[depth-1]
	d := p.Get().(*Decoder)
	m, err := d.DecodeObject(data)
	p.Put(d)
	return m, err
}

// DecodeObjectSharedRaw is DecodeObjectShared, or with omitManagedFields
// DecodeObjectSharedOmittingManagedFields, that also returns the text of
// an object as data holds it, without the managedFields member it left
// out, in a new slice sized to fit: data itself when member is "", else
// the value of data's member of that name (such as the "object" of a watch
// event). raw is nil when that value is not an object or the cut is
// ambiguous (a duplicate managedFields member). It is safe for concurrent
// use.
func DecodeObjectSharedRaw(data []byte, member string, omitManagedFields bool) (m map[string]any, raw []byte, err error) {
	p := &sharedPool
	if omitManagedFields {
		p = &sharedOmitting[0]
		if member != "" {
			p = &sharedOmitting[1]
		}
	}
	d := p.Get().(*Decoder)
	d.rawOn, d.rawKey, d.objSpan, d.omSpan, d.omCount = true, member, [2]int{-1, -1}, [2]int{-1, -1}, 0
	m, err = d.DecodeObject(data)
	obj, cut, n := d.objSpan, d.omSpan, d.omCount
	d.rawOn, d.rawKey, d.trackNext, d.trackThis, d.trackDepth = false, "", false, false, 0
	p.Put(d)
	if err != nil || obj[0] < 0 || n > 1 {
		return m, nil, err
	}
	if n == 0 {
		cut = [2]int{obj[0], obj[0]} // nothing to cut
	}
	raw = make([]byte, 0, obj[1]-obj[0]-(cut[1]-cut[0]))
	raw = append(raw, data[obj[0]:cut[0]]...)
	raw = append(raw, data[cut[1]:obj[1]]...)
	return m, raw, nil
}

// DecodeObjectShared is DecodeObject with keys and short values interned
// in Shared. It is safe for concurrent use.
func DecodeObjectShared(data []byte) (map[string]any, error) {
	d := sharedPool.Get().(*Decoder)
	m, err := d.DecodeObject(data)
	sharedPool.Put(d)
	return m, err
}

// DecodeListShared is Decoder.DecodeList with a pooled decoder interning
// in Shared. It is safe for concurrent use.
func DecodeListShared(data []byte, item func(i int, obj map[string]any) error) (map[string]any, error) {
	d := sharedPool.Get().(*Decoder)
	defer sharedPool.Put(d)
	return d.DecodeList(data, item)
}
