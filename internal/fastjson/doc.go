// Package fastjson decodes JSON into the unstructured form used by
// k8s.io/apimachinery (unstructured.Unstructured and friends) in a single,
// reflection-free pass, and frames streams of JSON values.
//
// # Result types
//
// JSON objects become map[string]any, arrays []any, strings string, true and
// false bool, and null nil. Numbers follow apimachinery's rule (sigs.k8s.io/json
// UnmarshalCaseSensitivePreserveInts, used by k8s.io/apimachinery/pkg/util/json
// and the unstructured JSON scheme): a literal without a '.' that parses as an
// int64 becomes an int64; anything else (a fraction, an exponent, an integer
// outside the int64 range) becomes a float64. A literal outside float64's
// range (1e400) is an error, as it is there.
//
// Everything else matches encoding/json decoding into an any: the same
// grammar and whitespace, the same string escapes (a lone or mismatched UTF-16
// surrogate escape becomes U+FFFD), invalid UTF-8 replaced by U+FFFD byte by
// byte, the last of duplicate keys wins, empty objects and arrays are non-nil,
// nothing but whitespace may follow the value, and nesting deeper than 10000
// levels is an error. Errors are *[SyntaxError] values whose message reads
// "fastjson: <what> at offset N". No input makes the package panic.
//
// # Entry points
//
// [Decode] and [DecodeObject] decode one value. A [Decoder] does the same and
// keeps scratch buffers and intern tables across calls; [Decoder.DecodeList]
// decodes a Kubernetes list body in one pass and hands each item to a callback
// as soon as it is parsed, so items can be streamed into a cache. [Scan] finds
// the extent of the first value in a buffer, for framing watch streams.
//
// # Interning
//
// A cache holding thousands of decoded objects otherwise stores thousands of
// copies of "apiVersion", "metadata", label keys and common values. With
// [Options].InternKeys a Decoder returns shared strings for object keys, and
// with InternValues also for short string values; a pooled value also shares
// its interface box, so decoding it allocates nothing. The tables are bounded
// and two-way set-associative (see [Interner]): unique strings such as UIDs
// and resource versions cost a little lookup time but cannot crowd out the
// common ones for good. [Interner] is exported for other packages (informer
// caches, indexers) and can be shared by several Decoders through
// [Options].Interner.
//
// # Concurrency
//
// [Decode], [DecodeObject], [Scan] and all [Interner] methods are safe for
// concurrent use. A [Decoder] is not: use one per goroutine (they may share an
// Interner). Decoded values share nothing mutable with the Decoder or the
// input: the input may be reused as soon as a call returns, and the results
// may be modified freely (pooled strings are immutable like any Go string).
package fastjson
