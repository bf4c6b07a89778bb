#!/bin/sh
# photoidx verify: reads files again, oldest verification first, within a
# budget; reports every file whose content changed while size and mtime
# did not (exit 1), records when each was verified, and over repeated
# budgeted runs covers the whole library.  A run does not read again a
# file verified in the second it started (seconds are the catalog's unit),
# hence the pauses between runs.
. "$(dirname "$0")/lib.sh"

# chown_trash USER: the script's files (the SQLite catalog with them) owned
# by USER, but for the PostgreSQL cluster's own directory, which stays its
# server's (nobody's)
chown_trash() {
	find "$TRASH" -path "$TRASH/pg" -prune -o -exec chown "$1" {} +
}

# flip one byte of FILE at OFFSET, then put its times back (to the
# nanosecond, through a reference file)
rot() {
	touch -r "$1" rot.ref &&
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d " ") &&
	printf "\\$(printf %o $(( (b + 1) % 256 )))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none &&
	touch -r rot.ref "$1"
}

test_expect_success 'setup: 20 files of 64 KiB scanned' '
	mkdir -p lib/a lib/b && i=0 &&
	while [ $i -lt 20 ]; do d=a; [ $i -ge 10 ] && d=b; head -c 65536 /dev/urandom >lib/$d/f$i.bin; i=$((i + 1)); done &&
	age lib && px scan --db "$DB" -q lib &&
	test "$(q "select count(*) from files where verified_at is null")" = 20
'

test_expect_success 'verify of an intact library: every file ok, exit 0, verified_at set, no metadata read' '
	px verify --db "$DB" --json >v.json &&
	test "$(jq -c "[.verified, .ok, .mismatch, .unreadable, .exit_status, .never_verified]" v.json)" = "[20,20,0,0,0,0]" &&
	test "$(jq .bytes_read v.json)" = $((20 * 65536)) &&
	test "$(q "select count(*) from file_info where verify_state = '\''ok'\'' and verified_at > 0")" = 20 &&
	test "$(q "select command || state || n_unchanged from scans order by id desc limit 1")" = verifydone20
'

test_expect_success 'bit rot (content changed, size and mtime not) is reported, exit 1, stored MD5 kept' '
	md5=$(q "select md5 from file_info where name = '\''f3.bin'\''") &&
	rot lib/a/f3.bin 1000 && sleep 1 &&
	test_expect_code 1 px verify --db "$DB" 2>err >out &&
	grep -q "f3.bin.*content changed but size and mtime did not (MD5 was $md5, is $(md5sum <lib/a/f3.bin | cut -c1-32))" err &&
	grep -q "1 changed behind size and mtime" out &&
	test "$(q "select verify_state || md5 from file_info where name = '\''f3.bin'\''")" = "mismatch$md5" &&
	test "$(q "select lower(hex(verify_md5)) from files where name = '\''f3.bin'\''")" = "$(md5sum <lib/a/f3.bin | cut -c1-32)" &&
	test "$(q "select n_changed from scans order by id desc limit 1")" = 1
'

test_expect_success 'a file changed since the last scan is noted, not reported as rot' '
	echo appended >>lib/b/f12.bin && sleep 1 &&
	px verify --db "$DB" lib/b --json >v.json 2>err &&
	test "$(jq -c "[.verified, .changed_since_scan, .mismatch]" v.json)" = "[9,1,0]" &&
	grep -q "f12.bin.* changed since the last scan" err &&
	! grep -q "f12.bin.*content changed but" err
'

test_expect_success 'PATH limits verify to files at or below it (a file or a directory)' '
	sleep 1 && px verify --db "$DB" --json lib/a/f1.bin >v.json &&
	test "$(jq .verified v.json)" = 1 &&
	sleep 1 && test_expect_code 1 px verify --db "$DB" --json lib/a >v.json 2>/dev/null &&
	test "$(jq .verified v.json)" = 10
'

test_expect_success 'a scan that reads a rotted file again clears its verify state' '
	touch lib/a/f3.bin && px scan --db "$DB" -q lib &&
	test "$(q "select coalesce(verify_state, '\''none'\'') from file_info where name = '\''f3.bin'\''")" = none
'

test_expect_success '--max-bytes: oldest verification first; repeated runs cover the whole library' '
	catalog_rm "$DB" && age lib && px scan --db "$DB" -q lib &&
	px verify --db "$DB" --max-bytes 256K --json >v1.json &&
	test "$(jq .verified v1.json)" = 4 &&
	first=$(q "select group_concat(cast(id as text)) from (select id from files where verified_at is not null order by id) as v") &&
	px verify --db "$DB" --max-bytes 256K --json >v2.json &&
	test "$(jq .verified v2.json)" = 4 &&
	test "$(q "select count(*) from files where verified_at is not null")" = 8 &&
	for run in 3 4 5; do px verify --db "$DB" --max-bytes 256K -q || exit 1; done &&
	test "$(q "select count(*) from files where verified_at is null")" = 0 &&
	test "$(jq .never_verified v2.json)" = 12 &&
	sleep 1.1 && px verify --db "$DB" --max-bytes 256K -q &&
	test "$(q "select group_concat(cast(id as text)) from (select id from files order by verified_at desc, id limit 4) as v" | tr , "\n" | sort -n | tr "\n" , | sed "s/,$//")" = "$first"
'

test_expect_success '--budget: stops on time, leaves the rest for the next run' '
	catalog_rm "$DB" && mkdir -p big && i=0 &&
	while [ $i -lt 8 ]; do head -c 2000000 /dev/urandom >big/b$i.bin; i=$((i + 1)); done &&
	age big && px scan --db "$DB" -q big &&
	start=$(date +%s.%N) &&
	px verify --db "$DB" --budget 1 --readers 1 --limit-rate 4M --json >v.json &&
	end=$(date +%s.%N) &&
	awk -v s="$start" -v e="$end" "BEGIN { exit !(e - s < 3) }" &&
	test "$(jq .verified v.json)" -ge 1 && test "$(jq .verified v.json)" -lt 8 &&
	test "$(q "select count(*) from files where verified_at is null")" -gt 0 &&
	test "$(jq .exit_status v.json)" = 0
'

test_expect_success 'an unreadable file is reported and recorded, exit 1' '
	command -v setpriv >/dev/null || { echo "no setpriv"; exit 1; }
	catalog_rm "$DB" && mkdir -p locked && echo secret >locked/s.txt && echo open >locked/o.txt && age locked &&
	chmod 755 locked && px scan --db "$DB" -q locked &&
	if [ "$(id -u)" = 0 ]; then
		chmod 000 locked/s.txt && chown_trash nobody &&
		test_expect_code 1 setpriv --reuid=nobody --regid=nogroup --clear-groups "$PHOTOIDX" verify --db "$DB" 2>err
	else
		chmod 000 locked/s.txt && test_expect_code 1 px verify --db "$DB" 2>err
	fi &&
	grep -q "cannot verify .*s.txt.: cannot open: Permission denied" err &&
	test "$(q "select verify_state || verify_error from files where name = '\''s.txt'\''")" = "unreadablecannot open: Permission denied" &&
	test "$(q "select verify_state from file_info where name = '\''o.txt'\''")" = ok
'

test_expect_success 'verify waits for a running scan (the writer lock), or refuses with --no-wait' '
	chown_trash root 2>/dev/null; chmod 644 locked/s.txt
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 1M big &
	pid=$!
	sleep 0.3 &&
	test_expect_code 2 px verify --db "$DB" --no-wait 2>err &&
	grep -q "is in use by another photoidx" err &&
	wait $pid
'

test_expect_success 'a budget counts from when verify has the catalog, not from its wait for a scan' '
	touch big/* && sleep 1
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 8M big &
	pid=$!
	sleep 0.3 &&
	px verify --db "$DB" --budget 1 --json >v.json 2>err &&
	wait $pid &&
	grep -q "waiting for another photoidx" err &&
	test "$(jq .verified v.json)" -ge 1
'

test_expect_success 'a file being written while verify reads it is noted as changed, not reported' '
	catalog_rm "$DB" && mkdir -p busy && head -c 1500000 /dev/urandom >busy/b.bin && age busy &&
	px scan --db "$DB" -q busy && sleep 1
	( i=0; while [ $i -lt 40 ] && [ ! -e busy.done ]; do echo x >>busy/b.bin; sleep 0.1; i=$((i + 1)); done ) &
	writer=$!
	px verify --db "$DB" --readers 1 --read-size 64K --limit-rate 1M --json >v.json 2>err; rc=$?
	touch busy.done; wait $writer
	test $rc = 0 &&
	test "$(jq -c "[.changed_since_scan, .mismatch, .unreadable]" v.json)" = "[1,0,0]" &&
	! grep -q "cannot verify" err
'

test_expect_success 'bad arguments are usage errors' '
	test_expect_code 64 px verify --db "$DB" --budget 0 &&
	test_expect_code 64 px verify --db "$DB" --max-bytes lots &&
	test_expect_code 1 px verify --db "$DB" no-such-path 2>err &&
	grep -q "cannot verify .no-such-path." err
'

test_sqlite_only 'PRAGMA integrity_check checks the SQLite file'
test_expect_success 'the catalog stays sound' '
	sound
'

test_done
