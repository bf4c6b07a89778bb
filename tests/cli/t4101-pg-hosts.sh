#!/bin/sh
# Three hosts write one PostgreSQL catalog at once (tests/tools/hosts.sh):
# each is a network namespace that reaches the server over a veth pair of
# its own, with a disk of its own (ext4 with a fixed UUID on a loop
# device) mounted in a mount namespace no other host sees.  Their
# concurrent scans must give the catalog that three separate SQLite scans
# give; the change log must stay numbered 1..N without gaps under three
# writers; a scanner killed with SIGKILL must lose nothing committed, and
# leave its run 'killed' and the other hosts' rows alone; a second scanner
# of a volume must wait for the first (or fail at once with --no-wait);
# no host may take the others' volumes for offline, nor their files for
# missing when all mount their disks at the same path.
if [ "${PIX_TEST_BACKEND:-sqlite}" = pg ]; then
	echo "1..0 # SKIP it compares PostgreSQL with SQLite itself, in the default pass"
	exit 0
fi
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/pg-lib.sh"

HOSTS_SH="$REPO/tests/tools/hosts.sh"
HS="$TRASH/hosts"

[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP not root (network namespaces, loop devices and mounts need root)"; exit 0; }
if ! why=$(sh "$HOSTS_SH" check 2>&1); then
	echo "1..0 # SKIP cannot make hosts here: $why"
	exit 0
fi
pg_need
for tool in jq sqlite3; do
	command -v $tool >/dev/null || { echo "1..0 # SKIP $tool is missing (sh contrib/debian-deps.sh test)"; exit 0; }
done

# Everything goes at exit, also after a failure: the processes started
# in the background (by the pids they were given), the server (while the
# hosts' links still carry its goodbye to their clients), then the hosts
# (their mounts die with their mount namespaces).
stop_spawned() {
	[ -f "$TRASH/.spawned" ] || return 0
	for p in $(cat "$TRASH/.spawned"); do
		kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null
	done
	rm -f "$TRASH/.spawned"
}
all_down() {
	stop_spawned
	pg_down
	sh "$HOSTS_SH" down "$HS" >/dev/null 2>&1
	cleanup
}
trap all_down EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! addrs=$(sh "$HOSTS_SH" up "$HS" 3 2>"$TRASH/.hosts-up"); then
	echo "Bail out! cannot make the hosts:"
	sed 's/^/#   /' "$TRASH/.hosts-up"
	exit 1
fi
# the server listens on this side of each host's link (and on 127.0.0.1
# for the test's own reads)
pg_up "127.0.0.1,$addrs"
trap all_down EXIT
DBNAME=hosts
CAT=$(pg_db $DBNAME) || { echo "Bail out! cannot make database $DBNAME"; exit 1; }

U1=41010001-0000-4000-8000-000000000001
U2=41010002-0000-4000-8000-000000000002
U3=41010003-0000-4000-8000-000000000003
mkdir -p "$TRASH/photos-h1" "$TRASH/photos-h2" "$TRASH/photos-h3" "$TRASH/photos"

# mnt HOST: where HOST mounts its disk: a place of its own, or with
# SAME_MNT set the same place on every host
mnt() {
	if [ -n "${SAME_MNT:-}" ]; then
		echo "$TRASH/photos"
	else
		echo "$TRASH/photos-$1"
	fi
}

# uri HOST [DB]: the catalog (or database DB) as HOST reaches it, over
# its own link
uri() {
	echo "postgresql://postgres@$(cat "$HS/$1/addr"):$PG_PORT/${2:-$DBNAME}"
}

# on HOST CMD...: CMD on HOST, its disk mounted at $(mnt HOST); off HOST
# CMD...: CMD on HOST without its disk.  (Under spawn they exec, so that
# the pid spawn gives is CMD's.)
on() {
	h=$1
	shift
	if [ -n "${IS_SPAWNED:-}" ]; then
		exec sh "$HOSTS_SH" run "$HS" "$h" "$(mnt "$h")" "$@"
	fi
	sh "$HOSTS_SH" run "$HS" "$h" "$(mnt "$h")" "$@"
}
off() {
	h=$1
	shift
	sh "$HOSTS_SH" run "$HS" "$h" - "$@"
}

# pxon HOST ARGS...: photoidx on HOST, on the shared catalog
pxon() {
	h=$1
	shift
	on "$h" "$PHOTOIDX" --db "$(uri "$h")" "$@"
}

# spawn NAME CMD...: CMD in the background, output in NAME.out and
# NAME.err, its pid in NAME.pid (and in .spawned, for the exit trap);
# alive NAME: it runs still (not even a zombie); reap NAME [STATUS]: wait
# for it (30 s at most: then it is killed), and say so unless it exited
# with STATUS (default 0)
spawn() {
	name=$1
	shift
	(IS_SPAWNED=1 && "$@") >"$name.out" 2>"$name.err" &
	echo $! >"$name.pid"
	echo $! >>"$TRASH/.spawned"
}
alive() {
	st=$(sed 's/.*) //' "/proc/$(cat "$1.pid")/stat" 2>/dev/null | cut -d" " -f1)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
reap() {
	want=${2:-0} rc=0 i=0
	while alive "$1" && [ $i -lt 600 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if alive "$1"; then
		echo "$1 still runs after 30 s: killed"
		kill -9 "$(cat "$1.pid")"
	fi
	wait "$(cat "$1.pid")" || rc=$?
	[ "$rc" = "$want" ] && return 0
	echo "$1 exited with status $rc, not $want; its stderr:"
	cat "$1.err"
	return 1
}

# same WANT GOT: the files are the same, else the start of their diff
same() {
	diff "$1" "$2" >"$2.diff" && return 0
	head -n 12 "$2.diff" | cut -c1-400
	echo "($(grep -c '^[<>]' "$2.diff") lines differ: $1 < > $2)"
	return 1
}

# pq SQL: SQL on the shared catalog, one row a line, fields split by |
pq() {
	pg_q $DBNAME "$1"
}

# The records of `export --format jsonl` without what two catalogs give
# differently for the same files: row ids, device and inode numbers, and
# the times of the scans; sidecar_id only as whether there is one.
norm() {
	jq -cS 'del(.id, .dev, .ino, .first_seen_at, .changed_at, .last_seen_at, .hashed_at, .verified_at,
		.missing_since) | .sidecar_id |= (. != null)'
}
export_pg() {
	px --db "$CAT" export --format jsonl --all -q >export-pg.jsonl &&
	norm <export-pg.jsonl | LC_ALL=C sort
}
export_sqlite() {
	for h in h1 h2 h3; do
		px --db "$TRASH/$h.db" export --format jsonl --all -q | norm
	done | LC_ALL=C sort
}

# The same from SQL on the file_info views (a second witness, that does
# not go through export): volume, relative path in hex, size, MD5, state
# and some metadata.
COLS="|| '|' || size || '|' || coalesce(md5, '-') || '|' || state || '|' || coalesce(mime, '-') || '|' ||
	coalesce(media, '-') || '|' || coalesce(make, '-') || '|' || coalesce(date_taken, '-') || '|' ||
	coalesce(description, '-')"
listing_pg() {
	pq "SELECT volume || '|' || encode(rel_path_bytes, 'hex') $COLS FROM file_info" | LC_ALL=C sort
}
listing_sqlite() {
	for h in h1 h2 h3; do
		sqlite3 -batch "$TRASH/$h.db" "SELECT volume || '|' || lower(hex(cast(rel_path AS blob))) $COLS FROM file_info"
	done | LC_ALL=C sort
}

# "ident|is_online|host" of the hosts' volumes in the shared catalog
volumes_pg() {
	pq "SELECT convert_from(ident, 'UTF8') || '|' || is_online || '|' || coalesce(host, '-') FROM volumes
		WHERE ident IN ('$U1', '$U2', '$U3') ORDER BY ident"
}
printf "%s\n" "$U1|1|h1" "$U2|1|h2" "$U3|1|h3" >"$TRASH/vols.want"

# The change log as `changes --since 0` lists it is seq 1..N, N the number
# of its rows, each once, none left without a seq.
feed_is_whole() {
	px --db "$CAT" changes --since 0 --json >feed.json &&
	n=$(pq "SELECT count(*) FROM changes") &&
	test "$n" -gt 0 &&
	jq '.changes[].seq' feed.json >feed.seqs &&
	seq 1 "$n" >feed.want &&
	same feed.want feed.seqs &&
	test "$(jq .last_seq feed.json)" = "$n" &&
	test "$(pq "SELECT count(*) FROM changes WHERE seq IS NULL")" = 0 &&
	test "$(pq "SELECT count(DISTINCT seq) || ' ' || min(seq) || ' ' || max(seq) FROM changes")" = "$n 1 $n"
}

# the number of files on HOST's disk
files_on() {
	on "$1" sh -c 'find "$1" -type f -printf x | wc -c' sh "$(mnt "$1")"
}

# A host's library: 200 photos of its camera, a name that is not UTF-8
# and one with a newline, an empty file, a text file, a TIFF; h1 and h2
# also hold the same photo (a duplicate across hosts).
test_expect_success 'setup: three hosts, each with its disk (ext4, its own UUID) of 205 files' '
	for i in 1 2 3; do
		d=src/h$i &&
		mkdir -p $d/DCIM/10${i}CAM $d/misc &&
		mkfix jpeg "$d/DCIM/10${i}CAM/IMG_%04d.JPG" --count 200 --make "Host$i" --date "2024:0$i:01 10:00:00" &&
		mkfix jpeg "$d/misc/$(printf "\377.jpg")" --description "not UTF-8 on h$i" &&
		mkfix jpeg "$d/misc/$(printf "new\nline.jpg")" --description "newline on h$i" &&
		: >$d/misc/empty.jpg &&
		echo "notes of h$i" >$d/misc/notes.txt &&
		mkfix tiff $d/misc/scan.tif --make "Scanner$i" || exit 1
	done &&
	mkfix jpeg src/h1/misc/same.jpg --make Dup --description "on two hosts" &&
	mkfix jpeg src/h2/DCIM/copy.jpg --make Dup --description "on two hosts" &&
	age src &&
	sh "$HOSTS_SH" disk "$HS" h1 $U1 64 src/h1 &&
	sh "$HOSTS_SH" disk "$HS" h2 $U2 64 src/h2 &&
	sh "$HOSTS_SH" disk "$HS" h3 $U3 96 src/h3 &&
	test "$(files_on h1)" = 206 &&
	test "$(files_on h2)" = 206 &&
	test "$(files_on h3)" = 205 &&
	test "$(on h2 blkid -s UUID -o value "$(cat "$HS/h2/loop")")" = $U2 &&
	# each host sees its own disk, and nobody else does
	test "$(on h1 ls "$(mnt h1)/DCIM")" = 101CAM &&
	test -z "$(on h1 ls -A "$(mnt h2)")" &&
	test -z "$(ls -A "$(mnt h1)")"
'

# The first writers of a new catalog make its tables (one migrates, the
# others wait for it): three at once, three times, on empty databases.
test_expect_success 'three hosts open a new catalog at once: one makes it, all succeed' '
	for k in 1 2 3; do
		pg_db fresh$k >/dev/null &&
		for h in h1 h2 h3; do
			spawn fresh$k-$h on $h "$PHOTOIDX" --db "$(uri $h fresh$k)" forget --missing
		done &&
		reap fresh$k-h1 && reap fresh$k-h2 && reap fresh$k-h3 || exit 1
	done
'

test_expect_success 'the three hosts scan into the catalog at once, over their links: all exit 0' '
	for h in h1 h2 h3; do
		spawn scan-$h pxon $h scan -q "$(mnt $h)"
	done &&
	reap scan-h1 && reap scan-h2 && reap scan-h3 &&
	test "$(pq "SELECT count(*) FROM files")" = 617 &&
	test "$(pq "SELECT string_agg(host || '\'' '\'' || state, '\'','\'' ORDER BY host) FROM scans")" = "h1 done,h2 done,h3 done"
'

test_expect_success 'the same disks, scanned each into an SQLite catalog of its own, on the same hosts' '
	for h in h1 h2 h3; do
		on $h "$PHOTOIDX" --db "$TRASH/$h.db" scan -q "$(mnt $h)" || exit 1
	done &&
	test $(($(sqlite3 h1.db "select count(*) from files") + $(sqlite3 h2.db "select count(*) from files") +
		$(sqlite3 h3.db "select count(*) from files"))) = 617
'

test_expect_success 'the shared catalog is the union of the three: export' '
	export_pg >pg.txt &&
	export_sqlite >sqlite.txt &&
	test "$(wc -l <pg.txt)" = 617 &&
	same sqlite.txt pg.txt
'

test_expect_success 'the shared catalog is the union of the three: file_info, by SQL' '
	listing_pg >pg.lst &&
	listing_sqlite >sqlite.lst &&
	test "$(wc -l <pg.lst)" = 617 &&
	same sqlite.lst pg.lst &&
	test "$(pq "SELECT string_agg(n::text, '\'','\'' ORDER BY volume) FROM
		(SELECT volume, count(*) AS n FROM file_info GROUP BY volume) c")" = "206,206,205" &&
	# the names that are not UTF-8 and with a newline, byte for byte, one a host
	test "$(pq "SELECT count(*) FROM file_info WHERE name_bytes = '\''\\xff2e6a7067'\''::bytea")" = 3 &&
	test "$(pq "SELECT count(*) FROM file_info WHERE name_text = E'\''new\\nline.jpg'\''")" = 3
'

test_expect_success 'the photo on two hosts is one group of duplicates across their volumes' '
	test "$(pq "SELECT string_agg(volume, '\'' '\'' ORDER BY volume) FROM duplicates")" = "$U1 $U2" &&
	px --db "$CAT" dups >dups.out &&
	grep -F "$(mnt h1)/misc/same.jpg" dups.out &&
	grep -F "$(mnt h2)/DCIM/copy.jpg" dups.out
'

test_expect_success 'the change log of the three writers is seq 1..N, N its entries' '
	feed_is_whole &&
	test "$(pq "SELECT count(*) FROM changes WHERE kind = '\''added'\''")" = 617
'

# Three rounds: on each host at once, 30 new photos, one moved, one
# removed, one rewritten, then a scan into the shared catalog and one into
# the host's SQLite catalog.
round() {
	r=$1
	for i in 1 2 3; do
		spawn round$r-h$i on h$i sh -c '
			mnt=$1 r=$2 i=$3
			cam=$mnt/DCIM/10${i}CAM
			mkdir "$mnt/DCIM/r$r" &&
			"$MKFIXTURE" jpeg "$mnt/DCIM/r$r/IMG_%03d.JPG" --count 30 --make "Host$i" \
				--date "2025:0$r:0$i 10:00:00" &&
			mv "$cam/IMG_000$r.JPG" "$mnt/DCIM/r$r/moved.JPG" &&
			rm "$cam/IMG_001$r.JPG" &&
			"$MKFIXTURE" jpeg "$cam/IMG_002$r.JPG" --make "Rewritten$r" --date "2020:01:01 00:00:00" &&
			touch -d "2 days ago" "$mnt/DCIM/r$r"/IMG_* &&
			touch -d "1 day ago" "$cam/IMG_002$r.JPG" &&
			"$PHOTOIDX" --db "$4" scan -q "$mnt" &&
			"$PHOTOIDX" --db "$5" scan -q "$mnt"
		' sh "$(mnt h$i)" $r $i "$(uri h$i)" "$TRASH/h$i.db"
	done
	reap round$r-h1 && reap round$r-h2 && reap round$r-h3
}

for r in 1 2 3; do
	test_expect_success "round $r: the hosts change their disks and rescan at once; the log stays 1..N" '
		round '$r' &&
		feed_is_whole &&
		test "$(pq "SELECT count(*) FROM changes WHERE kind = '\''moved'\''")" = $((3 * '$r')) &&
		test "$(pq "SELECT count(*) FROM changes WHERE kind = '\''missing'\''")" = $((3 * '$r'))
	'
done

test_expect_success 'after the rounds, the shared catalog is still the union of the three' '
	export_pg >pg.txt &&
	export_sqlite >sqlite.txt &&
	same sqlite.txt pg.txt &&
	listing_pg >pg.lst &&
	listing_sqlite >sqlite.lst &&
	same sqlite.lst pg.lst &&
	test "$(pq "SELECT count(*) FROM file_info WHERE state = '\''missing'\''")" = 9
'

test_expect_success 'no host took another host'\''s volume for offline: each is online, with its host' '
	volumes_pg >vols &&
	same vols.want vols &&
	test "$(pq "SELECT count(*) FROM changes WHERE kind IN ('\''offline'\'', '\''online'\'', '\''remounted'\'')")" = 0 &&
	test "$(pq "SELECT count(*) FROM file_info WHERE state = '\''offline'\''")" = 0
'

# A watch holds its volumes' locks for as long as it runs: while one
# watches h1's disk, a scan of it there fails with --no-wait and waits
# without; a scan of h2's disk does neither.  (The lock's key from
# store-int.h, to see in pg_locks when the watch holds it.)
LOCK_KEY=$(sed -n 's/^#define PIX_PG_LOCK_VOLUME \([0-9]*\).*/\1/p' "$REPO/src/store-int.h")
test_expect_success 'a second scanner of a volume waits for the first, or fails at once with --no-wait' '
	test -n "$LOCK_KEY" &&
	v1=$(pq "SELECT id FROM volumes WHERE ident = '\''$U1'\''") &&
	spawn watch pxon h1 watch -q "$(mnt h1)" &&
	i=0 &&
	while [ "$(pq "SELECT count(*) FROM pg_locks WHERE locktype = '\''advisory'\'' AND classid = $LOCK_KEY
			AND objid = $v1 AND objsubid = 2 AND granted")" != 1 ]; do
		[ $i -lt 100 ] || { echo "the watch holds no lock of volume $v1"; cat watch.err; exit 1; }
		sleep 0.05; i=$((i + 1))
	done &&
	test_expect_code 2 pxon h1 scan --no-wait -q "$(mnt h1)" 2>nowait.err &&
	cat nowait.err &&
	grep "is in use by another photoidx (pid [0-9]*) on host .h1., writing volume $v1 (it holds its lock)" nowait.err &&
	pxon h2 scan --no-wait -q "$(mnt h2)" &&
	spawn waiter pxon h1 scan "$(mnt h1)" &&
	i=0 &&
	while ! grep -q waiting waiter.err; do
		[ $i -lt 100 ] || { echo "the second scanner does not say it waits"; cat waiter.err; exit 1; }
		alive waiter || { echo "the second scanner did not wait"; cat waiter.err; exit 1; }
		sleep 0.05; i=$((i + 1))
	done &&
	sleep 0.5 &&
	alive waiter &&
	kill -INT "$(cat watch.pid)" &&
	reap watch 130 &&
	reap waiter &&
	cat waiter.err &&
	# the run refused its lock is over, not left running (nor taken for killed)
	pq "SELECT id, command, state, exit_status FROM scans WHERE host = '\''h1'\'' ORDER BY id" &&
	test "$(pq "SELECT count(*) FROM scans WHERE state IN ('\''running'\'', '\''killed'\'')")" = 0
'

# Two scanners of a volume the catalog does not know yet, at once (a
# disk new to the catalog, scanned twice by mistake): one records it, the
# other waits for it; both succeed.  Three times, on fresh catalogs.
test_expect_success 'two scanners of a volume new to the catalog, at once: both exit 0' '
	for k in 1 2 3; do
		pg_db newvol$k >/dev/null &&
		on h1 "$PHOTOIDX" --db "$(uri h1 newvol$k)" forget --missing >/dev/null &&
		spawn newvol$k-a on h1 "$PHOTOIDX" --db "$(uri h1 newvol$k)" scan -q "$(mnt h1)" &&
		spawn newvol$k-b on h1 "$PHOTOIDX" --db "$(uri h1 newvol$k)" scan -q "$(mnt h1)" &&
		reap newvol$k-a && reap newvol$k-b || exit 1
	done
'

# The rows of the catalog on the volumes of h1 and h2, all their columns:
# what h3's crashes must leave alone.
others() {
	pq "SELECT md5(string_agg(f::text || coalesce(m::text, ''), ',' ORDER BY f.id)) || ' ' || count(*)
		FROM files f JOIN dirs d ON d.id = f.dir_id JOIN volumes v ON v.id = d.volume_id
		LEFT JOIN meta m ON m.file_id = f.id WHERE v.ident <> '$U3'"
}
# h3's file rows committed: "id hex-of-path", sorted
rows_h3() {
	pq "SELECT f.id || ' ' || encode(d.path || '/'::bytea || f.name, 'hex') FROM files f
		JOIN dirs d ON d.id = f.dir_id JOIN volumes v ON v.id = d.volume_id WHERE v.ident = '$U3'" | LC_ALL=C sort
}

# h3's file rows committed, counted (count_h3 present: those not missing)
count_h3() {
	pq "SELECT count(*) FROM files f JOIN dirs d ON d.id = f.dir_id JOIN volumes v ON v.id = d.volume_id
		WHERE v.ident = '$U3' ${1:+AND f.state <> 'missing'}"
}

# Five times: 1500 new photos on h3's disk, its scan (read at 512 kB/s,
# 1.6 s for them) killed while h1 and h2 rescan theirs, then a rescan of h3.
# The first kill comes as soon as the run has its row in scans, before it
# commits a file (a batch is 1 s or 5000 files; a fixed 0.3 s was sometimes
# too soon on a loaded machine, before the row); the others in the next batch, 0.1 to 0.4 s after
# the run's first commit.
: >kill.log
for t in 1 2 3 4 5; do
	test_expect_success "kill -9 of h3's scan, trial $t: nothing committed lost, the run 'killed', the others untouched" '
		t='$t' &&
		on h3 sh -c "mkdir \"\$1/k$t\" && \"\$MKFIXTURE\" jpeg \"\$1/k$t/IMG_%04d.JPG\" --count 1500 --make Kill$t \
			--date \"2023:0$t:01 00:00:00\" && touch -d \"2 days ago\" \"\$1/k$t\"/*" sh "$(mnt h3)" &&
		others >others.before &&
		rows_h3 >rows.start &&
		n_start=$(wc -l <rows.start) &&
		spawn victim pxon h3 scan -q --limit-rate 512K "$(mnt h3)" &&
		spawn other1 pxon h1 scan -q "$(mnt h1)" &&
		spawn other2 pxon h2 scan -q "$(mnt h2)" &&
		victim=$(cat victim.pid) &&
		i=0 &&
		while [ "$(cat /proc/$victim/comm 2>/dev/null)" != photoidx ]; do
			[ $i -lt 200 ] || { echo "the scan of h3 did not start"; cat victim.err; exit 1; }
			sleep 0.01; i=$((i + 1))
		done &&
		if [ $t = 1 ]; then
			# before any commit of files, but after the run has its row
			i=0 &&
			while [ -z "$(pq "SELECT id FROM scans WHERE host = '\''h3'\'' AND pid = $victim")" ]; do
				[ $i -lt 200 ] || { echo "the scan of h3 has no row in scans after 10 s"; cat victim.err; exit 1; }
				alive victim || { echo "the scan of h3 ended before its row in scans"; exit 1; }
				sleep 0.05; i=$((i + 1))
			done
		else
			i=0 &&
			while [ "$(count_h3)" = "$n_start" ]; do
				[ $i -lt 100 ] || { echo "the scan of h3 committed nothing in 5 s"; cat victim.err; exit 1; }
				alive victim || { echo "the scan of h3 ended before its first commit"; exit 1; }
				sleep 0.05; i=$((i + 1))
			done &&
			sleep 0.$((t - 1))
		fi &&
		kill -9 $victim &&
		reap victim 137 &&
		rows_h3 >rows.killed &&
		n_killed=$(($(wc -l <rows.killed) - n_start)) &&
		echo "trial $t: run killed with $n_killed of its 1500 new rows committed" >>"$TRASH/kill.log" &&
		{ [ $t = 1 ] || [ $n_killed -gt 0 ]; } &&
		# running, or already marked killed by a scan of h1 or h2 starting
		# meanwhile (a run whose advisory lock no session holds is lost)
		killed=$(pq "SELECT id FROM scans WHERE host = '\''h3'\'' AND pid = $victim
			AND state IN ('\''running'\'', '\''killed'\'') ORDER BY id DESC LIMIT 1") &&
		test -n "$killed" &&
		reap other1 && reap other2 &&
		pxon h3 scan -q "$(mnt h3)" &&
		rows_h3 >rows.after &&
		# every row there after the kill (committed) is still there, as it was
		test -z "$(LC_ALL=C comm -23 rows.killed rows.after)" &&
		test "$(pq "SELECT state FROM scans WHERE id = $killed")" = killed &&
		px --db "$CAT" status >status.out &&
		grep "scan *killed" status.out &&
		test "$(pq "SELECT state FROM scans WHERE host = '\''h3'\'' ORDER BY id DESC LIMIT 1")" = done &&
		test "$(count_h3 present)" = "$(files_on h3)" &&
		test $(($(count_h3) - $(count_h3 present))) = 3 &&
		others >others.after &&
		same others.before others.after &&
		feed_is_whole
	'
done
sed 's/^/# /' kill.log

test_expect_success 'after the crashes, the catalog is still the union of the SQLite catalogs' '
	on h3 "$PHOTOIDX" --db "$TRASH/h3.db" scan -q "$(mnt h3)" &&
	export_pg >pg.txt &&
	export_sqlite >sqlite.txt &&
	same sqlite.txt pg.txt &&
	volumes_pg >vols &&
	same vols.want vols
'

test_expect_success 'a host that no longer sees its own disk marks it offline, and only it' '
	off h2 "$PHOTOIDX" --db "$(uri h2)" scan "$(mnt h2)" 2>offline.err &&
	cat offline.err &&
	volumes_pg >vols &&
	printf "%s\n" "$U1|1|h1" "$U2|0|h2" "$U3|1|h3" >vols.offline &&
	same vols.offline vols &&
	test "$(pq "SELECT count(*) FROM file_info WHERE state = '\''offline'\''")" = "$(files_on h2)" &&
	pxon h2 scan -q "$(mnt h2)" &&
	volumes_pg >vols &&
	same vols.want vols &&
	test "$(pq "SELECT string_agg(kind, '\'','\'' ORDER BY seq) FROM changes
		WHERE kind IN ('\''offline'\'', '\''online'\'')")" = "offline,online" &&
	feed_is_whole
'

# Hosts mount their disks where they like: the same path on all three
# (every host's /srv/photos).  A host's scan is about its own disk, there:
# the other hosts' rows at the same paths are not its to find missing.
SAME_MNT=1
test_expect_success 'the hosts mount their disks at the same path and rescan one by one: none finds the others'\'' files missing' '
	for h in h1 h2 h3; do
		pxon $h scan "$(mnt $h)" >same-$h.err 2>&1 || { echo "$h: exit status $?"; cat same-$h.err; exit 1; }
		echo "$h: $(tail -n 1 same-$h.err)"
		on $h "$PHOTOIDX" --db "$TRASH/$h.db" scan -q "$(mnt $h)" || exit 1
	done &&
	echo "the files missing, by host:" &&
	pq "SELECT v.host, count(*) FROM file_info i JOIN volumes v ON v.ident = i.volume_bytes WHERE i.state = '\''missing'\''
		GROUP BY v.host ORDER BY v.host" &&
	grep " 0 missing," same-h1.err && grep " 0 missing," same-h2.err && grep " 0 missing," same-h3.err &&
	test "$(pq "SELECT count(*) FROM changes WHERE kind = '\''remounted'\''")" = 3 &&
	test "$(pq "SELECT count(*) FROM file_info WHERE state = '\''missing'\''")" = 9 &&
	export_pg >pg.txt &&
	export_sqlite >sqlite.txt &&
	same sqlite.txt pg.txt &&
	feed_is_whole
'

test_expect_success 'at the same path, the three hosts rescan at once: all exit 0' '
	for h in h1 h2 h3; do
		spawn same-$h pxon $h scan -q "$(mnt $h)"
	done &&
	reap same-h1 && reap same-h2 && reap same-h3 &&
	echo "files missing: $(pq "SELECT count(*) FROM file_info WHERE state = '\''missing'\''") (9 removed)" &&
	test "$(pq "SELECT count(*) FROM file_info WHERE state = '\''missing'\''")" = 9 &&
	feed_is_whole
'

test_expect_success 'at the same path, the scan of one host leaves the other hosts'\'' roots and volumes as they were' '
	pq "SELECT v.host || '\'' '\'' || coalesce(r.last_scan_at, 0) || '\'' '\'' || coalesce(v.last_scan_at, 0)
		FROM roots r JOIN volumes v ON v.id = r.volume_id WHERE v.ident IN ('\''$U2'\'', '\''$U3'\'')
		ORDER BY v.host" >roots.before &&
	sleep 1.1 &&
	pxon h1 scan -q "$(mnt h1)" &&
	pq "SELECT v.host || '\'' '\'' || coalesce(r.last_scan_at, 0) || '\'' '\'' || coalesce(v.last_scan_at, 0)
		FROM roots r JOIN volumes v ON v.id = r.volume_id WHERE v.ident IN ('\''$U2'\'', '\''$U3'\'')
		ORDER BY v.host" >roots.after &&
	same roots.before roots.after &&
	test "$(pq "SELECT count(*) FROM file_info WHERE state = '\''missing'\''")" = 9
'

# A photo moved from one host's disk to another's: h1 finds it gone, h2
# finds it new, with the MD5 and size of h1's missing row, and takes that
# row over (the issue: moves between volumes on different hosts are paired
# by MD5 and size).
test_expect_success 'a photo moved from h1'\''s disk to h2'\''s is one row, moved, with its history' '
	pq "SELECT rel_path_text || '\''|'\'' || md5 || '\''|'\'' || id FROM file_info
		WHERE volume = '\''$U1'\'' AND state = '\''ok'\'' AND size > 0 AND media = '\''image'\''
		AND rel_path_text NOT LIKE '\''%/%/%/%'\'' AND position(chr(10) IN rel_path_text) = 0
		AND md5 IN (SELECT md5 FROM file_info GROUP BY md5 HAVING count(*) = 1) ORDER BY id LIMIT 1" >pick &&
	rel=$(cut -d"|" -f1 pick) && md5=$(cut -d"|" -f2 pick) && id=$(cut -d"|" -f3 pick) &&
	test -n "$id" &&
	on h1 cat "$(mnt h1)/$rel" >moving.jpg &&
	on h1 rm "$(mnt h1)/$rel" &&
	on h2 sh -c "cat >\"\$1/moved-here.jpg\" && touch -d \"2 days ago\" \"\$1/moved-here.jpg\"" - "$(mnt h2)" <moving.jpg &&
	pxon h1 scan "$(mnt h1)" >move-h1.out && grep -q " 1 missing," move-h1.out &&
	pxon h2 scan "$(mnt h2)" >move-h2.out && cat move-h2.out && grep -q "^0 new, 0 changed, 1 moved," move-h2.out &&
	test "$(pq "SELECT id || '\''|'\'' || volume || '\''|'\'' || rel_path_text || '\''|'\'' || state
		FROM file_info WHERE md5 = '\''$md5'\''")" = "$id|$U2|moved-here.jpg|ok" &&
	test "$(pq "SELECT kind FROM changes WHERE file_id = $id ORDER BY seq DESC LIMIT 1")" = moved &&
	feed_is_whole
'

test_done
