#!/bin/sh
# The upgrade to the text keys (schema 0010, PostgreSQL 0006): a catalog
# written by the photoidx of the commit before those migrations, built
# here from the repository's own history, with titles and captions in
# several scripts, is upgraded in place by the next scan, which opens no
# file: the keys are filled from the stored texts, as a new catalog of
# the same files has them, and --text finds a word in any case at once.
# On both backends.  Needs a git checkout, exiftool, jq and strace;
# skipped otherwise.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/tags-lib.sh"

if ! command -v git >/dev/null || ! git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
	echo "1..0 # SKIP not a git checkout: the photoidx before schema 0010 cannot be built"
	exit 0
fi
base=$(old_commit schema/0010-text-keys.sql schema/0009-tags.sql)
if [ -z "$base" ]; then
	echo "1..0 # SKIP no commit with schema 0009 and not 0010 in the history: no older photoidx to build"
	exit 0
fi
if ! command -v exiftool >/dev/null || ! command -v jq >/dev/null || ! command -v strace >/dev/null; then
	echo "1..0 # SKIP exiftool, jq or strace is missing (contrib/debian-deps.sh test installs them)"
	exit 0
fi
ASAN_OPTIONS=detect_leaks=0
export ASAN_OPTIONS

# names FILTER...: the names `ls` lists with FILTER, sorted, on one line
names() {
	px ls --db "$DB" -0 -t photo "$@" lib | tr "\0" "\n" | sed "s|.*/||" | sort | tr "\n" " " | sed "s/ $//"
}
keys_of() {
	qdb "$1" "select fi.rel_path, k.title_key, k.caption_key from file_text_keys k
		join file_info fi on fi.id = k.file_id order by 1"
}

test_expect_success 'setup: the photoidx of the commit before schema 0010, built from git' '
	old_build "$base" &&
	test -e old-src/schema/0009-tags.sql &&
	test ! -e old-src/schema/0010-text-keys.sql
'

test_expect_success 'setup: titles and captions in Latin, German and Greek, one from a sidecar, indexed by it' '
	mkdir lib &&
	for i in 1 2 3 4 5; do mkfix jpeg "lib/IMG_$i.jpg" --seed $i || return 1; done &&
	et "-XMP-dc:Title=ÆRØ harbour" lib/IMG_1.jpg &&
	et "-XMP-dc:Description=Große Straße" lib/IMG_2.jpg &&
	et "-XMP-dc:Title=ΑΘΗΝΑ" "-XMP-dc:Description=Ακρόπολη" lib/IMG_3.jpg &&
	et "-XMP-dc:Title=own" lib/IMG_4.jpg &&
	et -o lib/IMG_4.xmp "-XMP-dc:Title=ÉGLISE" &&
	age lib && old scan -q --db "$DB" lib &&
	test "$(version "$DB")" = "$(migrations old-src)" &&
	test "$(version "$DB")" -lt "$(migrations "$REPO")"
'

test_expect_success 'the next scan upgrades it without opening a file, and finds nothing new' '
	PIX_IO=threads strace -f -qq -e trace=openat,openat2 -o trace "$PHOTOIDX" scan --db "$DB" lib >out 2>err &&
	test "$(version "$DB")" = "$(migrations "$REPO")" &&
	grep "0 new, 0 changed, 0 moved, 0 missing, 6 unchanged" out &&
	grep "read 0 B of file data" out &&
	! grep -E "lib/.*\.(jpg|xmp)" trace
'

test_expect_success 'the keys are those of a new catalog of the same files; --text finds any case' '
	px scan -q --db fresh.db lib &&
	keys_of fresh.db >fresh.txt &&
	keys_of "$DB" >upgraded.txt &&
	diff fresh.txt upgraded.txt &&
	grep -q "/IMG_2.jpg||grosse strasse$" upgraded.txt &&
	tags_sound &&
	test "$(names --text ærø)" = IMG_1.jpg &&
	test "$(names --text STRASSE)" = IMG_2.jpg &&
	test "$(names --text αθηνα)" = IMG_3.jpg &&
	test "$(names --text ΑΚΡΌΠΟΛΗ)" = IMG_3.jpg &&
	test "$(names --text église)" = IMG_4.jpg &&
	test "$(names --text own)" = ""
'

test_done
