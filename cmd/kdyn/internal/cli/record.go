package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/dynamic"
)

// ChangeCauseAnnotation is the annotation --record writes: the command
// line that changed the object (kubectl's "kubernetes.io/change-cause",
// which rollout history shows).
const ChangeCauseAnnotation = "kubernetes.io/change-cause"

// RecordFlag is one command's --record flag (deprecated in kubectl, and
// still accepted by it and by scripts).
type RecordFlag struct {
	on  bool
	cmd *cobra.Command
	// cause is the change cause, worked out once (sync.OnceValue) from
	// the command line: every object a command writes gets the same.
	cause func() string
}

// AddRecordFlag adds kubectl's --record flag to cmd: with it, the objects
// the command writes carry the command line in ChangeCauseAnnotation.
func AddRecordFlag(cmd *cobra.Command) *RecordFlag {
	r := &RecordFlag{cmd: cmd}
	r.cause = sync.OnceValue(r.changeCause)
	cmd.Flags().BoolVar(&r.on, "record", false, "Record current kubectl command in the resource annotation. If set to false, do not record the command. If set to true, record the command. If not set, default to updating the existing annotation value only if one already exists.")
	_ = cmd.Flags().MarkDeprecated("record", "--record will be removed in the future")
	return r
}

// Cause returns the change cause to record, "" without --record: as
// kubectl writes it, the program's base name, the positional arguments,
// then every flag of the command line as --name=value in the order given
// (a flag marked classified shows CLASSIFIED).
func (r *RecordFlag) Cause() string {
	if r == nil || !r.on || len(os.Args) == 0 {
		return ""
	}
	return r.cause()
}

// changeCause is Cause, worked out from the command line.
func (r *RecordFlag) changeCause() string {
	// A parse of its own, over stand-ins for the command's flags: the
	// flags keep the values of the real parse (a repeated -f is not
	// appended twice) and no deprecation is printed again.
	fs := pflag.NewFlagSet(r.cmd.Name(), pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	r.cmd.Flags().VisitAll(func(f *pflag.Flag) {
		fs.AddFlag(&pflag.Flag{Name: f.Name, Shorthand: f.Shorthand, NoOptDefVal: f.NoOptDefVal, Annotations: f.Annotations, Value: &textValue{typ: f.Value.Type()}})
	})
	var flags strings.Builder
	err := fs.ParseAll(os.Args[1:], func(f *pflag.Flag, value string) error {
		flags.WriteString(" --" + f.Name + "=")
		if len(f.Annotations["classified"]) > 0 {
			value = "CLASSIFIED"
		}
		flags.WriteString(value)
		return nil
	})
	if err != nil {
		return ""
	}
	cause := filepath.Base(os.Args[0])
	if args := fs.Args(); len(args) > 0 {
		cause += " " + strings.Join(args, " ")
	}
	return cause + flags.String()
}

// Annotate sets the change cause on obj (nothing without --record).
func (r *RecordFlag) Annotate(obj *unstructured.Unstructured) {
	SetChangeCause(obj, r.Cause())
}

// AnnotateEntries sets the change cause on the object of every manifest
// entry (nothing without --record).
func (r *RecordFlag) AnnotateEntries(entries []*ManifestEntry) {
	cause := r.Cause()
	for _, e := range entries {
		SetChangeCause(e.obj, cause)
	}
}

// SetChangeCause writes cause in obj's ChangeCauseAnnotation (nothing for
// an empty cause).
func SetChangeCause(obj *unstructured.Unstructured, cause string) {
	if cause == "" || obj == nil {
		return
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[ChangeCauseAnnotation] = cause
	obj.SetAnnotations(ann)
}

// textValue stands in for a flag's value in Cause's parse.
type textValue struct{ typ, s string }

func (v *textValue) String() string     { return v.s }
func (v *textValue) Set(s string) error { v.s = s; return nil }
func (v *textValue) Type() string       { return v.typ }

// Patch writes the change cause to the object name of rc with a merge
// patch of its own, as kubectl does after a patch or a scale; it returns
// nil and sends nothing without --record.
func (r *RecordFlag) Patch(ctx context.Context, rc dynamic.ResourceInterface, name string, opts metav1.PatchOptions) (*unstructured.Unstructured, error) {
	cause := r.Cause()
	if cause == "" {
		return nil, nil
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{ChangeCauseAnnotation: cause}}})
	if err != nil {
		return nil, err
	}
	return rc.Patch(ctx, name, types.MergePatchType, body, opts)
}
