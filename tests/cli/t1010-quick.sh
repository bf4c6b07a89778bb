#!/bin/sh
# scan --quick, the mlocate rule: a directory whose device, inode, mtime
# and ctime are as last listed is not listed again.  What it finds (new,
# deleted, renamed files) and what it misses by design (a file edited in
# place), checked against a full scan.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a tree scanned once, directories old' '
	mkdir -p lib/2022/a/deep lib/2022/b lib/2023 &&
	for d in lib/2022/a lib/2022/a/deep lib/2022/b lib/2023; do
		for i in 1 2 3; do echo "$d $i" >$d/f$i.txt; done
	done &&
	age lib && px scan --db "$DB" -q lib &&
	test "$(q "select count(*) from files")" = 12
'

test_expect_success '--quick on an unchanged tree lists no directory and reads nothing' '
	command -v strace >/dev/null || { echo "strace missing"; exit 1; }
	ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" strace -f -y -e trace=getdents64 -o trace "$PHOTOIDX" scan --db "$DB" --quick --json lib >s.json &&
	test "$(jq -c "[.unchanged, .new, .bytes_read, .dirs]" s.json)" = "[12,0,0,6]" &&
	grep -q getdents64 trace && ! grep -q "getdents64([0-9]*<$TRASH" trace
'

test_expect_success '--quick finds a new file, deep in an unchanged tree' '
	echo new >lib/2022/a/deep/new.txt &&
	px scan --db "$DB" --quick --json lib >s.json &&
	test "$(jq -c "[.new, .unchanged]" s.json)" = "[1,12]" &&
	test "$(q "select count(*) from file_info where name = '\''new.txt'\''")" = 1
'

test_expect_success '--quick finds a deleted and a renamed file' '
	rm lib/2022/b/f1.txt && mv lib/2023/f2.txt lib/2023/g2.txt && find lib -type d -exec touch -d "2 days ago" {} + &&
	px scan --db "$DB" --quick --json lib >s.json &&
	test "$(jq -c "[.missing, .moved]" s.json)" = "[1,1]"
'

test_expect_success '--quick finds a new subdirectory and its files' '
	mkdir lib/2022/a/deep/deeper && echo x >lib/2022/a/deep/deeper/x.txt &&
	px scan --db "$DB" --quick --json lib >s.json &&
	test "$(jq .new s.json)" = 1
'

test_expect_success '--quick misses a file edited in place (documented); a full scan finds it' '
	age lib && px scan --db "$DB" -q lib &&
	echo "edited" >>lib/2022/b/f2.txt &&
	px scan --db "$DB" --quick --json lib >s.json &&
	test "$(jq .changed s.json)" = 0 &&
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq .changed s.json)" = 1 &&
	grep -q "misses a file edited in place" "$REPO/doc/photoidx.1" 2>/dev/null ||
	grep -q "edited in place" "$REPO/doc/photoidx.1"
'

test_expect_success '--quick reads a file flagged for a recheck' '
	age lib && px scan --db "$DB" -q lib &&
	echo racy >lib/2022/b/racy.txt && px scan --db "$DB" -q lib &&
	test "$(q "select recheck from files where name = '\''racy.txt'\''")" = 1 &&
	touch -d "2 days ago" lib/2022/b/racy.txt lib/2022/b &&
	px scan --db "$DB" -q lib &&
	echo "racy, written again" >lib/2022/b/racy.txt && touch -d "2 days ago" lib/2022/b/racy.txt &&
	q "update files set recheck = 1 where name = '\''racy.txt'\''" &&
	px scan --db "$DB" --quick --json lib >s.json &&
	test "$(jq .changed s.json)" = 1 &&
	test "$(q "select md5 from file_info where name = '\''racy.txt'\''")" = "$(md5sum <lib/2022/b/racy.txt | cut -c1-32)"
'

test_expect_success '--quick does not walk into a directory now excluded' '
	mkdir -p lib/2023/.thumbnails && echo t >lib/2023/.thumbnails/t.png && age lib &&
	px scan --db "$DB" -q --no-default-excludes lib &&
	test "$(q "select count(*) from file_info where name = '\''t.png'\'' and state = '\''ok'\''")" = 1 &&
	px scan --db "$DB" --quick --json lib >s.json &&
	test "$(jq .skipped s.json)" = 0
'

test_expect_success 'after --quick, the catalog equals a full scan of the same tree' '
	rm -rf lib/2023/.thumbnails && age lib && px scan --db "$DB" -q lib &&
	echo more >lib/2022/a/more.txt && mkdir lib/2024 && echo y >lib/2024/y.txt && rm lib/2022/a/f1.txt &&
	px scan --db "$DB" --quick -q lib &&
	catalog_cp "$DB" full.db &&
	px scan --db full.db --json lib >s.json &&
	test "$(jq -c "[.new, .changed, .moved, .missing]" s.json)" = "[0,0,0,0]" &&
	test "$(q "select group_concat(hex(path) || state, '\'','\'') from (select path, state from file_info order by path) as s")" = \
	     "$(qdb full.db "select group_concat(hex(path) || state, '\'','\'') from (select path, state from file_info order by path) as s")"
'

test_done
