GO ?= go

.PHONY: test compare compare-quick tools tools-targets tools-tests compose compose-smoke

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

# The default sweep: 9 topologies x GOMAXPROCS 1, 8 x 12 interleaved
# rounds of 15 s runs (about 75 minutes); the report lands in results/.
# make compare BUDGET=10m fits the sweep into that wall time instead
# (-budget): an answer in minutes, but its short runs read the slower
# paths low (README, "What a time budget buys"), so it is not the default.
BUDGET ?=
compare: tools
	$(GO) run ./cmd/topobench compare $(if $(BUDGET),-budget $(BUDGET))

compare-quick: tools
	$(GO) run ./cmd/topobench compare -duration 5s -connections 500 -reps 1 -warmup 1s

# The same sweep in containers through docker compose (README "Containers"):
# installs and starts a Docker engine and a compose CLI when missing, makes
# the base images when the registry cannot be reached, fits the open-files
# limit to the engine's, then runs `up` and `down`. TOPOBENCH_* knobs apply.
compose:
	compose/up.sh

# Builds the container images and runs a short sweep through docker compose,
# then checks the report and that nothing is left (same set-up as compose).
compose-smoke:
	compose/smoke.sh
