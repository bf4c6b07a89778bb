#!/bin/sh
# photoidx watch on a volume that is unplugged while watched: a loop-mounted
# ext4 image, watched at its mount point, unmounted under the watcher.  Its
# files become offline, none missing, the watcher says so and goes on
# watching the rest; plugged in again, a scan finds them unchanged.  Needs
# root (mount); skipped otherwise.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
	echo "1..0 # SKIP needs root, losetup and mkfs.ext4 (loop-mounted volumes)"
	exit 0
fi
MNT=$TRASH/card
UUID=$(cat /proc/sys/kernel/random/uuid)
unmount() {
	mountpoint -q "$MNT" 2>/dev/null && { umount "$MNT" 2>/dev/null || umount -l "$MNT"; }
	return 0
}
trap 'unmount; [ -s watch.pid ] && kill -TERM "$(cat watch.pid)" 2>/dev/null; cleanup' EXIT

test_expect_success 'setup: a card (ext4 image) with 12 photos, and a library on the root file system' '
	truncate -s 32M card.img && mkfs.ext4 -q -F -U "$UUID" -L WATCHCARD card.img &&
	mkdir -p "$MNT" lib && mount -o loop card.img "$MNT" &&
	mkdir -p "$MNT/DCIM" && for i in 1 2 3 4 5 6 7 8 9 10 11 12; do mkfix jpeg "$MNT/DCIM/IMG_$i.jpg" --make Canon; done &&
	mkfix jpeg lib/home.jpg && age "$MNT/DCIM" lib
'

test_expect_success 'watched, then unplugged: its files offline, none missing, and the watch goes on' '
	( set +e; sh -c '\''echo $$ >watch.pid; exec "$0" "$@"'\'' "$PHOTOIDX" watch --db "$DB" --settle 0.3 "$MNT" lib \
		>watch.out 2>watch.err; echo $? >watch.rc ) &
	wait_for "select count(*) from file_info where state = '\''ok'\''" 13 &&
	umount "$MNT" &&
	wait_for "select count(*) from file_info where state = '\''offline'\''" 12 &&
	test "$(q "select count(*) from file_info where state = '\''missing'\''")" = 0 &&
	test "$(q "select count(*) from changes where kind = '\''offline'\''")" = 1 &&
	mkfix jpeg lib/later.jpg &&
	wait_for "select state from file_info where name = '\''later.jpg'\''" ok &&
	grep -q "was unmounted: its files are kept, as offline" watch.err &&
	kill -TERM "$(cat watch.pid)" && i=0 && while [ ! -s watch.rc ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	test -s watch.rc
'

test_expect_success 'plugged in again: a scan reads nothing and finds them all, ok' '
	{ [ -s watch.rc ] || { kill -TERM "$(cat watch.pid)"; sleep 1; }; } &&
	mount -o loop card.img "$MNT" &&
	px scan --db "$DB" "$MNT" >out &&
	grep "0 new, 0 changed, 0 moved, 0 missing, 12 unchanged" out && grep "read 0 B of file data" out &&
	test "$(q "select count(*) from file_info where state = '\''ok'\''")" = 14 &&
	test "$(q "select count(*) from changes where kind = '\''online'\''")" = 1
'

test_done
