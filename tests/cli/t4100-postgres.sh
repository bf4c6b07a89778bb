#!/bin/sh
# A PostgreSQL catalog (--db postgresql://...): every command works on it
# as on SQLite and gives the same catalog; names that are not UTF-8 are
# kept exactly; the change log is numbered at commit without gaps and
# wakes LISTENers; a scanner holds its volume's lock; a run whose writer
# is gone is found killed, one running elsewhere is not; a newer schema
# and a foreign database are refused; a read-only role reads it and
# exports for KPhotoAlbum.  Several hosts at once: t4101-pg-hosts.sh.
if [ "${PIX_TEST_BACKEND:-sqlite}" = pg ]; then
	echo "1..0 # SKIP it compares PostgreSQL with SQLite itself, in the default pass"
	exit 0
fi
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/pg-lib.sh"
pg_need
pg_up

# every column of file_info, one file per line, without what differs
# between two catalogs of the same files: ids and the times of the runs
catalog_of() {
	px export --db "$1" --format jsonl |
		jq -cS 'del(.id, .sidecar_id, .first_seen_at, .changed_at, .last_seen_at, .hashed_at, .verified_at,
		            .verify_state, .missing_since)' | sort
}

# waits up to 10 s for a file to hold a line matching a pattern
wait_grep() {
	i=0
	while [ $i -lt 100 ]; do
		grep -q "$1" "$2" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "waited 10 s for '$1' in $2:" >&2 && cat "$2" >&2
	return 1
}

test_expect_success 'setup: a library with a sidecar, a duplicate, names not UTF-8 and with a newline' '
	mkdir -p lib/a lib/b &&
	for i in 1 2 3 4; do mkfix jpeg lib/a/img$i.jpg --seed $i --date "2021:03:0$i 10:00:00" --gps 48.1,11.5; done &&
	mkfix tiff lib/b/scan.tif --seed 9 &&
	cp lib/a/img1.jpg lib/b/copy.jpg &&
	cat >lib/a/img2.xmp <<-\EOF &&
	<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
	<rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:DateTimeOriginal="2021-03-02T11:00:00"/>
	</rdf:RDF></x:xmpmeta>
	EOF
	mkfix jpeg "lib/b/$(printf "\377\376 latin1.jpg")" --seed 5 &&
	mkfix jpeg "lib/b/$(printf "new\nline.jpg")" --seed 6 &&
	age lib &&
	PG=$(pg_db cat) && echo "$PG" >pg.uri
'
PG=$(cat pg.uri 2>/dev/null)

test_expect_success 'scan into PostgreSQL: the same catalog as into SQLite' '
	px scan --db "$PG" lib >out && grep -q "^9 new" out &&
	px scan --db "$DB" -q lib &&
	catalog_of "$DB" >lite.csv && catalog_of "$PG" >pg.csv &&
	test "$(wc -l <pg.csv)" = 9 &&
	diff -u lite.csv pg.csv
'

test_expect_success 'ls, dups, stats, volumes say the same on both' '
	for c in "ls" "ls --near 48.1,11.5 --radius 2km" "dups" "stats" "volumes"; do
		px $c --db "$DB" >lite.out && px $c --db "$PG" >pg.out && diff -u lite.out pg.out || return 1
	done
'

test_expect_success 'filters ignore case on both: --make, --model (their own catalogs)' '
	mkdir cams &&
	mkfix jpeg cams/c1.jpg --make Canon --model "Canon EOS Rebel T6" --seed 70 &&
	mkfix jpeg cams/c2.jpg --make CANON --model "Canon EOS 5D" --seed 71 &&
	mkfix jpeg cams/n.jpg --make NIKON --model "D750" --seed 72 && age cams &&
	PG2=$(pg_db filters) &&
	px scan --db "$PG2" -q cams && px scan --db cams.db -q cams &&
	for f in "--make canon" "--model rebel" "--make nik" "--model EOS" "--make %"; do
		px ls --db cams.db $f >lite.out && px ls --db "$PG2" $f >pg.out && diff -u lite.out pg.out || return 1
	done &&
	test "$(px ls --db "$PG2" --make canon | wc -l)" = 2 &&
	test "$(px ls --db "$PG2" --model rebel | wc -l)" = 1 &&
	test "$(px ls --db "$PG2" --make % | wc -l)" = 0
'

# Statements the server logged (log_statement = all) for 500 new files in
# 101 new directories, and for an unchanged rescan of 103 directories (over
# a proxy that delays each byte 0.5 ms each way, as a LAN would, so the
# walk is ahead of plan and plan asks for many directories at once).  Asked
# per file and per directory (before the set-based store) they were 2377
# and 371; now about 185 and 171: what is left is one pipelined upsert per
# directory and the runs' own statements.
test_expect_success 'new files and an unchanged rescan: statements per batch, not per file or directory (server log)' '
	PG3=$(pg_db trips) && LOGGED="?options=-c%20log_statement%3Dall" &&
	mkdir -p trips/old && mkfix jpeg trips/old/a.jpg --seed 80 && age trips &&
	px scan --db "$PG3" -q trips &&
	mkdir trips/new && i=0 &&
	while [ $i -lt 400 ]; do { cat trips/old/a.jpg; echo $i; } >trips/new/f$i.jpg; i=$((i + 1)); done &&
	i=0 && while [ $i -lt 100 ]; do mkdir trips/d$i && { cat trips/old/a.jpg; echo d$i; } >trips/d$i/g.jpg; i=$((i + 1)); done &&
	age trips &&
	n0=$(pg_statements) && px scan --db "$PG3$LOGGED" --json trips >s.json && n1=$(pg_statements) &&
	test "$(jq .new s.json)" = 500 &&
	echo "$((n1 - n0)) statements for 500 new files in 101 new directories" &&
	test $((n1 - n0)) -lt 600 &&
	{ python3 "$REPO/tests/tools/delay-proxy.py" 127.0.0.1:0 "127.0.0.1:$PG_PORT" 0.5 proxy.port </dev/null >/dev/null 2>&1 &
	  echo $! >proxy.pid; } &&
	i=0 && while [ ! -s proxy.port ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	SLOW="postgresql://postgres@127.0.0.1:$(cat proxy.port)/trips" &&
	n0=$(pg_statements) && px scan --db "$SLOW$LOGGED" --json trips >s.json && n1=$(pg_statements) &&
	kill "$(cat proxy.pid)" &&
	test "$(jq .unchanged s.json)" = 501 &&
	echo "$((n1 - n0)) statements for an unchanged rescan of 103 directories" &&
	test $((n1 - n0)) -lt 260
'

test_expect_success 'a name not UTF-8 is kept as its bytes, with no text column' '
	test "$(pg_q cat "SELECT count(*) FROM files WHERE name = '\''\\xfffe206c6174696e312e6a7067'\''")" = 1 &&
	test "$(pg_q cat "SELECT count(*) FROM file_info WHERE name_text IS NULL")" = 1 &&
	test "$(pg_q cat "SELECT path_text FROM photos WHERE name_text = '\''img3.jpg'\''")" = "$TRASH/lib/a/img3.jpg" &&
	px ls --db "$PG" | grep -q "\\\\xff\\\\xfe latin1.jpg"
'

test_expect_success 'an unchanged rescan reads no file' '
	px scan --db "$PG" --json lib >s.json &&
	test "$(jq .bytes_read s.json)" = 0 && test "$(jq .unchanged s.json)" = 9 &&
	test "$(jq ".new + .changed + .moved + .missing" s.json)" = 0
'

test_expect_success 'a change, a move and a removal: the same change log as SQLite, numbered 1..N' '
	mkfix jpeg lib/a/img4.jpg --seed 40 && touch -d "1 day ago" lib/a/img4.jpg &&
	mv lib/a/img3.jpg lib/b/img3.jpg && rm lib/b/scan.tif && age lib &&
	px scan --db "$PG" -q lib && px scan --db "$DB" -q lib &&
	px changes --db "$DB" | cut -f2- | sort >lite.log &&
	px changes --db "$PG" | cut -f2- | sort >pg.log &&
	diff -u lite.log pg.log &&
	px changes --db "$PG" | cut -f1 >seqs && seq 1 "$(wc -l <seqs)" >want && diff -u want seqs &&
	catalog_of "$DB" >lite.csv && catalog_of "$PG" >pg.csv && diff -u lite.csv pg.csv
'

test_expect_success 'forget removes the missing files; its entries are numbered after the others' '
	px forget --db "$PG" --missing >out && grep -q "^forgot 1 missing file" out &&
	test "$(pg_q cat "SELECT count(*) FROM files WHERE state = '\''missing'\''")" = 0 &&
	test "$(pg_q cat "SELECT kind FROM changes ORDER BY seq DESC LIMIT 1")" = forgotten &&
	px changes --db "$PG" | cut -f1 >seqs && seq 1 "$(wc -l <seqs)" >want && diff -u want seqs &&
	test "$(pg_q cat "SELECT count(*) FROM changes WHERE seq IS NULL")" = 0
'

test_expect_success 'verify reads the files of a PostgreSQL catalog' '
	px verify --db "$PG" >out && grep -q "^verified 8 files" out &&
	test "$(pg_q cat "SELECT count(*) FROM files WHERE verify_state = '\''ok'\''")" = 8
'

test_expect_success 'a commit wakes the LISTENers of photoidx_changes' '
	{ sh "$PG_SH" psql "$PG_DIR" cat -c "LISTEN photoidx_changes" -c "SELECT pg_sleep(3)" >listen.out 2>&1 & } &&
	sleep 1 && mkfix jpeg lib/a/late.jpg --seed 50 && age lib/a/late.jpg && px scan --db "$PG" -q lib &&
	wait_grep "notification \"photoidx_changes\" with payload \"$(px changes --db "$PG" | tail -n 1 | cut -f1)\"" listen.out
'

test_expect_success 'watch writes a PostgreSQL catalog: a file copied in is added' '
	{ "$PHOTOIDX" watch --db "$PG" -q lib >watch.out 2>&1 & echo $! >watch.pid; } &&
	sleep 2 && mkfix jpeg lib/b/watched.jpg --seed 60 &&
	i=0 && until px ls --db "$PG" | grep -q "lib/b/watched.jpg$" || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	kill -INT "$(cat watch.pid)" && { wait "$(cat watch.pid)" || true; } &&
	px ls --db "$PG" | grep -q "lib/b/watched.jpg$" &&
	px changes --db "$PG" | tail -n 1 | grep -q "added	$TRASH/lib/b/watched.jpg$"
'

test_expect_success 'a scanner holds its volume: --no-wait fails while another holds it, else it waits' '
	vol=$(pg_q cat "SELECT id FROM volumes") &&
	{ sh "$PG_SH" psql "$PG_DIR" cat -c "SELECT pg_advisory_lock(20555, $vol)" -c "SELECT pg_sleep(3)" >/dev/null 2>&1 & } &&
	sleep 1 &&
	test_expect_code 2 px scan --db "$PG" --no-wait lib 2>err &&
	grep -q "is in use by another photoidx (pid unknown), writing volume $vol (it holds its lock)" err &&
	start=$(date +%s) && px scan --db "$PG" lib 2>err && end=$(date +%s) &&
	grep -q "waiting" err && test $((end - start)) -ge 1
'

test_expect_success 'a run whose writer is gone is found killed; one that holds its lock is running' '
	pg_q cat "INSERT INTO scans (command, roots, started_at, state, host) VALUES ('\''scan'\'', '\''x'\'', 1, '\''running'\'', '\''gone'\'')" &&
	pg_q cat "INSERT INTO scans (command, roots, started_at, state, host) VALUES ('\''scan'\'', '\''y'\'', 1, '\''running'\'', '\''elsewhere'\'')" &&
	alive=$(pg_q cat "SELECT max(id) FROM scans") &&
	{ sh "$PG_SH" psql "$PG_DIR" cat -c "SELECT pg_advisory_lock(20556, $alive)" -c "SELECT pg_sleep(3)" >/dev/null 2>&1 & } &&
	sleep 1 && px scan --db "$PG" -q lib &&
	test "$(pg_q cat "SELECT state FROM scans WHERE roots = '\''x'\''")" = killed &&
	test "$(pg_q cat "SELECT state FROM scans WHERE roots = '\''y'\''")" = running
'

test_expect_success 'a read-only role reads the catalog and exports it for KPhotoAlbum; it cannot scan' '
	pg_q cat "CREATE ROLE viewer LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO viewer" &&
	RO=$(echo "$PG" | sed "s|//postgres@|//viewer@|") &&
	px ls --db "$RO" >ro.out && px ls --db "$PG" >rw.out && diff -u rw.out ro.out &&
	test_expect_code 1 px export --db "$RO" --kphotoalbum lib 2>err &&
	grep -q "latin1.jpg.* to KPhotoAlbum: its name is not UTF-8 text" err &&
	test -s lib/exif-info.db &&
	grep -q "<image .*file=\"a/img1.jpg\"" lib/index.xml && md5sum lib/index.xml >ro.md5 &&
	test_expect_code 1 px export --db "$PG" --kphotoalbum lib 2>err && md5sum -c ro.md5 &&
	test_expect_code 2 px scan --db "$RO" lib 2>err && grep -q "permission denied" err
'

test_expect_success 'a newer schema and a foreign database are refused' '
	pg_q cat "UPDATE photoidx_catalog SET schema_version = 99" &&
	test_expect_code 2 px ls --db "$PG" 2>err && grep -q "schema version 99, newer than this photoidx" err &&
	test_expect_code 2 px scan --db "$PG" lib 2>err && grep -q "newer than this photoidx" err &&
	pg_q cat "UPDATE photoidx_catalog SET schema_version = 1" &&
	OTHER=$(pg_db other) && pg_q other "CREATE TABLE accounts (id int)" &&
	test_expect_code 2 px scan --db "$OTHER" lib 2>err && grep -q "is not a photoidx catalog" err &&
	test "$(pg_q other "SELECT count(*) FROM pg_tables WHERE schemaname = '\''public'\''")" = 1 &&
	pg_q other "CREATE DATABASE latin ENCODING '\''LATIN1'\'' TEMPLATE template0 LC_COLLATE '\''C'\'' LC_CTYPE '\''C'\''" &&
	test_expect_code 2 px scan --db "$PG_URI/latin" lib 2>err && grep -q "encoding is LATIN1, not UTF8" err
'

test_expect_success 'the password of a URI is not shown in messages' '
	for c in ls status "scan lib" "verify lib"; do
		test_expect_code 2 px $c --db "postgresql://postgres:sekrit@127.0.0.1:1/cat" >out 2>err &&
		grep -q "postgresql://postgres@127.0.0.1:1/cat" err && ! grep -q sekrit err out || return 1
	done &&
	px status --db "$(echo "$PG" | sed "s|//postgres@|//postgres:sekrit@|")" --json >s.json &&
	test "$(jq -r .catalog s.json)" = "$PG"
'

test_done
