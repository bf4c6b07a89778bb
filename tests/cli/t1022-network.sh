#!/bin/sh
# A library on network storage: an sshfs mount of an sshd in its own
# network namespace, reached through a TCP proxy that adds 1 ms each way
# (tests/tools/nas.sh).  The scan over the network must record exactly
# what a scan of the same tree on local disk records, and its rescans must
# find what changed on the server.
. "$(dirname "$0")/lib.sh"

NAS="$REPO/tests/tools/nas.sh"
trap 'sh "$NAS" down "$TRASH/nas" >/dev/null 2>&1; cleanup' EXIT

if ! why=$(sh "$NAS" check 2>&1); then
	echo "1..0 # SKIP no NAS here: $why"
	exit 0
fi
tools=jq
if backend_is sqlite; then tools="$tools sqlite3"; fi
for tool in $tools; do
	command -v $tool >/dev/null || { echo "1..0 # SKIP $tool is missing (sh contrib/debian-deps.sh test)"; exit 0; }
done

# "hex of the path below ROOT|size|md5|state" of every file of catalog DB,
# sorted (the path's exact bytes: path on SQLite, path_bytes on PostgreSQL,
# whose path is text for display)
listing() {
	if backend_is pg; then col=path_bytes; else col=path; fi
	qdb "$1" "select hex($col) || '|' || size || '|' || coalesce(md5, '-') || '|' || state
		from file_info where state <> 'missing'" >listing.raw &&
	awk -v p="$(hexof "$2/")" '{ if (index($0, p) == 1) $0 = substr($0, length(p) + 1); print }' listing.raw |
		LC_ALL=C sort
}

test_expect_success 'setup: a library with awkward names, served over the NAS' '
	mkdir -p lib/2024/DCIM/100CANON lib/2024/DCIM/101CANON lib/scans &&
	mkfix jpeg "lib/2024/DCIM/100CANON/IMG_%04d.JPG" --count 150 --size 16384 --make Canon --date "2024:05:01 10:00:00" &&
	mkfix jpeg "lib/2024/DCIM/101CANON/IMG_%04d.JPG" --count 60 --size 3000 --make Canon --date "2024:05:02 10:00:00" &&
	mkfix jpeg lib/scans/big.jpg --size 3000000 --make Nikon &&
	: >lib/scans/empty.jpg &&
	mkfix jpeg "lib/scans/$(printf "new\nline.jpg")" &&
	mkfix jpeg "lib/scans/$(printf "caf\351.jpg")" &&
	age lib &&
	mnt=$(NAS_SSHFS_OPTS="-o dcache_timeout=1 -o dcache_stat_timeout=1" sh "$NAS" up "$TRASH/nas" "$TRASH/lib" 1) &&
	test -d "$mnt/2024" &&
	echo "$mnt" >mnt.txt
'
MNT=$(cat mnt.txt 2>/dev/null || echo "$TRASH/nas/mnt")

test_expect_success 'the mount is a network device: its own class, and the number of readers it gets' '
	px scan --db nas.db --json -v "$MNT" >out.json 2>err &&
	jq -e ".devices[0].class == \"network\"" out.json >/dev/null &&
	grep -q "on fuse, a network device" err &&
	jq -e ".new == 214" out.json >/dev/null
'

test_expect_success 'the catalog of the NAS equals the catalog of the same tree on local disk' '
	px scan --db local.db -q lib &&
	listing local.db "$TRASH/lib" >local.txt && listing nas.db "$MNT" >nas.txt &&
	test "$(wc -l <local.txt)" = 214 &&
	diff local.txt nas.txt &&
	test "$(qdb nas.db "select md5 from file_info where name = '\''big.jpg'\''")" = "$(md5sum <lib/scans/big.jpg | cut -c1-32)"
'

test_expect_success 'the volume is the share: user@host:/path, paths relative to the export' '
	test "$(qdb nas.db "select distinct volume from file_info")" = "root@127.0.0.1:$TRASH/lib" &&
	test "$(qdb nas.db "select rel_path from file_info where name = '\''big.jpg'\''")" = scans/big.jpg
'

test_expect_success 'an unchanged rescan over the network reads nothing and changes nothing' '
	seq=$(qdb nas.db "select coalesce(max(seq), 0) from changes") &&
	px scan --db nas.db --json "$MNT" >out.json &&
	jq -e ".bytes_read == 0 and .new == 0 and .changed == 0 and .missing == 0" out.json >/dev/null &&
	test "$(qdb nas.db "select count(*) from changes where seq > $seq")" = 0
'

test_expect_success 'files added, removed and renamed on the server are found by the next rescan' '
	mkfix jpeg lib/scans/added.jpg --make Sony --date "2024:06:01 10:00:00" &&
	rm lib/2024/DCIM/101CANON/IMG_0001.JPG &&
	mv lib/2024/DCIM/101CANON/IMG_0002.JPG lib/scans/renamed.jpg &&
	age lib/scans &&
	sleep 2 &&      # what sshfs listed before expires (dcache_timeout=1)
	px scan --db nas.db -q "$MNT" &&
	px scan --db local.db -q lib &&
	listing local.db "$TRASH/lib" >local.txt && listing nas.db "$MNT" >nas.txt &&
	diff local.txt nas.txt &&
	test "$(qdb nas.db "select state from file_info where rel_path = '\''2024/DCIM/101CANON/IMG_0001.JPG'\''")" = missing &&
	test "$(qdb nas.db "select make from file_info where rel_path = '\''scans/added.jpg'\''")" = Sony
'

test_expect_success 'read as a local disk, or with blocking readers, the NAS gives the same catalog' '
	px scan --db ssd.db -q --device-class ssd "$MNT" &&
	PIX_IO=threads px scan --db threads.db -q "$MNT" &&
	listing ssd.db "$MNT" >ssd.txt && listing threads.db "$MNT" >threads.txt &&
	diff nas.txt ssd.txt && diff nas.txt threads.txt
'

test_done
