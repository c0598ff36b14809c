package unstructured

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// renderManifests prints what Manifests yields, one line per object or
// error, for golden files.
func renderManifests(t *testing.T, r io.Reader, source string) string {
	t.Helper()
	var b strings.Builder
	for doc, err := range Manifests(r, source) {
		if err != nil {
			var de *DocumentError
			if !errors.As(err, &de) {
				t.Errorf("error is not a *DocumentError: %v", err)
			}
			if doc.Object != nil {
				t.Errorf("object beside an error: %v", doc.Object)
			}
			if doc.Index != de.Index || doc.Line != de.Line || doc.Item != de.Item || doc.Source != de.Source {
				t.Errorf("document %+v does not match its error %+v", doc, de)
			}
			fmt.Fprintf(&b, "ERROR %s\n", err)
			continue
		}
		raw, merr := json.Marshal(doc.Object.Object)
		if merr != nil {
			t.Fatalf("marshal: %v", merr)
		}
		// Objects must be valid for apimachinery's DeepCopy.
		doc.Object.DeepCopy()
		fmt.Fprintf(&b, "%s document %d line %d item %d: %s %s %s\n", doc.Source, doc.Index, doc.Line, doc.Item,
			doc.Object.GetAPIVersion(), doc.Object.GetKind(), raw)
	}
	return b.String()
}

func TestManifestsGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/manifests/*.*")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		if strings.HasSuffix(in, ".golden") {
			continue
		}
		t.Run(filepath.Base(in), func(t *testing.T) {
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got := renderManifests(t, f, filepath.Base(in))
			golden := in + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestManifestsInline(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{name: "empty input", input: ""},
		{name: "only separators and comments", input: "---\n# x\n---\n...\n\n"},
		{name: "null document", input: "~\n---\napiVersion: v1\nkind: A\n", want: "in document 1 line 3 item 0: v1 A {\"apiVersion\":\"v1\",\"kind\":\"A\"}\n"},
		{
			name:  "CRLF line endings and a BOM",
			input: "\xef\xbb\xbfapiVersion: v1\r\nkind: A\r\n---\r\napiVersion: v1\r\nkind: B\r\n",
			want: "in document 1 line 1 item 0: v1 A {\"apiVersion\":\"v1\",\"kind\":\"A\"}\n" +
				"in document 2 line 4 item 0: v1 B {\"apiVersion\":\"v1\",\"kind\":\"B\"}\n",
		},
		{
			name:  "no trailing newline",
			input: "apiVersion: v1\nkind: A",
			want:  "in document 1 line 1 item 0: v1 A {\"apiVersion\":\"v1\",\"kind\":\"A\"}\n",
		},
		{
			name:  "separator lookalikes are content",
			input: "apiVersion: v1\nkind: A\nx: ---y\n----: 1\n",
			want:  "in document 1 line 1 item 0: v1 A {\"----\":1,\"apiVersion\":\"v1\",\"kind\":\"A\",\"x\":\"---y\"}\n",
		},
		{
			name:  "bare document after end marker",
			input: "apiVersion: v1\nkind: A\n...\napiVersion: v1\nkind: B\n",
			want: "in document 1 line 1 item 0: v1 A {\"apiVersion\":\"v1\",\"kind\":\"A\"}\n" +
				"in document 2 line 4 item 0: v1 B {\"apiVersion\":\"v1\",\"kind\":\"B\"}\n",
		},
		{
			name:  "empty string kind",
			input: "apiVersion: v1\nkind: \"\"\n",
			want:  "ERROR in: document 1 (line 1): object has no kind\n",
		},
		{
			name:  "JSON array",
			input: "[]",
			want:  "ERROR in: document 1 (line 1): expected an object, found list\n",
		},
		{
			name:  "truncated JSON",
			input: "{\"apiVersion\": \"v1\",\n \"kind\": ",
			want:  "ERROR in: document 1 (line 1): error parsing JSON: unexpected EOF\n",
		},
		{
			name:  "garbage after JSON",
			input: "{\"apiVersion\":\"v1\",\"kind\":\"A\"}\n]",
			want: "in document 1 line 1 item 0: v1 A {\"apiVersion\":\"v1\",\"kind\":\"A\"}\n" +
				"ERROR in: document 2 (line 2): error parsing JSON at line 2: invalid character ']' looking for beginning of value\n",
		},
		{
			name:  "typed list item of the wrong type",
			input: "apiVersion: v1\nkind: PodList\nitems:\n- kind: 3\n",
			want:  "ERROR in: document 1 (line 1): item 1: kind: expected a string, found int64\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renderManifests(t, strings.NewReader(tt.input), "in")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeManifests(t *testing.T) {
	f, err := os.Open("testdata/manifests/errors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err := DecodeManifests(f, "errors.yaml")
	var names []string
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	if diff := cmp.Diff([]string{"good-1", "good-in-list", "good-in-list-2", "yaml-flow", "good-last"}, names); diff != "" {
		t.Errorf("good objects (-want +got):\n%s", diff)
	}
	var docErrs DocumentErrors
	if !errors.As(err, &docErrs) {
		t.Fatalf("error %T is not DocumentErrors: %v", err, err)
	}
	var where []string
	for _, de := range docErrs {
		where = append(where, fmt.Sprintf("%s:%d:%d:%d", de.Source, de.Index, de.Line, de.Item))
	}
	want := []string{
		"errors.yaml:2:5:0", "errors.yaml:3:11:0", "errors.yaml:4:13:0", "errors.yaml:5:16:0",
		"errors.yaml:6:19:0", "errors.yaml:7:22:0", "errors.yaml:8:25:0", "errors.yaml:9:27:0",
		"errors.yaml:10:31:2", "errors.yaml:10:31:3", "errors.yaml:11:43:0", "errors.yaml:13:47:0",
	}
	if diff := cmp.Diff(want, where); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if len(strings.Split(err.Error(), "\n")) != len(want) {
		t.Errorf("Error() is not one line per document:\n%s", err)
	}
	var one *DocumentError
	if !errors.As(err, &one) || one.Index != 2 {
		t.Errorf("errors.As(*DocumentError) = %v", one)
	}

	objs, err = DecodeManifests(strings.NewReader("apiVersion: v1\nkind: A\n"), "ok.yaml")
	if err != nil || len(objs) != 1 {
		t.Errorf("got %v, %v", objs, err)
	}
}

func TestManifestsReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("apiVersion: v1\nkind: A\n---\napiVersion: v1\n"), iotest.ErrReader(boom))
	objs, err := DecodeManifests(r, "flaky")
	if len(objs) != 1 {
		t.Errorf("got %d objects, want the 1 before the error", len(objs))
	}
	if !errors.Is(err, boom) {
		t.Fatalf("error %v does not wrap the read error", err)
	}
	if diff := cmp.Diff("flaky: document 2 (line 4): reading: boom", err.Error()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Between documents, the error points at the next line.
	r = io.MultiReader(strings.NewReader("apiVersion: v1\nkind: A\n---\n"), iotest.ErrReader(boom))
	_, err = DecodeManifests(r, "flaky")
	if diff := cmp.Diff("flaky: document 2 (line 4): reading: boom", errString(err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	_, err = DecodeManifests(nil, "nil")
	if diff := cmp.Diff("nil: document 1 (line 1): nil reader", errString(err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestManifestsBreakStopsReading(t *testing.T) {
	var input strings.Builder
	for i := range 100 {
		fmt.Fprintf(&input, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\n---\n", i)
	}
	r := &countingReader{r: strings.NewReader(input.String())}
	n := 0
	for _, err := range Manifests(r, "x") {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 2 {
			break
		}
	}
	if r.n >= int64(input.Len()) {
		t.Errorf("read all %d bytes after break", r.n)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	// Small reads, so that the decoder cannot have read everything at once.
	if len(p) > 256 {
		p = p[:256]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestManifestsLargeDocuments(t *testing.T) {
	big := strings.Repeat("x", 3<<20) // one 3 MiB line, far over bufio.Scanner's 64 KiB
	var in bytes.Buffer
	fmt.Fprintf(&in, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  blob: %s\n---\n", big)
	fmt.Fprintf(&in, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"big-json\"},\"data\":{\"blob\":%q}}\n", big)
	in.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many-lines\ndata:\n")
	for i := range 20000 {
		fmt.Fprintf(&in, "  k%d: v\n", i)
	}
	in.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: after}\n")

	objs, err := DecodeManifests(&in, "big.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	if diff := cmp.Diff([]string{"big", "big-json", "many-lines", "after"}, names); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for _, i := range []int{0, 1} {
		if s, _, _ := GetString(objs[i].Object, "data.blob"); len(s) != len(big) {
			t.Errorf("%s: blob has %d bytes, want %d", names[i], len(s), len(big))
		}
	}
	if data, _, _ := GetMap(objs[2].Object, "data"); len(data) != 20000 {
		t.Errorf("many-lines has %d keys", len(data))
	}
}

func TestDocumentErrorFormat(t *testing.T) {
	tests := []struct {
		err  *DocumentError
		want string
	}{
		{&DocumentError{Source: "a.yaml", Index: 3, Line: 17, Err: errors.New("bad")}, "a.yaml: document 3 (line 17): bad"},
		{&DocumentError{Source: "a.yaml", Index: 3, Line: 17, Item: 2, Err: errors.New("bad")}, "a.yaml: document 3 (line 17): item 2: bad"},
		{&DocumentError{Index: 1, Err: errors.New("bad")}, "unstructured: document 1: bad"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.err.Error()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	errs := DocumentErrors{tests[0].err, tests[1].err}
	if diff := cmp.Diff("a.yaml: document 3 (line 17): bad\na.yaml: document 3 (line 17): item 2: bad", errs.Error()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := errs.Unwrap(); len(got) != 2 || got[0] != error(tests[0].err) {
		t.Errorf("Unwrap() = %v", got)
	}
}

// TestManifestObjectsAreUnstructured checks that decoded objects are what
// apimachinery's own decoding gives: int64 integers, float64 fractions.
func TestManifestObjectsAreUnstructured(t *testing.T) {
	objs, err := DecodeManifests(strings.NewReader("apiVersion: v1\nkind: A\nspec: {i: 3, f: 0.5, big: 9007199254740993}\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	want := &apiunstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "A",
		"spec": map[string]any{"i": int64(3), "f": 0.5, "big": int64(9007199254740993)},
	}}
	if diff := cmp.Diff(want, objs[0]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestManifestsHostileInput checks that inputs built to exhaust a parser
// end in an error for their document, quickly and without a panic.
func TestManifestsHostileInput(t *testing.T) {
	laughs := `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs += n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n"
		prev = n
	}
	tests := []struct {
		name    string
		input   string
		wantErr string
	}{
		{"deep YAML", strings.Repeat("[", 20000) + strings.Repeat("]", 20000), "exceeded max depth"},
		{"deep JSON", strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000), "exceeded max depth"},
		{"alias bomb", laughs, "excessive aliasing"},
		{"lists of lists", strings.Repeat(`{"apiVersion":"v1","kind":"List","items":[`, 200) + strings.Repeat("]}", 200), "lists nested more than 100 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := DecodeManifests(strings.NewReader(tt.input), "x")
			if len(objs) != 0 || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %d objects, error %v; want an error containing %q", len(objs), err, tt.wantErr)
			}
		})
	}
}

// Two YAML flow mappings with no "---" between them: YAMLToJSON reads the
// first and ignores the second, which must not vanish silently.
func TestManifestsFlowMappingsWithoutSeparatorAreAnError(t *testing.T) {
	for _, in := range []string{
		"{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n{apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
		"{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\nkind: Secret\n",
	} {
		objs, err := DecodeManifests(strings.NewReader(in), "m.yaml")
		if err == nil {
			t.Errorf("%q: no error; got %d objects (the rest of the document was dropped)", in, len(objs))
			continue
		}
		if len(objs) != 0 {
			t.Errorf("%q: got %d objects beside the error, want 0", in, len(objs))
		}
		if !strings.Contains(err.Error(), "m.yaml: document 1 (line 1)") {
			t.Errorf("%q: error does not name the document: %v", in, err)
		}
	}
	// A single flow mapping, with a trailing comment, still decodes.
	objs, err := DecodeManifests(strings.NewReader("{apiVersion: v1, kind: ConfigMap} # cm\n"), "m.yaml")
	if err != nil || len(objs) != 1 {
		t.Fatalf("single flow mapping: %d objects, %v", len(objs), err)
	}
}
