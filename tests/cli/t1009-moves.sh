#!/bin/sh
# Moves and copies: a folder renamed or moved within the file system keeps
# every record without a byte read; a file moved to another file system is
# recognised by its MD5 and keeps its record; a copy is a file of its own;
# a file that vanished from an unmounted disk is not taken for a move.
# The second file system is a tmpfs mounted here (root only).
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a library scanned once' '
	mkdir -p lib/2023/party lib/2023/trip &&
	for i in 1 2 3; do mkfix jpeg lib/2023/party/p$i.jpg --seed $i --make Canon --date "2023:06:0$i 20:00:00"; done &&
	for i in 1 2; do head -c 20000 /dev/urandom >lib/2023/trip/t$i.raw; done &&
	age lib && px scan --db "$DB" -q lib &&
	test "$(q "select count(*) from files where state = '\''ok'\''")" = 5
'

test_expect_success 'a folder renamed: every record kept, a moved entry each, no byte read' '
	ids=$(q "select group_concat(cast(id as text)) from (select id from file_info where dir like '\''%/party'\'' order by id) as s") &&
	seq0=$(q "select max(seq) from changes") &&
	mv lib/2023/party lib/2023/birthday &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq -c "[.moved, .new, .missing, .bytes_read]" s.json)" = "[3,0,0,0]" &&
	test "$(q "select group_concat(cast(id as text)) from (select id from file_info where dir like '\''%/birthday'\'' order by id) as s")" = "$ids" &&
	test "$(q "select count(*) from changes where seq > $seq0 and kind = '\''moved'\'' and old_path like '\''%/party/p%'\'' and new_path like '\''%/birthday/p%'\''")" = 3 &&
	test "$(q "select count(*) from file_info where make = '\''Canon'\'' and dir like '\''%/birthday'\''")" = 3
'

test_expect_success 'a copy is a file of its own that shares the hash' '
	cp lib/2023/trip/t1.raw lib/2023/trip/t1-copy.raw && age lib/2023/trip/t1-copy.raw &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq -c "[.new, .moved]" s.json)" = "[1,0]" &&
	test "$(q "select count(distinct id) || '\''/'\'' || count(distinct md5) from file_info where name like '\''t1%.raw'\''")" = 2/1
'

test_expect_success 'a file renamed and given a new mtime (a photo renamer) is recognised by its MD5' '
	id=$(q "select id from file_info where name = '\''p3.jpg'\''") &&
	mv lib/2023/birthday/p3.jpg lib/2023/birthday/2023-06-03.jpg && touch -d "3 days ago" lib/2023/birthday/2023-06-03.jpg &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq -c "[.moved, .new, .missing]" s.json)" = "[1,0,0]" &&
	test "$(q "select id from file_info where name = '\''2023-06-03.jpg'\''")" = "$id"
'

test_expect_success 'a rename and a copy of the same file in one scan: the rename keeps the record' '
	mkdir -p race/b race/a && i=0 && while [ $i -lt 2000 ]; do mkdir race/b/d$i; i=$((i + 1)); done &&
	head -c 100000 /dev/urandom >race/a/x.jpg && age race &&
	px scan --db race.db -q race &&
	id=$(qdb race.db "select id from file_info where name = '\''x.jpg'\''") &&
	mv race/a/x.jpg race/a/y.jpg && cp race/a/y.jpg race/b/x.jpg &&
	px scan --db race.db --json race >s.json &&
	test "$(jq -c "[.moved, .new, .missing]" s.json)" = "[1,1,0]" &&
	test "$(qdb race.db "select id from file_info where path = '\''$TRASH/race/a/y.jpg'\''")" = "$id" &&
	test "$(qdb race.db "select count(*) from file_info where path = '\''$TRASH/race/b/x.jpg'\'' and id <> $id")" = 1
'

if [ "$(id -u)" != 0 ] || ! mkdir other || ! mount -t tmpfs -o size=8m photoidx-test other 2>/dev/null; then
	test_skip 'a file moved to another file system keeps its record (by MD5)' 'needs root to mount a tmpfs'
	test_done
fi
trap 'umount "$TRASH/other" "$TRASH/disk" 2>/dev/null; cleanup' EXIT

test_expect_success 'a file moved to another file system keeps its record (by MD5), read once' '
	id=$(q "select id from file_info where name = '\''p2.jpg'\''") &&
	size=$(stat -c %s lib/2023/birthday/p2.jpg) &&
	mv lib/2023/birthday/p2.jpg other/p2.jpg &&
	px scan --db "$DB" --json lib other >s.json &&
	test "$(jq -c "[.moved, .new, .missing, .bytes_read]" s.json)" = "[1,0,0,$size]" &&
	test "$(q "select id || state from file_info where path = '\''$TRASH/other/p2.jpg'\''")" = "${id}ok" &&
	test "$(q "select dev from files where id = $id")" = "$(stat -c %d other/p2.jpg)" &&
	test "$(q "select kind || '\''|'\'' || hex(old_path) from changes where file_id = $id order by seq desc limit 1")" = "moved|$(hexof "$TRASH/lib/2023/birthday/p2.jpg")" &&
	test "$(q "select make from file_info where id = $id")" = Canon
'

test_expect_success 'moved back the other way, in separate scans: missing first, then moved' '
	id=$(q "select id from file_info where name = '\''p2.jpg'\''") &&
	echo stays >other/stays.txt && age other/stays.txt &&
	mv other/p2.jpg lib/p2.jpg &&
	px scan --db "$DB" --json other >s.json && test "$(jq .missing s.json)" = 1 &&
	px scan --db "$DB" --json lib >s.json && test "$(jq -c "[.moved, .new]" s.json)" = "[1,0]" &&
	test "$(q "select id || state from file_info where path = '\''$TRASH/lib/p2.jpg'\''")" = "${id}ok" &&
	test "$(q "select group_concat(kind) from (select kind from changes where file_id = $id order by seq) as s")" = added,moved,moved,missing,moved &&
	test "$(jq .missing s.json)" = 0
'

test_expect_success 'two copies appear where one file went: one takes the record, one is new' '
	id=$(q "select id from file_info where name = '\''t2.raw'\''") &&
	cp lib/2023/trip/t2.raw other/t2-a.raw && cp lib/2023/trip/t2.raw other/t2-b.raw && rm lib/2023/trip/t2.raw &&
	px scan --db "$DB" --json lib other >s.json &&
	test "$(jq -c "[.moved, .new, .missing]" s.json)" = "[1,1,0]" &&
	test "$(q "select count(*) from file_info where name like '\''t2-%'\'' and id = $id")" = 1 &&
	test "$(q "select count(*) from file_info where name like '\''t2%'\'' and state = '\''ok'\''")" = 2
'

# (which of m7.raw and its copy takes m7's row depends on which is read
# first, as for two copies of one file in any scan)
test_expect_success 'three hundred files moved to another file system in one scan (looked up in sets), one also copied' '
	mkdir -p lib/many && i=0 &&
	while [ $i -lt 300 ]; do head -c 1500 /dev/urandom >lib/many/m$i.raw; i=$((i + 1)); done &&
	age lib/many && px scan --db "$DB" -q lib &&
	ids=$(q "select group_concat(cast(id as text)) from (select id from file_info where dir = '\''$TRASH/lib/many'\'' order by id) as s") &&
	mkdir other/many && cp lib/many/* other/many/ && cp lib/many/m7.raw other/many/m7-again.raw &&
	rm -r lib/many && age other/many &&
	px scan --db "$DB" --json lib other >s.json &&
	test "$(jq -c "[.moved, .new, .missing]" s.json)" = "[300,1,0]" &&
	test "$(q "select count(*) from file_info where dir = '\''$TRASH/other/many'\''")" = 301 &&
	test "$(q "select group_concat(cast(id as text)) from (select id from file_info where dir = '\''$TRASH/other/many'\''
		and id in ($ids) order by id) as s")" = "$ids" &&
	rm -r other/many && px scan --db "$DB" -q other
'

test_expect_success 'files of an unmounted disk are not taken for moved when copies turn up elsewhere' '
	cp -p other/t2-a.raw other/keep.raw && px scan --db "$DB" -q other &&
	id=$(q "select id from file_info where name = '\''keep.raw'\''") &&
	mkdir -p lib/imported && cp other/keep.raw lib/imported/keep.raw && age lib/imported &&
	umount other &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq -c "[.moved, .new]" s.json)" = "[0,1]" &&
	test "$(q "select hex(path) from file_info where id = $id" | unhex)" = "$TRASH/other/keep.raw"
'

test_expect_success 'a copy does not take the record of a file on a disk that was unmounted, though another took its device number' '
	mkdir -p disk && mount -t tmpfs -o size=4m photoidx-test disk && mkdir disk/photos &&
	head -c 5000 /dev/urandom >disk/photos/x.jpg && cp disk/photos/x.jpg saved.jpg && age disk &&
	px scan --db "$DB" -q disk &&
	id=$(q "select id from file_info where name = '\''x.jpg'\''") &&
	dev=$(stat -c %d disk) && umount disk &&
	mount -t tmpfs -o size=4m photoidx-test disk &&
	if [ "$(stat -c %d disk)" != "$dev" ]; then echo "the remount got another device number: nothing to test"; umount disk; exit 0; fi &&
	mkdir -p lib/home && cp saved.jpg lib/home/x.jpg && age lib/home &&
	px scan --db "$DB" --json lib >s.json &&
	umount disk &&
	test "$(jq -c "[.moved, .new]" s.json)" = "[0,1]" &&
	test "$(q "select hex(path) from file_info where id = $id" | unhex)" = "$TRASH/disk/photos/x.jpg"
'

test_expect_success 'empty files are never paired by content' '
	: >lib/empty1 && age lib/empty1 && px scan --db "$DB" -q lib &&
	rm lib/empty1 && : >lib/2023/empty2 && age lib/2023/empty2 &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq -c "[.moved, .new, .missing]" s.json)" = "[0,1,1]"
'

test_sqlite_only 'integrity_check is a PRAGMA of the SQLite file'
test_expect_success 'the catalog stays sound' '
	sound
'

test_done
