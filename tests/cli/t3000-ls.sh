#!/bin/sh
# photoidx ls: every filter (date range, make, model, type, path, near a
# point, missing, errors) against fixtures with known answers, the orders,
# the output formats (text, -0, JSON, JSON lines, CSV) with hostile names,
# and the same filters against the real samples and exiftool's answers.
. "$(dirname "$0")/lib.sh"

# The base names that `ls` printed, in order, on one line.
names() {
	sed 's|.*/||' | tr "\n" " " | sed "s/ $//"
}

test_expect_success 'setup: a small library with known dates, cameras and places' '
	mkdir -p lib/2023 lib/2024 lib/other &&
	mkfix jpeg lib/2023/a.jpg --make Canon --model "Canon EOS 5D" --date "2023:06:01 10:00:00" \
		--gps 48.8584,2.2945,35 --width 64 --height 48 &&
	mkfix jpeg lib/2023/b.jpg --make "NIKON CORPORATION" --model "NIKON D70" --date "2023:12:31 23:59:59" \
		--gps 45.7600,4.8350 &&
	mkfix jpeg lib/2024/c.jpg --make Canon --model "Canon EOS R6" --date "2024:01:01 00:00:00" --size 40000 &&
	mkfix tiff lib/2024/d.tif --make SONY --model ILCE-7 &&
	mkfix jpeg "lib/2022
odd.jpg" --make "100%_Cam" --date "2022:02:02 02:02:02" &&
	mkfix jpeg "$(printf "lib/other/bad\377name.jpg")" --date "2021:01:01 00:00:00" &&
	echo "notes" >lib/other/notes.txt &&
	mkfix jpeg lib/other/trunc.jpg --truncate 300 &&
	mkfix jpeg lib/gone.jpg --date "2020:01:01 00:00:00" &&
	age lib &&
	test_expect_code 1 px scan --db "$DB" -q lib 2>/dev/null &&
	rm lib/gone.jpg &&
	px scan --db "$DB" -q lib &&
	test "$(q "select state from files where name = '\''gone.jpg'\''")" = missing
'

test_expect_success 'by default: files on disk, oldest picture first, undated ones last by path' '
	px ls --db "$DB" >out &&
	test "$(names <out)" = "$(printf "bad\\\\xffname.jpg 2022\\\\nodd.jpg a.jpg b.jpg c.jpg d.tif notes.txt trunc.jpg  [error: truncated JPEG: the file ends at byte 300 before its image data]")" ||
	{ cat out; false; }
'

test_expect_success 'a line per file: names with a newline or bad bytes are quoted' '
	test "$(px ls --db "$DB" | wc -l)" = 8 &&
	grep -q "^2022-02-02 02:02:02  .*/lib/2022\\\\nodd.jpg$" out &&
	grep -q "bad\\\\xffname.jpg$" out
'

test_expect_success 'date range: --from and --to take the whole of a year, month, day or second' '
	test "$(px ls --db "$DB" --from 2023 --to 2023 | names)" = "a.jpg b.jpg" &&
	test "$(px ls --db "$DB" --date 2023-12 | names)" = "b.jpg" &&
	test "$(px ls --db "$DB" --date 2023-06-01 | names)" = "a.jpg" &&
	test "$(px ls --db "$DB" --from "2023-12-31 23:59:59" | names)" = "b.jpg c.jpg" &&
	test "$(px ls --db "$DB" --to "2023-06-01T09:59" | names)" = "$(printf "bad\\\\xffname.jpg 2022\\\\nodd.jpg")" &&
	test "$(px ls --db "$DB" --from 2024-01-01 --to 2024-01-01 | names)" = "c.jpg" &&
	test "$(px ls --db "$DB" --no-date | names)" = "d.tif notes.txt trunc.jpg  [error: truncated JPEG: the file ends at byte 300 before its image data]"
'

test_expect_success 'make and model: any case, part of the name, wildcards taken literally' '
	test "$(px ls --db "$DB" --make canon | names)" = "a.jpg c.jpg" &&
	test "$(px ls --db "$DB" --model d70 | names)" = "b.jpg" &&
	test "$(px ls --db "$DB" --make CANON --model r6 | names)" = "c.jpg" &&
	test "$(px ls --db "$DB" --make "%" | names)" = "$(printf "2022\\\\nodd.jpg")" &&
	test "$(px ls --db "$DB" --make "0%_c" | names)" = "$(printf "2022\\\\nodd.jpg")" &&
	test -z "$(px ls --db "$DB" --make "_anon")"
'

test_expect_success 'media type: one, several, and photo for image and raw' '
	test "$(px ls --db "$DB" --type other | names)" = "notes.txt" &&
	test "$(px ls --db "$DB" -t other,video | names)" = "notes.txt" &&
	test "$(px ls --db "$DB" --type photo --sort path | wc -l)" = 7 &&
	test -z "$(px ls --db "$DB" --type video)"
'

test_expect_success 'path: a directory and what is below it, a file, never a name that only begins alike' '
	test "$(px ls --db "$DB" lib/2024 | names)" = "c.jpg d.tif" &&
	test "$(px ls --db "$DB" "$TRASH/lib/2024/c.jpg" lib/2023/b.jpg | names)" = "b.jpg c.jpg" &&
	test -z "$(px ls --db "$DB" lib/202)" &&
	mkdir -p elsewhere && ln -s "$TRASH/lib/2023" elsewhere/link &&
	test "$(px ls --db "$DB" elsewhere/link | names)" = "a.jpg b.jpg"
'

test_expect_success 'near a point: within the radius, with the distance' '
	test "$(px ls --db "$DB" --near 48.8566,2.3522 --radius 10km | names)" = "a.jpg  (4.23 km)" &&
	test -z "$(px ls --db "$DB" --near 48.8566,2.3522 --radius 4km)" &&
	test -z "$(px ls --db "$DB" --near 48.8566,2.3522)" &&
	test "$(px ls --db "$DB" --near "48.8566, 2.3522" --radius 400km | wc -l)" = 2 &&
	test "$(px ls --db "$DB" --near 45.76,4.835 --radius 5 | names)" = "b.jpg  (0.00 km)" &&
	px ls --db "$DB" --near 48.8566,2.3522 --radius 100mi --json >near.json &&
	jq -e "length == 1 and (.[0].distance_m > 4200 and .[0].distance_m < 4260)" near.json
'

test_expect_success 'missing, errors, all' '
	test "$(px ls --db "$DB" --missing | names)" = "$(printf "gone.jpg  [missing since %s]" "$(date +%F)")" &&
	px ls --db "$DB" --errors >err.out && test "$(wc -l <err.out)" = 1 &&
	grep -q "trunc.jpg  \[error: truncated JPEG" err.out &&
	test "$(px ls --db "$DB" --all | wc -l)" = 9 &&
	test "$(px ls --db "$DB" --all | head -n 1 | names)" = "$(printf "gone.jpg  [missing since %s]" "$(date +%F)")"
'

test_expect_success 'orders and limits: path, size, none; --limit' '
	test "$(px ls --db "$DB" --sort size --limit 1 | names)" = "c.jpg" &&
	px ls --db "$DB" --sort path -0 | tr "\0" "\n" | head -n 1 | grep -q "/lib/2022$" &&
	test "$(px ls --db "$DB" --sort none | wc -l)" = 8 &&
	test "$(px ls --db "$DB" -n 3 | wc -l)" = 3
'

test_expect_success '-0: the exact bytes of every path, NUL-terminated' '
	px ls --db "$DB" -0 >nul &&
	test "$(tr -cd "\0" <nul | wc -c)" = 8 &&
	LC_ALL=C grep -qa "$(printf "lib/other/bad\377name.jpg")" nul &&
	xargs -0 md5sum <nul >sums && test "$(wc -l <sums)" = 8
'

test_expect_success '--json: every file_info column, md5 as md5sum says, exact bytes of a bad name' '
	px ls --db "$DB" --json >all.json &&
	jq -e "length == 8" all.json &&
	if backend_is sqlite; then
		q "select name from pragma_table_info('\''file_info'\'')"
	else
		# PostgreSQL adds the exact bytes (*_bytes) and the *_text of its
		# schema version 1 after the columns of SQLite: ls gives those of
		# SQLite, and the bytes as *_b64
		q "select column_name from information_schema.columns where table_schema = current_schema() and table_name = '\''file_info'\''" |
			grep -v -E "_(bytes|text)\$"
	fi | sort >cols.expect &&
	jq -r ".[] | select(.name == \"a.jpg\") | keys[]" all.json | sort >cols.actual &&
	diff cols.expect cols.actual &&
	test "$(jq -r ".[] | select(.name == \"a.jpg\") | .md5" all.json)" = "$(md5sum <lib/2023/a.jpg | cut -c1-32)" &&
	test "$(jq -r ".[] | select(.make == \"Canon\" and .model == \"Canon EOS 5D\") | .gps_alt_m" all.json)" = 35 &&
	test "$(jq -r ".[] | select(.path_b64) | .path_b64" all.json | base64 -d)" = "$(printf "%s/lib/other/bad\377name.jpg" "$TRASH")" &&
	px ls --db "$DB" --jsonl >all.jsonl && test "$(wc -l <all.jsonl)" = 8 &&
	jq -s -e "length == 8" all.jsonl &&
	px ls --db "$DB" --json --make nobody >none.json && jq -e "length == 0" none.json
'

test_expect_success '--csv: a header of the file_info columns and path_b64, quoted fields, one record per file' '
	px ls --db "$DB" --csv >all.csv &&
	head -n 1 all.csv | tr -d "\r" | tr "," "\n" >head.actual &&
	{ cat cols.expect; echo path_b64; } | sort >head.expect && sort head.actual | diff head.expect - &&
	test "$(sqlite3 :memory: ".import --csv all.csv t" "select count(*) from t")" = 8 &&
	test "$(sqlite3 :memory: ".import --csv all.csv t" "select model from t where name like '\''2022%'\''")" = "" &&
	test "$(sqlite3 :memory: ".import --csv all.csv t" "select make from t where name like '\''2022%'\''")" = "100%_Cam" &&
	test "$(sqlite3 :memory: ".import --csv all.csv t" "select name from t where make = '\''NIKON CORPORATION'\''")" = b.jpg
'

test_expect_success 'long listing: type, size, pixels, camera' '
	px ls --db "$DB" -l --make nikon >long &&
	grep -q "^2023-12-31 23:59:59  image .* 16x16 .*NIKON D70 .*/lib/2023/b.jpg$" long &&
	px ls --db "$DB" -l --model 5d | grep -q " 64x48 .*Canon EOS 5D "
'

test_expect_success 'long listing: a long camera name is cut by characters, with an ellipsis; C locale output is ASCII' '
	mkdir -p wide && mkfix jpeg wide/w.jpg --make "Ŝóñÿ Ëlëctrönïcs Cörpörätïön" --model "ÃŁPHÅ 7R Mårk ÎV" &&
	age wide && px scan -q --db wide.db wide &&
	px ls --db wide.db -l >w.out && cat w.out &&
	iconv -f UTF-8 -t UTF-8 w.out >/dev/null &&
	cam=$(sed -e "s/.* 16x16  *//" -e "s,  $TRASH/wide/w.jpg\$,," w.out) &&
	echo "camera column: [$cam]" &&
	test "$(printf "%s" "$cam" | wc -m)" = 24 &&
	case "$cam" in *"…") ;; *) false ;; esac &&
	LC_ALL=C px ls --db wide.db -l >c.out && cat c.out &&
	grep -q "\.\.\.  " c.out &&
	! grep -q "$(printf "\302\240")" c.out &&
	LC_ALL=C px stats --db wide.db >s.out && ! grep -q "$(printf "\302\240\|\342\200\246")" s.out &&
	LC_ALL=C px dups --db wide.db >d.out && ! grep -q "$(printf "\302\240")" d.out
'

test_expect_success 'usage errors exit 64 and say why' '
	test_expect_code 64 px ls --db "$DB" --date 2023 --from 2022 2>e && grep -q "cannot go with" e &&
	test_expect_code 64 px ls --db "$DB" --from 2023-6 2>e && grep -q "is not a date" e &&
	test_expect_code 64 px ls --db "$DB" --from 2024-13 2>e && grep -q "is not a date" e &&
	test_expect_code 64 px ls --db "$DB" --date 2005-02-30 2>e && grep -q "is not a date" e &&
	test_expect_code 64 px ls --db "$DB" --to 2023-02-29 2>e && grep -q "is not a date" e &&
	test_expect_code 64 px ls --db "$DB" --from "2005-08-03 25:00" 2>e && grep -q "is not a date" e &&
	test_expect_code 64 px ls --db "$DB" --from "2005-08-03 12:60" 2>e && grep -q "is not a date" e &&
	test_expect_code 64 px ls --db "$DB" --from 0000 2>e && grep -q "is not a date" e &&
	px ls --db "$DB" --date 2024-02-29 >/dev/null && px ls --db "$DB" --from "2023-12-31 23:59:59" >/dev/null &&
	test_expect_code 64 px ls --db "$DB" --type film 2>e && grep -q "expected image" e &&
	test_expect_code 64 px ls --db "$DB" --near 91,0 2>e && grep -q "LAT,LON" e &&
	test_expect_code 64 px ls --db "$DB" --radius 3km 2>e && grep -q "needs --near" e &&
	test_expect_code 64 px ls --db "$DB" --near 1,1 --radius 3parsec 2>e && grep -q "not a distance" e &&
	test_expect_code 64 px ls --db "$DB" --missing --errors 2>e &&
	test_expect_code 64 px ls --db "$DB" --json --csv 2>e &&
	test_expect_code 64 px ls --db "$DB" --sort colour 2>e
'

test_expect_success 'a catalog that does not exist: exit 2, and none is created' '
	test_expect_code 2 px ls --db nothere.db 2>e &&
	grep -q "nothere.db" e && test ! -e nothere.db
'

test_sqlite_only 'a read-only copy of the SQLite file'
test_expect_success 'a reader never writes: ls on a read-only copy of the catalog' '
	mkdir ro && cp "$DB" ro/c.db && chmod 0444 ro/c.db && chmod 0555 ro &&
	test "$(px ls --db ro/c.db --make canon | names)" = "a.jpg c.jpg"
'

# --- the real samples, against exiftool's answers -------------------------

if [ -d "$PIX_SAMPLES" ]; then
	test_expect_success 'samples: setup, a scanned copy' '
		cp -rp "$PIX_SAMPLES" samples && chmod -R u+w samples &&
		awk -F "\t" "\$1 == \"broken/odd\" { print \$2 }" samples/INDEX.tsv >broken && test -s broken &&
		test_expect_code 1 px scan --db s.db -q samples 2>/dev/null
	'

	# "file<TAB>lat<TAB>lon" of every sample exiftool gives a position
	oracle() {
		jq -r ".[] | select($1) | .SourceFile[2:]" samples/exiftool-oracle.json | sort | grep -v -Fx -f broken
	}
	# what ls printed, as sample paths, less the broken ones (exiftool
	# gives up on some of those where photoidx reads what it can)
	listed() {
		sed "s|^.*  $TRASH/samples/||; s|  [[(].*||" | sort | grep -v -Fx -f broken
	}

	test_expect_success 'samples: --make and --model as exiftool reads Make and Model' '
		oracle "(.Make // \"\") | tostring | test(\"canon\"; \"i\")" >expect &&
		px ls --db s.db --make canon | listed >actual && diff expect actual &&
		oracle "(.Model // \"\") | tostring | test(\"iphone\"; \"i\")" >expect &&
		px ls --db s.db --model iphone | listed >actual && diff expect actual
	'

	# (samples whose position exiftool does not give are left out)
	test_expect_success 'samples: --near, by haversine over exiftool GPS positions' '
		jq -r ".[] | select(.GPSLatitude != null and .GPSLatitude != \"\") | [.SourceFile[2:], .GPSLatitude, .GPSLongitude] | @tsv" \
			samples/exiftool-oracle.json >pos &&
		cut -f1 pos >pos.files && test "$(wc -l <pos)" -ge 10 &&
		for at in "43.4675,11.8815 2000" "36.4483,-116.855 1000" "0,0 20000000"; do
			set -- $at
			awk -F "\t" -v p="$1" -v r="$2" "BEGIN { split(p, c, \",\"); d = atan2(0, -1) / 180 }
				{ a = sin((\$2 - c[1]) * d / 2) ^ 2 + cos(c[1] * d) * cos(\$2 * d) * sin((\$3 - c[2]) * d / 2) ^ 2;
				  if (2 * 6371008.8 * atan2(sqrt(a), sqrt(1 - a)) <= r) print \$1 }" pos |
				sort | grep -v -Fx -f broken >expect &&
			px ls --db s.db --near "$1" --radius "$2" | listed | grep -Fx -f pos.files >actual &&
			diff expect actual && test -s actual || exit 1
		done
	'

	test_expect_success 'samples: --type video is what exiftool calls video' '
		oracle ".MIMEType | startswith(\"video/\")" >expect &&
		px ls --db s.db --type video | listed >actual && diff expect actual
	'
else
	test_skip 'samples: ls filters against exiftool' '../shared/samples is absent'
fi

test_done
