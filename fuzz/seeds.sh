#!/bin/sh
# fuzz/seeds.sh: builds the seed corpora, build-fuzz/seeds/TARGET/, from
#  1. the shared samples ($PIX_SAMPLES, default ../shared/samples), each
#     file given to the target of its format (told by its first bytes, not
#     its name) and to `meta`; the EXIF blocks of the JPEG samples also go
#     to `tiff`.  Skipped with a message when the folder is absent.  The
#     samples are other people's files: they are copied here, at fuzz
#     time, and never committed;
#  2. fixtures written by the project's generator ($MKFIXTURE);
#  3. hand-made files (fuzz/mkseeds.c) for what 1 and 2 lack;
#  4. the regression inputs, tests/data/fuzz-regressions/TARGET-*, but
#     known bugs (*.todo): a seed that crashes stops the fuzzer at once.
# Usage: sh fuzz/seeds.sh TARGET...   (run by `make fuzz-seeds`)
set -eu

targets=$*
build=${FUZZ_BUILD:-build-fuzz}
samples=${PIX_SAMPLES:-../shared/samples}
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds"
for t in jpeg tiff meta bmff png riff raf mrw crw x3f xmp iptc xmpext thumbjpeg thumbpng thumbwebp thumbheif thumbraw; do
	mkdir -p "$seeds/$t"
done

# The target that parses a file of this content, or nothing.
target_of() {
	h=$(od -An -tx1 -N16 "$1" | tr -d ' \n')
	case $h in
	ffd8ff*) echo jpeg ;;
	89504e470d0a1a0a*) echo png ;;
	49492a00* | 4d4d002a* | 49492b00* | 4d4d002b* | 49495500* | 4949524f* | 49495253* | 4d4d4f52*) echo tiff ;;
	52494646????????57454250* | 52494646????????41564920*) echo riff ;;
	46554a4946494c4d4343442d524157*) echo raf ;;
	004d524d*) echo mrw ;;
	49491a0000004845415043434452* | 4d4d001a0000004845415043434452*) echo crw ;;
	464f5662*) echo x3f ;;
	ff0a* | 0000000c4a584c20*) echo bmff ;;
	????????66747970* | ????????6d6f6f76* | ????????6d646174* | ????????77696465* | ????????66726565* | \
		????????736b6970* | ????????706e6f74*) echo bmff ;;
	3c3f787061636b6574* | 3c783a786d706d657461* | efbbbf3c* | 3c783a7861706d657461* | 3c7264663a524446*) echo xmp ;;
	esac
}

# copy FILE TARGET: into TARGET's seeds and meta's, under a name without
# spaces
n=0
copy() {
	n=$((n + 1))
	base=$(basename "$1" | tr -c 'A-Za-z0-9._\n-' '_')
	[ "$2" = meta ] || cp "$1" "$seeds/$2/$n-$base"
	cp "$1" "$seeds/meta/$n-$base"
}

# 1. the samples
if [ -d "$samples" ]; then
	count=0
	list=$(mktemp)
	find "$samples" -type f -size -16M | sort > "$list"
	while IFS= read -r f; do
		t=$(target_of "$f")
		[ -n "$t" ] || continue
		copy "$f" "$t"
		count=$((count + 1))
	done < "$list"
	rm -f "$list"
	echo "seeds: $count files from $samples"
else
	echo "seeds: $samples is absent (set PIX_SAMPLES): no sample seeds"
fi

# 2. fixtures
if [ -n "${MKFIXTURE:-}" ] && [ -x "$MKFIXTURE" ]; then
	fx=$build/fixtures
	rm -rf "$fx"
	mkdir -p "$fx"
	# fixture KIND NAME OPTION...
	fixture() {
		k=$1 out=$2
		shift 2
		"$MKFIXTURE" "$k" "$fx/$out" "$@" >/dev/null 2>&1 || echo "seeds: mkfixture $k $out $* failed"
	}
	for k in jpeg tiff; do
		set -- --make Canon --model "EOS 5D" --date "2020:01:02 03:04:05" --offset +01:00 --subsec 12 \
			--exposure 1/60 --fnumber 28/10 --focal 50 --iso 200 --lens "EF 50mm" --orientation 3 \
			--gps 48.5,-2.25,120 --modify-date "2020:01:02 03:04:06" --software S --exif-size 16,16
		fixture "$k" "all.$k" "$@"
		fixture "$k" "be.$k" "$@" --big-endian
		fixture "$k" "gps-south.$k" --make Nikon --gps -33.9,151.2
		fixture "$k" "cut.$k" "$@" --truncate 200
		fixture "$k" "size.$k" --model M --width 33 --height 17
	done
	fixture jpeg extras.jpeg "$@" --thumbnail --xmp --app-before 2
	fixture jpeg no-exif.jpeg --no-exif
	fixture jpeg noise.jpeg --date "1999:12:31 23:59:59" --size 20000
	fixture tiff pad.tiff --make Canon --pad-before-ifd 70000
	for f in "$fx"/*.jpeg; do [ -f "$f" ] && copy "$f" jpeg; done
	for f in "$fx"/*.tiff; do [ -f "$f" ] && copy "$f" tiff; done
	echo "seeds: $(find "$fx" -type f | wc -l) fixtures from $MKFIXTURE"
else
	echo "seeds: no fixture generator (MKFIXTURE): no fixture seeds"
fi

# 3. hand-made seeds, and the EXIF blocks of every JPEG seed for tiff
hand=$build/hand
rm -rf "$hand"
# shellcheck disable=SC2046 # file names without spaces (copies)
"$build/mkseeds" "$hand" $(ls "$seeds"/jpeg/* 2>/dev/null)
for d in "$hand"/*; do
	for f in "$d"/*; do
		copy "$f" "$(basename "$d")"
	done
done
echo "seeds: $(find "$hand" -type f | wc -l) hand-made (fuzz/mkseeds.c)"

# the thumbnail targets: the seeds of their format (HEIF and AVIF of the
# bmff ones, WebP of the riff ones), and MPF JPEGs and RAW files with
# previews made from the JPEG fixtures
for f in "$seeds"/jpeg/*; do [ -f "$f" ] && cp "$f" "$seeds/thumbjpeg/"; done
for f in "$seeds"/png/*; do [ -f "$f" ] && cp "$f" "$seeds/thumbpng/"; done
for f in "$seeds"/tiff/*; do [ -f "$f" ] && cp "$f" "$seeds/thumbraw/"; done
for f in "$seeds"/riff/*; do
	[ "$(od -An -c -j8 -N4 "$f" | tr -d ' ')" = WEBP ] && cp "$f" "$seeds/thumbwebp/"
done
for f in "$seeds"/bmff/*; do
	case $(od -An -c -j4 -N8 "$f" | tr -d ' ') in ftyphei? | ftypmif1 | ftypavi? | ftyphev? | ftypmsf1) cp "$f" "$seeds/thumbheif/" ;; esac
done
if [ -n "${MKFIXTURE:-}" ] && [ -x "$MKFIXTURE" ]; then
	"$MKFIXTURE" jpeg "$fx/pv.jpeg" --width 640 --height 424 --seed 5 >/dev/null 2>&1 &&
	"$MKFIXTURE" jpeg "$fx/img.jpeg" --width 1200 --height 800 --seed 6 >/dev/null 2>&1 &&
	"$MKFIXTURE" mpf "$seeds/thumbjpeg/mpf.jpeg" "$fx/img.jpeg" "$fx/pv.jpeg" &&
	"$MKFIXTURE" raw "$seeds/thumbraw/nef.nef" "$fx/pv.jpeg" --raw-bytes 4096 &&
	"$MKFIXTURE" raw "$seeds/thumbraw/upright.nef" "$fx/pv.jpeg" --orientation 6 --raw-bytes 100 &&
	"$MKFIXTURE" raw "$seeds/thumbraw/first.nef" "$fx/pv.jpeg" --preview-first --raw-bytes 100 ||
		echo "seeds: the MPF and RAW fixtures failed"
fi

# 4. regression inputs: TARGET-NAME
for f in tests/data/fuzz-regressions/*; do
	case $f in *.todo) continue ;; esac
	[ -f "$f" ] || continue
	t=$(basename "$f" | sed 's/-.*//')
	copy "$f" "$t"
done

for t in $targets; do
	echo "seeds: $t: $(find "$seeds/$t" -type f | wc -l) files"
done
