#!/bin/sh
# The store's files call each other in one direction only: the list at
# the top of src/store.c gives their order, and each object file may take
# symbols only from files on the lines below its own (no cycle, no file
# reaching up).  The writer logic never asks which backend it runs on:
# only the backends name pix_db_is_pg.  Read from the build's object
# files with nm, so it checks what is linked, not what the comments say.
. "$(dirname "$0")/lib.sh"

OBJ=${BUILD_DIR:-$REPO/build}

if ! command -v nm >/dev/null 2>&1; then
	echo "1..0 # SKIP nm (binutils) is not installed"
	exit 0
fi
if [ ! -f "$OBJ/store.o" ]; then
	echo "1..0 # SKIP no object files in $OBJ (make builds them)"
	exit 0
fi

# layers: "LEVEL FILE" for each store file of the list in src/store.c
awk '/The store.s files, each calling only/ { on = 1; next }
     on && /^ \*$/ && n > 0 { exit }
     on && /^ \*   store/ {
	n++
	for (i = 2; i <= NF; i++) {
		f = $i; sub(/,$/, "", f)
		if (f !~ /^store[a-z-]*\.c$/) break
		sub(/\.c$/, "", f); print n, f
		if ($i !~ /,$/) break
	}
     }' "$REPO/src/store.c" >layers

# defs: "SYMBOL FILE"; uses: "FILE SYMBOL", for the listed files
: >defs
: >uses
for f in $(awk '{print $2}' layers); do
	[ -f "$OBJ/$f.o" ] || { echo "no $OBJ/$f.o" >>missing; continue; }
	nm --defined-only -g "$OBJ/$f.o" | awk -v f="$f" '$2 ~ /^[TDRB]$/ {print $3, f}' >>defs
	nm -u "$OBJ/$f.o" | awk -v f="$f" '{print f, $2}' >>uses
done

# Each use of a symbol another listed file defines, whose file is not on
# a lower line: "FILE -> OTHER (SYMBOL)".  Nothing printed: the order holds.
upward() {
	awk 'FILENAME == ARGV[1] { level[$2] = $1; next }
	     FILENAME == ARGV[2] { def[$1] = $2; next }
	     ($2 in def) && def[$2] != $1 && level[def[$2]] <= level[$1] {
		print $1 " -> " def[$2] " (" $2 ")"
	     }' layers defs "$1"
}

test_expect_success 'every store file of src/ is in the list, and the list names only real files' '
	test -s layers && test ! -f missing &&
	ls "$REPO"/src/store*.c | sed "s|.*/||; s|\.c$||" | grep -v "^store-kpa$" | sort >on-disk &&
	awk "{print \$2}" layers | sort >listed &&
	diff on-disk listed
'

test_expect_success 'each file calls only the files below it (no cycle)' '
	test -s uses && test -s defs &&
	upward uses >up && { test ! -s up || { cat up; false; }; }
'

test_expect_success 'the check sees a call that reaches up (store-sql.c calling pix_store_open)' '
	grep -q "^pix_store_open store$" defs &&
	{ cat uses; echo "store-sql pix_store_open"; } >uses.bad &&
	upward uses.bad >up.bad &&
	test "$(cat up.bad)" = "store-sql -> store (pix_store_open)"
'

test_expect_success 'only the backends ask whether the catalog is PostgreSQL' '
	awk "\$2 == \"pix_db_is_pg\" {print \$1}" uses | grep -v -x -e store-pg -e store-sqlite >askers || true &&
	{ test ! -s askers || { cat askers; false; }; }
'

test_done
