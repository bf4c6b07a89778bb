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
# the PostgreSQL schema version this photoidx makes: its last migration
PG_VERSION=$(ls "$REPO"/schema/pg/[0-9]*.sql | wc -l)

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
	pg_q cat "UPDATE photoidx_catalog SET schema_version = $PG_VERSION" &&
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

# schema/pg/0002 (issue 25): the views' path, name, dir and rel_path are
# text as on SQLite (a name not UTF-8 in the display form ls --json
# prints), the exact bytes in *_bytes
test_expect_success 'file_info: path, name, dir, rel_path are text as on SQLite, *_bytes the bytes, a name not UTF-8 as ls --json shows it' '
	mkfix jpeg "lib/b/$(printf '\''odd\\\200\302\205\303\251\t\033\177\355\240\200\360\237\230\200\303.jpg'\'')" --seed 90 &&
	age lib && px scan --db "$DB" -q lib && px scan --db "$PG" -q lib &&
	present="state NOT IN ('\''missing'\'', '\''offline'\'')" &&
	q "SELECT path, name, dir, rel_path FROM file_info WHERE $present AND typeof(name) = '\''text'\''" | sort >text-lite.txt &&
	pg_q cat "SELECT path, name, dir, rel_path FROM file_info WHERE $present AND name_text IS NOT NULL" | sort >text-pg.txt &&
	test "$(wc -l <text-lite.txt)" -ge 8 && diff -u text-lite.txt text-pg.txt &&
	q "SELECT lower(hex(path)) || '\'' '\'' || lower(hex(name)) || '\'' '\'' || lower(hex(dir)) || '\'' '\'' ||
	   lower(hex(rel_path)) FROM file_info WHERE $present" | sort >text-lite.hex &&
	pg_q cat "SELECT encode(path_bytes, '\''hex'\'') || '\'' '\'' || encode(name_bytes, '\''hex'\'') || '\'' '\'' ||
	   encode(dir_bytes, '\''hex'\'') || '\'' '\'' || encode(rel_path_bytes, '\''hex'\'') FROM file_info
	   WHERE $present" | sort >text-pg.hex &&
	test "$(wc -l <text-pg.hex)" -ge 10 && diff -u text-lite.hex text-pg.hex &&
	px ls --db "$DB" --json | jq -c ".[] | [.path, .name, .dir, .rel_path]" | sort >text-lite.json &&
	pg_q cat "SELECT json_build_array(path, name, dir, rel_path) FROM file_info WHERE $present" | jq -c . | sort >text-pg.json &&
	diff -u text-lite.json text-pg.json && grep -q "odd" text-pg.json &&
	test "$(pg_q cat "SELECT name FROM file_info WHERE name_bytes = '\''\\xfffe206c6174696e312e6a7067'\''")" = "\\xff\\xfe latin1.jpg" &&
	test "$(pg_q cat "SELECT count(*) FROM photos WHERE name LIKE '\''%latin1.jpg'\'' AND path LIKE '\''%/lib/b/%'\''")" = 1 &&
	test "$(pg_q cat "SELECT count(*) FROM duplicates d JOIN file_info i USING (id)
	                  WHERE d.path = i.path AND d.path_bytes = i.path_bytes AND d.volume_bytes = i.volume_bytes")" = \
	     "$(pg_q cat "SELECT count(*) FROM duplicates")"
'

test_expect_success 'the README'\''s queries run as written on both and give the same rows' '
	mkdir readme &&
	mkfix jpeg readme/c1.jpg --make Canon --model "Canon EOS 5D" --date "2020:01:01 10:00:00" --seed 91 &&
	mkfix jpeg readme/c2.jpg --make Canon --model "Canon EOS R" --date "2021:01:01 10:00:00" --seed 92 &&
	mkfix jpeg readme/n.jpg --make NIKON --seed 93 &&
	head -c 300 readme/c1.jpg >readme/broken.jpg && age readme &&
	PGR=$(pg_db readme) &&
	test_expect_code 1 px scan --db "$PGR" -q readme 2>/dev/null &&
	test_expect_code 1 px scan --db readme.db -q readme 2>/dev/null &&
	sed -n "s/^  \"\(SELECT .*\)\"$/\1/p" "$REPO/README.md" >queries && test "$(wc -l <queries)" -ge 2 &&
	while read -r sql; do
		sqlite3 readme.db "$sql" | sort >lite.out && pg_q readme "$sql" | sort >pg.out &&
		test -s pg.out && diff -u lite.out pg.out || return 1
	done <queries
'

# random hex does not compress: 16 components of 200 bytes make a
# directory 3.2 KB long, beyond a btree entry's 2704 bytes (which failed
# the whole scan before schema/pg/0002), and a name of 255 bytes
test_expect_success 'a directory path over 3 KB and a name of 255 bytes are indexed on both, the same' '
	d=deep/lib && i=0 &&
	while [ $i -lt 16 ]; do d=$d/$(od -An -N100 -tx1 /dev/urandom | tr -d " \n"); i=$((i + 1)); done &&
	mkdir -p "$d" && mkfix jpeg "$d/deep.jpg" --seed 94 && mkfix jpeg "$d/$(printf "%0251d" 0).jpg" --seed 95 &&
	age deep && test "$(printf "%s" "$TRASH/$d" | wc -c)" -gt 3200 &&
	PGD=$(pg_db deep) && px scan --db "$PGD" -q deep && px scan --db deep.db -q deep &&
	catalog_of deep.db >lite.csv && catalog_of "$PGD" >pg.csv && test "$(wc -l <pg.csv)" = 2 &&
	diff -u lite.csv pg.csv &&
	test "$(pg_q deep "SELECT max(length(rel_path)) FROM dirs")" -gt 3200 &&
	touch "$d" && px scan --db "$PGD" --json deep >s.json &&
	test "$(jq .unchanged s.json)" = 2 && test "$(jq .new s.json)" = 0 &&
	test "$(pg_q deep "SELECT count(*) FROM dirs")" = "$(q_deep=$(sqlite3 deep.db "SELECT count(*) FROM dirs") && echo "$q_deep")" &&
	pg_q deep "SET enable_seqscan = off; EXPLAIN SELECT id FROM dirs WHERE volume_id = 1
	           AND sha256(rel_path) = sha256('\''\\x00'\''::bytea) AND rel_path = '\''\\x00'\''" >plan &&
	grep -q "dirs_by_volume_path" plan &&
	pg_q deep "SET enable_seqscan = off; EXPLAIN SELECT id FROM dirs WHERE
	           substring(path FROM 1 FOR 1024) = substring('\''\\x00'\''::bytea FROM 1 FOR 1024)" >plan &&
	grep -q "dirs_by_path" plan
'

# a catalog photoidx made at PostgreSQL schema version 1 (schema/pg/0001
# by hand, its rows those a scan wrote into SQLite, whose tables have the
# same columns first): upgraded in place by the next writer
test_expect_success 'a catalog of PostgreSQL schema version 1 is upgraded in place: every row kept, then read and written' '
	mkdir up && mkfix jpeg up/a.jpg --seed 96 && mkfix jpeg "up/$(printf "\377 b.jpg")" --seed 97 &&
	cp up/a.jpg up/c.jpg && age up && px scan --db up.db -q up &&
	PGU=$(pg_db up) && pg_q up <"$REPO/schema/pg/0001-catalog.sql" >/dev/null &&
	pg_q up "INSERT INTO photoidx_catalog (application, schema_version) VALUES ('\''photoidx'\'', 1)" &&
	for t in volumes scans roots dirs files meta changes; do
		# (the columns SQLite added after PostgreSQL version 1, at the
		# end of their tables, left out: schema 0009)
		cols=$(sqlite3 up.db "SELECT group_concat(name, '\'', '\'') FROM pragma_table_info('\''$t'\'')
			WHERE NOT ('\''$t'\'' = '\''meta'\'' AND cid >= (SELECT cid FROM pragma_table_info('\''meta'\'') WHERE name = '\''rating'\''))
			AND NOT ('\''$t'\'' = '\''changes'\'' AND name IN ('\''old_keywords'\'', '\''new_keywords'\'', '\''old_rating'\'', '\''new_rating'\''))") &&
		sqlite3 up.db ".mode insert $t" "SELECT $cols FROM $t" || return 1
	done | sed "s/X'\''\([0-9A-Fa-f]*\)'\''/'\''\\\\x\1'\''::bytea/g" >rows.sql &&
	pg_q up <rows.sql >/dev/null &&
	for t in volumes scans roots dirs files; do
		pg_q up "SELECT setval(pg_get_serial_sequence('\''$t'\'', '\''id'\''), max(id)) FROM $t" >/dev/null || return 1
	done &&
	rows="SELECT '\''f'\'', id, dir_id, encode(name, '\''hex'\''), encode(md5, '\''hex'\''), size, mtime_ns FROM files
	      UNION ALL SELECT '\''d'\'', id, parent_id, encode(rel_path, '\''hex'\''), encode(path, '\''hex'\''), volume_id, 0 FROM dirs
	      UNION ALL SELECT '\''r'\'', id, volume_id, encode(rel_path, '\''hex'\''), encode(path, '\''hex'\''), 0, 0 FROM roots
	      UNION ALL SELECT '\''m'\'', file_id, width, date_taken, make, 0, 0 FROM meta
	      UNION ALL SELECT '\''c'\'', seq, file_id, kind, encode(new_md5, '\''hex'\''), 0, 0 FROM changes" &&
	pg_q up "$rows UNION ALL SELECT '\''v'\'', id, 0, kind, encode(convert_to(ident, '\''UTF8'\''), '\''hex'\''), dev, 0
	         FROM volumes ORDER BY 1, 2" >before &&
	test "$(grep -c "^f|" before)" = 3 &&
	test_expect_code 2 px ls --db "$PGU" 2>err && grep -q "schema version 1; run .photoidx scan. once" err &&
	px scan --db "$PGU" --json up >s.json &&
	test "$(jq .unchanged s.json)" = 3 && test "$(jq ".new + .changed + .moved + .missing" s.json)" = 0 &&
	test "$(pg_q up "SELECT schema_version FROM photoidx_catalog")" = "$PG_VERSION" &&
	pg_q up "$rows UNION ALL SELECT '\''v'\'', id, 0, kind, encode(ident, '\''hex'\''), dev, 0
	         FROM volumes ORDER BY 1, 2" >after &&
	diff -u before after &&
	px scan --db up.db -q up && catalog_of up.db >lite.csv && catalog_of "$PGU" >pg.csv && diff -u lite.csv pg.csv &&
	mkdir up/new && mkfix jpeg up/new/d.jpg --seed 98 && age up &&
	px scan --db "$PGU" -q up && px scan --db up.db -q up &&
	catalog_of up.db >lite.csv && catalog_of "$PGU" >pg.csv && test "$(wc -l <pg.csv)" = 4 && diff -u lite.csv pg.csv &&
	test "$(pg_q up "SELECT name FROM file_info WHERE name_bytes = '\''\\xff20622e6a7067'\''")" = "\\xff b.jpg"
'

# a volume's names as the kernel and the file system give them: a tmpfs
# mounted from a source that is not UTF-8 (its identity holds the
# source), an ext4 file system labelled in Latin-1
can_mount=
if [ "$(id -u)" = 0 ] && mkdir mnt-probe && mount -t tmpfs probe mnt-probe 2>/dev/null; then
	umount mnt-probe && can_mount=1
fi
if [ -n "$can_mount" ]; then
	test_expect_success 'a mount source, an identity and a label not UTF-8 are stored exactly; volumes says the same on both' '
		mkdir -p vol/t vol/e && mount -t tmpfs "$(printf "src\377\376")" vol/t &&
		mkfix jpeg vol/t/x.jpg --seed 99 &&
		if truncate -s 32M lbl.img && mkfs.ext4 -q -F -L "$(printf "\377\376lbl")" lbl.img &&
		   l=$(losetup -f --show lbl.img 2>/dev/null); then
			echo "$l" >loop && mount "$l" vol/e && mkfix jpeg vol/e/y.jpg --seed 100
		fi &&
		age vol/t vol/e &&
		PGV=$(pg_db vol) && px scan --db "$PGV" -q vol/t vol/e && px scan --db vol.db -q vol/t vol/e &&
		px volumes --db vol.db >lite.out && px volumes --db "$PGV" >pg.out && diff -u lite.out pg.out &&
		px volumes --db vol.db --json | jq -c "del(.[].first_seen_at, .[].last_seen_at, .[].last_scan_at)" >lite.json &&
		px volumes --db "$PGV" --json | jq -c "del(.[].first_seen_at, .[].last_seen_at, .[].last_scan_at)" >pg.json &&
		diff -u lite.json pg.json &&
		catalog_of vol.db >lite.csv && catalog_of "$PGV" | jq -cS "del(.volume_b64, .volume_label_b64)" >pg.csv &&
		diff -u lite.csv pg.csv &&
		test "$(pg_q vol "SELECT encode(source, '\''hex'\'') FROM volumes WHERE kind = '\''mount'\''")" = 737263fffe &&
		test "$(pg_q vol "SELECT encode(ident, '\''hex'\'') FROM volumes WHERE kind = '\''mount'\''")" = \
		     "$(printf "tmpfs:src\377\376:%s" "$TRASH/vol/t" | od -An -tx1 | tr -d " \n")" &&
		test "$(pg_q vol "SELECT volume FROM file_info WHERE name = '\''x.jpg'\''")" = "tmpfs:src\\xff\\xfe:$TRASH/vol/t" &&
		test "$(pg_q vol "SELECT volume_bytes = ident FROM file_info JOIN volumes ON kind = '\''mount'\''
		                  WHERE name = '\''x.jpg'\''")" = t &&
		if [ -s loop ]; then
			test "$(pg_q vol "SELECT encode(label, '\''hex'\'') FROM volumes WHERE kind = '\''uuid'\''")" = fffe6c626c &&
			test "$(pg_q vol "SELECT volume_label FROM file_info WHERE name = '\''y.jpg'\''")" = "\\xff\\xfelbl" &&
			catalog_of "$PGV" | grep -q "\"volume_label_b64\":\"//5sYmw=\""
		fi
	'
	umount vol/e 2>/dev/null; umount vol/t 2>/dev/null
	[ -s loop ] && losetup -d "$(cat loop)" 2>/dev/null
else
	test_skip 'a mount source, an identity and a label not UTF-8 are stored exactly; volumes says the same on both' \
		'needs root and mount'
fi

test_done
