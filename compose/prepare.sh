# Sourced by compose/up.sh and compose/smoke.sh (bash, set -euo pipefail,
# working directory the repository root): makes a machine with at most Go
# ready for `docker compose up`, failing with one line that names the
# missing piece.
#
#   1. a compose CLI (lib.sh's find_compose): `docker compose` (v2) if it
#      works, else docker-compose, installed from the distribution when missing
#      (bookworm's is v1, which reads the same file). With
#      TOPOBENCH_COMPOSE_BUILD=1 and Go here, a v2 plugin is built from its
#      Go module instead; not by default: on 2 busy cores that took over 12
#      minutes
#   2. the engine and the rest through .ci/install-tools --compose
#   3. an engine that answers: when none does, containerd and dockerd are
#      started in the background, logging to /var/log/{containerd,dockerd}.log
#      (machines without systemd start neither), with fs.nr_open open files
#      (at most 1048576) rather than the caller's hard limit; they keep
#      running, as a service would, but without a bridge or firewall rules
#   4. base images: the Dockerfile's defaults when present or pullable, else
#      local stand-ins from compose/base-images.sh
#   5. TOPOBENCH_NOFILE: tuning/limits.conf's 200000 if the engine grants it, else
#      the engine's own hard limit, checked by starting a container with it
#
# It sets `compose` (the CLI, an array) and exports TOPOBENCH_GO_IMAGE,
# TOPOBENCH_DEBIAN_IMAGE and TOPOBENCH_NOFILE. Settings already in the
# environment win.

# shellcheck source=compose/lib.sh
. compose/lib.sh

log() { echo "${prog:-compose}: $*" >&2; }
die() { log "$*"; exit 1; }

# The compose v2 release built on request (TOPOBENCH_COMPOSE_BUILD=1).
compose_v2=v2.40.3

sudo=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
	sudo=(sudo)
fi

# 1. The compose CLI.
build_compose_v2() {
	local plugins=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins work dir
	work=$(mktemp -d "${TMPDIR:-/tmp}/tb-compose-v2.XXXXXX")
	log "building the compose $compose_v2 CLI plugin from its Go module (a few minutes; log: $work/build.log)"
	# Built from its own module: its go.mod has exclude directives, which
	# `go install pkg@version` refuses.
	# Outside this checkout's module, so its go.mod and go.sum stay as they are.
	if dir=$(cd "$work" && go mod download -json "github.com/docker/compose/v2@$compose_v2" 2>"$work/build.log" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') && [ -n "$dir" ] &&
		cp -r "$dir" "$work/src" && chmod -R u+w "$work/src" &&
		(cd "$work/src" && CGO_ENABLED=0 go build -trimpath \
			-ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$compose_v2" \
			-o "$work/docker-compose" ./cmd) >>"$work/build.log" 2>&1; then
		mkdir -p "$plugins"
		mv "$work/docker-compose" "$plugins/docker-compose"
		rm -rf "$work"
		log "installed $plugins/docker-compose"
	else
		tail -n 5 "$work/build.log" >&2
		log "building compose $compose_v2 failed (log: $work/build.log); falling back to Debian's docker-compose"
	fi
}
if ! find_compose && [ "${TOPOBENCH_COMPOSE_BUILD:-0}" = 1 ] && command -v go >/dev/null 2>&1; then
	build_compose_v2
fi

# 2. Engine, CLI, compose v1 if still no compose CLI, debootstrap.
.ci/install-tools --compose || die "installing the engine and compose CLI failed (.ci/install-tools --compose)"
find_compose || die "no compose CLI: neither 'docker compose' nor docker-compose works after installing"

# 3. An engine that answers.
engine_up() { docker info >/dev/null 2>&1; }
# $1: name, $2: socket it serves, rest: command line.
start_daemon() {
	local name=$1 sock=$2 logf=/var/log/$1.log i
	shift 2
	log "starting $name (log: $logf)"
	# setsid: the daemon outlives this script and its terminal, as a
	# service would. As root, with fs.nr_open open files rather than the
	# caller's hard limit: the containers get no more than the engine has.
	"${sudo[@]}" setsid bash -c "$(declare -f with_nofile); with_nofile \"\$@\"" start_daemon \
		"$(daemon_nofile)" "$@" </dev/null >>"$logf" 2>&1 &
	for i in $(seq 1 60); do
		[ -S "$sock" ] && return 0
		sleep 0.5
	done
	tail -n 15 "$logf" >&2
	die "$name did not create $sock within 30s (log: $logf)"
}
if ! engine_up; then
	if [ -n "${DOCKER_HOST:-}" ]; then
		die "no Docker engine answers at DOCKER_HOST=$DOCKER_HOST ($(docker info 2>&1 | tail -n 1))"
	fi
	[ "$(id -u)" = 0 ] || [ ${#sudo[@]} -gt 0 ] ||
		die "no Docker engine answers, and starting one needs root or sudo"
	# Socket left by a daemon that died: the daemon's pid file says.
	if [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1; then
		:
	else
		start_daemon containerd /run/containerd/containerd.sock containerd
	fi
	# No bridge, no iptables rules, no ip_forward: the services use no
	# network and the builds the host's (docker-compose.yml), so an engine
	# started here leaves the host's firewall and forwarding as they were
	# (Docker's defaults set the FORWARD policy to DROP, which breaks
	# bridged network namespaces other programs set up).
	start_daemon dockerd /var/run/docker.sock dockerd --containerd=/run/containerd/containerd.sock \
		--bridge=none --iptables=false --ip-forward=false
	for i in $(seq 1 60); do
		engine_up && break
		sleep 0.5
	done
	engine_up || {
		tail -n 15 /var/log/dockerd.log >&2
		die "dockerd started but does not answer ($(docker info 2>&1 | tail -n 1); log: /var/log/dockerd.log)"
	}
fi

# 4. Base images.
if [ -z "${TOPOBENCH_GO_IMAGE:-}" ] || [ -z "${TOPOBENCH_DEBIAN_IMAGE:-}" ]; then
	have_image() {
		docker image inspect "$1" >/dev/null 2>&1 || timeout 30 docker pull -q "$1" >/dev/null 2>&1
	}
	if have_image golang:1.26-bookworm && have_image debian:bookworm-slim; then
		export TOPOBENCH_GO_IMAGE=golang:1.26-bookworm TOPOBENCH_DEBIAN_IMAGE=debian:bookworm-slim
	else
		log "the registry's base images are unavailable; making local ones (compose/base-images.sh)"
		# Two steps: eval "$(...)" would hide the script's failure.
		vars=$(compose/base-images.sh) || die "making the base images failed (compose/base-images.sh)"
		eval "$vars"
	fi
fi

# 5. Open files.
nofile_ok() {
	docker run --rm --network none --ulimit "nofile=$1:$1" "$TOPOBENCH_DEBIAN_IMAGE" true >/dev/null 2>"${2:-/dev/null}"
}
if [ -z "${TOPOBENCH_NOFILE:-}" ]; then
	if nofile_ok 200000; then
		export TOPOBENCH_NOFILE=200000
	else
		# The engine can grant no more than its own hard limit.
		n=""
		if pid=$(cat /var/run/docker.pid 2>/dev/null) && [ -r "/proc/$pid/limits" ]; then
			n=$(awk '/^Max open files/ { print $5 }' "/proc/$pid/limits")
		fi
		[ -n "$n" ] && [ "$n" != unlimited ] || n=$(ulimit -Hn)
		err=$(mktemp)
		nofile_ok "$n" "$err" || die "the engine grants neither 200000 nor $n open files: $(tail -n 1 "$err"); set TOPOBENCH_NOFILE"
		rm -f "$err"
		export TOPOBENCH_NOFILE=$n
		log "the engine refuses 200000 open files; using its limit, $n (TOPOBENCH_NOFILE)"
	fi
fi
