#!/bin/sh
# Where the catalog is when no --db is given (PHOTOIDX_DB, then the
# configuration file's [catalog] path, then the default), the configuration
# file's excludes, and what a broken, missing or misplaced configuration
# file does.
. "$(dirname "$0")/lib.sh"

# the caller's own settings must not leak in
unset PHOTOIDX_DB XDG_CONFIG_HOME
DEFAULT_DB="$XDG_DATA_HOME/photoidx/catalog.db"

# the base names in the catalog $DB, sorted, on one line
names() {
	q "select hex(name) from files order by name" | unhex | tr "\n" " " | sed "s/ $//"
}

# how many scans the catalog named by the configuration file in ~/.config
# has recorded (an SQLite file on either backend: the configuration names
# a file)
config_scans() {
	sqlite3 -batch "$HOME/cat/photos.db" "select count(*) from scans"
}

# env_db PATH: what PHOTOIDX_DB takes for the catalog PATH on this backend
# (PATH itself on SQLite, its postgresql:// URI on PostgreSQL)
env_db() {
	catalog_uri "$1"
}

# catalog_made PATH: a catalog is at PATH (photoidx made it: it has a
# scans table)
catalog_made() {
	if backend_is sqlite; then
		test -f "$1"
	else
		test "$(qdb "$1" "select count(*) from information_schema.tables where table_name = 'scans'")" = 1
	fi
}

# write_config DIR: stdin becomes DIR/photoidx/config
write_config() {
	mkdir -p "$1/photoidx" &&
	cat >"$1/photoidx/config"
}

test_expect_success 'setup: a small library' '
	mkdir -p lib/sub &&
	mkfix jpeg lib/a.jpg --date "2023:06:01 10:00:00" &&
	mkfix jpeg lib/sub/b.jpg --date "2023:06:02 10:00:00" &&
	mkfix jpeg lib/junk.tmp &&
	mkfix jpeg lib/Thumbs.db &&
	age lib
'

test_expect_success 'PHOTOIDX_DB names the catalog of scan and ls' '
	PHOTOIDX_DB=$(env_db "$TRASH/env.db") px scan -q lib &&
	catalog_made "$TRASH/env.db" &&
	test ! -e "$DEFAULT_DB" &&
	PHOTOIDX_DB=$(env_db "$TRASH/env.db") px ls >out &&
	grep -q "/lib/a.jpg$" out &&
	grep -q "/lib/sub/b.jpg$" out
'

test_sqlite_only 'a relative PHOTOIDX_DB is a file path (a catalog on PostgreSQL is a URI)'
test_expect_success 'a relative PHOTOIDX_DB is relative to the current directory' '
	mkdir -p here &&
	(cd here && PHOTOIDX_DB=rel.db px scan -q ../lib) &&
	test -f here/rel.db &&
	test ! -e "$DEFAULT_DB" &&
	(cd here && PHOTOIDX_DB=rel.db px ls) | grep -q "/lib/a.jpg$"
'

test_expect_success '--db beats PHOTOIDX_DB' '
	PHOTOIDX_DB=$(env_db "$TRASH/not-this.db") px scan -q --db "$TRASH/opt.db" lib &&
	catalog_made "$TRASH/opt.db" &&
	no_catalog "$TRASH/not-this.db" &&
	PHOTOIDX_DB=$(env_db "$TRASH/not-this.db") px ls --db "$TRASH/opt.db" | grep -q "/lib/a.jpg$" &&
	no_catalog "$TRASH/not-this.db" &&
	PHOTOIDX_DB=$(env_db "$TRASH/this.db") px scan -q lib &&
	catalog_made "$TRASH/this.db"
'

test_sqlite_only 'the [catalog] path of the configuration file is an absolute file path or ~/: an SQLite file'
test_expect_success 'the configuration file in ~/.config names the catalog, with ~/ expanded' '
	write_config "$HOME/.config" <<-\EOF &&
	# the catalog lives in the home directory
	[catalog]
	path=~/cat/photos.db
	EOF
	px scan -q lib &&
	test -f "$HOME/cat/photos.db" &&
	test ! -e "$DEFAULT_DB" &&
	px ls >out &&
	grep -q "/lib/a.jpg$" out
'

test_expect_success 'PHOTOIDX_DB beats the configuration file' '
	write_config "$HOME/.config" <<-\EOF &&
	[catalog]
	path=~/cat/photos.db
	EOF
	PHOTOIDX_DB=$(env_db "$TRASH/env2.db") px scan -q lib &&
	catalog_made "$TRASH/env2.db" &&
	if backend_is sqlite; then
		test "$(config_scans)" = 1
	else
		test ! -e "$HOME/cat/photos.db"
	fi
'

test_sqlite_only 'the catalog is the path the configuration file names, an SQLite file'
test_expect_success 'an empty PHOTOIDX_DB is ignored: the configuration file decides' '
	PHOTOIDX_DB= px scan -q lib &&
	test "$(config_scans)" = 2 &&
	test ! -e "$DEFAULT_DB"
'

test_sqlite_only 'the catalog is the path the configuration file names, an SQLite file'
test_expect_success 'XDG_CONFIG_HOME moves the configuration file' '
	write_config "$TRASH/cfg" <<-\EOF &&
	[catalog]
	path=~/xdg.db
	EOF
	XDG_CONFIG_HOME="$TRASH/cfg" px scan -q lib &&
	test -f "$HOME/xdg.db"
'

test_sqlite_only 'the catalog is the path the configuration file names, an SQLite file'
test_expect_success 'a relative XDG_CONFIG_HOME is ignored (~/.config is used)' '
	write_config rel <<-\EOF &&
	this is not a key file
	EOF
	n=$(config_scans) &&
	XDG_CONFIG_HOME=rel px scan -q lib 2>err &&
	test ! -s err &&
	test "$(config_scans)" = $((n + 1)) &&
	test ! -e "$DEFAULT_DB"
'

test_sqlite_only 'the default catalog is an SQLite file under the data directory'
test_expect_success 'a relative XDG_DATA_HOME is ignored: the default catalog is under ~/.local/share' '
	mkdir -p plain && mkfix jpeg plain/a.jpg && age plain &&
	mkdir elsewhere h2 && cd elsewhere &&
	HOME=$TRASH/h2 XDG_DATA_HOME=rel px scan -q ../plain &&
	test ! -e rel &&
	test "$(sqlite3 "$TRASH/h2/.local/share/photoidx/catalog.db" "select count(*) from files")" = 1
'

test_expect_success 'the configuration excludes skip files, with the defaults, -x and --no-default-excludes' '
	write_config "$TRASH/ex" <<-\EOF &&
	[scan]
	excludes=*.tmp;Thumbs.db
	EOF
	XDG_CONFIG_HOME="$TRASH/ex" px scan -q --db "$DB" lib &&
	test "$(names)" = "a.jpg b.jpg" &&
	catalog_rm "$DB" &&
	XDG_CONFIG_HOME="$TRASH/ex" px scan -q --db "$DB" --no-default-excludes -x b.jpg lib &&
	test "$(names)" = "a.jpg" &&
	catalog_rm "$DB" &&
	px scan -q --db "$DB" --no-default-excludes lib &&
	test "$(q "select count(*) from files where name in ('\''junk.tmp'\'', '\''Thumbs.db'\'')")" = 2
'

test_expect_success 'a configuration file that does not parse: one line naming it, exit 64, no catalog (--help still works)' '
	write_config "$TRASH/bad" <<-\EOF &&
	[catalog
	path=~/never.db
	EOF
	XDG_CONFIG_HOME="$TRASH/bad" test_expect_code 64 px scan --db "$TRASH/never.db" lib 2>err &&
	test "$(wc -l <err)" = 1 &&
	grep -q "^photoidx: cannot read .$TRASH/bad/photoidx/config.: " err &&
	no_catalog "$TRASH/never.db" &&
	XDG_CONFIG_HOME="$TRASH/bad" test_expect_code 64 px ls 2>err &&
	test "$(wc -l <err)" = 1 &&
	grep -q "^photoidx: cannot read .$TRASH/bad/photoidx/config.: " err &&
	test ! -e "$HOME/never.db" &&
	XDG_CONFIG_HOME="$TRASH/bad" px ls --help >out &&
	grep -q -- "--db" out
'

test_expect_success 'a bad value is refused too: an invalid escape, a relative path' '
	write_config "$TRASH/esc" <<-\EOF &&
	[scan]
	excludes=a\qb
	EOF
	XDG_CONFIG_HOME="$TRASH/esc" test_expect_code 64 px scan --db "$DB" lib 2>err &&
	grep -q "^photoidx: cannot read .$TRASH/esc/photoidx/config.: " err &&
	write_config "$TRASH/relpath" <<-\EOF &&
	[catalog]
	path=photos.db
	EOF
	XDG_CONFIG_HOME="$TRASH/relpath" test_expect_code 64 px ls 2>err &&
	grep -q "^photoidx: cannot read .$TRASH/relpath/photoidx/config.: \[catalog\] path: .photos.db. is not an absolute path" err &&
	test ! -e photos.db
'

test_expect_success 'unknown groups and keys are ignored, silently' '
	write_config "$TRASH/future" <<-\EOF &&
	[catalog]
	path=~/future.db
	colour=blue
	[someday]
	x=1
	EOF
	XDG_CONFIG_HOME="$TRASH/future" px scan -q lib 2>err &&
	test ! -s err &&
	test -f "$HOME/future.db"
'

test_expect_success 'a missing configuration file is silent' '
	rm -r "$HOME/.config" &&
	px scan -q lib 2>err &&
	test ! -s err &&
	test -f "$DEFAULT_DB" &&
	mkdir -p "$TRASH/empty/photoidx" &&
	XDG_CONFIG_HOME="$TRASH/empty" PHOTOIDX_DB=$(env_db "$TRASH/env3.db") px scan -q lib 2>err &&
	test ! -s err &&
	catalog_made "$TRASH/env3.db"
'

test_done
