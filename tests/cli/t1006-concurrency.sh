#!/bin/sh
# A front end reading the catalog while a scan writes it is never blocked
# and never sees half a batch; a second writer waits for the first, or
# refuses at once with --no-wait.
. "$(dirname "$0")/lib.sh"

# ro_q SQL: SQL on $DB as a front end reads it (SQLite: read-only, with a
# busy timeout, as a front end must set one)
ro_q() {
	if backend_is sqlite; then
		sqlite3 -batch -cmd ".timeout 2000" "file:$DB?mode=ro" "$1"
	else
		q "$1"
	fi
}

# until_writing: waits (10 s at most) until the scan just started has
# written files: it then holds the catalog (SQLite) or its volume
# (PostgreSQL).  A fixed sleep lost that race on a loaded machine.
until_writing() {
	i=0
	until [ "$(ro_q "select count(*) from files" 2>/dev/null)" -gt 0 ] 2>/dev/null || [ $i -gt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

# a reader's transaction that keeps one snapshot for its whole length
# (SQLite's, from its first read; PostgreSQL's read committed takes one
# per statement)
if backend_is sqlite; then
	BEGIN_SNAPSHOT="BEGIN;"
else
	BEGIN_SNAPSHOT="BEGIN ISOLATION LEVEL REPEATABLE READ;"
fi

test_expect_success 'setup: files that take seconds to read' '
	mkdir -p lib && i=0 &&
	while [ $i -lt 60 ]; do head -c 65536 /dev/urandom >lib/f$i.bin; i=$((i + 1)); done &&
	age lib
'

test_expect_success 'a reader during a scan: never held up, only whole batches, counts grow' '
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 1M lib &
	pid=$!
	i=0 && until q "select 1 from scans" >/dev/null 2>&1 || [ $i -gt 100 ]; do sleep 0.05; i=$((i + 1)); done
	seen="" && bad=0 && i=0 &&
	while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do
		# a front end sets a busy timeout, as it must: SQLite itself may
		# answer a WAL reader "busy" for an instant (while a connection
		# opens or recovers the WAL index), which is not being held up by
		# the writer; a read that waits is timed instead (under 2 s, where
		# the writer holds a batch for about 1 s)
		t0=$(date +%s%N) &&
		out=$(ro_q "select count(*), (select count(*) from files f where not exists
			(select 1 from changes c where c.file_id = f.id and c.kind = '\''added'\'')) from files" 2>&1) || bad=1
		t1=$(date +%s%N) && [ $(((t1 - t0) / 1000000)) -lt 1900 ] || { echo "a read took $(((t1 - t0) / 1000000)) ms"; bad=1; }
		case "$out" in *"|0") seen="$seen ${out%|0}" ;; *) echo "inconsistent read: $out"; bad=1 ;; esac
		sleep 0.1; i=$((i + 1))
	done &&
	wait $pid && test $bad = 0 &&
	echo "seen:$seen" &&
	first=$(echo $seen | cut -d" " -f1) && last=$(echo $seen | tr " " "\n" | tail -n 1) &&
	test "$last" -gt "$first" &&
	test "$(q "select count(*) from files")" = 60
'

test_expect_success 'a reader holding one snapshot through a whole scan: the scan is not held up, the snapshot does not move' '
	catalog_rm "$DB"
	mkdir -p one && cp lib/f1.bin one/ && age one &&
	px scan --db "$DB" -q one &&
	rm -f snap.fifo && mkfifo snap.fifo &&
	if backend_is sqlite; then
		{ sqlite3 -batch "file:$DB?mode=ro" <snap.fifo >snap.out 2>&1 & }
	else
		{ q <snap.fifo >snap.out 2>&1 & }
	fi &&
	exec 7>snap.fifo &&
	echo "$BEGIN_SNAPSHOT SELECT count(*) FROM photos; SELECT count(*) FROM file_info;" >&7 &&
	sleep 0.3 &&
	start=$(date +%s) &&
	px scan --db "$DB" -q --readers 1 --limit-rate 4M lib &&
	end=$(date +%s) &&
	echo "SELECT count(*) FROM file_info; COMMIT; SELECT count(*) FROM file_info;" >&7 &&
	exec 7>&- && wait &&
	cat snap.out && test "$(tr "\n" " " <snap.out)" = "0 1 1 61 " &&
	test $((end - start)) -lt 10 &&
	test "$(px ls --db "$DB" --sort none | wc -l)" = 61
'

test_expect_success 'photoidx ls during a scan: valid output every time, counts that only grow' '
	catalog_rm "$DB"
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 1M lib &
	pid=$!
	i=0 && until px ls --db "$DB" >/dev/null 2>&1 || [ $i -gt 100 ]; do sleep 0.05; i=$((i + 1)); done
	bad=0 && last=0 && n=0 &&
	while kill -0 $pid 2>/dev/null; do
		px ls --db "$DB" --jsonl --all >ls.out || bad=1
		jq -e -s "length >= $last" ls.out >/dev/null || { echo "count went down from $last"; bad=1; }
		last=$(wc -l <ls.out) && n=$((n + 1))
		sleep 0.1
	done
	wait $pid && test $bad = 0 && test $n -gt 3 &&
	test "$(px ls --db "$DB" --jsonl | wc -l)" = 60
'

test_expect_success 'a second scan with --no-wait refuses at once (exit 2, names the holder)' '
	catalog_rm "$DB"
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 1M lib &
	pid=$!
	until_writing &&
	test_expect_code 2 px scan --db "$DB" --no-wait lib 2>err &&
	grep -q "is in use by another photoidx (pid $pid)" err &&
	wait $pid
'

test_expect_success 'a second scan without --no-wait waits, then does its work' '
	catalog_rm "$DB"
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 2M lib &
	pid=$!
	until_writing &&
	px scan --db "$DB" --json lib >s.json 2>err &&
	grep -q "waiting for another photoidx (pid $pid)" err &&
	wait $pid &&
	test "$(jq .unchanged s.json)" = 60 &&
	test "$(q "select group_concat(state) from (select state from scans order by id) as s")" = done,done
'

test_expect_success 'a scan beside a watch: refused with --no-wait, else waits for the watch to end, then scans' '
	catalog_rm "$DB"
	"$PHOTOIDX" watch --db "$DB" -q lib 2>watch.err &
	wpid=$!
	echo $wpid >watch.pid
	i=0 && until [ "$(ro_q "select count(*) from scans where state = '\''running'\''" 2>/dev/null)" = 1 ] || [ $i -gt 200 ]; do sleep 0.05; i=$((i + 1)); done
	test_expect_code 2 px scan --db "$DB" --no-wait lib 2>err &&
	grep -q "is in use by another photoidx (pid $wpid)" err &&
	{ px scan --db "$DB" --json lib >s.json 2>err & } &&
	spid=$! && sleep 1 && kill -0 $spid &&
	grep -q "waiting for another photoidx (pid $wpid)" err &&
	kill -TERM $wpid && { wait $wpid || true; } &&
	wait $spid &&
	test "$(jq .unchanged s.json)" = 60 &&
	sound &&
	test "$(q "select group_concat(state) from (select state from scans order by id) as s")" = done,done
'
# (a watch left by a failed test would hold the catalog for the next)
wpid=$(cat watch.pid 2>/dev/null)
if [ -n "$wpid" ] && grep -q "photoidx" "/proc/$wpid/cmdline" 2>/dev/null; then kill "$wpid"; fi

test_expect_success 'two scans started at the same instant, ten times: one waits, both finish, nothing doubled' '
	i=0 &&
	while [ $i -lt 10 ]; do
		catalog_rm "$DB"
		"$PHOTOIDX" scan --db "$DB" -q lib 2>a.err &
		a=$!
		"$PHOTOIDX" scan --db "$DB" -q lib 2>b.err &
		b=$!
		wait $a && wait $b || exit 1
		test "$(q "select count(*) || '\'' '\'' || count(distinct name) from files")" = "60 60" || exit 1
		test "$(q "select group_concat(state) from scans")" = done,done || exit 1
		sound || exit 1
		i=$((i + 1))
	done
'

test_sqlite_only 'integrity_check is a PRAGMA of the SQLite file'
test_expect_success 'the catalog is sound' '
	sound
'

test_done
