#!/bin/sh
# The page cache: by default the files read leave no pages behind
# (RWF_DONTCACHE, or POSIX_FADV_DONTNEED), so indexing a library larger
# than memory does not evict the user's work; --keep-cache keeps them.
# Measured with fincore(1) on a real file system after emptying the cache.
. "$(dirname "$0")/lib.sh"

resident_bytes() {
	fincore -b -n -o RES "$@" | awk '{ s += $1 } END { print s + 0 }'
}

test_expect_success 'setup: 32 MB in 4 files on a file system with a page cache' '
	if [ "$(id -u)" != 0 ] || [ ! -w /proc/sys/vm/drop_caches ] || ! command -v fincore >/dev/null; then
		echo "needs root (drop_caches) and fincore"; exit 1
	fi
	dir=lib
	if [ "$(stat -f -c %T .)" = tmpfs ]; then
		# tmpfs pages cannot be dropped: use an ext4 image of our own
		truncate -s 64M fs.img && mkfs.ext4 -q -F fs.img && mkdir mnt && mount -o loop fs.img mnt && dir=mnt/lib
	fi
	mkdir -p $dir && echo $dir >dir &&
	for i in 1 2 3 4; do head -c 8000000 /dev/urandom >$dir/f$i.bin; done &&
	age $dir && sync
'

drop() {
	sync && echo 3 >/proc/sys/vm/drop_caches
}

test_expect_success 'by default, the files read are not left in the page cache' '
	dir=$(cat dir) && drop &&
	test "$(resident_bytes $dir/*.bin)" -lt 1000000 &&
	px scan --db "$DB" -q $dir &&
	test "$(q "select count(*) from files where md5 is not null")" = 4 &&
	test "$(resident_bytes $dir/*.bin)" -lt 1000000
'

# Nearly all of it: a page or two reclaimed between the scan and fincore
# (a busy machine) is not the program's doing; the default leaves none.
test_expect_success '--keep-cache leaves them there' '
	dir=$(cat dir) && catalog_rm "$DB" && drop &&
	px scan --db "$DB" --json --keep-cache $dir >out.json &&
	test "$(jq .new out.json)" = 4 &&
	res=$(resident_bytes $dir/*.bin) &&
	echo "resident after --keep-cache: $res bytes of 32000000" &&
	test "$res" -ge 30000000
'

test_expect_success 'cleanup' '
	if mountpoint -q mnt 2>/dev/null; then umount mnt; fi
'

test_done
