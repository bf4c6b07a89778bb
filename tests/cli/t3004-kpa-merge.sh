#!/bin/sh
# export --kphotoalbum merges into a KPhotoAlbum library that has years of
# tags (tests/data/kpa/index.xml: categories with their settings, Tokens,
# birth dates, member groups, a blocklist, face areas, a date range,
# angles, labels, descriptions, ratings, a stack, a video length, an
# image whose file is long gone).  20 files added, 1 renamed, 1 deleted:
# every annotation is kept, the renamed file keeps its tags, the 20 come
# in with the untagged tag in date order, and a second export changes
# nothing.  Then the compressed format, KPhotoAlbum's settings, the
# incremental export, exif-info.db's own rows, and the scan leaving
# KPhotoAlbum's files alone.
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null 2>&1 || ! command -v xmllint >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 or xmllint is missing (contrib/debian-deps.sh test installs them)"
	exit 0
fi
export TZ=UTC

# The structural comparison: old.xml and lib/index.xml, with the renames
# given as OLD=NEW arguments; prints what differs and fails on any.
cat >compare.py <<'PY'
import sys, os, xml.etree.ElementTree as ET
old, new = ET.parse(sys.argv[1]).getroot(), ET.parse(sys.argv[2]).getroot()
renames = dict(a.split("=", 1) for a in sys.argv[3:])
bad = []
def same(a, b):
    return ET.tostring(a) == ET.tostring(b)
for tag in ("Categories", "blocklist", "member-groups"):
    if not same(old.find(tag), new.find(tag)):
        bad.append("<%s> differs" % tag)
if old.attrib != new.attrib:
    bad.append("root attributes differ")
new_by_file = {i.get("file"): i for i in new.find("images")}
for i in old.find("images"):
    f = renames.get(i.get("file"), i.get("file"))
    n = new_by_file.get(f)
    if n is None:
        bad.append("image %s is gone" % f); continue
    want = dict(i.attrib, file=f)
    base = lambda p: os.path.splitext(os.path.basename(p))[0]
    if i.get("label") == base(i.get("file")):
        want["label"] = base(f)
    if n.attrib != want:
        bad.append("image %s: %s != %s" % (f, n.attrib, want))
    if [ET.tostring(c) for c in i] != [ET.tostring(c) for c in n]:
        bad.append("image %s: its tags differ" % f)
dates = [i.get("startDate") for i in new.find("images")]
if dates != sorted(dates):
    bad.append("images not in date order")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

# the index from the fixture, its md5sum placeholders filled in
fill_index() {
	cp "$REPO/tests/data/kpa/index.xml" "$1" &&
	for f in 2019/hike-1.jpg 2019/hike-2.jpg 2019/party.jpg 2020/lyon.jpg 2021/to-delete.jpg 2021/untouched.jpg; do
		sed -i "s|@$f@|$(md5sum <"lib/$f" | cut -c1-32)|" "$1" || return 1
	done &&
	! grep -q "@" "$1"
}

x() {
	xmllint --xpath "$1" lib/index.xml
}

test_expect_success 'setup: a tagged library as KPhotoAlbum left it, exported into once by nobody' '
	mkdir -p lib/2019 lib/2020 lib/2021 &&
	mkfix jpeg lib/2019/hike-1.jpg --seed 1 --date "2019:06:01 05:10:00" --width 48 --height 32 &&
	mkfix jpeg lib/2019/hike-2.jpg --seed 2 --date "2019:06:01 05:20:00" --width 48 --height 32 &&
	mkfix jpeg lib/2019/party.jpg --seed 3 --date "2019:09:14 20:00:00" --width 48 --height 32 &&
	mkfix jpeg lib/2020/lyon.jpg --seed 4 --date "2024:01:01 00:00:00" --orientation 1 --width 48 --height 32 &&
	mkfix jpeg lib/2021/to-delete.jpg --seed 5 --date "2021:01:01 09:00:00" --width 48 --height 32 &&
	mkfix jpeg lib/2021/untouched.jpg --seed 6 --date "2021:05:05 05:05:05" --width 48 --height 32 &&
	fill_index lib/index.xml && cp lib/index.xml old.xml && xmllint --noout old.xml
'

test_expect_success 'setup: 20 files added, 1 renamed, 1 deleted, a blocklisted and an excluded file, scanned' '
	mkdir -p lib/new lib/2022/moved lib/ThumbNails &&
	mkfix jpeg "lib/new/IMG_%02d.jpg" --count 20 --date "2023:03:03 10:00:00" --width 40 --height 30 &&
	mv lib/2019/party.jpg lib/2022/moved/party-renamed.jpg &&
	rm lib/2021/to-delete.jpg &&
	mkfix jpeg lib/2021/blocked.jpg --seed 7 &&
	mkfix jpeg lib/ThumbNails/thumb.jpg --seed 8 &&
	age lib && px scan --db "$DB" -q lib
'

test_expect_success 'the merge keeps every annotation, renames the moved image, adds the 20' '
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "27 images and videos, 20 added, 1 moved, 0 changed, 2 kept whose file is gone; 1 not added (blocklist), 1 not added" err &&
	xmllint --noout lib/index.xml &&
	python3 compare.py old.xml lib/index.xml 2019/party.jpg=2022/moved/party-renamed.jpg &&
	test "$(x "count(//image)")" = 27 &&
	test "$(x "string(//image[@file=\"2022/moved/party-renamed.jpg\"]/@label)")" = party-renamed &&
	test "$(x "count(//image[@file=\"2022/moved/party-renamed.jpg\"]//value[@value=\"birthday\"])")" = 1 &&
	test "$(x "string(//image[@file=\"2020/lyon.jpg\"]/@startDate)")" = 2020-02-02T12:00:00 &&
	test "$(x "string(//image[@file=\"2020/lyon.jpg\"]/@angle)")" = 180 &&
	test "$(x "count(//image[@file=\"2021/to-delete.jpg\"])")" = 1 &&
	test "$(x "count(//image[@file=\"2021/blocked.jpg\" or @file=\"ThumbNails/thumb.jpg\"])")" = 0
'

test_expect_success 'the 20 new images: their MD5 and date, the untagged tag, placed in date order' '
	test "$(x "count(//image[starts-with(@file, \"new/\")]/options/option[@name=\"Events\"]/value[@value=\"untagged\"])")" = 20 &&
	for f in lib/new/IMG_01.jpg lib/new/IMG_20.jpg; do
		rel=${f#lib/} &&
		test "$(x "string(//image[@file=\"$rel\"]/@md5sum)")" = "$(md5sum <"$f" | cut -c1-32)" || exit 1
	done &&
	test "$(x "string(//image[@file=\"new/IMG_20.jpg\"]/@startDate)")" = 2023-03-03T10:00:19 &&
	test "$(x "string(//image[@file=\"new/IMG_01.jpg\"]/following-sibling::image[1]/@file)")" = new/IMG_02.jpg &&
	test "$(x "string(//image[@file=\"2022/moved/party-renamed.jpg\"]/following-sibling::image[1]/@file)")" = 2020/lyon.jpg
'

test_expect_success 'the old index is kept as a numbered backup; a second export changes nothing' '
	cmp old.xml lib/index.xml~0001~ &&
	cp lib/index.xml first.xml && cp lib/exif-info.db first.db &&
	px export --db "$DB" --kphotoalbum lib 2>err &&
	grep -q "up to date" err &&
	cmp first.xml lib/index.xml && cmp first.db lib/exif-info.db && test ! -e lib/index.xml~0002~
'

test_expect_success 'a rescan leaves KPhotoAlbum'\''s files and the backups out of the catalog (index.xml, indexed before, is not read again)' '
	touch lib/layout.dat && mkdir -p lib/.videoThumbnails lib/CategoryImages &&
	mkfix jpeg lib/CategoryImages/People-Ada.jpg --seed 9 && age lib &&
	px scan --db "$DB" -q lib &&
	test "$(q "select count(*) from file_info where name in ('\''index.xml~0001~'\'', '\''exif-info.db'\'',
		'\''.photoidx-kpa'\'', '\''layout.dat'\'', '\''People-Ada.jpg'\'')")" = 0 &&
	test "$(q "select md5 from file_info where name = '\''index.xml'\''")" = "$(md5sum <old.xml | cut -c1-32)" &&
	px export --db "$DB" --kphotoalbum lib 2>err && grep -q "up to date" err
'

test_expect_success 'exif-info.db: rows KPhotoAlbum made are kept, a renamed file'\''s row follows it' '
	sqlite3 lib/exif-info.db "INSERT INTO exif (filename, Exif_Image_Make) VALUES ('\''$TRASH/lib/2020/gone-long-ago.avi'\'', '\''KPA made this'\'')" &&
	mkdir lib/2019/b && mv lib/2019/hike-2.jpg lib/2019/b/hike-2.jpg && age lib && px scan --db "$DB" -q lib &&
	px export --db "$DB" --kphotoalbum lib --since last 2>err &&
	grep -q "1 moved" err &&
	test "$(sqlite3 lib/exif-info.db "select Exif_Image_Make from exif where filename like '\''%gone-long-ago.avi'\''")" = "KPA made this" &&
	test "$(sqlite3 lib/exif-info.db "select count(*) from exif where filename = '\''$TRASH/lib/2019/hike-2.jpg'\''")" = 0 &&
	test "$(sqlite3 lib/exif-info.db "select count(*) from exif where filename = '\''$TRASH/lib/2019/b/hike-2.jpg'\''")" = 1 &&
	test "$(x "string(//image[@file=\"2019/b/hike-2.jpg\"]/@stackOrder)")" = 2
'

test_expect_success 'the incremental export (--since last) gives what a full one gives' '
	mkfix jpeg lib/new/late.jpg --seed 10 --date "2019:06:01 05:15:00" && age lib && px scan --db "$DB" -q lib &&
	px export --db "$DB" --kphotoalbum lib --since last 2>err && grep -q "1 added" err &&
	test "$(x "string(//image[@file=\"2019/hike-1.jpg\"]/following-sibling::image[1]/@file)")" = new/late.jpg &&
	cp lib/index.xml incremental.xml &&
	px export --db "$DB" --kphotoalbum lib 2>err && grep -q "up to date" err &&
	cmp incremental.xml lib/index.xml &&
	rows=$(sqlite3 lib/exif-info.db "select count(*) from exif") && mv lib/exif-info.db saved.db &&
	px export --db "$DB" --kphotoalbum lib --since last 2>err && grep -q "every file is merged" err &&
	test "$(sqlite3 lib/exif-info.db "select count(*) from exif")" = $((rows - 1)) &&
	sqlite3 lib/exif-info.db "select filename from exif" | grep -q "/new/IMG_07.jpg$" &&
	mv saved.db lib/exif-info.db
'

test_expect_success 'a changed file: its md5sum and size follow, the user'\''s date and rotation stay' '
	mkfix jpeg lib/2020/lyon.jpg --seed 11 --date "2024:01:01 00:00:00" --orientation 6 --width 60 --height 40 &&
	age lib && px scan --db "$DB" -q lib &&
	px export --db "$DB" --kphotoalbum lib 2>err && grep -q "1 changed" err &&
	test "$(x "string(//image[@file=\"2020/lyon.jpg\"]/@md5sum)")" = "$(md5sum <lib/2020/lyon.jpg | cut -c1-32)" &&
	test "$(x "string(//image[@file=\"2020/lyon.jpg\"]/@width)")" = 60 &&
	test "$(x "string(//image[@file=\"2020/lyon.jpg\"]/@angle)")" = 180 &&
	test "$(x "string(//image[@file=\"2020/lyon.jpg\"]/@startDate)")" = 2020-02-02T12:00:00
'

test_expect_success 'the compressed format: tags as ids kept, the new images get the untagged id' '
	mkdir -p c/old && mkfix jpeg c/old/a.jpg --seed 12 --date "2018:01:01 00:00:00" &&
	cat >c/index.xml <<-XML &&
	<?xml version="1.0" encoding="UTF-8"?>
	<KPhotoAlbum version="8" compressed="1">
	    <Categories>
	        <Category name="My Events" icon="favorites" show="1" viewtype="0" thumbnailsize="32" positionable="0">
	            <value value="trip" id="1"/>
	        </Category>
	        <Category name="People" icon="system-users" show="1" viewtype="0" thumbnailsize="32" positionable="1">
	            <value value="Ada" id="4"/>
	        </Category>
	    </Categories>
	    <images>
	        <image file="old/a.jpg" startDate="2018-01-01T00:00:00" md5sum="$(md5sum <c/old/a.jpg | cut -c1-32)" width="16" height="16" My_.20Events="1">
	            <options>
	                <option name="People">
	                    <value value="Ada" area="1 2 3 4"/>
	                </option>
	            </options>
	        </image>
	    </images>
	    <blocklist/>
	</KPhotoAlbum>
	XML
	cp c/index.xml c-old.xml &&
	mkdir -p "$HOME/.config" && printf "[General]\nuntaggedCategory=My Events\nuntaggedTag=to sort\n" >"$HOME/.config/kphotoalbumrc" &&
	mkfix jpeg c/b.jpg --seed 13 --date "2019:01:01 00:00:00" && age c && px scan --db "$DB" -q c &&
	px export --db "$DB" --kphotoalbum c 2>err &&
	test "$(xmllint --xpath "string(//Category[@name=\"My Events\"]/value[@value=\"to sort\"]/@id)" c/index.xml)" = 2 &&
	test "$(xmllint --xpath "string(//image[@file=\"b.jpg\"]/@My_.20Events)" c/index.xml)" = 2 &&
	test "$(xmllint --xpath "string(//image[@file=\"old/a.jpg\"]/@My_.20Events)" c/index.xml)" = 1 &&
	test "$(xmllint --xpath "string(//image[@file=\"old/a.jpg\"]//value/@area)" c/index.xml)" = "1 2 3 4"
'

test_expect_success 'format 9 and 10: the value marked mark-untagged is the untagged tag; what follows member-groups stays' '
	mkdir -p v9 && mkfix jpeg v9/a.jpg --seed 18 &&
	cat >v9/index.xml <<-XML &&
	<?xml version="1.0" encoding="UTF-8"?>
	<KPhotoAlbum version="10" compressed="0">
	    <Categories>
	        <Category name="Events" icon="favorites" show="1" viewtype="0" thumbnailsize="32" positionable="0">
	            <value value="untagged" id="1"/>
	        </Category>
	        <Category name="Keywords" icon="tag" show="1" viewtype="0" thumbnailsize="32" positionable="0">
	            <value value="inbox" id="7" meta="mark-untagged"/>
	        </Category>
	    </Categories>
	    <images/>
	    <blocklist/>
	    <member-groups/>
	    <global-sort-order>
	        <item category="Keywords" item="inbox"/>
	    </global-sort-order>
	</KPhotoAlbum>
	XML
	age v9 && px scan --db "$DB" -q v9 && px export --db "$DB" --kphotoalbum v9 &&
	test "$(xmllint --xpath "string(//image[@file=\"a.jpg\"]/options/option/@name)" v9/index.xml)" = Keywords &&
	test "$(xmllint --xpath "string(//image[@file=\"a.jpg\"]/options/option/value/@value)" v9/index.xml)" = inbox &&
	test "$(xmllint --xpath "string(/KPhotoAlbum/@version)" v9/index.xml)" = 10 &&
	test "$(xmllint --xpath "string(//global-sort-order/item/@item)" v9/index.xml)" = inbox
'

test_expect_success 'KPhotoAlbum'\''s settings: excludeDirectories and skipRawIfOtherMatches are followed' '
	printf "[General]\nexcludeDirectories=xml,ThumbNails,.thumbs,private\nskipRawIfOtherMatches=true\n" >"$HOME/.config/kphotoalbumrc" &&
	mkdir -p c/private c/raw &&
	mkfix jpeg c/private/secret.jpg --seed 14 && mkfix jpeg c/raw/DSC_1.jpg --seed 15 &&
	mkfix tiff c/raw/DSC_1.nef --make NIKON && mkfix tiff c/raw/DSC_2.nef --make NIKON --width 20 &&
	age c && px scan --db "$DB" -q c &&
	px export --db "$DB" --kphotoalbum c 2>err && grep -q "2 added" err &&
	test "$(xmllint --xpath "count(//image[@file=\"raw/DSC_1.jpg\" or @file=\"raw/DSC_2.nef\"])" c/index.xml)" = 2 &&
	test "$(xmllint --xpath "count(//image[@file=\"raw/DSC_1.nef\" or @file=\"private/secret.jpg\"])" c/index.xml)" = 0 &&
	test "$(xmllint --xpath "string(//image[@file=\"raw/DSC_2.nef\"]/@Events)" c/index.xml)" = 1
'

test_expect_success 'the description of a new image: EXIF ImageDescription, KPhotoAlbum'\''s boilerplate list dropped' '
	rm "$HOME/.config/kphotoalbumrc" &&
	mkfix jpeg c/d1.jpg --seed 16 --description "Harbour at dawn" &&
	mkfix jpeg c/d2.jpg --seed 17 --description "OLYMPUS DIGITAL CAMERA" &&
	age c && px scan --db "$DB" -q c && px export --db "$DB" --kphotoalbum c &&
	test "$(xmllint --xpath "string(//image[@file=\"d1.jpg\"]/@description)" c/index.xml)" = "Harbour at dawn" &&
	test "$(xmllint --xpath "count(//image[@file=\"d2.jpg\"]/@description)" c/index.xml)" = 0
'

# The real KPhotoAlbum (Debian's 5.9), under Xvfb and strace, on the
# merged library: `kpa NAME [RC]` runs it until its last start-up line
# (or its autosave, with autoSave set) and stops it; its log in NAME.log,
# the files it opened in NAME.trace.
kpa() {
	mkdir -p "$TRASH/kpa-home/.config" "$TRASH/kpa-home/run" && chmod 700 "$TRASH/kpa-home/run" &&
	printf "[Notification Messages]\nVideoThumbnailerNotInstalled=false\n%s" "${2:-}" >"$TRASH/kpa-home/.config/kphotoalbumrc" &&
	(
		export HOME="$TRASH/kpa-home" XDG_CONFIG_HOME="$TRASH/kpa-home/.config" XDG_RUNTIME_DIR="$TRASH/kpa-home/run"
		export QT_LOGGING_RULES="kphotoalbum.timingInformation.info=true;kphotoalbum.DB.FileOperations*=true"
		strace -f -qq -e trace=openat,openat2 -o "$1.trace" xvfb-run -a -s "-screen 0 1280x1024x24" \
			kphotoalbum --db "$TRASH/lib/index.xml" >"$1.log" 2>&1 &
		pid=$!
		for i in $(seq 1 ${KPA_WAIT:-120}); do
			if [ -n "${KPA_UNTIL:-}" ]; then [ -s "$KPA_UNTIL" ] && break
			else grep -q "Loading Exif DB" "$1.log" && break; fi
			sleep 1
		done
		sleep 2
		# only the KPhotoAlbum of this script (its --db is under $TRASH)
		for p in $(pgrep -x kphotoalbum); do
			tr "\\0" " " </proc/$p/cmdline 2>/dev/null | grep -qF "$TRASH/lib/index.xml" && kill -TERM $p
		done
		wait $pid 2>/dev/null
		true
	) &&
	grep -q "Loading Exif DB" "$1.log"
}

# The image files under lib/ it opened (not its own .thumbnails).
kpa_opened() {
	grep -o "\"$TRASH/lib/[^\"]*\"" "$1.trace" | tr -d "\"" | grep -v "/\.thumbnails\|/index.xml\|/exif-info.db\|/\.#index" |
		while read -r f; do [ -f "$f" ] && echo "$f"; done | sort -u
}

if ! why=$(kpa_gui_skip strace); then
test_expect_success 'KPhotoAlbum 5.9 opens the merged library: no dialog, no new file found, no image opened' '
	rm -f lib/.#index.xml && cp lib/index.xml merged.xml && cp lib/exif-info.db merged.db &&
	kpa start &&
	! grep -q "Found new image" start.log &&
	test -z "$(kpa_opened start)" &&
	grep -q "\"$TRASH/lib/index.xml\"" start.trace &&
	cmp merged.xml lib/index.xml
'

test_expect_success 'and lists every image with its tags: its own save (autosave) holds all of them, the renamed one tagged' '
	mkfix jpeg lib/new/after.jpg --seed 20 --date "2024:08:08 08:08:08" &&
	KPA_UNTIL=lib/.#index.xml KPA_WAIT=150 kpa autosave "[General]
autoSave=1
" &&
	test -s lib/.#index.xml &&
	test "$(kpa_opened autosave)" = "$TRASH/lib/new/after.jpg" &&
	test "$(xmllint --xpath "count(//image)" lib/.#index.xml)" = $(( $(x "count(//image)") + 1 )) &&
	python3 - lib/.#index.xml lib/index.xml <<-PY
	import sys, xml.etree.ElementTree as ET
	kpa, ours = (ET.parse(p).getroot() for p in sys.argv[1:])
	theirs = {i.get("file"): i for i in kpa.find("images")}
	missing = [i.get("file") for i in ours.find("images") if i.get("file") not in theirs or theirs[i.get("file")].get("md5sum") != i.get("md5sum")]
	party = theirs["2022/moved/party-renamed.jpg"]
	ids = {v.get("id"): v.get("value") for c in kpa.find("Categories") if c.get("name") == "Events" for v in c}
	tags = [ids.get(x) for x in (party.get("Events") or "").split(",")]
	print(missing, tags)
	sys.exit(1 if missing or "birthday" not in tags else 0)
	PY
	rm -f lib/.#index.xml lib/new/after.jpg
'
else
	test_skip 'KPhotoAlbum 5.9 opens the merged library' "$why"
	test_skip 'and lists every image with its tags' "$why"
fi

test_done
