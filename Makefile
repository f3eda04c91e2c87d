SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.DEFAULT_GOAL := help
MAKEFLAGS += --warn-undefined-variables --no-builtin-rules

GO        ?= go
BIN       ?= bin/runlens
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
FUZZTIME  ?= 1m
FUZZSMOKE ?= 10000x
# The PostgreSQL server programs for the real-instrumentation end-to-end test: Debian keeps them
# off PATH in /usr/lib/postgresql/<major>/bin; the newest major wins. Override with
# RUNLENS_PG_BIN=DIR; .ci/install-deps installs the server when it is missing.
RUNLENS_PG_BIN ?= $(shell ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4n | tail -n 1)
export RUNLENS_PG_BIN

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-15s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: generate
generate: ## Regenerate gen/ and the published schemas from schemas/.
	$(GO) generate ./gen

.PHONY: check-generate
check-generate: generate ## Fail when generated files differ from what is committed.
	@if [[ -n "$$(git status --porcelain -- gen schemas)" ]]; then \
		git status --porcelain -- gen schemas; \
		echo "generated files are out of date: run 'make generate' and commit the result" >&2; \
		exit 1; \
	fi

.PHONY: build
build: ## Build the static runlens binary into bin/.
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/runlens

.PHONY: install
install: ## Install runlens into $(go env GOPATH)/bin, so MCP hosts find it on PATH.
	CGO_ENABLED=0 $(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/runlens
	@echo "installed $$($(GO) env GOPATH)/bin/runlens; make sure that folder is on PATH"

.PHONY: tools
tools: ## Install the pinned Node tooling the compatibility and agent-loop tests use (cached).
	@.ci/install-tools >/dev/null

.PHONY: test
test: ## Run every test: unit, race, generation drift, fuzz smoke, and real-client compatibility.
	$(GO) vet ./...
	$(GO) vet -tags chdb ./internal/telemetry/clickhouse/...
	@# The agent-loop tests run Node 22 and the OpenTelemetry JS SDK from the pinned Node tooling;
	@# the Jaeger source's tests run a real Jaeger v2, built once per version (.ci/install-jaeger).
	RUNLENS_NODE_TOOLS="$$(.ci/install-tools)" RUNLENS_JAEGER="$$(.ci/install-jaeger)" $(GO) test -race -count=1 -timeout 20m $$($(GO) list ./... | grep -v -e '/internal/compat$$' -e '/internal/telemetry/clickhouse$$')
	@# The ClickHouse source runs on the ClickHouse engine in-process (chDB): chdb-go loads the
	@# library named by CHDB_LIB_PATH when the test binary starts, hence its own build tag. It runs
	@# without cgo as chdb-go intends (the race detector needs cgo, and a cgo binary that loaded
	@# libchdb faults in the library's teardown at exit, after every test passed). The package
	@# takes 6-14 minutes on 2 cores (the conformance suite runs four times over chDB), hence
	@# a bound with room for a slower machine.
	CHDB_LIB_PATH="$$(.ci/install-chdb)" CGO_ENABLED=0 $(GO) test -tags chdb -count=1 -timeout 40m ./internal/telemetry/clickhouse/...
	@# The real-client suite runs alone: its start-up bound measures Node clients, not a busy machine.
	RUNLENS_NODE_TOOLS="$$(.ci/install-tools)" $(GO) test -count=1 -timeout 20m ./internal/compat/...
	@# Every fuzzer, briefly: a parser change that a fuzzer's seeds or a few seconds of mutation
	@# break fails here; `make fuzz` runs them longer.
	GO=$(GO) .ci/fuzz $(FUZZSMOKE)

.PHONY: fuzz
fuzz: ## Run every native Go fuzzer for FUZZTIME each (default 1m; e.g. make fuzz FUZZTIME=10m).
	GO=$(GO) .ci/fuzz $(FUZZTIME)

.PHONY: corpus-capture
corpus-capture: ## Run the corpus apps and write their telemetry and truth again (internal/e2e/corpus/captured).
	RUNLENS_CORPUS_CAPTURE=1 RUNLENS_NODE_TOOLS="$$(.ci/install-tools)" $(GO) test -count=1 -timeout 15m ./internal/e2e/corpus/goapp/ ./internal/e2e/corpus/node/

.PHONY: test-compat
test-compat: ## Run only the real-client compatibility suite.
	RUNLENS_NODE_TOOLS="$$(.ci/install-tools)" $(GO) test -count=1 -v ./internal/compat/...

.PHONY: bench
bench: ## Run the benchmarks of BENCHMARKS.md (not timed tests): protocol vs a go-sdk peer, then package benchmarks.
	RUNLENS_BENCH=1 $(GO) test -count=1 -timeout 15m -run '^TestReport$$' -v ./internal/bench
	@# B11: 8 serve sessions calling the telemetry tools while a collector ingests (agent-paced, then a closed loop).
	RUNLENS_BENCH=1 $(GO) test -count=1 -timeout 30m -run '^TestLoadReport$$' -v ./internal/bench
	@# B6: 1,000,000 spans from 20 services.
	RUNLENS_BENCH=1 RUNLENS_BENCH_ITERS=10 $(GO) test -count=1 -timeout 30m -run '^TestQueryLatencyReport$$' -v ./internal/telemetry/store
	@# B6x and its growth: 100,000, 1,000,000 and 10,000,000 spans from 50 services (the 10 M file takes
	@# about 20 minutes and 7.4 GB the first time, then is reused from the user cache directory).
	for n in 100000 1000000 10000000; do \
		RUNLENS_BENCH=1 RUNLENS_BENCH_SPANS=$$n RUNLENS_BENCH_SERVICES=50 RUNLENS_BENCH_ITERS=10 $(GO) test -count=1 -timeout 60m -run '^TestQueryLatencyReport$$' -v ./internal/telemetry/store; \
	done
	RUNLENS_BENCH=1 $(GO) test -count=1 -timeout 15m -run '^TestAspireLatencyReport$$' -v ./internal/telemetry/aspire
	RUNLENS_BENCH=1 RUNLENS_JAEGER="$$(.ci/install-jaeger)" $(GO) test -count=1 -timeout 15m -run '^TestJaegerReport$$' -v ./internal/telemetry/jaeger
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./internal/docs ./internal/shape ./internal/mcp ./internal/telemetry/store
	@# B5: 1,000 batches of 512 spans from 4 senders per benchmark; BenchmarkIngestSideBySide sends the
	@# same batches to runlens and to Jaeger v2 (memory and Badger storage) over HTTP and gRPC in one run.
	RUNLENS_JAEGER="$$(.ci/install-jaeger)" $(GO) test -count=1 -timeout 30m -run '^$$' -bench . -benchmem -benchtime 1000x -v ./internal/otlp
	CHDB_LIB_PATH="$$(.ci/install-chdb)" CGO_ENABLED=0 $(GO) test -tags chdb -count=1 -timeout 90m -run '^$$' -bench '^BenchmarkB10$$' -benchtime 1x -v ./internal/telemetry/clickhouse

.PHONY: lint
lint: ## gofmt, go vet and staticcheck.
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [[ -n "$$unformatted" ]]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags chdb ./internal/telemetry/clickhouse/...
	$(GO) vet -tags conformance ./cmd/runlens
	$(GO) run honnef.co/go/tools/cmd/staticcheck ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck -tags chdb ./internal/telemetry/clickhouse/...

.PHONY: demo
demo: ## Run the end-to-end demo on the embedded default.
	$(GO) run ./cmd/runlens demo
