#!/bin/sh
# The photographer's metadata (issue 28): keywords, people, rating, texts,
# read from every place they are written: files written here by exiftool
# the way Lightroom, digiKam, darktable and Shotwell write them, embedded
# (JPEG's XMP, ExtendedXMP and IPTC-IIM, TIFF's XMP and IPTC tags, PNG's
# iTXt) and in sidecars; the catalog's values (file_info, file_people)
# compared value by value with exiftool's reading of the same files
# (oracle-tags.py).  Then the sidecar's precedence, the change log of an
# edited sidecar, and hostile XMP and IPTC.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/tags-lib.sh"

if ! command -v exiftool >/dev/null || ! command -v python3 >/dev/null || ! command -v jq >/dev/null; then
	echo "1..0 # SKIP exiftool, python3 or jq is missing (contrib/debian-deps.sh test installs them)"
	exit 0
fi
ORACLE=$TEST_DIR/oracle-tags.py
# exiftool writing, quiet, in place

# compare DIR [--sidecars]: the catalog against exiftool, for the images
# (and photos) at or below DIR
compare() {
	d=$1
	shift
	px ls --db "$DB" --json -t image,raw "$TRASH/$d" >ours.json &&
	q -separator "	" "select fi.path, p.name, coalesce(cast(p.x as text), ''), coalesce(cast(p.y as text), ''),
		coalesce(cast(p.w as text), ''), coalesce(cast(p.h as text), '') from file_people p
		join file_info fi on fi.id = p.file_id where fi.media in ('image', 'raw') order by fi.path, p.ord" >people.tsv &&
	find "$TRASH/$d" -type f ! -name "*.json" -print0 | xargs -0 exiftool -j -G1 -struct -n >theirs.json 2>/dev/null
	python3 "$ORACLE" theirs.json ours.json people.tsv "$@"
}

# want_q SQL WANT: the rows of SQL are WANT (lines joined by spaces),
# else both said
want_q() {
	got=$(q "$1" | tr "\n" " " | sed "s/ $//")
	[ "$got" = "$2" ] || { printf "query: %s\n  got: %s\n want: %s\n" "$1" "$got" "$2"; return 1; }
}

# micro COLUMN: SQL for the real COLUMN in millionths, an integer
micro() {
	echo "cast(round($1 * 1000000) as integer)"
}

# A PNG of 4x2 pixels (no metadata), written with python
png() {
	python3 - "$1" <<-'PY'
	import struct, sys, zlib
	def chunk(t, d):
	    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
	raw = b"".join(b"\0" + b"\x80\x40\x20" * 4 for _ in range(2))
	open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 2, 8, 2, 0, 0, 0))
	                              + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
	PY
}

LR_REGION='{AppliedToDimensions={W=32,H=16,Unit=pixel},RegionList=[{Area={W=0.25,H=0.5,X=0.375,Y=0.5,Unit=normalized},Name=Ada Lovelace,Type=Face},{Area={W=0.125,H=0.25,X=0.0625,Y=0.125,Unit=normalized},Name=Charles,Type=Face}]}'

test_expect_success 'setup: Lightroom Classic (a JPEG with XMP and IPTC-IIM; a RAW with its NAME.xmp sidecar)' '
	mkdir -p styles/lightroom &&
	mkfix jpeg styles/lightroom/DSC_0001.jpg --width 32 --height 16 --orientation 6 --make NIKON &&
	et -IPTC:CodedCharacterSet=UTF8 \
		-XMP-dc:Subject=Places -XMP-dc:Subject=Denmark -XMP-dc:Subject=Copenhagen -XMP-dc:Subject=harbour \
		-XMP-lr:HierarchicalSubject="Places|Denmark|Copenhagen" -XMP-lr:HierarchicalSubject="harbour" \
		-XMP-xmp:Rating=4 -XMP-xmp:Label=Red -XMP-dc:Title="Nyhavn at dusk" -XMP-dc:Title-da="Nyhavn i skumringen" \
		-XMP-dc:Description="Boats and the old houses" -XMP-dc:Creator="Ann Photographer" -XMP-dc:Rights="© 2024 Ann" \
		-XMP-photoshop:City=København -XMP-photoshop:State=Hovedstaden -XMP-photoshop:Country=Denmark \
		-XMP-iptcCore:Location=Nyhavn -XMP-iptcCore:CountryCode=DK -XMP-mwg-rs:RegionInfo="$LR_REGION" \
		-IPTC:Keywords=Places -IPTC:Keywords=Denmark -IPTC:Keywords=Copenhagen -IPTC:Keywords=harbour \
		-IPTC:By-line="Ann Photographer" -IPTC:City=København -IPTC:ObjectName="Nyhavn at dusk" \
		styles/lightroom/DSC_0001.jpg &&
	mkfix tiff styles/lightroom/DSC_0002.NEF --make NIKON --width 24 --height 16 &&
	et -XMP-xmp:Rating=1 -XMP-dc:Title="In-camera title" -XMP-dc:Subject=camera styles/lightroom/DSC_0002.NEF &&
	et -o styles/lightroom/DSC_0002.xmp -XMP-dc:Subject=Trips -XMP-dc:Subject=Iceland -XMP-dc:Subject=glacier \
		-XMP-lr:HierarchicalSubject="Trips|Iceland" -XMP-lr:HierarchicalSubject=glacier -XMP-xmp:Rating=5 \
		-XMP-dc:Creator=Ann -XMP-photoshop:City=Vík -XMP-tiff:Orientation=1 &&
	test -s styles/lightroom/DSC_0002.xmp
'

test_expect_success 'setup: digiKam (TagsList and the four others it writes, both region schemas, PNG with a NAME.EXT.xmp sidecar)' '
	mkdir -p styles/digikam &&
	mkfix jpeg styles/digikam/family.jpg --width 40 --height 20 &&
	et -XMP-digiKam:TagsList="People/Family/Ada" -XMP-digiKam:TagsList="Events/Birthday" \
		-XMP-lr:HierarchicalSubject="People|Family|Ada" -XMP-lr:HierarchicalSubject="Events|Birthday" \
		-XMP-mediapro:CatalogSets="People|Family|Ada" -XMP-microsoft:LastKeywordXMP="People/Family/Ada" \
		-XMP-dc:Subject=Ada -XMP-dc:Subject=Birthday -XMP-xmp:Rating=3 -XMP-microsoft:RatingPercent=50 \
		-XMP-mwg-rs:RegionInfo="{AppliedToDimensions={W=40,H=20,Unit=pixel},RegionList=[{Area={W=0.2,H=0.4,X=0.5,Y=0.5,Unit=normalized},Name=Ada,Type=Face}]}" \
		-XMP-MP:RegionInfoMP="{Regions=[{PersonDisplayName=Ada,Rectangle=0.4|, 0.3|, 0.2|, 0.4}]}" \
		-XMP-iptcExt:PersonInImage=Ada -XMP-iptcExt:PersonInImage=Grandma \
		-IPTC:Keywords=Ada -IPTC:Keywords=Birthday styles/digikam/family.jpg &&
	png styles/digikam/scan.png &&
	et -o styles/digikam/scan.png.xmp -XMP-digiKam:TagsList="Scans/1970s" -XMP-dc:Subject=1970s -XMP-xmp:Rating=2 \
		-XMP-dc:Title="An old print" &&
	et -XMP-dc:Title="Embedded in the PNG" -XMP-dc:Description="iTXt caption" styles/digikam/scan.png
'

test_expect_success 'setup: darktable (NAME.EXT.xmp sidecars: its own tags, a rejected image) and Shotwell (embedded, Windows rating)' '
	mkdir -p styles/darktable styles/shotwell &&
	mkfix tiff styles/darktable/IMG_4410.tif --make Canon &&
	et -o styles/darktable/IMG_4410.tif.xmp -XMP-xmp:Rating=-1 -XMP-xmp:Label=Purple \
		-XMP-dc:Subject=darktable -XMP-dc:Subject=tif -XMP-dc:Subject=hike \
		-XMP-lr:HierarchicalSubject="darktable|format|tif" -XMP-lr:HierarchicalSubject="hike" \
		-XMP-dc:Creator="Dee Tee" -XMP-dc:Rights="CC-BY-SA" -XMP-dc:Description="Ridge walk" &&
	mkfix jpeg styles/shotwell/img_0001.jpg --width 20 --height 10 --orientation 3 &&
	et -XMP-xmp:Rating=2 -XMP-microsoft:RatingPercent=25 -XMP-dc:Subject=Iceland -XMP-dc:Subject=waterfall \
		-XMP-lr:HierarchicalSubject="Trips|Iceland" -XMP-dc:Title="Skógafoss" -IPTC:Keywords=Iceland \
		-IPTC:Keywords=waterfall -IPTC:ObjectName="Skógafoss" \
		-XMP-mwg-rs:RegionInfo="{RegionList=[{Area={W=0.5,H=0.5,X=0.25,Y=0.75,Unit=normalized},Name=Bob,Type=Face}]}" \
		styles/shotwell/img_0001.jpg
'

test_expect_success 'setup: IPTC-IIM alone (Latin-1, undeclared), a TIFF with XMP and IPTC tags, an ExtendedXMP' '
	mkdir -p styles/other &&
	mkfix jpeg styles/other/agency.jpg &&
	et -IPTC:Keywords=Bürger -IPTC:Keywords=Rathaus -IPTC:Caption-Abstract="Die Bürger vor dem Rathaus" \
		-IPTC:By-line=Agentur -IPTC:By-line=Fotograf -IPTC:CopyrightNotice="© Agentur" -IPTC:City=Köln \
		-IPTC:Sub-location=Altstadt -IPTC:Province-State=NRW -IPTC:Country-PrimaryLocationCode=DEU \
		-IPTC:Country-PrimaryLocationName=Deutschland -IPTC:DateCreated=2005:09:29 -IPTC:TimeCreated=16:51:00+02:00 \
		styles/other/agency.jpg &&
	mkfix tiff styles/other/scan.tif --make Epson &&
	et -XMP-dc:Subject=scan -XMP-xmp:Rating=2 -IPTC:ObjectName="Scanned print" -IPTC:Keywords=ignored \
		styles/other/scan.tif &&
	# more than a segment holds: exiftool moves the largest properties
	# to the extended packet
	mkfix jpeg styles/other/extended.jpg &&
	et -XMP-dc:Subject=before -XMP-xmp:Rating=5 -XMP-dc:Title="$(head -c 10000 /dev/zero | tr "\0" t)" \
		-XMP-dc:Rights="$(head -c 31000 /dev/zero | tr "\0" r)" \
		-XMP-dc:Description="$(head -c 31000 /dev/zero | tr "\0" d)" styles/other/extended.jpg &&
	exiftool -v3 styles/other/extended.jpg | grep -q "HasExtendedXMP = " &&
	age styles && px scan --db "$DB" -q styles
'

test_expect_success 'the catalog has what exiftool reads, embedded and in sidecars, value by value' '
	compare styles --sidecars >cmp.out || { cat cmp.out; false; } &&
	cat cmp.out && test "$(sed -n "s/^compared \([0-9]*\) values$/\1/p" cmp.out)" -ge 100
'

test_expect_success 'by hand: a hierarchy and the flat keywords of Lightroom, the rotated regions, IPTC date' '
	want_q "select keywords from file_info where name = '\''DSC_0001.jpg'\''" "Places/Denmark/Copenhagen harbour" &&
	want_q "select keyword, parent_ord, depth, is_assigned from keywords k join files f on f.id = k.file_id
		where f.name = '\''DSC_0001.jpg'\'' order by ord" "Places||1|0 Denmark|0|2|0 Copenhagen|1|3|1 harbour||1|1" &&
	# (in millionths: the two backends print reals each its own way)
	want_q "select p.name, type, $(micro area_x), $(micro area_y), $(micro area_w), $(micro area_h) from people p
		join files f on f.id = p.file_id where f.name = '\''DSC_0001.jpg'\'' and p.ord = 0" \
		"Ada Lovelace|Face|250000|250000|250000|500000" &&
	want_q "select $(micro x), $(micro y), $(micro w), $(micro h) from file_people p join file_info fi on fi.id = p.file_id
		where fi.name = '\''DSC_0001.jpg'\'' and p.ord = 0" "250000|250000|500000|250000" &&
	want_q "select date_taken, date_tz, date_source from file_info where name = '\''agency.jpg'\''" \
		"2005-09-29T16:51:00|+02:00|IPTC DateCreated" &&
	want_q "select city, creator from file_info where name = '\''agency.jpg'\''" "Köln|Agentur; Fotograf" &&
	want_q "select rating, length(title), length(caption), length(copyright), keywords from file_info
		where name = '\''extended.jpg'\''" "5|10000|31000|31000|before"
'

test_expect_success 'the sidecar wins field by field: its rating and keywords, the embedded title where it gives none' '
	want_q "select rating, keywords, title, city from file_info where name = '\''DSC_0002.NEF'\''" "5|Trips/Iceland glacier|In-camera title|Vík" &&
	want_q "select rating, keywords from file_info where name = '\''DSC_0002.xmp'\''" "5|Trips/Iceland glacier" &&
	want_q "select count(*) from file_keywords k join file_info fi on fi.id = k.file_id
		where fi.name = '\''DSC_0002.NEF'\'' and k.keyword = '\''camera'\''" 0 &&
	want_q "select case when from_id = sidecar_id then 1 else 0 end from file_keywords k join file_info fi on fi.id = k.file_id
		where fi.name = '\''DSC_0002.NEF'\'' and k.ord = 0" 1
'

test_expect_success 'an edited sidecar: the change log has its and its image'\''s keyword and rating change' '
	seq0=$(q "select max(seq) from changes") &&
	et -XMP-xmp:Rating=2 -XMP-dc:Subject-=glacier -XMP-lr:HierarchicalSubject-=glacier styles/lightroom/DSC_0002.xmp &&
	age styles/lightroom/DSC_0002.xmp && px scan --db "$DB" -q styles &&
	px changes --db "$DB" --since "$seq0" --json >ch.json &&
	test "$(jq -r "[.changes[] | select(.kind == \"changed\") | .path | sub(\".*/\"; \"\")] | sort | join(\" \")" ch.json)" = \
		"DSC_0002.NEF DSC_0002.xmp" &&
	test "$(jq -c ".changes[] | select(.path | endswith(\"NEF\")) | [.old_rating, .new_rating, .old_keywords, .new_keywords, .old_md5 == .new_md5]" ch.json)" = \
		"[5,2,[\"Trips/Iceland\",\"glacier\"],[\"Trips/Iceland\"],true]" &&
	want_q "select rating, keywords from file_info where name = '\''DSC_0002.NEF'\''" "2|Trips/Iceland"
'

test_expect_success 'a sidecar deleted: the image has its own values again, and the log says so' '
	seq0=$(q "select max(seq) from changes") &&
	rm styles/lightroom/DSC_0002.xmp && px scan --db "$DB" -q styles &&
	want_q "select rating, keywords, sidecar_id from file_info where name = '\''DSC_0002.NEF'\''" "1|camera|" &&
	px changes --db "$DB" --since "$seq0" --json >ch2.json &&
	test "$(jq -c ".changes[] | select(.path | endswith(\"NEF\")) | [.kind, .old_rating, .new_rating, .new_keywords]" ch2.json)" = \
		"[\"changed\",2,1,[\"camera\"]]" &&
	sound && tags_sound
'

test_expect_success 'an unchanged rescan reads nothing and logs nothing; --reread logs no keyword change' '
	seq0=$(q "select max(seq) from changes") &&
	px scan --db "$DB" --json styles >again.json && test "$(jq .bytes_read again.json)" = 0 &&
	px scan --db "$DB" --json --reread styles >reread.json && test "$(jq .bytes_read reread.json)" -gt 0 &&
	want_q "select count(*) from changes where seq > $seq0" 0 &&
	tags_sound
'

test_expect_success 'forget drops the keyword and people rows of the files it forgets' '
	mv styles/digikam moved-away && px scan --db "$DB" -q styles &&
	px forget --db "$DB" --missing >/dev/null 2>&1 &&
	want_q "select count(*) from keywords where file_id not in (select id from files)" 0 &&
	want_q "select count(*) from people where file_id not in (select id from files)" 0 &&
	mv moved-away styles/digikam && sound && tags_sound
'

# --- hostile XMP and IPTC: a note (the file in state error), the rest kept ---

test_expect_success 'setup: hostile packets and blocks, beside a good file' '
	mkdir hostile &&
	mkfix jpeg hostile/good.jpg && et -XMP-dc:Subject=fine hostile/good.jpg &&
	mkfix jpeg hostile/base.jpg --make Canon &&
	# entity expansion (a "billion laughs"), declared in a sidecar
	cp hostile/base.jpg hostile/laughs.jpg &&
	printf "%s" "<?xpacket begin=\"\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?><!DOCTYPE x [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]><x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>&c;</dc:title></rdf:Description></rdf:RDF></x:xmpmeta>" >hostile/laughs.jpg.xmp &&
	# 100,000 levels of nesting
	cp hostile/base.jpg hostile/deep.jpg &&
	{ printf "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\" xmp:Rating=\"3\">"
	  i=0; while [ $i -lt 2000 ]; do printf "<a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a><a>"; i=$((i + 1)); done; } >hostile/deep.jpg.xmp &&
	# a 100 MB sidecar
	cp hostile/base.jpg hostile/huge.jpg &&
	{ printf "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\" xmp:Rating=\"4\"><!--"; head -c 100000000 /dev/zero | tr "\0" "x"; printf "%s" "--></rdf:Description></rdf:RDF></x:xmpmeta>"; } >hostile/huge.jpg.xmp &&
	# invalid UTF-8 in an embedded keyword, a region far outside the image
	cp hostile/base.jpg hostile/utf8.jpg && et -XMP-dc:Subject=ok -XMP-xmp:Rating=2 hostile/utf8.jpg &&
	perl -0777 -pi -e "s/>ok</>o\xff\xfek</" hostile/utf8.jpg &&
	cp hostile/base.jpg hostile/region.jpg &&
	et -XMP-mwg-rs:RegionInfo="{RegionList=[{Area={W=0.1,H=0.1,X=-40,Y=0.5,Unit=normalized},Name=Far,Type=Face}]}" \
		-XMP-dc:Subject=kept hostile/region.jpg &&
	# IPTC: a dataset past its block, and a character set not known
	cp hostile/base.jpg hostile/iptc-cut.jpg && et -IPTC:ObjectName=Kept -IPTC:Keywords=longer-than-the-block hostile/iptc-cut.jpg &&
	perl -0777 -pi -e "s/\x1c\x02\x19\x00\x15longer/\x1c\x02\x19\x7f\x15longer/" hostile/iptc-cut.jpg &&
	# (ESC $ B, JIS X 0208, in place of ESC % G: the same length)
	cp hostile/base.jpg hostile/charset.jpg &&
	et -IPTC:CodedCharacterSet=UTF8 -IPTC:ObjectName=Tokyo -IPTC:City=Tokyo hostile/charset.jpg &&
	perl -0777 -pi -e "s/\x1c\x02\x5a\x00\x05Tokyo/\x1c\x02\x5a\x00\x05T\xb0\xa1yo/; s/\x1b%G/\x1b\\\$B/" hostile/charset.jpg &&
	exiftool -IPTC:CodedCharacterSet hostile/charset.jpg | grep -q "ESC \\$ B" &&
	age hostile
'

test_expect_success 'each hostile file: exit 1, one warning each, a note, the rest of its row kept; the catalog sound' '
	test_expect_code 1 px scan --db "$DB" -q hostile 2>err &&
	cat err &&
	test "$(grep -c "laughs.jpg.xmp.*corrupt XMP.*entity" err)" = 1 &&
	test "$(grep -c "deep.jpg.xmp.*corrupt XMP.*deeper" err)" = 1 &&
	test "$(grep -c "huge.jpg.xmp.*only its first" err)" = 1 &&
	test "$(grep -c "utf8.jpg.*corrupt XMP.*UTF-8" err)" = 1 &&
	test "$(grep -c "region.jpg.*'\''Far'\''" err)" = 1 &&
	test "$(grep -c "iptc-cut.jpg.*corrupt IPTC.*runs past" err)" = 1 &&
	test "$(grep -c "charset.jpg.*character set" err)" = 1 &&
	want_q "select state, make, case when md5 is null then 0 else 1 end from file_info where name = '\''region.jpg'\''" "error|Canon|1" &&
	want_q "select keywords, people from file_info where name = '\''region.jpg'\''" "kept|Far" &&
	want_q "select area_x from people p join files f on f.id = p.file_id where f.name = '\''region.jpg'\''" "" &&
	want_q "select rating from file_info where name = '\''deep.jpg.xmp'\''" 3 &&
	want_q "select rating from file_info where name = '\''huge.jpg'\''" 4 &&
	want_q "select title from file_info where name = '\''iptc-cut.jpg'\''" Kept &&
	want_q "select state, keywords from file_info where name = '\''good.jpg'\''" "ok|fine" &&
	sound && tags_sound
'

test_done
