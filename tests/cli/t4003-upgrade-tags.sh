#!/bin/sh
# The upgrade to the photographer's metadata (schema 0009, PostgreSQL
# 0005; issue 28): a catalog written by the photoidx of the commit before
# those migrations, built here from the repository's own history, is
# upgraded in place by the next scan, which opens no file: every row and
# change-log entry kept, the new columns and tables empty.  `scan --reread`
# then fills them in, to what a new catalog of the same files has, and
# logs nothing; a rating changed after that is logged.  On both backends.
# Needs a git checkout (the old photoidx is built from it) and exiftool
# (to write the tags); skipped otherwise.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/tags-lib.sh"

if ! command -v git >/dev/null || ! git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
	echo "1..0 # SKIP not a git checkout: the photoidx before schema 0009 cannot be built"
	exit 0
fi
# the newest commit with every migration before 0009 and not 0009 itself
# (the branch that wrote 0009 had a stand-in for 0008: a catalog of it is
# not one any user has)
base=$(old_commit schema/0009-tags.sql schema/0008-similar.sql)
if [ -z "$base" ]; then
	echo "1..0 # SKIP no commit with schema 0008 and not 0009 in the history: no older photoidx to build"
	exit 0
fi
if ! command -v exiftool >/dev/null || ! command -v jq >/dev/null || ! command -v strace >/dev/null; then
	echo "1..0 # SKIP exiftool, jq or strace is missing (contrib/debian-deps.sh test installs them)"
	exit 0
fi
ASAN_OPTIONS=detect_leaks=0
export ASAN_OPTIONS

# what the catalog says of the photographer's metadata of each file
tags_of() {
	px ls --db "$1" --all --sort path --json lib |
	jq -c ".[] | {path, keywords, rating, \"label\": .label, title, caption, creator, copyright, city, country, people, date_taken, date_source}" &&
	qdb "$1" "select fi.path, k.ord, k.keyword, k.parent_ord, k.depth, k.path, k.key, k.is_assigned from file_keywords k join file_info fi on fi.id = k.file_id order by 1, 2" &&
	qdb "$1" "select fi.path, p.ord, p.name, p.x, p.y, p.w, p.h from file_people p join file_info fi on fi.id = p.file_id order by 1, 2"
}

test_expect_success 'setup: the photoidx of the commit before schema 0009, built from git' '
	old_build "$base" &&
	test ! -e old-src/schema/0009-tags.sql
'

test_expect_success 'setup: a library with keywords, ratings, texts and people, indexed by it' '
	mkdir -p lib/2024 &&
	for i in 1 2 3 4 5; do mkfix jpeg "lib/2024/IMG_$i.jpg" --make Canon --date "2024:05:0$i 10:00:00" || return 1; done &&
	et -XMP-dc:Subject=Places -XMP-dc:Subject=Denmark -XMP-dc:Subject=sunset \
		"-XMP-lr:HierarchicalSubject=Places|Denmark" -XMP-xmp:Rating=4 -XMP-xmp:Label=Red \
		"-XMP-dc:Title=The harbour" -XMP-photoshop:City=Aarhus lib/2024/IMG_1.jpg &&
	et -IPTC:Keywords=boat -IPTC:Keywords=Harbour "-IPTC:Caption-Abstract=Boats at dusk" \
		"-IPTC:By-line=Ada Lovelace" -IPTC:CodedCharacterSet=UTF8 lib/2024/IMG_2.jpg &&
	et -XMP-mwg-rs:RegionAppliedToDimensionsW=64 -XMP-mwg-rs:RegionAppliedToDimensionsH=48 \
		-XMP-mwg-rs:RegionAppliedToDimensionsUnit=pixel "-XMP-mwg-rs:RegionName=Ada" -XMP-mwg-rs:RegionType=Face \
		-XMP-mwg-rs:RegionAreaX=0.5 -XMP-mwg-rs:RegionAreaY=0.5 -XMP-mwg-rs:RegionAreaW=0.25 \
		-XMP-mwg-rs:RegionAreaH=0.5 -XMP-mwg-rs:RegionAreaUnit=normalized -XMP-xmp:Rating=1 lib/2024/IMG_3.jpg &&
	et -o lib/2024/IMG_4.xmp -XMP-xmp:Rating=2 "-XMP-digiKam:TagsList=Trips/Iceland" \
		-XMP-dc:Subject=Iceland "-XMP-dc:Description=From the sidecar" &&
	age lib && old scan -q --db "$DB" lib &&
	et -XMP-xmp:Rating=3 lib/2024/IMG_5.jpg && age lib/2024/IMG_5.jpg &&
	old scan -q --db "$DB" lib &&
	test "$(version "$DB")" = "$(migrations old-src)" &&
	test "$(version "$DB")" -lt "$(migrations "$REPO")" &&
	q "select hex(path), md5, state, size, media from file_info order by id" >before.txt &&
	q "select seq, kind, hex(old_path), hex(new_path), hex(old_md5), hex(new_md5) from changes order by seq" >changes-before.txt &&
	test "$(wc -l <before.txt)" = 6 &&
	test "$(grep -c "|changed|" changes-before.txt)" = 1
'

test_expect_success 'the next scan upgrades it without opening a file, and finds nothing new' '
	PIX_IO=threads strace -f -qq -e trace=openat,openat2 -o trace "$PHOTOIDX" scan --db "$DB" lib >out 2>err &&
	test "$(version "$DB")" = "$(migrations "$REPO")" &&
	grep "0 new, 0 changed, 0 moved, 0 missing, 6 unchanged" out &&
	grep "read 0 B of file data" out &&
	! grep -E "lib/.*\.(jpg|xmp)" trace
'

test_expect_success 'every row and change-log entry is kept; the new columns and tables are empty' '
	q "select hex(path), md5, state, size, media from file_info order by id" >after.txt &&
	diff before.txt after.txt &&
	q "select seq, kind, hex(old_path), hex(new_path), hex(old_md5), hex(new_md5) from changes order by seq" >changes-after.txt &&
	diff changes-before.txt changes-after.txt &&
	test "$(q "select count(*) from file_info where keywords is not null or rating is not null or title is not null
		or caption is not null or creator is not null or people is not null or label is not null or city is not null")" = 0 &&
	test "$(q "select count(*) from file_keywords")" = 0 &&
	test "$(q "select count(*) from file_people")" = 0 &&
	test "$(q "select count(*) from changes where old_rating is not null or new_rating is not null
		or old_keywords is not null or new_keywords is not null")" = 0
'

test_expect_success 'scan --reread fills them in as a new catalog has them, reading each file once, and logs nothing' '
	PIX_IO=threads strace -f -qq -e trace=openat,openat2 -o trace2 "$PHOTOIDX" scan --reread --db "$DB" lib >out2 2>err2 &&
	grep "0 new, 0 changed, 0 moved, 0 missing, 6 unchanged" out2 &&
	test ! -s err2 &&
	for f in IMG_1.jpg IMG_2.jpg IMG_3.jpg IMG_4.jpg IMG_4.xmp IMG_5.jpg; do
		test "$(grep -c "lib/2024/$f\"" trace2)" -ge 1 || return 1
	done &&
	q "select seq, kind, hex(old_path), hex(new_path), hex(old_md5), hex(new_md5) from changes order by seq" >changes-reread.txt &&
	diff changes-before.txt changes-reread.txt &&
	px scan -q --db fresh.db lib &&
	tags_of "$DB" >upgraded.txt &&
	tags_of fresh.db >fresh.txt &&
	diff fresh.txt upgraded.txt &&
	grep -q "\"keywords\":\[\"Places/Denmark\",\"sunset\"\],\"rating\":4,\"label\":\"Red\",\"title\":\"The harbour\"" upgraded.txt &&
	grep -q "\"keywords\":\[\"boat\",\"Harbour\"\].*\"caption\":\"Boats at dusk\",\"creator\":\"Ada Lovelace\"" upgraded.txt &&
	grep -q "IMG_3.jpg\".*\"people\":\[\"Ada\"\]" upgraded.txt &&
	grep -q "IMG_4.jpg\",\"keywords\":\[\"Trips/Iceland\"\],\"rating\":2,.*\"caption\":\"From the sidecar\"" upgraded.txt &&
	grep -q "IMG_5.jpg\",\"keywords\":\[\],\"rating\":3" upgraded.txt &&
	test "$(q "select count(*) from file_people")" = 1 &&
	tags_sound
'

test_expect_success 'a rating and keywords changed after it are logged with their values before and after' '
	et -XMP-xmp:Rating=5 -XMP-dc:Subject+=night lib/2024/IMG_1.jpg && age lib/2024/IMG_1.jpg &&
	px scan -q --db "$DB" lib &&
	px changes --db "$DB" --json >changes.json &&
	jq -e "[.changes[] | select(.kind == \"changed\" and (.path | endswith(\"IMG_1.jpg\")))] | length == 1" changes.json &&
	jq -e ".changes[] | select(.kind == \"changed\" and (.path | endswith(\"IMG_1.jpg\"))) |
		.old_rating == 4 and .new_rating == 5 and .old_keywords == [\"Places/Denmark\", \"sunset\"] and
		.new_keywords == [\"Places/Denmark\", \"sunset\", \"night\"]" changes.json
'

test_done
