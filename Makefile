# Tori control plane. `make run` starts everything; `make test` tests everything.
SHELL := /bin/bash
BIN   := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)
export GOFLAGS := -buildvcs=false

# Pinned tool versions; `make tools` installs them into ./bin from the Go module proxy.
BUF_VERSION           := v1.75.0
PROTOC_GEN_GO_VERSION := v1.36.12

# Tests run against the local servers; testcontainers is the path where these are unset.
export TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
export TEST_AMQP_URL     ?= amqp://guest:guest@127.0.0.1:5672/
export TEST_REDIS_URL    ?= redis://127.0.0.1:6379/0
# The zone's managed-database cluster (scripts/zone-postgres.sh), as its superuser over the socket.
export TEST_ZONE_POSTGRES_URL ?= postgres://postgres@/postgres?host=/var/run/postgresql&port=5433&sslmode=disable

.PHONY: all tools proto openapi generate docs build run test fmt services wrk vault-dev objectstore stripe-mock pebble bench-bus bench-gateway flood-public bench-apps bench-logs bench-drains bench-databases bench-databases-dump bench-deploys bench-builds bench-edge bench-processes bench-scale caddy chaos clean

all: build

tools: $(BIN)/.buf-$(BUF_VERSION) $(BIN)/.protoc-gen-go-$(PROTOC_GEN_GO_VERSION)

$(BIN)/.buf-$(BUF_VERSION):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) GOWORK=off go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	@touch $@

$(BIN)/.protoc-gen-go-$(PROTOC_GEN_GO_VERSION):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) GOWORK=off go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	@touch $@

# Regenerates every message contract's Go code; the result is committed.
proto: tools
	cd proto && buf lint && rm -rf gen && buf generate

# Merges every service's openapi-fragment.json into the gateway's OpenAPI document.
openapi:
	cd services/gateway && go run ./internal/openapi/merge ../*/openapi-fragment.json

# Writes the console's copy of the contract module's rules (console/src/api/contract.ts,
# committed); tools/contractgen's test fails when the copy differs from the contract.
generate:
	cd tools/contractgen && go run .

# Writes docs/configuration.md from the config structs' env tags and doc comments (the prose
# above its marker is kept); tools/configdoc's test fails when the committed file is stale.
docs:
	cd tools/configdoc && go run .

# Builds every service into ./bin.
build:
	scripts/build.sh

# Starts the whole control plane in the foreground; Ctrl-C stops it.
run: build
	scripts/run.sh

# Every module's vet and tests, unit and integration, then the tests that must run alone.
# Vault (for the apps service's Vault tests) is built from source once and cached.
test: tools
	scripts/test.sh

# Builds Vault v1.13.0 into ~/.cache/tori once (several minutes the first time).
vault-dev:
	@scripts/vault-dev-build.sh

# Builds the S3 server (the Versity S3 gateway) into ~/.cache/tori once (OBJECTSTORE_BIN).
objectstore:
	@scripts/objectstore-build.sh

# Builds stripe-mock into ~/.cache/tori once, for billing's Stripe tests (STRIPE_MOCK_BIN).
stripe-mock:
	@scripts/stripe-mock-build.sh

# Builds Pebble into ~/.cache/tori once, for the zone edge's HTTPS tests (PEBBLE_BIN).
pebble:
	@scripts/pebble-build.sh

# Issue 38: PATCH formation until the new web instance serves, three web instances' shares
# of 600 requests, and the start delay of 20 every-minute cron runs (about 25 minutes;
# PROCESSES_BENCH_CRON_RUNS=3 for a quick look).
bench-processes: build
	objectstore=$${OBJECTSTORE_BIN:-$$(scripts/objectstore-build.sh)} && \
	cd tests/e2e && OBJECTSTORE_BIN=$$objectstore go test -count=1 -timeout 60m -run '^$$' -bench BenchmarkProcesses -benchtime 1x -v .

# Issue 41: the control plane and its zone at 1,000 and then 10,000 apps over 2,000 accounts
# (SIZES, ACCOUNTS, ROUNDS to change): API and edge latency, the zone's restart, the memory a
# napping app costs, retention; prints `growth <what> 10k/1k: ...` lines last (docs/scale.md).
bench-scale: build services
	objectstore=$${OBJECTSTORE_BIN:-$$(scripts/objectstore-build.sh)} && \
	cd tests/e2e && OBJECTSTORE_BIN=$$objectstore SCALE_BENCH_SIZES=$${SIZES:-1000,10000} \
	  SCALE_BENCH_ACCOUNTS=$${ACCOUNTS:-2000} SCALE_BENCH_ROUNDS=$${ROUNDS:-3} \
	  go test -count=1 -timeout 120m -run '^$$' -bench BenchmarkScale -benchtime 1x -v .

# Builds Caddy into ~/.cache/tori once, the reference `make bench-edge` measures against.
caddy:
	@scripts/caddy-build.sh

bench-apps:
	cd services/apps && go test -run '^$$' -bench . -benchtime 2000x ./internal/httpapi/

bench-logs:
	cd services/logs && go run ./cmd/logs-bench

# A log drain at 5,000 entries/s (delivered rate, lag) and GET /logs p99 with and without it,
# alternating rounds, medians of 3 (docs/performance.md).
bench-drains:
	cd services/logs && go run ./cmd/logs-bench -drains

bench-databases:
	cd tests/e2e && go test -count=1 -run '^$$' -bench BenchmarkDatabaseReady -benchtime 10x .

# Dump and restore of a 1 GB database (DATABASE_BENCH_BYTES) against bare pg_dump/pg_restore.
bench-databases-dump:
	cd services/zoneagent && go test -count=1 -timeout 1h -run '^$$' -bench BenchmarkDumpRestore -benchtime 1x ./internal/managed/

bench-deploys: build
	cd tests/e2e && go test -count=1 -run '^$$' -bench BenchmarkStaticDeploy -benchtime 1x .

# Issue 30: the Node service of tests/e2e/testdata/buildbench built three times in one app
# (npm from the registry): empty cache, one dependency added, then with clearCache.
bench-builds: build
	cd tests/e2e && go test -count=1 -timeout 30m -run '^$$' -bench BenchmarkBuildCache -benchtime 1x -v .

# Issue 32: the zone's edge against Caddy on one machine, in one run, the two taking turns
# (ROUNDS, default 3; DURATION of each wrk run, default 10s; wrk -t2 -c64): a 1,000-file static
# site deployed through the API (edge cache over the object store) against Caddy's file_server
# on the same files, one small page and the 100 kB images; a Go app (tests/e2e/testdata/edgeapp)
# deployed as a service behind the edge, sandbox included, against the same binary as a plain
# process behind Caddy's reverse_proxy; each over http, then https (the zone's local CA, and
# Caddy with a certificate from the same root). Prints `ratio <what> Tori/Caddy: throughput
# <n>x, p99 <n>x` for each. Caddy is built once into ~/.cache/tori (`make caddy`).
bench-edge: wrk services
	caddy=$$(scripts/caddy-build.sh) && objectstore=$${OBJECTSTORE_BIN:-$$(scripts/objectstore-build.sh)} && \
	cd tests/e2e && CADDY_BIN=$$caddy OBJECTSTORE_BIN=$$objectstore \
	  EDGE_BENCH_DURATION=$${DURATION:-10s} EDGE_BENCH_ROUNDS=$${ROUNDS:-3} EDGE_BENCH_PROFILE_DIR=$${PROFILE_DIR:-} \
	  go test -count=1 -timeout 60m -run '^$$' -bench BenchmarkEdgeAgainstCaddy -benchtime 1x -v .

# The fault suite (not part of `make test`): SIGKILLs each service in turn, restarts the
# broker and Postgres under load, then checks convergence. It restarts the machine's RabbitMQ
# and Postgres, so nothing else may run meanwhile. `make chaos ZONES=2 REPLICAS=2` runs it on a
# two-zone stack with two processes of every service (each killed in turn) and two gateways.
chaos:
	cd tests/chaos && go test -tags chaos -count=1 -timeout 30m -run TestChaos -v .

# Makes sure the local Postgres and RabbitMQ answer, starting them if not.
services:
	scripts/ensure-services.sh

fmt:
	gofmt -w $$(git ls-files -co --exclude-standard -- '*.go')

bench-bus:
	cd pkg && go test -run '^$$' -bench 'BenchmarkOutboxToConsumer|BenchmarkBurstFloor' -benchtime 20000x ./bus/

# Debian's wrk: it takes a Lua script, so each request can carry another account's token.
wrk:
	@command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)

bench-gateway: build wrk services
	scripts/bench-gateway.sh

# Issue 25: a flood of public requests from one address harms no client at another.
flood-public: build wrk services
	scripts/flood-public.sh

clean:
	rm -rf $(BIN) var
