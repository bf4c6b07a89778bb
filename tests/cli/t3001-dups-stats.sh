#!/bin/sh
# photoidx dups: groups of identical files, hard links that free nothing,
# empty and missing files left out, filters; the samples' known duplicate
# pair and nothing else.  photoidx stats: totals by type, camera and month,
# the month histogram in a real terminal and in a pipe.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: copies, a hard link, empty files, a missing copy' '
	mkdir -p lib/copy lib/other &&
	mkfix jpeg lib/a.jpg --make Canon --model "Canon EOS 5D" --date "2023:06:01 10:00:00" --size 30000 &&
	cp lib/a.jpg lib/copy/a.jpg && cp lib/a.jpg lib/copy/a2.jpg &&
	mkfix jpeg lib/b.jpg --make Canon --model "Canon EOS 5D" --date "2023:06:20 10:00:00" --seed 2 --size 20000 &&
	ln lib/b.jpg lib/other/b-link.jpg &&
	mkfix jpeg lib/c.jpg --make "NIKON CORPORATION" --model "NIKON D70" --date "2023:09:02 08:00:00" --seed 3 &&
	cp lib/c.jpg lib/other/c-gone.jpg &&
	mkfix jpeg lib/d.jpg --make Apple --model "iPhone 12 Pro" --date "2024:01:15 12:00:00" --seed 4 &&
	mkfix tiff lib/e.tif &&
	: >lib/empty1 && : >lib/empty2 &&
	age lib &&
	px scan --db "$DB" -q lib &&
	rm lib/other/c-gone.jpg && px scan --db "$DB" -q lib
'

test_expect_success 'dups: the copies, and the hard link that frees nothing; totals' '
	px dups --db "$DB" >out &&
	cat out &&
	size=$(stat -c %s lib/a.jpg) &&
	head -n 1 out | grep -q "^$(md5sum <lib/a.jpg | cut -c1-32)  3 copies of " &&
	grep -q "^  $TRASH/lib/copy/a2.jpg$" out &&
	grep -q "other/b-link.jpg  \[hard link of $TRASH/lib/b.jpg: the same file\]" out &&
	grep -q "^2 groups of duplicates, 5 files: keeping one copy of each would free" out &&
	! grep -q "empty\|c-gone\|c.jpg" out
'

test_expect_success 'dups --json: groups, copies, distinct files, bytes freed' '
	px dups --db "$DB" --json >d.json &&
	size=$(stat -c %s lib/a.jpg) &&
	jq -e ".n_groups == 2 and .n_files == 5 and .bytes_freed == 2 * $size" d.json &&
	jq -e ".groups[0].copies == 3 and .groups[0].distinct == 3 and .groups[0].size == $size" d.json &&
	jq -e ".groups[1].copies == 2 and .groups[1].distinct == 1 and .groups[1].bytes_freed == 0" d.json &&
	jq -e "[.groups[1].files[] | .hard_link_of] | map(select(. != null)) | length == 1" d.json &&
	test "$(jq -r ".groups[0].files[].path" d.json | sed "s|$TRASH/||" | tr "\n" " ")" = "lib/a.jpg lib/copy/a.jpg lib/copy/a2.jpg "
'

test_expect_success 'dups with a path: copies among the files there only' '
	px dups --db "$DB" --json lib/copy >c.json &&
	jq -e ".n_groups == 1 and .groups[0].copies == 2" c.json &&
	px dups --db "$DB" --json lib/other >o.json &&
	jq -e ".n_groups == 0 and .groups == []" o.json
'

test_expect_success 'dups deletes nothing' '
	test -f lib/a.jpg && test -f lib/copy/a.jpg && test -f lib/copy/a2.jpg && test -f lib/other/b-link.jpg
'

test_expect_success 'dups --keep and --print-removable: all but the kept copy, never its hard links; -0 for xargs' '
	mkdir -p act/a act/b "act/c'"'"'q" && mkfix jpeg act/a/x.jpg --seed 11 && cp act/a/x.jpg act/b/x.jpg &&
	cp act/a/x.jpg "act/c'"'"'q/x copy.jpg" && ln act/a/x.jpg act/a/hard.jpg &&
	touch -d "3 days ago" act/b/x.jpg && touch -d "2 days ago" act/a/x.jpg "act/c'"'"'q/x copy.jpg" &&
	px scan -q --db act.db act &&
	px dups --db act.db --print-removable >old.txt 2>err && cat old.txt err &&
	test "$(sort old.txt | tr "\n" " ")" = "$TRASH/act/a/hard.jpg $TRASH/act/a/x.jpg $TRASH/act/c'"'"'q/x copy.jpg " &&
	grep -q "3 copies could go, in 1 groups" err &&
	px dups --db act.db --print-removable --keep newest >new.txt &&
	test "$(sort new.txt | tr "\n" " ")" = "$TRASH/act/b/x.jpg $TRASH/act/c'"'"'q/x copy.jpg " &&
	px dups --db act.db --print-removable --keep "path-prefix=act/c'"'"'q" -0 >pre.bin &&
	test "$(tr "\0" "\n" <pre.bin | sort | tr "\n" " ")" = "$TRASH/act/a/hard.jpg $TRASH/act/a/x.jpg $TRASH/act/b/x.jpg " &&
	xargs -0 ls <pre.bin >/dev/null &&
	px dups --db act.db --print-removable --keep path-prefix=/nowhere >none.txt 2>err &&
	test ! -s none.txt && grep -q "1 groups kept whole" err &&
	test "$(find act -type f | wc -l)" = 4
'

test_expect_success 'dups --script: reviewed, then run, it removes the copies; changed ones are skipped, the kept file checked' '
	px dups --db act.db --script --keep newest >rm.sh && cat rm.sh &&
	head -n 1 rm.sh | grep -q "^#!/bin/sh" &&
	echo changed >>"act/c'"'"'q/x copy.jpg" && touch -d "2 days ago" "act/c'"'"'q/x copy.jpg" &&
	sh rm.sh >out 2>err && cat out err &&
	test ! -e act/b/x.jpg && test -e "act/c'"'"'q/x copy.jpg" && grep -q "skipped: .*x copy.jpg" err &&
	test -e act/a/x.jpg && test -e act/a/hard.jpg
'

test_expect_success 'dups --script --link: copies become hard links of the kept file; a changed kept file stops it' '
	rm -rf act act.db && mkdir -p act/a act/b act/c && mkfix jpeg act/a/x.jpg --seed 12 &&
	cp act/a/x.jpg act/b/x.jpg && cp act/a/x.jpg act/c/x.jpg && age act &&
	px scan -q --db act.db act &&
	px dups --db act.db --script --link --script-md5 --keep path-prefix=act/a >ln.sh &&
	grep -q "md5sum" ln.sh &&
	sh ln.sh >out 2>err && cat out err &&
	test "$(stat -c %i act/a/x.jpg)" = "$(stat -c %i act/b/x.jpg)" &&
	test "$(stat -c %i act/a/x.jpg)" = "$(stat -c %i act/c/x.jpg)" &&
	px scan -q --db act.db act && px dups --db act.db --script --keep path-prefix=act/a >rm2.sh &&
	test "$(grep -c "^remove " rm2.sh)" = 0 &&
	rm -rf act act.db && mkdir -p act/a act/b && mkfix jpeg act/a/x.jpg --seed 13 && cp act/a/x.jpg act/b/x.jpg &&
	age act && px scan -q --db act.db act && px dups --db act.db --script --keep path-prefix=act/a >rm3.sh &&
	echo edited >>act/a/x.jpg && sh rm3.sh 2>err; test -e act/b/x.jpg && grep -q "skipped" err
'

test_expect_success 'dups action options: known rules only, each option with its own' '
	test_expect_code 64 px dups --db act.db --print-removable --keep biggest 2>e && grep -q "expected oldest" e &&
	test_expect_code 64 px dups --db act.db -0 2>e &&
	test_expect_code 64 px dups --db act.db --link 2>e &&
	test_expect_code 64 px dups --db act.db --keep newest 2>e &&
	test_expect_code 64 px dups --db act.db --script --print-removable 2>e
'

test_expect_success 'the duplicates view agrees' '
	test "$(q "select count(*) || '\'' '\'' || count(distinct md5) from duplicates")" = "5 2"
'

test_expect_success 'stats --json: totals by media, camera and month' '
	px stats --db "$DB" --json >s.json &&
	n=$(find lib -type f | wc -l) && bytes=$(find lib -type f -printf "%s\n" | awk "{ s += \$1 } END { print s }") &&
	jq -e ".files == $n and .bytes == $bytes" s.json &&
	jq -e "[.by_media[] | .files] | add == $n" s.json &&
	jq -e ".by_media[] | select(.media == \"image\") | .files == 8" s.json &&
	jq -e ".by_camera[0] | .make == \"Canon\" and .model == \"Canon EOS 5D\" and .files == 5" s.json &&
	jq -e ".by_camera[-1] | .make == null and .model == null and .files == 3" s.json &&
	jq -e "[.by_month[] | .month] == [\"2023-06\", \"2023-09\", \"2024-01\", null]" s.json &&
	jq -e ".by_month[0].files == 5 and .by_month[0].bytes == $(stat -c %s lib/a.jpg) * 3 + $(stat -c %s lib/b.jpg) * 2" s.json
'

test_expect_success 'stats with filters: a path, a type, a camera' '
	test "$(px stats --db "$DB" --json lib/copy | jq .files)" = 2 &&
	test "$(px stats --db "$DB" --json --type other | jq .files)" = 2 &&
	test "$(px stats --db "$DB" --json --make nikon | jq -c "[.by_month[].month]")" = "[\"2023-09\"]" &&
	test "$(px stats --db "$DB" --json --missing | jq .files)" = 1
'

test_expect_success 'stats text: sections, cameras named once, months with gaps shown' '
	COLUMNS=60 px stats --db "$DB" >s.txt &&
	cat s.txt &&
	grep -q "^10 files, " s.txt &&
	grep -q "^by media type$" s.txt && grep -q "^by camera$" s.txt && grep -q "^by month taken$" s.txt &&
	grep -q "^  NIKON D70  *1 " s.txt && grep -q "^  Canon EOS 5D  *5 " s.txt &&
	grep -q "^  (no camera recorded)  *3 " s.txt &&
	grep -q "^  2023-07  *0$" s.txt && grep -q "^  2023-08  *0$" s.txt &&
	grep -q "^  \.\.\. 3 months without files$" s.txt &&
	grep -q "^  no date  *3 " s.txt
'

test_expect_success 'the histogram: longest bar fills the width, others in proportion' '
	bar() { grep "^  $1 " s.txt | cut -c33-; } &&
	test "$(bar 2023-06 | wc -m)" = 30 &&
	test "$(bar 2023-09 | wc -m)" = 7 &&
	LC_ALL=C COLUMNS=60 px stats --db "$DB" >ascii.txt &&
	test "$(grep "^  2023-06 " ascii.txt | cut -c33-)" = "#############################"
'

test_expect_success 'the histogram takes the width of a real terminal' '
	if ! command -v script >/dev/null; then echo "script(1) not installed"; exit 1; fi
	script -qefc "stty cols 100; \"$PHOTOIDX\" stats --db \"$DB\"" /dev/null >tty.out &&
	test "$(grep "^  2023-06 " tty.out | tr -d "\r" | cut -c33- | wc -m)" = 70
'

if [ -d "$PIX_SAMPLES" ]; then
	test_expect_success 'stats of a library of decades: a year overview by default; --by lens, year, camera with bars; --bars bytes' '
	mkdir -p decades &&
	mkfix jpeg decades/a.jpg --date "1998:07:01 10:00:00" --make Canon --lens "EF 50mm f/1.8" --seed 21 &&
	mkfix jpeg decades/b.jpg --date "1999:01:01 10:00:00" --make Canon --lens "EF 50mm f/1.8" --seed 22 &&
	mkfix jpeg decades/c.jpg --date "2002:03:03 10:00:00" --make NIKON --size 40000 --seed 23 &&
	mkfix jpeg decades/d.jpg --date "2024:12:24 10:00:00" --make NIKON --lens "AF-S 35mm" --seed 24 &&
	age decades && px scan -q --db dec.db decades &&
	COLUMNS=80 px stats --db dec.db >y.txt && cat y.txt &&
	grep -q "^by year taken$" y.txt && ! grep -q "^by month taken" y.txt &&
	grep -q "^  1998 " y.txt && grep -q "^  2000  *0$" y.txt && grep -q "^  2001  *0$" y.txt &&
	grep -q "^  \.\.\. 21 years without files$" y.txt && grep -q "^  2024 " y.txt &&
	COLUMNS=80 px stats --db dec.db --by lens --by year,camera >b.txt && cat b.txt &&
	grep -q "^by lens (bars: files)$" b.txt && grep -q "^by year taken (bars: files)$" b.txt &&
	! grep -q "^by media type" b.txt &&
	test "$(grep -A1 "^by lens" b.txt | tail -n 1 | grep -c "EF 50mm f/1.8 .* 2 .*█")" = 1 &&
	grep -q "(no lens recorded)" b.txt &&
	COLUMNS=80 px stats --db dec.db --by year --bars bytes >bb.txt &&
	big=$(grep "^  2002 " bb.txt | tr -cd "█" | wc -m) && small=$(grep "^  1998 " bb.txt | tr -cd "█" | wc -m) &&
	test "$big" -gt "$small" &&
	px stats --db dec.db --json >s.json &&
	test "$(jq -c "[.by_year[] | [.year, .files]]" s.json)" = "[[\"1998\",1],[\"1999\",1],[\"2002\",1],[\"2024\",1]]" &&
	test "$(jq -c "[.by_lens[] | [.lens, .files]]" s.json)" = "[[\"EF 50mm f/1.8\",2],[\"AF-S 35mm\",1],[null,1]]" &&
	test_expect_code 64 px stats --db dec.db --by decade 2>e && grep -q "expected media" e &&
	test_expect_code 64 px stats --db dec.db --bars pixels 2>e
'

test_expect_success 'the README plot of files per year: its data from stats --json, and the PNG where gnuplot is' '
	cmds=$(awk "/^<!-- stats-plot -->\$/ { getline; while ((getline line) > 0 && line != \"\`\`\`\") print line }" "$REPO/README.md") &&
	test -n "$cmds" &&
	PATH="$(dirname "$PHOTOIDX"):$PATH" && export PATH &&
	echo "$cmds" | head -n 1 | sed "s/photoidx stats/photoidx stats --db dec.db/" | sh &&
	test "$(cat years.dat | tr "\n" " ")" = "1998 1 1999 1 2002 1 2024 1 " &&
	if command -v gnuplot >/dev/null; then echo "$cmds" | tail -n 1 | sh && test -s years.png; fi
'

test_expect_success 'samples: dups finds the md5-duplicates pair and nothing else' '
		cp -rp "$PIX_SAMPLES" samples && chmod -R u+w samples &&
		test_expect_code 1 px scan --db s.db -q samples 2>/dev/null &&
		awk -F "\t" "\$1 == \"md5-duplicates\" { print \"$TRASH/samples/\" \$2 }" samples/INDEX.tsv | sort >expect &&
		test "$(wc -l <expect)" -ge 2 &&
		px dups --db s.db --json >sd.json &&
		jq -r ".groups[].files[].path" sd.json | sort >actual &&
		diff expect actual &&
		jq -e ".n_groups == 1" sd.json
	'
	test_expect_success 'samples: stats counts every file, by media as file_info has them' '
		px stats --db s.db --json >ss.json &&
		jq -e ".files == $(find samples -type f | wc -l)" ss.json &&
		test "$(jq -r ".by_media[] | \"\(.media) \(.files)\"" ss.json | sort)" = \
			"$(qdb s.db "select media || '\'' '\'' || count(*) from file_info group by media" | sort)"
	'
else
	test_skip 'samples: dups and stats' '../shared/samples is absent'
fi

test_done
