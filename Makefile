# kdyn — run `make help` for the targets.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

GO        ?= go
# The Go toolchain: the pinned go1.26.10 (1.26.8, this machine's, has
# standard-library vulnerabilities that govulncheck reports as reachable;
# the go command fetches 1.26.10 from the module proxy once), unless the
# environment's GOTOOLCHAIN asks for one at least as new. GOTOOLCHAIN=local
# or an older release does not lower it. scripts/toolchain.sh decides and
# prints the choice; `make toolchain` shows it. (Not for `make help`.)
ifneq ($(filter-out help,$(or $(MAKECMDGOALS),help)),)
override export GOTOOLCHAIN := $(shell GOTOOLCHAIN='$(GOTOOLCHAIN)' GO='$(GO)' ./scripts/toolchain.sh)
ifeq ($(GOTOOLCHAIN),)
$(error scripts/toolchain.sh failed to choose a Go toolchain)
endif
endif
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
LDFLAGS   := -s -w -X github.com/kdyn/kdyn/rest.Version=$(VERSION)
# kustomize's loader of Go plugins imports the standard library's plugin
# package, which makes the linker keep every exported method and a dynamic
# symbol table: the CLI's binary grows from 17 to 28 MB and its resident
# memory at start from 15 to 28 MB. kdyn never loads Go plugins; this tag leaves the
# loader out.
BUILDTAGS := kustomize_disable_go_plugin_support
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
TEST_TIMEOUT ?= 40m

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: toolchain
toolchain: ## Print the Go toolchain make builds with, and why.
	$(GO) version

.PHONY: build
build: ## Build bin/kdyn.
	$(GO) build -trimpath -tags '$(BUILDTAGS)' -ldflags '$(LDFLAGS)' -o bin/kdyn ./cmd/kdyn

.PHONY: controlplane
controlplane: ## Build (or find in the cache) the kube-apiserver+etcd test control plane.
	$(GO) run ./integration/cluster -build-only

# make test's flags (scripts/testflags.sh, which prints a NOTICE for each
# departure): -race when cgo and a C compiler work here, else none; GOFLAGS
# without -short, which would skip every control-plane test and still pass.
# (make passes its command line's variables to recipes, not to $(shell).)
ifneq ($(filter test,$(MAKECMDGOALS)),)
testflags = GOTOOLCHAIN='$(GOTOOLCHAIN)' GO='$(GO)' $(foreach v,GOFLAGS CGO_ENABLED CC,$(if $(filter command line,$(origin $(v))),$(v)='$($(v))')) ./scripts/testflags.sh
RACE := $(shell $(testflags) race)
test: override export GOFLAGS := $(shell $(testflags) goflags)
endif

.PHONY: test
test: controlplane ## Run every test (unit, golden, httptest, real control plane) with -race (a NOTICE when it cannot).
	$(GO) vet ./...
	$(GO) test $(RACE) -count=1 -timeout $(TEST_TIMEOUT) ./...
	cd bench && $(GO) test -count=1 ./wire/ ./cli/ ./kustomize/ ./applyset/   # kdyn's requests equal client-go's, verb by verb; clibench's output comparison; kdyn kustomize byte-identical to kubectl's; ApplySets equal kubectl's
	cd bench && $(GO) test -count=1 -v ./clientgodynamic/   # client-go's own dynamic tests, imports switched to kdyn; lists every test that ran
	cd bench && $(GO) test -count=1 ./leaderelection/   # a kdyn and a client-go candidate on one Lease: one leader, hand-overs both ways
	cd crcache && $(GO) vet ./... && $(GO) test $(RACE) -count=1 ./...   # the controller-runtime cache: controller-runtime's own cache tests on it, an operator on both caches
	@if [ -z '$(RACE)' ]; then echo "NOTICE: make test ran WITHOUT the race detector (the NOTICE at the start says why)"; fi

.PHONY: test-kubectl-suite
test-kubectl-suite: controlplane ## Run kubectl's own test/cmd functions with kubectl and with kdyn and print both results per function (docs/kubectl-suite.md).
	cd bench && $(GO) test -count=1 -timeout 1h -run TestKubectlSuite -v ./kubectlsuite/

.PHONY: test-kubectl-suite-whole
test-kubectl-suite-whole: controlplane ## The same on the whole local cluster (a scheduler and two KWOK nodes, so pods run).
	cd bench && KDYN_SUITE_CLUSTER=whole $(GO) test -count=1 -timeout 1h -run TestKubectlSuite -v ./kubectlsuite/

.PHONY: test-short
test-short: ## Run unit, golden and httptest tests only (no control plane).
	$(GO) test -short -count=1 ./...

.PHONY: lint
lint: ## gofmt, go vet, staticcheck (pinned) and govulncheck (offline database from the module proxy).
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	./scripts/govulncheck.sh ./...
	cd crcache && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...
	./scripts/govulncheck.sh -C crcache ./...

.PHONY: cluster
cluster: ## Run a local control plane in the foreground and print the KUBECONFIG to use.
	$(GO) run ./integration/cluster -dir .cluster

.PHONY: demo
demo: build controlplane ## Build kdyn, start a control plane, run a narrated tour of kdyn against it, stop it.
	./scripts/demo.sh

.PHONY: bench
bench: controlplane ## Benchmarks: kdyn vs client-go and kdyn vs kubectl, same run, same server (prints ratios).
	cd bench && $(GO) run ./cmd/libbench
	cd bench && $(GO) run ./cmd/clibench

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME seconds each (default 30).
	./scripts/fuzz.sh $(or $(FUZZTIME),30)

.PHONY: soak
soak: controlplane ## A bounded soak: 20,000 objects, 500 changes/s for 10 minutes, one restart (not part of CI).
	$(GO) run ./integration/soak

.PHONY: tidy
tidy: ## go mod tidy for every module.
	$(GO) mod tidy
	cd integration/controlplane && $(GO) mod tidy
	cd bench && $(GO) mod tidy
	cd crcache && $(GO) mod tidy
