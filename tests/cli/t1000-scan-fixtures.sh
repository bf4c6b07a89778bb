#!/bin/sh
# A first scan of generated files: every file in the catalog with the MD5
# md5sum gives, the EXIF values the fixtures were written with, the JPEG's
# real pixel size, the summary and the default catalog location.
. "$(dirname "$0")/lib.sh"

mk_library() {
	mkdir -p lib/2023/trip lib/2024 lib/.thumbnails lib/@eaDir
	mkfix jpeg lib/2023/trip/IMG_0001.JPG --width 64 --height 48 --exif-size 4000,3000 \
		--make Canon --model "Canon EOS 5D" --lens "EF 24-70mm f/2.8L" \
		--date "2023:07:14 10:11:12" --subsec 25 --offset "+02:00" \
		--exposure 1/250 --fnumber 28/10 --focal 50/1 --iso 400 --orientation 6 \
		--gps 48.8583701,2.2944813,35.5
	mkfix jpeg lib/2023/trip/IMG_0002.JPG --big-endian --make NIKON --model D750 \
		--date "2023:07:15 08:00:00" --gps -33.8567844,-151.2152967,-12.25 --thumbnail
	mkfix jpeg lib/2024/plain.jpg --no-exif --width 32 --height 16
	mkfix jpeg "lib/2024/with apps.jpg" --app-before 3 --xmp --make Sony --model ILCE-7M3 \
		--date "2024:01:02 03:04:05"
	mkfix tiff lib/2024/scan.tif --width 20 --height 10 --make Epson --model "Perfection V600" \
		--date "2024:02:03 04:05:06" --big-endian
	mkfix jpeg lib/2024/big.jpg --size 300000 --make Fujifilm --model X-T4 --date "2024:03:04 05:06:07"
	echo "not a photo" >lib/2024/notes.txt
	: >lib/2024/empty.jpg
	mkfix jpeg lib/.thumbnails/thumb.jpg
	mkfix jpeg lib/@eaDir/syno.jpg
	ln -s ../2024/plain.jpg lib/2023/link-to-plain.jpg
	ln -s /etc lib/2024/link-to-etc
	age lib
}

test_expect_success 'setup: a small library of generated files' '
	mk_library &&
	test -s lib/2023/trip/IMG_0001.JPG
'

test_expect_success 'scan indexes every regular file and exits 0' '
	px scan --db "$DB" --json lib >summary.json 2>err &&
	test ! -s err &&
	test "$(jq .new summary.json)" = 8 &&
	test "$(jq .errors summary.json)" = 0 &&
	test "$(jq .exit_status summary.json)" = 0 &&
	test "$(jq -r ".roots[0]" summary.json)" = "$TRASH/lib" &&
	test "$(q "select count(*) from file_info where state = '\''ok'\''")" = 8
'

test_expect_success 'every MD5 equals md5sum (32 lowercase hex digits)' '
	(cd lib && find 2023 2024 -type f -exec md5sum {} + | sort -k2) >expect &&
	q "select hex(path) from file_info order by id" | unhex >paths &&
	q "select md5 from file_info order by id" >md5s &&
	paste -d " " md5s paths | sed "s|^\([^ ]*\) $TRASH/lib/|\1  |" | sort -k2 >actual &&
	diff expect actual &&
	test "$(grep -c "^[0-9a-f]\{32\}$" md5s)" = 8
'

# The hashers time the metadata parsers (a thread-clock system call a
# round) only for --json, which reports it.
test_expect_success 'metadata is timed for --json, and only then (strace)' '
	test "$(jq ".meta_seconds > 0" summary.json)" = true &&
	if ! command -v strace >/dev/null; then echo "strace not installed: not checked"; exit 0; fi
	ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=clock_gettime -o timed "$PHOTOIDX" scan --db timed.db --json lib >/dev/null &&
	ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=clock_gettime -o untimed "$PHOTOIDX" scan --db untimed.db -q lib &&
	grep -q CLOCK_THREAD_CPUTIME_ID timed &&
	! grep -q CLOCK_THREAD_CPUTIME_ID untimed
'

test_expect_success 'excluded folders, symlinks and the catalog are not indexed' '
	test "$(q "select count(*) from file_info where path like '\''%thumbnails%'\'' or path like '\''%eaDir%'\'' or name like '\''link-%'\''")" = 0
'

test_expect_success 'EXIF values come back as written (little endian)' '
	q -separator "|" "select make, model, lens, date_taken, date_tz, date_source, exposure_s, fnumber, iso,
		focal_mm, orientation, width, height, gps_lat, gps_lon, gps_alt_m, mime, media
		from file_info where name = '\''IMG_0001.JPG'\''" |
		awk -F "|" "{ printf \"%s|%s|%s|%s|%s|%s|%s|%s|%s|%.1f|%s|%s|%s|%.7f %.7f %.3f|%s|%s\\n\",
			\$1, \$2, \$3, \$4, \$5, \$6, \$7, \$8, \$9, \$10, \$11, \$12, \$13, \$14, \$15, \$16, \$17, \$18 }" >actual &&
	q "select focal_mm * 1000 - 50000 from file_info where name = '\''IMG_0001.JPG'\''" | grep -q "^0\(\.0\)\?$" &&
	echo "Canon|Canon EOS 5D|EF 24-70mm f/2.8L|2023-07-14T10:11:12.25|+02:00|DateTimeOriginal|0.004|2.8|400|50.0|6|64|48|48.8583701 2.2944813 35.500|image/jpeg|image" >expect &&
	diff expect actual
'

test_expect_success 'the pixel size is the image'\''s own, not the EXIF claim' '
	test "$(q "select width || '\''x'\'' || height from file_info where name = '\''IMG_0001.JPG'\''")" = 64x48 &&
	test "$(q "select width || '\''x'\'' || height from file_info where name = '\''plain.jpg'\''")" = 32x16
'

test_expect_success 'big-endian EXIF, southern and western GPS, altitude below sea level' '
	q -separator "|" "select make, model, date_taken, gps_lat, gps_lon, gps_alt_m
		from file_info where name = '\''IMG_0002.JPG'\''" |
		awk -F "|" "{ printf \"%s|%s|%s|%.7f %.7f %.2f\\n\", \$1, \$2, \$3, \$4, \$5, \$6 }" >actual &&
	echo "NIKON|D750|2023-07-15T08:00:00|-33.8567844 -151.2152967 -12.25" >expect &&
	diff expect actual
'

test_expect_success 'EXIF is found behind other APPn segments and beside XMP' '
	test "$(q "select make || '\''/'\'' || date_taken from file_info where name = '\''with apps.jpg'\''")" = "Sony/2024-01-02T03:04:05"
'

test_expect_success 'a TIFF file gives its EXIF too' '
	test "$(q "select mime || '\''|'\'' || make || '\''|'\'' || date_taken from file_info where name = '\''scan.tif'\''")" = "image/tiff|Epson|2024-02-03T04:05:06"
'

test_expect_success 'files without metadata: typed by content, no meta fields, not errors' '
	test "$(q "select mime || '\''|'\'' || coalesce(make, '\''-'\'') || '\''|'\'' || state from file_info where name = '\''notes.txt'\''")" = "application/octet-stream|-|ok" &&
	test "$(q "select mime || '\''|'\'' || size || '\''|'\'' || state || '\''|'\'' || md5 from file_info where name = '\''empty.jpg'\''")" = "application/x-empty|0|ok|d41d8cd98f00b204e9800998ecf8427e" &&
	test "$(q "select count(*) from file_info where name = '\''plain.jpg'\'' and make is null and date_taken is null")" = 1
'

test_expect_success 'file_info gives the full path, dir, size, mtime, times seen' '
	test "$(q "select hex(path) from file_info where name = '\''big.jpg'\''" | unhex)" = "$TRASH/lib/2024/big.jpg" &&
	test "$(q "select hex(dir) from file_info where name = '\''big.jpg'\''" | unhex)" = "$TRASH/lib/2024" &&
	test "$(q "select size from file_info where name = '\''big.jpg'\''")" = "$(stat -c %s lib/2024/big.jpg)" &&
	test "$(q "select mtime_ns / 1000000000 from file_info where name = '\''big.jpg'\''")" = "$(stat -c %Y lib/2024/big.jpg)" &&
	test "$(q "select count(*) from file_info where first_seen_at > 0 and last_seen_at >= first_seen_at and hashed_at > 0")" = 8
'

test_sqlite_only 'journal_mode and integrity_check are PRAGMAs of the SQLite file'
test_expect_success 'the catalog is in WAL mode and sound' '
	test "$(q "pragma journal_mode")" = wal &&
	sound
'

test_expect_success 'the scan is recorded with its counters' '
	test "$(q "select state || '\''|'\'' || n_new || '\''|'\'' || exit_status || '\''|'\'' || (case when bytes_read > 0 then 1 else 0 end) from scans")" = "done|8|0|1"
'

test_expect_success 'every file has an "added" change-log entry' '
	test "$(q "select count(distinct file_id) from changes where kind = '\''added'\''")" = 8
'

test_sqlite_only 'the default catalog is an SQLite file under the data directory'
test_expect_success 'default catalog: $XDG_DATA_HOME/photoidx/catalog.db' '
	px scan -q lib &&
	test -f "$XDG_DATA_HOME/photoidx/catalog.db" &&
	test "$(sqlite3 "$XDG_DATA_HOME/photoidx/catalog.db" "select count(*) from files")" = 8
'

test_sqlite_only 'the default catalog is an SQLite file under the data directory'
test_expect_success 'default catalog without XDG_DATA_HOME: ~/.local/share/photoidx/catalog.db' '
	(unset XDG_DATA_HOME && px scan -q lib) &&
	test -f "$HOME/.local/share/photoidx/catalog.db"
'

test_sqlite_only 'a catalog file inside the scanned tree is an SQLite file (its -wal and -shm too)'
test_expect_success 'a catalog inside the scanned tree does not index itself' '
	px scan -q --db lib/2024/cat.db lib &&
	test "$(sqlite3 lib/2024/cat.db "select count(*) from files where name like '\''cat.db%'\''")" = 0 &&
	rm -f lib/2024/cat.db*
'

test_expect_success 'the human summary names every count and the bytes read' '
	catalog_rm "$DB" &&
	px scan --db "$DB" lib >out &&
	grep -q "^8 new, 0 changed, 0 moved, 0 missing, 0 unchanged, 0 errors; read .* in .* s (.* MB/s)$" out
'

test_expect_success 'overlapping roots are walked once' '
	catalog_rm "$DB" &&
	px scan --db "$DB" --json lib lib/2024 lib/ >summary.json &&
	test "$(jq .new summary.json)" = 8 &&
	test "$(jq ".roots | length" summary.json)" = 1
'

test_expect_success 'a nested root is found under its parent past a sibling that sorts between' '
	mkdir -p p/2021 p-old && echo a >p/2021/a.txt && echo b >p-old/b.txt && age p p-old &&
	px scan --db nested.db --json p p-old p/2021 >s.json &&
	test "$(jq -c .roots s.json)" = "[\"$TRASH/p\",\"$TRASH/p-old\"]" &&
	test "$(qdb nested.db "select count(*) from files")" = 2
'

test_expect_success '--exclude skips names and, with a slash, paths' '
	catalog_rm "$DB" &&
	px scan --db "$DB" -q --exclude "*.txt" --exclude "*/2023/trip" lib &&
	test "$(q "select count(*) from files")" = 5 &&
	test "$(q "select count(*) from file_info where name like '\''%.txt'\'' or path like '\''%/trip/%'\''")" = 0
'

test_expect_success '--no-default-excludes indexes .thumbnails and @eaDir too' '
	catalog_rm "$DB" &&
	px scan --db "$DB" -q --no-default-excludes lib &&
	test "$(q "select count(*) from files")" = 10
'

test_expect_success 'another mount is not crossed unless asked' '
	if ! mkdir -p lib/mnt || ! mount -t tmpfs -o size=1m none lib/mnt 2>/dev/null; then
		echo "cannot mount a tmpfs here: not checked"; exit 0
	fi
	echo inside >lib/mnt/inside.txt &&
	catalog_rm "$DB" &&
	set +e
	px scan --db "$DB" -q lib; rc=$?
	n1=$(q "select count(*) from file_info where name = '\''inside.txt'\''")
	px scan --db "$DB" -q --cross-mounts lib; rc2=$?
	n2=$(q "select count(*) from file_info where name = '\''inside.txt'\''")
	umount lib/mnt
	set -e
	test $rc = 0 && test $rc2 = 0 && test "$n1" = 0 && test "$n2" = 1
'

test_done
