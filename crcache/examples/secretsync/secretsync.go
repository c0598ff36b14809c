// Package secretsync is a small operator written the way kubebuilder
// scaffolds them — a typed reconciler on controller-runtime with For, Owns,
// a field index and a metadata-only watch — used to show and measure
// crcache: it runs unmodified on controller-runtime's own cache and on
// crcache, which is one line of the manager's options (see Options).
//
// For every ConfigMap labelled secretsync.kdyn.io/source=true it keeps a
// Secret of the same name plus "-synced", owned by the ConfigMap, whose
// data is the ConfigMap's data. A namespace labelled
// secretsync.kdyn.io/paused=true is left alone until the label goes.
package secretsync

import (
	"context"
	"maps"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

const (
	// SourceLabel marks the ConfigMaps the operator syncs.
	SourceLabel = "secretsync.kdyn.io/source"
	// PausedLabel on a namespace pauses the operator there.
	PausedLabel = "secretsync.kdyn.io/paused"
	// OwnerIndex indexes Secrets by the name of the ConfigMap that
	// controls them.
	OwnerIndex = ".metadata.controller"
	// Suffix is added to a ConfigMap's name to name its Secret.
	Suffix = "-synced"
)

// Reconciler syncs ConfigMaps to Secrets.
type Reconciler struct {
	client.Client
	// Reconciles, Creates and Updates count what the operator did.
	Reconciles, Creates, Updates atomic.Int64
}

// Setup adds the index and the controller to mgr.
func (r *Reconciler) Setup(ctx context.Context, mgr ctrl.Manager) error {
	r.Client = mgr.GetClient()
	err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Secret{}, OwnerIndex, func(o client.Object) []string {
		owner := metav1.GetControllerOf(o)
		if owner == nil || owner.APIVersion != "v1" || owner.Kind != "ConfigMap" {
			return nil
		}
		return []string{owner.Name}
	})
	if err != nil {
		return err
	}
	sources := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[SourceLabel] == "true" })
	return ctrl.NewControllerManagedBy(mgr).
		Named("secretsync").
		For(&corev1.ConfigMap{}, builder.WithPredicates(sources)).
		Owns(&corev1.Secret{}).
		WatchesMetadata(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.sourcesIn)).
		Complete(r)
}

// sourcesIn maps a namespace to the ConfigMaps to sync in it.
func (r *Reconciler) sourcesIn(ctx context.Context, ns client.Object) []ctrl.Request {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := r.List(ctx, &list, client.InNamespace(ns.GetName()), client.MatchingLabels{SourceLabel: "true"}); err != nil {
		return nil
	}
	out := make([]ctrl.Request, 0, len(list.Items))
	for _, cm := range list.Items {
		out = append(out, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}})
	}
	return out
}

// Reconcile brings the Secret of one ConfigMap in line with it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.Reconciles.Add(1)
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Labels[SourceLabel] != "true" || !cm.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	var ns metav1.PartialObjectMetadata
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := r.Get(ctx, client.ObjectKey{Name: cm.Namespace}, &ns); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ns.Labels[PausedLabel] == "true" {
		return ctrl.Result{}, nil
	}
	var owned corev1.SecretList
	if err := r.List(ctx, &owned, client.InNamespace(cm.Namespace), client.MatchingFields{OwnerIndex: cm.Name}); err != nil {
		return ctrl.Result{}, err
	}
	want := make(map[string][]byte, len(cm.Data))
	for k, v := range cm.Data {
		want[k] = []byte(v)
	}
	if len(owned.Items) == 0 {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name + Suffix}, Data: want}
		if err := controllerutil.SetControllerReference(&cm, s, r.Scheme()); err != nil {
			return ctrl.Result{}, err
		}
		err := r.Create(ctx, s)
		if apierrors.IsAlreadyExists(err) {
			// The cache has not seen it yet: its event brings us back.
			return ctrl.Result{}, nil
		}
		if err == nil {
			r.Creates.Add(1)
		}
		return ctrl.Result{}, err
	}
	s := owned.Items[0]
	if maps.EqualFunc(s.Data, want, func(a, b []byte) bool { return string(a) == string(b) }) {
		return ctrl.Result{}, nil
	}
	s.Data = want
	err := r.Update(ctx, &s)
	if err == nil {
		r.Updates.Add(1)
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}
