#!/bin/sh
# kill -9 at random moments of scans (imports, rescans of a changing
# library, rate-limited ones that commit several batches, and watch
# sessions), each followed by a rescan: every time, the catalog passes
# PRAGMA integrity_check, no committed row is lost, every stored MD5 is
# the file's, and after the rescan every file on disk is in the catalog
# exactly once with its right MD5.
#
# PIX_KILL_TRIALS sets the number of trials (default 20, and 8 in the
# sanitizer pass, where a trial takes four times as long; `make stress`
# runs more).  PIX_KILL_SEED makes a run repeatable (the seed is printed).
. "$(dirname "$0")/lib.sh"

if [ "${SANITIZE:-}" = 1 ]; then
	TRIALS=${PIX_KILL_TRIALS:-8}
else
	TRIALS=${PIX_KILL_TRIALS:-20}
fi
SEED=${PIX_KILL_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d " ")}
echo "# $TRIALS trials, seed $SEED (PIX_KILL_SEED=$SEED to repeat)"

# random N: sets R to an integer in [0, N), the next of a seeded stream
# (a function, not $(random): a subshell would not carry the state on)
RAND_STATE=$SEED
random() {
	RAND_STATE=$(awk -v s="$RAND_STATE" "BEGIN { srand(s); print int(rand() * 2147483647) }")
	R=$((RAND_STATE % $1))
}

# rq SQL: SQL on the catalog without writing to it (on SQLite a
# read-only open of the file, which a SELECT on a killed writer's WAL
# leaves as it is)
rq() {
	if backend_is sqlite; then
		sqlite3 -batch "file:$DB?mode=ro" "$@"
	else
		q "$@"
	fi
}

# the catalog's paths as text: on PostgreSQL they are bytes (bytea), or
# text beside *_bytes (the cast reads either)
if backend_is sqlite; then P=path; else P="convert_from(cast(path as bytea), 'UTF8')"; fi

# the catalog's schema version: 0 before its first migration committed
schema_version() {
	if backend_is sqlite; then
		rq "PRAGMA user_version"
	elif [ "$(q "SELECT count(*) FROM information_schema.tables WHERE table_name = 'photoidx_catalog'")" = 1 ]; then
		q "SELECT coalesce(max(schema_version), 0) FROM photoidx_catalog WHERE application = 'photoidx'"
	else
		echo 0
	fi
}

# PRAGMA integrity_check and foreign_key_check on SQLite, read-only (the
# lib's sound() opens it for writing); PostgreSQL has none to run, its
# own crash recovery is what the kill tests there
sound() {
	backend_is pg || { test "$(rq "PRAGMA integrity_check")" = ok && test -z "$(rq "PRAGMA foreign_key_check")"; }
}

# an MD5 of zeroes for the file of id ID, a wrong one
break_md5() {
	if backend_is sqlite; then
		q "UPDATE files SET md5 = zeroblob(16) WHERE id = $1"
	else
		q "UPDATE files SET md5 = decode(repeat('00', 16), 'hex') WHERE id = $1"
	fi
}

# "md5  path" for every file on disk, sorted by path
disk_md5s() {
	find "$TRASH/lib" -type f -print0 | xargs -0 md5sum | sort -k2
}

# the same from the catalog: files present with an MD5
catalog_md5s() {
	rq "SELECT md5 || '  ' || $P FROM file_info WHERE state <> 'missing'
		AND md5 IS NOT NULL AND media <> 'dir'" | sort -k2
}

# Every row committed before the kill is still there (rows are never
# deleted), and the catalog is sound.
check_after_kill() {
	# killed before it created the catalog: nothing was committed
	# (on PostgreSQL the database is there, made before photoidx ran)
	if backend_is sqlite && [ ! -e "$DB" ]; then test ! -s committed; return; fi
	sound || { echo "integrity"; return 1; }
	# killed before its schema was created (each migration commits whole)
	if [ "$(schema_version)" = 0 ]; then test ! -s committed; return; fi
	if [ -s committed ]; then
		rq "SELECT id FROM files" | sort >now.ids
		comm -23 committed now.ids >lost
		test ! -s lost || { echo "rows lost:"; cat lost; return 1; }
	fi
	# an MD5 stored for a file whose size and mtime are still as the row
	# says must be the file's MD5 (a row of a file changed since is stale,
	# which the rescan fixes, not wrong)
	rq -separator "	" "SELECT md5, size, mtime_ns, $P FROM file_info
		WHERE state = 'ok' AND md5 IS NOT NULL" >rows &&
	find "$TRASH/lib" -type f -printf "%s\t%T@\t%p\n" >stats &&
	disk_md5s >sums &&
	awk -F "\t" "
		FILENAME == \"stats\" { split(\$2, t, \".\"); now[\$3] = \$1 \" \" t[1] substr(t[2] \"000000000\", 1, 9); next }
		FILENAME == \"sums\" { sum[substr(\$0, 35)] = substr(\$0, 1, 32); next }
		(\$4 in now) && now[\$4] == \$2 \" \" \$3 && sum[\$4] != \$1 { print \"wrong MD5 for \" \$4; bad = 1 }
		END { exit bad }" stats sums rows
}

# After a complete rescan: the catalog is the disk, each file once.
check_after_rescan() {
	sound &&
	disk_md5s >disk.md5 && catalog_md5s >cat.md5 &&
	diff disk.md5 cat.md5 &&
	test "$(rq "SELECT count(*) - count(DISTINCT path) FROM file_info")" = 0 &&
	test "$(rq "SELECT count(*) FROM scans WHERE state = 'running'")" = 0
}

# Changes between trials: new files in a new directory, files rewritten in
# place, files deleted, a directory renamed.
mutate() {
	t=$1
	mkdir -p "lib/new$t"
	mkfix jpeg "lib/new$t/IMG_%04d.jpg" --count 40 --size 8000 --width 320 --height 240 --seed "$t" --date "2024:02:0$((t % 9 + 1)) 10:00:00" &&
	for f in $(find lib -name "*.bin" | sort | awk -v t="$t" "NR % 97 == t % 97" | head -n 15); do
		head -c $((2000 + t)) /dev/urandom >"$f"
	done &&
	find lib -name "*.jpg" | sort | awk -v t="$t" "NR % 89 == t % 89" | head -n 10 | xargs -r rm -f &&
	if [ -d "lib/new$((t - 1))" ]; then mv "lib/new$((t - 1))" "lib/moved$((t - 1))"; fi &&
	age lib
}

# Says what failed, the last trials and why, keeping the catalog as
# failed.db (run with PIX_TEST_KEEP=1 to look at it).
fail_trial() {
	if backend_is sqlite; then
		cp "$DB" failed.db 2>/dev/null; cp "$DB-wal" failed.db-wal 2>/dev/null
	else
		catalog_cp "$DB" failed.db
	fi
	tail -n 5 trials.log
	echo "$1:"
	head -n 40 why
	exit 1
}

test_expect_success 'setup: a library of 3,000 files in 30 directories' '
	i=0 &&
	while [ $i -lt 15 ]; do
		mkdir -p lib/cam$i lib/misc$i &&
		mkfix jpeg "lib/cam$i/DSC_%04d.jpg" --count 100 --size 8000 --width 320 --height 240 --seed $i --date "2023:0$((i % 9 + 1)):01 12:00:00" &&
		j=0 && while [ $j -lt 100 ]; do head -c 3000 /dev/urandom >lib/misc$i/f$j.bin; j=$((j + 1)); done ||
		exit 1
		i=$((i + 1))
	done &&
	age lib &&
	test "$(find lib -type f | wc -l)" = 3000
'

test_expect_success 'the checks catch a wrong MD5, a lost row and a file missing from the catalog' '
	px scan --db "$DB" -q lib &&
	check_after_kill && check_after_rescan &&
	q "SELECT id FROM files" | sort >committed &&
	catalog_cp "$DB" good.db &&
	break_md5 "$(q "SELECT max(id) FROM files WHERE name LIKE '\''%.jpg'\''")" &&
	test_must_fail check_after_kill && test_must_fail check_after_rescan &&
	catalog_cp good.db "$DB" && q "DELETE FROM meta WHERE file_id = 7" "DELETE FROM files WHERE id = 7" &&
	test_must_fail check_after_kill && test_must_fail check_after_rescan &&
	catalog_cp good.db "$DB" && check_after_kill && catalog_rm "$DB" good.db && : >committed
'

test_expect_success "$TRIALS kill -9 trials, each followed by a rescan" '
	: >committed && : >trials.log &&
	t=1 &&
	while [ $t -le $TRIALS ]; do
		if [ $t -gt 1 ]; then mutate $t || exit 1; fi
		random 4 && kind=$R
		# every fifth trial starts a fresh catalog: the kill lands in an import
		if [ $((t % 5)) = 1 ]; then catalog_rm "$DB"; : >committed; fi
		case $kind in
		0) limit="" ;;
		1) limit="--limit-rate 8M" ;;
		2) limit="--limit-rate 3M --readers 1" ;;
		3) limit="watch" ;;
		esac
		if [ "$limit" = watch ]; then
			"$PHOTOIDX" watch --db "$DB" -q lib 2>/dev/null &
			pid=$!
			random 1500 && delay=$R
			sleep 0.3 && mkdir -p "lib/w$t" && cp lib/cam1/DSC_000*.jpg "lib/w$t/"
		else
			"$PHOTOIDX" scan --db "$DB" -q $limit lib 2>/dev/null &
			pid=$!
			# a scan at full speed takes a few hundred ms here
			if [ -z "$limit" ]; then random 250; else random 1000; fi; delay=$R
		fi
		sleep "$(awk -v d=$delay "BEGIN { print d / 1000 }")"
		if kill -9 $pid 2>/dev/null; then landed="killed"; else landed="had ended"; fi
		wait $pid 2>/dev/null
		echo "trial $t: ${limit:-full speed}, $landed after ${delay} ms" >>trials.log
		check_after_kill >why 2>&1 || fail_trial "after the kill of trial $t"
		px scan --db "$DB" -q lib >why 2>&1 || fail_trial "the rescan after trial $t failed"
		check_after_rescan >why 2>&1 || fail_trial "after the rescan of trial $t"
		rq "SELECT id FROM files" | sort >committed
		t=$((t + 1))
	done &&
	cat trials.log &&
	test "$(grep -c . trials.log)" = "$TRIALS" &&
	n=$(grep -c ", killed after" trials.log) &&
	echo "# $n of $TRIALS kills landed while photoidx ran" &&
	test $((n * 10)) -ge $((TRIALS * 6))
'

test_expect_success 'a killed run is recorded as killed by the next, none left running' '
	test "$(q "SELECT count(*) FROM scans WHERE state = '\''running'\''")" = 0 &&
	mkdir -p lib/last && head -c 4000000 /dev/urandom >lib/last/big.bin && age lib/last
	"$PHOTOIDX" scan --db "$DB" -q --limit-rate 1M lib &
	pid=$!
	sleep 0.5 && kill -9 $pid && { wait $pid || true; } && px scan --db "$DB" -q lib &&
	test "$(q "SELECT state FROM scans ORDER BY id DESC LIMIT 1 OFFSET 1")" = killed
'

test_done
