# bind-fn — build, generate, lint, test, images. `make help` lists the targets
# (from the `## target: what it does` lines below).
#
# Tests that need BIND, root or bin/ CLIs fail when those are missing; set
# BINDFN_SKIP_BIND=1, BINDFN_SKIP_ROOT=1 or BINDFN_SKIP_CLI=1 to skip them instead.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build
MAKEFLAGS += --no-builtin-rules

GO        ?= go
BIN       := $(CURDIR)/bin
OUT       := $(CURDIR)/out
GOOS      ?= linux
GOARCH    ?= $(shell $(GO) env GOARCH)
# Static, reproducible binaries: no cgo, no local paths, no VCS stamp (the tree may
# have no commit yet, and a stamp would change image digests on every commit).
# A release stamps its version as an input instead, so its build is as
# reproducible: `make build VERSION=v0.4.0 REVISION=$(git rev-parse HEAD)`.
# Every binary's --version (and the agent's /status) then says it; without
# them they say "dev" (internal/version).
VERSION   ?=
REVISION  ?=
VERSIONPKG := git.unkin.net/unkin/bind-fn/internal/version
LDFLAGS   := -s -w$(if $(VERSION), -X $(VERSIONPKG).version=$(VERSION))$(if $(REVISION), -X $(VERSIONPKG).revision=$(REVISION))
GOBUILD   := CGO_ENABLED=0 GOOS=$(GOOS) GOARCH=$(GOARCH) $(GO) build -trimpath -buildvcs=false -ldflags '$(LDFLAGS)'

TEST_TIMEOUT ?= 45m
TEST_FLAGS   ?=
PKGS         ?= ./...

IMAGE_REPO ?= git.unkin.net/unkin/bind-fn
IMAGE_TAG  ?= dev
export SOURCE_DATE_EPOCH ?= 0

# binary name -> package directory
BINARIES := fn-render fn-validate bind-fn-agent function-bind bind-fn
pkg.fn-render     := ./fn-render
pkg.fn-validate   := ./fn-validate
pkg.bind-fn-agent := ./agent
pkg.function-bind := ./composition
pkg.bind-fn       := ./cmd/bind-fn

.PHONY: all tools build $(addprefix build-,$(BINARIES)) generate check-generate check-tidy \
        lint test go-test race unit bench images example demo clean help

all: test

## help: this list (each target's `##` lines in the Makefile)
help:
	@awk '/^## [a-z0-9_.-]+: / { sub(/^## /, ""); i = index($$0, ":"); printf "  %-15s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2); next } \
	     /^## / { sub(/^## /, ""); printf "  %-15s %s\n", "", $$0 }' $(firstword $(MAKEFILE_LIST))
	@echo
	@echo "Tests that need BIND, root or bin/ CLIs fail when those are missing; set"
	@echo "BINDFN_SKIP_BIND=1, BINDFN_SKIP_ROOT=1 or BINDFN_SKIP_CLI=1 to skip them instead (make unit sets all three)."

## tools: Debian BIND + pinned CLIs (tools/*/go.mod, hack/build-external-dns.sh) into bin/, cached by version
tools:
	@bash hack/install-tools.sh

## build: static binaries into bin/
build: $(addprefix build-,$(BINARIES))

$(addprefix build-,$(BINARIES)): build-%:
	@pkg='$(pkg.$*)'; \
	if [ ! -d "$$pkg" ] || ! ls "$$pkg"/*.go >/dev/null 2>&1; then \
	  echo "make: cannot build bin/$*: package $$pkg does not exist yet (no Go files)" >&2; exit 1; \
	fi
	$(GOBUILD) -o $(BIN)/$* $(pkg.$*)

## generate: every generated file: deepcopy and CRDs (config/crd) from api/, then the XRDs from the CRDs,
## then the image references of release/images.yaml (hack/gen-images)
# GENERATE is generate's recipe, which check-generate runs inline (not
# through $(MAKE): `make -n` runs any line holding $(MAKE), and that line
# deletes config/crd first).
GENERATE = test -x $(BIN)/controller-gen || { echo "make: bin/controller-gen is missing: run 'make tools'" >&2; exit 1; }; \
	$(BIN)/controller-gen object paths=./api/... crd:crdVersions=v1 output:crd:artifacts:config=config/crd && \
	$(GO) run ./hack/gen-xrd && \
	$(GO) run ./hack/gen-images
generate:
	$(GENERATE)

# Hash every file under the directories generate writes into (api/, config/,
# the XRDs' package/ and examples/crossplane/, and what hack/gen-images writes
# from release/images.yaml: the image defaults and the examples' image lines) before and after
# regenerating (old generated CRDs are removed first, so a CRD for a deleted
# kind is drift too). Works whether the generated files are committed or not.
GEN_DIRS = api config package examples internal/model/images_gen.go release
GEN_HASH = find $(GEN_DIRS) -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum

## check-generate: regenerate into the tree; fail on drift, or if go mod tidy would change go.mod/go.sum
## (installs controller-gen alone)
check-generate:
	@bash hack/install-tools.sh controller-gen
	@before=$$($(GEN_HASH)); \
	find config/crd -maxdepth 1 -name '*_*.yaml' -delete; \
	$(GENERATE) || exit 1; \
	after=$$($(GEN_HASH)); \
	if [ "$$before" != "$$after" ]; then \
	  echo "check-generate: generated files were stale; 'make generate' changed:" >&2; \
	  diff <(echo "$$before") <(echo "$$after") | sed -n 's/^[<>] [0-9a-f]*  /  /p' | sort -u >&2; \
	  echo "check-generate: review and commit the regenerated files." >&2; \
	  exit 1; \
	fi; \
	echo "check-generate: $(GEN_DIRS) are up to date"

check-generate: check-tidy

check-tidy:
	@if ! out=$$($(GO) mod tidy -diff 2>&1); then \
	  echo "check-tidy: 'go mod tidy' would change go.mod/go.sum; run it and commit:" >&2; \
	  echo "$$out" >&2; exit 1; \
	fi; \
	echo "check-tidy: go.mod and go.sum are tidy"

GOFILES = find . -name '*.go' -not -path './bin/*' -not -path './out/*' -not -path './.cache/*' -not -path '*/testdata/*' -print0

## lint: gofmt, go vet and staticcheck (every check but those staticcheck.conf disables, each with its reason);
## the own-module tests (test/crdcost, test/k8s) are vetted and staticchecked by their targets
## (crd-cost, k8s-test, k8s-cluster), which compile them anyway; installs staticcheck alone
lint:
	@bash hack/install-tools.sh staticcheck
	@bad=$$($(GOFILES) | xargs -0 gofmt -l); \
	if [ -n "$$bad" ]; then echo "lint: gofmt wants changes in:" >&2; echo "$$bad" >&2; echo "lint: run 'gofmt -w' on them" >&2; exit 1; fi
	$(GO) vet $(PKGS)
	@test -x $(BIN)/staticcheck || { echo "make: bin/staticcheck is missing: run 'make tools'" >&2; exit 1; }
	$(BIN)/staticcheck $(PKGS)

## test: what CI runs
test: tools build lint check-generate go-test go-test-9.18 race crd-cost k8s-test k8s-cluster

# Tests use bin/ (testutil.Bin), so build first even under make -j.
# Tests that run named start BIND 9.20 (the release bind-fn ships); the checkers
# (named-checkconf, named-checkzone) ask 9.18 and 9.20 in every run.
go-test: tools build
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) $(PKGS)

## go-test-9.18: the packages that run named itself (the agent, import --verify, the multi-pod lab, the differential test), again on BIND 9.18 (BINDFN_BIND=9.18)
NAMED_PKGS ?= ./internal/agent/... ./internal/importer/verify/... ./test/multipod/... ./test/differential/...
.PHONY: go-test-9.18
go-test-9.18: tools build
	BINDFN_BIND=9.18 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) $(NAMED_PKGS)
	BINDFN_BIND=9.18 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) -run '^TestOperatorManifestsServe$$' ./test

## race: go test -race on the packages that run goroutines of their own (agent, render, pipeline, krm);
## part of make test (the agent's tests run real named, so it needs tools). The render's scale tests
## (20,000 zones, the same code go-test runs) are skipped here: with them internal/render took 469 s
## under -race (55 s in go-test).
RACE_PKGS ?= ./internal/agent/... ./internal/render/... ./internal/pipeline/... ./internal/krm/...
RACE_SKIP ?= ^TestScale(Objects|BadInput)$$
race: tools
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) -skip '$(RACE_SKIP)' $(RACE_PKGS)

## unit: go test on any machine, nothing installed: a test whose root, BIND or bin/ CLI is missing
## skips instead of failing (BINDFN_SKIP_BIND=1 BINDFN_SKIP_ROOT=1 BINDFN_SKIP_CLI=1), and -short;
## where they are present those tests run (2 min 51 s as root with BIND, warm build cache)
unit:
	BINDFN_SKIP_BIND=1 BINDFN_SKIP_ROOT=1 BINDFN_SKIP_CLI=1 $(GO) test -short -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) $(PKGS)

## bench: go test benchmarks (1k, 10k records), then the whole-process benchmark
## (hack/bench.sh: fn-render, fn-validate vs the identity function and
## named-checkzone at 1k-200k records; see BENCHMARKS.md). Not part of make test.
bench: tools
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)
	bash hack/bench.sh

## images: out/images/<binary>.tar and out/images/bind9.tar (BIND 9.20, the default image), reproducible, loadable with docker load / kind load image-archive
IMAGE_TOOL := $(BIN)/image
IMG = $(IMAGE_TOOL) -arch $(GOARCH) -o $(OUT)/images/$(1).tar -tag $(IMAGE_REPO)/$(1):$(IMAGE_TAG) -bin $(BIN)/$(1)

# The agent image's default command (entrypoint + cmd) copies the agent into the
# shared emptyDir (layout.AgentBinDir) from the init container; the named
# container then runs layout.AgentBin.
images: build
	$(GO) build -o $(IMAGE_TOOL) ./hack/image
	@mkdir -p $(OUT)/images
	$(call IMG,fn-render) -path-in-image /fn-render -entrypoint /fn-render
	$(call IMG,fn-validate) -path-in-image /fn-validate -entrypoint /fn-validate
	$(call IMG,bind-fn-agent) -path-in-image /bind-fn-agent -entrypoint /bind-fn-agent \
	  -cmd 'copy-self /bind-fn/bin/bind-fn-agent'
	$(call IMG,function-bind) -path-in-image /function-bind -entrypoint /function-bind
	@# BIND 9.20 from the pinned Debian trixie packages (libraries by hack/elfdeps, no chroot)
	IMAGE_TOOL=$(IMAGE_TOOL) IMAGE_REPO=$(IMAGE_REPO) bash hack/bind-image.sh $(OUT)/images/bind9.tar

## release: every image bind-fn runs (bind9, bind-fn-agent, fn-render, fn-validate, function-bind's runtime
## and its xpkg) for linux/amd64 and linux/arm64: OCI layouts (one index each) in out/release/images/,
## CycloneDX SBOMs in out/release/sbom/, references by digest in out/release/images.yaml (hack/release.sh);
## PIN=1 also writes them into release/images.yaml and regenerates (the release commit). See docs/release.md
# The release's version (VERSION if set, as make build stamps it); REVISION, if
# empty, is the checkout's HEAD (hack/release.sh).
RELEASE_VERSION ?= $(if $(VERSION),$(VERSION),$(IMAGE_TAG))
PIN ?= 0
.PHONY: release release-push
release: images
	@bash hack/install-tools.sh crossplane cyclonedx
	IMAGE_REPO=$(IMAGE_REPO) REVISION=$(REVISION) bash hack/release.sh $(OUT)/release $(RELEASE_VERSION)
	@if [ "$(PIN)" = 1 ]; then cp $(OUT)/release/images.yaml release/images.yaml && $(GO) run ./hack/gen-images && \
	  echo "release: release/images.yaml and the files made from it name this release's digests; commit them"; fi

## release-push: push out/release to REGISTRY (e.g. registry.example/bind-fn), sign each image by digest with
## COSIGN_KEY and attest its SBOM (hack/release-push.sh; out/release/pushed.txt lists what was pushed)
release-push:
	@bash hack/install-tools.sh cosign
	bash hack/release-push.sh $(OUT)/release "$(REGISTRY)" "$(COSIGN_KEY)"

## example: render examples/authoritative and examples/resolver into out/example/ with bind-fn render
## (kpt fn render's pipeline and output, no kpt: builds only bin/bind-fn; TestRenderMatchesKpt holds the two equal)
# A newcomer's first command, so it compiles bin/bind-fn without inlining
# (-l) and without DWARF (-dwarf=false; -ldflags -w drops it from the binary
# anyway): from an empty build cache that is 10–20 s less on two idle cores
# (BENCHMARKS.md), and the output is the same (apart from the keys a first
# render generates at random, whichever build runs). `make build` links the
# optimised bin/bind-fn again (its packages are cached apart).
EXAMPLE_GCFLAGS ?= all=-l -dwarf=false
example:
	$(GOBUILD) -gcflags='$(EXAMPLE_GCFLAGS)' -o $(BIN)/bind-fn $(pkg.bind-fn)
	@mkdir -p $(OUT)/example
	@for n in authoritative resolver; do \
	  rm -rf "$(OUT)/example/$$n"; cp -r "examples/$$n" "$(OUT)/example/$$n"; \
	  log=$$($(BIN)/bind-fn render "$(OUT)/example/$$n" 2>&1) || { echo "$$log" >&2; exit 1; }; \
	done
	@echo "Rendered examples/authoritative and examples/resolver into out/example/ (what kpt fn render writes):"
	@cd $(OUT)/example && find . -path '*/rendered/*' -type f | sort | sed 's#^\./#  #'
	@echo
	@echo "--- named.conf of the authoritative primary (pod 0), from ConfigMap auth-config ---"
	@$(GOBUILD) -gcflags='$(EXAMPLE_GCFLAGS)' -o $(BIN)/show-data ./hack/show-data # bin/bind-fn's flags: its packages come from the build cache
	@$(BIN)/show-data -kind ConfigMap -name auth-config -key named.conf.primary \
	  < $(OUT)/example/authoritative/rendered/auth/configmap_auth-config.yaml

## demo: start examples/authoritative as real named pods in a private lab network and query it (root)
demo: build-bind-fn-agent
	@bash hack/demo.sh

## clean: remove out/ and the binaries make build wrote
clean:
	rm -rf $(OUT) $(addprefix $(BIN)/,$(BINARIES) image show-data elfdeps debsbom)

## xpkg: Crossplane packages into out/ (hack/xpkg.sh): function-bind.xpkg (runtime image embedded, no Docker engine), configuration-bind.xpkg (v2 XRD + Composition) and configuration-bind-claim.xpkg (legacy XRD + claim, Object-wrapping Composition)
.PHONY: xpkg
xpkg:
	$(GO) build -o $(IMAGE_TOOL) ./hack/image
	IMAGE_TOOL=$(IMAGE_TOOL) IMAGE_REPO=$(IMAGE_REPO) bash hack/xpkg.sh $(OUT) $(IMAGE_TAG)

## kube-score: the real kube-score (tools/kube-score) on both rendered examples; any finding not listed with its
## reason in docs/kube-score-allowlist.yaml fails (TestKubeScore, which make test runs in go-test too)
.PHONY: kube-score
kube-score: build-bind-fn
	@bash hack/install-tools.sh kube-score
	$(GO) test -count=1 -run '^TestKubeScore$$' ./test

## crd-cost: the API server's own CRD validation (CEL cost budget included) on config/crd and on the CRDs Crossplane derives from both XRDs (own module: test/crdcost)
.PHONY: crd-cost
crd-cost:
	@bash hack/install-tools.sh staticcheck
	cd test/crdcost && $(GO) vet ./... && $(BIN)/staticcheck ./... && $(GO) mod tidy -diff && $(GO) test -count=1 ./...

## k8s-test: bind-fn on a real control plane (root): etcd + kube-apiserver + Crossplane core with function-bind, in a private network namespace (own module: test/k8s; see docs/kubernetes.md)
.PHONY: k8s-test
K8S_TEST_FLAGS ?= -v
k8s-test: tools build
	cd test/k8s && $(GO) vet ./... && $(BIN)/staticcheck ./... && $(GO) mod tidy -diff && $(GO) test -count=1 -timeout 20m $(K8S_TEST_FLAGS) ./...

## k8s-cluster: a single-node cluster on a real kubelet (root): control plane, containerd/runc/CNI from Debian, kube-proxy, CoreDNS, local images, an OCI registry; runs pods, the rendered example, Crossplane with its package manager installing bind-fn's packages, and kpt live (test/k8s/cluster, build tag cluster; part of make test; see docs/kubernetes.md)
.PHONY: k8s-cluster
k8s-cluster: tools build
	bash hack/install-k8s.sh --node
	$(GO) build -o $(IMAGE_TOOL) ./hack/image
	cd test/k8s && $(GO) vet -tags cluster ./cluster/ && $(BIN)/staticcheck -tags cluster ./cluster/ && $(GO) test -tags cluster -count=1 -timeout 30m -v ./cluster/
