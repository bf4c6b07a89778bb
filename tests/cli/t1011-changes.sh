#!/bin/sh
# photoidx changes: every add, change, move and missing has a sequence
# number; `changes --since N` lists them in order, as text or JSON, so a
# front end keeps in step without reading the catalog.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a library scanned once' '
	mkdir -p lib/a lib/b &&
	for i in 1 2 3; do mkfix jpeg lib/a/img$i.jpg --seed $i --date "2020:01:0$i 10:00:00"; done &&
	printf "caf\303\251 \n" >"lib/b/caf$(printf "\303\251") name.txt" &&
	age lib && px scan --db "$DB" -q lib
'

test_expect_success 'changes lists every addition, one line each, in order' '
	px changes --db "$DB" >out &&
	test "$(wc -l <out)" = 4 &&
	test "$(cut -f2 out | sort -u)" = added &&
	test "$(cut -f1 out | tr "\n" " ")" = "1 2 3 4 " &&
	grep -q "	$TRASH/lib/a/img2.jpg$" out
'

test_expect_success 'a change of each kind after N, and only those' '
	last=$(px changes --db "$DB" --json | jq .last_seq) && echo "$last" >last &&
	mkfix jpeg lib/a/img1.jpg --seed 40 && touch -d "1 day ago" lib/a/img1.jpg &&
	mv lib/a/img2.jpg lib/b/img2.jpg &&
	rm lib/a/img3.jpg &&
	mkfix jpeg lib/b/new.jpg --seed 41 && age lib/b/new.jpg &&
	px scan --db "$DB" -q lib &&
	px changes --db "$DB" --since "$last" >out &&
	test "$(cut -f2 out | sort | tr "\n" " ")" = "added changed missing moved " &&
	grep -q "moved	$TRASH/lib/b/img2.jpg	$TRASH/lib/a/img2.jpg$" out &&
	test "$(cut -f1 out | sort -n | head -n 1)" -gt "$last"
'

test_expect_success 'JSON: the fields a front end needs, and last_seq to ask from next time' '
	last=$(cat last) &&
	px changes --db "$DB" --since "$last" --json >c.json &&
	test "$(jq .count c.json)" = 4 &&
	test "$(jq "([.changes[].seq] | sort) == [.changes[].seq]" c.json)" = true &&
	test "$(jq .last_seq c.json)" = "$(jq ".changes[-1].seq" c.json)" &&
	test "$(jq -r ".changes[] | select(.kind == \"changed\") | .new_md5" c.json)" = "$(md5sum <lib/a/img1.jpg | cut -c1-32)" &&
	test "$(jq -r ".changes[] | select(.kind == \"changed\") | .old_md5 != .new_md5" c.json)" = true &&
	test "$(jq -r ".changes[] | select(.kind == \"moved\") | [.old_path, .new_path, .path] | join(\" \")" c.json)" = \
	     "$TRASH/lib/a/img2.jpg $TRASH/lib/b/img2.jpg $TRASH/lib/b/img2.jpg" &&
	test "$(jq -r ".changes[] | select(.kind == \"missing\") | .state" c.json)" = missing &&
	test "$(jq -r ".changes[] | select(.kind == \"added\") | .new_size" c.json)" = "$(stat -c %s lib/b/new.jpg)"
'

test_expect_success '--since the last seq: nothing; --limit pages through' '
	px changes --db "$DB" --since "$(px changes --db "$DB" --json | jq .last_seq)" --json >c.json &&
	test "$(jq -c "[.count, .changes]" c.json)" = "[0,[]]" &&
	test "$(jq .last_seq c.json)" = "$(jq .since c.json)" &&
	px changes --db "$DB" --limit 3 --json >p1.json && test "$(jq .count p1.json)" = 3 &&
	px changes --db "$DB" --since "$(jq .last_seq p1.json)" --limit 3 --json >p2.json &&
	test "$(jq ".changes[0].seq" p2.json)" -gt "$(jq .last_seq p1.json)" &&
	test "$(jq -s "[.[].changes[].seq] | length" p1.json p2.json)" = 6
'

test_expect_success 'an unchanged rescan adds nothing to the log' '
	n=$(px changes --db "$DB" | wc -l) && px scan --db "$DB" -q lib &&
	test "$(px changes --db "$DB" | wc -l)" = "$n"
'

test_expect_success 'names that are not UTF-8 or hold a newline come out escaped, one line each' '
	touch "lib/b/bad$(printf "\377")name" "lib/b/new
line" && age lib/b && px scan --db "$DB" -q lib &&
	px changes --db "$DB" --since "$(cat last)" >out &&
	grep -q "bad\\\\xffname$" out && grep -q "new\\\\nline$" out &&
	px changes --db "$DB" --json >c.json &&
	jq -r ".changes[] | select(.path_b64) | .path_b64" c.json | base64 -d >raw &&
	test "$(od -An -c raw | tr -d " \n")" = "$(printf "%s/lib/b/bad\377name" "$TRASH" | od -An -c | tr -d " \n")" &&
	test "$(jq "[.changes[] | select(.path_b64)] | length" c.json)" = 1
'

test_expect_success 'changes reads while a scan holds the lock, and refuses bad arguments' '
	"$PHOTOIDX" scan --db "$DB" -q --limit-rate 100K lib &
	pid=$!
	sleep 0.2 && px changes --db "$DB" >/dev/null &&
	wait $pid &&
	test_expect_code 64 px changes --db "$DB" --since -1 &&
	test_expect_code 64 px changes --db "$DB" extra &&
	test_expect_code 2 px changes --db no-such.db
'

test_done
