#!/bin/sh
# A front end reading the catalog while a scan writes it is never blocked
# and never sees half a batch; a second writer waits for the first, or
# refuses at once with --no-wait.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: files that take seconds to read' '
	mkdir -p lib && i=0 &&
	while [ $i -lt 60 ]; do head -c 65536 /dev/urandom >lib/f$i.bin; i=$((i + 1)); done &&
	age lib
'

test_expect_success 'a reader during a scan: never busy, only whole batches, counts grow' '
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 1M lib &
	pid=$!
	i=0 && until sqlite3 "$DB" "select 1 from scans" >/dev/null 2>&1 || [ $i -gt 100 ]; do sleep 0.05; i=$((i + 1)); done
	seen="" && bad=0 && i=0 &&
	while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do
		out=$(sqlite3 -batch "file:$DB?mode=ro" "select count(*), (select count(*) from files f where not exists
			(select 1 from changes c where c.file_id = f.id and c.kind = '\''added'\'')) from files" 2>&1) || bad=1
		case "$out" in *"|0") seen="$seen ${out%|0}" ;; *) echo "inconsistent read: $out"; bad=1 ;; esac
		sleep 0.1; i=$((i + 1))
	done &&
	wait $pid && test $bad = 0 &&
	echo "seen:$seen" &&
	first=$(echo $seen | cut -d" " -f1) && last=$(echo $seen | tr " " "\n" | tail -n 1) &&
	test "$last" -gt "$first" &&
	test "$(q "select count(*) from files")" = 60
'

test_expect_success 'a second scan with --no-wait refuses at once (exit 2, names the holder)' '
	rm -f "$DB"*
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 1M lib &
	pid=$!
	sleep 0.5 &&
	test_expect_code 2 px scan --db "$DB" --no-wait lib 2>err &&
	grep -q "is in use by another photoidx (pid $pid)" err &&
	wait $pid
'

test_expect_success 'a second scan without --no-wait waits, then does its work' '
	rm -f "$DB"*
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 2M lib &
	pid=$!
	sleep 0.5 &&
	px scan --db "$DB" --json lib >s.json 2>err &&
	grep -q "waiting for another photoidx (pid $pid)" err &&
	wait $pid &&
	test "$(jq .unchanged s.json)" = 60 &&
	test "$(q "select group_concat(state) from scans")" = done,done
'

test_expect_success 'the catalog is sound' '
	test "$(q "pragma integrity_check")" = ok
'

test_done
