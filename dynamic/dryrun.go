package dynamic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// WithDryRun returns a client whose every write (Create, Update, Patch,
// Apply, Delete, DeleteCollection) is sent with dryRun=All: the server
// validates, admits and answers as if it had written, and changes nothing.
// Reads are unaffected.
func WithDryRun(c Interface) Interface {
	return &decoratedInterface{next: c, wrap: func(ri ResourceInterface) ResourceInterface {
		return &dryRun{ResourceInterface: ri}
	}}
}

type dryRun struct{ ResourceInterface }

func (d *dryRun) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	opts.DryRun = []string{metav1.DryRunAll}
	return d.ResourceInterface.Create(ctx, obj, opts, sub...)
}

func (d *dryRun) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	opts.DryRun = []string{metav1.DryRunAll}
	return d.ResourceInterface.Update(ctx, obj, opts, sub...)
}

func (d *dryRun) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	opts.DryRun = []string{metav1.DryRunAll}
	return d.ResourceInterface.UpdateStatus(ctx, obj, opts)
}

func (d *dryRun) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	opts.DryRun = []string{metav1.DryRunAll}
	return d.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
}

func (d *dryRun) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	opts.DryRun = []string{metav1.DryRunAll}
	return d.ResourceInterface.Apply(ctx, name, obj, opts, sub...)
}

func (d *dryRun) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	opts.DryRun = []string{metav1.DryRunAll}
	return d.ResourceInterface.ApplyStatus(ctx, name, obj, opts)
}

func (d *dryRun) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	opts.DryRun = []string{metav1.DryRunAll}
	return d.ResourceInterface.Delete(ctx, name, opts, sub...)
}

func (d *dryRun) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	opts.DryRun = []string{metav1.DryRunAll}
	return d.ResourceInterface.DeleteCollection(ctx, opts, listOpts)
}
