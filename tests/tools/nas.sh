#!/bin/sh
# nas.sh: a NAS share with network latency, as a user's machine sees one:
# an sshd in its own network namespace (the "NAS"), reached over a veth
# pair through a TCP proxy that delays every byte (tests/tools/delay-proxy.py;
# `tc netem` is not available here), mounted with sshfs.
#
#   nas.sh check                         exit 0 if this machine can (root,
#                                        ip netns, sshd, sshfs, /dev/fuse),
#                                        else say why and exit 1
#   nas.sh up STATE EXPORT [DELAY_MS]    serve directory EXPORT, mount it at
#                                        STATE/mnt (printed), one-way delay
#                                        DELAY_MS (default 1 ms: 2 ms a
#                                        round trip)
#   nas.sh down STATE                    unmount, stop, remove everything
#
# NAS_SSHFS_OPTS adds sshfs options ("-o dcache_timeout=1": sshfs keeps
# what it listed of a directory for 20 s by default, so a change made on
# the server is seen through the mount only after that).
#
# The export is on this machine's own file system (the namespace shares
# it); the bytes still go through sshd, the veth pair, the proxy and FUSE.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

check() {
	[ "$(id -u)" = 0 ] || { echo "not root: cannot make a network namespace"; return 1; }
	for t in ip sshfs ssh-keygen python3; do
		command -v $t >/dev/null || { echo "$t is missing (sh contrib/debian-deps.sh test)"; return 1; }
	done
	[ -x /usr/sbin/sshd ] || { echo "sshd is missing (openssh-server)"; return 1; }
	[ -c /dev/fuse ] || { echo "no /dev/fuse"; return 1; }
	ns=pixnas-check-$$
	ip netns add $ns 2>/dev/null || { echo "ip netns add is refused here"; return 1; }
	ip netns del $ns
}

down() {
	state=$1
	[ -d "$state" ] || return 0
	if [ -f "$state/mnt.on" ]; then
		fusermount3 -u "$state/mnt" 2>/dev/null || fusermount -u "$state/mnt" 2>/dev/null ||
			umount -l "$state/mnt" 2>/dev/null || true
	fi
	for p in proxy sshd; do
		[ -f "$state/$p.pid" ] && kill "$(cat "$state/$p.pid")" 2>/dev/null || true
	done
	[ -f "$state/ns" ] && ip netns del "$(cat "$state/ns")" 2>/dev/null || true
	[ -f "$state/veth" ] && ip link del "$(cat "$state/veth")" 2>/dev/null || true
	rm -rf "$state"
}

up() {
	state=$1 export=$2 delay=${3:-1}
	mkdir -p "$state/mnt"
	state=$(cd "$state" && pwd)
	export=$(cd "$export" && pwd)
	trap 'down "$state"' EXIT
	# a subnet of 10.199.0.0/16 and names from this shell's pid, so that
	# two NAS can be up at once
	n=$(($$ % 16000)) ns=pixnas$n veth=pxh$n
	a=$((n / 64)) b=$(((n % 64) * 4))
	host=10.199.$a.$((b + 1)) nas=10.199.$a.$((b + 2))
	echo $ns >"$state/ns"
	echo $veth >"$state/veth"
	ip netns add $ns
	ip link add $veth type veth peer name pxn$n
	ip link set pxn$n netns $ns
	ip addr add $host/30 dev $veth
	ip link set $veth up
	ip netns exec $ns ip addr add $nas/30 dev pxn$n
	ip netns exec $ns ip link set pxn$n up
	ip netns exec $ns ip link set lo up

	ssh-keygen -q -t ed25519 -N "" -f "$state/host_key"
	ssh-keygen -q -t ed25519 -N "" -f "$state/user_key"
	cp "$state/user_key.pub" "$state/authorized_keys"
	chmod 700 "$state"
	cat >"$state/sshd_config" <<-EOF
		ListenAddress $nas:22
		HostKey $state/host_key
		AuthorizedKeysFile $state/authorized_keys
		PermitRootLogin prohibit-password
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		StrictModes no
		PidFile $state/sshd.pid
		Subsystem sftp internal-sftp
	EOF
	mkdir -p /run/sshd
	ip netns exec $ns /usr/sbin/sshd -f "$state/sshd_config" -E "$state/sshd.log" </dev/null >/dev/null 2>&1
	# (its output away from the caller's: a $(nas.sh up) would wait for it)
	python3 "$here/delay-proxy.py" 127.0.0.1:0 $nas:22 "$delay" "$state/port" </dev/null >/dev/null 2>"$state/proxy.log" &
	echo $! >"$state/proxy.pid"
	i=0
	while [ ! -s "$state/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	port=$(cat "$state/port")
	# sshfs as a user mounts a NAS: its defaults (kernel caching of
	# attributes and data as sshfs sets them), a key, no host key prompt
	sshfs -o port="$port" -o IdentityFile="$state/user_key" -o StrictHostKeyChecking=no \
		-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o reconnect -o ServerAliveInterval=15 ${NAS_SSHFS_OPTS:-} \
		"root@127.0.0.1:$export" "$state/mnt" </dev/null >/dev/null 2>"$state/sshfs.log"
	touch "$state/mnt.on"
	trap - EXIT
	echo "$state/mnt"
}

case "${1:-}" in
check) check ;;
up) shift; up "$@" ;;
down) shift; down "$@" ;;
*) echo "usage: nas.sh check | up STATE EXPORT [DELAY_MS] | down STATE" >&2; exit 64 ;;
esac
