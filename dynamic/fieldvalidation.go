package dynamic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

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
	return &decoratedInterface{next: c, wrap: func(ri ResourceInterface) ResourceInterface {
		return &fieldValidated{ResourceInterface: ri, directive: directive}
	}}
}

type fieldValidated struct {
	ResourceInterface
	directive string
}

func (f *fieldValidated) set(v *string) {
	if *v == "" {
		*v = f.directive
	}
}

func (f *fieldValidated) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	f.set(&opts.FieldValidation)
	return f.ResourceInterface.Create(ctx, obj, opts, sub...)
}

func (f *fieldValidated) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	f.set(&opts.FieldValidation)
	return f.ResourceInterface.Update(ctx, obj, opts, sub...)
}

func (f *fieldValidated) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	f.set(&opts.FieldValidation)
	return f.ResourceInterface.UpdateStatus(ctx, obj, opts)
}

func (f *fieldValidated) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	f.set(&opts.FieldValidation)
	return f.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
}

func (f *fieldValidated) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	body, err := applyBody(name, obj)
	if err != nil {
		return nil, err
	}
	po := opts.ToPatchOptions()
	po.FieldValidation = f.directive
	return f.ResourceInterface.Patch(ctx, name, types.ApplyPatchType, body, po, sub...)
}

func (f *fieldValidated) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return f.Apply(ctx, name, obj, opts, "status")
}
