#!/usr/bin/env bash
# Makes local stand-ins for the two base images compose/Dockerfile builds
# FROM, for engines that cannot pull from Docker Hub:
#
#   topobench/debian:bookworm   a minimal Debian bookworm, debootstrapped
#                               from the Debian mirror apt already uses here
#   topobench/golang:VERSION    that image plus this machine's Go toolchain
#                               (go env GOROOT), which must satisfy go.mod
#
# It prints the variables that point the build at them:
#
#   eval "$(compose/base-images.sh)"
#
# Images already present are kept (-f rebuilds them). Needs root (debootstrap)
# and a running Docker engine. On failure it says why on stderr and prints
# `false` instead of the variables, so that the eval above fails too rather
# than succeed with nothing set.
set -euo pipefail
cd "$(dirname "$0")/.."

force=0
[ "${1:-}" = "-f" ] && force=1

log() { echo "base-images: $*" >&2; }
die() { log "$*"; exit 1; }
# Whatever fails, including a command set -e stops at, prints `false` for
# the caller's eval.
trap 'status=$?; [ "$status" = 0 ] || echo false' EXIT

command -v docker >/dev/null || die "no docker CLI"
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info: $(docker info 2>&1 | tail -n 1))"
command -v go >/dev/null || die "no Go toolchain to put into the Go image"

debian_tag=topobench/debian:bookworm
# The toolchain must meet go.mod's go line.
want=$(awk '$1 == "go" { print $2; exit }' go.mod)
have=$(go env GOVERSION)
have=${have#go}
if [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n 1)" != "$want" ]; then
	die "go.mod needs Go $want; this machine has $have"
fi
go_tag=topobench/golang:$(echo "$have" | cut -d. -f1-2)

present() { [ "$force" = 0 ] && docker image inspect "$1" >/dev/null 2>&1; }

# The mirror apt uses (deb822 "URIs:" or a one-line "deb URL"), else Debian's
# default.
mirror() {
	local m
	m=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
		awk '/^URIs:/ && $2 ~ /\/debian\/?$/ { print $2; exit }
		     /^deb / && $2 ~ /\/debian\/?$/ { print $2; exit }')
	echo "${m:-http://deb.debian.org/debian}"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/tb-base.XXXXXX")
trap 'status=$?; rm -rf "$work"; [ "$status" = 0 ] || echo false' EXIT

if ! present "$debian_tag"; then
	[ "$(id -u)" = 0 ] || die "debootstrap needs root"
	command -v debootstrap >/dev/null || die "debootstrap missing (apt-get install debootstrap)"
	url=$(mirror)
	log "debootstrapping bookworm from $url"
	# ca-certificates: the Go build stage fetches modules over HTTPS.
	debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" "$url" >"$work/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
	# Trust the certificate authorities this machine trusts locally (a proxy
	# that re-signs TLS, as some networks have), so module downloads in the
	# build stage work wherever they work here.
	if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
		cp /usr/local/share/ca-certificates/*.crt "$work/rootfs/usr/local/share/ca-certificates/"
		chroot "$work/rootfs" update-ca-certificates >/dev/null 2>&1 || die "update-ca-certificates failed in the new root"
	fi
	rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
	tar -C "$work/rootfs" -c . | docker import -c 'CMD ["/bin/bash"]' - "$debian_tag" >/dev/null
	rm -rf "$work/rootfs"
	log "made $debian_tag"
fi

if ! present "$go_tag"; then
	goroot=$(go env GOROOT)
	log "making $go_tag from $goroot (Go $have)"
	mkdir -p "$work/go-image"
	cp -a "$goroot" "$work/go-image/go"
	cat >"$work/go-image/Dockerfile" <<EOF
FROM $debian_tag
COPY go /usr/local/go
ENV GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /go
EOF
	docker build -q --network host -t "$go_tag" "$work/go-image" >/dev/null
	log "made $go_tag"
fi

echo "export TOPOBENCH_DEBIAN_IMAGE=$debian_tag TOPOBENCH_GO_IMAGE=$go_tag"
