//go:build crtests_deps

package crtests

// The imports of controller-runtime's pkg/cache tests beyond crcache's
// own, so that go mod tidy keeps them in go.mod (the build tag keeps them
// out of every build).
import (
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/gomega"
	_ "k8s.io/api/core/v1"
	_ "sigs.k8s.io/controller-runtime/pkg/controller/controllertest"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/controller-runtime/pkg/log/zap"
	_ "sigs.k8s.io/controller-runtime/pkg/manager"
)
