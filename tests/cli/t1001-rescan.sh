#!/bin/sh
# Rescans: an unchanged tree reads no file data (and opens no file), and
# edits, renames, deletions, additions and directory moves show up as
# changed, moved, missing and new, with the change log to match.
. "$(dirname "$0")/lib.sh"

count() {
	q "select count(*) from file_info where $1"
}

test_expect_success 'setup: library scanned once' '
	mkdir -p lib/a lib/b lib/c/d &&
	for i in 1 2 3 4 5; do mkfix jpeg lib/a/img$i.jpg --seed $i --make Canon --date "2020:01:0$i 10:00:00"; done &&
	mkfix jpeg lib/b/keep.jpg --seed 9 &&
	echo text >lib/c/d/notes.txt &&
	age lib &&
	px scan --db "$DB" -q lib &&
	test "$(count "state = '\''ok'\''")" = 7
'

test_expect_success 'an unchanged rescan reads 0 bytes and says so' '
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq .bytes_read s.json)" = 0 &&
	test "$(jq .unchanged s.json)" = 7 &&
	test "$(jq ".new + .changed + .moved + .missing" s.json)" = 0 &&
	px scan --db "$DB" lib >out &&
	grep -q "7 unchanged, 0 errors; read 0 B of file data" out
'

# (PIX_IO=threads: strace does not see the opens io_uring makes, so a run
# traced to prove what was not opened reads with blocking system calls)
test_expect_success 'an unchanged rescan opens none of the files (strace)' '
	if ! command -v strace >/dev/null; then echo "strace not installed: not checked"; exit 0; fi
	ASAN_OPTIONS=detect_leaks=0 PIX_IO=threads strace -f -qq -e trace=open,openat,openat2 -o trace "$PHOTOIDX" scan --db "$DB" -q lib &&
	! grep "$TRASH/lib/[abc]/.*[.]\(jpg\|txt\)" trace &&
	grep -q "O_DIRECTORY" trace
'

test_expect_success 'an unchanged rescan writes no change-log rows' '
	before=$(q "select count(*) from changes") &&
	px scan --db "$DB" -q lib &&
	test "$(q "select count(*) from changes")" = "$before"
'

test_expect_success 'edit, rename, delete and add between scans' '
	mkfix jpeg lib/a/img1.jpg --seed 100 --make Nikon --date "2021:05:05 05:05:05" &&
	touch -d "1 day ago" lib/a/img1.jpg &&
	mv lib/a/img2.jpg lib/b/renamed.jpg &&
	rm lib/a/img3.jpg &&
	mkfix jpeg lib/b/new.jpg --seed 101 && age lib/b/new.jpg &&
	seq_before=$(q "select max(seq) from changes") &&
	echo "$seq_before" >seq &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq -c "[.new, .changed, .moved, .missing, .unchanged]" s.json)" = "[1,1,1,1,4]"
'

test_expect_success 'the edited file has its new MD5 and metadata' '
	test "$(q "select md5 from file_info where name = '\''img1.jpg'\''")" = "$(md5sum <lib/a/img1.jpg | cut -c1-32)" &&
	test "$(q "select make || date_taken from file_info where name = '\''img1.jpg'\''")" = "Nikon2021-05-05T05:05:05"
'

test_expect_success 'the renamed file keeps its row, its MD5 and was not read' '
	test "$(q "select count(*) from file_info where name = '\''img2.jpg'\''")" = 0 &&
	test "$(q "select hex(path) from file_info where name = '\''renamed.jpg'\''" | unhex)" = "$TRASH/lib/b/renamed.jpg" &&
	test "$(q "select md5 from file_info where name = '\''renamed.jpg'\''")" = "$(md5sum <lib/b/renamed.jpg | cut -c1-32)" &&
	test "$(jq .bytes_read s.json)" = "$(($(stat -c %s lib/a/img1.jpg) + $(stat -c %s lib/b/new.jpg)))"
'

test_expect_success 'the deleted file is missing, not deleted' '
	test "$(q "select state || (case when missing_since > 0 then 1 else 0 end) from file_info where name = '\''img3.jpg'\''")" = missing1
'

test_expect_success 'the change log has one entry per change, old hash kept' '
	seq=$(cat seq) &&
	q -separator "|" "select kind, hex(old_path), hex(new_path),
		case when old_md5 is not null then 1 else 0 end, case when new_md5 is not null then 1 else 0 end
		from changes where seq > $seq order by kind" | unhex_cols 2 3 | sed "s#|$TRASH/#|#g" >actual &&
	cat >expect <<-\EOF_ &&
	added|||0|1
	changed|||1|1
	missing|||1|0
	moved|lib/a/img2.jpg|lib/b/renamed.jpg|1|0
	EOF_
	diff expect actual &&
	test "$(q "select count(*) from changes c join file_info f on f.id = c.file_id
		where c.seq > $seq and c.kind = '\''changed'\'' and f.name = '\''img1.jpg'\'' and lower(hex(c.new_md5)) = f.md5
		and c.old_md5 <> c.new_md5")" = 1
'

test_expect_success 'a rescan after the changes is unchanged again' '
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq .bytes_read s.json)" = 0 &&
	test "$(jq .missing s.json)" = 0
'

test_expect_success 'a renamed directory: every file moved, none read' '
	mv lib/c lib/c-renamed &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq -c "[.moved, .bytes_read, .missing, .new]" s.json)" = "[1,0,0,0]" &&
	test "$(q "select hex(path) from file_info where name = '\''notes.txt'\''" | unhex)" = "$TRASH/lib/c-renamed/d/notes.txt" &&
	test "$(q "select state from dirs where path = '\''$TRASH/lib/c'\''")" = missing
'

test_expect_success 'a folder moved into another keeps its records' '
	mkdir lib/b/sub && mv lib/a lib/b/sub/a &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq -c "[.moved, .bytes_read, .missing]" s.json)" = "[3,0,0]" &&
	test "$(count "path like '\''$TRASH/lib/b/sub/a/img%'\'' and state = '\''ok'\''")" = 3
'

test_expect_success 'a deleted directory tree: its files are missing' '
	rm -r lib/c-renamed &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq .missing s.json)" = 1 &&
	test "$(q "select state from file_info where name = '\''notes.txt'\''")" = missing
'

test_expect_success 'a new file reusing a deleted file'\''s inode is new, not a move' '
	rm lib/b/keep.jpg &&
	echo "different content" >lib/b/other.txt && age lib/b/other.txt &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq -c "[.new, .missing, .moved]" s.json)" = "[1,1,0]" &&
	test "$(q "select state from file_info where name = '\''keep.jpg'\''")" = missing
'

test_expect_success 'a missing file that comes back is restored (same row)' '
	id=$(q "select id from file_info where name = '\''img3.jpg'\''") &&
	mkdir -p lib/a && cp -p lib/b/sub/a/img4.jpg lib/a/img3.jpg &&
	px scan --db "$DB" -q lib &&
	test "$(q "select id || state from file_info where name = '\''img3.jpg'\''")" = "${id}ok" &&
	test "$(q "select count(*) from changes where file_id = $id and kind in ('\''changed'\'', '\''restored'\'')")" = 1
'

test_expect_success 'a hard link is a second file with the same MD5' '
	ln lib/b/new.jpg lib/b/new-link.jpg &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq .new s.json)" = 1 && test "$(jq .moved s.json)" = 0 &&
	test "$(q "select count(distinct id) || '\'''\'' || count(distinct md5) from file_info where name like '\''new%.jpg'\''")" = 21
'

test_expect_success 'a file modified within two seconds of its read is read again next scan' '
	echo fresh >lib/b/fresh.txt &&
	px scan --db "$DB" -q lib &&
	test "$(q "select recheck from files where name = '\''fresh.txt'\''")" = 1 &&
	sleep 2.2 &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq .bytes_read s.json)" = 6 &&
	test "$(jq .changed s.json)" = 0 &&
	test "$(q "select recheck from files where name = '\''fresh.txt'\''")" = 0 &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq .bytes_read s.json)" = 0
'

test_expect_success 'a write that keeps size and mtime but changes ctime is read' '
	f=lib/b/renamed.jpg &&
	m=$(stat -c %y "$f") && printf "X" | dd of="$f" bs=1 seek=100 conv=notrunc 2>/dev/null && touch -d "$m" "$f" &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq .changed s.json)" = 1 &&
	test "$(q "select md5 from file_info where name = '\''renamed.jpg'\''")" = "$(md5sum <"$f" | cut -c1-32)"
'

test_expect_success 'an empty root (an unmounted disk) does not mark its files missing' '
	mkdir -p disk && mkfix jpeg disk/photo.jpg && age disk &&
	px scan --db "$DB" -q disk &&
	mv disk/photo.jpg . &&
	test_expect_code 1 px scan --db "$DB" disk 2>err &&
	grep -q "is empty but the catalog has files under it" err &&
	test "$(q "select state from file_info where name = '\''photo.jpg'\''")" = ok
'

test_expect_success 'a scan of another root leaves the first root'\''s files alone' '
	mkdir -p other && echo other >other/o.txt && age other &&
	before=$(q "select count(*) from file_info where state = '\''ok'\''") &&
	px scan --db "$DB" --json other >s.json &&
	test "$(jq -c "[.new, .missing]" s.json)" = "[1,0]" &&
	test "$(q "select count(*) from file_info where state = '\''ok'\''")" = $((before + 1)) &&
	rm -r other &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq .missing s.json)" = 0 &&
	test "$(q "select state from file_info where name = '\''o.txt'\''")" = ok
'

test_expect_success 'the catalog stays sound' '
	sound &&
	test "$(q "select count(*) from changes c left join files f on f.id = c.file_id where f.id is null")" = 0
'

test_done
