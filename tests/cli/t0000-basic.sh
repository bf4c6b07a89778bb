#!/bin/sh
# Usage, version, help and the exit status for bad command lines.
. "$(dirname "$0")/lib.sh"

test_expect_success 'no command is a usage error (64)' '
	test_expect_code 64 px 2>err &&
	grep -q "usage: photoidx" err
'

test_expect_success 'an unknown command is a usage error (64)' '
	test_expect_code 64 px frobnicate 2>err &&
	grep -q "not a photoidx command" err
'

test_expect_success '--version and --help succeed on stdout' '
	px --version >out && grep -q "^photoidx [0-9]" out &&
	px --help >out && grep -q "scan" out
'

test_expect_success 'scan without a path is a usage error' '
	test_expect_code 64 px scan --db "$DB" 2>err &&
	grep -q "no PATH" err &&
	no_catalog "$DB"
'

test_expect_success 'scan with an unknown option is a usage error' '
	test_expect_code 64 px scan --no-such-option . 2>err &&
	grep -q "Try .photoidx scan --help" err
'

test_expect_success 'bad sizes are usage errors' '
	test_expect_code 64 px scan --db "$DB" --max-memory lots . &&
	test_expect_code 64 px scan --db "$DB" --read-size 1 . &&
	test_expect_code 64 px scan --db "$DB" --read-size 1M --max-memory 1M . &&
	no_catalog "$DB"
'

test_expect_success 'scan --help documents the options' '
	px scan --help >out &&
	for o in --db --exclude --max-memory --read-size --json --quiet --no-wait --limit-rate --keep-cache; do
		grep -q -- "$o" out || { echo "missing $o"; exit 1; }
	done
'

test_expect_success 'a command'"'"'s usage names photoidx; help COMMAND is its help; options may come before it' '
	px scan --help | grep -q "^  photoidx scan \[OPTION" &&
	px help ls >out && grep -q "^  photoidx ls \[OPTION" out && grep -q -- "--make" out &&
	test_expect_code 64 px help frob 2>err && grep -q "frob. is not a photoidx command" err &&
	mkdir -p pre && mkfix jpeg pre/a.jpg && age pre &&
	px --db "$TRASH/pre.db" scan -q pre &&
	test "$(px --db "$TRASH/pre.db" ls | wc -l)" = 1 &&
	test "$(px --db="$TRASH/pre.db" ls --json | jq length)" = 1 &&
	test_expect_code 64 px --db 2>err && grep -q "no command after" err
'

test_expect_success 'the man page documents every command, and every option of each' '
	px --help | sed -n "/^commands:/,/^$/p" | awk "NF > 1 { print \$1 }" >cmds &&
	test "$(wc -l <cmds)" -ge 8 &&
	test "$(px scan --help | grep -o -- "--[a-z][a-z-]*" | sort -u | wc -l)" -ge 15 &&
	while read -r c; do
		grep -q "^\.SS $c$" "$REPO/doc/photoidx.1" || { echo "command $c missing from doc/photoidx.1"; exit 1; }
		px "$c" --help | grep -o -- "--[a-z][a-z0-9-]*" | sort -u >opts &&
		while read -r o; do
			[ "$o" = --help ] && continue
			m=$(printf "%s" "$o" | sed "s/-/\\\\\\\\-/g")
			grep -q -- "$m" "$REPO/doc/photoidx.1" || { echo "$c $o missing from doc/photoidx.1"; exit 1; }
		done <opts
	done <cmds
'

test_expect_success 'a path that does not exist: named, exit 1, no catalog needed' '
	test_expect_code 1 px scan --db "$DB" no-such-dir 2>err &&
	grep -q "cannot scan .no-such-dir.: No such file" err
'

test_expect_success 'a file given as a root is refused with a message' '
	echo x >plain &&
	test_expect_code 1 px scan --db "$DB" plain 2>err &&
	grep -q "not a directory" err
'

test_done
