#!/bin/sh
# photoidx watch: real inotify on real directories.  Files are indexed once
# complete, new directories lose nothing, renames and deletions are
# recorded, an overflow or a low watch limit still ends with everything
# indexed, and SIGTERM ends the session cleanly.
. "$(dirname "$0")/lib.sh"

# the watcher outlives the test that starts it (each test is a subshell):
# its pid and, once it ends, its exit status are kept in files
start_watch() {
	# one left running by a failed test would hold the catalog
	[ -s watch.pid ] && [ ! -s watch.rc ] && stop_watch
	rm -f watch.rc watch.pid
	( set +e; sh -c 'echo $$ >watch.pid; exec "$0" "$@"' "$PHOTOIDX" watch -v --db "$DB" --settle 0.3 "$@" \
		>watch.out 2>watch.err; echo $? >watch.rc ) &
	wait_for "select count(*) from scans where command = 'watch' and state = 'running'" 1
}

stop_watch() {
	kill -TERM "$(cat watch.pid)" 2>/dev/null
	i=0; while [ ! -s watch.rc ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s watch.rc ] || { echo "the watcher (pid $(cat watch.pid)) did not end:"; ps -o pid,stat,wchan:20,cmd -p "$(cat watch.pid)"; cat watch.err; }
	test -s watch.rc
}

# the catalog's paths as text: on PostgreSQL they are bytes (bytea), or
# text beside *_bytes (the cast reads either)
if backend_is sqlite; then P=path; else P="convert_from(cast(path as bytea), 'UTF8')"; fi

test_expect_success 'setup: a library, watched' '
	mkdir -p lib/a && echo old >lib/a/old.txt && age lib &&
	start_watch lib &&
	wait_for "select count(*) from files" 1
'

test_expect_success 'a file written slowly is indexed once, complete, with its final MD5' '
	{ echo part1; sleep 0.8; echo part2; sleep 0.8; echo part3; } >lib/a/slow.txt &&
	wait_for "select md5 from file_info where name = '\''slow.txt'\''" "$(md5sum <lib/a/slow.txt | cut -c1-32)" &&
	sleep 1 &&
	test "$(q "select group_concat(kind) from changes where file_id = (select id from files where name = '\''slow.txt'\'')")" = added
'

test_expect_success 'files created in a brand-new directory right after mkdir are all indexed' '
	mkdir lib/new && echo 1 >lib/new/one && mkdir lib/new/deeper && echo 2 >lib/new/deeper/two &&
	mkdir -p lib/new/deeper/deepest && echo 3 >lib/new/deeper/deepest/three &&
	wait_for "select count(*) from file_info where path like '\''$TRASH/lib/new/%'\'' and state = '\''ok'\''" 3
'

test_expect_success 'cp -r of 2,000 files: every one arrives, with the right MD5, in batches' '
	mkdir -p src/card && i=0 && while [ $i -lt 2000 ]; do echo "photo $i" >src/card/IMG_$i.JPG; i=$((i + 1)); done &&
	n0=$(grep -c "rescanning" watch.err) &&
	start=$(date +%s.%N) && cp -r src/card lib/card && end=$(date +%s.%N) &&
	wait_for "select count(*) from file_info where dir = '\''$TRASH/lib/card'\'' and state = '\''ok'\''" 2000 &&
	q "select md5 || '\''  '\'' || $P from file_info where dir = '\''$TRASH/lib/card'\''" >sums && md5sum -c --quiet sums &&
	n1=$(grep -c "rescanning" watch.err) &&
	# batches, not a transaction per file: the number of passes depends on
	# how fast this machine copies and indexes (4 on an idle one, up to 20
	# on a loaded one), so only the many-times-fewer-than-files bound is
	# tested; make bench measures the watcher speed
	echo "rescans: $((n1 - n0)) for a copy of $(awk -v a="$start" -v b="$end" "BEGIN { print b - a }") s" &&
	test $((n1 - n0)) -le 100
'


test_expect_success 'a rename is a move (not read again), a deletion a missing file' '
	id=$(q "select id from files where name = '\''one'\''") &&
	mv lib/new/one lib/a/one-renamed && rm lib/a/old.txt &&
	wait_for "select id || state from file_info where path = '\''$TRASH/lib/a/one-renamed'\''" "${id}ok" &&
	wait_for "select state from file_info where name = '\''old.txt'\''" missing &&
	test "$(q "select kind from changes where file_id = $id order by seq desc limit 1")" = moved
'

test_expect_success 'a copy then delete (a move by a file manager) keeps the record, by MD5' '
	if backend_is sqlite; then
		test "$(q "select count(*) from sqlite_schema where name = '\''files_by_md5'\''")" = 1
	else
		test "$(q "select count(*) from pg_indexes where schemaname = current_schema() and indexname = '\''files_by_md5'\''")" = 1
	fi &&
	id=$(q "select id from files where name = '\''slow.txt'\''") &&
	cp lib/a/slow.txt lib/new/slow-copy.txt && rm lib/a/slow.txt &&
	wait_for "select id || state from file_info where name = '\''slow-copy.txt'\''" "${id}ok" &&
	test "$(q "select kind from changes where file_id = $id order by seq desc limit 1")" = moved
'

test_expect_success 'a directory moved out of the tree: its files are missing' '
	mv lib/new/deeper outside &&
	wait_for "select count(*) from file_info where path like '\''$TRASH/lib/new/deeper/%'\'' and state = '\''missing'\''" 2
'

test_expect_success 'a directory renamed within the tree keeps its records and its watch' '
	mv lib/card lib/card-2024 &&
	wait_for "select count(*) from file_info where dir = '\''$TRASH/lib/card-2024'\'' and state = '\''ok'\''" 2000 &&
	echo late >lib/card-2024/late.txt &&
	wait_for "select count(*) from file_info where path = '\''$TRASH/lib/card-2024/late.txt'\''" 1 &&
	test "$(q "select count(*) from file_info where dir = '\''$TRASH/lib/card'\'' and state <> '\''missing'\''")" = 0
'

test_expect_success 'a sidecar written beside a watched image lends it its date at once, and takes it back' '
	mkdir lib/dt && "$MKFIXTURE" jpeg lib/dt/IMG_1.jpg --make Cam &&
	wait_for "select make from file_info where name = '\''IMG_1.jpg'\''" Cam &&
	printf "%s\n" "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">" \
		"<rdf:Description xmlns:exif=\"http://ns.adobe.com/exif/1.0/\" exif:DateTimeOriginal=\"2020-05-05T05:05:05\"/>" \
		"</rdf:RDF></x:xmpmeta>" >lib/dt/IMG_1.jpg.xmp &&
	wait_for "select date_taken from file_info where name = '\''IMG_1.jpg'\''" 2020-05-05T05:05:05 &&
	rm lib/dt/IMG_1.jpg.xmp &&
	wait_for "select coalesce(date_taken, '\''none'\'') from file_info where name = '\''IMG_1.jpg'\''" none
'

test_expect_success 'SIGTERM (a service stopped) commits and ends the session as asked: done, exit 0, the catalog sound' '
	stop_watch && echo "exit $(cat watch.rc); scans: $(q "select group_concat(command || state) from scans")" &&
	test "$(cat watch.rc)" = 0 &&
	test "$(q "select state || exit_status from scans where command = '\''watch'\''")" = done0 &&
	sound
'

test_expect_success 'the watched catalog equals a fresh scan of the same tree' '
	catalog_cp "$DB" fresh.db &&
	px scan --db fresh.db --json lib >s.json &&
	test "$(jq -c "[.new, .changed, .moved, .missing]" s.json)" = "[0,0,0,0]"
'

if [ "$(id -u)" = 0 ] && [ -w /proc/sys/fs/inotify/max_queued_events ]; then
	test_expect_success 'a queue overflow ends with the catalog equal to a fresh scan' '
		old=$(cat /proc/sys/fs/inotify/max_queued_events) &&
		echo 16 >/proc/sys/fs/inotify/max_queued_events &&
		rc=0 && { start_watch -v --readers 1 --limit-rate 1M lib || rc=1; } &&
		i=0 && while ! grep -q "^photoidx: watching" watch.err && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
		echo "$old" >/proc/sys/fs/inotify/max_queued_events &&
		test $rc = 0 &&
		head -c 2500000 /dev/urandom >lib/big.bin && sleep 1 &&
		i=0 && while [ $i -lt 300 ]; do echo "b $i" >lib/a/burst$i; i=$((i + 1)); done &&
		wait_for "select count(*) from file_info where name like '\''burst%'\''" 300 &&
		stop_watch &&
		{ grep -q "overflowed" watch.err || { echo "no overflow:"; cat watch.err; false; }; } &&
		catalog_cp "$DB" fresh.db &&
		px scan --db fresh.db --json lib >s.json &&
		test "$(jq -c "[.new, .changed, .moved, .missing]" s.json)" = "[0,0,0,0]"
	'
else
	test_skip 'a queue overflow ends with the catalog equal to a fresh scan' 'needs root to lower max_queued_events'
fi

if [ "$(id -u)" = 0 ] && [ -w /proc/sys/fs/inotify/max_user_watches ]; then
	test_expect_success 'with the watch limit reached: said once, and unwatched trees kept current' '
		mkdir -p lim && i=0 && while [ $i -lt 30 ]; do mkdir -p lim/d$i; i=$((i + 1)); done &&
		old=$(cat /proc/sys/fs/inotify/max_user_watches) &&
		used=$(cat /proc/[0-9]*/fdinfo/* 2>/dev/null | grep -c "^inotify wd:" || true) &&
		echo $((used + 5)) >/proc/sys/fs/inotify/max_user_watches &&
		rc=0 && { start_watch --rescan-interval 1 lim || rc=1; } &&
		i=0 && while [ $i -lt 30 ]; do echo "x $i" >lim/d$i/f; i=$((i + 1)); done &&
		{ wait_for "select count(*) from file_info where path like '\''$TRASH/lim/d%/f'\'' and state = '\''ok'\''" 30 || rc=1; } &&
		{ stop_watch || rc=1; } &&
		echo "$old" >/proc/sys/fs/inotify/max_user_watches &&
		echo "watches in use before: $used; rc $rc; the watcher said:" && cat watch.err &&
		test $rc = 0 &&
		test "$(grep -c "watch limit is reached" watch.err)" = 1 &&
		grep -q "sysctl fs.inotify.max_user_watches" watch.err
	'
else
	test_skip 'with the watch limit reached: said once, and unwatched trees kept current' 'needs root to lower max_user_watches'
fi

test_expect_success 'a deleted root is reported, not fatal: the other root is still watched' '
	mkdir -p r1 r2 && echo a >r1/a && echo b >r2/b && age r1 r2 &&
	catalog_rm "$DB" && start_watch r1 r2 &&
	wait_for "select count(*) from files" 2 &&
	rm -rf r1 && sleep 0.5 && echo c >r2/c &&
	wait_for "select count(*) from file_info where name = '\''c'\''" 1 &&
	kill -0 "$(cat watch.pid)" &&
	stop_watch && grep -q "r1.* is gone" watch.err &&
	! grep -q "cannot open directory" watch.err
'

test_expect_success 'usage errors' '
	test_expect_code 64 px watch --db "$DB" &&
	test_expect_code 64 px watch --db "$DB" --settle -1 lib
'

test_done
