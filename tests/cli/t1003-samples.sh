#!/bin/sh
# The 149 real camera, phone and test-suite samples (../shared/samples):
# every MD5 as md5sum gave it, the JPEG metadata as exiftool reads it (save
# the documented exceptions), the broken ones recorded with an error and
# every other one indexed cleanly, a second scan that reads nothing, and a
# rename, an edit and a delete seen for what they are.
. "$(dirname "$0")/lib.sh"
require_samples

DATA="$REPO/tests/data"
ROOT="$TRASH/samples"

test_expect_success 'setup: a copy of the samples, scanned' '
	cp -rp "$PIX_SAMPLES" samples && chmod -R u+w samples &&
	test_expect_code 1 px scan --db "$DB" --json samples >s.json 2>err &&
	test "$(jq .new s.json)" = "$(find samples -type f | wc -l)"
'

test_expect_success 'every sample has the MD5 of MD5SUMS' '
	sed "s|  \./|  |" samples/MD5SUMS | sort -k2 >expect &&
	where="where name not in ('\''MD5SUMS'\'', '\''INDEX.tsv'\'', '\''README.md'\'', '\''exiftool-oracle.json'\'') order by id" &&
	q "select md5 from file_info $where" >md5s &&
	q "select hex(path) from file_info $where" | unhex >paths &&
	paste -d " " md5s paths | sed "s|^\([^ ]*\) $ROOT/|\1  |" | sort -k2 >actual &&
	test "$(wc -l <expect)" -ge 149 &&
	diff expect actual
'

# Rows "field|file|exiftool|photoidx" for every sample of a good role
# whose value differs from exiftool's, marked "stale" when listed as an
# exception but equal, and "exception" when listed and different; then a
# "compared" row of counts and one "format" row per FileType with its
# date matches.  exiftool gives a video's CreateDate in UTC: a video date
# of ours with an offset is compared as the instant it names.  The SQLite
# catalog is attached; a PostgreSQL one is read from photoidx ls --json.
oracle_mismatches() {
	if backend_is sqlite; then
		attach="ATTACH '$DB' AS c;" file_info=c.file_info
	else
		px ls --db "$DB" --all --sort none --json >file_info.json || return 1
		attach="" file_info="(SELECT json_extract(value, '\$.path') AS path, json_extract(value, '\$.media') AS media,
			json_extract(value, '\$.mime') AS mime, json_extract(value, '\$.date_taken') AS date_taken,
			json_extract(value, '\$.date_tz') AS date_tz, json_extract(value, '\$.make') AS make,
			json_extract(value, '\$.model') AS model, json_extract(value, '\$.orientation') AS orientation,
			json_extract(value, '\$.iso') AS iso, json_extract(value, '\$.gps_lat') AS gps_lat,
			json_extract(value, '\$.gps_lon') AS gps_lon, json_extract(value, '\$.gps_alt_m') AS gps_alt_m,
			json_extract(value, '\$.width') AS width, json_extract(value, '\$.height') AS height,
			json_extract(value, '\$.duration_s') AS duration_s FROM json_each(readfile('file_info.json')))"
	fi
	sqlite3 -batch -bail :memory: <<-SQL
	.mode tabs
	CREATE TABLE idx (role, file, bytes, md5, licence);
	.import samples/INDEX.tsv idx
	CREATE TABLE exc (file, field, why);
	.import exceptions.tsv exc
	.mode list
	$attach
	CREATE TABLE o AS SELECT substr(json_extract(value, '\$.SourceFile'), 3) AS file,
		json_extract(value, '\$.FileType') AS ft, json_extract(value, '\$.MIMEType') AS o_mime,
		coalesce(json_extract(value, '\$.DateTimeOriginal'), json_extract(value, '\$.CreateDate')) AS date,
		json_extract(value, '\$.Make') AS make, json_extract(value, '\$.Model') AS model,
		json_extract(value, '\$.Orientation') AS orientation, CAST(json_extract(value, '\$.ISO') AS TEXT) AS iso,
		nullif(json_extract(value, '\$.GPSLatitude'), '') AS lat, nullif(json_extract(value, '\$.GPSLongitude'), '') AS lon,
		nullif(json_extract(value, '\$.GPSAltitude'), '') AS alt,
		json_extract(value, '\$.ImageWidth') AS w, json_extract(value, '\$.ImageHeight') AS h,
		json_extract(value, '\$.Duration') AS dur
		FROM json_each(readfile('samples/exiftool-oracle.json'));
	CREATE TABLE f AS SELECT substr(path, length('$ROOT/') + 1) AS file, * FROM $file_info;
	CREATE TABLE cmp AS
	WITH j AS (SELECT o.*, f.media, f.mime, f.date_taken, f.date_tz, f.make AS f_make, f.model AS f_model,
			f.orientation AS f_orientation, f.iso AS f_iso, f.gps_lat, f.gps_lon, f.gps_alt_m, f.width, f.height,
			f.duration_s
		FROM o JOIN f USING (file) JOIN idx USING (file)
		WHERE idx.role <> 'broken/odd'),
	-- exiftool prints multi-valued ISO as "0 200": the value is the last non-zero
	k AS (SELECT *, nullif(CAST(CASE WHEN instr(iso, ' ') > 0 THEN substr(iso, instr(iso, ' ') + 1) ELSE iso END
		AS INTEGER), 0) AS o_iso,
		CASE WHEN media = 'video' AND date_tz IS NOT NULL
		THEN replace(datetime(substr(date_taken, 1, 19), ((CASE substr(date_tz, 1, 1) WHEN '-' THEN 1 ELSE -1 END)
			* (CAST(substr(date_tz, 2, 2) AS INTEGER) * 60 + CAST(substr(date_tz, 5, 2) AS INTEGER))) || ' minutes'), ' ', 'T')
		ELSE substr(date_taken, 1, 19) END AS our_date FROM j)
	-- the media type of every sample, broken ones too
	SELECT 'mime' AS field, ft, file, o_mime AS theirs, f.mime AS ours, o_mime IS f.mime AS same
		FROM o JOIN f USING (file) WHERE o_mime IS NOT NULL
	UNION ALL SELECT 'date' AS field, ft, file, date AS theirs, date_taken || coalesce(date_tz, '') AS ours,
		coalesce(nullif(replace(substr(date, 1, 10), ':', '-') || 'T' || substr(date, 12, 8), '0000-00-00T00:00:00'), '')
		IS coalesce(our_date, '') AS same FROM k WHERE date IS NOT NULL
	UNION ALL SELECT 'make', ft, file, make, f_make, make IS f_make FROM k WHERE make IS NOT NULL
	UNION ALL SELECT 'model', ft, file, model, f_model, model IS f_model FROM k WHERE model IS NOT NULL
	UNION ALL SELECT 'orientation', ft, file, orientation, f_orientation, orientation IS f_orientation FROM k WHERE orientation IS NOT NULL
	UNION ALL SELECT 'iso', ft, file, iso, f_iso, o_iso IS f_iso FROM k WHERE iso IS NOT NULL
	UNION ALL SELECT 'gps', ft, file, lat || ',' || lon || ',' || coalesce(alt, ''), gps_lat || ',' || gps_lon || ',' || coalesce(gps_alt_m, ''),
		gps_lat IS NOT NULL AND abs(lat - gps_lat) < 1e-6 AND abs(lon - gps_lon) < 1e-6
		AND (alt IS NULL OR abs(alt - gps_alt_m) < 1e-6) FROM k WHERE lat IS NOT NULL
	UNION ALL SELECT 'size', ft, file, w || 'x' || h, width || 'x' || height, w IS width AND h IS height FROM k WHERE w IS NOT NULL
	UNION ALL SELECT 'duration', ft, file, dur, duration_s, abs(dur - duration_s) < 0.01 FROM k WHERE dur IS NOT NULL AND media = 'video';
	SELECT CASE WHEN e.file IS NULL THEN 'MISMATCH' ELSE 'exception' END, field, file, theirs, ours
		FROM cmp LEFT JOIN exc e USING (file, field) WHERE NOT same
	UNION ALL SELECT 'STALE exception', field, file, theirs, ours
		FROM cmp JOIN exc e USING (file, field) WHERE same
	UNION ALL SELECT 'UNKNOWN exception', field, file, '', '' FROM exc e
		WHERE NOT EXISTS (SELECT 1 FROM cmp WHERE cmp.file = e.file AND cmp.field = e.field);
	SELECT 'compared', count(*), sum(field = 'date'), sum(field = 'iso'), sum(field = 'gps'), sum(field = 'duration'),
		count(DISTINCT ft) FROM cmp;
	SELECT 'format', ft, count(*), sum(same) FROM cmp WHERE field = 'date' GROUP BY ft;
	SQL
}

test_expect_success 'media type, date, make, model, orientation, ISO, GPS, size and duration equal exiftool'\''s, every format' '
	grep -v "^#" "$DATA/samples-exceptions.tsv" >exceptions.tsv &&
	oracle_mismatches >report &&
	cat report &&
	! grep -q "^MISMATCH\|^STALE\|^UNKNOWN" report &&
	test "$(grep -c "^exception" report)" = "$(wc -l <exceptions.tsv)" &&
	grep "^compared" report | awk -F"|" "{ exit !(\$2 >= 600 && \$3 >= 100 && \$4 >= 80 && \$5 >= 20 && \$6 >= 4 && \$7 >= 15) }"
'

# Every format: a date for at least 98% of the samples that exiftool
# gives one for.
test_expect_success 'a date equal to exiftool'\''s for at least 98% of each format'\''s samples' '
	grep "^format" report | while IFS="|" read -r _ ft n same; do
		awk "BEGIN { exit !($same >= 0.98 * $n) }" || { echo "$ft: $same of $n dates"; exit 1; }
	done
'

test_expect_success 'every exception is explained in doc/formats.md' '
	cut -f1 exceptions.tsv | sort -u | while read -r file; do
		grep -qF "$file" "$REPO/doc/formats.md" || { echo "not in doc/formats.md: $file"; exit 1; }
	done
'

test_expect_success 'broken samples are recorded with their error, and only they' '
	grep -v "^#" "$DATA/samples-broken.tsv" | while IFS="	" read -r file expect why; do
		st=$(q "select state || '\''|'\'' || coalesce(error, '\'''\'') from file_info where path = '\''$ROOT/$file'\''")
		case "$expect" in
		ok) [ "$st" = "ok|" ] || { echo "$file: expected ok, got $st"; exit 1; } ;;
		error:*) text=${expect#error: }
			case "$st" in "error|"*"$text"*) ;; *) echo "$file: expected error with \"$text\", got $st"; exit 1 ;; esac ;;
		esac
	done &&
	awk -F"\t" "\$1 == \"broken/odd\" { print \$2 }" samples/INDEX.tsv | sort >broken &&
	grep -v "^#" "$DATA/samples-broken.tsv" | cut -f1 | sort >listed &&
	comm -23 broken listed >unlisted &&
	test ! -s unlisted &&
	q "select hex(path) from file_info where state <> '\''ok'\''" | unhex | sed "s|^$ROOT/||" | sort >errors &&
	comm -23 errors listed >unexpected &&
	test ! -s unexpected &&
	test "$(wc -l <errors)" = "$(grep -c "	error: " "$DATA/samples-broken.tsv")"
'

test_expect_success 'each damaged sample was named once on stderr' '
	test "$(grep -c "^photoidx: damaged " err)" = "$(grep -c "	error: " "$DATA/samples-broken.tsv")" &&
	test "$(jq .errors s.json)" = "$(grep -c "	error: " "$DATA/samples-broken.tsv")"
'

test_expect_success 'media types come from content: RAW, video and HEIF samples' '
	test "$(q "select mime from file_info where path like '\''%/CanonRaw.cr2'\''")" = image/x-canon-cr2 &&
	test "$(q "select mime from file_info where path like '\''%/pocIssue283.jpg'\''")" = image/x-panasonic-rw2 &&
	test "$(q "select count(*) from file_info where media = '\''video'\''")" -ge 4 &&
	test "$(q "select count(*) from file_info where mime in ('\''image/heic'\'', '\''image/heif'\'', '\''image/avif'\'')")" -ge 7
'

test_expect_success 'the two identical samples are two rows with one MD5' '
	awk -F"\t" "\$1 == \"md5-duplicates\" { print \$4 }" samples/INDEX.tsv | sort -u >dup &&
	test "$(wc -l <dup)" = 1 &&
	test "$(q "select count(*) from file_info where md5 = '\''$(cat dup)'\''")" = 2
'

test_expect_success 'a second scan of the samples reads 0 bytes and reports nothing' '
	px scan --db "$DB" --json samples >s2.json 2>err2 &&
	test ! -s err2 &&
	test "$(jq -c "[.bytes_read, .new, .changed, .moved, .missing, .exit_status]" s2.json)" = "[0,0,0,0,0,0]"
'

test_expect_success 'a rename, an edit and a delete show up as moved, changed and missing' '
	mv "samples/exiftool__exiftool/t/images/Canon.jpg" "samples/exiftool__exiftool/t/images/Canon renamed.jpg" &&
	f="samples/Exiv2__exiv2/test/data/FurnaceCreekInn.jpg" && printf "x" >>"$f" && touch -d "1 hour ago" "$f" &&
	rm "samples/ianare__exif-samples/jpg/Fujifilm_FinePix_E500.jpg" &&
	px scan --db "$DB" --json samples >s3.json &&
	test "$(jq -c "[.moved, .changed, .missing, .new]" s3.json)" = "[1,1,1,0]" &&
	test "$(q "select md5 from file_info where name = '\''FurnaceCreekInn.jpg'\''")" = "$(md5sum <"$f" | cut -c1-32)" &&
	test "$(q "select md5 from file_info where name = '\''Canon renamed.jpg'\''")" = 8e3ca75f198b46c07dbba4a62868de78 &&
	test "$(q "select state from file_info where name = '\''Fujifilm_FinePix_E500.jpg'\''")" = missing &&
	test "$(jq .bytes_read s3.json)" = "$(stat -c %s "$f")"
'

test_sqlite_only 'integrity_check is a PRAGMA of the SQLite file'
test_expect_success 'the catalog is sound' '
	sound
'

test_done
