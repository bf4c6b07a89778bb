#!/bin/sh
# A full disk: a catalog on a small file system (a loop-mounted ext4 image,
# a size-limited tmpfs) that fills during a scan, at the end of a run, at
# the checkpoint when the catalog closes, at its creation, and during a
# watch.  Each time: one error line naming the catalog and saying the disk
# is full, exit status 2, the catalog intact (integrity_check ok, readable
# by ls, every committed row kept with its MD5), the run recorded as
# 'failed' (never left 'running'), and the next scan with room completes
# the work.  Needs root (mount); skipped otherwise.
. "$(dirname "$0")/lib.sh"

MNT=$TRASH/mnt
C=$MNT/catalog.db

# The file system outlives the test that mounts it: the script unmounts
# it, and so does the exit trap when a test failed half-way.
unmount() {
	if mountpoint -q "$MNT" 2>/dev/null; then
		umount "$MNT" 2>/dev/null || umount -l "$MNT"
	fi
}
trap 'unmount; cleanup' EXIT

# mount_small ext4|tmpfs MIB: an empty file system of MIB MiB at $MNT.
# ext4 gets 4 KiB blocks (below 512 MiB the default is 1 KiB: a page of
# SQLite's -shm then spans four blocks, SQLite's one-byte writes allocate
# one of them, and a reader touching the others on a full disk dies of
# SIGBUS) and no blocks reserved for root (we are root: they would be
# more room).
mount_small() {
	unmount
	mkdir -p "$MNT" &&
	case $1 in
	ext4)
		rm -f img && truncate -s "$2M" img &&
		mkfs.ext4 -q -F -b 4096 -m 0 img &&
		mount -o loop img "$MNT" ;;
	tmpfs)
		mount -t tmpfs -o "size=$2m,mode=755" tmpfs "$MNT" ;;
	esac
}

# fill_to KIB: a filler file leaves about KIB KiB free (0: none, even
# where df promised more).
fill_to() {
	rm -f "$MNT/filler" &&
	avail=$(df -k --output=avail "$MNT" | tail -n 1) &&
	if [ "$avail" -gt "$1" ]; then
		dd if=/dev/zero of="$MNT/filler" bs=1K count=$((avail - $1)) 2>/dev/null || test "$1" = 0
	fi &&
	echo "free: $(df -k --output=avail "$MNT" | tail -n 1) KiB"
}

# SQL on catalog $1, never creating it
qc() {
	sqlite3 -batch -bail "file:$1?mode=ro" "$2"
}

# the runs recorded in catalog $1: state and exit status
runs_of() {
	qc "$1" "select group_concat(state || ' ' || ifnull(exit_status, '-')) from scans"
}

# the one error line (file err) for catalog $1
full_error() {
	cat err &&
	test "$(wc -l <err)" = 1 &&
	grep -q "^photoidx: error: .*catalog '$1'.*: the disk is full$" err
}

# ls on catalog $1 on a full disk: it reads it, or says the disk is full
# (SQLite rebuilds the -shm a writer left when its checkpoint found the
# disk full, and that may need a block)
ls_on_full() {
	set +e
	px ls --db "$1" >ls.out 2>err
	rc=$?
	set -e
	echo "ls on the full disk: exit $rc, $(wc -l <ls.out) rows" &&
	if [ $rc = 0 ]; then test ! -s err; else test $rc = 2 && full_error "$1"; fi
}

# wait_gone PID SECONDS: waits until our child PID has exited (a zombie
# until it is waited for), at most SECONDS
wait_gone() {
	i=0
	while [ $i -lt $(($2 * 10)) ] && ps -o stat= -p "$1" | grep -qv "^Z"; do
		sleep 0.1
		i=$((i + 1))
	done
	! ps -o stat= -p "$1" | grep -qv "^Z"
}

# the rows of catalog $1 whose file still has the size and mtime the row
# records, as "md5  path" lines: a row is the truth about the content that
# had its size and mtime.  (A watch reads the files of a new directory as
# it finds them, and one that `cp` has only begun is read as it is then,
# flagged for a recheck; if the disk fills before it is read again, its
# row rightly describes the file as it was, not as it is now.)
current_sums() {
	qc "$1" "select md5 || ' ' || size || ' ' || mtime_ns || ' ' || path from file_info where md5 is not null" |
	while read -r md5 size mtime path; do
		[ "$(stat -c "%s %.9Y" "$path" 2>/dev/null | tr -d .)" = "$size $mtime" ] && echo "$md5  $path"
	done
}

# the catalog $1 is sound: integrity ok, no run left running, the last
# one $2 (state and exit status), every row's MD5 right for the content
# it describes, the rows of file `kept` (md5  path) still there, and ls
# reads them all
is_sound() {
	test "$(qc "$1" "pragma integrity_check")" = ok && test -z "$(qc "$1" "pragma foreign_key_check")" &&
	test "$(qc "$1" "select count(*) from scans where state = 'running'")" = 0 &&
	test "$(qc "$1" "select state || ' ' || exit_status from scans order by id desc limit 1")" = "$2" &&
	current_sums "$1" >sums &&
	test -s sums &&
	md5sum -c --quiet sums &&
	sort sums >sums.sorted && sort kept >kept.sorted &&
	test -z "$(comm -23 kept.sorted sums.sorted)" &&
	px ls --db "$1" >ls.out &&
	test "$(wc -l <ls.out)" = "$(qc "$1" "select count(*) from file_info where state <> 'missing'")"
}

# the catalog $1 holds every file under $2 once, each with its right MD5
is_complete() {
	qc "$1" "select md5 || '  ' || path from file_info where state = 'ok'" >sums &&
	md5sum -c --quiet sums &&
	test "$(wc -l <sums)" = "$(find "$2" -type f | wc -l)" &&
	test "$(cut -c35- sums | sort -u | wc -l)" = "$(wc -l <sums)" &&
	test "$(qc "$1" "pragma integrity_check")" = ok && test -z "$(qc "$1" "pragma foreign_key_check")" &&
	test "$(qc "$1" "select count(*) from scans where state = 'running'")" = 0
}

if ! mount_small tmpfs 1 2>/dev/null; then
	echo "1..0 # SKIP cannot mount a tmpfs (needs root)"
	exit 0
fi
unmount

# 1,000 photos, then 7,000 more: about 0.9 and 6 MiB of catalog (long
# names, and metadata in every row)
long=$(printf 'a-rather-long-file-name-%.0s' 1 2 3 4 5 6 7)
test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
test_expect_success 'setup: 8,000 photos with long names' '
	mkdir -p lib/a lib/b &&
	mkfix jpeg "lib/a/$long%05d.jpg" --count 1000 --date "2020:01:01 00:00:00" --make Maker --model Model --gps 1,2 &&
	mkfix jpeg "lib/b/$long%05d.jpg" --count 7000 --date "2021:01:01 00:00:00" --make Maker --model Model --gps 1,2 &&
	age lib &&
	px scan --db ref.db -q lib/a
'
# the size of a catalog of lib/a, in KiB
ref_kib=$(($(stat -c %s ref.db 2>/dev/null || echo 0) / 1024))

full_disk_tests() {
	fs=$1
	if ! mount_small "$fs" 32; then
		test_skip "$fs: full disk" "cannot mount a $fs file system"
		return
	fi
	# room for the rest: ext4 gets its filler removed; the catalog on the
	# tmpfs moves, with its -wal, to a larger file system
	if [ "$fs" = ext4 ]; then
		R=$C
		make_room='rm "$MNT/filler"'
	else
		R=$TRASH/moved/catalog.db
		make_room='mkdir -p moved && mv "$C" moved/ && if [ -e "$C-wal" ]; then mv "$C-wal" moved/; fi'
	fi

	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: a first scan fits" '
		px scan --db "$C" -q lib/a &&
		qc "$C" "select md5 || '\''  '\'' || path from file_info" >kept &&
		test "$(wc -l <kept)" = 1000 &&
		echo "the lock file holds $(du -k "$C.lock" | cut -f1) KiB" &&
		test "$(du -k "$C.lock" | cut -f1)" -ge 256
	'

	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: the disk fills during a scan: one line, exit 2" '
		fill_to 1500 &&
		test_expect_code 2 px scan --db "$C" -q lib 2>err &&
		full_error "$C" &&
		echo "committed rows: $(qc "$C" "select count(*) from files")"
	'

	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: ls on the full disk reads it or says the disk is full" '
		ls_on_full "$C"
	'

	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: with room, the catalog is intact, the run failed, committed rows kept" '
		eval "$make_room" &&
		is_sound "$R" "failed 2"
	'

	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: the next scan completes the work" '
		px scan --db "$R" -q lib &&
		is_complete "$R" lib
	'

	# A first import goes without the MD5 index and builds it at the end
	# of the run, after its last commit; the checkpoint at close needs as
	# much room again.  Free space from just under the size of the catalog
	# to 1.5 times it (plus the 256 KiB a writer reserves), in steps of 16
	# KiB, meets each of these with the full disk: the window where the
	# last batch fits and the index does not is about 30 KiB wide.
	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: the disk fills at the end of a first import, wherever: exit 0 or one line and 2" '
		rm -f "$C"* "$R"* &&
		: >outcomes &&
		room=$((ref_kib * 97 / 100 + 256)) &&
		while [ $room -le $((ref_kib * 150 / 100 + 256)) ]; do
			fill_to $room >/dev/null &&
			set +e && px scan --db "$C" -q lib/a 2>err; rc=$? && set -e &&
			rm "$MNT/filler" &&
			runs=$(runs_of "$C") &&
			echo "$room KiB free: exit $rc, runs: $runs; $(cat err)" &&
			if [ $rc = 0 ]; then
				test ! -s err && test "$runs" = "done 0" &&
				is_complete "$C" lib/a
			else
				test $rc = 2 && full_error "$C" &&
				test "$(qc "$C" "pragma integrity_check")" = ok && test -z "$(qc "$C" "pragma foreign_key_check")" &&
				case $runs in "failed 2"|"") ;; *) false ;; esac
			fi &&
			echo "$rc $(qc "$C" "select count(*) from files") $(((room - 256) * 100 / ref_kib))" >>outcomes &&
			rm -f "$C"* &&
			room=$((room + 16)) || exit 1
		done &&
		grep -q "^0 1000 " outcomes && grep -q "^2 1000 " outcomes && grep -q "^2 0 " outcomes
	'

	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: the checkpoint at close finds the disk full: exit 0, the log keeps the work" '
		fill_to $((ref_kib * 17 / 10 + 256)) &&
		px scan --db "$C" -q lib/a 2>err &&
		test ! -s err &&
		ls -l "$MNT" &&
		test -s "$C-wal" &&
		ls_on_full "$C" &&
		rm "$MNT/filler" &&
		test "$(qc "$C" "select state || exit_status from scans")" = done0 &&
		is_complete "$C" lib/a &&
		px scan --db "$C" -q lib/a &&
		test ! -e "$C-wal" &&
		is_complete "$C" lib/a
	'

	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: full at the creation of a catalog: one line, exit 2" '
		rm -f "$C"* && fill_to 0 &&
		test_expect_code 2 px scan --db "$MNT/new/catalog.db" -q lib/a 2>err &&
		full_error "$MNT/new/catalog.db" &&
		test_expect_code 2 px scan --db "$C" -q lib/a 2>err &&
		full_error "$C"
	'

	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: with room, those catalogs are created and filled" '
		rm "$MNT/filler" &&
		px scan --db "$MNT/new/catalog.db" -q lib/a &&
		is_complete "$MNT/new/catalog.db" lib/a &&
		px scan --db "$C" -q lib/a &&
		is_complete "$C" lib/a &&
		rm -r "$MNT/new"
	'

	# past the room a writer reserves, SQLite writes the header, switches
	# to WAL and applies the migrations, each of which may find it full
	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: full while a new catalog is set up: one line, exit 2; with room it is finished" '
		for room in 264 272 288 320 352 384; do
			rm -f "$C"* && fill_to $room >/dev/null &&
			set +e && px scan --db "$C" -q lib/a 2>err; rc=$? && set -e &&
			echo "$room KiB free: exit $rc; $(cat err)" &&
			if [ $rc != 0 ]; then test $rc = 2 && full_error "$C"; fi &&
			rm "$MNT/filler" &&
			px scan --db "$C" -q lib/a &&
			is_complete "$C" lib/a || exit 1
		done
	'

	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: the disk fills during watch: one line, exit 2" '
		rm -rf w "$C"* && mkdir w && cp -r lib/a w/ && age w
		"$PHOTOIDX" watch --db "$C" -q --settle 0.2 w 2>err &
		pid=$!
		i=0 && while [ $i -lt 100 ] && [ "$(qc "$C" "select count(*) from files" 2>/dev/null)" != 1000 ]; do sleep 0.1; i=$((i + 1)); done &&
		qc "$C" "select md5 || '\''  '\'' || path from file_info" >kept &&
		test "$(wc -l <kept)" = 1000 &&
		fill_to 1000 &&
		cp -r lib/b w/ &&
		{ wait_gone $pid 30 || { echo "the watch did not end:"; cat err; df -k "$MNT"; kill -TERM $pid; false; }; } &&
		set +e && wait $pid; rc=$? && set -e &&
		echo "exit $rc" && test $rc = 2 &&
		full_error "$C"
	'

	test_sqlite_only "the full disk is the one under the SQLite file (on PostgreSQL the catalog is in the server's data directory, not on $MNT)"
	test_expect_success "$fs: with room, the catalog is intact and a scan completes the work" '
		rm "$MNT/filler" &&
		is_sound "$C" "failed 2" &&
		px scan --db "$C" -q w &&
		is_complete "$C" w
	'
	unmount
}

full_disk_tests ext4
# the sanitizer pass (four times slower here) fills ext4 only: the error
# paths it checks are photoidx's own, the same whichever file system says
# ENOSPC; the plain and PostgreSQL passes fill both
if [ "${SANITIZE:-}" = 1 ]; then
	test_skip "tmpfs: full disk" "the sanitizer pass fills ext4 only; the plain pass fills tmpfs too"
else
	full_disk_tests tmpfs
fi

test_done
