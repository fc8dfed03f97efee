GO ?= go

.PHONY: test compare compare-quick tools

# vet, then every test with the race detector; the integration tests drive
# real nginx, wrk and sockets.
test:
	$(GO) vet ./...
	$(GO) test -race -timeout 15m ./...

# nginx and wrk through the system package manager when missing.
tools:
	.ci/install-tools

# The full default sweep (about 35 minutes); the report lands in results/.
compare: tools
	$(GO) run ./cmd/topobench compare

compare-quick: tools
	$(GO) run ./cmd/topobench compare -duration 5s -connections 500 -reps 1 -warmup 1s

.PHONY: compose-smoke

# Builds the container images and runs a short sweep through docker compose,
# then checks the report (needs a Docker engine; README "Containers").
compose-smoke:
	compose/smoke.sh
