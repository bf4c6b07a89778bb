#!/bin/sh
# The catalog is a private record of someone's files: a new one is created
# 0600 whatever the umask, and so are its -wal, -shm and lock file, in a
# directory created 0700; an existing catalog keeps the mode its owner
# gave it (0640 for a group's front end), and its -wal and -shm follow it.
. "$(dirname "$0")/lib.sh"

# SQL on catalog $1, never creating it
qc() {
	sqlite3 -batch "file:$1?mode=ro" "$2" 2>/dev/null
}

# start_watch CATALOG: a watch of lib in the background (its pid in
# watch.pid, for the exit trap too), once its run is recorded: a watch
# keeps the -wal and -shm that a scan removes when it closes
start_watch() {
	"$PHOTOIDX" watch --db "$1" -q lib >/dev/null 2>watch.err &
	echo $! >watch.pid
	i=0
	while [ $i -lt 100 ] && [ "$(qc "$1" "select count(*) from scans where state = 'running'")" != 1 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	test -e "$1-wal" && test -e "$1-shm"
}

# stop_watch: SIGTERM, and its exit status 0 (within 10 s)
stop_watch() {
	pid=$(cat watch.pid)
	rm watch.pid
	kill -TERM "$pid"
	i=0
	while [ $i -lt 100 ] && ps -o stat= -p "$pid" | grep -qv "^Z"; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ $i = 100 ]; then
		kill -KILL "$pid"
	fi
	wait "$pid"
}
trap 'test -s watch.pid && kill -TERM "$(cat watch.pid)" 2>/dev/null; cleanup' EXIT

# watch_modes CATALOG: the modes of the catalog, its -wal, -shm and lock
# file while a watch of lib holds them open, then "exit" and the watch's
# exit status when SIGTERM ends it
watch_modes() {
	start_watch "$1" || echo "the watch did not start"
	m=$(stat -c %a "$1" "$1-wal" "$1-shm" "$1.lock" | tr '\n' ' ')
	rc=0
	stop_watch || rc=$?
	echo "${m}exit $rc"
}

test_expect_success 'setup' '
	mkdir -p lib && echo x >lib/a.txt && age lib
'

for mask in 022 077 000; do
	test_sqlite_only 'the modes of the SQLite file, its -wal, -shm and lock file'
	test_expect_success "umask $mask: a new catalog, its -wal, -shm and lock are 0600, its directory 0700" '
		umask $mask &&
		m=$(watch_modes "u$mask/cat/catalog.db") &&
		echo "$m" && test "$m" = "600 600 600 600 exit 0" &&
		test "$(stat -c %a "u$mask/cat")" = 700 &&
		test "$(stat -c %a "u$mask/cat/catalog.db")" = 600
	'
done

test_sqlite_only 'the modes of the SQLite file, its -wal, -shm and lock file'
test_expect_success 'an existing catalog chmod 0640 stays 0640; its -wal and -shm follow it' '
	umask 077 &&
	px scan --db g/catalog.db -q lib &&
	chmod 640 g/catalog.db &&
	px scan --db g/catalog.db -q lib &&
	test "$(stat -c %a g/catalog.db)" = 640 &&
	m=$(watch_modes g/catalog.db) &&
	echo "$m" && test "$m" = "640 640 640 600 exit 0" &&
	test "$(stat -c %a g/catalog.db)" = 640
'

test_sqlite_only 'the modes of the SQLite file, its -wal, -shm and lock file'
test_expect_success 'a catalog made 0644 by hand keeps 0644' '
	umask 022 &&
	px scan --db o/catalog.db -q lib &&
	chmod 644 o/catalog.db &&
	px scan --db o/catalog.db -q lib &&
	test "$(stat -c %a o/catalog.db)" = 644
'

test_expect_success 'a reader creates no catalog' '
	test_expect_code 2 px ls --db none/catalog.db 2>err &&
	test ! -e none/catalog.db
'

test_done
