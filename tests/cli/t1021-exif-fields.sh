#!/bin/sh
# The EXIF fields front ends keep in their own databases (KPhotoAlbum's
# exif-info.db): ApertureValue, ExposureProgram, MeteringMode, Flash, the
# GPS fix's time and the camera's heading, and the description; from
# JPEG's EXIF, TIFF and XMP; a catalog of schema 5 gains
# the columns without reading a file, and `scan --reread` fills them; and
# on the real samples, the values equal exiftool's.
. "$(dirname "$0")/lib.sh"

cols="aperture, exposure_program, metering_mode, flash, gps_time, gps_direction, gps_direction_ref, description"

# reals ROW: ROW as q prints it on this backend: PostgreSQL prints the
# real 4.0 as 4 (SQLite as 4.0)
reals() {
	if backend_is sqlite; then echo "$1"; else echo "$1" | sed 's/\.0|/|/g'; fi
}

test_expect_success 'setup: a JPEG and a TIFF with every field, one with none, an XMP sidecar' '
	mkdir lib &&
	mkfix jpeg lib/a.jpg --make Canon --description "Harbour at dawn" --aperture 497/100 --exposure-program 3 \
		--metering 5 --flash 16 --gps 48.8583,2.2945,35 --gps-time 13,52,111/2,2004:08:27 \
		--gps-direction 271/2,T &&
	mkfix tiff lib/b.tif --make Nikon --description "  A TIFF  " --aperture 4 --exposure-program 1 --metering 255 \
		--flash 1 --gps 1,2 --gps-time 1,2,3 --gps-direction 360,M &&
	mkfix jpeg lib/none.jpg --make Canon &&
	mkfix jpeg lib/bad.jpg --make Canon --exposure-program 77 --metering 9 --gps 1,2 --gps-time 25,0,0,2004:02:30 \
		--gps-direction 400,X &&
	cat >lib/none.xmp <<-XMP &&
	<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
	 <rdf:Description rdf:about="" xmlns:exif="http://ns.adobe.com/exif/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"
	   exif:ApertureValue="28/10" exif:ExposureProgram="2" exif:MeteringMode="3"
	   exif:GPSTimeStamp="2020-01-02T03:04:05+01:00" exif:GPSImgDirection="90" exif:GPSImgDirectionRef="T">
	  <dc:description><rdf:Alt><rdf:li xml:lang="x-default">Sidecar words</rdf:li></rdf:Alt></dc:description>
	 </rdf:Description></rdf:RDF></x:xmpmeta>
	XMP
	age lib && px scan --db "$DB" -q lib
'

test_expect_success 'JPEG: every field as written (aperture in APEX, the GPS time with its date, UTC)' '
	test "$(q "select $cols from file_info where name = '\''a.jpg'\''")" = \
		"4.97|3|5|16|2004-08-27T13:52:55.500Z|135.5|T|Harbour at dawn"
'

test_expect_success 'TIFF: the same through our reader; 360 degrees is north; a time without a date stamp' '
	test "$(q "select $cols from file_info where name = '\''b.tif'\''")" = "$(reals "4.0|1|255|1|01:02:03|0.0|M|A TIFF")"
'

test_expect_success 'nothing invented: absent tags and values out of range are unknown' '
	test "$(q "select $cols from file_info where name = '\''none.jpg'\''")" = "|||||||" &&
	test "$(q "select $cols from file_info where name = '\''bad.jpg'\''")" = "|||||||"
'

test_expect_success 'XMP: a sidecar packet read as an image of its own (UTC, the first description)' '
	test "$(q "select $cols from file_info where name = '\''none.xmp'\''")" = \
		"$(reals "2.8|2|3||2020-01-02T02:04:05Z|90.0|T|Sidecar words")"
'

test_expect_success 'the CSV and JSON exports carry the new columns' '
	px export --db "$DB" --format csv >all.csv &&
	head -1 all.csv | grep -q ",aperture,exposure_program,metering_mode,flash,gps_time,gps_direction,gps_direction_ref,description," &&
	px ls --db "$DB" --json lib/a.jpg >a.json &&
	test "$(jq -r ".[0].description, .[0].flash" a.json | tr "\n" " ")" = "Harbour at dawn 16 "
'

test_expect_success 'scan --reread reads unchanged files again (a schema 5 catalog: columns empty until then)' '
	q "update meta set aperture = NULL, description = NULL" &&
	px scan --db "$DB" --json lib >again.json &&
	test "$(jq .bytes_read again.json)" = 0 &&
	test "$(q "select count(*) from file_info where description is not null")" = 0 &&
	px scan --db "$DB" --json --reread lib >reread.json &&
	test "$(jq .bytes_read reread.json)" -gt 1000 &&
	test "$(q "select description from file_info where name = '\''a.jpg'\''")" = "Harbour at dawn" &&
	test "$(q "select count(*) from changes where kind = '\''changed'\''")" = 0
'

if [ -d "$PIX_SAMPLES" ] && command -v exiftool >/dev/null; then
test_expect_success 'the real samples: every value equal to exiftool'\''s' '
	cp -r "$PIX_SAMPLES" samples && chmod -R u+w samples &&
	test_expect_code 1 px scan --db s.db -q samples 2>/dev/null &&
	# (on PostgreSQL the paths are bytes: they come as hex, made bytes again)
	# and a number is made text before it meets the empty string
	if backend_is sqlite; then p=path t=""; else p="hex(path)" t=" as text"; fi &&
	cols=$p && for c in aperture exposure_program metering_mode flash gps_direction gps_time; do
		cols="$cols, coalesce(cast($c$t), '\'''\'')"; done &&
	if backend_is sqlite; then cols=$(echo "$cols" | sed "s/cast(\([a-z_]*\))/\1/g"); fi &&
	qdb s.db -separator "	" "select $cols from file_info where media in ('\''image'\'', '\''raw'\'')
		and (aperture is not null or exposure_program is not null or flash is not null or gps_time is not null)" |
		if backend_is sqlite; then cat; else perl -pe '\''s/^([0-9A-F]*)\t/pack("H*", $1) . "\t"/e'\''; fi >ours &&
	test "$(wc -l <ours)" -ge 40 &&
	cut -f1 ours | tr "\n" "\0" | xargs -0 exiftool -n -j -EXIF:ApertureValue -EXIF:ExposureProgram -EXIF:MeteringMode \
		-EXIF:Flash -EXIF:GPSImgDirection -EXIF:GPSTimeStamp >theirs.json 2>/dev/null || true
	test -s theirs.json &&
	jq -r ".[] | [.SourceFile, (.ApertureValue // \"\"), (.ExposureProgram // \"\"), (.MeteringMode // \"\"),
		(.Flash // \"\"), (.GPSImgDirection // \"\"), (.GPSTimeStamp // \"\")] | @tsv" theirs.json >theirs &&
	perl -e '\''
		my %t; open my $f, "<", "theirs" or die; while (<$f>) { chomp; my @c = split /\t/, $_, -1; $t{$c[0]} = [@c] }
		open my $o, "<", "ours" or die; my ($n, $bad) = (0, 0);
		while (<$o>) {
			chomp; my @c = split /\t/, $_, -1; my $e = $t{$c[0]} or next; $n++;
			# where exiftool reads a value, ours is the same (exiftool
			# gives ApertureValue as an f-number, 2^(APEX/2)); a value
			# exiftool does not read is from a block it gives up on
			my @why;
			push @why, "aperture $c[1] vs $e->[1]" if $e->[1] ne "" && ($c[1] eq "" || abs(2 ** ($c[1] / 2) - $e->[1]) > 0.01 * $e->[1]);
			my @name = ("", "", "exposure program", "metering mode", "flash");
			for my $i (2 .. 4) { push @why, "$name[$i] $c[$i] vs $e->[$i]" if $e->[$i] ne "" && $c[$i] ne $e->[$i] }
			push @why, "direction $c[5] vs $e->[5]" if $e->[5] ne "" && ($c[5] eq "" || (abs($c[5] - $e->[5]) > 1e-6 && !($c[5] == 0 && $e->[5] == 360)));
			if ($e->[6] ne "") { (my $t = $c[6]) =~ s/.*T//; $t =~ s/Z$//; my ($h, $m, $s) = split /:/, $t; my ($eh, $em, $es) = split /:/, $e->[6];
				push @why, "gps time $c[6] vs $e->[6]" unless defined $es && $h == $eh && $m == $em && abs($s - $es) < 0.01 }
			if (@why) { $bad++; print "$c[0]: @why\n" }
		}
		print "compared $n\n"; exit($bad > 0 || $n < 40);
	'\''
'
else
	test_skip 'the real samples: every value equal to exiftool'\''s' 'needs ../shared/samples and exiftool (contrib/debian-deps.sh test installs it)'
fi

test_done
