#!/bin/sh
# scan --thumbnails from each source, cheapest first: a camera JPEG's MPF
# preview (its image not decoded), a RAW file's embedded JPEG preview (cut
# out of the bytes as they go by, turned back when the camera stored it
# upright), PNG, WebP and HEIC decoded; each file opened once (inotify);
# hostile headers get notes; the real samples run through it.
. "$(dirname "$0")/lib.sh"

scan() {
	px scan --db "$DB" "$@"
	test $? -le 1
}

# the thumbs row of the file named $1: source, note, large and x-large size
row() {
	q "select distinct coalesce(t.source, '-') || '|' || coalesce(t.note, '-') || '|' ||
	  coalesce(t.large_width || 'x' || t.large_height, '-') || '|' ||
	  coalesce(t.xlarge_width || 'x' || t.xlarge_height, '-')
	  from file_info fi join files f on f.id = fi.id join thumbs t on t.md5 = f.md5 and t.size = f.size
	  where fi.name = '$1'"
}

# mkpng OUT W H [interlace]: an RGB gradient PNG (python3's zlib)
mkpng() {
	python3 - "$@" <<'PY'
import struct, sys, zlib
out, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
interlace = len(sys.argv) > 4
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
def row(y, xs):
    return b"\0" + b"".join(bytes((x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), 96)) for x in xs)
if not interlace:
    raw = b"".join(row(y, range(w)) for y in range(h))
else:
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
    raw = b""
    for x0, y0, dx, dy in passes:
        xs = range(x0, w, dx)
        if len(xs) == 0:
            continue
        raw += b"".join(row(y, xs) for y in range(y0, h, dy))
ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 1 if interlace else 0)
open(out, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
PY
}

# sof JPEG W H: the JPEG's first SOF0 claims W x H
sof() {
	off=$(od -An -v -tx1 -w1 "$1" | awk -v w=1 '{ if (p == "ff" && $1 == "c0") { print NR + 3; exit } p = $1 }')
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($3 >> 8)) $(($3 & 255)) $(($2 >> 8)) $(($2 & 255)))" |
		dd of="$1" bs=1 seek="$off" conv=notrunc 2>/dev/null
}

test_expect_success 'setup: camera JPEGs with and without MPF previews, RAW files, PNG, WebP, HEIC' '
	mkdir -p lib/jpeg lib/raw lib/other &&
	mkfix jpeg image.jpg --width 3000 --height 2000 --size 400000 --seed 1 --make Canon &&
	mkfix jpeg vga.jpg --width 640 --height 424 --size 30000 --seed 2 &&
	mkfix jpeg pv.jpg --width 1600 --height 1064 --seed 3 &&
	mkfix jpeg upright.jpg --width 1064 --height 1600 --seed 4 &&
	mkfix jpeg thumb.jpg --width 160 --height 120 --seed 5 &&
	mkfix mpf lib/jpeg/mpf.jpg image.jpg vga.jpg &&
	mkfix mpf lib/jpeg/mpf-hd.jpg image.jpg pv.jpg --class fullhd &&
	cp image.jpg lib/jpeg/plain.jpg &&
	mkfix raw lib/raw/cam.nef pv.jpg --raw-bytes 3000000 &&
	mkfix raw lib/raw/cam.arw pv.jpg --make SONY --model ILCE-7 --raw-bytes 2000000 &&
	mkfix raw lib/raw/upright.nef upright.jpg --orientation 6 --width 6000 --height 4000 --raw-bytes 100000 &&
	mkfix raw lib/raw/small.nef thumb.jpg --raw-bytes 100000 &&
	mkfix raw lib/raw/first.nef pv.jpg --preview-first --raw-bytes 3000000 &&
	mkpng lib/other/grad.png 1200 800 && mkpng lib/other/adam7.png 801 1200 interlace &&
	age lib
'

test_expect_success 'scan --thumbnails: each image opened once, for its MD5, metadata and thumbnail alike' '
	command -v inotifywait >/dev/null || { echo "inotifywait missing: sh contrib/debian-deps.sh test"; exit 1; }
	{ inotifywait -q -m -r -e open,access --format "%e %w%f" lib >events 2>/dev/null & } &&
	w=$! && sleep 0.5 &&
	scan --thumbnails --read-size 256K --json lib >s.json &&
	sleep 0.3; kill $w; wait $w 2>/dev/null || true;
	for f in $(find lib -type f); do
		test "$(grep -c "^OPEN $f\$" events)" = 1 || { echo "$f opened $(grep -c "^OPEN $f\$" events) times"; exit 1; }
		test "$(grep -c "^ACCESS $f\$" events)" -ge 1 || { echo "$f never read"; exit 1; }
	done &&
	test "$(jq .new s.json)" = 10
'

test_expect_success 'a camera JPEG gives its MPF preview, not its image' '
	test "$(row mpf.jpg)" = "mpf-preview|-|256x170|512x339" &&
	test "$(row mpf-hd.jpg)" = "mpf-preview|-|256x170|512x340" &&
	test "$(row plain.jpg)" = "jpeg|-|256x171|512x341"
'

test_expect_success 'a RAW file gives its embedded preview; one stored upright is turned back' '
	test "$(row cam.nef)" = "raw-preview|-|256x170|512x340" &&
	test "$(row cam.arw)" = "raw-preview|-|256x170|512x340" &&
	test "$(row upright.nef)" = "raw-preview|-|256x170|512x340" &&
	test "$(q "select mime from file_info where name = '\''cam.arw'\''")" = image/x-sony-arw
'

test_expect_success 'a preview under 256 px, or one that went by before its pointer, gets a note' '
	test "$(row small.nef)" = "-|its largest preview is 160 x 120 pixels, under 256|-|-" &&
	row first.nef | grep -q "^-|its preview at byte 8 comes before the directory that points to it"
'

test_expect_success 'PNG, interlaced too, is decoded as it streams' '
	test "$(row grad.png)" = "png|-|256x171|512x341" &&
	test "$(row adam7.png)" = "png|-|171x256|342x512"
'

test_expect_success 'WebP and HEIC are decoded; a HEIC thumbnail item of 512 px serves' '
	command -v cwebp >/dev/null && command -v heif-enc >/dev/null ||
		{ echo "cwebp or heif-enc missing: sh contrib/debian-deps.sh test"; exit 1; }
	cwebp -quiet lib/other/grad.png -o lib/other/grad.webp &&
	cwebp -quiet -lossless lib/other/adam7.png -o lib/other/lossless.webp &&
	mkfix jpeg lib/other/big.jpg --width 1200 --height 900 --size 100000 --seed 7 &&
	heif-enc -q 50 lib/other/big.jpg -o lib/other/plain.heic >/dev/null &&
	heif-enc -q 50 -t 600 lib/other/big.jpg -o lib/other/thumb.heic >/dev/null &&
	heif-enc -q 50 -A lib/other/big.jpg -o lib/other/photo.avif >/dev/null &&
	age lib && scan --thumbnails --json lib >s.json &&
	test "$(jq .thumbnails_made s.json)" = 6 &&
	test "$(row grad.webp)" = "webp|-|256x171|512x341" &&
	test "$(row lossless.webp)" = "webp|-|171x256|342x512" &&
	test "$(row plain.heic)" = "heif|-|256x192|512x384" &&
	test "$(row thumb.heic)" = "heif-thumbnail|-|256x192|512x384" &&
	test "$(row photo.avif)" = "heif|-|256x192|512x384"
'

test_expect_success 'headers that claim too much get notes, and keep their rows and MD5s' '
	mkdir lib/bad &&
	mkfix jpeg lib/bad/huge.jpg --width 64 --height 64 --seed 8 && sof lib/bad/huge.jpg 65500 65500 &&
	mkpng lib/bad/huge.png 16 16 &&
	python3 -c "
import struct, sys, zlib
p = bytearray(open(sys.argv[1], \"rb\").read())
p[16:24] = struct.pack(\">II\", 65536, 32768)
p[29:33] = struct.pack(\">I\", zlib.crc32(bytes(p[12:29])))
open(sys.argv[1], \"wb\").write(p)" lib/bad/huge.png &&
	head -c 10000 lib/raw/cam.nef >lib/bad/cut.nef &&
	age lib && scan --thumbnails --json lib >s.json &&
	row huge.jpg | grep -q "^-|an image of 65500 x 65500 pixels is over the bound of 268 megapixels|" &&
	row huge.png | grep -q "^-|an image of 65536 x 32768 pixels is over the bound" &&
	row cut.nef | grep -q "^-|its preview at byte [0-9]* ([0-9]* bytes) runs past the end of the file" &&
	test "$(q "select count(*) from files where md5 is not null and name in ('\''huge.jpg'\'', '\''huge.png'\'', '\''cut.nef'\'')")" = 3
'

test_expect_success 'an unchanged rescan opens nothing; notes of the maker before this one are tried again' '
	scan --thumbnails --json lib >s.json &&
	test "$(jq .bytes_read s.json)" = 0 &&
	n=$(q "select count(*) from thumbs") &&
	q "update thumbs set version = version - 1 where note like '\''%under 256%'\'' or note like '\''%over the bound%'\''" &&
	scan --thumbnails --json lib >s.json &&
	test "$(jq .thumbnails_made s.json)" = 0 &&
	test "$(jq .thumbnails_failed s.json)" = 3 &&
	test "$(jq .thumbnails_known s.json)" = 0 &&
	test "$(q "select count(*) from thumbs where version < (select max(version) from thumbs)")" = 0 &&
	test "$(q "select count(*) from thumbs")" = "$n"
'

test_expect_success 'the samples: every image and RAW file has its thumbnail or a note; no crash' '
	if [ ! -d "$PIX_SAMPLES" ]; then echo "# ../shared/samples is absent: skipped"; exit 0; fi
	cp -rp "$PIX_SAMPLES" samples && chmod -R u+w samples && age samples &&
	{ px scan --db "$DB" --thumbnails --json samples >samples.json 2>samples.err || test $? = 1; } &&
	! grep -E "Sanitizer|runtime error" samples.err &&
	test "$(q "select count(*) from file_info fi join files f on f.id = fi.id
	  where fi.path like '\''%/samples/%'\'' and fi.media in ('\''image'\'', '\''raw'\'') and f.md5 is not null
	  and not exists (select 1 from thumbs t where t.md5 = f.md5 and t.size = f.size)")" = 0 &&
	test "$(row Stonehenge.heic)" = "heif|-|256x171|300x200" &&
	test "$(row "Issue 473 (Java).webp")" = "webp|-|256x192|320x240" &&
	test "$(row PNG.png)" = "png|-|16x16|16x16" &&
	test "$(row landscape_6.jpg)" = "jpeg|-|192x256|384x512"
'

test_done
