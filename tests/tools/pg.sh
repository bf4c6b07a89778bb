#!/bin/sh
# pg.sh: a throwaway PostgreSQL cluster for the tests and benchmarks of the
# PostgreSQL catalog: trust authentication from anywhere, fsync off, its
# unix socket in its own directory, a free TCP port.  Never for real data.
#
#   pg.sh check                      exit 0 if this machine can run one,
#                                    else say why on stderr and exit 77
#   pg.sh start DIR [LISTEN_ADDR]    a new cluster in DIR (DIR/data, its
#                                    log DIR/log, its port in DIR/port, the
#                                    socket in DIR), listening on
#                                    LISTEN_ADDR (default 127.0.0.1; '*',
#                                    or an address of a veth pair for the
#                                    tests' network namespaces); prints the
#                                    base URI, postgresql://postgres@ADDR:PORT
#   pg.sh createdb DIR NAME          a fresh database NAME (UTF8, C
#                                    collation; an existing NAME is dropped
#                                    first); prints its URI
#   pg.sh psql DIR NAME [ARGS...]    psql on database NAME, as postgres,
#                                    over the socket (-X, ON_ERROR_STOP)
#   pg.sh restart DIR                restart it (pg_ctl restart -m fast:
#                                    every client's connection is cut), on
#                                    the same port
#   pg.sh stop DIR                   stop it at once (-m immediate) and
#                                    remove DIR
#
# `start` on a DIR that holds a cluster from an earlier run (still running
# or not) stops and removes it first; it refuses a DIR that is neither
# empty nor made by pg.sh.  `stop` on a missing DIR does nothing.  Two
# clusters in two directories run side by side.
#
# As root, the server runs as user nobody (initdb refuses root), so DIR's
# parent directories must be searchable by nobody; as another user, as
# that user.  The binaries: initdb from PATH (and pg_ctl, postgres, psql
# beside it), else the newest /usr/lib/postgresql/N/bin.  PIX_PG_CONF:
# more postgresql.conf lines for `start` ("shared_buffers = 1GB").
set -eu
umask 022       # the files written here are read by the server's user

# the caller's libpq settings stay out of it
unset PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGSERVICE PGSERVICEFILE PGOPTIONS \
	PGPASSFILE PGSSLMODE PGTARGETSESSIONATTRS PGDATA 2>/dev/null || true

die() {
	echo "pg.sh: $*" >&2
	exit 1
}

# bindir: where initdb is; bin TOOL: TOOL there, else from PATH
find_bindir() {
	bindir=""
	if p=$(command -v initdb 2>/dev/null); then
		bindir=$(dirname "$(readlink -f "$p")")
	else
		for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4n); do
			[ -x "$d/initdb" ] && bindir=$d
		done
	fi
	[ -n "$bindir" ]
}

bin() {
	if [ -x "$bindir/$1" ]; then
		echo "$bindir/$1"
	else
		command -v "$1"
	fi
}

# as_pg CMD...: run CMD as the cluster's owner (nobody when we are root)
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid="$pg_uid" --regid="$pg_gid" --clear-groups -- "$@"
	else
		"$@"
	fi
}

why_not() {
	find_bindir || { echo "no PostgreSQL server (initdb) on PATH or in /usr/lib/postgresql/*/bin (sh contrib/debian-deps.sh test)"; return 1; }
	for t in initdb pg_ctl postgres psql; do
		bin $t >/dev/null || { echo "$t is missing beside $bindir/initdb"; return 1; }
	done
	"$(bin postgres)" --version >/dev/null 2>&1 || { echo "$(bin postgres) does not run"; return 1; }
	if [ "$(id -u)" = 0 ]; then
		id nobody >/dev/null 2>&1 || { echo "no user nobody to run the server as (initdb refuses root)"; return 1; }
		command -v setpriv >/dev/null || { echo "setpriv is missing (util-linux)"; return 1; }
	fi
	return 0
}

setup() {
	why=$(why_not) || die "$why"
	find_bindir     # (why_not found it in a subshell)
	pg_uid=$(id -u nobody 2>/dev/null || true)
	pg_gid=$(id -g nobody 2>/dev/null || true)
	initdb=$(bin initdb) pg_ctl=$(bin pg_ctl) psql=$(bin psql)
}

# is_ours DIR: DIR was made by pg.sh start (or is empty)
is_ours() {
	[ -f "$1/.pg.sh" ] || [ -z "$(ls -A "$1" 2>/dev/null)" ]
}

# halt DIR: stop a cluster there, if one runs; by the pid in its
# postmaster.pid, and only if that process works in this data directory
halt() {
	data=$1/data
	[ -f "$data/postmaster.pid" ] || return 0
	as_pg "$pg_ctl" stop -D "$data" -m immediate -w -t 20 >/dev/null 2>&1 && return 0
	pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null || true)
	case "$pid" in '' | *[!0-9]*) return 0 ;; esac
	[ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$(cd "$data" && pwd -P)" ] || return 0
	kill -9 "$pid" 2>/dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
}

# remove DIR: what `stop` and a stale `start` do
remove() {
	d=$1
	[ -e "$d" ] || return 0
	is_ours "$d" || die "'$d' is not a directory made by pg.sh (not removed)"
	halt "$d"
	rm -rf "$d"
}

port_busy() {
	command -v ss >/dev/null || return 1
	ss -Htan "( sport = :$1 )" 2>/dev/null | grep -q .
}

random_port() {
	n=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	# below the kernel's ephemeral range (32768 and up)
	echo $((20000 + n % 12000))
}

# uri_host ADDR: the host part of a URI that reaches a server on ADDR
uri_host() {
	a=${1%%,*}
	a=$(echo "$a" | tr -d ' ')
	case "$a" in
	'*' | 0.0.0.0 | '') echo 127.0.0.1 ;;
	'::') echo '[::1]' ;;
	*:*) echo "[$a]" ;;
	*) echo "$a" ;;
	esac
}

# The data directory initdb makes is the same each time: the first start
# keeps a copy in the cache (a directory of ours, no one else may write
# to it), the later ones copy it (0.2 s where initdb takes 1 s or more).
# cache_dir: prints the directory, or fails when there is none to use.
cache_dir() {
	[ "${PIX_PG_CACHE:-}" != none ] || return 1
	c=${PIX_PG_CACHE:-${TMPDIR:-/tmp}/photoidx-pg-cache.$(id -u)}
	mkdir -m 755 "$c" 2>/dev/null || true
	[ -d "$c" ] && [ ! -L "$c" ] && [ "$(stat -c %u "$c")" = "$(id -u)" ] || return 1
	case "$(stat -c %A "$c")" in ?????w???? | ????????w?) return 1 ;; esac
	# one per server binary and owner
	key=$({ "$(bin postgres)" --version; stat -L -c '%n %s %Y' "$(bin postgres)"; } | cksum | cut -d' ' -f1)
	echo "$c/data-$key-$pg_uid"
}

# new_data [fresh]: DIR/data, from the cache unless `fresh`
new_data() {
	tpl=$(cache_dir) || tpl=""
	from_cache=0
	if [ -z "${1:-}" ] && [ -n "$tpl" ] && [ -f "$tpl/PG_VERSION" ]; then
		cp -a "$tpl" "$dir/data" && from_cache=1 && return 0
		rm -rf "$dir/data"
	fi
	as_pg "$initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync \
		--no-instructions >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
	[ -n "$tpl" ] || return 0
	# into place in one rename (another start may be doing the same)
	t=$tpl.tmp.$$
	rm -rf "$t"
	cp -a "$dir/data" "$t" 2>/dev/null && mv -T "$t" "$tpl" 2>/dev/null || rm -rf "$t"
}

# configure: what makes the copy of initdb's directory this cluster
configure() {
	cat >"$dir/data/pg_hba.conf" <<-EOF
		# pg.sh: a throwaway test cluster, open to every client
		local all all trust
		local replication all trust
		host all all 0.0.0.0/0 trust
		host all all ::/0 trust
		host replication all 0.0.0.0/0 trust
		host replication all ::/0 trust
	EOF
	echo "include_if_exists = 'pg.sh.conf'" >>"$dir/data/postgresql.conf"
}

# launch: start the server on a free port; fails with what it logged
launch() {
	tries=0
	while :; do
		tries=$((tries + 1))
		[ $tries -le 50 ] || { echo "found no free port" >"$dir/log.try"; return 1; }
		port=$(random_port)
		port_busy "$port" && continue
		cat >"$dir/data/pg.sh.conf" <<-EOF
			listen_addresses = '$addr'
			port = $port
			unix_socket_directories = '$dir'
			fsync = off
			${PIX_PG_CONF:-}
		EOF
		as_pg "$pg_ctl" start -D "$dir/data" -l "$dir/log" -w -t 30 -s >"$dir/log.try" 2>&1 && return 0
		# another server took the port between the look and the bind
		[ $tries -lt 10 ] && tail -n 20 "$dir/log" 2>/dev/null | grep -q "Address already in use" && continue
		return 1
	done
}

start() {
	[ $# -ge 1 ] && [ $# -le 2 ] || usage
	dir=$1 addr=${2:-127.0.0.1}
	case "$addr" in '' | *[!0-9A-Za-z.:*,\ _-]*) die "bad listen address '$addr'" ;; esac
	setup
	remove "$dir"
	mkdir -p "$dir"
	: >"$dir/.pg.sh"
	dir=$(cd "$dir" && pwd -P)
	# the socket's path must fit in sun_path (108 bytes)
	[ ${#dir} -le 90 ] || die "'$dir' is too long a path for the socket (90 bytes at most)"
	if [ "$(id -u)" = 0 ]; then
		chown "$pg_uid:$pg_gid" "$dir"
		chmod 755 "$dir"
		as_pg test -w "$dir" || die "user nobody cannot reach '$dir' (a parent directory is not searchable)"
	fi
	cd "$dir"
	new_data
	configure
	if ! launch; then
		started=0
		if [ $from_cache = 1 ]; then
			# a bad copy in the cache: forget it, and once more from initdb
			rm -rf "$dir/data" "$tpl"
			new_data fresh
			configure
			launch && started=1
		fi
		if [ $started = 0 ]; then
			cat "$dir/log.try" >&2
			tail -n 20 "$dir/log" >&2 2>/dev/null || true
			die "the server did not start (log: $dir/log)"
		fi
	fi
	rm -f "$dir/log.try"
	uri="postgresql://postgres@$(uri_host "$addr"):$port"
	echo "$port" >"$dir/port"
	echo "$uri" >"$dir/uri"
	echo "$uri"
}

# connection to the cluster in DIR over its socket
need_cluster() {
	dir=$1
	[ -f "$dir/port" ] && [ -f "$dir/uri" ] || die "no cluster in '$dir' (pg.sh start)"
	dir=$(cd "$dir" && pwd -P)
	port=$(cat "$dir/port")
}

createdb() {
	[ $# -eq 2 ] || usage
	setup
	need_cluster "$1"
	name=$2
	case "$name" in '' | *[!A-Za-z0-9_-]*) die "bad database name '$name' (letters, digits, _ and - only)" ;; esac
	PGOPTIONS="-c client_min_messages=warning" \
		"$psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres \
		-c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" \
		-c "CREATE DATABASE \"$name\" ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0" >&2
	echo "$(cat "$dir/uri")/$name"
}

run_psql() {
	[ $# -ge 2 ] || usage
	setup
	need_cluster "$1"
	name=$2
	shift 2
	exec "$psql" -X -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d "$name" "$@"
}

restart() {
	[ $# -eq 1 ] || usage
	setup
	need_cluster "$1"
	as_pg "$pg_ctl" restart -D "$dir/data" -l "$dir/log" -m fast -w -t 30 -s >/dev/null ||
		die "the server did not restart (log: $dir/log)"
}

stop() {
	[ $# -eq 1 ] || usage
	setup
	remove "$1"
}

check() {
	if ! why=$(why_not); then
		echo "pg.sh: $why" >&2
		exit 77
	fi
}

usage() {
	echo "usage: pg.sh check | start DIR [LISTEN_ADDR] | createdb DIR NAME | psql DIR NAME [ARGS...] | restart DIR | stop DIR" >&2
	exit 64
}

case "${1:-}" in
check) check ;;
start) shift; start "$@" ;;
createdb) shift; createdb "$@" ;;
psql) shift; run_psql "$@" ;;
restart) shift; restart "$@" ;;
stop) shift; stop "$@" ;;
*) usage ;;
esac
