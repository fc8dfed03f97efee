GO ?= go

.PHONY: test compare compare-paired compare-2013 compare-quick tools tools-targets tools-tests compose compose-smoke

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

# The default sweep, the duet on a time budget (docs/designs.md): the
# built-in engine (closed loop, -c5000) holds standalone's pool of
# connections and each topology's in turn, and loads both at once, cut in
# windows at the same edges, each side's servers in a control group of
# equal CPU weight (half the servers' CPUs each), at GOMAXPROCS 1 and 8
# over all 9 topologies and an A/A (standalone against itself), with
# nginx's upstream pools sized to the clients; every ratio gets a pilot
# of pairs, then the pairs its pilot says it needs for +-5%, widest
# first, within BUDGET (PRECISION: +-5%). WINDOW is a pair's window: 3 s, and 6 s on
# net/http/fcgi's paths, whose backend collects its garbage about every
# second (`topobench windows` picks these from sweeps of other lengths);
# LEAD the load before a run of windows (-lead).
BUDGET ?= 12m
PRECISION ?= 5%
WINDOW ?= 3s,nginx-fcgi-tcp=6s,nginx-fcgi-unix=6s
LEAD ?= 1s
compare: tools
	$(GO) run ./cmd/topobench compare -design duet -load builtin -connections 5000 -gomaxprocs 1,8 -upstream-keepalive auto \
		-budget $(BUDGET) -precision $(PRECISION) -window $(WINDOW) -lead $(LEAD)

# The paired design: standalone's and each topology's windows one after
# the other on the whole of the servers' CPUs, then one 15 s wrk -t100
# -c5000 run each of standalone and nginx-http at GOMAXPROCS 1, whose
# ratio the report prints beside the engine's. Its pairs stray more than
# the duet's: 15 minutes leave its ratios at +-7% or wider here.
PAIRED_BUDGET ?= 15m
PAIRED_WINDOW ?= 2s
compare-paired: tools
	$(GO) run ./cmd/topobench compare -design paired -load builtin -connections 5000 -gomaxprocs 1,8 -upstream-keepalive auto \
		-budget $(PAIRED_BUDGET) -window $(PAIRED_WINDOW) -lead $(LEAD) -cross-check wrk

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
