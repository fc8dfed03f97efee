GO ?= go

.PHONY: test compare compare-paired compare-2013 compare-tls compare-quick tools tools-targets tools-tests compose compose-smoke

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

# The default sweep, a bare `topobench compare` (its -preset duet,
# docs/designs.md): the built-in engine (closed loop, -c5000) holds
# standalone's pool of connections and each topology's in turn, and loads
# both at once, cut in windows at the same edges (3 s, 6 s on
# net/http/fcgi's paths), each side's servers in a control group of equal
# CPU weight, at GOMAXPROCS 1 and 8 over all 9 topologies and an A/A, with
# nginx's upstream pools sized to the clients; every ratio gets a pilot
# of pairs, then the pairs its pilot says it needs for +-PRECISION, widest
# first, within BUDGET.
BUDGET ?= 12m
PRECISION ?= 5%
compare: tools
	$(GO) run ./cmd/topobench compare -budget $(BUDGET) -precision $(PRECISION)

# The paired design (-preset paired): standalone's and each topology's
# windows one after the other on the whole of the servers' CPUs, then one
# 15 s wrk -t100 -c5000 run each of standalone and nginx-http at
# GOMAXPROCS 1, whose ratio the report prints beside the engine's. Its
# pairs stray more than the duet's: 15 minutes leave its ratios at +-7%
# or wider here.
PAIRED_BUDGET ?= 15m
compare-paired: tools
	$(GO) run ./cmd/topobench compare -preset paired -budget $(PAIRED_BUDGET)

# The faithful reproduction of the 2013 run (-preset 2013): wrk -t100
# -c5000, 9 topologies x GOMAXPROCS 1, 8 x 12 interleaved rounds of 15 s
# runs (about 75 minutes).
compare-2013: tools
	$(GO) run ./cmd/topobench compare -preset 2013

# HTTPS (docs/tls.md): the tls preset's duet of standalone-tls,
# nginx-tls-http and nginx-tls-http-unix on kept connections, on a budget
# of TLS_BUDGET, then the tls-handshake rounds (a new connection, so a
# full handshake, a request) with P-256 and with RSA-2048 keys; 6 to 9
# minutes in all, three results directories under TLS_OUT.
TLS_BUDGET ?= 5m
ifndef TLS_OUT
TLS_OUT := results/tls-$(shell date -u +%Y%m%dT%H%M%S)
endif
compare-tls: tools
	$(GO) run ./cmd/topobench compare -preset tls -budget $(TLS_BUDGET) -precision $(PRECISION) -out $(TLS_OUT)/kept
	$(GO) run ./cmd/topobench compare -preset tls-handshake -tls-key p256 -out $(TLS_OUT)/handshake-p256
	$(GO) run ./cmd/topobench compare -preset tls-handshake -tls-key rsa2048 -out $(TLS_OUT)/handshake-rsa2048

compare-quick: tools
	$(GO) run ./cmd/topobench compare -preset 2013 -duration 5s -connections 500 -reps 1 -warmup 1s

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
