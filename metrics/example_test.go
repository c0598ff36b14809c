package metrics_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kdyn/kdyn/metrics"
	"github.com/kdyn/kdyn/workqueue"
)

// Register puts the families in a registry of the program's own; each
// component is then given its hook. Here a work queue counts its adds
// under client-go's workqueue_adds_total.
func ExampleRegister() {
	reg := prometheus.NewRegistry()
	m, err := metrics.Register(reg)
	if err != nil {
		panic(err)
	}
	q := workqueue.New(workqueue.Options[string]{Name: "widgets", Metrics: m.WorkQueue()})
	defer q.ShutDown()
	q.Add("default/w1")
	q.Add("default/w2")
	q.Add("default/w1") // already queued: not added again

	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		switch f.GetName() {
		case "workqueue_adds_total", "workqueue_depth":
			for _, s := range f.GetMetric() {
				v := s.GetCounter().GetValue() + s.GetGauge().GetValue()
				fmt.Printf("%s{name=%q} %g\n", f.GetName(), s.GetLabel()[0].GetValue(), v)
			}
		}
	}
	// Output:
	// workqueue_adds_total{name="widgets"} 2
	// workqueue_depth{name="widgets"} 2
}
