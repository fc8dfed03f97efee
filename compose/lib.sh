# Functions of the compose scripts (prepare.sh, up.sh, smoke.sh, dc),
# sourced; defining them does nothing else.

# find_compose sets `compose` (an array) to the compose CLI that works
# here: `docker compose` (v2) when it does, else docker-compose (v1, which
# reads the same file; Debian bookworm's). It returns 1 when neither works.
# The one place the two are told apart.
find_compose() {
	if docker compose version >/dev/null 2>&1; then
		compose=(docker compose)
	elif command -v docker-compose >/dev/null 2>&1 && docker-compose version >/dev/null 2>&1; then
		compose=(docker-compose)
	else
		compose=()
		return 1
	fi
}

# daemon_nofile is the open-files limit to start the engine's daemons
# with: fs.nr_open, the most root may set, at most 1048576. A container
# gets no more than the engine's hard limit, and the caller's (20000 on a
# small machine) is no reason to cap it there.
daemon_nofile() {
	local n
	n=$(cat /proc/sys/fs/nr_open 2>/dev/null) || n=1048576
	case $n in '' | *[!0-9]*) n=1048576 ;; esac
	[ "$n" -le 1048576 ] || n=1048576
	echo "$n"
}

# with_nofile N CMD...: runs CMD with its soft and hard open-files limits
# set to N (raising needs root with CAP_SYS_RESOURCE, up to fs.nr_open;
# anyone may lower), or, when the kernel refuses, says so on stderr and
# runs it with the limits it has.
with_nofile() {
	local n=$1
	shift
	bash -c 'n=$1; shift
		if ! ulimit -n "$n" 2>/dev/null; then # soft and hard at once
			echo "compose: could not raise the open-files limit to $n for $1; it keeps $(ulimit -Hn)" >&2
		fi
		exec "$@"' with_nofile "$n" "$@"
}
