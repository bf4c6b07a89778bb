# lib.sh: sourced by every tests/cli/tNNNN-*.sh script.
#
# Gives each script a fresh temporary directory (its working directory),
# a private XDG_DATA_HOME and HOME, a catalog path $DB, and TAP output:
#
#   test_expect_success 'what it shows' '
#       commands; the test passes when the last one succeeds
#   '
#   test_done
#
# A test body runs in a subshell with `set -e`, but the shell ignores -e
# inside an && chain, so write a body as one && chain (setup that must not
# join a background job goes on its own line before it).  Quote SQL string
# literals with single quotes: "error" in double quotes is the column
# files.error, not a string.  Helpers: px (photoidx), q (SQL on $DB), qdb (SQL on another
# catalog), catalog_rm and catalog_cp (remove, copy a catalog), mkfix (the fixture
# generator), test_must_fail, test_expect_code, age (set old mtimes), wait_for (poll SQL),
# require_samples (skip the script without ../shared/samples), test_sqlite_only,
# no_catalog, and unhex, unhex_cols and hexof for paths read through hex().
#
# Both catalog backends: PIX_TEST_BACKEND=pg runs a script's catalogs on
# PostgreSQL (default: sqlite).  The script gets a cluster of its own
# (tests/tools/pg.sh; the script is skipped where PostgreSQL is missing)
# and every catalog a test names by a path (--db "$DB", --db act.db) is a
# database of it named after the path (pg-catalogs.sh), so the same test
# runs on both.  What changes in a test: reset a catalog with catalog_rm,
# not rm; copy one with catalog_cp; read one with q or qdb, not sqlite3;
# write SQL both engines take (single-quoted strings; hex() and
# group_concat() are given on PostgreSQL by pg-compat.sql); and mark a
# test of SQLite's own file (its modes, WAL, PRAGMAs, the default path's
# catalog) with test_sqlite_only WHY just before it.
#
# Numbering follows git: t0xxx basics and usage, t1xxx indexing,
# t2xxx watch, t3xxx queries, t4xxx catalog checks and migrations.

set -u
TEST_NAME=$(basename "$0" .sh)
TEST_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$TEST_DIR/../.." && pwd)
: "${PHOTOIDX:=$REPO/photoidx}"
: "${MKFIXTURE:=$REPO/build/tests/mkfixture}"
: "${PIX_SAMPLES:=$REPO/../shared/samples}"
export PHOTOIDX MKFIXTURE PIX_SAMPLES

TRASH=$(mktemp -d "${TMPDIR:-/tmp}/photoidx-$TEST_NAME.XXXXXX")
chmod 755 "$TRASH"      # tests that drop root must reach it
cleanup() {
	# the script's PostgreSQL cluster, if it has one (pg-lib.sh)
	if command -v pg_down >/dev/null 2>&1; then pg_down; fi
	chmod -R u+rwx "$TRASH" 2>/dev/null
	[ -n "${PIX_TEST_KEEP:-}" ] || rm -rf "$TRASH"
}
trap cleanup EXIT
cd "$TRASH" || exit 1
export XDG_DATA_HOME="$TRASH/xdg" HOME="$TRASH/home"
# the developer's own catalog and configuration stay out of the tests
unset PHOTOIDX_DB XDG_CONFIG_HOME
mkdir -p "$HOME"
DB="$TRASH/catalog.db"
export LC_ALL=C.UTF-8

test_count=0
test_failed=0

: "${PIX_TEST_BACKEND:=sqlite}"
export PIX_TEST_BACKEND
case "$PIX_TEST_BACKEND" in
sqlite) ;;
pg)
	. "$TEST_DIR/pg-lib.sh"
	pg_need
	pg_up
	PIX_PGC_TRASH=$TRASH PIX_PGC_DIR=$PG_DIR PIX_PGC_SH=$PG_SH
	PIX_PGC=$TEST_DIR/pg-catalogs.sh
	export PIX_PGC_TRASH PIX_PGC_DIR PIX_PGC_SH PIX_PGC
	# photoidx as the tests run it ("$PHOTOIDX" too): every --db PATH is
	# that path's database
	mkdir -p "$TRASH/.bin"
	printf '#!/bin/sh\nexec sh "%s" exec "%s" "$@"\n' "$PIX_PGC" "$PHOTOIDX" >"$TRASH/.bin/photoidx"
	chmod 755 "$TRASH/.bin/photoidx"
	PHOTOIDX=$TRASH/.bin/photoidx
	export PHOTOIDX ;;
*)
	echo "Bail out! PIX_TEST_BACKEND is sqlite or pg, not '$PIX_TEST_BACKEND'"
	exit 1 ;;
esac

# backend_is NAME: the catalogs of this run are on NAME (sqlite or pg)
backend_is() {
	[ "$PIX_TEST_BACKEND" = "$1" ]
}

# photoidx itself (under valgrind with PIX_TEST_VALGRIND=1: valgrind's own
# messages go to $TRASH/.valgrind.PID, so the program's stderr is what the
# test sees; an error exits 99 and test_done prints the reports).
px() {
	if [ "${PIX_TEST_VALGRIND:-0}" = 1 ]; then
		valgrind -q --log-file="$TRASH/.valgrind.%p" --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite --suppressions="$REPO/tests/valgrind.supp" "$PHOTOIDX" "$@"
	else
		"$PHOTOIDX" "$@"
	fi
}

# SQL on the catalog, one row per line, columns split by '|' (or by
# -separator S, given first); several SQL arguments run in turn; without
# one, the SQL comes from stdin.
q() {
	qdb "$DB" "$@"
}

# qdb CATALOG [-separator S] [SQL...]: q on another catalog
qdb() {
	c=$1
	shift
	if backend_is sqlite; then
		sqlite3 -batch -bail "$c" "$@"
		return
	fi
	sep="|"
	if [ "${1:-}" = -separator ]; then
		sep=$2
		shift 2
	fi
	set -- "$@"
	if [ $# -eq 0 ]; then
		sh "$PIX_PGC" psql "$c" -A -t -q -F "$sep"
		return
	fi
	for sql do
		shift
		set -- "$@" -c "$sql"
	done
	sh "$PIX_PGC" psql "$c" -A -t -q -F "$sep" "$@"
}

# sound [CATALOG]: the SQLite catalog (default $DB) is sound: its file
# (integrity_check ok), and every row it names is there (foreign_key_check
# finds nothing: photoidx's writer does not enforce foreign keys row by
# row, these checks do).  PostgreSQL's server enforces its own: nothing
# to run there.
sound() {
	backend_is sqlite || return 0
	test "$(qdb "${1:-$DB}" "pragma integrity_check")" = ok &&
	test -z "$(qdb "${1:-$DB}" "pragma foreign_key_check")"
}

# catalog_rm CATALOG...: no such catalogs any more (rm -f CATALOG* on SQLite)
catalog_rm() {
	if backend_is sqlite; then
		for c do rm -f "$c"*; done
	else
		sh "$PIX_PGC" rm "$@"
	fi
}

# catalog_cp FROM TO: TO a copy of FROM, which no process has open (on
# SQLite, without FROM's -wal and -shm: photoidx leaves none at exit)
catalog_cp() {
	if backend_is sqlite; then
		cp "$1" "$2" && rm -f "$2-wal" "$2-shm"
	else
		sh "$PIX_PGC" cp "$1" "$2"
	fi
}

# catalog_uri CATALOG: what --db takes for it on this backend
catalog_uri() {
	if backend_is sqlite; then
		echo "$1"
	else
		sh "$PIX_PGC" uri "$1"
	fi
}

# no_catalog PATH: nothing made the catalog PATH: no file there, and on
# PostgreSQL no table in its database (which pg-catalogs.sh makes empty)
no_catalog() {
	test ! -e "$1" &&
	if backend_is pg; then
		test "$(qdb "$1" "select count(*) from information_schema.tables where table_schema = 'public'")" = 0
	fi
}

# Paths and names read through hex() are the same bytes on both backends
# (SQLite's TEXT or BLOB, PostgreSQL's bytea or text):
#   unhex           each line of hex digits as the bytes it encodes
#   unhex_cols N... in each line of '|'-separated columns, columns N...
#   hexof TEXT      TEXT as hex() gives it (upper case)
unhex() {
	perl -lne 'print pack("H*", $_)'
}

unhex_cols() {
	perl -lne 'BEGIN { @c = @ARGV; @ARGV = () } my @f = split /\|/, $_, -1; $f[$_ - 1] = pack("H*", $f[$_ - 1]) for @c; print join "|", @f' "$@"
}

hexof() {
	printf '%s' "$1" | od -An -tx1 | tr -d ' \n' | tr a-f A-F
}

# test_sqlite_only WHY: the next test is of SQLite's own file or of
# what only the embedded catalog does; under PIX_TEST_BACKEND=pg it is
# skipped, saying WHY
sqlite_only_why=""
test_sqlite_only() {
	sqlite_only_why=$1
}

mkfix() {
	"$MKFIXTURE" "$@"
}

# Sets the mtime of files (or trees) to two days ago, so that a scan does
# not flag them as possibly still being written (the recheck rule: mtime within two seconds of the read).
age() {
	find "$@" -exec touch -h -d '2 days ago' {} +
}

# wait_for SQL WANT: until SQL on $DB gives WANT (up to 30 s), for what
# a background process (a watch) writes.
wait_for() {
	i=0
	while [ $i -lt 300 ]; do
		[ "$(q "$1" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "waited 30 s for [$1] = $2, got $(q "$1" 2>&1)" >&2
	return 1
}

test_must_fail() {
	if "$@"; then
		echo "expected failure: $*" >&2
		return 1
	fi
	return 0
}

# test_expect_code N cmd...: cmd exits with status N.
test_expect_code() {
	want=$1
	shift
	set +e
	"$@"
	got=$?
	set -e
	if [ "$got" -ne "$want" ]; then
		echo "expected exit status $want, got $got: $*" >&2
		return 1
	fi
}

test_expect_success() {
	if [ -n "$sqlite_only_why" ]; then
		why=$sqlite_only_why
		sqlite_only_why=""
		if ! backend_is sqlite; then
			test_skip "$1" "SQLite only: $why"
			return 0
		fi
	fi
	test_count=$((test_count + 1))
	out="$TRASH/.out.$test_count"
	(
		set -e
		eval "$2"
	) >"$out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "ok $test_count - $1"
	else
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$out" | tail -n 40
		test_failed=$((test_failed + 1))
	fi
	cd "$TRASH" || exit 1
}

test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

# kpa_gui_skip [TOOL...]: why the real KPhotoAlbum under Xvfb is not run
# here (printed), or nothing and status 1 when it is: kphotoalbum,
# xvfb-run or a TOOL missing, or the sanitizer pass (SANITIZE=1), where
# photoidx is what is checked: KPhotoAlbum is the same program there as in
# the plain and PostgreSQL passes, which run it, and only adds minutes.
kpa_gui_skip() {
	if [ "${SANITIZE:-}" = 1 ]; then
		echo "the sanitizer pass leaves the real KPhotoAlbum to the plain and PostgreSQL passes"
		return 0
	fi
	for tool in kphotoalbum xvfb-run "$@"; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "$tool is missing (contrib/debian-deps.sh test installs it)"
			return 0
		fi
	done
	return 1
}

require_samples() {
	if [ ! -d "$PIX_SAMPLES" ]; then
		echo "1..0 # SKIP ../shared/samples is absent (the real camera samples are not part of the repository)"
		exit 0
	fi
}

# The upgrade tests build the photoidx of an older commit from the
# repository's own history and run it:
#   old_commit NEW PREV  the newest commit whose tree has the file PREV and
#                        not NEW (schema files), or nothing
#   old_build COMMIT     builds that commit's photoidx in ./old-src; $OLD
#                        is then its path
#   old ARGS...          runs it as px runs photoidx (on PostgreSQL, --db
#                        PATH is that path's database)
#   version CATALOG      the catalog's schema version
#   migrations SRC       the migrations the source tree SRC has
old_commit() {
	for c in $(git -C "$REPO" rev-list --full-history HEAD -- schema); do
		git -C "$REPO" cat-file -e "$c:$1" 2>/dev/null && continue
		git -C "$REPO" cat-file -e "$c:$2" 2>/dev/null || continue
		echo "$c"
		return 0
	done
}
old_build() {
	mkdir old-src &&
	git -C "$REPO" archive "$1" | tar -x -C old-src &&
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C old-src SANITIZE= CFLAGS=-O0 photoidx >build.log 2>&1 &&
	test -x old-src/photoidx
}
OLD=$TRASH/old-src/photoidx
old() {
	if backend_is pg; then
		sh "$PIX_PGC" exec "$OLD" "$@"
	else
		"$OLD" "$@"
	fi
}
version() {
	if backend_is pg; then
		qdb "$1" "select schema_version from photoidx_catalog where application = 'photoidx'"
	else
		qdb "$1" "pragma user_version"
	fi
}
migrations() {
	if backend_is pg; then
		ls "$1"/schema/pg/[0-9]*.sql | wc -l
	else
		ls "$1"/schema/[0-9]*.sql | wc -l
	fi
}

# What valgrind said, but its notices of ioctls it has no wrapper for.
valgrind_said() {
	cat "$TRASH"/.valgrind.* 2>/dev/null | grep "^==[0-9]*==" |
		grep -v -e "noted but unhandled ioctl" -e "spurious value errors to appear" -e "README_MISSING_SYSCALL_OR_IOCTL"
}

test_done() {
	# valgrind's reports (its notices, such as an unhandled syscall, are
	# not errors: photoidx falls back from openat2 where it is missing)
	# nor is an ioctl it does not know, which libblkid's probe of a
	# volume's device issues)
	if [ "${PIX_TEST_VALGRIND:-0}" = 1 ] && valgrind_said | grep -q .; then
		echo "# valgrind reported:"
		valgrind_said | sed "s/^/#   /" | head -n 80
		test_failed=$((test_failed + 1))
	fi
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
	exit $?
}
