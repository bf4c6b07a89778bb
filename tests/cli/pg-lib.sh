# pg-lib.sh: a PostgreSQL server for the CLI tests of the PostgreSQL
# catalog (tests/tools/pg.sh), sourced after lib.sh (which has moved to
# $TRASH: source it by $TEST_DIR):
#
#   . "$(dirname "$0")/lib.sh"
#   . "$TEST_DIR/pg-lib.sh"
#   pg_own_cluster              pg_need and pg_up, in a script that tests
#                               PostgreSQL itself (skipped in the pg pass)
#   pg_need                     skip the whole file (1..0 # SKIP) without one
#   pg_up [LISTEN_ADDR]         this file's cluster, in $TRASH/pg, stopped at
#                               exit; $PG_URI is its base URI
#                               (postgresql://postgres@127.0.0.1:PORT),
#                               $PG_PORT its port
#   uri=$(pg_db NAME)           a fresh database NAME (dropped first if
#                               there), for one test: $PG_URI/NAME
#   pg_q NAME [SQL]             SQL on database NAME (else from stdin), one
#                               row per line, fields split by '|', as q does
#   pg_restart                  restart the cluster (pg_ctl restart -m
#                               fast: every connection is cut)
#   pg_statements               the statements the server has logged so far
#                               (a connection with log_statement = all:
#                               "$uri?options=-c%20log_statement%3Dall")
#
# Under PIX_TEST_BACKEND=pg, lib.sh sources this file and calls pg_need
# and pg_up itself: every catalog of the script is then on this cluster.
# Call pg_need and pg_up at the top level of the script, not in a test
# body: the exit trap and $PG_URI must be the script's own.  pg_up sets
# the exit trap to stop the cluster and then run lib.sh's cleanup; a
# script that sets its own trap after it calls pg_down in it:
#   trap 'pg_down; sh "$NAS" down "$TRASH/nas"; cleanup' EXIT
# LISTEN_ADDR: what to listen on instead of 127.0.0.1: an address of a
# veth pair, made before pg_up, for clients in a network namespace, or
# '*' for all.  A cluster starts in about a second, half that once a
# first start has kept initdb's work (PIX_PG_CACHE in pg.sh).  With
# PIX_TEST_KEEP set, the server's log is kept as $TRASH/pg.log.

[ -n "${PG_SH:-}" ] && return 0    # sourced already (lib.sh, PIX_TEST_BACKEND=pg)
PG_SH="$REPO/tests/tools/pg.sh"
PG_DIR="$TRASH/pg"
PG_URI=""
PG_PORT=""

pg_need() {
	if ! why=$(sh "$PG_SH" check 2>&1); then
		echo "1..0 # SKIP no PostgreSQL here: ${why#pg.sh: }"
		exit 0
	fi
}

# pg_own_cluster: for a script that tests PostgreSQL itself (against
# SQLite, or its server's failures): skipped in the PIX_TEST_BACKEND=pg
# pass, which would run it again; else pg_need and pg_up
pg_own_cluster() {
	if [ "$PIX_TEST_BACKEND" = pg ]; then
		echo "1..0 # SKIP a PostgreSQL test of its own, run in the default pass"
		exit 0
	fi
	pg_need
	pg_up
}

pg_down() {
	[ -d "$PG_DIR" ] || return 0
	[ -z "${PIX_TEST_KEEP:-}" ] || cp "$PG_DIR/log" "$TRASH/pg.log" 2>/dev/null || true
	sh "$PG_SH" stop "$PG_DIR" >/dev/null 2>&1 || true
}

pg_up() {
	# once per script (lib.sh's PIX_TEST_BACKEND=pg has started it)
	[ -z "$PG_URI" ] || return 0
	# lib.sh's cleanup stops the cluster too
	trap cleanup EXIT
	# an interrupted run stops its server too
	trap 'exit 130' INT
	trap 'exit 143' TERM
	if ! PG_URI=$(sh "$PG_SH" start "$PG_DIR" "${1:-127.0.0.1}" 2>"$TRASH/.pg-start"); then
		echo "Bail out! cannot start PostgreSQL in $PG_DIR:"
		sed 's/^/#   /' "$TRASH/.pg-start"
		exit 1
	fi
	PG_PORT=$(cat "$PG_DIR/port")
	export PG_URI PG_PORT
}

pg_db() {
	[ -n "$PG_URI" ] || { echo "pg_db: no cluster (pg_up first, at the top level)" >&2; return 1; }
	sh "$PG_SH" createdb "$PG_DIR" "$1"
}

pg_q() {
	name=$1
	shift
	if [ $# -gt 0 ]; then
		sh "$PG_SH" psql "$PG_DIR" "$name" -A -t -q -c "$1"
	else
		sh "$PG_SH" psql "$PG_DIR" "$name" -A -t -q
	fi
}

pg_restart() {
	sh "$PG_SH" restart "$PG_DIR"
}

pg_statements() {
	grep -c "LOG:  \(execute [^ ]*:\|statement:\)" "$PG_DIR/log" || true
}
