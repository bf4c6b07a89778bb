#!/bin/sh
# Querying the photographer's metadata (issue 28): --keyword (any case, a
# hierarchy's path and everything below it, a level by its name),
# --rating, --person, --text on ls, dups, stats and export; stats --by
# keyword, person, rating; the new fields in JSON, CSV and JSON lines;
# a sidecar's values counting for its image.  On both backends.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/tags-lib.sh"

if ! command -v exiftool >/dev/null || ! command -v jq >/dev/null; then
	echo "1..0 # SKIP exiftool or jq is missing (contrib/debian-deps.sh test installs them)"
	exit 0
fi
# names FILTER...: the names `ls` lists with FILTER, sorted, on one line
names() {
	px ls --db "$DB" -0 "$@" lib | tr "\0" "\n" | sed "s|.*/||" | sort | tr "\n" " " | sed "s/ $//"
}

test_expect_success 'setup: a library with keywords, people, ratings and texts (one image with a sidecar, one copied)' '
	mkdir lib &&
	mkfix jpeg lib/cph.jpg --seed 1 &&
	et -XMP-lr:HierarchicalSubject="Places|Denmark|Copenhagen" -XMP-dc:Subject=harbour -XMP-xmp:Rating=5 \
		-XMP-dc:Title="Nyhavn at dusk" -XMP-iptcExt:PersonInImage=Ada lib/cph.jpg &&
	mkfix jpeg lib/aarhus.jpg --seed 2 &&
	et -XMP-lr:HierarchicalSubject="Places|Denmark|Aarhus" -XMP-xmp:Rating=3 -XMP-dc:Description="ÆRØ ferry" \
		-XMP-iptcExt:PersonInImage=Ada -XMP-iptcExt:PersonInImage="Bob Builder" lib/aarhus.jpg &&
	mkfix jpeg lib/paris.jpg --seed 3 &&
	et -XMP-lr:HierarchicalSubject="Places|France|Paris" -XMP-dc:Subject="Île de la Cité" -XMP-xmp:Rating=-1 lib/paris.jpg &&
	mkfix jpeg lib/denmarkish.jpg --seed 4 &&
	et -XMP-dc:Subject="Places/Denmarkish" -XMP-dc:Subject="100%_done" lib/denmarkish.jpg &&
	mkfix jpeg lib/plain.jpg --seed 5 &&
	mkfix tiff lib/raw.NEF --make NIKON &&
	et -o lib/raw.xmp -XMP-dc:Subject=glacier -XMP-xmp:Rating=4 -XMP-iptcExt:PersonInImage=Bob\ Builder &&
	cp lib/cph.jpg lib/cph-copy.jpg &&
	age lib && px scan --db "$DB" -q lib &&
	tags_sound
'

test_expect_success '--keyword: any case; a path takes the hierarchy below it; a level by its name; no partial names' '
	test "$(names --keyword places/denmark)" = "aarhus.jpg cph-copy.jpg cph.jpg" &&
	# (a keyword whose own name has a "/" counts as below the levels its
	# name spells: doc/schema.md, keywords.path)
	test "$(names --keyword PLACES)" = "aarhus.jpg cph-copy.jpg cph.jpg denmarkish.jpg paris.jpg" &&
	test "$(names --keyword "places/denmark/")" = "aarhus.jpg cph-copy.jpg cph.jpg" &&
	test "$(names --keyword copenhagen)" = "cph-copy.jpg cph.jpg" &&
	test "$(names --keyword Denmark)" = "aarhus.jpg cph-copy.jpg cph.jpg" &&
	test "$(names --keyword "île de la cité")" = "paris.jpg" &&
	test "$(names --keyword "places/den")" = "" &&
	test "$(names --keyword "Places/Denmarkish")" = "denmarkish.jpg" &&
	test "$(names --keyword "100%_done")" = "denmarkish.jpg" &&
	test "$(names --keyword "100%")" = "" &&
	test "$(names --keyword glacier)" = "raw.NEF raw.xmp"
'

test_expect_success '--rating N is at least N (rejected is -1); --person any case; --text in title, caption and keywords' '
	test "$(names --rating 4)" = "cph-copy.jpg cph.jpg raw.NEF raw.xmp" &&
	test "$(names --rating 0 -t photo)" = "aarhus.jpg cph-copy.jpg cph.jpg raw.NEF" &&
	test "$(names --rating -1 -t photo)" = "aarhus.jpg cph-copy.jpg cph.jpg paris.jpg raw.NEF" &&
	test "$(names --person "bob builder")" = "aarhus.jpg raw.NEF raw.xmp" &&
	test "$(names --person ADA --rating 4)" = "cph-copy.jpg cph.jpg" &&
	test "$(names --text nyhavn)" = "cph-copy.jpg cph.jpg" &&
	test "$(names --text ferry)" = "aarhus.jpg" &&
	test "$(names --text GLAC -t photo)" = "raw.NEF" &&
	test "$(names --text cité)" = "paris.jpg" &&
	test_expect_code 64 px ls --db "$DB" --rating 6 &&
	test_expect_code 64 px ls --db "$DB" --rating three &&
	test_expect_code 64 px ls --db "$DB" --keyword "  "
'

test_expect_success 'dups and export take the same filters' '
	px dups --db "$DB" --json --keyword copenhagen lib >d.json &&
	test "$(jq "[.groups[].files[]] | length" d.json)" = 2 &&
	px dups --db "$DB" --json --keyword aarhus lib >d2.json &&
	test "$(jq "[.groups[]] | length" d2.json)" = 0 &&
	px export --db "$DB" --format jsonl --person ada >e.jsonl &&
	test "$(jq -r .name e.jsonl | sort | tr "\n" " ")" = "aarhus.jpg cph-copy.jpg cph.jpg "
'

test_expect_success 'JSON, JSON lines and CSV carry the new fields; keywords and people as arrays in JSON' '
	px ls --db "$DB" --json lib/cph.jpg >cph.json &&
	test "$(jq -c ".[0] | [.rating, .title, .keywords, .people, .caption]" cph.json)" = \
		"[5,\"Nyhavn at dusk\",[\"Places/Denmark/Copenhagen\",\"harbour\"],[\"Ada\"],null]" &&
	px ls --db "$DB" --json lib/raw.NEF >raw.json &&
	test "$(jq -c ".[0] | [.rating, .keywords, .people]" raw.json)" = "[4,[\"glacier\"],[\"Bob Builder\"]]" &&
	px ls --db "$DB" --json lib/plain.jpg >plain.json &&
	test "$(jq -c ".[0] | [.rating, .keywords, .people, .title]" plain.json)" = "[null,[],[],null]" &&
	px export --db "$DB" --format jsonl --keyword aarhus >a.jsonl &&
	test "$(jq -c "[.people, .caption]" a.jsonl)" = "[[\"Ada\",\"Bob Builder\"],\"ÆRØ ferry\"]" &&
	px export --db "$DB" --format csv --keyword copenhagen >c.csv &&
	head -1 c.csv | grep -q ",rating,label,title,caption,creator,copyright,sublocation,city,province,country,country_code,keywords,people," &&
	grep -q ",5,,Nyhavn at dusk,.*\"Places/Denmark/Copenhagen$" c.csv
'

test_expect_success 'stats --by keyword, person, rating: every level counts the files under it' '
	px stats --db "$DB" --json -t photo lib >s.json &&
	test "$(jq -c "[.by_keyword[] | select(.keyword == \"Places\" or .keyword == \"Places/Denmark\") | [.keyword, .files]]" s.json)" = \
		"[[\"Places\",4],[\"Places/Denmark\",3]]" &&
	test "$(jq -c "[.by_person[] | [.person, .files]]" s.json)" = "[[\"Ada\",3],[\"Bob Builder\",2]]" &&
	test "$(jq -c "[.by_rating[] | [.rating, .files]]" s.json)" = "[[5,2],[4,1],[3,1],[-1,1],[null,2]]" &&
	px stats --db "$DB" --by keyword,person,rating lib >s.txt &&
	grep -q "^by keyword" s.txt && grep -q "Places/Denmark/Copenhagen *2 " s.txt &&
	grep -q "^  rejected  *1 " s.txt && grep -q "^  5 stars  *2 " s.txt &&
	test_expect_code 64 px stats --db "$DB" --by colour
'

test_expect_success 'a sidecar edited: what the image counts follows it' '
	et -XMP-dc:Subject=moraine -XMP-xmp:Rating=1 lib/raw.xmp && age lib/raw.xmp && px scan --db "$DB" -q lib &&
	test "$(names --keyword moraine -t photo)" = "raw.NEF" &&
	test "$(names --keyword glacier)" = "" &&
	test "$(names --rating 4 -t photo)" = "cph-copy.jpg cph.jpg"
'

test_expect_success '--text folds as Unicode does, alike on both backends: ÆRØ, Straße, a sidecar'"'"'s title; % and _ are letters' '
	mkdir lib/text &&
	mkfix jpeg lib/text/strasse.jpg --seed 11 &&
	et -XMP-dc:Title="Große Straße" lib/text/strasse.jpg &&
	mkfix jpeg lib/text/church.jpg --seed 12 &&
	et -XMP-dc:Title="eglise" -XMP-dc:Description="west front" lib/text/church.jpg &&
	et -o lib/text/church.xmp -XMP-dc:Title="ÉGLISE Saint-Étienne" &&
	mkfix jpeg lib/text/pct.jpg --seed 13 && et -XMP-dc:Description="100%_ sure" lib/text/pct.jpg &&
	mkfix jpeg lib/text/under.jpg --seed 14 && et -XMP-dc:Description="100_ sure" lib/text/under.jpg &&
	age lib && px scan --db "$DB" -q lib &&
	tags_sound &&
	test "$(names --text ærø)" = "aarhus.jpg" &&
	test "$(names --text STRASSE)" = "strasse.jpg" &&
	test "$(names --text GROSSE)" = "strasse.jpg" &&
	test "$(names --text "große straße")" = "strasse.jpg" &&
	# the sidecar gives the title, the image the caption: field by field
	test "$(names --text "saint-étienne" -t photo)" = "church.jpg" &&
	test "$(names --text eglise -t photo)" = "" &&
	test "$(names --text WEST -t photo)" = "church.jpg" &&
	test "$(names --text "100%_")" = "denmarkish.jpg pct.jpg" &&
	test "$(names --text "100_")" = "under.jpg" &&
	test "$(q "SELECT k.title_key FROM file_text_keys k JOIN file_info i ON i.id = k.file_id
		WHERE i.title = '\''Große Straße'\''")" = "grosse strasse" &&
	test "$(q "SELECT k.title_key || '\''|'\'' || k.caption_key FROM file_text_keys k JOIN file_info i ON i.id = k.file_id
		WHERE i.caption = '\''west front'\'' AND i.media = '\''image'\''")" = "église saint-étienne|west front"
'

test_done
