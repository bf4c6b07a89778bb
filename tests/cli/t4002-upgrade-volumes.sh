#!/bin/sh
# The upgrade to volumes (schema 0005): a catalog written by the photoidx
# of the commit before that migration, built here from the repository's
# own history, is upgraded in place by the next scan.  Every row, path,
# MD5, state and change-log entry is kept; every directory and root is
# placed on the volume it is on; and no file is opened to do it.  Needs a
# git checkout (the old photoidx is built from it); skipped otherwise.
. "$(dirname "$0")/lib.sh"

if ! command -v git >/dev/null || ! git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
	echo "1..0 # SKIP not a git checkout: the photoidx before schema 0005 cannot be built"
	exit 0
fi
added=$(git -C "$REPO" log --diff-filter=A --format=%H -1 -- schema/0005-volumes.sql)
if [ -z "$added" ]; then
	echo "1..0 # SKIP schema/0005-volumes.sql is not committed yet: no older photoidx to build"
	exit 0
fi
unset PHOTOIDX_DB XDG_CONFIG_HOME
ASAN_OPTIONS=detect_leaks=0
export ASAN_OPTIONS

test_sqlite_only "the upgrade of a SQLite catalog written by the photoidx before schema 0005 (PRAGMA user_version 4), which had no PostgreSQL catalog"
test_expect_success 'setup: the photoidx of the commit before schema 0005, built from git' '
	old_build "$added^" &&
	test "$(ls old-src/schema/[0-9]*.sql | wc -l)" = 4
'

test_sqlite_only "the upgrade of a SQLite catalog written by the photoidx before schema 0005 (PRAGMA user_version 4), which had no PostgreSQL catalog"
test_expect_success 'setup: a library indexed by it, with a missing file, a move and a name that is not UTF-8' '
	mkdir -p lib/2023/trip lib/2024 &&
	for i in 1 2 3 4 5 6 7 8; do mkfix jpeg "lib/2023/trip/IMG_$i.jpg" --make Canon --date "2023:0$i:01 10:00:00"; done &&
	for i in 1 2 3 4; do mkfix jpeg "lib/2024/P$i.jpg" --make NIKON; done &&
	mkfix jpeg "lib/2024/caf$(printf "\351").jpg" &&
	echo gone >lib/2024/gone.txt &&
	age lib && "$OLD" scan -q --db "$DB" lib &&
	rm lib/2024/gone.txt && mv lib/2024/P4.jpg lib/2023/P4.jpg &&
	"$OLD" scan -q --db "$DB" lib &&
	test "$(q "pragma user_version")" = 4 &&
	q "select hex(path), md5, state, size from file_info order by id" >before.txt &&
	q "select seq, kind, hex(old_path), hex(new_path), hex(old_md5), hex(new_md5) from changes order by seq" >changes-before.txt &&
	test "$(wc -l <before.txt)" = 14 &&
	grep -q missing before.txt && grep -q "|moved|" changes-before.txt
'

test_sqlite_only "the upgrade of a SQLite catalog written by the photoidx before schema 0005 (PRAGMA user_version 4), which had no PostgreSQL catalog"
test_expect_success 'the next scan upgrades it without opening a file, and finds nothing new' '
	PIX_IO=threads strace -f -qq -e trace=openat,openat2 -o trace "$PHOTOIDX" scan --db "$DB" lib >out 2>err &&
	test "$(q "pragma user_version")" = "$(ls "$REPO"/schema/[0-9]*.sql | wc -l)" &&
	grep "0 new, 0 changed, 0 moved, 0 missing, 13 unchanged" out &&
	grep "read 0 B of file data" out &&
	! grep -E "lib/.*\.(jpg|txt)" trace
'

test_sqlite_only "the upgrade of a SQLite catalog written by the photoidx before schema 0005 (PRAGMA user_version 4), which had no PostgreSQL catalog"
test_expect_success 'every row, path, MD5 and state is kept' '
	q "select hex(path), md5, state, size from file_info order by id" >after.txt &&
	diff before.txt after.txt
'

test_sqlite_only "the upgrade of a SQLite catalog written by the photoidx before schema 0005 (PRAGMA user_version 4), which had no PostgreSQL catalog"
test_expect_success 'the change log is kept, seq numbers too, and goes on after them' '
	q "select seq, kind, hex(old_path), hex(new_path), hex(old_md5), hex(new_md5) from changes order by seq" >changes-after.txt &&
	diff changes-before.txt changes-after.txt &&
	mkfix jpeg lib/2024/new.jpg && age lib/2024/new.jpg &&
	px scan -q --db "$DB" lib &&
	last=$(tail -n 1 changes-before.txt | cut -d"|" -f1) &&
	test "$(q "select min(seq) from changes where seq > $last and kind = '"'"'added'"'"'")" -gt "$last"
'

test_sqlite_only "the upgrade of a SQLite catalog written by the photoidx before schema 0005 (PRAGMA user_version 4), which had no PostgreSQL catalog"
test_expect_success 'every directory and root is on a volume, with its path relative to it' '
	test "$(q "select count(*) from dirs where volume_id is null or rel_path is null")" = 0 &&
	test "$(q "select count(*) from roots where volume_id is null or rel_path is null")" = 0 &&
	test "$(q "select count(*) from file_info where rel_path is null or volume is null")" = 0 &&
	test "$(q "select count(*) from file_info where substr(path, -length(rel_path)) <> rel_path")" = 0 &&
	here=$(cd lib && pwd -P) &&
	test "$(q "select count(*) from file_info where path = '"'"'$here/2023/trip/IMG_1.jpg'"'"' and rel_path like '"'"'%2023/trip/IMG_1.jpg'"'"'")" = 1 &&
	q "pragma integrity_check" | grep -qx ok &&
	test -z "$(q "pragma foreign_key_check")"
'

test_done
