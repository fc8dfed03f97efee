#!/usr/bin/env bash
# make compose: docs/containers.md's container command on a machine that may have
# nothing but Go. Installs and starts what is missing (compose/prepare.sh
# says what and how), then runs
#
#   compose/dc up --build --exit-code-from harness
#   compose/dc down --volumes
#
# (compose/dc: `docker compose` or docker-compose, whichever works)
# with the TOPOBENCH_* knobs of the environment (docs/containers.md); the
# report lands in results/<timestamp>/. Exits with the harness's status.
set -euo pipefail
cd "$(dirname "$0")/.."
prog=compose
# shellcheck source=compose/prepare.sh
. compose/prepare.sh

dc=("${compose[@]}" -f compose/docker-compose.yml)
down() { "${dc[@]}" down --volumes --remove-orphans >/dev/null 2>&1 || true; }
trap down EXIT

log "${compose[*]} up: base images $TOPOBENCH_GO_IMAGE, $TOPOBENCH_DEBIAN_IMAGE; $TOPOBENCH_NOFILE open files"
set +e
"${dc[@]}" up --build --exit-code-from harness
status=$?
set -e
[ "$status" = 0 ] || die "docker compose up exited $status (the harness's status)"
log "done; the report is in ${TOPOBENCH_RESULTS:-results}/"
