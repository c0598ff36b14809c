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
	return &decoratedInterface{next: c, wrap: func(ri ResourceInterface) ResourceInterface {
		return &fieldManaged{ResourceInterface: ri, manager: manager}
	}}
}

type fieldManaged struct {
	ResourceInterface
	manager string
}

func (f *fieldManaged) set(m *string) {
	if *m == "" {
		*m = f.manager
	}
}

func (f *fieldManaged) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	f.set(&opts.FieldManager)
	return f.ResourceInterface.Create(ctx, obj, opts, sub...)
}

func (f *fieldManaged) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	f.set(&opts.FieldManager)
	return f.ResourceInterface.Update(ctx, obj, opts, sub...)
}

func (f *fieldManaged) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	f.set(&opts.FieldManager)
	return f.ResourceInterface.UpdateStatus(ctx, obj, opts)
}

func (f *fieldManaged) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	f.set(&opts.FieldManager)
	return f.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
}

func (f *fieldManaged) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	f.set(&opts.FieldManager)
	return f.ResourceInterface.Apply(ctx, name, obj, opts, sub...)
}

func (f *fieldManaged) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	f.set(&opts.FieldManager)
	return f.ResourceInterface.ApplyStatus(ctx, name, obj, opts)
}
