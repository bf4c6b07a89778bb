#!/bin/sh
# A photoidx built without libpq (make WITH_PG=0): links no libpq, says
# so in --version, indexes into SQLite as the full build does, and
# refuses a PostgreSQL catalog with one line and exit 2.
. "$(dirname "$0")/lib.sh"

test_expect_success 'make WITH_PG=0 builds a photoidx without libpq' '
	make -s -C "$REPO" WITH_PG=0 BUILD="$TRASH/b" CFLAGS=-O0 "$TRASH/b/photoidx" >build.out 2>&1 ||
		{ cat build.out; false; } &&
	! ldd "$TRASH/b/photoidx" | grep -q libpq &&
	"$TRASH/b/photoidx" --version >v && test "$(sed -n 2p v)" = "catalogs: SQLite"
'

test_expect_success 'it scans into SQLite and refuses PostgreSQL' '
	mkdir -p lib && mkfix jpeg lib/a.jpg --make Canon && age lib &&
	"$TRASH/b/photoidx" scan -q --db lite.db lib &&
	test "$("$TRASH/b/photoidx" ls --db lite.db --make canon | wc -l)" = 1 &&
	test_expect_code 2 "$TRASH/b/photoidx" scan -q --db postgresql://nobody@127.0.0.1:1/none lib 2>err &&
	grep -q "built without PostgreSQL (libpq): it opens SQLite catalogs only" err &&
	test "$(wc -l <err)" = 1
'

test_done
