package kubeconfig_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/kdyn/kdyn/kubeconfig"
)

func Example() {
	dir, err := os.MkdirTemp("", "kubeconfig-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config")
	err = os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster:
    server: https://dev.example:6443
    insecure-skip-tls-verify: true
users:
- name: alice
  user:
    token: alice-token
contexts:
- name: dev
  context:
    cluster: dev
    user: alice
    namespace: web
`), 0o600)
	if err != nil {
		log.Fatal(err)
	}

	// Like kubectl --kubeconfig=PATH --namespace=api.
	res, err := kubeconfig.Resolve(
		&kubeconfig.LoadingRules{ExplicitPath: path},
		kubeconfig.Overrides{Namespace: "api"},
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("context:", res.Context)
	fmt.Println("server:", res.Config.Host)
	fmt.Println("namespace:", res.Namespace)
	fmt.Println("has token:", res.Config.BearerToken != "")

	// Output:
	// context: dev
	// server: https://dev.example:6443
	// namespace: api
	// has token: true
}
