#!/bin/sh
# Hostile files (issue 8, item 4): a corpus built here, never committed,
# of truncated JPEG, TIFF and MP4 files, EXIF whose offsets and counts
# point anywhere and whose directories loop, containers that nest deep or
# loop, empty and sparse huge files, files that grow or shrink while read,
# special files, unreadable files and directories, symbolic link loops, a
# path longer than PATH_MAX and names no shell likes.  One scan of it must
# end in time, without a signal or a sanitizer's report, record each
# problem against its own file, index every good file beside them and
# exit 1.  The next scans read nothing new and exit 1 again: the
# unreadable file and directory are named every time (unreadable is not
# gone, and may become readable).
. "$(dirname "$0")/lib.sh"
umask 022
DB=$TRASH/cat/catalog.db

# 2 GiB sparse files: their MD5 is read in about 10 s (under valgrind,
# 32 MiB).
if [ "${PIX_TEST_VALGRIND:-0}" = 1 ]; then
	HUGE=32M HUGE_MD5=$(head -c 32M /dev/zero | md5sum | cut -c1-32) LIMIT=1200
else
	HUGE=2G HUGE_MD5=a981130cf2b7e09f4686dc273cf7187e LIMIT=120
fi

# Root reads what chmod 000 forbids: as root, the scans run as nobody.
is_root() {
	[ "$(id -u)" = 0 ]
}
if is_root && ! setpriv --reuid=65534 --regid=65534 --clear-groups -- true 2>/dev/null; then
	echo "1..0 # SKIP as root, the scans need setpriv to run as nobody"
	exit 0
fi

# photoidx as the corpus scans run it: as nobody when root, under
# valgrind with PIX_TEST_VALGRIND=1 (an error exits 99; its reports go to
# cat/, which nobody may write), killed after $LIMIT seconds.
run_px() {
	set -- "$PHOTOIDX" "$@"
	if [ "${PIX_TEST_VALGRIND:-0}" = 1 ]; then
		set -- valgrind -q --log-file="$TRASH/cat/valgrind.%p" --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite --suppressions="$REPO/tests/valgrind.supp" "$@"
	fi
	if is_root; then
		set -- setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
	fi
	# -k: a scan that ignores the TERM (a reader stuck in the kernel) is
	# killed, and the test fails rather than hang the suite
	timeout -k 10 $LIMIT "$@"
}

# scan_corpus WANT: scans c/ into the catalog (summary in scan.json,
# stderr in scan.err); the scan must end in time, by itself, with exit
# status WANT (not valgrind's 99) and no report from a sanitizer.
scan_corpus() {
	run_px scan --db "$DB" --json c >scan.json 2>scan.err
	status=$?
	if [ $status = 124 ]; then
		echo "the scan hung: killed after $LIMIT s"
		return 1
	fi
	if [ $status -gt 128 ]; then
		echo "the scan died of signal $((status - 128))"
		return 1
	fi
	if grep -E "Sanitizer|runtime error" scan.err; then
		echo "the scan's memory or arithmetic went wrong (above)"
		return 1
	fi
	if [ $status != "$1" ]; then
		echo "exit status $status, expected $1" && cat scan.err "$TRASH"/cat/valgrind.* 2>/dev/null
		return 1
	fi
}

# md5_paths WHERE: "md5  path" for the rows of file_info WHERE; on
# PostgreSQL the paths are bytes (bytea, or text beside *_bytes), some of
# them not UTF-8: they come as hex, made bytes again here
md5_paths() {
	if backend_is sqlite; then
		q "select md5 || '  ' || path from file_info where $1"
	else
		q "select md5 || '|' || hex(path) from file_info where $1" |
			perl -ne 'chomp; my ($m, $h) = split /\|/; print "$m  ", pack("H*", $h), "\n"'
	fi
}

# names_ok NAME...: each file c/names/NAME is in the catalog, sound, with
# its MD5 (found by the bytes of its name).
names_ok() {
	for name in "$@"; do
		hex=$(printf "%s" "$name" | od -An -tx1 | tr -d " \n" | tr a-f A-F) &&
		# by the bytes of the name, in the table (the view of PostgreSQL
		# shows such a name escaped, as ls does)
		got=$(q "select i.state || ' ' || i.md5 from file_info i join files f on f.id = i.id where hex(f.name) = '$hex'") &&
		want="ok $(md5sum <"c/names/$name" | cut -c1-32)" &&
		if [ "$got" != "$want" ]; then echo "c/names/$name: got \"$got\", expected \"$want\""; return 1; fi
	done
}

# hostile KIND OUT [ARG]: writes one hostile (or, for the kinds "mp4" and
# "mp4-size0", sound) file; EXIF kinds take a JPEG without EXIF as ARG.
hostile() {
	perl - "$@" <<-'EOF'
	use strict;
	use warnings;
	my ($kind, $out, $arg) = @ARGV;

	sub slurp { local $/; open(my $f, '<:raw', $_[0]) or die "$_[0]: $!"; return scalar <$f>; }
	sub spew { open(my $f, '>:raw', $_[0]) or die "$_[0]: $!"; print $f $_[1]; close $f or die; }

	# --- TIFF, little-endian: IFDs of [tag, type, count, value or offset]
	sub ifd { my ($next, @e) = @_; return pack('v', scalar @e) . join('', map { pack('vvVV', @$_) } @e) . pack('V', $next); }
	sub ifd_len { return 2 + 12 * $_[0] + 4; }
	sub tiff { my ($ifd0, $rest) = @_; return "II*\0" . pack('V', $ifd0) . $rest; }
	my $orient = [0x0112, 3, 1, 1];

	my %exif = (
		# IFD0 past the end, in the header, at a "negative" offset
		'ifd0-past-end' => sub { tiff(0x100000, ifd(0, $orient)) },
		'ifd0-in-header' => sub { tiff(4, ifd(0, $orient)) },
		'ifd0-negative' => sub { tiff(0xFFFFFFF0, ifd(0, $orient)) },
		# Make's 32 bytes past the end, at a "negative" offset
		'value-past-end' => sub { tiff(8, ifd(0, [0x010f, 2, 32, 0x10000])) },
		'value-negative' => sub { tiff(8, ifd(0, [0x010f, 2, 32, 0xFFFFFFF0])) },
		# 0x7FFFFFFF DOUBLEs, in IFD0 and in the Exif IFD
		'huge-count' => sub { tiff(8, ifd(0, [0x829a, 12, 0x7FFFFFFF, 8])) },
		'huge-count-exif' => sub { tiff(8, ifd(0, [0x8769, 4, 1, 8 + ifd_len(1)]) . ifd(0, [0x829a, 12, 0x7FFFFFFF, 8])) },
		# IFD0 of 65535 entries in a block of 50 bytes
		'huge-ifd' => sub { tiff(8, pack('v', 0xFFFF) . "\0" x 40) },
		# IFD0 -> IFD0; IFD0 -> IFD1 -> IFD0
		'ifd-self' => sub { tiff(8, ifd(8, $orient)) },
		'ifd-chain-loop' => sub { tiff(8, ifd(8 + ifd_len(1), $orient) . ifd(8, $orient)) },
		# the Exif, GPS and SubIFD pointers back to IFD0, the Exif one
		# into the header, the GPS one to the Exif IFD, the Exif IFD's
		# Interoperability pointer to the Exif IFD
		'exif-to-ifd0' => sub { tiff(8, ifd(0, [0x8769, 4, 1, 8])) },
		'exif-in-header' => sub { tiff(8, ifd(0, [0x8769, 4, 1, 2])) },
		'gps-to-ifd0' => sub { tiff(8, ifd(0, [0x8825, 4, 1, 8])) },
		'gps-to-exif' => sub { my $at = 8 + ifd_len(2); tiff(8, ifd(0, [0x8769, 4, 1, $at], [0x8825, 4, 1, $at]) . ifd(0, $orient)) },
		'interop-to-exif' => sub { my $at = 8 + ifd_len(1); tiff(8, ifd(0, [0x8769, 4, 1, $at]) . ifd(0, [0xa005, 4, 1, $at])) },
		'subifd-to-ifd0' => sub { tiff(8, ifd(0, [0x014a, 4, 1, 8])) },
	);
	if ($kind =~ /^exif-(.*)/) {
		my $tiff = ($exif{$1} or die "unknown kind $kind")->();
		my $jpeg = slurp($arg);
		my $app1 = "Exif\0\0" . $tiff;
		spew($out, "\xff\xd8\xff\xe1" . pack('n', 2 + length $app1) . $app1 . substr($jpeg, 2));
		exit 0;
	}

	# A 16x16 TIFF: the strip, then IFD0 (its image tags and @extra) and $tail.
	my $ifd0_at = 8 + 256;
	my $ifd0_end = $ifd0_at + ifd_len(10);
	sub tiff_file {
		my ($next, $tail, @extra) = @_;
		my @tags = sort { $a->[0] <=> $b->[0] } ([0x0100, 3, 1, 16], [0x0101, 3, 1, 16], [0x0102, 3, 1, 8],
			[0x0103, 3, 1, 1], [0x0106, 3, 1, 1], [0x0111, 4, 1, 8], [0x0115, 3, 1, 1], [0x0116, 3, 1, 16],
			[0x0117, 4, 1, 256], @extra);
		return tiff($ifd0_at, pack('C*', 0 .. 255) . ifd($next, @tags) . $tail);
	}
	# 100,000 directories after IFD0, each one's SubIFD (or next) pointer
	# to the one after it
	sub chain {
		my ($is_next) = @_;
		my $tail = '';
		for my $i (1 .. 100000) {
			my $to = $i < 100000 ? $ifd0_end + $i * ifd_len(1) : 0;
			$tail .= $is_next ? ifd($to, [0x00fe, 4, 1, 1]) : ifd(0, [0x014a, 4, 1, $to]);
		}
		return $tail;
	}
	spew($out, tiff_file(0, '', [0x014a, 13, 1, $ifd0_at])) if $kind eq 'tiff-subifd-loop';
	spew($out, tiff_file($ifd0_end, ifd($ifd0_at, [0x00fe, 4, 1, 1]))) if $kind eq 'tiff-chain-loop';
	spew($out, tiff_file(0, chain(0), [0x014a, 4, 1, $ifd0_end])) if $kind eq 'tiff-subifd-deep';
	spew($out, tiff_file(0, chain(1), [0x014a, 4, 1, $ifd0_end])) if $kind eq 'tiff-subifd-chain';

	# --- ISO base media: a movie as cameras write it (media data, then 'moov')
	sub box { my ($type, $data) = @_; return pack('N', 8 + length $data) . $type . $data; }
	sub fullbox { my ($type, $v, $data) = @_; return box($type, pack('N', $v << 24) . $data); }
	my $ftyp = box('ftyp', 'isom' . pack('N', 0x200) . 'isomiso2mp41');
	my $mvhd = fullbox('mvhd', 0, pack('N6', 3600000000, 3600000000, 1000, 5000, 0x10000, 0x1000000) . "\0" x 76);
	my $tkhd = fullbox('tkhd', 0, "\0" x 72 . pack('NN', 640 << 16, 480 << 16));
	my $hdlr = fullbox('hdlr', 0, pack('N', 0) . 'vide' . "\0" x 12 . "VideoHandler\0");
	my $moov = box('moov', $mvhd . box('trak', $tkhd . box('mdia', $hdlr)));
	my $mdat = box('mdat', pack('C*', map { $_ * 7 & 0xff } 1 .. 60000));
	my %bmff = (
		'mp4' => sub { $ftyp . $mdat . $moov },
		# the last box's size 0: to the end of the file (sound)
		'mp4-size0' => sub { $ftyp . $moov . pack('N', 0) . 'mdat' . "\1" x 5000 },
		# 'trak' in 'trak' ..., 10,000 deep
		'mp4-deep' => sub { my $b = $tkhd; $b = box('trak', $b) for 1 .. 10000; $ftyp . box('moov', $mvhd . $b) },
		# size 1: a 64-bit size of 2^62, of 2^64 - 1, of 3
		'mp4-largesize' => sub { $ftyp . pack('N', 1) . 'moov' . pack('Q>', 1 << 62) . substr($moov, 8) . box('free', "\1" x 5000) },
		'mp4-largesize-max' => sub { $ftyp . $moov . pack('N', 1) . 'mdat' . pack('Q>', ~0) . "\1" x 5000 },
		'mp4-largesize-small' => sub { $ftyp . $moov . pack('N', 1) . 'free' . pack('Q>', 3) . "\1" x 5000 },
		# a 'trak' of 5000 bytes in a 'moov' of 300
		'mp4-child-past-parent' => sub { $ftyp . box('moov', $mvhd . pack('N', 5000) . 'trak' . $tkhd) . $mdat },
	);
	# An HEIF whose 'iloc' puts its Exif item at $off, $len bytes
	sub heif {
		my ($off, $len) = @_;
		my $iinf = fullbox('iinf', 0, pack('n', 1) . fullbox('infe', 2, pack('nn', 1, 0) . "Exif\0"));
		my $iloc = fullbox('iloc', 0, pack('CCn', 0x44, 0, 1) . pack('nnnNN', 1, 0, 1, $off, $len));
		my $hdlr = fullbox('hdlr', 0, pack('N', 0) . 'pict' . "\0" x 13);
		return box('ftyp', 'heic' . pack('N', 0) . 'mif1heic')
			. fullbox('meta', 0, $hdlr . fullbox('pitm', 0, pack('n', 1)) . $iinf . $iloc) . box('mdat', "\0" x 64);
	}
	# the Exif item: the 'meta' box itself (24 is where it starts), 2 GiB
	# away, 4 GiB long
	$bmff{'heif-iloc-self'} = sub { heif(24, 135) };
	$bmff{'heif-iloc-past-end'} = sub { heif(0x7FFFFFF0, 100) };
	$bmff{'heif-iloc-huge'} = sub { heif(200, 0xFFFFFFFF) };
	spew($out, $bmff{$kind}->()) if $bmff{$kind};
	# the head of a movie whose 'mdat' (64-bit size) runs to byte $arg, for truncate -s
	spew($out, $ftyp . $moov . pack('N', 1) . 'mdat' . pack('Q>', $arg - length($ftyp . $moov))) if $kind eq 'mp4-sparse';

	# --- RIFF: an AVI whose 'hdrl' list holds an 'hdrl' list ..., 1,000 deep
	if ($kind eq 'avi-deep') {
		my $b = 'avih' . pack('V', 56) . "\0" x 56;
		$b = 'LIST' . pack('V', 4 + length $b) . 'hdrl' . $b for 1 .. 1000;
		spew($out, 'RIFF' . pack('V', 4 + length $b) . 'AVI ' . $b);
	}
	# --- PNG: an IDAT of 2 GiB in a file of 141 bytes
	if ($kind eq 'png-past-end') {
		my $ihdr = 'IHDR' . pack('NNC5', 16, 16, 8, 0, 0, 0, 0);
		my $crc = 0xFFFFFFFF;
		for my $byte (unpack 'C*', $ihdr) {
			$crc ^= $byte;
			$crc = $crc & 1 ? ($crc >> 1) ^ 0xEDB88320 : $crc >> 1 for 1 .. 8;
		}
		spew($out, "\x89PNG\r\n\x1a\n" . pack('N', 13) . $ihdr . pack('N', $crc ^ 0xFFFFFFFF)
			. pack('N', 0x7FFFFFF0) . 'IDAT' . "\0" x 100);
	}
	EOF
}

# cuts FILE DIR PREFIX: FILE cut at every 4 KiB boundary, as DIR/PREFIX<bytes>
cuts() {
	size=$(stat -c %s "$1") && n=4096 &&
	while [ $n -lt $size ]; do head -c $n "$1" >"$2/$3$n" && n=$((n + 4096)); done
}

# The largest JPEG of the samples (by its content, not its name), else a
# generated one of 200 KiB.
big_jpeg() {
	if [ -d "$PIX_SAMPLES" ]; then
		find "$PIX_SAMPLES" -type f \( -iname "*.jpg" -o -iname "*.jpeg" \) -printf "%s\t%p\n" | sort -rn | cut -f2- |
		while IFS= read -r f; do
			if [ "$(head -c 3 "$f" | od -An -tx1 | tr -d " ")" = ffd8ff ]; then cp "$f" "$1"; return 0; fi
		done
	else
		mkfix jpeg "$1" --size 204800 --make Canon
	fi
}

# Each hostile file (a path under c/) and what its error must say; every
# other file of the corpus is sound, save those the tests add to expect.
cat >expect <<-'EOF'
	exif/ifd0-past-end.jpg	corrupt EXIF: bad IFD0 directory at offset 1048576
	exif/ifd0-in-header.jpg	corrupt EXIF: bad IFD0 directory at offset 4
	exif/ifd0-negative.jpg	corrupt EXIF: bad IFD0 directory at offset 4294967280
	exif/value-past-end.jpg	corrupt EXIF: bad offset or size for IFD0 tag 0x010f (32 bytes at offset 65536)
	exif/value-negative.jpg	corrupt EXIF: bad offset or size for IFD0 tag 0x010f (32 bytes at offset 4294967280)
	exif/huge-count.jpg	corrupt EXIF: bad offset or size for IFD0 tag 0x829a (17179869176 bytes at offset 8)
	exif/huge-count-exif.jpg	corrupt EXIF: bad offset or size for Exif IFD tag 0x829a (17179869176 bytes
	exif/huge-ifd.jpg	corrupt EXIF: bad IFD0 directory at offset 8 (65535 entries)
	exif/ifd-self.jpg	corrupt EXIF: the IFD1 pointer leads back to an earlier directory (offset 8): a loop
	exif/ifd-chain-loop.jpg	corrupt EXIF: the IFD2 pointer leads back to an earlier directory (offset 8): a loop
	exif/exif-to-ifd0.jpg	corrupt EXIF: the Exif IFD pointer leads back to an earlier directory (offset 8): a loop
	exif/exif-in-header.jpg	corrupt EXIF: bad Exif IFD directory at offset 2
	exif/gps-to-ifd0.jpg	corrupt EXIF: the GPS IFD pointer leads back to an earlier directory (offset 8): a loop
	exif/gps-to-exif.jpg	corrupt EXIF: the GPS IFD pointer leads back to an earlier directory (offset 38): a loop
	exif/interop-to-exif.jpg	corrupt EXIF: the Interoperability IFD pointer leads back to an earlier directory (offset 26): a loop
	exif/subifd-to-ifd0.jpg	corrupt EXIF: the SubIFD pointer leads back to an earlier directory (offset 8): a loop
	nest/subifd-loop.tif	corrupt TIFF structure: the SubIFD pointer leads back to an earlier directory (offset 264): a loop
	nest/chain-loop.tif	corrupt TIFF structure: the IFD2 pointer leads back to an earlier directory (offset 264): a loop
	nest/subifd-deep.tif	corrupt TIFF structure: SubIFDs nested more than 8 deep
	nest/deep.mp4	corrupt ISO media file: boxes nested too deep or too many
	nest/largesize.mp4	truncated ISO media file: box 'moov' at offset 28 runs past the end of the file (5317 bytes)
	nest/largesize-max.mp4	corrupt ISO media file: box 'mdat' at offset 301 has a bad size (18446744073709551615 bytes)
	nest/largesize-small.mp4	corrupt ISO media file: box 'free' at offset 301 has a bad size (3 bytes)
	nest/child-past-parent.mp4	corrupt ISO media file: box 'trak' at offset 148 has a bad size (5000 bytes)
	nest/iloc-self.heic	corrupt HEIF: its Exif item at offset 24 lies inside its 'meta' box
	nest/iloc-past-end.heic	corrupt HEIF: its Exif item at offset 2147483632 lies outside the file
	nest/iloc-huge.heic	corrupt HEIF: an item larger than 4 MiB
	nest/deep.avi	corrupt AVI: lists nested deeper than 8 at offset 96
	nest/past-end.png	truncated PNG: chunk 'IDAT' at offset 33 runs past the end of the file (141 bytes)
	special/pipe	not read: it is a FIFO
	special/sock	not read: it is a socket
EOF

test_expect_success 'setup: good files, among them and in a directory of their own' '
	mkdir -p c/good c/exif c/nest c/trunc/jpeg c/trunc/tiff c/trunc/mp4 c/huge c/busy c/special/sub c/names &&
	for d in good exif nest trunc/jpeg trunc/tiff trunc/mp4 huge busy special names; do
		mkfix jpeg c/$d/good-1.jpg --seed 11 --make Canon --date "2021:02:03 04:05:06" --gps 45,7 --thumbnail &&
		mkfix tiff c/$d/good-2.tif --make NIKON --width 40 --height 30 || exit 1
	done &&
	hostile mp4 c/good/movie.mp4 && hostile mp4-size0 c/good/size0.mp4 &&
	hostile tiff-subifd-chain c/good/subifd-chain.tif &&
	: >c/good/empty.jpg
'

test_expect_success 'setup: truncations at every 4 KiB of a real JPEG, two TIFFs and an MP4, and a movie cut in its media data' '
	big_jpeg full.jpg && cuts full.jpg c/trunc/jpeg cut- &&
	mkfix tiff full.tif --width 256 --height 200 --make Canon --date "2020:01:01 00:00:00" &&
	cuts full.tif c/trunc/tiff cut- &&
	mkfix tiff camera.tif --ifd-first --width 256 --height 200 --make Canon &&
	cuts camera.tif c/trunc/tiff strip-cut- &&
	hostile mp4 full.mp4 && cuts full.mp4 c/trunc/mp4 cut- &&
	head -c $(($(stat -c %s full.mp4) - 100)) full.mp4 >c/trunc/mp4/cut-in-moov &&
	hostile mp4-sparse c/trunc/mp4/mdat-cut.mp4 1048576 && truncate -s 600000 c/trunc/mp4/mdat-cut.mp4 &&
	test "$(ls c/trunc/jpeg | wc -l)" -gt 40 &&
	for f in c/trunc/jpeg/cut-*; do printf "%s\ttruncated JPEG\n" "${f#c/}"; done >>expect &&
	for f in c/trunc/tiff/cut-*; do printf "%s\tcorrupt TIFF structure: bad IFD0 directory at offset\n" "${f#c/}"; done >>expect &&
	test "$(ls c/trunc/tiff/strip-cut-* | wc -l)" -ge 12 &&
	for f in c/trunc/tiff/strip-cut-*; do printf "%s\ttruncated TIFF: its image data (a strip at offset\n" "${f#c/}"; done >>expect &&
	for f in c/trunc/mp4/cut-[0-9]*; do printf "%s\tcorrupt ISO media file: no '\''moov'\'' box\n" "${f#c/}"; done >>expect &&
	printf "trunc/mp4/cut-in-moov\ttruncated ISO media file: box '\''moov'\''\n" >>expect &&
	printf "trunc/mp4/mdat-cut.mp4\ttruncated ISO media file: box '\''mdat'\'' at offset\n" >>expect
'

test_expect_success 'setup: EXIF pointing anywhere, containers nesting and looping' '
	mkfix jpeg base.jpg --no-exif --seed 3 &&
	for kind in $(grep -o "^exif/[^.]*" expect | cut -d/ -f2); do hostile exif-$kind c/exif/$kind.jpg base.jpg || exit 1; done &&
	for kind in subifd-loop chain-loop subifd-deep; do hostile tiff-$kind c/nest/$kind.tif || exit 1; done &&
	for kind in deep largesize largesize-max largesize-small child-past-parent; do hostile mp4-$kind c/nest/$kind.mp4 || exit 1; done &&
	for kind in self past-end huge; do hostile heif-iloc-$kind c/nest/iloc-$kind.heic || exit 1; done &&
	hostile avi-deep c/nest/deep.avi && hostile png-past-end c/nest/past-end.png &&
	test "$(ls c/exif | wc -l)" = 18
'

test_expect_success 'setup: sparse huge files' '
	truncate -s $HUGE c/huge/huge.jpg c/huge/huge.mp4 &&
	hostile mp4-sparse c/huge/sparse.mp4 67108864 && truncate -s 64M c/huge/sparse.mp4
'

test_expect_success 'setup: special files, unreadable ones, symbolic link loops' '
	mkfifo c/special/pipe &&
	perl -MSocket -e "socket(S, PF_UNIX, SOCK_STREAM, 0) or die; bind(S, sockaddr_un(\"c/special/sock\")) or die" &&
	if mknod c/special/null c 1 3 2>/dev/null; then printf "special/null\tnot read: it is a character device\n" >>expect; fi &&
	if mknod c/special/loop b 7 200 2>/dev/null; then printf "special/loop\tnot read: it is a block device\n" >>expect; fi &&
	ln -s loop-b c/special/loop-a && ln -s loop-a c/special/loop-b && ln -s .. c/special/sub/up &&
	mkfix jpeg c/special/secret.jpg --seed 21 && chmod 000 c/special/secret.jpg &&
	printf "special/secret.jpg\tcannot open: Permission denied\n" >>expect &&
	mkdir c/special/locked && mkfix jpeg c/special/locked/inside.jpg && chmod 000 c/special/locked
'

# in_deep_dir DIR CMD: makes 21 directories of 200-byte names under DIR,
# one in the other, and runs the shell command CMD in the deepest: a path
# of more than 4,200 bytes, beyond PATH_MAX, so made a directory at a
# time (the shell's cd would use the whole path).
in_deep_dir() {
	perl -e 'chdir $ARGV[0] or die; for (1 .. 21) { mkdir "d" x 200 or die; chdir "d" x 200 or die } exec "sh", "-c", $ARGV[1]' "$1" "$2"
}

test_expect_success 'setup: a good JPEG at the bottom of a 4,200-byte path' '
	mkdir c/long &&
	in_deep_dir c/long "\"\$MKFIXTURE\" jpeg deep.jpg --seed 31 --make Deep && touch -d \"2 days ago\" deep.jpg &&
		md5sum <deep.jpg" >deep.md5
'

test_expect_success 'setup: names with a newline, a tab, invalid UTF-8, a leading dash, SQL' '
	mkfix jpeg "c/names/new
line.jpg" --seed 41 &&
	mkfix jpeg "c/names/tab	bed.jpg" --seed 42 &&
	mkfix jpeg "$(printf "c/names/bad\377\376name.jpg")" --seed 43 &&
	mkfix jpeg c/names/-rf.jpg --seed 44 && mkfix jpeg c/names/--db=x.jpg --seed 45 &&
	mkfix jpeg "c/names/'\''); DROP TABLE files;--.jpg" --seed 46
'

test_expect_success 'setup: the MD5 of every good file, a catalog nobody may write' '
	find c -path c/long -prune -o -path c/special/locked -prune -o -exec touch -h -d "2 days ago" {} + &&
	find c -path c/long -prune -o -path c/special/locked -prune -o -type f ! -name "cut-*" ! -name "huge.*" \
		! \( -path "c/names/*" ! -name "good-*" \) -print | cut -d/ -f2- | sort >all &&
	cut -f1 expect | sort >bad && comm -23 all bad >good &&
	test "$(wc -l <good)" -ge 25 &&
	sed "s|^|c/|" good | xargs -d "\n" md5sum | sed "s|  c/|  $TRASH/c/|" | sort >good.md5 &&
	mkdir cat && if is_root; then chown 65534:65534 cat; fi &&
	# on PostgreSQL the catalog is made here, as root: nobody may not write
	# the marks of pg-catalogs.sh in $TRASH
	catalog_uri "$DB" >/dev/null
'

# The files that grow and shrink are written to every millisecond, from
# before the scan starts (both have changed once) to after it ends: no
# pass over their 64 MiB can be whole, so each ends in an error.  Each
# change leaves a size the file never had before, so that a pass that
# spans one sees it whatever the resolution of the file system clock (a
# file cut and grown back to its size within a clock tick keeps its
# times: it read whole once in CI).  Where it may, a writer runs at a
# real-time priority, so that a loaded machine does not leave it waiting
# through a whole pass.
busy_writer () {
	chrt -f 1 true 2>/dev/null && set -- chrt -f 1 "$@"
	"$@" &
}
test_expect_success 'the scan: no crash, no hang, exit 1, though files grow and shrink as it reads' '
	truncate -s 64M c/busy/grow.bin c/busy/shrink.bin
	busy_writer perl -e "open(F, \">>\", \$ARGV[0]) or die; for (1 .. 100000) { syswrite(F, \"x\" x 64); select(undef, undef, undef, 0.001) }" c/busy/grow.bin
	grower=$!
	busy_writer perl -e "for (1 .. 100000) { truncate(\$ARGV[0], (64 << 20) - 64 * \$_); select(undef, undef, undef, 0.001) }" c/busy/shrink.bin
	shrinker=$!
	i=0; until [ $(stat -c %s c/busy/grow.bin) -gt 67108864 ] && [ $(stat -c %s c/busy/shrink.bin) -lt 67108864 ] || [ $i = 1000 ]; do sleep 0.01; i=$((i + 1)); done
	rc=0 && scan_corpus 1 || rc=1
	kill $grower $shrinker && { wait $grower $shrinker 2>/dev/null || true; } &&
	touch -d "2 days ago" c/busy/grow.bin c/busy/shrink.bin &&
	test $rc = 0 &&
	printf "busy/grow.bin\tchanged while being read (3 tries)\nbusy/shrink.bin\tchanged while being read (3 tries)\n" >>expect &&
	test "$(jq .exit_status scan.json)" = 1
'

test_expect_success 'each problem is recorded against its own file, and named on stderr' '
	while IFS="	" read -r file text; do
		got=$(q "select state || '\''|'\'' || coalesce(error, '\'''\'') from file_info where path = '\''$TRASH/c/$file'\''") &&
		case "$got" in
		"error|"*"$text"*) ;;
		*) echo "$file: expected an error with \"$text\", got \"$got\""; exit 1 ;;
		esac &&
		grep -qF "/c/$file'\'':" scan.err || { echo "$file is not named on stderr"; exit 1; }
	done <expect
'

test_expect_success 'every good file beside them is indexed, with its MD5' '
	md5_paths "state = '\''ok'\''" | sort >ok.md5 &&
	comm -23 good.md5 ok.md5 >unindexed &&
	test ! -s unindexed &&
	test "$(q "select state || md5 from file_info where name = '\''empty.jpg'\''")" = okd41d8cd98f00b204e9800998ecf8427e
'

test_expect_success 'a damaged file keeps the MD5 of what it holds' '
	md5_paths "state = '\''error'\'' and md5 is not null and path not like '\''%/special/%'\''" >bad.md5 &&
	test "$(wc -l <bad.md5)" -gt 100 &&
	md5sum -c --quiet bad.md5
'

test_expect_success 'sparse huge files are indexed as the zeros they hold' '
	test "$(q "select state || '\'' '\'' || md5 from file_info where name in ('\''huge.jpg'\'', '\''huge.mp4'\'')")" = "ok $HUGE_MD5
ok $HUGE_MD5" &&
	test "$(q "select state || '\'' '\'' || md5 from file_info where name = '\''sparse.mp4'\''")" = "ok $(md5sum <c/huge/sparse.mp4 | cut -c1-32)"
'

test_expect_success 'special files are recorded, never opened; links are not followed; the locked directory is named' '
	test "$(q "select count(*) from file_info where md5 is not null and path like '\''%/special/%'\'' and name <> '\''good-1.jpg'\'' and name <> '\''good-2.tif'\''")" = 0 &&
	test "$(q "select count(*) from file_info where name in ('\''loop-a'\'', '\''loop-b'\'', '\''up'\'', '\''inside.jpg'\'')")" = 0 &&
	grep -q "cannot open directory .*/c/special/locked.: Permission denied" scan.err &&
	test "$(q "select state || '\''|'\'' || error from dirs where path like '\''%/special/locked'\''")" = "error|cannot open directory: Permission denied"
'

test_expect_success 'the file 4,200 bytes down is indexed under its whole path' '
	test "$(q "select state || '\'' '\'' || md5 from file_info where name = '\''deep.jpg'\''")" = "ok $(cut -c1-32 deep.md5)" &&
	test "$(q "select length(path) from file_info where name = '\''deep.jpg'\''")" -gt 4200 &&
	px ls --db "$DB" -0 | tr "\0" "\n" | grep "/deep.jpg\$" >deep.path &&
	test "$(wc -c <deep.path)" -gt 4200 &&
	test "$(q "select make from file_info where name = '\''deep.jpg'\''")" = Deep
'

test_expect_success 'names with a newline, a tab, invalid UTF-8, a dash and SQL are indexed byte for byte' '
	names_ok "new
line.jpg" "tab	bed.jpg" "$(printf "bad\377\376name.jpg")" -rf.jpg --db=x.jpg "'\''); DROP TABLE files;--.jpg" &&
	test "$(q "select count(*) from files")" -gt 100
'

# Exit 1, not 0: what could not be opened is tried again, and named again,
# every scan.  The files that changed while read are read again once.
test_expect_success 'the next scan reads only what failed for want of a stable read, and exits 1' '
	scan_corpus 1 &&
	test "$(jq .new scan.json)" = 0 &&
	test "$(jq .bytes_read scan.json)" = $(($(stat -c %s c/busy/grow.bin) + $(stat -c %s c/busy/shrink.bin))) &&
	test "$(grep -c "/c/special/secret.jpg\|/c/special/locked" scan.err)" = 2 && test "$(wc -l <scan.err)" = 2 &&
	test "$(q "select state || '\'' '\'' || md5 from file_info where name = '\''grow.bin'\''")" = "ok $(md5sum <c/busy/grow.bin | cut -c1-32)" &&
	test "$(q "select state || '\'' '\'' || md5 from file_info where name = '\''shrink.bin'\''")" = "ok $(md5sum <c/busy/shrink.bin | cut -c1-32)" &&
	grep -v "^busy/" expect >expect.now && mv expect.now expect
'

test_expect_success 'and the one after reads nothing, names only the unreadable file and directory, exits 1' '
	scan_corpus 1 &&
	test "$(jq .new scan.json)" = 0 && test "$(jq .bytes_read scan.json)" = 0 &&
	test "$(wc -l <scan.err)" = 2 &&
	grep -q "cannot index .*/c/special/secret.jpg.: cannot open: Permission denied" scan.err &&
	grep -q "cannot open directory .*/c/special/locked.: Permission denied" scan.err
'

test_expect_success 'ls --errors lists exactly the hostile files' '
	px ls --db "$DB" --errors -0 --sort path | tr "\0" "\n" >errors &&
	sed "s|^|$TRASH/c/|" expect | cut -f1 | sort >expected &&
	sort errors | diff expected -
'

test_sqlite_only 'PRAGMA integrity_check checks the SQLite file'
test_expect_success 'the catalog is sound' '
	sound
'

# The same corpus through the thumbnail decoders (scan --thumbnails reads
# every image again for them), with images whose headers claim what no
# decoder should allocate and previews pointing anywhere.
test_expect_success 'scan --thumbnails of it all: no crash, no hang, exit 1; the good images get thumbnails' '
	mkdir -p c/thumbs &&
	mkfix jpeg c/thumbs/huge.jpg --width 64 --height 64 --seed 12 &&
	off=$(od -An -v -tx1 -w1 c/thumbs/huge.jpg | awk "{ if (p == \"ff\" && \$1 == \"c0\") { print NR + 3; exit } p = \$1 }") &&
	printf "\377\334\377\334" | dd of=c/thumbs/huge.jpg bs=1 seek="$off" conv=notrunc 2>/dev/null &&
	mkfix jpeg pv.jpg --width 640 --height 480 --seed 13 && mkfix jpeg img.jpg --width 2000 --height 1500 --seed 14 &&
	mkfix mpf mpf.jpg img.jpg pv.jpg && head -c $(($(stat -c %s mpf.jpg) - 100)) mpf.jpg >c/thumbs/mpf-cut.jpg &&
	mkfix raw raw.nef pv.jpg --raw-bytes 5000 && head -c 3000 raw.nef >c/thumbs/raw-cut.nef &&
	perl -e "binmode STDOUT; print \"\x89PNG\r\n\x1a\n\", pack(\"N\", 13), \"IHDR\", pack(\"NNCCCCC\", 65536, 32768, 8, 2, 0, 0, 0), pack(\"N\", 0), pack(\"N\", 0), \"IEND\", pack(\"N\", 0)" >c/thumbs/huge.png &&
	touch -d "2 days ago" c/thumbs c/thumbs/* &&
	status=0 && { run_px scan --db "$DB" --thumbnails --json c >scan.json 2>scan.err || status=$?; } &&
	{ test $status -lt 124 || { echo "the scan hung or died: exit $status"; exit 1; }; } &&
	! grep -E "Sanitizer|runtime error" scan.err &&
	test $status = 1 &&
	test "$(jq .thumbnails_made scan.json)" -gt 20 &&
	test "$(q "select count(*) from file_thumbnails where path like '\''%/good-1.jpg'\''")" -ge 9 &&
	test "$(q "select count(*) from file_info fi join files f on f.id = fi.id join thumbs t on t.md5 = f.md5 and t.size = f.size
	  where fi.path like '\''%/c/thumbs/%'\'' and t.note is not null")" = 3
'

test_done
