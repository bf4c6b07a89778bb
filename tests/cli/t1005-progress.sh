#!/bin/sh
# The status line: shown on a terminal (a real pseudo-terminal, through
# script(1)), never in a pipe unless --progress, never with --quiet, and
# gone before the summary.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: files that take a second to read' '
	mkdir -p lib && i=0 &&
	while [ $i -lt 12 ]; do head -c 131072 /dev/urandom >lib/f$i.bin; i=$((i + 1)); done &&
	age lib
'

test_expect_success 'on a terminal: files, bytes, MB/s and ETA, redrawn in place' '
	if ! command -v script >/dev/null; then echo "script(1) not installed"; exit 1; fi
	script -qefc "\"$PHOTOIDX\" scan --db \"$DB\" --readers 1 --limit-rate 1M lib" /dev/null >tty.out &&
	grep -q "[0-9]*/12 files, .* MB/s, ETA" tty.out &&
	test "$(tr "\r" "\n" <tty.out | grep -c "files, .*MB/s, ETA")" -ge 2 &&
	grep -q "$(printf "\033")\[K" tty.out &&
	tr "\r" "\n" <tty.out | grep -v "^$" | tail -n 1 | grep -q "12 new, 0 changed"
'

test_expect_success 'not on a terminal: no status line' '
	catalog_rm "$DB" &&
	px scan --db "$DB" --readers 1 --limit-rate 1M lib >out 2>err &&
	test ! -s err &&
	! grep -q "ETA" out
'

test_expect_success '--progress forces it, --quiet and --json silence it' '
	catalog_rm "$DB" &&
	px scan --db "$DB" --progress --readers 1 --limit-rate 1M lib 2>err >/dev/null &&
	grep -q "ETA" err &&
	catalog_rm "$DB" &&
	script -qefc "'\''$PHOTOIDX'\'' scan --db '\''$DB'\'' -q --readers 1 --limit-rate 1M lib" /dev/null >tty.out &&
	! grep -q "ETA" tty.out && ! grep -q "new," tty.out
'

test_done
