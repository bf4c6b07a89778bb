#!/bin/sh
# photoidx export --kphotoalbum DIR: DIR/index.xml and DIR/exif-info.db as
# KPhotoAlbum 5.9 writes them (doc/kphotoalbum.md), so that KPhotoAlbum
# opens the library without reading and hashing every file again.  The
# XML is checked with xmllint (libxml2-utils): what KPhotoAlbum's reader
# needs of each <image>, escaping, order; the Exif database against the
# schema and version rows of KPhotoAlbum 5.9's kpaexif/Database.cpp.
. "$(dirname "$0")/lib.sh"

if ! command -v xmllint >/dev/null 2>&1; then
	echo "1..0 # SKIP xmllint is missing (Debian package libxml2-utils)"
	exit 0
fi

test_cmp_files() {
	diff -u "$1" "$2"
}

# KPhotoAlbum's dates are local times: the file times below are in UTC.
export TZ=UTC

# The value of attribute $2 of the <image> whose file is $1 (no ' in $1).
attr() {
	xmllint --xpath "string(//image[@file='$1']/@$2)" lib/index.xml
}

# "file<TAB>md5sum" of each <image> of index.xml $1, in document order
# (for names without quotes, ampersands or newlines).
kpa_list() {
	xmllint --xpath '//image/@file | //image/@md5sum' "$1" |
		sed 's/^ [a-zA-Z0-9]*="//; s/"$//' | paste - -
}

# The schema KPhotoAlbum 5.9 creates (Exif::Database::DatabasePrivate::
# createMetadataTable and populateDatabase, DB_VERSION 3), as sqlite3
# .schema prints it.
cat >expected-schema <<'EOF'
CREATE TABLE settings (keyword TEXT PRIMARY KEY, value TEXT) without rowid;
CREATE TABLE exif (filename string PRIMARY KEY, Exif_Photo_FocalLength float, Exif_Photo_ExposureTime float, Exif_Photo_ApertureValue float, Exif_Photo_FNumber float, Exif_Photo_Flash int, Exif_Photo_Contrast int, Exif_Photo_Sharpness int, Exif_Photo_Saturation int, Exif_Image_Orientation int, Exif_Photo_MeteringMode int, Exif_Photo_ISOSpeedRatings int, Exif_Photo_ExposureProgram int, Exif_Image_Make string, Exif_Image_Model string, Exif_GPSInfo_GPSVersionID int, Exif_GPSInfo_GPSAltitude float, Exif_GPSInfo_GPSAltitudeRef int, Exif_GPSInfo_GPSMeasureMode string, Exif_GPSInfo_GPSDOP float, Exif_GPSInfo_GPSImgDirection float, Exif_GPSInfo_GPSLatitude float, Exif_GPSInfo_GPSLatitudeRef string, Exif_GPSInfo_GPSLongitude float, Exif_GPSInfo_GPSLongitudeRef string, Exif_GPSInfo_GPSTimeStamp float, Exif_Photo_LensModel string );
EOF
printf 'DBVersion|3\nGuaranteedDataVersion|3\n' >expected-settings

test_expect_success 'setup: a library with dated, rotated, undated and oddly named files' '
	mkdir -p lib/sub lib/CategoryImages &&
	mkfix jpeg lib/a.jpg --make Canon --model "EOS 5D" --lens "EF50mm f/1.8" --date "2024:05:06 07:08:09" \
		--exposure 1/250 --fnumber 28/10 --focal 50/1 --iso 400 --gps 48.5,-2.25,120 --width 64 --height 48 &&
	mkfix jpeg lib/sub/rot6.jpg --make Nikon --date "2023:01:02 03:04:05" --orientation 6 \
		--width 64 --height 32 --gps -33.5,151.25,-10 &&
	mkfix jpeg lib/nodate.jpg --no-exif --seed 3 &&
	mkfix jpeg "lib/odd & <x> \"q\".jpg" --date "2022:02:02 02:02:02" --seed 4 &&
	mkfix jpeg "lib/new
line.jpg" --date "2022:03:03 03:03:03" --seed 5 &&
	mkfix jpeg "lib/bad$(printf "\377").jpg" --date "2022:04:04 04:04:04" --seed 6 &&
	mkfix jpeg lib/CategoryImages/People-Me.jpg --seed 7 &&
	printf "not an image\n" >lib/notes.txt &&
	age lib && touch -d "2021-03-04 05:06:07 UTC" lib/nodate.jpg &&
	px scan --db "$DB" -q lib
'

test_expect_success 'export: one warning for the name that is not UTF-8, exit 1' '
	test_expect_code 1 px export --db "$DB" --kphotoalbum lib 2>err &&
	test "$(grep -c "not UTF-8" err)" = 1 &&
	grep -q "bad\\\\xff.jpg" err &&
	test -f lib/index.xml && test -f lib/exif-info.db
'

test_expect_success 'index.xml is well-formed XML with the root KPhotoAlbum 5.9 reads' '
	xmllint --noout lib/index.xml &&
	head -n 1 lib/index.xml | grep -qx "<?xml version=\"1.0\" encoding=\"UTF-8\"?>" &&
	test "$(xmllint --xpath "string(/KPhotoAlbum/@version)" lib/index.xml)" = 8 &&
	test "$(xmllint --xpath "string(/KPhotoAlbum/@compressed)" lib/index.xml)" = 1 &&
	test "$(xmllint --xpath "count(/KPhotoAlbum/Categories/Category[@name=\"Events\"]/value[@value=\"untagged\" and @id=\"1\"])" lib/index.xml)" = 1 &&
	test "$(xmllint --xpath "count(/KPhotoAlbum/images)" lib/index.xml)" = 1 &&
	test "$(xmllint --xpath "count(/KPhotoAlbum/blocklist)" lib/index.xml)" = 1
'

test_expect_success 'every image once, file relative to DIR, md5sum the catalog MD5' '
	test "$(xmllint --xpath "count(//image)" lib/index.xml)" = 5 &&
	q "SELECT substr(path, length('\''$TRASH/lib/'\'') + 1), md5 FROM file_info
	   WHERE media = '\''image'\'' AND name IN ('\''a.jpg'\'', '\''rot6.jpg'\'', '\''nodate.jpg'\'')" >want &&
	test "$(wc -l <want)" = 3 &&
	while IFS="|" read -r file md5; do
		test "$(xmllint --xpath "count(//image[@file=\"$file\"])" lib/index.xml)" = 1 &&
		test "$(attr "$file" md5sum)" = "$md5" || exit 1
	done <want &&
	test "$(attr a.jpg md5sum)" = "$(md5sum <lib/a.jpg | cut -c1-32)" &&
	test "$(xmllint --xpath "count(//image[contains(@file, \"CategoryImages\") or contains(@file, \"notes\")])" lib/index.xml)" = 0
'

test_expect_success 'startDate, width, height, angle as KPhotoAlbum records them' '
	test "$(attr a.jpg startDate)" = 2024-05-06T07:08:09 &&
	test "$(attr a.jpg width)x$(attr a.jpg height)" = 64x48 &&
	test -z "$(attr a.jpg angle)" && test -z "$(attr a.jpg endDate)" &&
	test "$(attr sub/rot6.jpg startDate)" = 2023-01-02T03:04:05 &&
	test "$(attr sub/rot6.jpg angle)" = 90 &&
	test "$(attr sub/rot6.jpg width)x$(attr sub/rot6.jpg height)" = 32x64 &&
	test "$(attr nodate.jpg startDate)" = 2021-03-04T05:06:07 &&
	test "$(xmllint --xpath "count(//image[@Events=\"1\"])" lib/index.xml)" = 5 &&
	test "$(xmllint --xpath "count(//image[not(@width) or not(@height) or not(@startDate) or not(@md5sum)])" lib/index.xml)" = 0
'

test_expect_success 'images in order of startDate, as KPhotoAlbum keeps them' '
	xmllint --xpath "//image/@startDate" lib/index.xml >dates &&
	test "$(wc -l <dates)" = 5 &&
	sort -c dates
'

test_expect_success 'names with & < > " and a newline: escaped, and read back as they are' '
	grep -qF "file=\"odd &amp; &lt;x&gt; &quot;q&quot;.jpg\"" lib/index.xml &&
	grep -qF "file=\"new&#10;line.jpg\"" lib/index.xml &&
	test "$(xmllint --xpath "count(//image[@file=concat(\"odd & <x> \", '\''\"'\'', \"q\", '\''\"'\'', \".jpg\")])" lib/index.xml)" = 1 &&
	test "$(xmllint --xpath "count(//image[@file=\"new
line.jpg\"])" lib/index.xml)" = 1
'

test_expect_success 'exif-info.db: KPhotoAlbum 5.9 schema and version rows, one row per image' '
	sqlite3 lib/exif-info.db .schema >schema && test_cmp_files expected-schema schema &&
	sqlite3 lib/exif-info.db "SELECT keyword, value FROM settings ORDER BY keyword" >settings &&
	test_cmp_files expected-settings settings &&
	test "$(sqlite3 lib/exif-info.db "SELECT count(*) FROM exif")" = 5 &&
	test "$(sqlite3 lib/exif-info.db "SELECT count(*) FROM exif WHERE filename = '\''$TRASH/lib/a.jpg'\''")" = 1 &&
	test "$(sqlite3 lib/exif-info.db "PRAGMA integrity_check")" = ok
'

test_expect_success 'exif-info.db: values in KPhotoAlbum units, signs as GPS references' '
	sqlite3 lib/exif-info.db "SELECT Exif_Photo_FocalLength, Exif_Photo_ExposureTime, Exif_Photo_FNumber,
		Exif_Photo_ISOSpeedRatings, Exif_Image_Make, Exif_Image_Model, Exif_Photo_LensModel, Exif_Image_Orientation,
		Exif_GPSInfo_GPSVersionID, Exif_GPSInfo_GPSLatitude, Exif_GPSInfo_GPSLatitudeRef,
		Exif_GPSInfo_GPSLongitude, Exif_GPSInfo_GPSLongitudeRef, Exif_GPSInfo_GPSAltitude, Exif_GPSInfo_GPSAltitudeRef
		FROM exif WHERE filename = '\''$TRASH/lib/a.jpg'\''" >a.row &&
	test "$(cat a.row)" = "50.0|0.004|2.8|400|Canon|EOS 5D|EF50mm f/1.8|0|2|48.5|N|2.25|W|120.0|0" &&
	sqlite3 lib/exif-info.db "SELECT Exif_Image_Orientation, Exif_GPSInfo_GPSLatitudeRef, Exif_GPSInfo_GPSLongitudeRef,
		Exif_GPSInfo_GPSAltitude, Exif_GPSInfo_GPSAltitudeRef, Exif_Photo_FocalLength, quote(Exif_Image_Model),
		quote(Exif_Photo_LensModel) FROM exif WHERE filename LIKE '\''%/rot6.jpg'\''" >rot.row &&
	test "$(cat rot.row)" = "6|S|E|10.0|1|-1.0|'\'\''|NULL" &&
	test "$(sqlite3 lib/exif-info.db "SELECT Exif_GPSInfo_GPSVersionID || Exif_GPSInfo_GPSLatitude || quote(Exif_GPSInfo_GPSLatitudeRef)
		FROM exif WHERE filename LIKE '\''%/nodate.jpg'\''")" = "0-1.0'\'\''" &&
	cols=$(sqlite3 lib/exif-info.db "SELECT group_concat(name || '\'' IS NULL'\'', '\'' OR '\'') FROM pragma_table_info('\''exif'\'')
		WHERE name <> '\''Exif_Photo_LensModel'\''") &&
	test "$(sqlite3 lib/exif-info.db "SELECT count(*) FROM exif WHERE $cols")" = 0
'

# the dot files an export leaves in DIR: none but its state file
dot_files() {
	ls -A "$1" | grep "^\." | grep -vx ".photoidx-kpa"
}

test_expect_success 'no temporary file left in DIR; the state file records the seq exported' '
	test -z "$(dot_files lib)" &&
	test "$(head -1 lib/.photoidx-kpa)" = "seq=$(q "select max(seq) from changes")"
'

test_expect_success 'an existing index.xml is merged, not refused: again, nothing changes and no backup is made' '
	cp lib/index.xml before.xml && cp lib/exif-info.db before.db &&
	test_expect_code 1 px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "up to date" err &&
	cmp before.xml lib/index.xml && cmp before.db lib/exif-info.db &&
	test -z "$(ls lib | grep "~")" && test -z "$(dot_files lib)"
'

test_expect_success '--force rebuilds it from the catalog, the old one kept as index.xml~0001~, the next as ~0002~' '
	printf "<KPhotoAlbum version=\"8\"><Categories/><images/><!-- my tags --></KPhotoAlbum>\n" >lib/index.xml &&
	cp lib/index.xml mine.xml &&
	test_expect_code 1 px export --db "$DB" --kphotoalbum lib --force 2>err &&
	cmp mine.xml lib/index.xml~0001~ &&
	cmp before.xml lib/index.xml &&
	cp mine.xml lib/index.xml &&
	test_expect_code 1 px export --db "$DB" --kphotoalbum lib --force 2>err &&
	cmp mine.xml lib/index.xml~0001~ && cmp mine.xml lib/index.xml~0002~ && cmp before.xml lib/index.xml &&
	rm lib/index.xml~000[12]~ &&
	test -z "$(dot_files lib)"
'

test_expect_success 'an index.xml photoidx cannot read is refused with the reason, and nothing is written' '
	cp lib/index.xml good.xml && cp lib/exif-info.db good.db &&
	printf "<KPhotoAlbum version=\"8\"><Categories>\n" >lib/index.xml && cp lib/index.xml cut.xml &&
	test_expect_code 73 px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "cannot merge into .*index.xml.*not well-formed XML (Error on line 2.*nothing was written" err &&
	cmp cut.xml lib/index.xml && cmp good.db lib/exif-info.db && test -z "$(ls lib | grep "~")" &&
	printf "<KPhotoAlbum version=\"11\" compressed=\"1\"><Categories/><images/></KPhotoAlbum>\n" >lib/index.xml &&
	test_expect_code 73 px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "format 11 (KPhotoAlbum 6.1 or later)" err &&
	printf "<KPhotoAlbum version=\"8\"><images/><Categories/></KPhotoAlbum>\n" >lib/index.xml &&
	test_expect_code 73 px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "does not begin with <Categories> and <images>" err &&
	rm lib/index.xml && ln -s "$TRASH/good.xml" lib/index.xml &&
	test_expect_code 73 px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "not a regular file (a symbolic link is not followed)" err && test -L lib/index.xml &&
	rm lib/index.xml && cp good.xml lib/index.xml && test -z "$(dot_files lib)"
'

test_expect_success 'a failure leaves the old files and no temporary file' '
	mkdir -p lib2 && mkfix jpeg lib2/x.jpg --seed 9 && age lib2 && px scan --db "$DB" -q lib2 &&
	mkdir lib2/exif-info.db &&
	test_expect_code 73 px export --db "$DB" --kphotoalbum lib2 2>err &&
	grep -q "exif-info.db" err &&
	test ! -e lib2/index.xml && test -d lib2/exif-info.db &&
	test -z "$(dot_files lib2)"
'

test_expect_success 'a date without its day (fuzzy) spans the month: startDate and endDate' '
	q "UPDATE meta SET date_taken = '\''2019-07'\'' WHERE file_id = (SELECT id FROM files WHERE name = '\''x.jpg'\'')" &&
	rmdir lib2/exif-info.db &&
	px export --db "$DB" --kphotoalbum lib2 &&
	test "$(xmllint --xpath "string(//image/@startDate)" lib2/index.xml)" = 2019-07-01T00:00:00 &&
	test "$(xmllint --xpath "string(//image/@endDate)" lib2/index.xml)" = 2019-07-31T23:59:59
'

if [ -d "$PIX_SAMPLES" ]; then
	test_expect_success 'samples: a catalog of a copy of ../shared/samples, exported' '
		cp -r "$PIX_SAMPLES" samples && chmod -R u+w samples && age samples &&
		{ px scan --db "$DB" -q samples 2>/dev/null || test $? = 1; } &&
		{ px export --db "$DB" --kphotoalbum samples 2>err || test $? = 1; } &&
		xmllint --noout samples/index.xml
	'

	test_expect_success 'samples: every image and video of the catalog listed with its MD5 from MD5SUMS' '
		kpa_list samples/index.xml >listed &&
		q "SELECT substr(path, length('\''$TRASH/samples/'\'') + 1) FROM file_info
		   WHERE path LIKE '\''$TRASH/samples/%'\'' AND media IN ('\''image'\'', '\''raw'\'', '\''video'\'')
		   AND md5 IS NOT NULL" | sort >want &&
		test "$(wc -l <want)" -gt 100 &&
		test "$(wc -l <listed)" = "$(wc -l <want)" &&
		cut -f1 listed | sort >got && test_cmp_files want got &&
		sed "s|^\([0-9a-f]*\)  \./\(.*\)$|\2	\1|" "$PIX_SAMPLES/MD5SUMS" | sort >oracle &&
		sort listed | join -t "	" -j 1 - oracle >joined &&
		test "$(wc -l <joined)" = "$(wc -l <listed)" &&
		awk -F "	" "\$2 != \$3 { print; bad = 1 } END { exit bad }" joined
	'

	test_expect_success 'samples: one exif-info.db row per image and video' '
		test "$(sqlite3 samples/exif-info.db "SELECT count(*) FROM exif")" = "$(wc -l <listed)" &&
		sqlite3 samples/exif-info.db .schema >schema && test_cmp_files expected-schema schema
	'
else
	test_skip 'samples: export of a copy of ../shared/samples' '../shared/samples is absent'
fi

test_done
