#!/bin/sh
# export --kphotoalbum with the photographer's metadata (issue 28): the
# files' keywords into a category (Keywords, or --keywords-category),
# their hierarchies as member groups, the people into the positionable
# People category with their areas (pixels of the image as KPhotoAlbum
# shows it), the rating on KPhotoAlbum's 0..10 scale; in the compressed
# and the readable format.  A tagged image KPhotoAlbum lists keeps the
# user's tags exactly, unless --merge-keywords; one with only the untagged
# tag gets the file's.  The real KPhotoAlbum 5.9 opens the result and
# keeps every tag, group, area and rating on its own save.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIR/tags-lib.sh"

if ! command -v exiftool >/dev/null || ! command -v python3 >/dev/null || ! command -v xmllint >/dev/null; then
	echo "1..0 # SKIP exiftool, python3 or xmllint is missing (contrib/debian-deps.sh test installs them)"
	exit 0
fi
export TZ=UTC
x() {
	xmllint --xpath "$1" "${2:-lib/index.xml}"
}
# want WHAT GOT EXPECTED
want() {
	[ "$2" = "$3" ] || { printf "%s\n  got: %s\n want: %s\n" "$1" "$2" "$3"; return 1; }
}

# What an index says of its images, the same in either format: for each
# image "file: Category=tag[@area] ... rating=N", and the member groups;
# compressed ids resolved through the categories.
cat >tags.py <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
compressed = root.get("compressed") == "1"
ids = {}
for c in root.find("Categories"):
    ids[c.get("name")] = {v.get("id"): v.get("value") for v in c}
def unescape(n):
    out, i = "", 0
    while i < len(n):
        if n.startswith("_.", i):
            out += chr(int(n[i + 2:i + 4], 16)); i += 4
        else:
            out += n[i]; i += 1
    return out
plain = {"file", "label", "description", "startDate", "endDate", "angle", "md5sum", "width", "height",
         "rating", "stackId", "stackOrder", "videoLength"}
for img in root.find("images"):
    tags = []
    for k, v in img.attrib.items():
        if k in plain:
            continue
        cat = unescape(k)
        tags += ["%s=%s" % (cat, ids[cat][i]) for i in v.split(",")]
    for o in img.iter("option"):
        cat = o.get("name") if compressed else o.get("name").replace("_", " ")
        for v in o:
            tags.append("%s=%s%s" % (cat, v.get("value"), "@" + v.get("area") if v.get("area") else ""))
    if img.get("rating"):
        tags.append("rating=" + img.get("rating"))
    print("%s: %s" % (img.get("file"), " ".join(sorted(tags))))
groups = root.find("member-groups")
for m in (groups if groups is not None else []):
    members = [m.get("member")] if m.get("member") else [ids[m.get("category")][i] for i in m.get("members", "").split(",") if i]
    for member in members:
        print("group %s: %s > %s" % (m.get("category"), m.get("group-name"), member))
PY
tags() {
	python3 tags.py "${1:-lib/index.xml}" | sort
}

test_expect_success 'setup: a library tagged in Lightroom and digiKam (hierarchies, faces, ratings)' '
	mkdir -p lib/2024 &&
	mkfix jpeg lib/2024/cph.jpg --seed 1 --date "2024:05:01 10:00:00" --width 200 --height 100 --orientation 6 &&
	et -XMP-lr:HierarchicalSubject="Places|Denmark|Copenhagen" -XMP-dc:Subject=harbour -XMP-xmp:Rating=4 \
		-XMP-mwg-rs:RegionInfo="{RegionList=[{Area={W=0.2,H=0.4,X=0.3,Y=0.4,Unit=normalized},Name=Ada,Type=Face},{Area={W=0.1,H=0.1,X=0.5,Y=0.5,Unit=normalized},Name=Rex,Type=Pet}]}" \
		-XMP-iptcExt:PersonInImage=Ben lib/2024/cph.jpg &&
	mkfix jpeg lib/2024/aarhus.jpg --seed 2 --date "2024:05:02 10:00:00" --width 100 --height 50 &&
	et -XMP-digiKam:TagsList="Places/Denmark/Aarhus" -XMP-xmp:Rating=1 \
		-XMP-mwg-rs:RegionInfo="{RegionList=[{Area={W=0.5,H=0.5,X=0.25,Y=0.25,Unit=normalized},Name=Ben,Type=Face}]}" \
		lib/2024/aarhus.jpg &&
	mkfix jpeg lib/2024/mirror.jpg --seed 3 --date "2024:05:03 10:00:00" --orientation 2 &&
	et -XMP-mwg-rs:RegionInfo="{RegionList=[{Area={W=0.5,H=0.5,X=0.25,Y=0.25,Unit=normalized},Name=Ada,Type=Face}]}" \
		-XMP-xmp:Rating=0 lib/2024/mirror.jpg &&
	mkfix jpeg lib/2024/plain.jpg --seed 4 --date "2024:05:04 10:00:00" &&
	age lib && px scan --db "$DB" -q lib
'

test_expect_success 'a new library: keywords in Keywords, hierarchies as groups, faces with areas, ratings doubled' '
	px export --db "$DB" --kphotoalbum lib 2>err && cat err &&
	grep -q "given to 3 images; 3 members added to groups" err &&
	xmllint --noout lib/index.xml &&
	tags >got &&
	cat >want <<-EOF &&
	2024/aarhus.jpg: Events=untagged Keywords=Aarhus People=Ben@0 0 50 25 rating=2
	2024/cph.jpg: Events=untagged Keywords=Copenhagen Keywords=harbour People=Ada@40 40 40 40 People=Ben rating=8
	2024/mirror.jpg: Events=untagged People=Ada
	2024/plain.jpg: Events=untagged
	group Keywords: Denmark > Aarhus
	group Keywords: Denmark > Copenhagen
	group Keywords: Places > Denmark
	EOF
	diff want got &&
	want positionable "$(x "string(//Category[@name=\"People\"]/@positionable)")" 1 &&
	px export --db "$DB" --kphotoalbum lib 2>err2 && grep -q "up to date" err2
'

test_expect_success '--keywords-category and the readable format' '
	mkdir r && cp -r lib/2024 r/ && rm -f lib/index.xml~* &&
	printf "%s\n" "<?xml version=\"1.0\" encoding=\"UTF-8\"?>" "<KPhotoAlbum version=\"8\" compressed=\"0\">" \
		"<Categories><Category name=\"Events\" icon=\"favorites\" show=\"1\" viewtype=\"0\" thumbnailsize=\"32\" positionable=\"0\"><value value=\"untagged\" id=\"1\"/></Category></Categories>" \
		"<images/><blocklist/></KPhotoAlbum>" >r/index.xml &&
	age r && px scan --db "$DB" -q r &&
	px export --db "$DB" --kphotoalbum r --keywords-category "My Tags" &&
	tags r/index.xml >got-r &&
	grep -q "^2024/cph.jpg: Events=untagged My Tags=Copenhagen My Tags=harbour People=Ada@40 40 40 40 People=Ben rating=8$" got-r &&
	grep -q "^group My Tags: Places > Denmark$" got-r &&
	want option-name "$(x "string(//image[@file=\"2024/cph.jpg\"]//option[value/@value=\"harbour\"]/@name)" r/index.xml)" My_Tags &&
	test_expect_code 64 px export --db "$DB" --kphotoalbum r --keywords-category Folder &&
	test_expect_code 64 px export --db "$DB" --format csv --merge-keywords
'

test_expect_success 'a listed image: tagged by its user, kept exactly; only the untagged tag: given the file'\''s' '
	mkdir -p m/a && cp lib/2024/cph.jpg lib/2024/aarhus.jpg m/a/ &&
	cph=$(md5sum <m/a/cph.jpg | cut -c1-32) && aarhus=$(md5sum <m/a/aarhus.jpg | cut -c1-32) &&
	cat >m/index.xml <<-EOF &&
	<?xml version="1.0" encoding="UTF-8"?>
	<KPhotoAlbum version="8" compressed="1">
	    <Categories>
	        <Category name="Events" icon="favorites" show="1" viewtype="0" thumbnailsize="32" positionable="0">
	            <value value="untagged" id="1"/>
	            <value value="trip" id="2"/>
	        </Category>
	        <Category name="People" icon="system-users" show="1" viewtype="0" thumbnailsize="32" positionable="1">
	            <value value="Zoe" id="7"/>
	        </Category>
	    </Categories>
	    <images>
	        <image file="a/cph.jpg" startDate="2024-05-01T10:00:00" angle="90" md5sum="$cph" width="100" height="200" Events="2" People="7"/>
	        <image file="a/aarhus.jpg" startDate="2024-05-02T10:00:00" md5sum="$aarhus" width="100" height="50" Events="1"/>
	    </images>
	    <blocklist/>
	</KPhotoAlbum>
	EOF
	cp m/index.xml m-old.xml && age m && px scan --db "$DB" -q m &&
	px export --db "$DB" --kphotoalbum m &&
	tags m/index.xml >got-m &&
	grep -q "^a/cph.jpg: Events=trip People=Zoe$" got-m &&
	grep -q "^a/aarhus.jpg: Events=untagged Keywords=Aarhus People=Ben@0 0 50 25 rating=2$" got-m &&
	px export --db "$DB" --kphotoalbum m --merge-keywords &&
	tags m/index.xml >got-m2 &&
	grep -q "^a/cph.jpg: Events=trip Keywords=Copenhagen Keywords=harbour People=Ada@40 40 40 40 People=Ben People=Zoe rating=8$" got-m2 &&
	grep -q "^a/aarhus.jpg: Events=untagged Keywords=Aarhus People=Ben@0 0 50 25 rating=2$" got-m2 &&
	want "user angle kept" "$(x "string(//image[@file=\"a/cph.jpg\"]/@angle)" m/index.xml)" 90 &&
	px export --db "$DB" --kphotoalbum m --merge-keywords 2>err3 && grep -q "up to date" err3
'

# The real KPhotoAlbum (Debian's 5.9), under Xvfb, on a library: it runs
# until its autosave is written (autoSave set) and is stopped.
kpa_autosave() {
	mkdir -p "$TRASH/kpa-home/.config" "$TRASH/kpa-home/run" && chmod 700 "$TRASH/kpa-home/run" &&
	printf "[General]\nautoSave=1\n[Notification Messages]\nVideoThumbnailerNotInstalled=false\n" >"$TRASH/kpa-home/.config/kphotoalbumrc" &&
	(
		export HOME="$TRASH/kpa-home" XDG_CONFIG_HOME="$TRASH/kpa-home/.config" XDG_RUNTIME_DIR="$TRASH/kpa-home/run"
		xvfb-run -a -s "-screen 0 1280x1024x24" kphotoalbum --db "$1/index.xml" >"$TRASH/kpa.log" 2>&1 &
		pid=$!
		for i in $(seq 1 150); do [ -s "$1/.#index.xml" ] && break; sleep 1; done
		sleep 2
		# only the KPhotoAlbum of this script (its --db is under $TRASH)
		for p in $(pgrep -x kphotoalbum); do
			tr "\\0" " " </proc/$p/cmdline 2>/dev/null | grep -qF "$1/index.xml" && kill -TERM $p
		done
		wait $pid 2>/dev/null
		true
	) &&
	test -s "$1/.#index.xml"
}

if ! why=$(kpa_gui_skip); then
test_expect_success 'KPhotoAlbum 5.9 opens it and keeps every tag, group, area and rating on its own save' '
	tags lib/index.xml >ours &&
	mkfix jpeg lib/2024/after.jpg --seed 9 &&
	kpa_autosave "$TRASH/lib" &&
	tags "lib/.#index.xml" | grep -v "^2024/after.jpg:" >theirs &&
	diff ours theirs &&
	want "areas" "$(grep -c "@" theirs)" 2
'
else
	test_skip 'KPhotoAlbum 5.9 opens it and keeps every tag, group, area and rating on its own save' "$why"
fi

test_done
