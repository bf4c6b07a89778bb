#!/bin/sh
# pg-catalogs.sh: the catalogs of a CLI test script on PostgreSQL, for
# PIX_TEST_BACKEND=pg (lib.sh).  A test names its catalogs by SQLite file
# paths ("$DB", act.db, lib/2024/cat.db); on PostgreSQL each such path is
# a database of the script's own cluster instead, named after the path
# (relative to $TRASH: catalog.db is c_catalog_db), made on first use.
#
#   pg-catalogs.sh name PATH        the database name for PATH
#   pg-catalogs.sh uri PATH         its URI (the database made if new)
#   pg-catalogs.sh rm PATH...       drop them (what rm -f PATH* is on SQLite)
#   pg-catalogs.sh cp SRC DST       DST a copy of SRC (CREATE DATABASE ... TEMPLATE)
#   pg-catalogs.sh psql PATH ARGS...  psql on PATH's database
#   pg-catalogs.sh exec PROG ARGS...  PROG with every --db PATH (and
#                                   --db=PATH) given as PATH's URI; a URI
#                                   stays as it is.  The process is PROG
#                                   itself (exec), so a test's $! and its
#                                   signals reach photoidx.
#
# From the environment (lib.sh sets them): PIX_PGC_TRASH (the script's
# $TRASH), PIX_PGC_DIR (its cluster, pg.sh start DIR), PIX_PGC_SH (pg.sh).
#
# Every new database also gets the test-only functions of pg-compat.sql
# (hex(), group_concat()) so that a test's SQL in SQLite's words reads
# the same on both; photoidx never uses them.
set -eu
T=${PIX_PGC_TRASH:?} D=${PIX_PGC_DIR:?} PG_SH=${PIX_PGC_SH:?}
HERE=$(cd "$(dirname "$0")" && pwd)
marks=$T/.pg-catalogs

db_name() {
	p=$(realpath -m -- "$1")
	t=$(realpath -m -- "$T")
	case "$p" in "$t"/*) p=${p#"$t"/} ;; esac
	printf 'c_%s' "$(printf '%s' "$p" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9' '_' | cut -c1-60)"
}

psql_on() {
	on=$1
	shift
	PGOPTIONS="-c client_min_messages=warning" sh "$PG_SH" psql "$D" "$on" "$@"
}

# made NAME: makes the database once; two processes that race for it
# (two scans started together) wait for the one that makes it
made() {
	[ -f "$marks/$1/ready" ] && return 0
	mkdir -p "$marks"
	if mkdir "$marks/$1" 2>/dev/null; then
		sh "$PG_SH" createdb "$D" "$1" >/dev/null 2>"$marks/$1/err" || { cat "$marks/$1/err" >&2; rm -rf "$marks/$1"; return 1; }
		psql_on "$1" -q -f "$HERE/pg-compat.sql" >/dev/null
		: >"$marks/$1/ready"
		return 0
	fi
	i=0
	while [ ! -f "$marks/$1/ready" ]; do
		[ $i -lt 300 ] || { echo "pg-catalogs.sh: database $1 was not made" >&2; return 1; }
		sleep 0.05
		i=$((i + 1))
	done
}

uri_of() {
	n=$(db_name "$1")
	made "$n"
	echo "$(cat "$D/uri")/$n"
}

drop() {
	n=$1
	psql_on postgres -q -c "DROP DATABASE IF EXISTS \"$n\" WITH (FORCE)" >/dev/null
	rm -rf "$marks/$n"
}

is_uri() {
	case "$1" in *://* | postgres:* | postgresql:*) return 0 ;; esac
	return 1
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
name) db_name "$1" ;;
uri) uri_of "$1" ;;
rm)
	for p in "$@"; do drop "$(db_name "$p")"; done ;;
cp)
	src=$(db_name "$1") dst=$(db_name "$2")
	made "$src"
	drop "$dst"
	mkdir -p "$marks/$dst"
	psql_on postgres -q -c "CREATE DATABASE \"$dst\" TEMPLATE \"$src\"" >/dev/null
	: >"$marks/$dst/ready" ;;
psql)
	n=$(db_name "$1")
	shift
	made "$n"
	psql_on "$n" "$@" ;;
exec)
	prog=$1
	shift
	next=0
	for a do
		shift
		if [ $next = 1 ]; then
			is_uri "$a" || [ -z "$a" ] || a=$(uri_of "$a")
			next=0
		else
			case "$a" in
			--db) next=1 ;;
			--db=*) v=${a#--db=}; is_uri "$v" || [ -z "$v" ] || a="--db=$(uri_of "$v")" ;;
			esac
		fi
		set -- "$@" "$a"
	done
	exec "$prog" "$@" ;;
*)
	echo "usage: pg-catalogs.sh name|uri PATH | rm PATH... | cp SRC DST | psql PATH ARGS... | exec PROG ARGS..." >&2
	exit 64 ;;
esac
