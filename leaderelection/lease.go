package leaderelection

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/lease"
)

// lock reads and writes one Lease, with optimistic concurrency: an update
// carries the resourceVersion of the Lease as last read or written, so it
// fails with a Conflict when anyone else wrote it since. It is used by one
// goroutine at a time.
type lock struct {
	leases    dynamic.ResourceInterface
	namespace string
	name      string
	// timeout bounds each request (Config.RequestTimeout).
	timeout time.Duration
	// lease is the Lease as last read or written; nil before the first
	// read.
	lease *unstructured.Unstructured
}

func newLock(client dynamic.Interface, namespace, name string, timeout time.Duration) *lock {
	return &lock{leases: client.Resource(lease.GVR).Namespace(namespace), namespace: namespace, name: name, timeout: timeout}
}

func (l *lock) describe() string { return l.namespace + "/" + l.name }

// get reads the Lease and returns its record. A server error is returned
// wrapped, so apierrors.IsNotFound and the like work on it.
func (l *lock) get(ctx context.Context) (lease.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	u, err := l.leases.Get(ctx, l.name, metav1.GetOptions{})
	if err != nil {
		return lease.Record{}, fmt.Errorf("leaderelection: get lease %s: %w", l.describe(), err)
	}
	r, err := lease.Read(u)
	if err != nil {
		return lease.Record{}, fmt.Errorf("leaderelection: lease %s: %w", l.describe(), err)
	}
	l.lease = u
	return r, nil
}

// create creates the Lease holding r.
func (l *lock) create(ctx context.Context, r lease.Record) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": lease.GVR.GroupVersion().String(),
		"kind":       "Lease",
		"metadata":   map[string]any{"name": l.name, "namespace": l.namespace},
	}}
	lease.Write(u, r)
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	created, err := l.leases.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("leaderelection: create lease %s: %w", l.describe(), err)
	}
	l.lease = created
	return nil
}

// update writes r over the Lease as last read or written.
func (l *lock) update(ctx context.Context, r lease.Record) error {
	if l.lease == nil {
		return fmt.Errorf("leaderelection: update lease %s: not read yet", l.describe())
	}
	u := l.lease.DeepCopy()
	lease.Write(u, r)
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	updated, err := l.leases.Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("leaderelection: update lease %s: %w", l.describe(), err)
	}
	l.lease = updated
	return nil
}
