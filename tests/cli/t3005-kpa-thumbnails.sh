#!/bin/sh
# export --kphotoalbum also writes KPhotoAlbum's thumbnail cache from the
# catalog's thumbnails (DIR/.thumbnails: thumbnailindex version 5 and
# thumb-N): at the size of kphotoalbumrc (or of the cache already there),
# turned by each image's angle, keyed by index.xml's paths; no image file
# opened.  A second export writes nothing; a changed image gets a new one,
# a moved one keeps its entry; a cache KPhotoAlbum left is merged, a
# damaged one read as far as it goes; the data files roll over; nothing is
# written while KPhotoAlbum runs.  Then the real KPhotoAlbum 5.9 shows the
# library without opening an image, building a thumbnail, or finding one
# of the wrong size (kpa-thumbnailtool).
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null 2>&1 || ! command -v xmllint >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 or xmllint is missing (contrib/debian-deps.sh test installs them)"
	exit 0
fi
export TZ=UTC

# The cache of DIR as text: a header line, then one line per entry
# (path, file, offset, size, the JPEG's width x height from its SOF);
# fails on an entry whose bytes are not a JPEG inside its data file.
cat >kpaidx.py <<'PY'
import os, struct, sys
d = os.path.join(sys.argv[1], ".thumbnails")
b = open(os.path.join(d, "thumbnailindex"), "rb").read()
version, = struct.unpack(">i", b[:4])
p = 4
size = None
if version == 5:
    size, = struct.unpack(">i", b[4:8]); p = 8
cur, off, count = struct.unpack(">iii", b[p:p + 12]); p += 12
print("version=%d size=%s current=%d,%d count=%d" % (version, size, cur, off, count))
def sof(j):
    i = 2
    while i + 9 < len(j):
        if j[i] != 0xFF: raise SystemExit("not a marker at %d" % i)
        m = j[i + 1]
        if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", j[i + 5:i + 9]); return "%dx%d" % (w, h)
        i += 2 + struct.unpack(">H", j[i + 2:i + 4])[0]
    raise SystemExit("no SOF")
rows = []
while p < len(b):
    n, = struct.unpack(">I", b[p:p + 4]); p += 4
    name = b[p:p + n].decode("utf-16-be"); p += n
    f, o, s = struct.unpack(">iii", b[p:p + 12]); p += 12
    data = open(os.path.join(d, "thumb-%d" % f), "rb").read()
    j = data[o:o + s]
    if len(j) != s or j[:2] != b"\xff\xd8" or j[-2:] != b"\xff\xd9":
        raise SystemExit("%s: not a JPEG at thumb-%d %d" % (name, f, o))
    rows.append("%s %d %d %d %s" % (name, f, o, s, sof(j)))
print("\n".join(rows))
PY

idx() {
	python3 kpaidx.py "$1"
}

# an entry's dimensions, or its location (file,offset)
dims() {
	idx "$1" | awk -v f="$2" '$1 == f { print $5 }'
}
at() {
	idx "$1" | awk -v f="$2" '$1 == f { print $2 "," $3 }'
}

test_expect_success 'setup: landscape, portrait turned by EXIF, half-turned, tiny, cut, a copy; scanned with thumbnails' '
	mkdir -p lib/2024 lib/copies &&
	mkfix jpeg lib/2024/land.jpg --width 2000 --height 1500 --size 300000 --date "2024:01:01 10:00:00" &&
	mkfix jpeg lib/2024/port.jpg --width 1000 --height 2000 --size 200000 --orientation 6 --seed 2 --date "2024:01:02 10:00:00" &&
	mkfix jpeg lib/2024/r180.jpg --width 800 --height 600 --size 60000 --orientation 3 --seed 3 --date "2024:01:03 10:00:00" &&
	mkfix jpeg lib/2024/tiny.jpg --width 64 --height 48 --seed 4 --date "2024:01:04 10:00:00" &&
	mkfix jpeg lib/2024/cut.jpg --width 1600 --height 1200 --size 200000 --seed 5 --truncate 90000 &&
	cp lib/2024/land.jpg lib/copies/land-copy.jpg &&
	age lib && { px scan --db "$DB" -q --thumbnails lib || test $? = 1; }
'

test_expect_success 'the export writes the cache: version 5, 256 px, the turned ones turned, the tiny one enlarged, copies sharing bytes' '
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "\.thumbnails (256 px): 5 thumbnails, 5 written, 0 following a moved image, 0 dropped (changed), 1 left to KPhotoAlbum" err &&
	idx lib >cache &&
	head -n 1 cache | grep -q "^version=5 size=256 current=0,[1-9][0-9]* count=5$" &&
	test "$(dims lib 2024/land.jpg)" = 256x192 &&
	test "$(dims lib 2024/port.jpg)" = 256x128 &&
	test "$(dims lib 2024/r180.jpg)" = 256x192 &&
	test "$(dims lib 2024/tiny.jpg)" = 256x192 &&
	test -z "$(dims lib 2024/cut.jpg)" &&
	test "$(at lib copies/land-copy.jpg)" = "$(at lib 2024/land.jpg)" &&
	test "$(xmllint --xpath "string(//image[@file=\"2024/port.jpg\"]/@angle)" lib/index.xml)" = 90
'

test_expect_success 'the unturned 256 px rendition is written as the catalog has it: no decoding' '
	q "select hex(t.large_jpeg) from thumbs t join files f on f.md5 = t.md5 and f.size = t.size
	   where f.name = '\''land.jpg'\''" >want.hex &&
	python3 -c "import sys; sys.stdout.buffer.write(bytes.fromhex(open(\"want.hex\").read().strip()))" >want.jpg &&
	python3 - lib <<-\PY
	import os, struct, sys
	b = open("lib/.thumbnails/thumbnailindex", "rb").read()
	p = 20
	want = open("want.jpg", "rb").read()
	while p < len(b):
	    n, = struct.unpack(">I", b[p:p + 4]); name = b[p + 4:p + 4 + n].decode("utf-16-be"); p += 4 + n
	    f, o, s = struct.unpack(">iii", b[p:p + 12]); p += 12
	    if name == "2024/land.jpg":
	        got = open("lib/.thumbnails/thumb-%d" % f, "rb").read()[o:o + s]
	        sys.exit(0 if got == want else 1)
	sys.exit(1)
	PY
'

test_expect_success 'no image file is opened by the export (inotify)' '
	command -v inotifywait >/dev/null || { echo "inotifywait missing: sh contrib/debian-deps.sh test"; exit 1; }
	rm -rf lib/.thumbnails &&
	{ inotifywait -q -m -r -e open,access --format "%e %w%f" lib >events 2>/dev/null & } &&
	w=$! && sleep 0.5 &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	sleep 0.3; kill $w; wait $w 2>/dev/null || true;
	grep -q "5 written" err &&
	! grep -q "\.jpg$" events
'

test_expect_success 'a second export writes nothing: index.xml, exif-info.db and the cache up to date' '
	cp lib/.thumbnails/thumbnailindex index.before &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "up to date" err &&
	cmp index.before lib/.thumbnails/thumbnailindex
'

test_expect_success 'a changed image gets a new thumbnail, its copy keeps the old; a moved one keeps its entry, unwritten' '
	old_end=$(idx lib | sed -n "1s/.*current=0,\([0-9]*\).*/\1/p") &&
	mkfix jpeg lib/2024/land.jpg --width 1200 --height 800 --size 100000 --seed 9 --date "2024:01:01 10:00:00" &&
	mkdir lib/moved && mv lib/2024/tiny.jpg lib/moved/tiny.jpg &&
	age lib && { px scan --db "$DB" -q --thumbnails lib || test $? = 1; } &&
	tiny_at=$(at lib 2024/tiny.jpg) &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "1 moved, 1 changed" err &&
	grep -q "5 thumbnails, 1 written, 1 following a moved image" err &&
	test "$(dims lib 2024/land.jpg)" = 256x171 &&
	test "$(dims lib copies/land-copy.jpg)" = 256x192 &&
	test "$(at lib moved/tiny.jpg)" = "$tiny_at" &&
	test -z "$(at lib 2024/tiny.jpg)" &&
	test "$(at lib 2024/land.jpg)" = "0,$old_end"
'

test_expect_success 'a changed image the catalog has no thumbnail of loses its old one (KPhotoAlbum makes it anew)' '
	mkfix jpeg lib/2024/r180.jpg --width 1600 --height 1200 --size 200000 --seed 10 --truncate 90000 &&
	age lib && { px scan --db "$DB" -q --thumbnails lib || test $? = 1; } &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "1 dropped (changed)" err &&
	test -z "$(at lib 2024/r180.jpg)"
'

test_expect_success 'what KPhotoAlbum appended is kept: its own thumbnail of cut.jpg, and new ones go after it' '
	python3 - <<-\PY &&
	import os, struct
	d = "lib/.thumbnails"
	b = open(d + "/thumbnailindex", "rb").read()
	cur, off = struct.unpack(">ii", b[8:16])
	jpeg = open("want.jpg", "rb").read()
	with open(d + "/thumb-%d" % cur, "ab") as f:
	    assert f.tell() == off
	    f.write(jpeg)
	name = "2024/cut.jpg".encode("utf-16-be")
	with open(d + "/thumbnailindex", "ab") as f:    # KPhotoAlbum appends, header as it was
	    f.write(struct.pack(">I", len(name)) + name + struct.pack(">iii", cur, off, len(jpeg)))
	PY
	kpa_at=$(at lib 2024/cut.jpg) && test -n "$kpa_at" &&
	mkfix jpeg lib/2024/new.jpg --width 900 --height 600 --size 60000 --seed 11 --date "2024:02:01 10:00:00" &&
	age lib && { px scan --db "$DB" -q --thumbnails lib || test $? = 1; } &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "1 written" err &&
	test "$(at lib 2024/cut.jpg)" = "$kpa_at" &&
	new_off=$(at lib 2024/new.jpg | cut -d, -f2) &&
	test "$new_off" -gt "${kpa_at#*,}"
'

test_expect_success 'a damaged index: what can be read is merged, the rest said and left to KPhotoAlbum' '
	n=$(idx lib | tail -n +2 | wc -l) &&
	size=$(wc -c <lib/.thumbnails/thumbnailindex) &&
	head -c $((size - 7)) lib/.thumbnails/thumbnailindex >cut && mv cut lib/.thumbnails/thumbnailindex &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "not all of .*thumbnailindex. could be read (it is damaged after entry $((n - 1))" err &&
	test "$(idx lib | tail -n +2 | wc -l)" = "$n" &&
	printf "JUNK" >lib/.thumbnails/thumbnailindex &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "version 1247104587, which KPhotoAlbum 5.x does not read" err &&
	idx lib | head -n 1 | grep -q "^version=5"
'

test_expect_success 'the data files roll over once past their size (a small one for the test), as KPhotoAlbum rolls them' '
	rm -rf lib/.thumbnails &&
	PIX_TEST_KPA_THUMB_FILE_BYTES=30000 px export --db "$DB" --kphotoalbum lib 2>err &&
	idx lib >rolled &&
	test -e lib/.thumbnails/thumb-1 &&
	python3 - <<-\PY
	import os
	rows = [l.split() for l in open("rolled").read().splitlines()[1:]]
	last = max(int(r[1]) for r in rows)
	for f in range(last + 1):
	    ends = sorted(int(r[2]) + int(r[3]) for r in rows if int(r[1]) == f)
	    size = os.path.getsize("lib/.thumbnails/thumb-%d" % f)
	    assert ends[-1] == size, (f, ends, size)
	    # every entry but the last of a file starts at or before the limit
	    starts = sorted(int(r[2]) for r in rows if int(r[1]) == f)
	    assert all(s <= 30000 for s in starts), starts
	    if f < last:
	        assert size > 30000, size
	head = open("rolled").readline()
	# the last file, or the next one when the last write filled it
	assert "current=%d," % last in head or "current=%d,0 " % (last + 1) in head, head
	PY
'

test_expect_success 'the size: thumbSize of the database in kphotoalbumrc for a new cache; an existing cache keeps its own' '
	mkdir -p "$HOME/.config" &&
	printf "[Thumbnails - %s/]\nthumbSize=200\n" "$TRASH/lib" >"$HOME/.config/kphotoalbumrc" &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	idx lib | head -n 1 | grep -q "size=256" &&
	rm -rf lib/.thumbnails &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "\.thumbnails (200 px)" err &&
	idx lib | head -n 1 | grep -q "size=200" &&
	test "$(dims lib 2024/land.jpg)" = 200x133 &&
	test "$(dims lib 2024/port.jpg)" = 200x100 &&
	test "$(dims lib moved/tiny.jpg)" = 200x150 &&
	rm -rf lib/.thumbnails "$HOME/.config/kphotoalbumrc" &&
	px export --db "$DB" --kphotoalbum lib 2>err && idx lib | head -n 1 | grep -q "size=256"
'

# A process named kphotoalbum (a copy of sh that waits), with ARGS.
fake_kpa() {
	cp "$(command -v sh)" "$TRASH/kphotoalbum" &&
	{ "$TRASH/kphotoalbum" -c "sleep 60; :" "$@" & } &&
	fake=$! &&
	i=0 && while [ "$(cat /proc/$fake/comm 2>/dev/null)" != kphotoalbum ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

test_expect_success 'nothing is written while KPhotoAlbum runs on the library (exit 2), by --db or by its last database' '
	cp lib/index.xml index.keep && cp lib/.thumbnails/thumbnailindex thumbs.keep &&
	mkfix jpeg lib/2024/later.jpg --seed 12 && age lib && { px scan --db "$DB" -q --thumbnails lib || test $? = 1; } &&
	fake_kpa kphotoalbum --db lib/index.xml &&
	{ px export --db "$DB" --kphotoalbum lib 2>err; rc=$?; kill $fake; wait $fake 2>/dev/null; test $rc = 2; } &&
	grep -q "cannot export to .*: KPhotoAlbum (pid $fake) runs with --db .lib/index.xml.; close it" err &&
	cmp index.keep lib/index.xml && cmp thumbs.keep lib/.thumbnails/thumbnailindex &&
	mkdir -p "$HOME/.config" && printf "[General]\nimageDBFile=%s\n" "$TRASH/lib/index.xml" >"$HOME/.config/kphotoalbumrc" &&
	fake_kpa kphotoalbum &&
	{ px export --db "$DB" --kphotoalbum lib 2>err; rc=$?; kill $fake; wait $fake 2>/dev/null; test $rc = 2; } &&
	grep -q "KPhotoAlbum (pid $fake) runs on its last database" err &&
	cmp index.keep lib/index.xml &&
	fake_kpa kphotoalbum --db "$TRASH/other/index.xml" &&
	{ px export --db "$DB" --kphotoalbum lib 2>err; rc=$?; kill $fake; wait $fake 2>/dev/null; test $rc = 0; } &&
	grep -q "1 added" err && rm "$HOME/.config/kphotoalbumrc"
'

# The real KPhotoAlbum (Debian's 5.9) under Xvfb, on the library with the
# cache photoidx wrote, asked to build every missing thumbnail at start-up
# ([Thumbnails] incrementalThumbnails=false): it must find none missing.
# Every open and access under lib/ is watched by inotify, which sees every
# process's (and io_uring's); `kpa NAME` runs it until its start-up line and
# a while after (the build starts 5 s after the start-up).
kpa() {
	mkdir -p "$TRASH/kpa-home/.config" "$TRASH/kpa-home/run" && chmod 700 "$TRASH/kpa-home/run" &&
	printf "[Notification Messages]\nVideoThumbnailerNotInstalled=false\n[Thumbnails]\nincrementalThumbnails=false\n" \
		>"$TRASH/kpa-home/.config/kphotoalbumrc" &&
	{ inotifywait -q -m -r -e open,access --format "%e %w%f" lib >"$1.events" 2>/dev/null & } &&
	w=$! && sleep 0.5 &&
	(
		export HOME="$TRASH/kpa-home" XDG_CONFIG_HOME="$TRASH/kpa-home/.config" XDG_RUNTIME_DIR="$TRASH/kpa-home/run"
		export QT_LOGGING_RULES="kphotoalbum.ImageManager*=true;kphotoalbum.timingInformation*=true"
		xvfb-run -a -s "-screen 0 1280x1024x24" kphotoalbum --db "$TRASH/lib/index.xml" >"$1.log" 2>&1 &
		pid=$!
		for i in $(seq 1 120); do grep -q "Loading Exif DB" "$1.log" && break; sleep 1; done
		sleep ${KPA_AFTER:-12}
		for p in $(pgrep -x kphotoalbum); do
			tr "\\0" " " </proc/$p/cmdline 2>/dev/null | grep -qF "$TRASH/lib/index.xml" && kill -TERM $p
		done
		wait $pid 2>/dev/null
		true
	);
	sleep 0.3; kill $w; wait $w 2>/dev/null
	grep -q "Loading Exif DB" "$1.log"
}

if ! why=$(kpa_gui_skip kpa-thumbnailtool inotifywait); then
test_expect_success 'kpa-thumbnailtool reads the cache: the count, and no thumbnail of the wrong size' '
	px export --db "$DB" --kphotoalbum lib 2>err &&
	n=$(idx lib | tail -n +2 | wc -l) &&
	kpa-thumbnailtool --info --check-thumbnail-dimensions lib >tool 2>&1 &&
	grep -q "Thumbnail index file version: 5" tool &&
	grep -q "Thumbnail storage dimensions: 256 pixels" tool &&
	grep -q "Number of thumbnails: $n\$" tool &&
	grep -q "No inconsistencies found" tool
'

test_expect_success 'KPhotoAlbum 5.9, building missing thumbnails at start-up, opens no image and leaves the cache as it is' '
	rm -f lib/2024/cut.jpg lib/2024/r180.jpg && age lib && px scan --db "$DB" -q lib && px forget --db "$DB" --missing >/dev/null &&
	rm -rf lib/.thumbnails lib/index.xml lib/index.xml~* lib/exif-info.db &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "0 left to KPhotoAlbum" err &&
	cp lib/.thumbnails/thumbnailindex thumbs.keep &&
	kpa start &&
	grep -q "Loaded [0-9]* (expected: [0-9]*) thumbnails" start.log &&
	! grep "\.jpg$" start.events &&
	cmp thumbs.keep lib/.thumbnails/thumbnailindex
'

test_expect_success 'and it does build a thumbnail missing from the cache, reading its image (so the check above can fail)' '
	python3 - <<-\PY &&
	import struct
	p = "lib/.thumbnails/thumbnailindex"
	b = open(p, "rb").read()
	out, i = bytearray(b[:20]), 20
	while i < len(b):
	    n, = struct.unpack(">I", b[i:i + 4]); e = b[i:i + 4 + n + 12]; i += 4 + n + 12
	    if e[4:4 + n].decode("utf-16-be") != "2024/port.jpg":
	        out += e
	open(p, "wb").write(out)
	PY
	kpa build &&
	grep -q "port\.jpg$" build.events &&
	test "$(dims lib 2024/port.jpg)" = 256x128
'
else
	test_skip 'kpa-thumbnailtool reads the cache' "$why"
	test_skip 'KPhotoAlbum 5.9 opens no image' "$why"
	test_skip 'and it does build a missing thumbnail' "$why"
fi

test_done
