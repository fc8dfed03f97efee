#!/usr/bin/env bash
# make compose-smoke: builds the compose images from this checkout and runs a
# short sweep through `docker compose up` — every topology, GOMAXPROCS 1 and
# 2 (so the harness restarts hello through procd), one second per cell — then
# checks the exit status, the report, and that `down` leaves nothing behind.
#
# Needs a running Docker engine and a compose CLI ("docker compose" or
# docker-compose). Where Docker Hub cannot be reached, the base images are
# made locally first (compose/base-images.sh). Knobs (README "Containers")
# set in the environment win over the short sweep's values.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "compose-smoke: $*" >&2; }
die() { log "$*"; exit 1; }

command -v docker >/dev/null || die "no docker CLI in PATH"
if ! out=$(docker info 2>&1 >/dev/null); then
	die "no Docker engine answers ($(echo "$out" | tail -n 1)); start one (e.g. dockerd) and retry"
fi
if docker compose version >/dev/null 2>&1; then
	compose=(docker compose)
elif command -v docker-compose >/dev/null; then
	compose=(docker-compose)
else
	die "no compose CLI: install the compose plugin or docker-compose"
fi

# Base images: the Dockerfile's defaults if present or pullable, else local
# stand-ins.
have_image() {
	docker image inspect "$1" >/dev/null 2>&1 || timeout 60 docker pull -q "$1" >/dev/null 2>&1
}
if [ -z "${TOPOBENCH_GO_IMAGE:-}" ] || [ -z "${TOPOBENCH_DEBIAN_IMAGE:-}" ]; then
	if have_image golang:1.26-bookworm && have_image debian:bookworm-slim; then
		export TOPOBENCH_GO_IMAGE=golang:1.26-bookworm TOPOBENCH_DEBIAN_IMAGE=debian:bookworm-slim
	else
		log "Docker Hub images unavailable; making local base images"
		eval "$(compose/base-images.sh)"
	fi
fi

# Open files: the reference's 200000 where the engine allows it, else the
# hard limit this shell has (engines started from it cannot give more).
if [ -z "${TOPOBENCH_NOFILE:-}" ]; then
	if docker run --rm --network none --ulimit nofile=200000:200000 "$TOPOBENCH_DEBIAN_IMAGE" true >/dev/null 2>&1; then
		export TOPOBENCH_NOFILE=200000
	else
		TOPOBENCH_NOFILE=$(ulimit -Hn)
		export TOPOBENCH_NOFILE
		log "the engine refuses nofile 200000; using $TOPOBENCH_NOFILE"
	fi
fi

export TOPOBENCH_GOMAXPROCS=${TOPOBENCH_GOMAXPROCS:-1,2}
export TOPOBENCH_REPS=${TOPOBENCH_REPS:-1}
export TOPOBENCH_DURATION=${TOPOBENCH_DURATION:-1s}
export TOPOBENCH_WARMUP=${TOPOBENCH_WARMUP:-0s}
export TOPOBENCH_THREADS=${TOPOBENCH_THREADS:-2}
export TOPOBENCH_CONNECTIONS=${TOPOBENCH_CONNECTIONS:-20}
if [ -z "${TOPOBENCH_RESULTS:-}" ]; then
	TOPOBENCH_RESULTS=$(mktemp -d "${TMPDIR:-/tmp}/tb-compose-smoke.XXXXXX")
	export TOPOBENCH_RESULTS
fi

project=tbsmoke
dc=("${compose[@]}" -p "$project" -f compose/docker-compose.yml)
leftovers() { docker ps -aq --filter "label=com.docker.compose.project=$project"; }
cleanup() { "${dc[@]}" down --volumes --remove-orphans >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup

log "building images (${compose[*]})"
buildlog=$(mktemp "${TMPDIR:-/tmp}/tb-compose-build.XXXXXX")
"${dc[@]}" build >"$buildlog" 2>&1 || { tail -n 30 "$buildlog" >&2; die "build failed (log: $buildlog)"; }
rm -f "$buildlog"

log "up: GOMAXPROCS $TOPOBENCH_GOMAXPROCS, -d $TOPOBENCH_DURATION -c $TOPOBENCH_CONNECTIONS -t $TOPOBENCH_THREADS; results in $TOPOBENCH_RESULTS"
set +e
# Bounded: a hung sweep must not hang the smoke test.
timeout 1200 "${dc[@]}" up --exit-code-from harness
status=$?
set -e
[ "$status" = 0 ] || die "docker compose up exited $status (the harness's status; 124: timed out)"

"${dc[@]}" down --volumes --remove-orphans >/dev/null 2>&1
[ -z "$(leftovers)" ] || die "containers left after down: $(leftovers | tr '\n' ' ')"

# compare writes results/<timestamp>/summary.md; the sweep is new, so there
# is exactly one.
mapfile -t summaries < <(find "$TOPOBENCH_RESULTS" -mindepth 2 -maxdepth 2 -name summary.md)
[ "${#summaries[@]}" = 1 ] || die "want one summary.md under $TOPOBENCH_RESULTS, found ${#summaries[@]}"
summary=${summaries[0]}
[ -s "$summary" ] || die "$summary is empty"
topologies=${TOPOBENCH_TOPOLOGIES:-standalone,nginx-http,nginx-fcgi-tcp,nginx-fcgi-unix,nginx-return,nginx-static,nginx-fcgi-fast-tcp,nginx-fcgi-fast-unix,nginx-http-unix}
for t in ${topologies//,/ }; do
	grep -q -- "$t" "$summary" || die "$summary does not mention $t"
done
log "ok: report $summary"
