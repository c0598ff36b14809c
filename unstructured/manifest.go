package unstructured

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"

	goyaml "go.yaml.in/yaml/v2"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// Document is one object read from a manifest stream, with where it came
// from. For a bad document, Manifests yields a Document whose Object is nil
// and whose other fields say where the bad document is.
type Document struct {
	// Object is the decoded object; nil beside an error.
	Object *apiunstructured.Unstructured
	// Source names the stream, usually a file name; it is what the caller
	// passed to Manifests or DecodeManifests.
	Source string
	// Index is the 1-based number of the document in the stream. Empty
	// documents (only blank lines and comments) are not counted. Each value
	// of a JSON stream is a document of its own.
	Index int
	// Line is the 1-based line of the stream on which the document's
	// content starts (after any blank and comment lines).
	Line int
	// Item is the 1-based position of the object among the items of the
	// List that Document Index holds (nested Lists are flattened and
	// counted in order), or 0 when the document is not a List.
	Item int
}

// DocumentError is the error for one bad document (or one bad List item)
// of a manifest stream. Its message reads
// "manifest.yaml: document 3 (line 17): <what was wrong>".
type DocumentError struct {
	// Source, Index, Line and Item are those of the bad Document; Line or
	// Item is 0 when unknown or not applicable.
	Source string
	Index  int
	Line   int
	Item   int
	// Err is what was wrong.
	Err error
}

// Error implements error.
func (e *DocumentError) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
	} else {
		b.WriteString("unstructured")
	}
	b.WriteString(": document ")
	b.WriteString(strconv.Itoa(e.Index))
	if e.Line > 0 {
		b.WriteString(" (line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(")")
	}
	if e.Item > 0 {
		b.WriteString(": item ")
		b.WriteString(strconv.Itoa(e.Item))
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *DocumentError) Unwrap() error { return e.Err }

// DocumentErrors is the error DecodeManifests returns beside the good
// objects when some documents were bad: one *DocumentError per bad document
// or item, in stream order. Use errors.As to get at it, or range over it.
type DocumentErrors []*DocumentError

// Error lists the errors one per line, in stream order.
func (e DocumentErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (e DocumentErrors) Unwrap() []error {
	out := make([]error, len(e))
	for i, err := range e {
		out[i] = err
	}
	return out
}

// DecodeManifests reads every object of a manifest stream (see Manifests
// for the formats). It returns the good objects in stream order and, when
// some documents were bad, a DocumentErrors naming each of them: a bad
// document does not stop the others, so a caller can apply what decoded
// and report the rest. A read error ends the stream; it is the last entry.
// source names the stream in errors (usually the file name; "-" for stdin).
func DecodeManifests(r io.Reader, source string) ([]*apiunstructured.Unstructured, error) {
	var objs []*apiunstructured.Unstructured
	var errs DocumentErrors
	for doc, err := range Manifests(r, source) {
		if err != nil {
			var de *DocumentError
			if errors.As(err, &de) {
				errs = append(errs, de)
			} else {
				errs = append(errs, &DocumentError{Source: doc.Source, Index: doc.Index, Line: doc.Line, Item: doc.Item, Err: err})
			}
			continue
		}
		objs = append(objs, doc.Object)
	}
	if len(errs) > 0 {
		return objs, errs
	}
	return objs, nil
}

// Manifests reads a stream of Kubernetes manifests and yields each object
// as it is decoded, or a *DocumentError for each bad document; a bad
// document does not stop the iteration, a read error does (it is yielded
// last). Breaking out of the loop stops reading.
//
// Formats, which may be mixed in one stream:
//   - YAML, one or more documents separated by "---" lines (a comment may
//     follow, as in "--- # web"); a leading "---", empty documents and a
//     "..." end-of-document line are all accepted;
//   - JSON: one object, pretty-printed or not, or a stream of objects one
//     after another (as `kubectl get -o json` of several resources, or
//     jq output), with any whitespace between them;
//   - Lists: a document of kind "List", or of any kind ending in "List"
//     (such as ConfigMapList) that has an "items" field, is replaced by its
//     items in order. Items of a typed list that lack apiVersion or kind
//     (as the server returns them) get the list's apiVersion and the kind
//     without "List".
//
// Every object must have a string apiVersion and kind; a document that is
// not an object, or lacks either, is an error naming what is missing.
// Line numbers in parser messages count from the top of the stream, like
// Document.Line.
//
// The sequence reads r as the loop runs, so it can be ranged over once.
// Lines may be of any length (there is no 64 KiB limit); each document is
// held in memory while it is decoded. The decoder never panics on bad
// input.
func Manifests(r io.Reader, source string) iter.Seq2[Document, error] {
	return func(yield func(Document, error) bool) {
		if r == nil {
			yield(Document{Source: source, Index: 1, Line: 1}, &DocumentError{Source: source, Index: 1, Line: 1, Err: errors.New("nil reader")})
			return
		}
		d := &manifestDecoder{
			src:   source,
			split: splitter{br: bufio.NewReaderSize(r, 64<<10)},
			yield: yield,
		}
		d.run()
	}
}

// manifestDecoder turns chunks from a splitter into documents.
type manifestDecoder struct {
	src   string
	split splitter
	yield func(Document, error) bool
	index int  // documents numbered so far
	done  bool // yield returned false
}

func (d *manifestDecoder) run() {
	for !d.done {
		c, ok, err := d.split.next()
		if err != nil {
			// c.line is where the unfinished document started, if known.
			line := c.line
			if line == 0 {
				line = d.split.line + 1
			}
			d.fail(Document{Source: d.src, Index: d.index + 1, Line: line}, fmt.Errorf("reading: %w", err))
			return
		}
		if !ok {
			return
		}
		if c.text[firstNonSpace(c.text)] == '{' {
			d.jsonChunk(c)
		} else {
			d.yamlChunk(c)
		}
	}
}

// emit yields a good document; fail yields an error for doc.
func (d *manifestDecoder) emit(doc Document) {
	if !d.done && !d.yield(doc, nil) {
		d.done = true
	}
}

func (d *manifestDecoder) fail(doc Document, err error) {
	if d.done {
		return
	}
	doc.Object = nil
	de := &DocumentError{Source: doc.Source, Index: doc.Index, Line: doc.Line, Item: doc.Item, Err: err}
	if !d.yield(doc, de) {
		d.done = true
	}
}

// newDoc numbers the next document.
func (d *manifestDecoder) newDoc(line int) Document {
	d.index++
	return Document{Source: d.src, Index: d.index, Line: line}
}

// yamlChunk decodes one YAML document.
func (d *manifestDecoder) yamlChunk(c chunk) {
	data, err := yaml.YAMLToJSON(c.text)
	if err != nil {
		d.fail(d.newDoc(c.line), fmt.Errorf("error converting YAML to JSON: %w", yamlErrorAt(c, err)))
		return
	}
	d.jsonValue(data, c.line)
}

// yamlErrorAt returns the parser's error for c with line numbers counted
// from the top of the stream rather than from the chunk: it parses the
// chunk again behind c.line-1 empty lines, which mean nothing to YAML.
// This costs a second parse, for bad documents only.
func yamlErrorAt(c chunk, err error) error {
	if c.line <= 1 {
		return err
	}
	padded := make([]byte, c.line-1, c.line-1+len(c.text))
	for i := range padded {
		padded[i] = '\n'
	}
	if _, perr := yaml.YAMLToJSON(append(padded, c.text...)); perr != nil {
		return perr
	}
	return err
}

// yamlExtraContent reports content after the first YAML value of c, which
// YAMLToJSON silently ignores. Line numbers count from the top of the
// stream, as in yamlErrorAt.
func yamlExtraContent(c chunk) error {
	padded := append(bytes.Repeat([]byte{'\n'}, max(c.line-1, 0)), c.text...)
	dec := goyaml.NewDecoder(bytes.NewReader(padded))
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if err := dec.Decode(&v); err != io.EOF {
		if err == nil {
			err = errors.New("more than one YAML document")
		}
		return fmt.Errorf("%w (is a \"---\" line missing between two objects?)", err)
	}
	return nil
}

// jsonChunk decodes a run of JSON values. When the first value is not
// valid JSON, the chunk is read as YAML instead (a YAML flow mapping such
// as "{a: b}" starts with a brace too).
func (d *manifestDecoder) jsonChunk(c chunk) {
	off := 0
	for first := true; !d.done; first = false {
		off = skipSpaceAndComments(c.text, off)
		if off >= len(c.text) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(c.text[off:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if first {
				if data, yerr := yaml.YAMLToJSON(c.text); yerr == nil {
					// YAMLToJSON reads the first value and ignores what
					// follows it ("{a: b}\n{c: d}" gives {a: b}): refuse
					// such a chunk rather than drop its other objects.
					if yerr := yamlExtraContent(c); yerr != nil {
						d.fail(d.newDoc(c.line), fmt.Errorf("error converting YAML to JSON: %w", yerr))
						return
					}
					d.jsonValue(data, c.line)
					return
				}
			}
			line := c.line + bytes.Count(c.text[:off], []byte("\n"))
			doc := d.newDoc(line)
			var se *json.SyntaxError
			if errors.As(err, &se) {
				at := min(off+int(se.Offset), len(c.text))
				if at > 0 {
					at--
				}
				errLine := c.line + bytes.Count(c.text[:at], []byte("\n"))
				err = fmt.Errorf("error parsing JSON at line %d: %w", errLine, err)
			} else {
				err = fmt.Errorf("error parsing JSON: %w", err)
			}
			d.fail(doc, err)
			return // the rest of this run of JSON cannot be found reliably
		}
		line := c.line + bytes.Count(c.text[:off], []byte("\n"))
		off += int(dec.InputOffset())
		d.jsonValue(raw, line)
	}
}

// jsonValue decodes one JSON value into objects. A null value is an empty
// document and is skipped unnumbered.
func (d *manifestDecoder) jsonValue(data []byte, line int) {
	var v any
	if err := utiljson.Unmarshal(data, &v); err != nil {
		d.fail(d.newDoc(line), fmt.Errorf("error decoding JSON: %w", err))
		return
	}
	if v == nil {
		return
	}
	doc := d.newDoc(line)
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(doc, fmt.Errorf("expected an object, found %s", typeName(v)))
		return
	}
	if err := checkTypeMeta(m); err != nil {
		d.fail(doc, err)
		return
	}
	if !isList(m) {
		doc.Object = &apiunstructured.Unstructured{Object: m}
		d.emit(doc)
		return
	}
	item := 0
	d.flatten(m, doc, &item, 0)
}

// maxListDepth bounds how deeply Lists of Lists are flattened.
const maxListDepth = 100

// flatten yields the items of list, numbering them through item.
func (d *manifestDecoder) flatten(list map[string]any, doc Document, item *int, depth int) {
	if depth >= maxListDepth {
		doc.Item = *item
		d.fail(doc, fmt.Errorf("lists nested more than %d deep", maxListDepth))
		return
	}
	var items []any
	switch v := list["items"].(type) {
	case nil:
	case []any:
		items = v
	default:
		doc.Item = 0
		d.fail(doc, fmt.Errorf("%s: items: expected a list, found %s", list["kind"], typeName(v)))
		return
	}
	listKind, _ := list["kind"].(string)
	listVersion, _ := list["apiVersion"].(string)
	for _, it := range items {
		if d.done {
			return
		}
		*item++
		doc.Item = *item
		m, ok := it.(map[string]any)
		if !ok {
			d.fail(doc, fmt.Errorf("expected an object, found %s", typeName(it)))
			continue
		}
		if listKind != "List" {
			// A typed list: its items may leave out their type.
			if _, ok := m["apiVersion"]; !ok {
				m["apiVersion"] = listVersion
			}
			if _, ok := m["kind"]; !ok {
				m["kind"] = strings.TrimSuffix(listKind, "List")
			}
		}
		if err := checkTypeMeta(m); err != nil {
			d.fail(doc, err)
			continue
		}
		if isList(m) {
			*item--
			d.flatten(m, doc, item, depth+1)
			continue
		}
		out := doc
		out.Object = &apiunstructured.Unstructured{Object: m}
		d.emit(out)
	}
}

// isList reports whether m is a List to flatten: its kind ends in "List"
// and it has an items field.
func isList(m map[string]any) bool {
	kind, _ := m["kind"].(string)
	if !strings.HasSuffix(kind, "List") {
		return false
	}
	_, ok := m["items"]
	return ok
}

// checkTypeMeta checks that m has a non-empty string apiVersion and kind.
func checkTypeMeta(m map[string]any) error {
	var missing []string
	for _, f := range []string{"apiVersion", "kind"} {
		v, ok := m[f]
		if !ok || v == nil || v == "" {
			missing = append(missing, f)
			continue
		}
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: expected a string, found %s", f, typeName(v))
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("object has no %s", missing[0])
	default:
		return errors.New("object has no apiVersion and no kind")
	}
}

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return i
		}
	}
	return 0 // unreachable for chunks: they hold content
}

// skipSpaceAndComments skips whitespace and '#' comment lines from off.
func skipSpaceAndComments(b []byte, off int) int {
	for off < len(b) {
		switch b[off] {
		case ' ', '\t', '\r', '\n':
			off++
		case '#':
			nl := bytes.IndexByte(b[off:], '\n')
			if nl < 0 {
				return len(b)
			}
			off += nl + 1
		default:
			return off
		}
	}
	return off
}

// chunk is the text of one YAML document, or of a run of JSON values,
// starting at its first content line.
type chunk struct {
	text []byte
	line int // line of the stream on which text starts
}

// splitter cuts a stream into chunks at "---" and "..." lines. It reads
// with bufio.Reader.ReadBytes, so lines have no length limit.
type splitter struct {
	br   *bufio.Reader
	line int // lines read so far
	eof  bool
	// pending is a "--- content" line that starts the next chunk.
	pending     []byte
	pendingLine int
}

// next returns the next chunk with content; ok is false at the end. On a
// read error, c.line is the start of the unfinished chunk (0 if none).
func (s *splitter) next() (c chunk, ok bool, err error) {
	var buf []byte
	start := 0
	if s.pending != nil {
		buf, start = s.pending, s.pendingLine
		s.pending = nil
	}
	for !s.eof {
		line, rerr := s.br.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return chunk{line: start}, false, rerr
		}
		if rerr != nil {
			s.eof = true
		}
		if len(line) == 0 {
			break
		}
		s.line++
		if s.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		switch {
		case isMarker(line, "---"):
			startsDoc := hasContentAfterMarker(line)
			if start > 0 {
				if startsDoc {
					s.pending, s.pendingLine = line, s.line
				}
				return chunk{text: buf, line: start}, true, nil
			}
			if startsDoc {
				buf, start = line, s.line
			}
		case isMarker(line, "..."):
			if start > 0 {
				return chunk{text: buf, line: start}, true, nil
			}
		default:
			if start == 0 {
				if isBlankOrComment(line) {
					continue
				}
				start = s.line
			}
			buf = append(buf, line...)
		}
	}
	if start > 0 {
		return chunk{text: buf, line: start}, true, nil
	}
	return chunk{}, false, nil
}

// isMarker reports whether line is the marker m ("---" or "...") at column
// 0, alone or followed by whitespace.
func isMarker(line []byte, m string) bool {
	if !bytes.HasPrefix(line, []byte(m)) {
		return false
	}
	if len(line) == len(m) {
		return true
	}
	switch line[len(m)] {
	case ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// hasContentAfterMarker reports whether a "---" line carries content of
// the next document (as in "--- !!map" or "--- {a: b}") rather than
// nothing or a comment.
func hasContentAfterMarker(line []byte) bool {
	rest := bytes.TrimSpace(line[3:])
	return len(rest) > 0 && rest[0] != '#'
}

func isBlankOrComment(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) == 0 || t[0] == '#'
}
