#!/bin/sh
# photoidx dups --similar: the variant corpus of issue 27 (KPhotoAlbum's
# demo photos, or generated photographs where they are absent, and six
# ImageMagick variants of each) grouped from the perceptual hashes of
# scan --thumbnails: the variant pairs found, no false pair at the
# default distance; each group's best copy first, every member within
# the distance of it; the filters, --keep, --print-removable and
# --script of exact duplicates, never naming the kept file, a hard link
# of it or an exact copy of it; weak hashes (uniform pictures) grouped
# only when their renditions are the same; a catalog made before the
# hashes upgraded in place and its hashes filled in from the stored
# thumbnails without opening an image (inotify).
. "$(dirname "$0")/lib.sh"

if ! command -v convert >/dev/null 2>&1; then
	echo "1..0 # SKIP ImageMagick's convert is missing (sh contrib/debian-deps.sh test installs imagemagick)"
	exit 0
fi

score() {
	jq -r '.groups[] | [.files[].path] | join(" ")' "$1" | sh "$REPO/tests/tools/similar-score.sh" lib
}

# the variants whose two files both have a hash (PNG needs a thumbnail
# maker that reads PNG: without one, a PNG has a note and no hash)
hashed_pairs() {
	q "select count(*) from file_info fi join file_phash p on p.id = fi.id where fi.name like '%\_\_%' escape '\\'"
}

test_expect_success 'setup: the variant corpus' '
	sh "$REPO/tests/tools/similar-corpus.sh" lib >kind &&
	echo "corpus: $(cat kind)" &&
	test "$(ls lib | wc -l)" = 168 &&
	age lib
'

test_expect_success 'scan --thumbnails hashes every image it makes a thumbnail of, in the same pass' '
	px scan --db "$DB" -q --thumbnails --json lib >s.json &&
	test "$(jq .phashes_filled s.json)" = 0 &&
	test "$(q "select count(*) from thumbs where note is null and phash is null")" = 0 &&
	test "$(q "select count(*) from thumbs where note is not null and phash is not null")" = 0 &&
	test "$(q "select count(*) from thumbs where phash_version is null")" = 0 &&
	test "$(q "select count(*) from file_info fi join file_phash p on p.id = fi.id where fi.mime = '\''image/jpeg'\''")" = 144 &&
	test "$(q "select count(*) from file_phash where phash_weak <> 0")" = 0 &&
	test "$(q "select count(distinct length(phash_hex)) || '\'' '\'' || min(length(phash_hex)) from file_phash")" = "1 16"
'

test_expect_success 'dups --similar: the variant pairs found, no false pair, at the default distance' '
	px dups --db "$DB" --similar --json >d.json &&
	score d.json >sc && cat sc &&
	read found total false missed <sc &&
	eligible=$(hashed_pairs) && echo "found $found of $total ($eligible with both hashes); false pairs $false; missed $missed" &&
	test "$false" = 0 &&
	test $((found * 100)) -ge $((eligible * 95)) &&
	if [ "$eligible" -lt "$total" ]; then
		echo "PNG variants have no thumbnail here: pairs counted where a hash exists" &&
		test -z "$(echo "$missed" | tr , "\n" | grep -v "__1024$")"
	fi &&
	jq -e ".distance == 10" d.json
'

test_expect_success 'each group: its best copy first (most pixels), every member within the distance of it' '
	jq -e "all(.groups[]; .files[0].best and .files[0].distance == 0 and all(.files[1:][]; .best == false))" d.json &&
	jq -e "all(.groups[].files[]; .distance <= 10)" d.json &&
	jq -e "all(.groups[]; .files[0].width * .files[0].height >= ([.files[] | .width * .height] | max))" d.json &&
	jq -e "[.groups[].files[]] | length == (map(.id) | unique | length)" d.json &&
	px dups --db "$DB" --similar >d.txt &&
	grep -q "^[0-9a-f]\{16\}  [0-9]* similar images, .* to free$" d.txt &&
	grep -q "^  best  $TRASH/lib/" d.txt &&
	grep -q "groups\{0,1\} of similar images within 10 bits" d.txt
'

test_expect_success 'a larger distance merges more; distance 0 only the same hashes; the bounds' '
	px dups --db "$DB" --similar --distance 0 --json >d0.json &&
	px dups --db "$DB" --similar --distance 16 --json >d16.json &&
	test "$(jq "[.groups[].files[]] | length" d0.json)" -le "$(jq "[.groups[].files[]] | length" d.json)" &&
	jq -e "all(.groups[].files[]; .distance == 0)" d0.json &&
	score d16.json && jq -e "all(.groups[].files[]; .distance <= 16)" d16.json &&
	test_expect_code 64 px dups --db "$DB" --similar --distance 17 2>e && grep -q "expected 0 to 16" e &&
	test_expect_code 64 px dups --db "$DB" --distance 4 2>e && grep -q "only with --similar" e &&
	test_expect_code 64 px dups --db "$DB" --similar --script --link 2>e && grep -q "only for exact copies" e
'

test_expect_success 'filters: a path, a type' '
	mkdir -p sub && px dups --db "$DB" --similar --json "$TRASH/lib" >p.json &&
	test "$(jq .n_groups p.json)" = "$(jq .n_groups d.json)" &&
	px dups --db "$DB" --similar --json --type video >v.json && jq -e ".n_groups == 0" v.json
'

test_expect_success 'setup: one photo, its variants, an exact copy and a hard link of the best' '
	f=$(ls lib | grep -v "__" | head -n 1) && b=${f%.jpg} &&
	mkdir -p act/a act/b act/c &&
	cp "lib/$f" act/a/best.jpg && touch -d "5 days ago" act/a/best.jpg &&
	cp "lib/${b}__half.jpg" act/b/half.jpg && cp "lib/${b}__q55.jpg" act/b/q55.jpg &&
	cp "lib/${b}__bright.jpg" act/c/bright.jpg &&
	cp act/a/best.jpg act/c/copy.jpg &&
	touch -d "3 days ago" act/b/q55.jpg act/b/half.jpg act/c/bright.jpg act/c/copy.jpg &&
	px scan --db act.db -q --thumbnails act &&
	# the link after the first scan: two names of one inode tie on every
	# rank but the row id, which a scan of both at once gives in the order
	# its hashers finish
	ln act/a/best.jpg act/a/link.jpg &&
	px scan --db act.db -q --thumbnails act &&
	px dups --db act.db --similar --json >a.json && cat a.json &&
	jq -e ".n_groups == 1 and .groups[0].images == 6" a.json &&
	test "$(jq -r ".groups[0].files[0].path" a.json)" = "$TRASH/act/a/best.jpg"
'

test_expect_success '--print-removable: all but the kept copy, never its hard link or an exact copy of it' '
	px dups --db act.db --similar --print-removable >rm.txt 2>err && cat rm.txt err &&
	test "$(sort rm.txt | tr "\n" " ")" = "$TRASH/act/b/half.jpg $TRASH/act/b/q55.jpg $TRASH/act/c/bright.jpg " &&
	grep -q "3 similar images could go, in 1 groups" err &&
	px dups --db act.db --similar --print-removable --keep path-prefix=act/c >rmc.txt &&
	test "$(sort rmc.txt | tr "\n" " ")" = "$TRASH/act/b/half.jpg $TRASH/act/b/q55.jpg $TRASH/act/c/bright.jpg " &&
	px dups --db act.db --similar --print-removable --keep path-prefix=act/b >rmb.txt &&
	test "$(sort rmb.txt | tr "\n" " ")" = "$TRASH/act/a/best.jpg $TRASH/act/a/link.jpg $TRASH/act/b/half.jpg $TRASH/act/c/bright.jpg $TRASH/act/c/copy.jpg " &&
	px dups --db act.db --similar --print-removable --keep newest -0 >rmn.bin &&
	test "$(tr "\0" "\n" <rmn.bin | sort | tr "\n" " ")" = "$TRASH/act/a/best.jpg $TRASH/act/a/link.jpg $TRASH/act/b/half.jpg $TRASH/act/c/bright.jpg $TRASH/act/c/copy.jpg "
'

test_expect_success '--script: reviewed, then run, it removes the variants and checks each first' '
	px dups --db act.db --similar --script >s.sh && cat s.sh &&
	head -n 1 s.sh | grep -q "^#!/bin/sh" && grep -q "^# keep .*/act/a/best.jpg" s.sh &&
	! grep "^remove " s.sh | grep -q -e "best.jpg'"'"' [0-9]* [0-9]* [0-9a-f]*$" -e "link.jpg" -e "copy.jpg" &&
	echo changed >>act/c/bright.jpg && touch -d "3 days ago" act/c/bright.jpg &&
	sh s.sh >out 2>err && cat out err &&
	test ! -e act/b/half.jpg && test ! -e act/b/q55.jpg && test -e act/c/bright.jpg && grep -q "skipped: .*bright.jpg" err &&
	test -e act/a/best.jpg && test -e act/a/link.jpg && test -e act/c/copy.jpg
'

test_expect_success 'exact duplicates and similar images do not mix up: dups alone finds the copy and the link' '
	px dups --db act.db --json >x.json &&
	jq -e ".n_groups == 1 and .groups[0].copies == 3" x.json
'

test_expect_success 'weak hashes: uniform pictures group only when their renditions are the same' '
	mkdir -p flat &&
	convert -size 800x600 xc:black -quality 90 flat/black.jpg &&
	convert -size 800x600 xc:black -quality 90 -set comment "another file" flat/black2.jpg &&
	convert -size 400x300 xc:black -quality 60 flat/black-small.jpg &&
	convert -size 800x600 xc:gray10 -quality 90 flat/dark.jpg &&
	convert -size 800x600 xc:"#3060c0" -quality 90 flat/blue.jpg &&
	convert -size 800x600 gradient:skyblue-white -quality 90 flat/sky.jpg &&
	! cmp -s flat/black.jpg flat/black2.jpg && age flat &&
	px scan --db flat.db -q --thumbnails flat &&
	test "$(qdb flat.db "select count(*) from file_phash where phash_weak = 1")" = 6 &&
	px dups --db flat.db --similar --distance 16 --json >w.json && cat w.json &&
	jq -e ".n_groups == 1 and .groups[0].weak" w.json &&
	test "$(jq -r "[.groups[0].files[].path | sub(\".*/\"; \"\")] | sort | join(\" \")" w.json)" = "black-small.jpg black.jpg black2.jpg"
'

# Migration 0008 (PostgreSQL 0004) only adds the hash columns, empty, to
# the thumbnails a catalog holds: those rows are what the fill finds.
# They are made here by emptying the columns (a schema-7 catalog cannot be
# made by dropping them: 0009 came after; t1014 and t4003 upgrade older
# catalogs through every migration).
test_expect_success 'thumbnails stored before the hashes (as migration 0008 leaves them): hashes filled in from the stored thumbnails, no image opened' '
	command -v inotifywait >/dev/null || { echo "inotifywait missing: sh contrib/debian-deps.sh test"; exit 1; }
	q "select count(*) from thumbs" >n_thumbs &&
	q "select hex(md5) || '\'' '\'' || phash from thumbs where phash is not null order by 1" >before &&
	q "update thumbs set phash = null, phash_weak = null, phash_version = null" &&
	px dups --db "$DB" --similar --json >d0.json &&
	test "$(jq ".groups | length" d0.json)" = 0 &&
	{ inotifywait -q -m -r -e open,access --format "%e %w%f" lib >events 2>/dev/null & } &&
	w=$! && sleep 0.5 &&
	px scan --db "$DB" --thumbnails --json lib >s2.json &&
	sleep 0.3; kill $w; wait $w 2>/dev/null || true;
	cat s2.json &&
	test "$(jq .phashes_filled s2.json)" = "$(wc -l <before)" &&
	test "$(jq .unchanged s2.json)" = 168 &&
	! grep -q "\.\(jpg\|png\)$" events &&
	test "$(q "select count(*) from thumbs")" = "$(cat n_thumbs)" &&
	test "$(q "select count(*) from thumbs where phash_version is null")" = 0 &&
	q "select hex(md5) || '\'' '\'' || phash from thumbs where phash is not null order by 1" >after &&
	join before after | awk "{ x = \$2; y = \$3 } x != y { n++ } END { print n + 0 }" >changed &&
	echo "hashes changed by the rendition'\''s JPEG: $(cat changed) of $(wc -l <before)" &&
	test "$(cat changed)" -le $(($(wc -l <before) / 10)) &&
	px dups --db "$DB" --similar --json >d2.json && score d2.json >sc2 && read found2 total2 false2 missed2 <sc2 &&
	test "$false2" = 0 && test $((found2 * 100)) -ge $(($(hashed_pairs) * 95)) &&
	sound
'

test_expect_success 'an unchanged rescan with --thumbnails computes no hash again' '
	px scan --db "$DB" --thumbnails --json lib >s3.json &&
	test "$(jq .phashes_filled s3.json)" = 0
'

test_done
