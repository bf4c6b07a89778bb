#!/bin/sh
# The catalog file: created with the current schema, refused when it is
# newer than this photoidx or not a photoidx catalog at all, and every
# table, view and column documented in doc/schema.md.
. "$(dirname "$0")/lib.sh"

n_migrations=$(ls "$REPO"/schema/[0-9][0-9][0-9][0-9]-*.sql | wc -l)
# PostgreSQL's catalog has migrations of its own (schema/pg), its version in
# photoidx_catalog
if backend_is pg; then n_migrations=$(ls "$REPO"/schema/pg/[0-9][0-9][0-9][0-9]-*.sql | wc -l); fi

# schema_version CATALOG: the migrations applied to it
schema_version() {
	if backend_is sqlite; then
		qdb "$1" "pragma user_version"
	else
		qdb "$1" "select schema_version from photoidx_catalog where application = 'photoidx'"
	fi
}

# has_index CATALOG NAME: 1 if CATALOG has the index NAME, else 0
has_index() {
	if backend_is sqlite; then
		qdb "$1" "select count(*) from sqlite_schema where name = '$2'"
	else
		qdb "$1" "select count(*) from pg_indexes where schemaname = current_schema() and indexname = '$2'"
	fi
}

test_expect_success 'setup' '
	mkdir -p lib && echo x >lib/a.txt && age lib
'

test_expect_success 'a new catalog has every migration applied and our application id' '
	px scan --db "$DB" -q lib &&
	test "$(schema_version "$DB")" = "$n_migrations" &&
	if backend_is sqlite; then test "$(q "pragma application_id")" = "$((0x50495843))"; fi
'

test_expect_success 'a catalog newer than this photoidx is refused, untouched (exit 2)' '
	catalog_cp "$DB" newer.db &&
	if backend_is sqlite; then
		sqlite3 newer.db "pragma user_version = 999" && md5sum newer.db >before
	else
		qdb newer.db "update photoidx_catalog set schema_version = 999" &&
		qdb newer.db "select count(*) from scans" >scans.before
	fi &&
	test_expect_code 2 px scan --db newer.db lib 2>err &&
	grep -q "schema version 999, newer than this photoidx understands ($n_migrations)" err &&
	if backend_is sqlite; then
		md5sum -c --quiet before
	else
		test "$(schema_version newer.db)" = 999 && qdb newer.db "select count(*) from scans" | diff scans.before -
	fi
'

test_sqlite_only 'a version 1 catalog is a SQLite file of an older photoidx (schema/0001-init.sql, PRAGMA user_version)'
test_expect_success 'a version 1 catalog is upgraded by the next scan, its rows kept' '
	{ cat "$REPO/schema/0001-init.sql"; echo "pragma application_id = $((0x50495843)); pragma user_version = 1;"; } |
		sqlite3 v1.db &&
	now=$(date +%s) &&
	sqlite3 v1.db "insert into dirs (id, path, scanned_at) values (1, '\''$TRASH/lib'\'', $now);
		insert into files (dir_id, name, dev, ino, mode, size, mtime_ns, ctime_ns, md5, state, first_seen_at, changed_at)
		values (1, \"a.txt\", $(stat -c "%d, %i" lib/a.txt), 33188,
		        2, 0, 0, x'\''00'\'', '\''ok'\'', 1, 1)" &&
	test_expect_code 2 px changes --db v1.db 2>err && grep -q "schema version 1; run .photoidx scan. once to upgrade it" err &&
	px scan --db v1.db -q lib &&
	test "$(sqlite3 v1.db "pragma user_version")" = "$n_migrations" &&
	test "$(sqlite3 v1.db "select id || '\'' '\'' || md5 || '\'' '\'' || first_seen_at || '\'' '\'' || coalesce(verify_state, '\''-'\'') from file_info")" = \
	     "1 $(md5sum <lib/a.txt | cut -c1-32) 1 -" &&
	test "$(sqlite3 v1.db "pragma integrity_check")" = ok
'

test_sqlite_only 'a first import into an empty SQLite catalog builds its MD5 index at the end; PostgreSQL keeps the index, whose inserts do not slow a COPY the same way (design.md, store)'
test_expect_success 'a first import indexes by MD5 at its end; one killed leaves it to the next writer' '
	test "$(has_index "$DB" files_by_md5)" = 1 &&
	mkdir -p slow && i=0 && while [ $i -lt 20 ]; do head -c 100000 /dev/urandom >slow/f$i; i=$((i + 1)); done && age slow
	"$PHOTOIDX" scan --db first.db -q --readers 1 --limit-rate 500K slow &
	pid=$!
	i=0; until [ "$(qdb first.db "select count(*) from files" 2>/dev/null)" -ge 2 ] 2>/dev/null || [ $i -gt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -KILL $pid; wait $pid 2>/dev/null || true
	test "$(has_index first.db files_by_md5)" = 0 &&
	px scan --db first.db -q slow &&
	test "$(has_index first.db files_by_md5)" = 1 &&
	sound first.db
'

test_sqlite_only 'the writer of a SQLite catalog does not enforce foreign keys; the tests check them (PostgreSQL enforces its own)'
test_expect_success 'sound (lib.sh) finds a row that names a file that is not there' '
	cp "$DB" orphan.db &&
	sound orphan.db &&
	qdb orphan.db "insert into meta (file_id, make) values ((select max(id) from files) + 1000, '\''ghost'\'')" &&
	! sound orphan.db
'

test_sqlite_only 'another SQLite database file at the --db path'
test_expect_success 'another SQLite database is refused (exit 2)' '
	sqlite3 other.db "create table t(x); insert into t values (1)" &&
	test_expect_code 2 px scan --db other.db lib 2>err &&
	grep -q "is not a photoidx catalog" err &&
	test "$(sqlite3 other.db "select count(*) from sqlite_schema")" = 1
'

test_sqlite_only 'a file at the --db path (on PostgreSQL --db names a database)'
test_expect_success 'a file that is not a database is refused (exit 2)' '
	echo "hello, I am a text file with enough bytes to look like a header of something" >text.db &&
	test_expect_code 2 px scan --db text.db lib 2>err &&
	grep -q "catalog .*text.db" err
'

test_sqlite_only 'the directory of the SQLite file (on PostgreSQL --db names a database)'
test_expect_success 'a catalog in a directory that cannot be created: exit 2' '
	test_expect_code 2 px scan --db /proc/nonexistent/cat.db lib 2>err &&
	grep -q "cannot create" err
'

test_sqlite_only 'files at the --db path: none, empty, a directory, a cut copy (on PostgreSQL --db names a database, made before photoidx runs)'
test_expect_success 'before the first scan, an empty file, a directory, a damaged catalog: one clear sentence each' '
	test_expect_code 2 px ls --db none.db 2>e && grep -q "there is no catalog .none.db. yet: .photoidx scan PATH. makes it" e &&
	test_expect_code 2 px verify --db none.db 2>e && grep -q "no catalog .none.db. to verify yet" e &&
	test ! -e none.db && test ! -e none.db.lock &&
	: >empty.db &&
	test_expect_code 2 px ls --db empty.db 2>e && grep -q "catalog .empty.db. is empty" e &&
	mkdir adir &&
	test_expect_code 2 px scan --db adir lib 2>e && grep -q "adir. is a directory, not a catalog file" e &&
	test_expect_code 2 px ls --db adir 2>e && grep -q "is a directory" e &&
	test ! -e adir.lock &&
	px scan -q --db whole.db lib && head -c 8192 whole.db >cut.db &&
	test_expect_code 2 px ls --db cut.db 2>e && grep -q "damaged: restore it from a backup, or move it aside and scan again" e
'

test_expect_success 'migrations are numbered 0001.. without gaps' '
	i=1 &&
	for f in "$REPO"/schema/[0-9]*.sql; do
		case "$(basename "$f")" in "$(printf %04d $i)"-*.sql) ;; *) echo "gap at $f"; exit 1 ;; esac
		i=$((i + 1))
	done
'

test_sqlite_only 'a new SQLite catalog gets the schema its migrations make in one go (schema/fresh.c)'
test_expect_success 'a new catalog has the schema and rows of one made by every migration in turn' '
	mkdir -p nothing &&
	px scan -q --db fresh.db nothing &&
	cat "$REPO"/schema/[0-9]*.sql | sqlite3 migrated.db &&
	for db in fresh.db migrated.db; do
		sqlite3 "$db" "select type, name, tbl_name, sql from sqlite_schema order by type, name" >"$db.schema" &&
		sqlite3 "$db" "select * from sqlite_sequence order by name" >"$db.seq" || exit 1
	done &&
	test -s fresh.db.schema &&
	cmp migrated.db.schema fresh.db.schema &&
	cmp migrated.db.seq fresh.db.seq &&
	test "$(sqlite3 fresh.db "pragma user_version")" = "$n_migrations" &&
	test "$(sqlite3 fresh.db "pragma application_id")" = "$((0x50495843))" &&
	test "$(sqlite3 fresh.db "pragma integrity_check")" = ok
'

test_expect_success 'doc/schema.md documents every table, view and column' '
	if backend_is sqlite; then
		q "select name from sqlite_schema where type in ('\''table'\'', '\''view'\'') and name not like '\''sqlite_%'\''"
	else
		q "select table_name from information_schema.tables where table_schema = current_schema()"
	fi >objects &&
	test -s objects &&
	while read -r t; do
		grep -q "^## .*\`$t\`" "$REPO/doc/schema.md" || { echo "table $t undocumented"; exit 1; }
		if backend_is sqlite; then
			q "select name from pragma_table_info('\''$t'\'')"
		else
			q "select column_name from information_schema.columns where table_schema = current_schema() and table_name = '\''$t'\''"
		fi | while read -r c; do
			grep -q "^| \`$c\` |" "$REPO/doc/schema.md" || { echo "column $t.$c undocumented"; exit 1; }
		done
	done <objects
'

test_done
