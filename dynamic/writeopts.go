package dynamic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// WithFieldManager returns a client that sets FieldManager to manager on
// every Create, Update, Patch and Apply whose options leave it empty, so a
// controller's writes are always attributed to it in managedFields.
func WithFieldManager(c Interface, manager string) Interface {
	return withWriteOptions(c, writeOptions{fieldManager: manager})
}

// WithFieldValidation returns a client that sends fieldValidation=directive
// (metav1.FieldValidationStrict, FieldValidationWarn or
// FieldValidationIgnore) on every Create, Update, Patch and Apply whose
// options leave it empty: with Strict the server refuses an object with an
// unknown or duplicate field, naming it; with Warn it stores the object
// without the field and says so in a warning; with Ignore it drops the
// field silently. The server's own default, when nothing is sent, is Warn.
// kubectl sends Strict unless told otherwise (--validate).
//
// metav1.ApplyOptions has no FieldValidation field, so Apply and
// ApplyStatus are sent as the equivalent Patch with the apply patch type
// (the same request Apply sends, plus the parameter). An empty directive
// returns c unchanged.
func WithFieldValidation(c Interface, directive string) Interface {
	if directive == "" {
		return c
	}
	return withWriteOptions(c, writeOptions{fieldValidation: directive})
}

// WithDryRun returns a client whose every write (Create, Update, Patch,
// Apply, Delete, DeleteCollection) is sent with dryRun=All: the server
// validates, admits and answers as if it had written, and changes nothing.
// Reads are unaffected.
func WithDryRun(c Interface) Interface {
	return withWriteOptions(c, writeOptions{dryRun: true})
}

// writeOptions are what a decorated client puts in the options of every
// write: a field manager and a field validation directive where the
// caller left them empty, and dryRun=All always.
type writeOptions struct {
	fieldManager    string
	fieldValidation string
	dryRun          bool
}

func withWriteOptions(c Interface, w writeOptions) Interface {
	return &decoratedInterface{next: c, wrap: func(ri ResourceInterface) ResourceInterface {
		return &writeOptioned{ResourceInterface: ri, w: w}
	}}
}

type writeOptioned struct {
	ResourceInterface
	w writeOptions
}

// fill sets the fields of one write's options.
func (o *writeOptioned) fill(manager, validation *string, dryRun *[]string) {
	if *manager == "" {
		*manager = o.w.fieldManager
	}
	if validation != nil && *validation == "" {
		*validation = o.w.fieldValidation
	}
	if o.w.dryRun {
		*dryRun = []string{metav1.DryRunAll}
	}
}

func (o *writeOptioned) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	o.fill(&opts.FieldManager, &opts.FieldValidation, &opts.DryRun)
	return o.ResourceInterface.Create(ctx, obj, opts, sub...)
}

func (o *writeOptioned) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	o.fill(&opts.FieldManager, &opts.FieldValidation, &opts.DryRun)
	return o.ResourceInterface.Update(ctx, obj, opts, sub...)
}

func (o *writeOptioned) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	o.fill(&opts.FieldManager, &opts.FieldValidation, &opts.DryRun)
	return o.ResourceInterface.UpdateStatus(ctx, obj, opts)
}

func (o *writeOptioned) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	o.fill(&opts.FieldManager, &opts.FieldValidation, &opts.DryRun)
	return o.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
}

func (o *writeOptioned) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	o.fill(&opts.FieldManager, nil, &opts.DryRun)
	if o.w.fieldValidation == "" {
		return o.ResourceInterface.Apply(ctx, name, obj, opts, sub...)
	}
	// ApplyOptions cannot carry fieldValidation: send the same request as
	// a Patch, which can.
	body, err := applyBody(name, obj)
	if err != nil {
		return nil, err
	}
	po := opts.ToPatchOptions()
	po.FieldValidation = o.w.fieldValidation
	return o.ResourceInterface.Patch(ctx, name, types.ApplyPatchType, body, po, sub...)
}

func (o *writeOptioned) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	if o.w.fieldValidation == "" {
		o.fill(&opts.FieldManager, nil, &opts.DryRun)
		return o.ResourceInterface.ApplyStatus(ctx, name, obj, opts)
	}
	return o.Apply(ctx, name, obj, opts, "status")
}

func (o *writeOptioned) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	if o.w.dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return o.ResourceInterface.Delete(ctx, name, opts, sub...)
}

func (o *writeOptioned) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	if o.w.dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return o.ResourceInterface.DeleteCollection(ctx, opts, listOpts)
}
