#!/bin/sh
# Volumes: a library on an external disk or a camera card keeps its records
# wherever it is mounted (issue 14).  Loop-mounted ext4 images with their
# own UUIDs and labels, and a FAT image (a camera card, serial 1234-ABCD),
# are mounted, scanned, unmounted and mounted again elsewhere, through
# other loop devices (other device numbers), as a user with a USB disk
# does: a re-mount reads no file data, adds no file, and is one
# "remounted" entry in the change log; an unmounted volume's files are
# offline, never missing, and ls and dups leave them out unless --offline;
# two volumes holding the same photo are one group of two copies in dups,
# never a phantom; forget drops exactly what it is asked to.
# Needs root (losetup, mount); skipped otherwise.  The FAT part uses the
# kernel's vfat, else fusefat; skipped when neither is there.
. "$(dirname "$0")/lib.sh"

# new UUIDs each run: a volume of another run (or a developer's second
# checkout testing at the same time) is never taken for one of these
U1=$(cat /proc/sys/kernel/random/uuid)
U2=$(cat /proc/sys/kernel/random/uuid)
SERIAL=$(od -An -N4 -tx1 /dev/urandom | tr -d " \n" | tr a-f A-F | sed "s/^\(....\)/\1-/")

# Every mount under $TRASH is undone, and every loop device of our images
# detached, by the exit trap too, when a test failed half-way.
unmount_all() {
	findmnt -rn -o TARGET | grep "^$TRASH/" | sort -r | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	for img in "$TRASH"/*.img; do
		[ -e "$img" ] || continue
		losetup -j "$img" | cut -d: -f1 | while read -r l; do losetup -d "$l" 2>/dev/null; done
	done
}
trap 'unmount_all; cleanup' EXIT

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP needs root (losetup and mount)"
	exit 0
fi
tools="losetup mkfs.ext4 findmnt jq strace"
if backend_is sqlite; then tools="$tools sqlite3"; fi
for tool in $tools; do
	if ! command -v $tool >/dev/null; then
		echo "1..0 # SKIP $tool is not installed"
		exit 0
	fi
done
truncate -s 1M probe.img
if ! l=$(losetup -f --show probe.img 2>/dev/null); then
	echo "1..0 # SKIP losetup does not work here (no loop devices?)"
	exit 0
fi
losetup -d "$l"
rm -f probe.img

# mkext4 IMG UUID LABEL: an empty 32 MiB ext4 image
mkext4() {
	rm -f "$1" && truncate -s 32M "$1" && mkfs.ext4 -q -F -U "$2" -L "$3" "$1"
}

# mnt IMG DIR: IMG on a loop device of its own (the first free one),
# mounted at DIR.  The kernel's vfat or fusefat for a FAT image.
mnt() {
	mkdir -p "$2" &&
	l=$(losetup -f --show "$1") &&
	case $1 in
	*fat*.img)
		if [ "$FAT" = vfat ]; then
			mount -t vfat "$l" "$2"
		else
			fusefat -o "rw+,fsname=$l" "$l" "$2" >/dev/null 2>&1
		fi ;;
	*)
		mount "$l" "$2" ;;
	esac || { losetup -d "$l"; return 1; }
	echo "mounted $1 at $2 through $l (device $(stat -c %d "$2"))"
}

# umnt DIR [keep]: unmounts DIR and detaches its loop device (unless
# keep: the device stays busy, so the next mnt gets another one)
umnt() {
	l=$(findmnt -n -o SOURCE --mountpoint "$1") &&
	umount "$1" &&
	if [ "${2:-}" != keep ]; then losetup -d "$l"; fi
}

# sum of the sizes of the files under DIR
bytes_under() {
	find "$1" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'
}

# the last sequence number of the change log
last_seq() {
	px changes --db "$DB" --json | jq .last_seq
}

# vol IDENT FILTER: jq FILTER applied to the volume IDENT of volumes --json
vol() {
	px volumes --db "$DB" --json >v.json &&
	jq -c ".[] | select(.ident == \"$1\") | $2" v.json
}

# state_counts [WHERE]: "state count" lines of file_info, in state order
state_counts() {
	q "select state || ' ' || count(*) from file_info ${1:-} group by state order by state" | tr '\n' ' ' | sed 's/ $//'
}

# scan_nopath: photoidx scan with no path, exit status in rc.txt
scan_nopath() {
	set +e
	px scan --db "$DB" "$@" >s.out 2>s.err
	echo $? >rc.txt
	set -e
	echo "scan with no path: exit $(cat rc.txt)" && cat s.err
}

test_expect_success 'a catalog with no roots: scan with no path is a usage error (64)' '
	test_expect_code 64 px scan --db "$TRASH/empty.db"
'

test_expect_success 'ext4 volume PHOTOS at A, 20 JPEGs in two folders: volumes --json lists it' '
	mkext4 photos.img $U1 PHOTOS &&
	mnt photos.img A &&
	mkdir -p A/DCIM/100CANON A/DCIM/101CANON &&
	mkfix jpeg A/DCIM/100CANON/IMG_%04d.jpg --count 10 --size 30000 --make Canon --date "2024:05:06 07:08:09" &&
	mkfix jpeg A/DCIM/101CANON/IMG_%04d.jpg --count 10 --size 30000 --seed 2 --make Canon --date "2024:05:07 07:08:09" &&
	age A/DCIM &&
	bytes_under A/DCIM >bytes1 &&
	px scan --db "$DB" --json A >s.json &&
	test "$(jq -c "[.new, .missing, .errors]" s.json)" = "[20,0,0]" &&
	px volumes --db "$DB" --json >v.json && cat v.json &&
	test "$(jq -c ".[] | select(.ident == \"$U1\") | [.kind, .uuid, .label, .fstype, .mount_point, .online, .files, .bytes]" v.json)" = \
		"[\"uuid\",\"$U1\",\"PHOTOS\",\"ext4\",\"$TRASH/A\",true,20,$(cat bytes1)]" &&
	jq -e ".[] | select(.ident == \"$U1\") | .last_scan_at != null and (.id | type) == \"number\"" v.json &&
	test "$(q "select count(*) from volumes where ident = '\''$U1'\'' and uuid = '\''$U1'\'' and kind = '\''uuid'\'' and label = '\''PHOTOS'\'' and is_online = 1")" = 1 &&
	test "$(q "select count(*) from file_info where volume = '\''$U1'\'' and volume_label = '\''PHOTOS'\'' and rel_path like '\''DCIM/10_CANON/IMG_%.jpg'\'' and path = '\''$TRASH/A/'\'' || rel_path")" = 20 &&
	q "select rel_path || '\'' '\'' || md5 from file_info order by rel_path" >md5s.A &&
	test "$(wc -l <md5s.A)" = 20 &&
	px volumes --db "$DB" >v.txt && cat v.txt &&
	grep PHOTOS v.txt | grep -q "$U1" && grep PHOTOS v.txt | grep -q "$TRASH/A" &&
	px dups --db "$DB" --json | jq -e ".n_groups == 0"
'

test_expect_success 'the same disk mounted at B: not a byte read, no JPEG opened, 20 rows under B, one remounted entry' '
	seq0=$(last_seq) &&
	umnt A && mnt photos.img B &&
	strace -f -qq -e trace=openat,openat2 -o trace env ASAN_OPTIONS=detect_leaks=0 PIX_IO=threads \
		"$PHOTOIDX" scan --db "$DB" B >out 2>err &&
	cat out err &&
	grep -q "^0 new, " out && grep -q "read 0 B of file data" out && test ! -s err &&
	grep -q "openat" trace &&
	! grep "\.jpg\"" trace &&
	test "$(q "select count(*) from file_info")" = 20 &&
	test "$(q "select count(*) from file_info where path = '\''$TRASH/B/'\'' || rel_path and state = '\''ok'\''")" = 20 &&
	q "select rel_path || '\'' '\'' || md5 from file_info order by rel_path" | diff md5s.A - &&
	q "select md5 || '\''  '\'' || path from file_info" | md5sum -c --quiet &&
	test "$(vol $U1 "[.mount_point, .online, .files]")" = "[\"$TRASH/B\",true,20]" &&
	px changes --db "$DB" --since "$seq0" --json >c.json && cat c.json &&
	test "$(jq ".changes | length" c.json)" = 1 &&
	test "$(jq -c ".changes[0] | [.kind, .old_path, .new_path]" c.json)" = "[\"remounted\",\"$TRASH/A\",\"$TRASH/B\"]" &&
	jq -e ".changes[0] | has(\"volume\")" c.json
'

test_expect_success 'unplugged: scan with no path names it offline; 20 offline, none missing; ls leaves them out' '
	loop_b=$(findmnt -n -o SOURCE --mountpoint B) && echo "$loop_b" >loop_b &&
	umnt B keep &&
	seq0=$(last_seq) &&
	scan_nopath &&
	case $(cat rc.txt) in 0|1) ;; *) false ;; esac &&
	grep offline s.err | grep -q -e "$TRASH/A" -e "$TRASH/B" &&
	test "$(state_counts)" = "offline 20" &&
	test "$(q "select count(*) from volumes where ident = '\''$U1'\'' and is_online = 0")" = 1 &&
	px ls --db "$DB" >ls.out && test ! -s ls.out &&
	px ls --db "$DB" --offline >ls.out && test "$(wc -l <ls.out)" = 20 &&
	test "$(vol $U1 "[.online, .files]")" = "[false,20]" &&
	px volumes --db "$DB" >v.txt && cat v.txt &&
	grep PHOTOS v.txt | grep -q offline &&
	px changes --db "$DB" --since "$seq0" --json >c.json && cat c.json &&
	test "$(jq -c "[.changes[].kind]" c.json)" = "[\"offline\"]"
'

test_expect_success 'plugged in again at B through another loop device (a new device number): 0 bytes read, back to ok' '
	olddev=$(q "select dev from volumes where ident = '\''$U1'\''") &&
	seq0=$(last_seq) &&
	mnt photos.img B &&
	losetup -d "$(cat loop_b)" &&
	newdev=$(stat -c %d B) && echo "device $olddev, now $newdev" &&
	test "$newdev" != "$olddev" &&
	px scan --db "$DB" --json B >s.json && cat s.json &&
	test "$(jq -c "[.new, .changed, .missing, .bytes_read]" s.json)" = "[0,0,0,0]" &&
	test "$(state_counts)" = "ok 20" &&
	test "$(q "select dev from volumes where ident = '\''$U1'\''")" = "$newdev" &&
	test "$(vol $U1 "[.mount_point, .online]")" = "[\"$TRASH/B\",true]" &&
	px ls --db "$DB" >ls.out && test "$(wc -l <ls.out)" = 20 &&
	px changes --db "$DB" --since "$seq0" --json >c.json && cat c.json &&
	test "$(jq -c "[.changes[] | [.kind, .old_path, .new_path, .volume]]" c.json)" = "[[\"remounted\",\"$TRASH/B\",\"$TRASH/B\",\"$U1\"]]"
'

test_expect_success 'two volumes holding the same photo: dups shows it once, with one copy on each' '
	mkext4 backup.img $U2 BACKUP &&
	mnt backup.img C &&
	mkfix jpeg same.jpg --size 40000 --seed 77 --make Canon --date "2024:06:01 12:00:00" &&
	mkdir -p B/shared C/photos &&
	cp same.jpg B/shared/same.jpg && cp same.jpg C/photos/same.jpg &&
	mkfix jpeg C/photos/only-%02d.jpg --count 3 --size 20000 --seed 9 --date "2024:07:01 12:00:00" &&
	age B/shared C/photos &&
	px scan --db "$DB" -q B C &&
	md5=$(md5sum <same.jpg | cut -c1-32) && echo $md5 >md5.same &&
	px dups --db "$DB" --json >d.json && cat d.json &&
	test "$(jq -c "[.n_groups, .n_files]" d.json)" = "[1,2]" &&
	test "$(jq -r ".groups[0].md5" d.json)" = "$md5" &&
	test "$(jq -r ".groups[0].files[].path" d.json | sort | tr "\n" " ")" = "$TRASH/B/shared/same.jpg $TRASH/C/photos/same.jpg " &&
	test "$(q "select volume from file_info where md5 = '\''$md5'\'' order by volume" | tr "\n" " ")" = \
		"$(printf "%s\n" "$U1" "$U2" | LC_ALL=C sort | tr "\n" " ")"
'

test_expect_success 'PHOTOS re-mounted at a third place and scanned: still two copies, no phantom' '
	umnt B && mnt photos.img D &&
	px scan --db "$DB" --json D >s.json && cat s.json &&
	test "$(jq -c "[.new, .bytes_read]" s.json)" = "[0,0]" &&
	px dups --db "$DB" --json >d.json && cat d.json &&
	test "$(jq -c "[.n_groups, .n_files]" d.json)" = "[1,2]" &&
	test "$(jq -r ".groups[0].files[].path" d.json | sort | tr "\n" " ")" = "$TRASH/C/photos/same.jpg $TRASH/D/shared/same.jpg " &&
	test "$(q "select count(*) from file_info where md5 = '\''$(cat md5.same)'\''")" = 2 &&
	test "$(q "select count(*) from file_info where volume = '\''$U1'\''")" = 21
'

test_expect_success 'BACKUP unplugged and a rescan: dups shows no group, dups --offline the group of two' '
	umnt C &&
	scan_nopath &&
	case $(cat rc.txt) in 0|1) ;; *) false ;; esac &&
	grep offline s.err | grep -q "$TRASH/C" &&
	test "$(state_counts "where volume = '\''$U2'\''")" = "offline 4" &&
	test "$(state_counts "where volume = '\''$U1'\''")" = "ok 21" &&
	px dups --db "$DB" --json >d.json && cat d.json &&
	test "$(jq -c "[.n_groups, .n_files]" d.json)" = "[0,0]" &&
	px dups --db "$DB" --json --offline >d.json && cat d.json &&
	test "$(jq -c "[.n_groups, .n_files]" d.json)" = "[1,2]" &&
	test "$(jq -r ".groups[0].files[].path" d.json | sort | tr "\n" " ")" = "$TRASH/C/photos/same.jpg $TRASH/D/shared/same.jpg "
'

test_expect_success 'status names the catalog, its roots and its volumes' '
	px status --db "$DB" >st.txt && cat st.txt &&
	grep -q "$(catalog_uri "$DB")" st.txt && grep -q "$TRASH/D" st.txt && grep -q "$TRASH/C" st.txt &&
	grep -q PHOTOS st.txt && grep -q BACKUP st.txt &&
	px status --db "$DB" --json >st.json && jq . st.json >/dev/null &&
	grep -q "$U2" st.json
'

# the FAT card: the kernel's vfat, else fusefat
FAT=
if grep -qw vfat /proc/filesystems; then
	FAT=vfat
elif command -v fusefat >/dev/null && [ -e /dev/fuse ]; then
	FAT=fusefat
fi
if [ -z "$FAT" ] || ! command -v mkfs.vfat >/dev/null; then
	test_skip 'FAT card: scanned at A, re-mounted at B, unplugged' 'no vfat in this kernel, and no fusefat (or mkfs.vfat)'
else
	test_expect_success "FAT card ($FAT) CARD $SERIAL at FA: volumes lists it by its serial" '
		rm -f card-fat.img && truncate -s 32M card-fat.img &&
		mkfs.vfat -i "$(echo "$SERIAL" | tr -d -)" -n CARD card-fat.img >/dev/null &&
		mnt card-fat.img FA &&
		mkdir -p FA/DCIM/100CANON &&
		mkfix jpeg FA/DCIM/100CANON/IMG_%04d.jpg --count 10 --size 20000 --seed 5 --make Canon --date "2024:08:01 09:00:00" &&
		{ find FA -type f -exec touch -d "2024-08-01 09:00:00" {} + 2>/dev/null || :; } &&
		if [ -n "$(find FA -type f -newermt "5 seconds ago")" ]; then sleep 2; fi &&
		find FA -type f | sort && find FA -type f | wc -l >n.fat &&
		bytes_under FA >bytes.fat &&
		px scan --db "$DB" --json FA >s.json && cat s.json &&
		test "$(jq -c "[.new, .errors]" s.json)" = "[$(cat n.fat),0]" &&
		px volumes --db "$DB" --json >v.json && cat v.json &&
		test "$(jq -c ".[] | select(.ident == \"$SERIAL\") | [.uuid, .label, .mount_point, .online, .files, .bytes]" v.json)" = \
			"[\"$SERIAL\",\"CARD\",\"$TRASH/FA\",true,$(cat n.fat),$(cat bytes.fat)]" &&
		q "select rel_path || '\'' '\'' || md5 from file_info where volume = '\''$SERIAL'\'' order by rel_path" >md5s.fat &&
		test "$(wc -l <md5s.fat)" = "$(cat n.fat)" && grep -q "^DCIM/100CANON/IMG_0001.jpg " md5s.fat
	'

	test_expect_success "FAT card re-mounted at FB: 0 bytes read, 0 new, paths under FB" '
		umnt FA && mnt card-fat.img FB &&
		q "select ino from file_info where volume = '\''$SERIAL'\'' order by rel_path" >ino.before &&
		# FAT and FUSE make inode numbers up (fusefat: in the order files
		# are looked up): looked up backwards, every file gets another
		find FB -type f | sort -r | xargs stat -c %i >/dev/null &&
		px scan --db "$DB" --json FB >s.json && cat s.json &&
		test "$(jq -c "[.new, .changed, .missing, .bytes_read]" s.json)" = "[0,0,0,0]" &&
		test "$(q "select count(*) from file_info where volume = '\''$SERIAL'\'' and state = '\''ok'\'' and path = '\''$TRASH/FB/'\'' || rel_path")" = "$(cat n.fat)" &&
		q "select rel_path || '\'' '\'' || md5 from file_info where volume = '\''$SERIAL'\'' order by rel_path" | diff md5s.fat - &&
		test "$(vol $SERIAL "[.mount_point, .online]")" = "[\"$TRASH/FB\",true]"
	'

	test_expect_success "FAT card unplugged: its files offline, none missing" '
		umnt FB &&
		scan_nopath &&
		case $(cat rc.txt) in 0|1) ;; *) false ;; esac &&
		grep offline s.err | grep -q -e "$TRASH/FA" -e "$TRASH/FB" &&
		test "$(state_counts "where volume = '\''$SERIAL'\''")" = "offline $(cat n.fat)" &&
		test "$(vol $SERIAL ".online")" = false
	'
fi

test_expect_success 'forget --volume UUID of the unplugged BACKUP: its 4 rows gone, it says 4' '
	n=$(q "select count(*) from file_info") &&
	px forget --db "$DB" --volume $U2 >f.out 2>&1 && cat f.out &&
	grep -qw 4 f.out &&
	test "$(q "select count(*) from file_info where volume = '\''$U2'\''")" = 0 &&
	test "$(q "select count(*) from file_info")" = $((n - 4)) &&
	test "$(state_counts "where volume = '\''$U1'\''")" = "ok 21" &&
	px dups --db "$DB" --json --offline | jq -e ".n_groups == 0"
'

test_expect_success 'forget --missing removes the one missing file only, not the offline ones' '
	rm D/DCIM/100CANON/IMG_0003.jpg &&
	px scan --db "$DB" --json D >s.json && test "$(jq .missing s.json)" = 1 &&
	test "$(state_counts "where volume = '\''$U1'\''")" = "missing 1 ok 20" &&
	offline=$(q "select count(*) from file_info where state = '\''offline'\''") &&
	px forget --db "$DB" --missing >f.out 2>&1 && cat f.out &&
	grep -qw 1 f.out &&
	test "$(state_counts "where volume = '\''$U1'\''")" = "ok 20" &&
	test "$(q "select count(*) from file_info where state = '\''offline'\''")" = "$offline" &&
	test "$(q "select count(*) from file_info where rel_path = '\''DCIM/100CANON/IMG_0003.jpg'\'' and volume = '\''$U1'\''")" = 0
'

test_expect_success 'forget --volume of a volume mounted now is refused without --force, and says where' '
	n=$(q "select count(*) from file_info") &&
	test_expect_code 64 px forget --db "$DB" --volume PHOTOS 2>err && cat err &&
	grep -q "is mounted at .*D.*--force" err &&
	test "$(q "select count(*) from file_info")" = "$n" &&
	px forget --db "$DB" --volume PHOTOS --dry-run >f.out && grep -q "would forget 20 files of volume PHOTOS (" f.out &&
	test "$(q "select count(*) from file_info")" = "$n"
'

if [ -n "$FAT" ]; then
	test_expect_success 'forget --volume LABEL of the unplugged card: all its rows gone, it says how many' '
		px forget --db "$DB" --volume CARD >f.out 2>&1 && cat f.out &&
		grep -qw "$(cat n.fat)" f.out &&
		test "$(q "select count(*) from file_info where volume = '\''$SERIAL'\''")" = 0 &&
		test "$(state_counts "where volume = '\''$U1'\''")" = "ok 20"
	'
fi

test_expect_success 'scan of the empty mount point of an unplugged volume: nothing missing, its files stay offline' '
	findmnt -n -o SOURCE --mountpoint D >loop_d &&
	umnt D keep &&
	test -d D && test -z "$(ls -A D)" &&
	set +e; px scan --db "$DB" D 2>err; rc=$?; set -e
	cat err && echo "scan D (empty mount point): exit $rc" &&
	case $rc in 0|1) ;; *) false ;; esac &&
	test "$(state_counts "where volume = '\''$U1'\''")" = "offline 20" &&
	test "$(q "select count(*) from file_info where state = '\''missing'\''")" = 0 &&
	px ls --db "$DB" --offline >ls.out && test "$(wc -l <ls.out)" = 20
'

test_expect_success 'export --kphotoalbum while the volume is unplugged keeps its 20 images in index.xml' '
	px export --db "$DB" --kphotoalbum D -q &&
	test "$(grep -o "<image " D/index.xml | wc -l)" = 20 &&
	grep -q "file=\"DCIM/100CANON/IMG_0001.jpg\"" D/index.xml &&
	rm -f D/index.xml D/exif-info.db
'

test_expect_success 'plugged in again at D through the same loop device (same device number): one online entry, 0 bytes read' '
	seq0=$(last_seq) &&
	mount "$(cat loop_d)" D &&
	test "$(stat -c %d D)" = "$(q "select dev from volumes where ident = '\''$U1'\''")" &&
	px scan --db "$DB" --json D >s.json &&
	test "$(jq -c "[.new, .changed, .missing, .bytes_read]" s.json)" = "[0,0,0,0]" &&
	test "$(state_counts "where volume = '\''$U1'\''")" = "ok 20" &&
	px changes --db "$DB" --since "$seq0" --json >c.json && cat c.json &&
	test "$(jq -c "[.changes[] | [.kind, .new_path, .volume]]" c.json)" = "[[\"online\",\"$TRASH/D\",\"$U1\"]]"
'

test_expect_success 'the catalog stays sound' '
	sound &&
	test "$(q "select count(*) from files f left join dirs d on d.id = f.dir_id where d.id is null")" = 0 &&
	test "$(q "select count(*) from dirs d left join volumes v on v.id = d.volume_id where d.volume_id is not null and v.id is null")" = 0
'

test_done
