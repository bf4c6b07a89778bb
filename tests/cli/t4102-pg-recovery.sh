#!/bin/sh
# A PostgreSQL catalog that fails under a scan: a deadlock with another
# session rolls a batch back and photoidx writes it again; a server
# restart or a cut connection mid-scan and mid-watch is followed by a new
# connection, and the scan or the watch goes on.  Each time nothing
# committed is lost, every file is indexed once with its right MD5, and
# one run is recorded.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/pg-lib.sh"
pg_own_cluster
trap 'test -s watch.pid && kill -9 "$(cat watch.pid)" 2>/dev/null; cleanup' EXIT

# every file of tree $1 has one row, state ok, with md5sum's MD5, in $2
all_indexed() {
	find "$1" -type f -exec md5sum {} + | sort >want.md5 &&
	pg_q "$2" "SELECT encode(f.md5, 'hex') || '  ' || substr(pix_text(d.path), length('$TRASH/') + 1) || '/' ||
	           pix_text(f.name) FROM files f JOIN dirs d ON d.id = f.dir_id WHERE f.state = 'ok'" | sort >got.md5 &&
	diff -u want.md5 got.md5
}

# files DIR N SIZE: N files of SIZE bytes of random data in DIR
files() {
	mkdir -p "$1" && i=0 &&
	while [ $i -lt "$2" ]; do head -c "$3" /dev/urandom >"$1/f$i.bin"; i=$((i + 1)); done
}

# until_sql DB SQL: waits (up to 20 s) until SQL gives a row that is not 0 or empty
until_sql() {
	i=0
	while [ $i -lt 200 ]; do
		v=$(pg_q "$1" "$2" 2>/dev/null) && [ -n "$v" ] && [ "$v" != 0 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "waited 20 s for: $2" >&2
	return 1
}

test_expect_success 'a deadlock with another session: the batch is written again, the scan ends well' '
	for d in a b c; do files dl/$d 3 2000; done && age dl &&
	uri=$(pg_db dead) && px scan --db "$uri" -q dl &&
	for d in a c; do files dl/$d/new 2 1000000; done && age dl/a/new dl/c/new &&
	cat >other.sql <<-EOF &&
	SET deadlock_timeout = '\''60s'\'';
	DO \$\$ BEGIN
	  FOR i IN 1..1000 LOOP
	    EXIT WHEN EXISTS (SELECT 1 FROM scans WHERE state = '\''running'\'');
	    PERFORM pg_sleep(0.02);
	  END LOOP;
	END \$\$;
	BEGIN;
	SELECT pg_advisory_xact_lock(20554);
	DO \$\$ BEGIN
	  FOR i IN 1..1000 LOOP
	    PERFORM pg_stat_clear_snapshot();
	    EXIT WHEN EXISTS (SELECT 1 FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
	                      WHERE a.application_name = '\''photoidx'\'' AND a.wait_event = '\''advisory'\''
	                      AND l.relation = '\''dirs'\''::regclass AND l.mode = '\''RowExclusiveLock'\'');
	    PERFORM pg_sleep(0.02);
	  END LOOP;
	END \$\$;
	LOCK TABLE dirs IN SHARE MODE;
	SELECT pg_sleep(1);
	COMMIT;
	EOF
	# the other session (another host about to commit) takes the lock
	# that numbers the change log (PIX_PG_LOCK_SEQ, store-int.h) once the
	# run of photoidx has begun; when photoidx, about to commit a batch
	# that wrote directories, waits for it, the other asks for a lock on
	# the dirs table that conflicts with that batch
	{ sh "$PG_SH" psql "$PG_DIR" dead -q -f other.sql >other.out 2>&1 & } &&
	until_sql dead "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '\''DO %'\''" &&
	{ ( set +e; PGOPTIONS="-c deadlock_timeout=500ms" px scan --db "$uri" --readers 1 --limit-rate 1M dl >out 2>err; echo $? >rc ) & } &&
	wait &&
	cat err out && test "$(cat rc)" = 0 &&
	grep "deadlock detected" err | grep -q "writing its batch of [0-9]* items again (1 of 5)$" &&
	grep -q "^4 new, 0 changed" out &&
	all_indexed dl dead &&
	test "$(pg_q dead "SELECT count(*) || state || exit_status FROM scans WHERE id > 1 GROUP BY state, exit_status")" = 1done0 &&
	test "$(pg_q dead "SELECT kind || count(*) FROM changes GROUP BY kind")" = added13
'

test_expect_success 'the server restarts mid-scan: photoidx connects again and the scan completes' '
	files rs/one 40 100000 && files rs/two 40 100000 && age rs &&
	uri=$(pg_db restart) &&
	{ ( set +e; px scan --db "$uri" --readers 1 --limit-rate 2M rs >out 2>err; echo $? >rc ) & } &&
	until_sql restart "SELECT count(*) FROM files" &&
	pg_restart &&
	wait &&
	cat err && test "$(cat rc)" = 0 &&
	grep -q "connected again" err &&
	grep -q "^80 new" out &&
	all_indexed rs restart &&
	test "$(pg_q restart "SELECT count(*) FROM files")" = 80 &&
	test "$(pg_q restart "SELECT state || exit_status FROM scans")" = done0
'

test_expect_success 'watch: a restart and a cut connection, and it keeps watching' '
	mkdir -p w/lib && files w/lib/a 3 1000 && age w &&
	uri=$(pg_db watch) &&
	{ sh -c '\''echo $$ >watch.pid; exec "$0" "$@"'\'' "$PHOTOIDX" watch --db "$uri" --settle 0.2 w/lib \
		>watch.out 2>watch.err & } &&
	until test -s watch.pid; do sleep 0.05; done &&
	until_sql watch "SELECT count(*) FROM files WHERE state = '\''ok'\'' HAVING count(*) = 3" &&
	pg_restart &&
	files w/lib/b 2 1000 &&
	until_sql watch "SELECT count(*) FROM files HAVING count(*) = 5" &&
	pg_q watch "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\''photoidx'\''" &&
	files w/lib/c 2 1000 &&
	until_sql watch "SELECT count(*) FROM files HAVING count(*) = 7" &&
	kill -TERM "$(cat watch.pid)" && wait && rm watch.pid &&
	grep -q "^stopped: 7 new" watch.out &&
	cat watch.err watch.out &&
	test "$(grep -c "connected again" watch.err)" -ge 2 &&
	all_indexed w/lib watch &&
	test "$(pg_q watch "SELECT count(*) || state || exit_status FROM scans GROUP BY state, exit_status")" = 1done0
'

test_done
