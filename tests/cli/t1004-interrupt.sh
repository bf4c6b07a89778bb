#!/bin/sh
# Ctrl-C (SIGINT) and SIGTERM: what was done is committed, the exit status
# is 130 (SIGINT) or 143 (SIGTERM), the scan is recorded as interrupted,
# and the next scan carries on
# to a complete, correct catalog.
. "$(dirname "$0")/lib.sh"

# wait_rows N: waits (up to 20 s) until the catalog has N committed file rows.
wait_rows() {
	i=0
	while [ $i -lt 200 ]; do
		n=$(q "select count(*) from files" 2>/dev/null || echo 0)
		[ "${n:-0}" -ge "$1" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "only ${n:-0} rows committed" >&2
	return 1
}

# sums: "MD5  path" for every row of file_info, as md5sum -c reads them
sums() {
	q "select md5 from file_info order by id" >sums.md5 &&
	q "select hex(path) from file_info order by id" | unhex >sums.path &&
	paste -d " " sums.md5 sums.path | sed "s/ /  /"
}

test_expect_success 'setup: 40 files of 256 KiB' '
	mkdir -p lib && i=0 &&
	while [ $i -lt 40 ]; do head -c 262144 /dev/urandom >lib/f$i.bin; i=$((i + 1)); done &&
	age lib
'

test_expect_success 'SIGINT mid-scan: commits what is done, exits 130' '
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 2M lib 2>err &
	pid=$!
	wait_rows 3 && kill -INT $pid &&
	set +e && wait $pid; rc=$? && set -e &&
	test $rc = 130 &&
	n=$(q "select count(*) from files") &&
	test "$n" -ge 3 && test "$n" -lt 40 &&
	test "$(q "select state || exit_status from scans")" = interrupted130 &&
	sound
'

test_expect_success 'every committed row has the right MD5' '
	sums >sums &&
	md5sum -c --quiet sums
'

test_expect_success 'an interrupted scan marks nothing missing' '
	test "$(q "select count(*) from files where state = '\''missing'\''")" = 0
'

test_expect_success 'the next scan carries on and completes' '
	px scan --db "$DB" --json lib >s.json &&
	test "$(jq .new s.json)" = $((40 - $(jq .unchanged s.json))) &&
	test "$(q "select count(*) from file_info where state = '\''ok'\''")" = 40 &&
	sums >sums && md5sum -c --quiet sums
'

test_expect_success 'SIGTERM works the same way, exit 143 (128 + 15)' '
	catalog_rm "$DB"
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 2M lib &
	pid=$!
	wait_rows 2 && kill -TERM $pid &&
	set +e && wait $pid; rc=$? && set -e &&
	echo "exit $rc; scans: $(q "select group_concat(state) from scans"); files: $(q "select count(*) from files")" &&
	test $rc = 143 &&
	test "$(q "select state || exit_status from scans")" = interrupted143
'

test_expect_success 'a scan killed with SIGKILL leaves a sound catalog; the next marks it killed' '
	catalog_rm "$DB"
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 2M lib &
	pid=$!
	wait_rows 2 && kill -KILL $pid &&
	set +e && wait $pid; set -e &&
	sound &&
	echo "after the kill: scans: $(q "select group_concat(state) from scans"); files: $(q "select count(*) from files")" &&
	px scan --db "$DB" -q lib &&
	test "$(q "select group_concat(state) from (select state from scans order by id) as s")" = killed,done &&
	test "$(q "select count(*) from file_info where state = '\''ok'\''")" = 40
'

test_expect_success 'killed after a directory was deleted: the next scan still marks its files missing' '
	catalog_rm "$DB" && mkdir -p lib/gone && echo x >lib/gone/f1 && echo y >lib/gone/f2 && age lib &&
	px scan --db "$DB" -q lib && rm -rf lib/gone &&
	head -c 6000000 /dev/urandom >lib/big.bin && age lib/big.bin
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 1M lib &
	pid=$!
	sleep 3 && kill -KILL $pid &&
	set +e && wait $pid; set -e &&
	px scan --db "$DB" -q lib &&
	test "$(q "select group_concat(state) from file_info where dir = '\''$TRASH/lib/gone'\''")" = missing,missing &&
	test "$(q "select state from dirs where path = '\''$TRASH/lib/gone'\''")" = missing
'

test_expect_success 'scan --quick after an interrupted scan still finds what that scan did not index' '
	catalog_rm "$DB" && rm -rf q && mkdir -p q/a && for i in 1 2 3; do echo "a $i" >q/a/f$i.txt; done && age q &&
	px scan --db "$DB" -q q &&
	rm q/a/f1.txt && head -c 6000000 /dev/urandom >q/a/big.bin && age q
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 1M q &
	pid=$!
	sleep 3 && kill -INT $pid &&
	set +e && wait $pid; set -e &&
	px scan --db "$DB" --quick --json q >s.json &&
	test "$(q "select count(*) from file_info where name = '\''big.bin'\'' and state = '\''ok'\''")" = 1 &&
	test "$(q "select state from file_info where name = '\''f1.txt'\''")" = missing
'

test_done
