#!/bin/sh
# scan --thumbnails: a thumbnail of every image from the read that makes
# its MD5 and metadata (each image opened once, inotify says), kept by
# content (MD5 and size): a move, a copy or an unchanged rescan decodes
# nothing again, a changed image gets a new one and the old goes with its
# last file; a cut image keeps its row with a note; status shows the
# table's size.
. "$(dirname "$0")/lib.sh"

thumbs() {
	q "select count(*) from thumbs"
}

# a scan: exit 1 too (cut.jpg, damaged, makes a scan that reads it exit 1)
scan() {
	px scan --db "$DB" "$@"
	test $? -le 1
}

# the JSON's counters: made, failed
made() {
	jq -c "[.thumbnails_made, .thumbnails_failed]" "$1"
}

test_expect_success 'setup: camera-sized, portrait, tiny and cut JPEGs, and a text file' '
	mkdir -p lib/2024 lib/other &&
	mkfix jpeg lib/2024/land.jpg --width 2000 --height 1500 --size 300000 --make Canon &&
	mkfix jpeg lib/2024/port.jpg --width 1000 --height 2000 --size 200000 --orientation 6 --seed 2 &&
	mkfix jpeg lib/2024/tiny.jpg --width 64 --height 48 --seed 3 &&
	mkfix jpeg lib/2024/cut.jpg --width 1600 --height 1200 --size 200000 --seed 4 --truncate 90000 &&
	echo notes >lib/other/notes.txt &&
	age lib
'

test_expect_success 'a scan without --thumbnails makes none' '
	scan -q --json lib >s.json &&
	test "$(made s.json)" = "[0,0]" &&
	test "$(thumbs)" = 0
'

test_expect_success 'scan --thumbnails reads the images again for them, and records no change' '
	n=$(q "select count(*) from changes") &&
	scan --thumbnails --json lib >s.json 2>err &&
	test "$(made s.json)" = "[3,1]" &&
	test "$(jq -c "[.new, .changed]" s.json)" = "[0,0]" &&
	test "$(q "select count(*) from changes")" = "$n" &&
	test "$(thumbs)" = 4
'

test_expect_success 'each rendition fits its edge, keeps the aspect, is a JPEG; none is enlarged' '
	q -separator " " "select fi.name, t.large_width, t.large_height, t.xlarge_width, t.xlarge_height, t.source
	  from file_info fi join files f on f.id = fi.id join thumbs t on t.md5 = f.md5 and t.size = f.size
	  where t.note is null order by fi.name" >dims &&
	cat >want <<-\EOF &&
	land.jpg 256 192 512 384 jpeg
	port.jpg 128 256 256 512 jpeg
	tiny.jpg 64 48 64 48 jpeg
	EOF
	diff want dims &&
	test "$(q "select count(*) from thumbs where note is null and substr(hex(large_jpeg), 1, 6) = '\''FFD8FF'\'' and substr(hex(xlarge_jpeg), 1, 6) = '\''FFD8FF'\''")" = 3
'

test_expect_success 'a cut image keeps its row and MD5, with a note why it has no thumbnail' '
	test "$(q "select t.note from file_info fi join files f on f.id = fi.id join thumbs t on t.md5 = f.md5 and t.size = f.size where fi.name = '\''cut.jpg'\''")" = "a truncated JPEG" &&
	test "$(q "select count(*) from file_info where name = '\''cut.jpg'\'' and md5 is not null")" = 1 &&
	test "$(q "select count(*) from thumbs where note is not null and large_jpeg is null")" = 1
'

test_expect_success 'file_thumbnails shows each thumbnailed file by its path' '
	test "$(q "select count(*) from file_thumbnails")" = 3 &&
	test "$(q "select orientation from file_thumbnails where path like '\''%/port.jpg'\''")" = 6
'

test_expect_success 'an unchanged rescan with --thumbnails opens no image (inotify)' '
	command -v inotifywait >/dev/null || { echo "inotifywait missing: sh contrib/debian-deps.sh test"; exit 1; }
	{ inotifywait -q -m -r -e open,access --format "%e %w%f" lib >events 2>/dev/null & } &&
	w=$! && sleep 0.5 &&
	scan --thumbnails --json lib >s.json &&
	sleep 0.3; kill $w; wait $w 2>/dev/null || true;
	test "$(made s.json)" = "[0,0]" &&
	test "$(jq .unchanged s.json)" = 5 &&
	! grep -q "\.jpg$" events
'

test_expect_success 'a new image is opened once, for its MD5, metadata and thumbnail alike' '
	mkfix jpeg lib/2024/new.jpg --width 3000 --height 2000 --size 600000 --seed 9 && age lib/2024/new.jpg &&
	{ inotifywait -q -m -r -e open --format "%e %w%f" lib >events 2>/dev/null & } &&
	w=$! && sleep 0.5 &&
	scan --thumbnails --json lib >s.json &&
	sleep 0.3; kill $w; wait $w 2>/dev/null || true;
	test "$(made s.json)" = "[1,0]" &&
	test "$(grep -c "new\.jpg$" events)" = 1 &&
	test "$(thumbs)" = 5
'

test_expect_success 'a moved image: its thumbnail follows by content, nothing decoded' '
	mkdir lib/moved && mv lib/2024/land.jpg lib/moved/land.jpg &&
	scan --thumbnails --json lib >s.json &&
	test "$(jq .moved s.json)" = 1 &&
	test "$(made s.json)" = "[0,0]" &&
	test "$(q "select count(*) from file_thumbnails where path like '\''%/moved/land.jpg'\''")" = 1
'

test_expect_success 'a copy is read for its MD5, not decoded: it shares its content thumbnail' '
	cp lib/moved/land.jpg lib/other/copy.jpg && age lib/other/copy.jpg &&
	scan --thumbnails --json lib >s.json &&
	test "$(jq .new s.json)" = 1 &&
	test "$(made s.json)" = "[0,0]" &&
	test "$(jq .thumbnails_known s.json)" = 1 &&
	test "$(thumbs)" = 5 &&
	test "$(q "select count(*) from file_thumbnails where path like '\''%land.jpg'\'' or path like '\''%copy.jpg'\''")" = 2
'

test_expect_success 'a new image of the same size as a known one is decoded all the same' '
	cp lib/moved/land.jpg lib/other/same.jpg &&
	printf "\125" | dd of=lib/other/same.jpg bs=1 seek=200000 conv=notrunc 2>/dev/null &&
	! cmp -s lib/moved/land.jpg lib/other/same.jpg && age lib/other/same.jpg &&
	scan --thumbnails --json lib >s.json &&
	test "$(jq "[.thumbnails_made + .thumbnails_failed, .thumbnails_known]" -c s.json)" = "[1,0]" &&
	test "$(thumbs)" = 6 &&
	rm lib/other/same.jpg && scan -q lib && px forget --db "$DB" --missing >/dev/null &&
	test "$(thumbs)" = 5
'

test_expect_success 'a changed image gets a new thumbnail; the old one goes with its last file' '
	old=$(q "select hex(md5) from file_info where name = '\''port.jpg'\''") &&
	mkfix jpeg lib/2024/port.jpg --width 1200 --height 800 --size 150000 --seed 5 && age lib/2024/port.jpg &&
	scan --thumbnails --json lib >s.json &&
	test "$(jq .changed s.json)" = 1 &&
	test "$(made s.json)" = "[1,0]" &&
	test "$(q "select count(*) from thumbs where hex(md5) = '\''$old'\''")" = 0 &&
	test "$(q "select large_width || '\''x'\'' || large_height from file_thumbnails where path like '\''%/port.jpg'\''")" = 256x171 &&
	test "$(thumbs)" = 5
'

test_expect_success 'forget --missing drops the thumbnails no file has any more, not a shared one' '
	rm lib/2024/new.jpg lib/other/copy.jpg &&
	scan -q lib &&
	px forget --db "$DB" --missing >/dev/null &&
	test "$(thumbs)" = 4 &&
	test "$(q "select count(*) from file_thumbnails where path like '\''%/moved/land.jpg'\''")" = 1
'

test_expect_success 'status shows the thumbnails and their size' '
	px status --db "$DB" >st &&
	grep -q "^thumbnails: 3 contents, .*; 1 contents with none" st &&
	px status --db "$DB" --json >st.json &&
	test "$(jq -c "[.thumbnails.contents, .thumbnails.with_thumbnail]" st.json)" = "[4,3]" &&
	test "$(jq ".thumbnails.bytes > 1000" st.json)" = true
'

test_expect_success '[scan] thumbnails = true in the config does what --thumbnails does; --no-thumbnails wins' '
	mkdir -p cfg/photoidx &&
	printf "[scan]\nthumbnails=true\n" >cfg/photoidx/config &&
	mkfix jpeg lib/2024/cfg.jpg --width 800 --height 600 --size 50000 --seed 12 && age lib/2024/cfg.jpg &&
	XDG_CONFIG_HOME="$TRASH/cfg" scan --no-thumbnails --json lib >s.json &&
	test "$(made s.json)" = "[0,0]" &&
	XDG_CONFIG_HOME="$TRASH/cfg" scan --json lib >s.json &&
	test "$(made s.json)" = "[1,0]" &&
	test_expect_code 64 px scan --db "$DB" --thumbnails --no-thumbnails lib 2>err &&
	grep -q "choose one" err
'

# decoding is slower than reading: a pool of 64 read buffers would only
# fill up beside the decoders (130-145 MB of peak RSS on 168 small images);
# 24 MiB in reads of 512 KiB keeps a hasher's MD5 lanes 5 to 8 large files
# wide
test_expect_success 'with thumbnails the read buffers are 24 MiB of 512 KiB reads unless --max-memory or --read-size says; without, 64 MiB of 1 MiB' '
	px scan --db "$DB" -v --thumbnails lib 2>err &&
	grep -q "48 read buffers of 512 KiB" err &&
	XDG_CONFIG_HOME="$TRASH/cfg" px scan --db "$DB" -v lib 2>err &&
	grep -q "48 read buffers of 512 KiB" err &&
	px scan --db "$DB" -v --thumbnails --max-memory 32M lib 2>err &&
	grep -q "64 read buffers of 512 KiB" err &&
	px scan --db "$DB" -v --thumbnails --read-size 1M lib 2>err &&
	grep -q "24 read buffers of 1024 KiB" err &&
	px scan --db "$DB" -v lib 2>err &&
	grep -q "64 read buffers of 1024 KiB" err
'

# A writer held back (another process holds the catalog's write lock) must
# not let the hashers' thumbnails pile up: the store queue holds at most
# 16 MiB of them.  2,500 images of noise make 64 KB of thumbnails each,
# 160 MB in all: unbounded, the queue held them (164-201 MB of peak RSS);
# bounded, 72 MB.  The lock is taken once the first rows are in (the
# pipeline is running), and the peak sampled while it is held.  An
# instrumented build's memory says nothing of the release's.
test_sqlite_only "another process holds the SQLite catalog's write lock, which holds the writer back"
test_expect_success 'a writer held back: the thumbnails waiting for it stay within 16 MiB' '
	mkdir noise &&
	mkfix jpeg "noise/IMG_%05d.jpg" --count 2500 --width 256 --height 192 --size 50000 --date "2024:01:01 00:00:00" &&
	age noise &&
	"$PHOTOIDX" scan --db "$DB" -q --thumbnails noise &
	scanner=$!
	i=0; until [ "$(q "select count(*) > 0 from file_thumbnails where path like '\''%/noise/%'\''")" = 1 ] || [ $i = 1000 ]; do sleep 0.02; i=$((i + 1)); done
	{ echo ".timeout 30000"; echo "BEGIN IMMEDIATE;"; sleep 6; echo "COMMIT;"; } | sqlite3 "$DB" &
	locker=$!
	hwm=0
	while kill -0 $locker 2>/dev/null; do
		h=$(sed -n "s/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p" /proc/$scanner/status 2>/dev/null) || true
		[ -n "$h" ] && hwm=$h
		sleep 0.05
	done
	wait $scanner &&
	echo "peak RSS while the writer waited: $hwm kB" &&
	test "$(q "select count(*) from file_thumbnails where path like '\''%/noise/IMG_%'\''")" = 2500 &&
	if [ "${SANITIZE:-}" = 1 ] || [ "${PIX_TEST_VALGRIND:-0}" = 1 ]; then
		echo "not compared: an instrumented build"
	else
		test "$hwm" -gt 0 && test "$hwm" -lt 110000
	fi
'

test_done
