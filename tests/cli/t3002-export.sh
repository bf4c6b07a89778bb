#!/bin/sh
# photoidx export --format csv|jsonl: the whole catalog, missing files
# included, every value equal to file_info's; filters; --output replaced
# only when complete (a full disk leaves the old export and no temporary
# file); usage errors.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a library, one file gone, one with a comma and quotes in its name' '
	mkdir -p lib &&
	mkfix jpeg lib/a.jpg --make Canon --model "Canon EOS 5D" --date "2023:06:01 10:00:00" --gps -33.8568,151.2153,5 \
		--exposure 1/250 --fnumber 28/10 --focal 50 --iso 400 &&
	mkfix jpeg "lib/b, \"quoted\".jpg" --make SONY --date "2024:01:01 00:00:00" --seed 2 &&
	mkfix tiff lib/c.tif --make Leica &&
	mkfix jpeg lib/gone.jpg --seed 3 &&
	printf "x\n" >"$(printf "lib/bad\377.txt")" &&
	age lib &&
	px scan --db "$DB" -q lib &&
	rm lib/gone.jpg && px scan --db "$DB" -q lib
'

test_expect_success 'jsonl: one object per file of the catalog, missing ones too' '
	px export --db "$DB" --format jsonl >all.jsonl &&
	test "$(wc -l <all.jsonl)" = "$(q "select count(*) from file_info")" &&
	test "$(wc -l <all.jsonl)" = 5 &&
	jq -e -s "map(select(.state == \"missing\")) | length == 1" all.jsonl &&
	jq -e -s "map(select(.name == \"a.jpg\"))[0] | .exposure_s == 0.004 and .fnumber == 2.8 and .iso == 400 and .gps_lat < -33.85" all.jsonl
'

test_expect_success 'csv: every value equal to file_info, reals exact' '
	px export --db "$DB" --format csv -o all.csv &&
	if backend_is sqlite; then
		set -- "ATTACH '\''$DB'\'' AS c" c.file_info "(typeof(f.path) = '\''text'\'' AND t.path <> f.path)"
	else
		# file_info as CSV from PostgreSQL, its paths as hex (bytes there)
		q "copy (select id, md5, size, state, date_taken, make, mtime_ns, gps_lat, exposure_s,
			hex(path) as path_hex from file_info) to stdout with csv header" >f.csv &&
		set -- ".import --csv f.csv f" f "(t.path_b64 = '\'''\'' AND hex(t.path) <> f.path_hex)"
	fi &&
	sqlite3 -batch -bail :memory: ".import --csv all.csv t" "$1" "
		SELECT count(*) FROM t JOIN $2 f ON f.id = CAST(t.id AS INTEGER)
		WHERE t.md5 IS NOT coalesce(f.md5, '\'''\'') OR CAST(t.size AS INTEGER) <> f.size
		   OR t.state <> f.state OR t.date_taken IS NOT coalesce(f.date_taken, '\'''\'')
		   OR t.make IS NOT coalesce(f.make, '\'''\'') OR t.mtime_ns <> CAST(f.mtime_ns AS TEXT)
		   OR abs(coalesce(nullif(t.gps_lat, '\'''\''), 0) - coalesce(f.gps_lat, 0)) > 1e-12
		   OR abs(coalesce(nullif(t.exposure_s, '\'''\''), 0) - coalesce(f.exposure_s, 0)) > 1e-15
		   OR $3" >bad &&
	test "$(cat bad)" = 0 &&
	test "$(sqlite3 :memory: ".import --csv all.csv t" "select count(*) from t")" = 5 &&
	test "$(sqlite3 :memory: ".import --csv all.csv t" "select name from t where make = '\''SONY'\''")" = "b, \"quoted\".jpg"
'

test_expect_success 'csv: a name that is not UTF-8: display form, and its exact bytes in path_b64' '
	sqlite3 :memory: ".import --csv all.csv t" "select path_b64 from t where path_b64 <> '\'''\''" | base64 -d >b &&
	printf "%s/lib/bad\377.txt" "$TRASH" | cmp - b &&
	iconv -f UTF-8 -t UTF-8 all.csv >/dev/null
'

test_expect_success '--output: mode 0600 like the catalog; filters apply' '
	test "$(stat -c %a all.csv)" = 600 &&
	px export --db "$DB" --format jsonl --make canon -o canon.jsonl &&
	test "$(jq -r .name canon.jsonl)" = a.jpg &&
	px export --db "$DB" --format jsonl --missing | jq -r .name | grep -qx gone.jpg &&
	test "$(px export --db "$DB" --format jsonl lib/c.tif | jq -r .make)" = Leica
'

test_expect_success 'md5sum and hashdeep: the files on disk, which md5sum -c and hashdeep -a check against the tree' '
	mkdir -p sums && mkfix jpeg sums/plain.jpg && mkfix jpeg "sums/back\\slash.jpg" --seed 4 &&
	mkfix jpeg "$(printf "sums/new\nline.jpg")" --seed 5 && mkfix jpeg "sums/a, b.jpg" --seed 6 &&
	age sums && px scan --db sums.db -q sums &&
	px export --db sums.db --format md5sum -o sums.md5 &&
	test "$(wc -l <sums.md5)" = 4 &&
	grep -q "^\\\\[0-9a-f]\{32\}  .*/sums/new\\\\nline.jpg$" sums.md5 &&
	md5sum -c --quiet sums.md5 &&
	px export --db sums.db --format hashdeep -o sums.hd 2>err &&
	grep -q "1 files left out.*newline" err &&
	head -n 2 sums.hd | grep -q "^%%%% size,md5,filename$" &&
	grep -v "new" sums.md5 >no-newline.md5 && mv "$(printf "sums/new\nline.jpg")" .. &&
	hashdeep -a -k sums.hd -r sums >audit 2>&1 && grep -q "Audit passed" audit &&
	echo more >>sums/plain.jpg &&
	test_expect_code 1 md5sum -c --quiet no-newline.md5 >out 2>&1 && grep -q "plain.jpg: FAILED" out &&
	test_must_fail hashdeep -a -k sums.hd -r sums >audit 2>&1
'

test_expect_success 'usage: one of --format, --kphotoalbum and --xdg-thumbnails, known formats only' '
	test_expect_code 64 px export --db "$DB" 2>e && grep -q "one of --format, --kphotoalbum and --xdg-thumbnails" e &&
	test_expect_code 64 px export --db "$DB" --format xml 2>e && grep -q "expected csv, jsonl, md5sum or hashdeep" e &&
	test_expect_code 64 px export --db "$DB" --format csv --kphotoalbum lib 2>e &&
	test_expect_code 64 px export --db "$DB" --format csv --force 2>e
'

test_expect_success 'during a scan: export reads a snapshot and never holds the scan up' '
	mkdir -p slow && i=0 &&
	while [ $i -lt 30 ]; do head -c 65536 /dev/urandom >slow/f$i.bin; i=$((i + 1)); done &&
	age slow
	"$PHOTOIDX" scan --db "$DB" -q --readers 1 --limit-rate 1M slow &
	pid=$!
	sleep 0.5 &&
	px export --db "$DB" --format jsonl >during.jsonl &&
	kill -0 $pid && wait $pid &&
	n=$(wc -l <during.jsonl) && test "$n" -ge 5 && test "$n" -lt 35 &&
	test "$(px export --db "$DB" --format jsonl | wc -l)" = 35
'

test_expect_success 'a full disk: exit 73 naming the file, the old export kept, no temporary file left' '
	if [ "$(id -u)" != 0 ]; then echo "needs root (a tmpfs of its own)"; exit 0; fi
	mkdir -p small
	mount -t tmpfs -o size=8k tmpfs small || { echo "cannot mount a tmpfs here"; exit 0; }
	echo old >small/out.jsonl
	if backend_is sqlite; then
		q "update meta set lens = hex(randomblob(4000))"
	else
		q "update meta set lens = repeat(md5(random()::text), 250)"
	fi
	rc=0 && px export --db "$DB" --format jsonl -o small/out.jsonl 2>err || rc=$?
	ls -a small >left
	cat small/out.jsonl >kept
	umount small
	cat err && test $rc = 73 && grep -q "cannot write .*small/out.jsonl.*No space left" err &&
	test "$(grep -c . left)" = 3 && grep -qx out.jsonl left && test "$(cat kept)" = old
'

test_done
