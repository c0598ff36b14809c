package informer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"golang.org/x/sync/errgroup"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/rest"
)

func Example() {
	// A tiny server: a list of two ConfigMaps, then a watch that reports one
	// change and stays open.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"10"},"items":[
				{"metadata":{"name":"a","namespace":"prod","resourceVersion":"5","labels":{"app":"web"}}},
				{"metadata":{"name":"b","namespace":"prod","resourceVersion":"6","labels":{"app":"db"}}}]}`)
			return
		}
		fmt.Fprintln(w, `{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"prod","resourceVersion":"11","labels":{"app":"web"}},"data":{"k":"v"}}}`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	client, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		panic(err)
	}

	f := informer.NewFactory(client, informer.FactoryOptions{DisableStreaming: true})
	cms := f.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, informer.InformerOptions{})
	updated := make(chan string, 1)
	_, _ = cms.AddEventHandler(informer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(obj *unstructured.Unstructured, initial bool) {
			fmt.Println("add", informer.Key(obj), "initial:", initial)
		},
		UpdateFunc: func(old, obj *unstructured.Unstructured) {
			updated <- fmt.Sprintf("update %s %s -> %s", informer.Key(obj), old.GetResourceVersion(), obj.GetResourceVersion())
		},
	})
	_ = cms.AddIndexer("app", informer.LabelIndex[*unstructured.Unstructured]("app"))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	var g errgroup.Group
	g.Go(func() error { return f.Run(ctx) }) // until ctx ends
	defer func() {
		cancel()
		_ = g.Wait() // every informer has stopped
	}()
	if err := f.WaitForSync(ctx); err != nil {
		panic(err)
	}
	fmt.Println(<-updated)
	web, _ := cms.Lister().ByIndex("app", "web")
	fmt.Println("app=web:", len(web), web[0].GetName())
	// Output:
	// add prod/a initial: true
	// add prod/b initial: true
	// update prod/a 5 -> 11
	// app=web: 1 a
}
