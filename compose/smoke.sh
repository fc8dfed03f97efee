#!/usr/bin/env bash
# make compose-smoke: builds the compose images from this checkout and runs a
# short sweep through `docker compose up` — every topology, GOMAXPROCS 1 and
# 2 (so the harness restarts hello through procd), one second per cell — then
# checks the exit status, the report, and that `down` leaves nothing behind.
#
# compose/prepare.sh installs and starts what is missing first. Knobs
# (docs/containers.md) set in the environment win over the short sweep's
# values.
set -euo pipefail
cd "$(dirname "$0")/.."

prog=compose-smoke
# Engine, compose CLI, base images and open-files limit, installed and
# started when missing (the same set-up as make compose).
# shellcheck source=compose/prepare.sh
. compose/prepare.sh

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
