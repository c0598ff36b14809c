package edit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

type editOptions struct {
	output            string
	subresource       string
	fieldManager      string
	showManagedFields bool
	validate          *cli.ValidateFlag
	saveConfig        bool
	// windowsLineEndings writes the file with CRLF line endings.
	windowsLineEndings bool
	// outputPatch prints the change of each object edited ("Patch: ...").
	outputPatch bool
	// manifests name the objects to edit by the files of -f or -k.
	manifests cli.ManifestFlags
}

// NewEditCommand returns "kdyn edit": edit objects in $KUBE_EDITOR and
// update them.
func NewEditCommand(f *cli.Factory) *cobra.Command {
	o := &editOptions{}
	cmd := &cobra.Command{
		Use:   "edit (TYPE NAME... | TYPE/NAME... | -f FILENAME) [-o yaml|json] [--subresource status]",
		Short: "Edit a resource on the server",
		Long: `Edit objects in your editor and save them back to the server.

The editor is the command in $KUBE_EDITOR, else $EDITOR, else vi. The
variable is split into words as a shell would ("code --wait",
"emacs -nw", quotes allowed), and the file to edit is added as the last
argument. Each object is edited in its own file (YAML, or JSON with -o json),
written with mode 0600; managedFields are hidden unless --show-managed-fields.

Saving an unchanged object (or an empty file) cancels the edit. A changed
object is sent back with an update (PUT) carrying the resourceVersion it was
read at, so a change made by someone else meanwhile is a conflict rather
than silently overwritten. When the file does not parse, or the server
refuses the update, the editor opens again on your text with the error in a
comment at the top; fix it and save, or exit without changes to give up, in
which case your text is kept in a temporary file whose name is printed.

With -f (or -k), the objects edited are the live objects the manifests name
(kind, name and namespace); what the files say otherwise is not used.`,
		Example: `  # Edit a deployment in the default editor
  kdyn edit deploy/web

  # Edit in JSON, with VS Code
  KUBE_EDITOR="code --wait" kdyn edit cm settings -o json

  # Edit the status of a custom resource
  kdyn edit widget w1 --subresource status

  # Edit the objects a manifest names
  kdyn edit -f app.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error { return runEdit(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.output, "output", "o", "yaml", "The format to edit in: yaml or json.")
	fl.StringVar(&o.subresource, "subresource", "", "Edit this subresource of the object: status or scale.")
	fl.StringVar(&o.fieldManager, "field-manager", "kubectl-edit", "Name of the manager recorded in managedFields for this change.")
	fl.BoolVar(&o.showManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in the file.")
	fl.BoolVar(&o.saveConfig, "save-config", false, "Record the edited configuration in the last-applied-configuration annotation, for a later client-side apply.")
	fl.BoolVar(&o.windowsLineEndings, "windows-line-endings", false, "Write the file to edit with Windows line endings (CRLF).")
	fl.BoolVar(&o.outputPatch, "output-patch", false, "Print the change made to each object, as a JSON merge patch (\"Patch: ...\").")
	o.validate = cli.AddValidateFlag(cmd)
	o.manifests.AddFlags(cmd, "naming the objects to edit")
	return cmd
}

func runEdit(ctx context.Context, f *cli.Factory, o *editOptions, args []string) error {
	if o.output != "yaml" && o.output != "json" {
		return cli.Usagef("the edit format must be yaml or json, not %q", o.output)
	}
	if err := validateObjSubresource(o.subresource); err != nil {
		return err
	}
	if _, err := o.validate.Directive(); err != nil {
		return err
	}
	editor, err := editorCommand(os.Getenv)
	if err != nil {
		return err
	}
	var targets []cli.Target
	switch {
	case o.manifests.Given():
		if len(args) > 0 {
			return cli.FilesAndArgsError()
		}
		targets, err = cli.LiveManifestTargets(ctx, f, &o.manifests, "edit")
	case len(args) == 0:
		return cli.Usagef("%s", cli.NoResourcesMessage)
	case len(args) == 1 && !strings.Contains(args[0], "/"):
		// A type alone: every object of it, as kubectl edits them.
		targets, err = cli.ResolveObjects(ctx, f, args, cli.Selection{All: true})
	default:
		targets, err = cli.NamedTargets(ctx, f, args)
	}
	if err != nil {
		return err
	}
	if len(targets) > 1 {
		return editList(ctx, f, o, editor, targets)
	}
	errs := &cli.ObjErrors{Factory: f}
	for _, t := range targets {
		if err := editOne(ctx, f, o, editor, t); err != nil {
			if len(targets) == 1 {
				return err
			}
			errs.Add(err)
		}
	}
	return errs.Result()
}

// editorCommand returns the editor's argv: $KUBE_EDITOR, else $EDITOR,
// else vi, split into words as a shell would.
func editorCommand(getenv func(string) string) ([]string, error) {
	for _, env := range []string{"KUBE_EDITOR", "EDITOR"} {
		v := getenv(env)
		if strings.TrimSpace(v) == "" {
			continue
		}
		words, err := splitCommandLine(v)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", env, err)
		}
		return words, nil
	}
	return []string{"vi"}, nil
}

// splitCommandLine splits s into words like a POSIX shell, without
// expansions: blanks separate words, '...' is literal, "..." keeps blanks
// and takes \ before " \ $ ` as an escape, and \ outside quotes escapes the
// next character.
func splitCommandLine(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated single quote in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated double quote in %q", s)
			}
			inWord = true
		case '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("trailing backslash in %q", s)
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("no command in %q", s)
	}
	return words, nil
}

// editHeader heads the file to edit, in kubectl's words (EDITOR=cat shows
// it).
const editHeader = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`

// stripEditHeader drops the comment and blank lines at the top of the
// file: kdyn's header and error notes. Comments further down are left to
// the YAML parser.
func stripEditHeader(b []byte) []byte {
	for len(b) > 0 {
		line := b
		rest := []byte(nil)
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, rest = b[:i], b[i+1:]
		}
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' {
			break
		}
		b = rest
	}
	return b
}

// editNotes renders reasons as a comment block for the top of the file.
func editNotes(reasons []string) []byte {
	var buf bytes.Buffer
	for _, r := range reasons {
		for _, l := range strings.Split(strings.TrimRight(r, "\n"), "\n") {
			buf.WriteString("# " + l + "\n")
		}
	}
	buf.WriteString("#\n")
	return buf.Bytes()
}

func encodeEditBody(obj *unstructured.Unstructured, format string) ([]byte, error) {
	if format == "json" {
		b, err := json.MarshalIndent(obj.Object, "", "    ")
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	}
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(b)
}

// decodeEditBody parses the edited YAML or JSON into one object.
func decodeEditBody(b []byte) (*unstructured.Unstructured, error) {
	js, err := utilyaml.ToJSON(b)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := utiljson.Unmarshal(js, &m); err != nil {
		return nil, fmt.Errorf("the file must hold one object: %v", err)
	}
	if m == nil {
		return nil, errors.New("the file must hold one object")
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return nil, errors.New("the object must keep its apiVersion and kind")
	}
	return u, nil
}

// checkEditIdentity refuses edits that would address another object. A
// namespace left out is taken as the original one.
func checkEditIdentity(orig, edited *unstructured.Unstructured) error {
	if orig.GetAPIVersion() != edited.GetAPIVersion() || orig.GetKind() != edited.GetKind() || orig.GetName() != edited.GetName() {
		//lint:ignore ST1005 kubectl's wording, which scripts may match
		return errors.New("At least one of apiVersion, kind and name was changed")
	}
	if edited.GetNamespace() == "" && orig.GetNamespace() != "" {
		edited.SetNamespace(orig.GetNamespace())
	}
	if edited.GetNamespace() != orig.GetNamespace() {
		return fmt.Errorf("the namespace was changed from %q to %q; an object cannot be moved to another namespace", orig.GetNamespace(), edited.GetNamespace())
	}
	return nil
}

// updateFailureNotes explains a failed update in the file's comment block.
func updateFailureNotes(t cli.Target, err error) []string {
	what := fmt.Sprintf("%s %q", t.Match.GVR.GroupResource(), t.Name)
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return []string{what + " could not be updated: " + err.Error()}
	}
	st := se.Status()
	switch {
	case apierrors.IsInvalid(err):
		notes := []string{what + " was not valid:"}
		if st.Details != nil && len(st.Details.Causes) > 0 {
			for _, c := range st.Details.Causes {
				notes = append(notes, fmt.Sprintf("* %s: %s", c.Field, c.Message))
			}
		} else {
			notes = append(notes, "* "+st.Message)
		}
		return notes
	case apierrors.IsConflict(err):
		return []string{
			what + " was changed on the server after this edit began:",
			"* " + st.Message,
			"To write your version over the newer one, delete the resourceVersion line",
			"below and save. To keep the server's version, exit without saving, then",
			"edit again.",
		}
	}
	return []string{what + " could not be updated:", "* " + cli.ErrorMessage(err)}
}

// objectEdit is an edit of one object in the user's editor: the file is
// shown again, with notes, until the edited object passes check and save,
// or the user gives up.
type objectEdit struct {
	f      *cli.Factory
	editor []string
	format string // yaml or json
	header string
	crlf   bool // write the file with Windows line endings
	// check validates the edited object against the shown one (and may
	// complete it); nil accepts any object.
	check func(shown, edited *unstructured.Unstructured) error
	// save stores the edited object; its error is shown in the file by
	// notes, and the editor opens again. With notes nil a failed save ends
	// the edit, the user's text kept (kubectl's apply edit-last-applied).
	save  func(ctx context.Context, edited *unstructured.Unstructured) error
	notes func(err error) []string
	path  string
}

func (s *objectEdit) write(notes []string, body []byte) error {
	var buf bytes.Buffer
	// As kubectl's: JSON is shown without the comment block (the notes
	// of a failed attempt are then only on stderr).
	if s.format != "json" {
		buf.WriteString(s.header)
		if len(notes) > 0 {
			buf.Write(editNotes(notes))
		}
	}
	buf.Write(body)
	b := buf.Bytes()
	if s.crlf {
		b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
	}
	return os.WriteFile(s.path, b, 0o600)
}

// preserve says where the user's text is kept and returns err.
func (s *objectEdit) preserve(err error) error {
	fmt.Fprintf(s.f.Streams.ErrOut, "A copy of your changes has been stored to %q\n", s.path)
	return err
}

func (s *objectEdit) discard() { _ = os.Remove(s.path) }

func (s *objectEdit) runEditor(ctx context.Context) error {
	argv := append(append([]string(nil), s.editor[1:]...), s.path)
	cmd := exec.CommandContext(ctx, s.editor[0], argv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.f.Streams.In, s.f.Streams.Out, s.f.Streams.ErrOut
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("there was a problem with the editor %q: %w", strings.Join(s.editor, " "), err)
	}
	return nil
}

// errEditGivenUp is kubectl's message when the user quits after an error.
//
//lint:ignore ST1005 kubectl's wording, which scripts may match
var errEditGivenUp = errors.New("Edit cancelled, no valid changes were saved.")

// run edits shown until it is saved (true), the edit is cancelled — the
// file saved unchanged or empty, said on stderr as kubectl says it — or
// given up (an error).
func (s *objectEdit) run(ctx context.Context, shown *unstructured.Unstructured) (bool, error) {
	original, err := encodeEditBody(shown, s.format)
	if err != nil {
		return false, err
	}
	file, err := os.CreateTemp("", "kdyn-edit-*."+s.format)
	if err != nil {
		return false, err
	}
	s.path = file.Name()
	file.Close()
	if err := os.Chmod(s.path, 0o600); err != nil {
		s.discard()
		return false, err
	}
	if err := s.write(nil, original); err != nil {
		s.discard()
		return false, err
	}
	cancel := func(why string) (bool, error) {
		s.discard()
		fmt.Fprintln(s.f.Streams.ErrOut, why)
		return false, nil
	}
	var failed []byte // the text of the last attempt that failed
	for {
		if err := s.runEditor(ctx); err != nil {
			return false, s.preserve(err)
		}
		raw, err := os.ReadFile(s.path)
		if err != nil {
			return false, s.preserve(err)
		}
		if s.crlf {
			raw = bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
		}
		edited := stripEditHeader(raw)
		if failed != nil && bytes.Equal(bytes.TrimSpace(edited), bytes.TrimSpace(failed)) {
			return false, s.preserve(errEditGivenUp)
		}
		if bytes.Equal(edited, original) {
			return cancel("Edit cancelled, no changes made.")
		}
		if len(bytes.TrimSpace(edited)) == 0 {
			return cancel("Edit cancelled, saved file was empty.")
		}
		failed = edited
		obj, err := decodeEditBody(edited)
		if err != nil {
			if werr := s.write([]string{"The edited file had a syntax error: " + err.Error()}, edited); werr != nil {
				return false, s.preserve(werr)
			}
			continue
		}
		if s.check != nil {
			if err := s.check(shown, obj); err != nil {
				if werr := s.write([]string{err.Error()}, edited); werr != nil {
					return false, s.preserve(werr)
				}
				continue
			}
		}
		if reflect.DeepEqual(obj.Object, shown.Object) {
			return cancel("Edit cancelled, no changes made.")
		}
		if err := s.save(ctx, obj); err != nil {
			if ctx.Err() != nil || s.notes == nil {
				return false, s.preserve(err)
			}
			cli.PrintError(s.f.Streams.ErrOut, err)
			if werr := s.write(s.notes(err), edited); werr != nil {
				return false, s.preserve(werr)
			}
			continue
		}
		s.discard()
		return true, nil
	}
}

func editOne(ctx context.Context, f *cli.Factory, o *editOptions, editor []string, t cli.Target) error {
	client, err := f.WriteClient(o.fieldManager, cli.DryRunNone)
	if err != nil {
		return err
	}
	if client, err = o.validate.Client(client); err != nil {
		return err
	}
	rc := t.Resource(client)
	sub := cli.Subresources(o.subresource)
	live, err := rc.Get(ctx, t.Name, metav1.GetOptions{}, sub...)
	if err != nil {
		return err
	}
	shown := live
	if !o.showManagedFields {
		shown = kunstructured.StripManagedFields(live)
	}
	s := &objectEdit{
		f: f, editor: editor, format: o.output, header: editHeader, crlf: o.windowsLineEndings,
		check: checkEditIdentity,
		save: func(ctx context.Context, obj *unstructured.Unstructured) error {
			return updateEdited(ctx, f, o, rc, sub, shown, obj)
		},
		notes: func(err error) []string { return updateFailureNotes(t, err) },
	}
	saved, err := s.run(ctx, shown)
	if err != nil || !saved {
		return err
	}
	_, err = fmt.Fprintf(f.Streams.Out, "%s edited\n", t.KindName())
	return err
}

// BeforeCreate is create --edit: obj in the user's editor (YAML, or JSON
// when format is "json"; Windows line endings with crlf). It returns the
// edited object, or false when the user cancelled (saved it unchanged or
// empty), which it has said on stderr as kubectl says it.
func BeforeCreate(ctx context.Context, f *cli.Factory, obj *unstructured.Unstructured, format string, crlf bool) (*unstructured.Unstructured, bool, error) {
	editor, err := editorCommand(os.Getenv)
	if err != nil {
		return nil, false, err
	}
	if format != "json" {
		format = "yaml"
	}
	var edited *unstructured.Unstructured
	s := &objectEdit{
		f: f, editor: editor, format: format, header: editHeader, crlf: crlf,
		save: func(_ context.Context, obj *unstructured.Unstructured) error { edited = obj; return nil },
	}
	saved, err := s.run(ctx, obj)
	return edited, saved, err
}

// updateEdited sends one edited object (shown is what the editor showed).
func updateEdited(ctx context.Context, f *cli.Factory, o *editOptions, rc dynamic.ResourceInterface, sub []string, shown, obj *unstructured.Unstructured) error {
	if o.saveConfig {
		// As kubectl edit --save-config: the edited object itself.
		if err := cli.SetLastApplied(obj); err != nil {
			return err
		}
	}
	if _, err := rc.Update(ctx, obj, metav1.UpdateOptions{}, sub...); err != nil {
		return err
	}
	if o.outputPatch {
		patch, err := kunstructured.MergePatch(shown, obj)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.Streams.Out, "Patch: %s\n", patch)
	}
	return nil
}

// editList edits several objects in one file, as a List (kubectl's form
// for them), and updates those that changed, in order; an object the
// server refuses reopens the file with the error, the updates before it
// kept.
func editList(ctx context.Context, f *cli.Factory, o *editOptions, editor []string, targets []cli.Target) error {
	client, err := f.WriteClient(o.fieldManager, cli.DryRunNone)
	if err != nil {
		return err
	}
	if client, err = o.validate.Client(client); err != nil {
		return err
	}
	sub := cli.Subresources(o.subresource)
	items := make([]any, len(targets))
	for i, t := range targets {
		live, err := t.Resource(client).Get(ctx, t.Name, metav1.GetOptions{}, sub...)
		if err != nil {
			return err
		}
		if !o.showManagedFields {
			live = kunstructured.StripManagedFields(live)
		}
		items[i] = live.Object
	}
	shown := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": items}}
	done := make([]bool, len(targets))
	var failed int
	s := &objectEdit{
		f: f, editor: editor, format: o.output, header: editHeader, crlf: o.windowsLineEndings,
		check: checkListIdentity,
		save: func(ctx context.Context, edited *unstructured.Unstructured) error {
			after := edited.Object["items"].([]any)
			for i, t := range targets {
				was := &unstructured.Unstructured{Object: items[i].(map[string]any)}
				now := &unstructured.Unstructured{Object: after[i].(map[string]any)}
				if done[i] || reflect.DeepEqual(was.Object, now.Object) {
					continue
				}
				if err := updateEdited(ctx, f, o, t.Resource(client), sub, was, now); err != nil {
					failed = i
					return err
				}
				done[i] = true
				fmt.Fprintf(f.Streams.Out, "%s edited\n", t.KindName())
			}
			return nil
		},
		notes: func(err error) []string { return updateFailureNotes(targets[failed], err) },
	}
	_, err = s.run(ctx, shown)
	return err
}

// checkListIdentity refuses a List edit that adds, removes or reorders
// objects, or changes one's identity (checkEditIdentity).
func checkListIdentity(shown, edited *unstructured.Unstructured) error {
	before, _ := shown.Object["items"].([]any)
	after, ok := edited.Object["items"].([]any)
	if edited.GetKind() != "List" || !ok || len(after) != len(before) {
		//lint:ignore ST1005 the wording of the single-object edit
		return errors.New("At least one of apiVersion, kind and name was changed")
	}
	for i := range before {
		b, bok := before[i].(map[string]any)
		a, aok := after[i].(map[string]any)
		if !bok || !aok {
			return errors.New("the List's items must be objects")
		}
		if err := checkEditIdentity(&unstructured.Unstructured{Object: b}, &unstructured.Unstructured{Object: a}); err != nil {
			return err
		}
	}
	return nil
}
