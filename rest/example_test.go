package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kdyn/kdyn/rest"
)

func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/namespaces/prod/configmaps/missing" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"configmaps \"missing\" not found"}`)
			return
		}
		fmt.Fprint(w, `{"gitVersion":"v1.37.2"}`)
	}))
	defer srv.Close()

	c, err := rest.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	body, err := c.Get().AbsPath("/version").DoRaw(ctx)
	fmt.Println(string(body), err)

	err = c.Get().Version("v1").Namespace("prod").Resource("configmaps").Name("missing").Do(ctx).Error()
	fmt.Println(apierrors.IsNotFound(err), err)
	// Output:
	// {"gitVersion":"v1.37.2"} <nil>
	// true configmaps "missing" not found
}
