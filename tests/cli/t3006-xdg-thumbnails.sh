#!/bin/sh
# export --xdg-thumbnails writes the freedesktop.org thumbnail cache from
# the catalog's thumbnails: normal/, large/, x-large/, PNG named by the MD5
# of the file's URI (its bytes percent-encoded: spaces, '%', '#', a
# newline, bytes that are not UTF-8), turned upright by EXIF, with the
# specification's keys; files 0600, folders 0700.  GNOME's own thumbnail
# factory (libgnome-desktop, through GObject introspection) must find each
# one as valid for the file's URI and mtime.  No image is opened; files
# not on disk, in error, offline or without a thumbnail get none; a
# second export writes nothing; a changed file is written again.
. "$(dirname "$0")/lib.sh"

# a Python with GObject introspection and GNOME's desktop library
gi_python=""
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null 2>&1 &&
		"$p" -c "import gi; gi.require_version('GnomeDesktop', '3.0'); from gi.repository import GnomeDesktop" 2>/dev/null; then
		gi_python=$p
		break
	fi
done
if [ -z "$gi_python" ]; then
	echo "1..0 # SKIP python3-gi or gir1.2-gnomedesktop-3.0 is missing (contrib/debian-deps.sh test installs them)"
	exit 0
fi

# lookup.py SIZE PATH...: for each file, the thumbnail GNOME's factory
# finds valid for its URI and mtime in $XDG_CACHE_HOME/thumbnails, or
# "none"; a line per file: the path as Python shows it, then the answer.
cat >lookup.py <<'PY'
import os, sys
args = [os.fsencode(a) for a in sys.argv[1:]]
del sys.argv[1:]        # Gdk's overrides read sys.argv as UTF-8
import gi
gi.require_version("GnomeDesktop", "3.0")
from gi.repository import GnomeDesktop, Gio
size = {b"normal": GnomeDesktop.DesktopThumbnailSize.NORMAL, b"large": GnomeDesktop.DesktopThumbnailSize.LARGE,
        b"x-large": GnomeDesktop.DesktopThumbnailSize.XLARGE}[args[0]]
factory = GnomeDesktop.DesktopThumbnailFactory.new(size)
for path in args[1:]:
    uri = Gio.File.new_for_path(path).get_uri()
    got = factory.lookup(uri, int(os.stat(path).st_mtime))
    print(repr(path), got or "none")
PY

# pngs.py FILE...: each PNG's size and tEXt keys, one line per file
cat >pngs.py <<'PY'
import struct, sys, zlib
for f in sys.argv[1:]:
    b = open(f, "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n", f
    p, text, ihdr = 8, {}, None
    while p < len(b):
        n, = struct.unpack(">I", b[p:p + 4]); t = b[p + 4:p + 8]; d = b[p + 8:p + 8 + n]
        assert zlib.crc32(t + d) == struct.unpack(">I", b[p + 8 + n:p + 12 + n])[0], f
        if t == b"IHDR": ihdr = struct.unpack(">IIBB", d[:10])
        if t == b"tEXt":
            k, v = d.split(b"\0", 1); text[k.decode()] = v.decode("latin-1")
        p += 12 + n
    print("%dx%d depth=%d type=%d" % ihdr, " ".join("%s=%s" % kv for kv in sorted(text.items())))
PY

cache=$TRASH/cache
export XDG_CACHE_HOME="$cache"
nl='
'

# the PNG of PATH in folder SIZE: its name, the MD5 of GLib's URI of it
png_of() {
	"$gi_python" -c "import os, sys, hashlib; d, p = sys.argv[1], os.fsencode(sys.argv[2]); del sys.argv[1:]
from gi.repository import Gio
print(os.path.join(d, hashlib.md5(Gio.File.new_for_path(p).get_uri().encode()).hexdigest() + '.png'))" \
		"$cache/thumbnails/$1" "$2"
}

test_expect_success 'setup: landscape, portrait turned by EXIF, mirrored, tiny, cut; names a URI must escape; scanned with thumbnails' '
	mkdir -p "lib/a b" &&
	mkfix jpeg lib/land.jpg --width 2000 --height 1500 --size 300000 &&
	mkfix jpeg lib/port.jpg --width 1000 --height 2000 --size 200000 --orientation 6 --seed 2 &&
	mkfix jpeg lib/mirror.jpg --width 900 --height 600 --size 60000 --orientation 2 --seed 3 &&
	mkfix jpeg lib/tiny.jpg --width 64 --height 48 --seed 4 &&
	mkfix jpeg lib/cut.jpg --width 1600 --height 1200 --size 200000 --seed 5 --truncate 90000 &&
	mkfix jpeg "lib/a b/50% #1.jpg" --width 600 --height 400 --size 30000 --seed 6 &&
	mkfix jpeg "lib/a b/line${nl}break.jpg" --width 600 --height 400 --size 30000 --seed 7 &&
	mkfix jpeg "lib/a b/$(printf "latin\351.jpg")" --width 600 --height 400 --size 30000 --seed 8 &&
	mkfix jpeg lib/gone.jpg --width 600 --height 400 --size 30000 --seed 9 &&
	mkfix jpeg lib/err.jpg --width 600 --height 400 --size 30000 --seed 10 &&
	age lib && { px scan --db "$DB" -q --thumbnails lib || test $? = 1; } &&
	rm lib/gone.jpg && { px scan --db "$DB" -q lib || test $? = 1; } &&
	q "update files set state = '\''error'\'', error = '\''a test'\'' where name = '\''err.jpg'\''" &&
	test "$(q "select count(*) from file_info where state = '\''ok'\''")" = 7
'

test_expect_success 'the export writes three PNG files for each file on disk with a thumbnail, opening no image (inotify)' '
	command -v inotifywait >/dev/null || { echo "inotifywait missing: sh contrib/debian-deps.sh test"; exit 1; }
	{ inotifywait -q -m -r -e open,access --format "%e %w%f" lib >events 2>/dev/null & } &&
	w=$! && sleep 0.5 &&
	px export --db "$DB" --xdg-thumbnails 2>err &&
	sleep 0.3; kill $w; wait $w 2>/dev/null || true;
	grep -q "thumbnails.: 7 files, 7 with a thumbnail in the catalog; 21 PNG files written, 0 up to date" err &&
	! grep -q "\.jpg$" events &&
	test "$(find "$cache/thumbnails" -type f | wc -l)" = 21 &&
	for d in normal large x-large; do test "$(ls "$cache/thumbnails/$d" | wc -l)" = 7 || exit 1; done
'

test_expect_success 'GNOME'\''s thumbnail factory finds each one valid for the URI and mtime, in every size' '
	for size in normal large x-large; do
		"$gi_python" lookup.py $size lib/*.jpg lib/a\ b/* >found.$size &&
		cat found.$size &&
		test "$(grep -c " $cache/thumbnails/$size/[0-9a-f]\{32\}\.png\$" found.$size)" = 7 &&
		test "$(grep -c " none\$" found.$size)" = 2 &&
		grep -q "cut.jpg. none\$" found.$size && grep -q "err.jpg. none\$" found.$size || exit 1
	done
'

test_expect_success 'and finds none for another mtime: the check above can fail' '
	mtime=$(stat -c %Y lib/land.jpg) &&
	touch -d "1 day ago" lib/land.jpg &&
	"$gi_python" lookup.py large lib/land.jpg >found &&
	touch -d "@$mtime" lib/land.jpg &&
	grep -q " none\$" found &&
	"$gi_python" lookup.py large lib/land.jpg | grep -q /large/
'

test_expect_success 'the URI'\''s bytes are percent-encoded: space, %, #, a newline, a byte that is not UTF-8' '
	for size in normal large x-large; do
		pngs=$(ls "$cache/thumbnails/$size"/*.png) && python3 pngs.py $pngs >keys.$size || exit 1
	done &&
	grep -q "Thumb::URI=file://$TRASH/lib/a%20b/50%25%20%231.jpg\$" keys.large &&
	grep -q "Thumb::URI=file://$TRASH/lib/a%20b/line%0Abreak.jpg\$" keys.large &&
	grep -q "Thumb::URI=file://$TRASH/lib/a%20b/latin%E9.jpg\$" keys.large &&
	test "$(png_of large "lib/a b/latin$(printf "\351").jpg")" = \
		"$cache/thumbnails/large/$(printf "file://%s/lib/a%%20b/latin%%E9.jpg" "$TRASH" | md5sum | cut -c1-32).png"
'

test_expect_success 'sizes: upright by EXIF, fitted, never enlarged; the keys of the specification' '
	python3 pngs.py "$(png_of x-large lib/port.jpg)" "$(png_of large lib/port.jpg)" "$(png_of normal lib/port.jpg)" >port &&
	cat port &&
	sed -n 1p port | grep -q "^512x256 depth=8 type=2 " &&
	sed -n 2p port | grep -q "^256x128 " &&
	sed -n 3p port | grep -q "^128x64 " &&
	python3 pngs.py "$(png_of x-large lib/tiny.jpg)" "$(png_of normal lib/tiny.jpg)" | grep -c "^64x48 " | grep -q 2 &&
	python3 pngs.py "$(png_of normal lib/mirror.jpg)" | grep -q "^128x85 " &&
	size=$(wc -c <lib/port.jpg) && mtime=$(stat -c %Y lib/port.jpg) &&
	sed -n 2p port | grep -q " Software=photoidx [0-9.]* Thumb::Image::Height=2000 Thumb::Image::Width=1000 Thumb::MTime=$mtime Thumb::Mimetype=image/jpeg Thumb::Size=$size Thumb::URI=file://$TRASH/lib/port.jpg\$"
'

if command -v convert >/dev/null 2>&1 && command -v compare >/dev/null 2>&1; then
test_expect_success 'mirrored and turned: the pixels, against the stored 512 px rendition (ImageMagick)' '
	for f in port mirror; do
		q "select hex(t.xlarge_jpeg) from thumbs t join files f on f.md5 = t.md5 and f.size = t.size where f.name = '\''$f.jpg'\''" >$f.hex &&
		python3 -c "import sys; sys.stdout.buffer.write(bytes.fromhex(open(\"$f.hex\").read().strip()))" >$f.jpg || exit 1
	done &&
	convert port.jpg -rotate 90 port-up.png && convert mirror.jpg -flop mirror-up.png &&
	convert port.jpg -rotate 270 port-wrong.png && convert mirror.jpg mirror-wrong.png &&
	right=$(compare -metric RMSE port-up.png "$(png_of x-large lib/port.jpg)" null: 2>&1 | sed "s/.*(\(.*\))/\1/") &&
	wrong=$(compare -metric RMSE port-wrong.png "$(png_of x-large lib/port.jpg)" null: 2>&1 | sed "s/.*(\(.*\))/\1/") &&
	echo "port: $right, the wrong way $wrong" &&
	awk -v r="$right" -v w="$wrong" "BEGIN { exit !(r < 0.02 && w > 0.1) }" &&
	right=$(compare -metric RMSE mirror-up.png "$(png_of x-large lib/mirror.jpg)" null: 2>&1 | sed "s/.*(\(.*\))/\1/") &&
	wrong=$(compare -metric RMSE mirror-wrong.png "$(png_of x-large lib/mirror.jpg)" null: 2>&1 | sed "s/.*(\(.*\))/\1/") &&
	echo "mirror: $right, the wrong way $wrong" &&
	awk -v r="$right" -v w="$wrong" "BEGIN { exit !(r < 0.02 && w > 0.1) }"
'
else
	test_skip 'mirrored and turned: the pixels' 'ImageMagick is missing (contrib/debian-deps.sh test installs it)'
fi

test_expect_success 'files 0600, folders 0700' '
	test "$(stat -c %a "$cache/thumbnails")" = 700 &&
	for d in normal large x-large; do test "$(stat -c %a "$cache/thumbnails/$d")" = 700 || exit 1; done &&
	test "$(find "$cache/thumbnails" -type f ! -perm 600 | wc -l)" = 0 &&
	test "$(find "$cache/thumbnails" -name ".*" | wc -l)" = 0
'

test_expect_success 'a second export writes nothing; a changed file is written again' '
	ls -li --time-style=full-iso "$cache/thumbnails/large" >before &&
	px export --db "$DB" --xdg-thumbnails 2>err &&
	grep -q "0 PNG files written, 21 up to date" err &&
	ls -li --time-style=full-iso "$cache/thumbnails/large" >after && cmp before after &&
	touch -d "3 days ago" lib/land.jpg && px scan --db "$DB" -q lib &&
	px export --db "$DB" --xdg-thumbnails 2>err &&
	grep -q "3 PNG files written, 18 up to date" err &&
	"$gi_python" lookup.py x-large lib/land.jpg | grep -q "/x-large/"
'

test_expect_success 'a thumbnail GNOME made (same URI and mtime) is kept; one of an older mtime is replaced' '
	p=$(png_of large lib/tiny.jpg) && printf "not ours" >>"$p" && cp "$p" kept.png &&
	px export --db "$DB" --xdg-thumbnails 2>err && cmp kept.png "$p" &&
	python3 - "$p" <<-\PY &&
	import struct, sys, zlib
	b = bytearray(open(sys.argv[1], "rb").read())
	i = b.find(b"Thumb::MTime\0") + len("Thumb::MTime\0")
	b[i] = ord("1") if b[i] != ord("1") else ord("2")
	n = b.rfind(b"tEXt", 0, i) - 4
	ln, = struct.unpack(">I", b[n:n + 4])
	b[n + 8 + ln:n + 12 + ln] = struct.pack(">I", zlib.crc32(bytes(b[n + 4:n + 8 + ln])))
	open(sys.argv[1], "wb").write(b)
	PY
	px export --db "$DB" --xdg-thumbnails 2>err && grep -q "1 PNG files written" err &&
	! cmp -s kept.png "$p" && "$gi_python" lookup.py large lib/tiny.jpg | grep -q "/large/"
'

test_expect_success 'DIR given: the cache there; files offline (volume not mounted) get none' '
	px export --db "$DB" --xdg-thumbnails "$TRASH/other" 2>err &&
	test "$(find other -name "*.png" | wc -l)" = 21 &&
	q "update volumes set is_online = 0" &&
	px export --db "$DB" --xdg-thumbnails "$TRASH/offline" 2>err &&
	grep -q "0 files, 0 with a thumbnail" err &&
	test "$(find offline -name "*.png" | wc -l)" = 0 &&
	q "update volumes set is_online = 1"
'

test_expect_success 'a damaged stored thumbnail: that file is skipped with a warning (exit 1), the others written' '
	q "update thumbs set xlarge_jpeg = large_jpeg where md5 = (select md5 from files where name = '\''land.jpg'\'')" &&
	q "update thumbs set large_jpeg = substr(large_jpeg, 1, 300) where md5 = (select md5 from files where name = '\''land.jpg'\'')" &&
	test_expect_code 1 px export --db "$DB" --xdg-thumbnails "$TRASH/damaged" 2>err &&
	grep -q "cannot use the catalog.s thumbnail of .*land.jpg.: a stored thumbnail is damaged" err &&
	test "$(find damaged -name "*.png" | wc -l)" = 18
'

test_expect_success 'usage: one export at a time, no --output, no --missing' '
	test_expect_code 64 px export --db "$DB" --xdg-thumbnails --kphotoalbum lib 2>err &&
	grep -q "give one of --format, --kphotoalbum and --xdg-thumbnails" err &&
	test_expect_code 64 px export --db "$DB" --xdg-thumbnails -o x 2>err &&
	test_expect_code 64 px export --db "$DB" --xdg-thumbnails --missing 2>err &&
	test_expect_code 73 px export --db "$DB" --xdg-thumbnails /proc/nowhere 2>err &&
	grep -q "cannot create ./proc/nowhere" err
'

test_done
