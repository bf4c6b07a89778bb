#!/bin/sh
# hosts.sh: several "hosts" on this machine, for the tests of a catalog
# that several hosts write at once (the PostgreSQL catalog).  A host is a
# network namespace joined to this one by a veth pair of its own (a /30),
# and a disk of its own: an ext4 file system with a fixed UUID, in a file
# image on a loop device, that a command run on the host mounts in a new
# mount namespace (no other host, nor this machine, sees it mounted).
#
#   hosts.sh check                     exit 0 if this machine can (root,
#                                      ip netns, veth, losetup, mkfs.ext4,
#                                      unshare), else say why and exit 1
#   hosts.sh up STATE N                hosts h1..hN (N <= 4); prints the
#                                      addresses of this machine's ends of
#                                      their links, comma-separated (what a
#                                      server listens on)
#   hosts.sh addr STATE HOST           the address HOST reaches this
#                                      machine at (its link's other end)
#   hosts.sh disk STATE HOST UUID MB [DIR]
#                                      HOST's disk: MB megabytes of ext4
#                                      with file system UUID UUID, holding
#                                      a copy of directory DIR (mkfs -d)
#   hosts.sh run STATE HOST MNT CMD... CMD on HOST: in its network
#                                      namespace, in a new mount namespace
#                                      where HOST's disk is mounted at MNT
#                                      (a directory that exists; MNT '-':
#                                      none, the host without its disk),
#                                      with PHOTOIDX_HOST=HOST.  It execs:
#                                      the process the caller started
#                                      becomes CMD (its pid, its exit
#                                      status; 125 when the mount failed)
#   hosts.sh down STATE                remove the hosts, their links and
#                                      loop devices, and STATE
#
# Names come from the pid of `up` (namespaces pxhN-1.., links pxhN-1a..,
# 10.198.0.0/16), so that two sets of hosts can be up at once.  The loop
# devices are the ones `disk` attached (their numbers in STATE), never
# any other.
set -eu

die() {
	echo "hosts.sh: $*" >&2
	exit 1
}

check() {
	[ "$(id -u)" = 0 ] || { echo "not root: cannot make network namespaces nor loop devices"; return 1; }
	for t in ip losetup mkfs.ext4 unshare mount umount; do
		command -v $t >/dev/null || { echo "$t is missing"; return 1; }
	done
	ns=pxhcheck$$
	ip netns add $ns 2>/dev/null || { echo "ip netns add is refused here"; return 1; }
	if ! ip link add pxhc$$a type veth peer name pxhc$$b 2>/dev/null; then
		ip netns del $ns
		echo "cannot make a veth pair here"
		return 1
	fi
	ip link del pxhc$$a
	ip netns del $ns
	[ -e /dev/loop-control ] || { echo "no /dev/loop-control (no loop devices)"; return 1; }
	unshare -m true 2>/dev/null || { echo "unshare -m is refused here"; return 1; }
}

# state_dir STATE: STATE must have been made by `up`
state_dir() {
	[ -f "$1/.hosts.sh" ] || die "'$1' is not a directory made by hosts.sh up"
	state=$(cd "$1" && pwd -P)
}

# host_dir HOST: $state/HOST, which must exist
host_dir() {
	case "$1" in h[1-9]) ;; *) die "bad host name '$1' (h1, h2 ...)" ;; esac
	[ -f "$state/$1/ns" ] || die "no host '$1' in '$state'"
	hd=$state/$1
}

up() {
	[ $# -eq 2 ] || usage
	n_hosts=$2
	case "$n_hosts" in [1-4]) ;; *) die "between 1 and 4 hosts, not '$n_hosts'" ;; esac
	[ ! -e "$1" ] || [ -z "$(ls -A "$1" 2>/dev/null)" ] || die "'$1' exists and is not empty"
	mkdir -p "$1"
	: >"$1/.hosts.sh"
	state=$(cd "$1" && pwd -P)
	trap 'down "$state"' EXIT
	# 16 addresses of 10.198.0.0/16 a set: four /30s
	n=$(($$ % 4096)) a=$((n / 16)) b=$(((n % 16) * 16))
	addrs=""
	i=1
	while [ $i -le "$n_hosts" ]; do
		hd=$state/h$i ns=pxh$n-$i link=pxh$n-${i}a peer=pxh$n-${i}b
		mine=10.198.$a.$((b + 4 * (i - 1) + 1)) theirs=10.198.$a.$((b + 4 * (i - 1) + 2))
		mkdir -p "$hd"
		echo "$ns" >"$hd/ns"
		ip netns add "$ns"
		echo "$link" >"$hd/link"
		ip link add "$link" type veth peer name "$peer"
		ip link set "$peer" netns "$ns"
		ip addr add "$mine/30" dev "$link"
		ip link set "$link" up
		ip netns exec "$ns" ip addr add "$theirs/30" dev "$peer"
		ip netns exec "$ns" ip link set "$peer" up
		ip netns exec "$ns" ip link set lo up
		echo "$mine" >"$hd/addr"
		echo "$theirs" >"$hd/own-addr"
		addrs=$addrs${addrs:+,}$mine
		i=$((i + 1))
	done
	trap - EXIT
	echo "$addrs"
}

addr() {
	[ $# -eq 2 ] || usage
	state_dir "$1"
	host_dir "$2"
	cat "$hd/addr"
}

disk() {
	[ $# -ge 4 ] && [ $# -le 5 ] || usage
	state_dir "$1"
	host_dir "$2"
	uuid=$3 mb=$4 src=${5:-}
	case "$mb" in '' | *[!0-9]*) die "bad size '$mb' (megabytes)" ;; esac
	[ ! -f "$hd/loop" ] || die "host '$2' has a disk already"
	rm -f "$hd/disk.img"
	truncate -s "${mb}M" "$hd/disk.img"
	# an inode for every 2 kB: the tests' files are small and many
	mkfs.ext4 -q -F -i 2048 -U "$uuid" ${src:+-d "$src"} "$hd/disk.img" || die "mkfs.ext4 failed"
	loop=$(losetup -f --show "$hd/disk.img") || die "losetup failed"
	echo "$loop" >"$hd/loop"
}

run() {
	[ $# -ge 4 ] || usage
	state_dir "$1"
	host_dir "$2"
	host=$2 mnt=$3
	shift 3
	PHOTOIDX_HOST=$host
	export PHOTOIDX_HOST
	if [ "$mnt" = - ]; then
		exec ip netns exec "$(cat "$hd/ns")" unshare -m --propagation private "$@"
	fi
	[ -f "$hd/loop" ] || die "host '$host' has no disk (hosts.sh disk)"
	[ -d "$mnt" ] || die "no directory '$mnt' to mount on"
	exec ip netns exec "$(cat "$hd/ns")" unshare -m --propagation private \
		sh -c 'mount -t ext4 "$1" "$2" || exit 125; shift 2; exec "$@"' sh "$(cat "$hd/loop")" "$mnt" "$@"
}

down() {
	[ $# -eq 1 ] || usage
	[ -d "$1" ] || return 0
	[ -f "$1/.hosts.sh" ] || die "'$1' is not a directory made by hosts.sh up (not removed)"
	for hd in "$1"/h*; do
		[ -d "$hd" ] || continue
		# (a mount made by `run` dies with its mount namespace, so the
		# loop device is free once the commands that used it are gone)
		if [ -f "$hd/loop" ]; then
			loop=$(cat "$hd/loop")
			# only if it is still backed by this image
			case "$(losetup -n -O BACK-FILE "$loop" 2>/dev/null)" in
			*"/$(basename "$hd")/disk.img"*) losetup -d "$loop" 2>/dev/null || true ;;
			esac
		fi
		[ -f "$hd/ns" ] && ip netns del "$(cat "$hd/ns")" 2>/dev/null || true
		[ -f "$hd/link" ] && ip link del "$(cat "$hd/link")" 2>/dev/null || true
	done
	rm -rf "$1"
}

usage() {
	echo "usage: hosts.sh check | up STATE N | addr STATE HOST | disk STATE HOST UUID MB [DIR] |" \
		"run STATE HOST MNT CMD... | down STATE" >&2
	exit 64
}

case "${1:-}" in
check) check ;;
up) shift; up "$@" ;;
addr) shift; addr "$@" ;;
disk) shift; disk "$@" ;;
run) shift; run "$@" ;;
down) shift; down "$@" ;;
*) usage ;;
esac
