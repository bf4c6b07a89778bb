#!/bin/sh
# Device classes: a loop device is seen through to the disk that holds its
# backing file; a forced class changes how the scan reads (readers, order)
# but never what it records; a file system without a block device is
# "unknown" and read as an SSD.
. "$(dirname "$0")/lib.sh"

# sums: "MD5  path" for every row of file_info, as md5sum -c reads them
sums() {
	q "select md5 from file_info order by id" >sums.md5 &&
	q "select hex(path) from file_info order by id" | unhex >sums.path &&
	paste -d " " sums.md5 sums.path | sed "s/ /  /"
}

test_expect_success 'setup' '
	mkdir -p lib && for i in 1 2 3 4 5 6; do mkfix jpeg lib/p$i.jpg --size 50000 --seed $i --make Canon; done &&
	age lib
'

# the default readers: 2 on a spinning disk (one file each, in disk
# order), 4 reading in batches through io_uring, 16 with blocking reads
readers_for() {
	case "$1/$2" in rotational/*) echo 2 ;; */io_uring) echo 4 ;; *) echo 16 ;; esac
}

test_expect_success 'the class and device of a root are reported' '
	px scan --db "$DB" --json lib >s.json &&
	class=$(jq -r ".devices[0].class" s.json) &&
	case "$class" in ssd|virtual|rotational|unknown) ;; *) echo "bad class $class"; exit 1 ;; esac &&
	test "$(jq -r .device_class s.json)" = "$class" &&
	jq -r ".devices[0].device" s.json >own-device &&
	io=$(jq -r .io s.json) &&
	case "$class/$io" in rotational/blocking|*/io_uring) ;; *) test "$PIX_IO" = threads ;; esac &&
	test "$(jq .readers s.json)" = "$(readers_for "$class" "$io")" &&
	jq -r ".devices[0].class" s.json >own-class
'

test_expect_success 'a loop device is seen through to the disk under its backing file' '
	if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
		echo "needs root, losetup and mkfs.ext4: not checked"; exit 0
	fi
	if [ "$(cat own-device)" = null ]; then echo "the test directory has no block device: not checked"; exit 0; fi
	truncate -s 32M fs.img && mkfs.ext4 -q -F fs.img && mkdir -p mnt &&
	if ! mount -o loop fs.img mnt 2>/dev/null; then echo "cannot mount a loop device here: not checked"; exit 0; fi
	cp -p lib/p1.jpg mnt/ &&
	set +e
	px scan --db loop.db --json mnt >l.json; rc=$?
	loopdev=$(findmnt -n -o SOURCE mnt)
	umount mnt
	set -e
	test $rc = 0 &&
	echo "mounted from $loopdev: $(jq -c .devices l.json)" &&
	test "$(jq -r ".devices[0].device" l.json)" = "$(cat own-device)" &&
	test "$(jq -r ".devices[0].class" l.json)" = "$(cat own-class)"
'

test_expect_success '--device-class rotational: two readers, files in disk order, the same catalog' '
	catalog_rm "$DB" &&
	px scan --db "$DB" --json --device-class rotational lib >r.json &&
	test "$(jq -r .device_class r.json)" = rotational &&
	test "$(jq .readers r.json)" = 2 &&
	sums >sums && md5sum -c --quiet sums &&
	test "$(q "select count(*) from file_info where state = '\''ok'\''")" = 6
'

test_expect_success '--readers overrides the class default' '
	catalog_rm "$DB" &&
	px scan --db "$DB" --json --device-class rotational --readers 5 lib >r.json &&
	test "$(jq .readers r.json)" = 5
'

test_expect_success 'a tmpfs has no block device: class unknown, read as an SSD' '
	if ! mkdir -p tmp && ! mount -t tmpfs -o size=4m none tmp 2>/dev/null; then
		echo "cannot mount a tmpfs here: not checked"; exit 0
	fi
	if ! mountpoint -q tmp; then mount -t tmpfs -o size=4m none tmp 2>/dev/null || { echo "no tmpfs: not checked"; exit 0; }; fi
	cp lib/p2.jpg tmp/ &&
	set +e
	px scan --db tmp.db --json tmp >t.json; rc=$?
	umount tmp
	set -e
	test $rc = 0 &&
	test "$(jq -r ".devices[0].class" t.json)" = unknown &&
	test "$(jq .readers t.json)" = "$(readers_for unknown "$(jq -r .io t.json)")"
'

test_expect_success 'the MD5 lanes in use are reported, and every width gives the same MD5s' '
	for lanes in 0 8 16; do
		catalog_rm "$DB" &&
		PIX_MD5_LANES=$lanes px scan --db "$DB" --json lib >m.json &&
		echo "PIX_MD5_LANES=$lanes: $(jq .md5_lanes m.json) lanes" &&
		test "$(jq .md5_lanes m.json)" -le $lanes &&
		sums >sums && md5sum -c --quiet sums || exit 1
	done
'

test_done
