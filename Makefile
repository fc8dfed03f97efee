GO ?= go

.PHONY: test compare compare-duet compare-2013 compare-quick tools tools-targets tools-tests compose compose-smoke

# vet, then every test with the race detector. The integration tests build
# and drive real nginx, wrk, cgi-fcgi, sockets, network namespaces, every
# target server and a two-node Docker Swarm, so first install what is
# missing (silent when nothing is). TESTFLAGS adds go test flags (-v, -run).
TESTFLAGS ?=
test: tools-tests
	$(GO) vet ./...
	$(GO) test -race -timeout 15m $(TESTFLAGS) ./...

# What is missing, through the system package manager (.ci/install-tools says
# what each group holds): a sweep of the Go targets; plus the other targets'
# toolchains; everything the tests use.
tools:
	.ci/install-tools
tools-targets:
	.ci/install-tools --targets
tools-tests:
	.ci/install-tools --tests

# The default sweep, the paired design on a time budget (docs/designs.md): the
# built-in engine in wrk's shape (closed loop, -c5000) holds its
# connections across measured windows of standalone and each topology in
# turn, pair by pair, at GOMAXPROCS 1 and 8 over all 9 topologies and an
# A/A (standalone against itself), with nginx's upstream pools sized to
# the clients; every ratio gets a pilot of pairs, then the pairs its pilot
# says it needs for +-5%, widest first, within BUDGET; then one 15 s wrk
# -t100 -c5000 run each of standalone and nginx-http at GOMAXPROCS 1,
# whose ratio the report prints beside the engine's. WINDOW is the
# measured window's length, LEAD the load before it (-lead).
BUDGET ?= 15m
WINDOW ?= 2s
LEAD ?= 1s
compare: tools
	$(GO) run ./cmd/topobench compare -design paired -load builtin -connections 5000 -gomaxprocs 1,8 -upstream-keepalive auto \
		-budget $(BUDGET) -window $(WINDOW) -lead $(LEAD) -cross-check wrk

# The duet: each pair's two windows at once, each side on half the
# servers' CPUs (docs/designs.md).
DUET_BUDGET ?= 7m
compare-duet: tools
	$(GO) run ./cmd/topobench compare -design duet -load builtin -connections 5000 -gomaxprocs 1,8 -upstream-keepalive auto \
		-budget $(DUET_BUDGET) -window $(WINDOW) -lead $(LEAD)

# The faithful reproduction of the 2013 run: wrk -t100 -c5000, 9
# topologies x GOMAXPROCS 1, 8 x 12 interleaved rounds of 15 s runs (about
# 75 minutes).
compare-2013: tools
	$(GO) run ./cmd/topobench compare

compare-quick: tools
	$(GO) run ./cmd/topobench compare -duration 5s -connections 500 -reps 1 -warmup 1s

# The same sweep in containers through docker compose (docs/containers.md):
# installs and starts a Docker engine and a compose CLI when missing, makes
# the base images when the registry cannot be reached, fits the open-files
# limit to the engine's, then runs `up` and `down`. TOPOBENCH_* knobs apply.
compose:
	compose/up.sh

# Builds the container images and runs a short sweep through docker compose,
# then checks the report and that nothing is left (same set-up as compose).
compose-smoke:
	compose/smoke.sh
