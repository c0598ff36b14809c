package shard_test

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/shard"
)

// The server's choice of objects for a shard selector is exactly the
// client's hash check, on 3,000 objects and every range of 4- and 3-way
// splits and of a ring's assignment: kdyn's client-side filter is
// bit-identical to the server's.
func TestClientHashMatchesTheServer(t *testing.T) {
	env := testenv.Shared(t)
	c := client(t, env)
	ns := newNamespace(t, c, "shard-hash")
	createConfigMaps(t, c, ns, 3000)
	all, err := c.Resource(cmGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := shard.Assign([]shard.Node{{Identity: "a"}, {Identity: "b"}, {Identity: "c"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	splits := map[string][][]informer.HashRange{"ring": {ring["a"], ring["b"], ring["c"]}}
	for _, n := range []int{3, 4} {
		for _, r := range informer.SplitRanges(n) {
			splits[fmt.Sprint(n, "-way")] = append(splits[fmt.Sprint(n, "-way")], []informer.HashRange{r})
		}
	}
	for _, key := range []informer.ShardKey{informer.ShardByUID, informer.ShardByNamespace} {
		for name, parts := range splits {
			seen := map[string]int{}
			for _, ranges := range parts {
				s, err := informer.NewShard(key, ranges...)
				if err != nil {
					t.Fatal(err)
				}
				l, err := c.Resource(cmGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{ShardSelector: s.Selector()})
				if err != nil {
					t.Fatalf("%s %s (%d ranges): %v", key, name, len(ranges), err)
				}
				if echo, _, _ := unstructured.NestedString(l.Object, "metadata", "shardInfo", "selector"); echo != s.Selector() {
					t.Fatalf("%s %s: the server echoed %q", key, name, echo)
				}
				for i := range l.Items {
					if !s.Contains(&l.Items[i]) {
						t.Fatalf("%s %s: the server chose %s, which the client puts in another shard", key, name, l.Items[i].GetName())
					}
					seen[l.Items[i].GetName()]++
				}
			}
			if len(seen) != len(all.Items) {
				t.Fatalf("%s %s: the shards hold %d of %d objects", key, name, len(seen), len(all.Items))
			}
			for n, k := range seen {
				if k != 1 {
					t.Fatalf("%s %s: %s in %d shards", key, name, n, k)
				}
			}
		}
	}
}

// TestThreeMembersPartition runs three ring members, each with a sharded
// informer, over 6,000 objects: their caches are disjoint, together equal
// the server, and each holds a third within ±15%. With the gate off, the
// same holds (the informers filter on their own) and they say so.
func TestThreeMembersPartition(t *testing.T) {
	t.Run("gate on", func(t *testing.T) { testPartition(t, testenv.Shared(t), true) })
	t.Run("gate off", func(t *testing.T) { testPartition(t, gateOffEnv(t), false) })
}

// member is an in-process ring member with a sharded informer.
type member struct {
	id     string
	m      *shard.Member
	inf    *informer.Informer[*metav1.PartialObjectMetadata]
	cancel context.CancelFunc
	done   chan struct{}
}

func startMember(t *testing.T, c *dynamic.DynamicClient, ns, ring, id string) *member {
	t.Helper()
	sh, err := informer.NewShard(informer.ShardByUID)
	if err != nil {
		t.Fatal(err)
	}
	f := informer.NewFactory(c, informer.FactoryOptions{Namespace: ns})
	inf := f.ForResourceMetadata(cmGVR, informer.InformerOptions{Shard: sh})
	m, err := shard.New(c, shard.Options{Namespace: ns, Ring: ring, Identity: id,
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 300 * time.Millisecond,
		Shard: sh})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mb := &member{id: id, m: m, inf: inf, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(mb.done)
		g := make(chan struct{})
		go func() { defer close(g); _ = f.Run(ctx) }()
		_ = m.Run(ctx)
		<-g
	}()
	t.Cleanup(func() { cancel(); <-mb.done })
	return mb
}

func testPartition(t *testing.T, env *testenv.Env, gateOn bool) {
	c := client(t, env)
	ns := newNamespace(t, c, "shard-3")
	const n = 6000
	start := time.Now()
	createConfigMaps(t, c, ns, n)
	t.Logf("created %d objects in %v", n, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	var ms []*member
	for _, id := range []string{"m-a", "m-b", "m-c"} {
		ms = append(ms, startMember(t, c, ns, "cms", id))
	}
	eventually(t, 90*time.Second, "the members to settle and sync", func() (bool, string) {
		total := 0
		for _, m := range ms {
			if !m.inf.HasSynced() || !slices.Equal(m.m.Processing(), m.m.Target()) || len(m.m.Target()) == 0 {
				return false, m.id + " not settled"
			}
			total += m.inf.Store().Len()
		}
		if total != n {
			return false, fmt.Sprintf("caches hold %d of %d", total, n)
		}
		// Whether the server applied the selector is known once the
		// informer's probe has run, after its sync (before its watch):
		// at once from an echo, a little later without one (gate off).
		for _, m := range ms {
			if _, known := m.inf.ServerSharded(); !known {
				return false, m.id + " has not probed the server yet"
			}
		}
		return true, ""
	})
	t.Logf("members settled, synced and probed in %v", time.Since(start).Round(time.Millisecond))
	owner := map[string]string{}
	for _, m := range ms {
		keys := m.inf.Store().Keys()
		share := float64(len(keys)) / n * 3
		t.Logf("%s: %d objects (%.3f of its third), ranges %.3f of the space", m.id, len(keys), share, informer.RangesSize(m.m.Processing()))
		if math.Abs(share-1) > 0.15 {
			t.Errorf("%s holds %d objects, %.0f%% off a third", m.id, len(keys), (share-1)*100)
		}
		for _, k := range keys {
			if other, dup := owner[k]; dup {
				t.Fatalf("%s is cached by %s and %s", k, other, m.id)
			}
			owner[k] = m.id
		}
		sharded, known := m.inf.ServerSharded()
		if !known || sharded != gateOn {
			t.Errorf("%s: ServerSharded = %v, %v with the gate on=%v", m.id, sharded, known, gateOn)
		}
	}
	l, err := c.Resource(cmGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, o := range l.Items {
		if _, ok := owner[ns+"/"+o.GetName()]; !ok {
			missing = append(missing, o.GetName())
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 || len(owner) != len(l.Items) {
		t.Fatalf("the caches' union differs from the server: %d missing (%v), %d cached of %d", len(missing), missing, len(owner), len(l.Items))
	}
	t.Run("custom resources", func(t *testing.T) { testCustomResourceShard(t, c, gateOn) })
}

// kdyn get --shard-selector passes the selector through: the server's
// share, as the library's list sees it.
func TestGetShardSelector(t *testing.T) {
	env := testenv.Shared(t)
	c := client(t, env)
	ns := newNamespace(t, c, "shard-get")
	createConfigMaps(t, c, ns, 200)
	s, err := informer.NewShard(informer.ShardByUID, informer.SplitRanges(2)[0])
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Resource(cmGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{ShardSelector: s.Selector()})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, o := range l.Items {
		want = append(want, "configmap/"+o.GetName())
	}
	sort.Strings(want)
	cmd := exec.Command(build(t, "./cmd/kdyn"), "--kubeconfig", env.KubeconfigPath(testenv.Admin), "get", "configmaps", "-n", ns, "--shard-selector", s.Selector(), "-o", "name")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kdyn get: %v", err)
	}
	got := strings.Fields(string(out))
	sort.Strings(got)
	if len(got) == 0 || len(got) >= 200 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("kdyn get --shard-selector printed %d names, the server's share has %d", len(got), len(want))
	}
}
