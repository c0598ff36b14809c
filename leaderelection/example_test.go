package leaderelection_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/leaderelection"
)

// One candidate leads, is cancelled, and releases the Lease. A program
// passes dynamic.NewForConfig(cfg) where the fake stands here.
func Example() {
	client := fake.NewClient()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, err := leaderelection.New(client, leaderelection.Config{
		Namespace:       "kube-system",
		Name:            "my-controller",
		Identity:        "pod-a",
		ReleaseOnCancel: true,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				fmt.Println("leading")
				cancel() // a controller would run until ctx is done
				<-ctx.Done()
			},
			OnStoppedLeading: func() { fmt.Println("stopped leading") },
		},
	})
	if err != nil {
		panic(err)
	}
	err = e.Run(ctx)
	fmt.Println("Run returned:", err)

	leases := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	lease, err := client.Resource(leases).Namespace("kube-system").Get(context.Background(), "my-controller", metav1.GetOptions{})
	if err != nil {
		panic(err)
	}
	holder, _, _ := unstructured.NestedString(lease.Object, "spec", "holderIdentity")
	seconds, _, _ := unstructured.NestedInt64(lease.Object, "spec", "leaseDurationSeconds")
	fmt.Printf("after release: holder %q, leaseDurationSeconds %d\n", holder, seconds)
	// Output:
	// leading
	// stopped leading
	// Run returned: <nil>
	// after release: holder "", leaseDurationSeconds 1
}

// Two candidates: the second waits while the first holds the Lease, and
// leads once it is released.
func Example_handOver() {
	client := fake.NewClient()
	candidate := func(id string, led chan<- string) *leaderelection.Elector {
		e, err := leaderelection.New(client, leaderelection.Config{
			Namespace: "default", Name: "demo", Identity: id, ReleaseOnCancel: true,
			// Short durations for the example; the defaults are 15s/10s/2s.
			LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond,
			Callbacks: leaderelection.Callbacks{OnStartedLeading: func(ctx context.Context) {
				led <- id
				<-ctx.Done()
			}},
		})
		if err != nil {
			panic(err)
		}
		return e
	}
	led := make(chan string)
	a, b := candidate("a", led), candidate("b", led)
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	doneA, doneB := make(chan error), make(chan error)
	go func() { doneA <- a.Run(ctxA) }()
	fmt.Println(<-led, "leads")
	go func() { doneB <- b.Run(ctxB) }()
	stopA() // a's term ends; it releases the Lease
	fmt.Println("a returned:", <-doneA)
	fmt.Println(<-led, "leads")
	fmt.Println("b sees leader:", b.GetLeader(), b.IsLeader())
	stopB()
	fmt.Println("b returned:", <-doneB)
	// Output:
	// a leads
	// a returned: <nil>
	// b leads
	// b sees leader: b true
	// b returned: <nil>
}

// A controller that loses the Lease exits, so that it restarts as a
// candidate with fresh state.
func ExampleElector_Run() {
	client := fake.NewClient()
	e, err := leaderelection.New(client, leaderelection.Config{
		Namespace: "default", Name: "demo", Identity: "pod-a",
		Callbacks: leaderelection.Callbacks{OnStartedLeading: func(ctx context.Context) { <-ctx.Done() }},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	switch err := e.Run(ctx); {
	case errors.Is(err, leaderelection.ErrLeadershipLost):
		fmt.Println("lost the lease:", err) // os.Exit(1) in a controller
	case err != nil:
		fmt.Println("error:", err)
	default:
		fmt.Println("shut down")
	}
	// Output:
	// shut down
}

// A liveness check: healthy unless leader work outlives a lost lease.
func ExampleElector_HealthCheck() {
	e, err := leaderelection.New(fake.NewClient(), leaderelection.Config{
		Namespace: "default", Name: "demo", Identity: "pod-a",
		Callbacks: leaderelection.Callbacks{OnStartedLeading: func(ctx context.Context) { <-ctx.Done() }},
	})
	if err != nil {
		panic(err)
	}
	check := e.HealthCheck(20 * time.Second)
	// An HTTP handler would serve this; see the package documentation.
	fmt.Println(check.Name(), check.Check(nil))
	// Output:
	// leaderElection <nil>
}
