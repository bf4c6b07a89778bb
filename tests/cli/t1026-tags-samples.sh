#!/bin/sh
# The photographer's metadata (issue 28) of the 149 real samples
# (../shared/samples): every keyword, rating, text, person and region the
# catalog has for them equal to exiftool's reading of the same files
# (oracle-tags.py), save the differences listed below with their reasons;
# the samples that carry such metadata are counted, so that a reader that
# reads nothing does not pass; a second scan, and a --reread of them all,
# log no change and leave the same values.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/tags-lib.sh"
require_samples

if ! command -v exiftool >/dev/null || ! command -v python3 >/dev/null || ! command -v jq >/dev/null; then
	echo "1..0 # SKIP exiftool, python3 or jq is missing (contrib/debian-deps.sh test installs them)"
	exit 0
fi
ORACLE=$TEST_DIR/oracle-tags.py

# The differences from exiftool that are known, with why: PATH (a suffix
# of the sample's path), FIELD, reason.
cat >exceptions.tsv <<-'EOF'
	exiftool__exiftool/t/images/CanonRaw.crw	caption	XMP in a CanonVRD trailer (Digital Photo Professional's recipe, after a CRW's heap or a JPEG's EOI) is not read
	exiftool__exiftool/t/images/DNG.dng	creator	its XMP says dc:Creator: XMP's names are case-sensitive (dc:creator), exiftool matches them in any case
EOF

test_expect_success 'setup: a copy of the samples, scanned' '
	cp -rp "$PIX_SAMPLES" samples && chmod -R u+w samples && age samples &&
	test_expect_code 1 px scan --db "$DB" -q samples 2>err
'

test_expect_success 'the catalog has what exiftool reads, value by value' '
	px ls --db "$DB" --json -t image,raw "$TRASH/samples" >ours.json &&
	q -separator "	" "select fi.path, p.name, coalesce(cast(p.x as text), '\'''\''), coalesce(cast(p.y as text), '\'''\''),
		coalesce(cast(p.w as text), '\'''\''), coalesce(cast(p.h as text), '\'''\'') from file_people p
		join file_info fi on fi.id = p.file_id where fi.media in ('\''image'\'', '\''raw'\'') order by fi.path, p.ord" >people.tsv &&
	find "$TRASH/samples" -type f -print0 | xargs -0 exiftool -j -G1 -struct -n >theirs.json 2>/dev/null &&
	{ python3 "$ORACLE" theirs.json ours.json people.tsv --except exceptions.tsv >out || { cat out; false; }; } &&
	n=$(sed -n "s/^compared \([0-9]*\) values$/\1/p" out) &&
	test "$n" -ge 1500
'

# What the samples carry (none has people), so that a comparison of
# nothing with nothing does not pass.
test_expect_success 'the samples carry keywords, ratings and texts, and the catalog has them' '
	test "$(q "select count(*) from file_info where rating is not null")" -ge 10 &&
	test "$(q "select count(distinct file_id) from file_keywords")" -ge 5 &&
	test "$(q "select count(*) from file_info where creator is not null")" -ge 8 &&
	test "$(q "select count(*) from file_info where copyright is not null")" -ge 5 &&
	test "$(q "select count(*) from file_info where title is not null or caption is not null")" -ge 8 &&
	tags_sound
'

test_expect_success 'a second scan, and a --reread of every sample, log no change' '
	before=$(q "select count(*) from changes") &&
	px scan --db "$DB" -q samples &&
	test_expect_code 1 px scan --db "$DB" -q --reread samples 2>/dev/null &&
	test "$(q "select count(*) from changes")" = "$before" &&
	px ls --db "$DB" --json -t image,raw "$TRASH/samples" >again.json &&
	times="map(del(.changed_at, .hashed_at, .last_seen_at))" &&
	jq -S "$times" ours.json >a && jq -S "$times" again.json >b && diff a b
'

test_done
