#!/bin/sh
# Formats beyond JPEG, on files built here: XMP sidecars linked to their
# images (both naming conventions) and used for what the image lacks; a
# file typed by its content whatever its extension; a TIFF whose directory
# lies past 64 KiB (libexif's reach, once); a movie's duration and OpenSubtitles
# hash; and a catalog of the previous schema reading again the files it
# could not read metadata from before.  (Every format against exiftool, on
# the real samples: t1003.  Parsers byte by byte: the unit tests.)
. "$(dirname "$0")/lib.sh"

# An XMP sidecar as darktable writes it (attributes on rdf:Description).
xmp() {
	cat <<-EOF
	<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>
	<x:xmpmeta xmlns:x="adobe:ns:meta/">
	 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
	  <rdf:Description rdf:about=""
	    xmlns:exif="http://ns.adobe.com/exif/1.0/"
	    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
	    exif:DateTimeOriginal="$1"
	    exif:GPSLatitude="48,51.462N"
	    exif:GPSLongitude="2,17.7W"
	    xmp:Rating="3"/>
	 </rdf:RDF>
	</x:xmpmeta>
	<?xpacket end="w"?>
	EOF
}

test_expect_success 'setup: images without dates, their sidecars, one image with its own date' '
	mkdir lib &&
	mkfix jpeg lib/IMG_0001.jpg --make Cam &&
	xmp 2021-06-05T14:30:00+02:00 >lib/IMG_0001.jpg.xmp &&
	mkfix tiff lib/IMG_0002.tif --make Cam &&
	xmp 2021-06-06T09:00:00 >lib/IMG_0002.xmp &&
	mkfix jpeg lib/IMG_0003.jpg --date "2019:01:02 03:04:05" --gps 10,20 &&
	xmp 2021-06-07T10:00:00 >lib/IMG_0003.JPG.xmp &&
	mkfix jpeg lib/lonely.jpg &&
	age lib && px scan --db "$DB" -q lib
'

test_expect_success 'sidecars are typed as such and linked to their images' '
	test "$(q "select count(*) from file_info where media = '\''sidecar'\'' and mime = '\''application/rdf+xml'\''")" = 3 &&
	test "$(q "select count(*) from file_info f join files s on s.id = f.sidecar_id where f.name = '\''IMG_0001.jpg'\''
		and hex(s.name) = hex('\''IMG_0001.jpg.xmp'\'')")" = 1 &&
	test "$(q "select count(*) from file_info f join files s on s.id = f.sidecar_id where f.name = '\''IMG_0002.tif'\''
		and hex(s.name) = hex('\''IMG_0002.xmp'\'')")" = 1 &&
	test -z "$(q "select sidecar_id from file_info where name = '\''lonely.jpg'\''")" &&
	test -z "$(q "select sidecar_id from file_info where name like '\''%.xmp'\''")"
'

test_expect_success 'an image without a date or position takes them from its sidecar' '
	test "$(q "select date_taken || date_tz || '\'' '\'' || date_source from file_info where name = '\''IMG_0001.jpg'\''")" = \
		"2021-06-05T14:30:00+02:00 sidecar XMP exif:DateTimeOriginal" &&
	test "$(q "select gps_lat || '\'','\'' || gps_lon from file_info where name = '\''IMG_0001.jpg'\''" |
		awk -F, "{ printf \"%.4f,%.4f\", \$1, \$2 }")" = "48.8577,-2.2950" &&
	test "$(q "select date_taken from file_info where name = '\''IMG_0002.tif'\''")" = 2021-06-06T09:00:00
'

test_expect_success 'the image'\''s own date and position win over the sidecar'\''s' '
	test "$(q "select date_taken || '\'' '\'' || date_source from file_info where name = '\''IMG_0003.jpg'\''")" = \
		"2019-01-02T03:04:05 DateTimeOriginal" &&
	test "$(q "select gps_lat || '\'','\'' || gps_lon from file_info where name = '\''IMG_0003.jpg'\''" |
		awk -F, "{ printf \"%.4f,%.4f\", \$1, \$2 }")" = "10.0000,20.0000"
'

test_expect_success 'a deleted sidecar no longer lends its date' '
	rm lib/IMG_0002.xmp && px scan --db "$DB" -q lib &&
	test -z "$(q "select date_taken from file_info where name = '\''IMG_0002.tif'\''")" &&
	test -z "$(q "select sidecar_id from file_info where name = '\''IMG_0002.tif'\''")"
'

test_expect_success 'a sidecar written after its image lends at once; one edited lends its new date' '
	mkfix jpeg lib/IMG_0004.jpg && age lib/IMG_0004.jpg && px scan --db "$DB" -q lib &&
	test -z "$(q "select date_taken from file_info where name = '\''IMG_0004.jpg'\''")" &&
	xmp 2022-02-02T02:02:02 >lib/IMG_0004.XMP && age lib/IMG_0004.XMP && px scan --db "$DB" -q lib &&
	test "$(q "select date_taken from file_info where name = '\''IMG_0004.jpg'\''")" = 2022-02-02T02:02:02 &&
	xmp 2023-03-03T03:03:03 >lib/IMG_0004.XMP && touch -d "1 day ago" lib/IMG_0004.XMP && px scan --db "$DB" -q lib &&
	test "$(q "select date_taken from file_info where name = '\''IMG_0004.jpg'\''")" = 2023-03-03T03:03:03 &&
	mv lib/IMG_0004.XMP lib/other.xmp && px scan --db "$DB" -q lib &&
	test -z "$(q "select date_taken || sidecar_id from file_info where name = '\''IMG_0004.jpg'\''")" &&
	test "$(q "select lent from meta m join files f on f.id = m.file_id where f.name = '\''IMG_0004.jpg'\''")" = 0
'

test_expect_success 'a sidecar beside an image whose name is not UTF-8 is linked too' '
	mkdir bytes && name=$(printf "Caf\351") &&
	mkfix jpeg "bytes/$name.jpg" && xmp 2024-04-04T04:04:04 >"bytes/$name.xmp" && age bytes &&
	px scan --db "$DB" -q bytes &&
	if backend_is sqlite; then
		test "$(q "select typeof(name) || '\'' '\'' || date_taken from file_info where dir = '\''$TRASH/bytes'\'' and media = '\''image'\''")" = \
			"blob 2024-04-04T04:04:04"
	else
		test "$(q "select date_taken from file_info where dir = '\''$TRASH/bytes'\'' and media = '\''image'\''")" = \
			2024-04-04T04:04:04
	fi
'

test_expect_success 'a date filter on file_info uses the date index' '
	if backend_is sqlite; then
		q "explain query plan select path from file_info where date_taken between '\''2021-01-01'\'' and '\''2022-01-01'\''" >plan
	else
		# the tables are small: a sequential scan would win, were it allowed
		q "set enable_seqscan = off" "explain select path from file_info where date_taken between '\''2021-01-01'\'' and '\''2022-01-01'\''" >plan
	fi &&
	grep -q "meta_by_date" plan
'

test_expect_success 'a file is typed by its content, whatever its extension says' '
	mkdir lies &&
	mkfix jpeg lies/photo.png --make Liar --date "2020:02:02 02:02:02" &&
	mkfix tiff lies/movie.mp4 --make Tiffany &&
	printf "hello\n" >lies/image.jpg &&
	px scan --db "$DB" -q lies &&
	test "$(q "select mime || '\'' '\'' || make || '\'' '\'' || date_taken from file_info where name = '\''photo.png'\''")" = \
		"image/jpeg Liar 2020-02-02T02:02:02" &&
	test "$(q "select mime || '\'' '\'' || make from file_info where name = '\''movie.mp4'\''")" = "image/tiff Tiffany" &&
	test "$(q "select mime || '\'' '\'' || media || '\'' '\'' || state from file_info where name = '\''image.jpg'\''")" = \
		"application/octet-stream other ok"
'

test_expect_success 'a TIFF whose directory lies past 64 KiB is read by our own TIFF reader' '
	mkdir far &&
	mkfix tiff far/far.tif --make FarCam --date "2018:08:08 08:08:08" --width 300 --height 200 --pad-before-ifd 300000 &&
	test "$(stat -c %s far/far.tif)" -gt 300000 &&
	px scan --db "$DB" -q far &&
	test "$(q "select make || '\'' '\'' || date_taken || '\'' '\'' || width || '\''x'\'' || height || '\'' '\'' || state from file_info where name = '\''far.tif'\''")" = \
		"FarCam 2018-08-08T08:08:08 300x200 ok"
'

# A QuickTime movie built byte by byte: ftyp, mdat of 100 KiB, then moov
# with mvhd (2020-01-02 03:04:05 UTC, 600 units a second, 4.5 s).
movie() {
	{
		printf "\0\0\0\24ftypqt  \0\0\0\0qt  "
		printf "\0\1\220\10mdat"; head -c 102400 /dev/zero | tr "\0" "\132"
		printf "\0\0\0\154moov\0\0\0\144mvhd\0\0\0\0"
		printf "\332\63\16\45\332\63\16\45\0\0\2\130\0\0\12\214"
		head -c 80 /dev/zero
	} >"$1"
}

test_expect_success 'a movie: its date, duration and OpenSubtitles hash' '
	mkdir movies && movie movies/clip.mov && age movies &&
	test "$(stat -c %s movies/clip.mov)" = 102544 &&
	px scan --db "$DB" -q movies &&
	test "$(q "select mime || '\'' '\'' || media || '\'' '\'' || date_taken || '\'' '\'' || duration_s from file_info where name = '\''clip.mov'\''")" = \
		"video/quicktime video 2020-01-02T03:04:05 4.5" &&
	test "$(q "select length(osdb_hash) from file_info where name = '\''clip.mov'\''")" = 16 &&
	test -z "$(q "select osdb_hash from file_info where name = '\''IMG_0001.jpg'\''")"
'

test_expect_success 'the OpenSubtitles hash is the size plus the 64-bit sums of both ends' '
	command -v perl >/dev/null || { echo "perl missing"; exit 1; }
	expect=$(perl -e "use integer;
		open(my \$f, \"<:raw\", \$ARGV[0]) or die; my \$size = -s \$f; my \$h = \$size;
		for my \$at (0, \$size - 65536) {
			seek(\$f, \$at, 0); read(\$f, my \$buf, 65536); \$h += \$_ for unpack(\"q<*\", \$buf);
		}
		printf(\"%016x\", \$h);" movies/clip.mov) &&
	test "$(q "select osdb_hash from file_info where name = '\''clip.mov'\''")" = "$expect"
'

# The catalog of a scan, taken back to schema 2 as an older photoidx left
# it: no 0003 columns, index or view, and no metadata for the movie (nor
# the views and index of 0004, which stand on file_info, nor the volumes
# of 0005, whose tables are made again as they were, nor the columns of
# 0006, nor the thumbnails of 0007 and their hashes of 0008, nor the
# photographer's metadata of 0009: its views, tables and columns, nor the
# text keys of 0010 and their view).
downgrade() {
	sqlite3 -bail "$1" "DROP VIEW file_text_keys; DROP VIEW file_keywords; DROP VIEW file_people; DROP TABLE keywords; DROP TABLE people" &&
	sqlite3 -bail "$1" "PRAGMA foreign_keys = OFF; BEGIN;
		DROP VIEW file_phash; DROP VIEW file_thumbnails; DROP TABLE thumbs; DROP VIEW photos; DROP VIEW duplicates; DROP VIEW file_info; DROP INDEX meta_by_gps;
		CREATE TABLE d2 (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES dirs(id), path NOT NULL UNIQUE,
			dev INTEGER, ino INTEGER, mtime_ns INTEGER, ctime_ns INTEGER,
			state TEXT NOT NULL DEFAULT 'ok' CHECK (state IN ('ok', 'error', 'missing')), error TEXT,
			scanned_at INTEGER, listed_scan_id INTEGER REFERENCES scans(id), fsid INTEGER);
		INSERT INTO d2 SELECT id, parent_id, path, dev, ino, mtime_ns, ctime_ns, state, error, scanned_at,
			listed_scan_id, fsid FROM dirs;
		DROP TABLE dirs; ALTER TABLE d2 RENAME TO dirs; CREATE INDEX dirs_by_parent ON dirs (parent_id);
		CREATE TABLE r2 (id INTEGER PRIMARY KEY, path NOT NULL UNIQUE, first_scan_at INTEGER NOT NULL, last_scan_at INTEGER);
		INSERT INTO r2 SELECT id, path, first_scan_at, last_scan_at FROM roots;
		DROP TABLE roots; ALTER TABLE r2 RENAME TO roots;
		CREATE TABLE c2 (seq INTEGER PRIMARY KEY AUTOINCREMENT, scan_id INTEGER REFERENCES scans(id),
			file_id INTEGER NOT NULL REFERENCES files(id), at INTEGER NOT NULL, kind TEXT NOT NULL,
			old_path, new_path, old_md5 BLOB, new_md5 BLOB, old_size INTEGER, new_size INTEGER);
		INSERT INTO c2 SELECT seq, scan_id, file_id, at, kind, old_path, new_path, old_md5, new_md5, old_size, new_size
			FROM changes WHERE file_id IS NOT NULL;
		DROP TABLE changes; ALTER TABLE c2 RENAME TO changes; CREATE INDEX changes_by_file ON changes (file_id);
		DROP TABLE volumes; COMMIT;" &&
	sqlite3 -bail "$1" "UPDATE meta SET date_taken = NULL, date_tz = NULL, date_source = NULL WHERE lent & 1;
		UPDATE meta SET gps_lat = NULL, gps_lon = NULL, gps_alt_m = NULL WHERE lent & 2;
		DROP INDEX files_sidecars; DROP INDEX files_with_sidecar; DROP INDEX files_by_sidecar;
		ALTER TABLE files DROP COLUMN sidecar_id; ALTER TABLE meta DROP COLUMN lent;
		ALTER TABLE meta DROP COLUMN duration_s; ALTER TABLE meta DROP COLUMN osdb_hash;" &&
	for c in title_key caption_key rating label title caption creator copyright sublocation city province country country_code keywords people; do
		sqlite3 -bail "$1" "ALTER TABLE meta DROP COLUMN $c" || return 1
	done &&
	for c in aperture exposure_program metering_mode flash gps_time gps_direction gps_direction_ref description; do
		sqlite3 -bail "$1" "ALTER TABLE meta DROP COLUMN $c" || return 1
	done &&
	sed -n "/^DROP VIEW file_info;/,\$ p" "$REPO/schema/0002-verify-quick.sql" | tail -n +2 | sqlite3 -bail "$1" &&
	sqlite3 -bail "$1" "DELETE FROM meta WHERE file_id IN (SELECT id FROM files WHERE name = 'clip.mov');
		UPDATE files SET recheck = 0; PRAGMA user_version = 2"
}

test_sqlite_only 'the downgrade to schema 2 is of the SQLite file (PRAGMA user_version, its tables rebuilt in SQLite'\''s words)'
test_expect_success 'a catalog of schema 2 reads again the files whose formats it now understands, not those found damaged' '
	rm -f old.db && px scan --db old.db -q lib movies &&
	downgrade old.db &&
	test -z "$(sqlite3 old.db "select 1 from meta m join files f on f.id = m.file_id where f.name = '\''clip.mov'\''")" &&
	sqlite3 -bail old.db "UPDATE files SET verify_state = '\''mismatch'\'', verified_at = 1, md5 = zeroblob(16)
			WHERE name = '\''IMG_0001.jpg'\'';
		UPDATE files SET verify_state = '\''ok'\'', verified_at = 12345 WHERE name = '\''clip.mov'\'';
		UPDATE files SET media = '\''other'\'', mime = '\''text/xml'\'' WHERE name = '\''IMG_0001.jpg.xmp'\''" &&
	px scan --db old.db --json lib movies >s.json &&
	test "$(sqlite3 old.db "pragma user_version")" = "$(ls "$REPO"/schema/[0-9]*.sql | wc -l)" &&
	test "$(sqlite3 old.db "select verify_state || hex(md5) from files where name = '\''IMG_0001.jpg'\''")" = \
		mismatch00000000000000000000000000000000 &&
	test "$(sqlite3 old.db "select verify_state || verified_at from files where name = '\''clip.mov'\''")" = ok12345 &&
	test "$(sqlite3 old.db "select media from files where name = '\''IMG_0001.jpg.xmp'\''")" = sidecar &&
	test "$(jq .changed s.json)" = 0 &&
	test "$(jq .bytes_read s.json)" -ge 102544 &&
	test "$(sqlite3 old.db "select duration_s from file_info where name = '\''clip.mov'\''")" = 4.5 &&
	px scan --db old.db --json lib movies >s2.json &&
	test "$(jq .bytes_read s2.json)" = 0
'

test_done
