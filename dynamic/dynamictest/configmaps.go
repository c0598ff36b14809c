package dynamictest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func (s *suite) testCRUD(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("crud")
	created := s.create(t, ctx, s.configMap(name, "", nil, map[string]string{"a": "1"}))
	if created.GetName() != name || created.GetNamespace() != s.env.Namespace {
		t.Fatalf("Create returned %s/%s, want %s/%s", created.GetNamespace(), created.GetName(), s.env.Namespace, name)
	}
	if created.GetKind() != "ConfigMap" || created.GetAPIVersion() != "v1" {
		t.Errorf("Create returned apiVersion %q kind %q, want v1 ConfigMap", created.GetAPIVersion(), created.GetKind())
	}
	wantData(t, "Create", created, map[string]string{"a": "1"})

	got := s.get(t, ctx, name)
	if got.GetUID() != created.GetUID() || got.GetResourceVersion() != created.GetResourceVersion() {
		t.Errorf("Get: uid %q rv %q, want the created %q %q", got.GetUID(), got.GetResourceVersion(), created.GetUID(), created.GetResourceVersion())
	}
	wantData(t, "Get", got, map[string]string{"a": "1"})

	got.Object["data"] = map[string]any{"a": "2", "b": "3"}
	updated, err := s.configMaps().Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	wantData(t, "Update", updated, map[string]string{"a": "2", "b": "3"})
	if updated.GetResourceVersion() == created.GetResourceVersion() {
		t.Errorf("Update kept resourceVersion %q", updated.GetResourceVersion())
	}
	if updated.GetUID() != created.GetUID() {
		t.Errorf("Update changed uid from %q to %q", created.GetUID(), updated.GetUID())
	}
	wantData(t, "Get after Update", s.get(t, ctx, name), map[string]string{"a": "2", "b": "3"})

	if err := s.configMaps().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err = s.configMaps().Get(ctx, name, metav1.GetOptions{})
	wantStatus(t, "Get after Delete", err, metav1.StatusReasonNotFound)
}

func (s *suite) testSystemFields(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("sys")
	obj := s.configMap(name, "", nil, nil)
	obj.SetUID("not-the-servers-uid")
	obj.SetCreationTimestamp(metav1.NewTime(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)))
	before := time.Now().Add(-time.Hour)
	created := s.create(t, ctx, obj)

	uid := string(created.GetUID())
	if uid == "" || uid == "not-the-servers-uid" {
		t.Errorf("uid = %q, want one the server chose", uid)
	}
	if len(uid) != 36 || strings.Count(uid, "-") != 4 {
		t.Errorf("uid = %q, want a UUID", uid)
	}
	ts := created.GetCreationTimestamp()
	if ts.Time.Before(before) || ts.Time.After(time.Now().Add(time.Hour)) {
		t.Errorf("creationTimestamp = %v, want about now (the client's was ignored)", ts)
	}
	if created.GetResourceVersion() == "" {
		t.Error("resourceVersion is empty")
	}
	if created.GetDeletionTimestamp() != nil {
		t.Errorf("deletionTimestamp = %v on a new object", created.GetDeletionTimestamp())
	}

	// An update may not change them.
	got := s.get(t, ctx, name)
	got.SetCreationTimestamp(metav1.NewTime(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)))
	got.Object["data"] = map[string]any{"k": "v"}
	updated, err := s.configMaps().Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if uts := updated.GetCreationTimestamp(); !uts.Equal(&ts) {
		t.Errorf("Update changed creationTimestamp from %v to %v", ts, updated.GetCreationTimestamp())
	}
	got = s.get(t, ctx, name)
	got.SetUID(types.UID("00000000-0000-4000-8000-000000000000"))
	_, err = s.configMaps().Update(ctx, got, metav1.UpdateOptions{})
	wantStatus(t, "Update with another uid", err, metav1.StatusReasonConflict)
}

func (s *suite) testCreateWithResourceVersion(t *testing.T) {
	ctx := s.ctx(t)
	obj := s.configMap(s.name("rvset"), "", nil, nil)
	obj.SetResourceVersion("12345")
	// The server's storage refuses it, and the server sends that on as a
	// 500 without a reason.
	_, err := s.configMaps().Create(ctx, obj, metav1.CreateOptions{})
	st := wantCode(t, "Create with resourceVersion set", err, http.StatusInternalServerError)
	if !strings.Contains(st.Message, "resourceVersion should not be set") {
		t.Errorf("message %q, want it to say resourceVersion should not be set", st.Message)
	}
	_, err = s.configMaps().Get(ctx, obj.GetName(), metav1.GetOptions{})
	wantStatus(t, "Get after the refused Create", err, metav1.StatusReasonNotFound)
}

func (s *suite) testGenerateName(t *testing.T) {
	ctx := s.ctx(t)
	prefix := "kdyn-dt-" + s.run + "-gen-"
	seen := map[string]bool{}
	for range 3 {
		obj := s.configMap("", "", nil, nil)
		obj.SetGenerateName(prefix)
		created := s.create(t, ctx, obj)
		name := created.GetName()
		if !strings.HasPrefix(name, prefix) || len(name) != len(prefix)+5 {
			t.Errorf("generated name %q, want %q and 5 characters", name, prefix)
		}
		if created.GetGenerateName() != prefix {
			t.Errorf("generateName = %q, want %q kept", created.GetGenerateName(), prefix)
		}
		if seen[name] {
			t.Errorf("generated name %q twice", name)
		}
		seen[name] = true
		s.get(t, ctx, name)
	}
}

func (s *suite) testNameRequired(t *testing.T) {
	ctx := s.ctx(t)
	_, err := s.configMaps().Create(ctx, s.configMap("", "", nil, nil), metav1.CreateOptions{})
	st := wantStatus(t, "Create without name", err, metav1.StatusReasonInvalid)
	if !strings.Contains(st.Message, "name or generateName is required") {
		t.Errorf("message %q, want it to say name or generateName is required", st.Message)
	}
}

func (s *suite) testAlreadyExists(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("dup")
	first := s.create(t, ctx, s.configMap(name, "", nil, map[string]string{"v": "first"}))
	_, err := s.configMaps().Create(ctx, s.configMap(name, "", nil, map[string]string{"v": "second"}), metav1.CreateOptions{})
	st := wantStatus(t, "second Create", err, metav1.StatusReasonAlreadyExists)
	wantDetails(t, "second Create", st, "configmaps", name)
	if !apierrors.IsAlreadyExists(err) {
		t.Errorf("apierrors.IsAlreadyExists(%v) = false", err)
	}
	got := s.get(t, ctx, name)
	wantData(t, "Get after the failed Create", got, map[string]string{"v": "first"})
	if got.GetUID() != first.GetUID() {
		t.Errorf("uid changed from %q to %q", first.GetUID(), got.GetUID())
	}
}

func (s *suite) testNotFound(t *testing.T) {
	name := s.name("missing")
	check := func(t *testing.T, err error) {
		t.Helper()
		st := wantStatus(t, t.Name(), err, metav1.StatusReasonNotFound)
		wantDetails(t, t.Name(), st, "configmaps", name)
		if !apierrors.IsNotFound(err) {
			t.Errorf("apierrors.IsNotFound(%v) = false", err)
		}
	}
	t.Run("Get", func(t *testing.T) {
		_, err := s.configMaps().Get(s.ctx(t), name, metav1.GetOptions{})
		check(t, err)
	})
	t.Run("Update", func(t *testing.T) {
		_, err := s.configMaps().Update(s.ctx(t), s.configMap(name, "", nil, nil), metav1.UpdateOptions{})
		check(t, err)
	})
	t.Run("Delete", func(t *testing.T) {
		check(t, s.configMaps().Delete(s.ctx(t), name, metav1.DeleteOptions{}))
	})
	t.Run("Patch", func(t *testing.T) {
		_, err := s.configMaps().Patch(s.ctx(t), name, types.MergePatchType, []byte(`{"data":{"a":"1"}}`), metav1.PatchOptions{})
		check(t, err)
	})
	t.Run("Update did not create", func(t *testing.T) {
		_, err := s.configMaps().Get(s.ctx(t), name, metav1.GetOptions{})
		check(t, err)
	})
}

func (s *suite) testConflict(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("conflict")
	s.create(t, ctx, s.configMap(name, "", nil, map[string]string{"v": "0"}))
	a := s.get(t, ctx, name)
	b := a.DeepCopy()

	a.Object["data"] = map[string]any{"v": "a"}
	if _, err := s.configMaps().Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("first Update: %v", err)
	}
	b.Object["data"] = map[string]any{"v": "b"}
	_, err := s.configMaps().Update(ctx, b, metav1.UpdateOptions{})
	st := wantStatus(t, "Update with a stale resourceVersion", err, metav1.StatusReasonConflict)
	wantDetails(t, "Update with a stale resourceVersion", st, "configmaps", name)
	if !apierrors.IsConflict(err) {
		t.Errorf("apierrors.IsConflict(%v) = false", err)
	}
	wantData(t, "Get after the conflict", s.get(t, ctx, name), map[string]string{"v": "a"})
}

func (s *suite) testUnconditionalUpdate(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("uncond")
	created := s.create(t, ctx, s.configMap(name, "", nil, map[string]string{"v": "0"}))
	// Someone else writes in between.
	other := s.get(t, ctx, name)
	other.Object["data"] = map[string]any{"v": "other"}
	if _, err := s.configMaps().Update(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	blind := s.configMap(name, "", nil, map[string]string{"v": "blind"})
	if blind.GetResourceVersion() != "" {
		t.Fatal("the blind update has a resourceVersion")
	}
	updated, err := s.configMaps().Update(ctx, blind, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update with empty resourceVersion: %v", err)
	}
	if rv(t, updated) <= rv(t, created) {
		t.Errorf("resourceVersion %s after the update, want more than %s", updated.GetResourceVersion(), created.GetResourceVersion())
	}
	if updated.GetUID() != created.GetUID() {
		t.Errorf("uid changed from %q to %q", created.GetUID(), updated.GetUID())
	}
	wantData(t, "Get after the blind update", s.get(t, ctx, name), map[string]string{"v": "blind"})
}

func (s *suite) testResourceVersionIncreases(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("rv")
	created := s.create(t, ctx, s.configMap(name, "", nil, map[string]string{"n": "0"}))
	got := s.get(t, ctx, name)
	got.Object["data"] = map[string]any{"n": "1"}
	updated, err := s.configMaps().Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	patched, err := s.configMaps().Patch(ctx, name, types.MergePatchType, []byte(`{"data":{"n":"2"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("Patch: %v", err)
	}
	r0, r1, r2 := rv(t, created), rv(t, updated), rv(t, patched)
	if r0 >= r1 || r1 >= r2 {
		t.Errorf("resourceVersions create %d, update %d, patch %d: want increasing", r0, r1, r2)
	}
	list, err := s.configMaps().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if lr := rv(t, list); lr < r2 {
		t.Errorf("list resourceVersion %d, want at least the last write's %d", lr, r2)
	}
}

func (s *suite) testNoOpWrites(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("noop")
	s.create(t, ctx, s.configMap(name, "", nil, map[string]string{"a": "1"}))
	got := s.get(t, ctx, name)
	same, err := s.configMaps().Update(ctx, got.DeepCopy(), metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update with no change: %v", err)
	}
	if same.GetResourceVersion() != got.GetResourceVersion() {
		t.Errorf("Update with no change: resourceVersion %s, want %s kept", same.GetResourceVersion(), got.GetResourceVersion())
	}
	patched, err := s.configMaps().Patch(ctx, name, types.MergePatchType, []byte(`{"data":{"a":"1"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("Patch with no change: %v", err)
	}
	if patched.GetResourceVersion() != got.GetResourceVersion() {
		t.Errorf("Patch with no change: resourceVersion %s, want %s kept", patched.GetResourceVersion(), got.GetResourceVersion())
	}
}

func (s *suite) testNamespaceMismatch(t *testing.T) {
	ctx := s.ctx(t)
	other := "kdyn-dt-" + s.run + "-elsewhere"
	check := func(what string, err error) {
		t.Helper()
		st := wantStatus(t, what, err, metav1.StatusReasonBadRequest)
		if !strings.Contains(st.Message, "does not match the namespace") {
			t.Errorf("%s: message %q, want it to say the namespaces do not match", what, st.Message)
		}
	}
	name := s.name("nsmismatch")
	obj := s.configMap(name, "", nil, nil)
	obj.SetNamespace(other)
	_, err := s.configMaps().Create(ctx, obj, metav1.CreateOptions{})
	check("Create", err)
	_, err = s.configMaps().Get(ctx, name, metav1.GetOptions{})
	wantStatus(t, "Get after the refused Create", err, metav1.StatusReasonNotFound)

	created := s.create(t, ctx, s.configMap(name, "", nil, nil))
	created.SetNamespace(other)
	_, err = s.configMaps().Update(ctx, created, metav1.UpdateOptions{})
	check("Update", err)

	// The object's own namespace, when it matches, is fine.
	same := s.configMap(s.name("nsmatch"), "", nil, nil)
	same.SetNamespace(s.env.Namespace)
	if out := s.create(t, ctx, same); out.GetNamespace() != s.env.Namespace {
		t.Errorf("namespace %q, want %q", out.GetNamespace(), s.env.Namespace)
	}
}

func (s *suite) testDeletePreconditions(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("precond")
	created := s.create(t, ctx, s.configMap(name, "", nil, nil))
	got := s.get(t, ctx, name)
	got.Object["data"] = map[string]any{"x": "y"}
	current, err := s.configMaps().Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}

	staleRV := created.GetResourceVersion()
	err = s.configMaps().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &staleRV}})
	wantStatus(t, "Delete with a stale resourceVersion precondition", err, metav1.StatusReasonConflict)
	wrongUID := types.UID("00000000-0000-4000-8000-000000000000")
	err = s.configMaps().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
	wantStatus(t, "Delete with a wrong uid precondition", err, metav1.StatusReasonConflict)
	s.get(t, ctx, name) // still there

	uid, curRV := current.GetUID(), current.GetResourceVersion()
	if err := s.configMaps().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &curRV}}); err != nil {
		t.Fatalf("Delete with matching preconditions: %v", err)
	}
	_, err = s.configMaps().Get(ctx, name, metav1.GetOptions{})
	wantStatus(t, "Get after Delete", err, metav1.StatusReasonNotFound)
}

func (s *suite) testFinalizers(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("fin")
	const finalizer = "dynamictest.kdyn.dev/hold"
	obj := s.configMap(name, "", nil, nil)
	obj.SetFinalizers([]string{finalizer})
	s.create(t, ctx, obj)
	t.Cleanup(func() { s.dropFinalizers(t, name) })

	if err := s.configMaps().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	held := s.get(t, ctx, name)
	if held.GetDeletionTimestamp() == nil {
		t.Fatal("an object with a finalizer has no deletionTimestamp after Delete")
	}
	if fs := held.GetFinalizers(); len(fs) != 1 || fs[0] != finalizer {
		t.Errorf("finalizers = %v, want [%s]", fs, finalizer)
	}
	// Deleting again changes nothing.
	if err := s.configMaps().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if again := s.get(t, ctx, name); again.GetResourceVersion() != held.GetResourceVersion() {
		t.Errorf("second Delete changed resourceVersion from %s to %s", held.GetResourceVersion(), again.GetResourceVersion())
	}

	more := held.DeepCopy()
	more.SetFinalizers([]string{finalizer, "dynamictest.kdyn.dev/more"})
	_, err := s.configMaps().Update(ctx, more, metav1.UpdateOptions{})
	wantStatus(t, "adding a finalizer to an object being deleted", err, metav1.StatusReasonInvalid)

	held.SetFinalizers(nil)
	if _, err := s.configMaps().Update(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("Update removing the finalizer: %v", err)
	}
	s.eventually(t, ctx, "the object is gone once its finalizer is", func() (bool, error) {
		_, err := s.configMaps().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// dropFinalizers lets a test's object go if the test failed half-way.
func (s *suite) dropFinalizers(t *testing.T, name string) {
	ctx := s.cleanupCtx(t)
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	_, err := s.configMaps().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Logf("dropping the finalizers of %q: %v", name, err)
	}
}

func (s *suite) testDeleteCollection(t *testing.T) {
	ctx := s.ctx(t)
	test := s.testID()
	var doomed []string
	for i := range 3 {
		name := s.name("dc" + string(rune('a'+i)))
		doomed = append(doomed, name)
		s.create(t, ctx, s.configMap(name, test, map[string]string{"doomed": "yes"}, nil))
	}
	kept := s.name("dckeep")
	s.create(t, ctx, s.configMap(kept, test, map[string]string{"doomed": "no"}, nil))

	err := s.configMaps().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: testLabel + "=" + test + ",doomed=yes"})
	if err != nil {
		t.Fatalf("DeleteCollection: %v", err)
	}
	for _, name := range doomed {
		_, err := s.configMaps().Get(ctx, name, metav1.GetOptions{})
		wantStatus(t, "Get "+name+" after DeleteCollection", err, metav1.StatusReasonNotFound)
	}
	list, err := s.configMaps().List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + test})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if got := names(list.Items); len(got) != 1 || got[0] != kept {
		t.Errorf("left after DeleteCollection: %v, want [%s]", got, kept)
	}
}
