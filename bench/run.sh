#!/bin/sh
# make bench: photoidx against its peers and against the machine's limits,
# measured in one run on corpora generated here (never committed).
#
# Corpora (in $BENCH_DIR, default /var/tmp/photoidx-bench, kept between runs
# and generated again when their parameters or layout change):
#   card  a camera card: BENCH_CARD_FILES (1000) JPEGs of BENCH_CARD_BYTES
#         (5,000,000) with real EXIF, in DCIM/100CANON
#   seq   an image sequence: BENCH_SEQ_FILES (150000) JPEGs of about
#         BENCH_SEQ_BYTES (16384)
#   big   one file of BENCH_BIG_BYTES (5,000,000,000)
#   small many small files: BENCH_SMALL_FILES (40000) JPEGs of
#         BENCH_SMALL_BYTES (16384) in folders of 1,000, against the read
#         limit with 16 and with 64 threads (the cold case of issue 17)
#   lib   a photo library: BENCH_LIB_FILES (500000) JPEGs of about
#         BENCH_LIB_BYTES (8192) as cameras leave them, nested by year and
#         event: lib/2019/0042-event/142NIKON/DSC_00001.JPG, one to three
#         camera folders (of different cameras) per event, each of 300 to
#         10,000 files
#   million a million small files: BENCH_MILLION_FILES (1000000) JPEGs of
#         1.0-1.6 KB (the size varies by folder) with EXIF, 1,000 to a
#         folder, 50 events a year from 2005:
#         million/2005/01-event/100CANON/IMG_0001.JPG; and million10k, its
#         first 10,000 files generated alike (the first 10 folders)
# Set BENCH_CORPORA="card seq big lib small million" (the default) to
# choose: without million the million files are neither generated nor
# timed, the way to a short run; BENCH_CORPORA="" runs none of them (only
# the sections after: duplicates, watch, NAS, PostgreSQL, thumbnails).  BENCH_RUNS (3) is the number of timed
# runs per figure (the median is reported); BENCH_MILLION_RUNS (1) that of
# the million files, each run of which takes 20-80 s.
#
# For each corpus, warm (page cache full) and cold (emptied with
# drop_caches; root only), it times:
#   photoidx scan                      (new catalog each run)
#   md5sum      find | xargs -P$(nproc) md5sum
#   hashdeep    hashdeep -c md5 -r     (not on million: many minutes)
#   exiftool    exiftool -r -fast2 -json   (card only: metadata, no hash)
#   read limit  bench/readlimit (built by make bench): every file read once
#               by 16 threads in inode order, 1 MiB reads, no process per
#               file; small also with 64 threads (read64)
#   cat         every file read by 16 parallel `cat`s in inode order (xargs
#               -n 64: a process per 64 files), the read limit before
#               readlimit, kept as a second reference
#   MD5 limit   the corpus's bytes at `openssl speed -evp md5` (one core)
# Peak RSS is the largest process's (GNU time %M), and the processor time
# of a command its user and system seconds (%U, %S).  photoidx's own --json
# gives the processor time of its metadata reading, compared with exiftool's
# wall time on the card.
#
# The million files (BENCH_MILLION_RUNS runs each): the import cold against
# the read limit (16 threads) and cat, warm (--keep-cache) against md5sum,
# its peak RSS, and its processor time per file against that of a warm
# import of million10k (BENCH_RUNS runs).
#
# The library (warm only) is also the catalog test, against the targets of
# a 500,000-file import and of its rescans:
#   import      one more import with --json (new catalog): `new` must equal
#               the number of files (the import is complete), and its
#               `write_rates` give the catalog writes per 100,000 file rows
#               of catalog size, in items per second of the writer's busy
#               time and of wall time; the last bucket (400k-500k) must be
#               no slower than the first (0-100k).  Peak RSS under 100 MB.
#   rescan      `photoidx scan` of the unchanged library, timed against
#               `find ROOT -printf '%s %T@ %C@ %i\n'` (the same stat fields;
#               at most 1.5x), with the bytes of file data it read (one run
#               with --json: must be 0) and its peak RSS
#   --quick     `photoidx scan --quick` of the unchanged library (unchanged
#               directories are not listed again): faster than that find
#
# Duplicates (BENCH_DUPS=0 to skip; BENCH_DUPS_CORPORA, default "card lib",
# those of BENCH_CORPORA to run it on: seq, whose 150 folders hold the same
# 1000 files, adds about ten minutes, and big is one file): the time to a
# list of duplicate groups, `photoidx dups` against rmlint
# (-T df --no-backup -o fdupes:FILE: duplicates only, its list in
# $BENCH_DIR, no script written, no backup of the previous list; its xattr
# checksum cache is off unless asked for), jdupes -r and
# fclones group (only where it is on PATH: Debian 12 has no package):
#   fresh tree  cold (warm when not root): `photoidx scan` into a new catalog
#               then `photoidx dups`, against each peer finding them alone
#   in catalog  warm, the tree already in a catalog: `photoidx scan` (an
#               unchanged rescan) + `photoidx dups`, and `photoidx dups`
#               alone, against the same peers, which have no catalog to ask
# A corpus with no duplicates as generated (card: each file has its own
# date) gets BENCH_DUPS_COPIES (a tenth of its files) copies of every n-th
# file in $BENCH_DIR/dups, scanned with it; the report says so.  The groups
# and the removable files (all but one of each group) of every tool are
# compared: a warning, not a failure, when they differ.
#
# A quiet machine: at the start the load average and the processes using
# more than 3% of a core are printed; while the 1-minute load average is
# above 0.5 the bench waits, BENCH_WAIT_QUIET (120) seconds at most, and if
# it still is, the report's header says loudly that its figures are not
# clean.
#
# Output: the report on stdout, Markdown: a header (date, photoidx's
# commit, the machine, the load average at start and at end), the table of
# targets (each target beside the ratio measured in this run, met or NOT
# met), then every figure.  The whole report is written to doc/bench.md,
# the table of targets (with a line linking to doc/bench.md) into README.md
# between the <!-- bench --> markers, and a chart, doc/bench.png
# (gnuplot).  BENCH_NO_PUBLISH=1 prints the report (and keeps it in
# $BENCH_DIR/report.md) without touching README.md, doc/bench.md or
# doc/bench.png, so that a partial run does not replace the published
# figures.
set -eu

REPO=$(cd "$(dirname "$0")/.." && pwd)
: "${PHOTOIDX:=$REPO/photoidx}"
: "${MKFIXTURE:=$REPO/build/tests/mkfixture}"
: "${READLIMIT:=$REPO/build/bench/readlimit}"
BENCH_DIR=${BENCH_DIR:-/var/tmp/photoidx-bench}
CARD_FILES=${BENCH_CARD_FILES:-1000}
CARD_BYTES=${BENCH_CARD_BYTES:-5000000}
SEQ_FILES=${BENCH_SEQ_FILES:-150000}
SEQ_BYTES=${BENCH_SEQ_BYTES:-16384}
BIG_BYTES=${BENCH_BIG_BYTES:-5000000000}
LIB_FILES=${BENCH_LIB_FILES:-500000}
SMALL_FILES=${BENCH_SMALL_FILES:-40000}
SMALL_BYTES=${BENCH_SMALL_BYTES:-16384}
LIB_BYTES=${BENCH_LIB_BYTES:-8192}
MILLION_FILES=${BENCH_MILLION_FILES:-1000000}
MILLION_RUNS=${BENCH_MILLION_RUNS:-1}
SUBSET_FILES=$((MILLION_FILES < 10000 ? MILLION_FILES : 10000))
CORPORA=${BENCH_CORPORA-card seq big lib small million}
RUNS=${BENCH_RUNS:-3}
NO_PUBLISH=${BENCH_NO_PUBLISH:-0}
NPROC=$(nproc)
TIME=/usr/bin/time

for tool in "$TIME" md5sum hashdeep exiftool openssl gnuplot jq; do
	command -v "$tool" >/dev/null || { echo "bench: $tool missing: run sh contrib/debian-deps.sh bench" >&2; exit 1; }
done
DUPS=${BENCH_DUPS:-1}
if [ "$DUPS" = 1 ]; then
	for tool in rmlint jdupes; do
		command -v "$tool" >/dev/null || { echo "bench: $tool missing: run sh contrib/debian-deps.sh bench" >&2; exit 1; }
	done
fi
if [ ! -x "$PHOTOIDX" ] || [ ! -x "$MKFIXTURE" ] || [ ! -x "$READLIMIT" ]; then
	echo "bench: build first (make bench)" >&2
	exit 1
fi
can_drop=0
if [ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ]; then can_drop=1; fi

mkdir -p "$BENCH_DIR"
RESULTS="$BENCH_DIR/results.txt"
: >"$RESULTS"
rm -f "$BENCH_DIR/nas-results.txt" "$BENCH_DIR/pg-results.txt" "$BENCH_DIR/tags-results.txt" "$BENCH_DIR/lib-import.json" "$BENCH_DIR/lib-rescan.json" "$BENCH_DIR/lib-quick.json" "$BENCH_DIR/lib.files"
log() { echo "bench: $*" >&2; }

# --- a quiet machine ----------------------------------------------------------

WAIT_QUIET=${BENCH_WAIT_QUIET:-120}
START_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
load1() { cut -d' ' -f1 /proc/loadavg; }
is_busy() { awk -v l="$(load1)" 'BEGIN { exit !(l > 0.5) }'; }
# the processes using more than 3% of a core (top's second frame: the
# first counts from each process's start)
busy_processes() {
	LC_ALL=C top -b -c -n 2 -d 1 -w 512 | awk '/^top -/ { frame++; next } frame == 2 && $1 == "PID" { on = 1; next }
		on && $9 + 0 > 3 { cmd = $12; for (i = 13; i <= NF; i++) cmd = cmd " " $i; printf "  pid %s, %s%% CPU: %s\n", $1, $9, cmd; n++ }
		END { if (!n) print "  (none)" }'
}
log "load average: $(cat /proc/loadavg)"
log "processes using more than 3% of a core:"
busy_processes >&2
waited=0
while is_busy && [ "$waited" -lt "$WAIT_QUIET" ]; do
	[ "$waited" = 0 ] && log "load average above 0.5: waiting up to $WAIT_QUIET s for a quiet machine"
	sleep 5
	waited=$((waited + 5))
done
LOAD_START=$(load1)
QUIET_NOTE=""
if is_busy; then
	QUIET_NOTE="**Load average $LOAD_START at start: figures are not clean.**"
	log "WARNING: load average $LOAD_START at start: figures are not clean; still running:"
	busy_processes >&2
fi

# --- corpora ----------------------------------------------------------------

# make_corpus NAME PARAMS CMD...: (re)creates $BENCH_DIR/NAME with CMD unless
# it exists with the same PARAMS.
make_corpus() {
	name=$1 params=$2
	shift 2
	dir="$BENCH_DIR/$name"
	if [ -f "$dir.params" ] && [ "$(cat "$dir.params")" = "$params" ]; then
		return
	fi
	log "generating $name ($params)"
	rm -rf "$dir" "$dir.params"
	mkdir -p "$dir"
	"$@"
	# old enough that no file is "possibly still being written"
	find "$dir" -exec touch -h -d '2 days ago' {} +
	sync
	echo "$params" >"$dir.params"
}

gen_card() {
	mkdir -p "$BENCH_DIR/card/DCIM/100CANON"
	"$MKFIXTURE" jpeg "$BENCH_DIR/card/DCIM/100CANON/IMG_%04d.JPG" --count "$CARD_FILES" \
		--size "$CARD_BYTES" --make Canon --model "Canon EOS R6" --lens "RF24-105mm F4 L IS USM" \
		--date "2024:06:01 09:00:00" --exposure 1/250 --fnumber 8/1 --iso 200 --focal 50/1 \
		--orientation 1 --gps 46.5586,7.8350,1620 --thumbnail --exif-size 6000,4000
}

# gen_folders TOTAL PER DIR_FORMAT NAME_PATTERN MKFIXTURE_OPTION...: TOTAL
# JPEGs in folders of PER, folder k named by printf DIR_FORMAT k (a path
# under $BENCH_DIR), the files by NAME_PATTERN.
gen_folders() {
	total=$1 per=$2 dir_format=$3 name=$4 i=0
	shift 4
	while [ $i -lt "$total" ]; do
		n=$((total - i < per ? total - i : per))
		d="$BENCH_DIR/$(printf "$dir_format" $((i / per)))"
		mkdir -p "$d"
		"$MKFIXTURE" jpeg "$d/$name" --count "$n" "$@"
		i=$((i + n))
	done
}

gen_seq() {
	gen_folders "$SEQ_FILES" 1000 'seq/shot%04d' 'frame_%04d.jpg' --size "$SEQ_BYTES" --width 160 --height 120 \
		--make Sony --model "ILCE-7M3" --date "2024:07:01 12:00:00"
}

# A library as cameras leave it: YEAR/NNNN-event/ folders, each with one
# camera folder (two in one event of four, three in one of nine, from
# different cameras) of 300 to 10,000 files (sizes from a fixed sequence),
# until LIB_FILES files.  The layout is part of the corpus's parameters.
LIB_LAYOUT="year/event/camera folders"
gen_lib() {
	n=0 k=0 j=0
	while [ $n -lt "$LIB_FILES" ]; do
		year=$((2004 + k % 21))
		event="$BENCH_DIR/lib/$year/$(printf '%04d' $k)-event"
		ncam=1
		[ $((k % 4)) = 1 ] && ncam=2
		[ $((k % 9)) = 4 ] && ncam=3
		c=0
		while [ $c -lt $ncam ] && [ $n -lt "$LIB_FILES" ]; do
			size=$(( 300 + (j * 7919 % 97) * (j * 104729 % 103) ))
			[ $size -gt 10000 ] && size=$(( 300 + size % 9700 ))
			[ $((n + size)) -gt "$LIB_FILES" ] && size=$((LIB_FILES - n))
			case $(( (k + c) % 4 )) in
			0) make=NIKON model="NIKON D750" folder=NIKON name=DSC_%05d.JPG ;;
			1) make=Canon model="Canon EOS R6" folder=CANON name=IMG_%05d.JPG ;;
			2) make=SONY model=ILCE-7M3 folder=MSDCF name=DSC%05d.JPG ;;
			*) make=FUJIFILM model=X-T3 folder=_FUJI name=DSCF%05d.JPG ;;
			esac
			d="$event/$((100 + (k + c) % 900))$folder"
			mkdir -p "$d"
			"$MKFIXTURE" jpeg "$d/$name" --count "$size" --size "$LIB_BYTES" --width 128 --height 96 \
				--make "$make" --model "$model" --date "$year:$(printf '%02d' $((1 + k % 12))):$(printf '%02d' $((1 + c * 9))) 10:00:00"
			n=$((n + size))
			j=$((j + 1))
			c=$((c + 1))
		done
		k=$((k + 1))
	done
}

gen_small() {
	gen_folders "$SMALL_FILES" 1000 'small/dir%03d' 'IMG_%04d.JPG' --size "$SMALL_BYTES" --width 160 --height 120 \
		--make Canon --model "Canon EOS R6" --date "2025:03:01 08:00:00"
}

# gen_million NAME FILES: FILES JPEGs of 1.0-1.6 KB in folders of 1,000,
# folder k in year 2005 + k / 50, event k % 50 + 1, its files all of
# 1000 + k * 37 % 600 bytes: NAME/2005/01-event/100CANON/IMG_0001.JPG.
gen_million() {
	name=$1 total=$2 i=0 k=0
	while [ $i -lt "$total" ]; do
		n=$((total - i < 1000 ? total - i : 1000))
		year=$((2005 + k / 50)) event=$((1 + k % 50))
		d="$BENCH_DIR/$name/$year/$(printf '%02d' $event)-event/100CANON"
		mkdir -p "$d"
		"$MKFIXTURE" jpeg "$d/IMG_%04d.JPG" --count "$n" --size $((1000 + k * 37 % 600)) \
			--make Canon --model "Canon EOS 5D" \
			--date "$year:$(printf '%02d:%02d' $((1 + (event - 1) * 12 / 50)) $((1 + (event - 1) % 28))) 10:00:00"
		i=$((i + n)) k=$((k + 1))
	done
}

gen_big() {
	head -c "$BIG_BYTES" /dev/urandom >"$BENCH_DIR/big/video.mts"
}

# --- measuring --------------------------------------------------------------

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

warm() {
	find "$@" -type f -print0 | xargs -0 -P "$NPROC" -n 256 cat >/dev/null
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# measure CORPUS CACHE TOOL CMD: runs sh -c CMD $RUNS times (cold: caches
# dropped before each run; warm: the corpus and $extra_trees read first),
# appends "corpus cache tool seconds rss_kb user_seconds sys_seconds" (the
# medians, and the largest RSS).
extra_trees=""
measure() {
	corpus=$1 cache=$2 tool=$3 cmd=$4
	runs=$RUNS
	[ "$cache" = cold ] && [ "$can_drop" = 0 ] && return
	: >"$BENCH_DIR/times"
	while [ "$runs" -gt 0 ]; do
		time_run "$corpus" "$cache" "$tool" "${prep:-}" "$cmd" "$BENCH_DIR/times"
		runs=$((runs - 1))
	done
	record "$corpus" "$cache" "$tool" "$BENCH_DIR/times"
}

# time_run CORPUS CACHE TOOL PREP CMD TIMES: one run of sh -c CMD after
# PREP (not timed) and the caches as CACHE asks, its "seconds rss_kb user
# sys" appended to TIMES
time_run() {
	# (over sshfs, what it listed before expires first: dcache_timeout=1)
	[ -n "${settle:-}" ] && sleep "$settle"
	[ -n "$4" ] && sh -c "$4" >/dev/null
	if [ "$2" = cold ]; then drop_caches; else warm "$BENCH_DIR/$1" $extra_trees; fi
	"$TIME" -f '%e %M %U %S' -o "$BENCH_DIR/t1" sh -c "$5" >/dev/null 2>"$BENCH_DIR/stderr" ||
		{ log "$3 failed on $1:"; cat "$BENCH_DIR/stderr" >&2; }
	tail -n 1 "$BENCH_DIR/t1" >>"$6"
}

# record CORPUS CACHE TOOL TIMES: the medians of TIMES (and the largest
# RSS) as a line of $RESULTS
record() {
	secs=$(cut -d' ' -f1 "$4" | median)
	rss=$(cut -d' ' -f2 "$4" | sort -n | tail -n 1)
	user=$(cut -d' ' -f3 "$4" | median)
	sys=$(cut -d' ' -f4 "$4" | median)
	echo "$1 $2 $3 $secs $rss $user $sys" >>"$RESULTS"
	log "$1 $2 $3: ${secs} s, ${rss} KB, user $user s, sys $sys s"
}

# measure_turns CORPUS CACHE TOOL PREP CMD [TOOL PREP CMD ...]: measure()
# for several tools whose runs take turns (the first run of each, then
# the second of each...), so that a drift of the machine's speed during
# the measurement falls on them alike, not on whichever ran last (one
# after the other, the RAW thumbnails measured 1.06x vipsthumbnail in a
# whole run where, taking turns by hand, they measured 1.00x)
measure_turns() {
	corpus=$1 cache=$2
	shift 2
	[ "$cache" = cold ] && [ "$can_drop" = 0 ] && return
	n_tools=$(($# / 3))
	k=0
	while [ "$k" -lt "$n_tools" ]; do
		: >"$BENCH_DIR/times.$k"
		k=$((k + 1))
	done
	run=0
	while [ "$run" -lt "$RUNS" ]; do
		k=0
		while [ "$k" -lt "$n_tools" ]; do
			eval "tool=\${$((3 * k + 1))} tprep=\${$((3 * k + 2))} tcmd=\${$((3 * k + 3))}"
			time_run "$corpus" "$cache" "$tool" "$tprep" "$tcmd" "$BENCH_DIR/times.$k"
			k=$((k + 1))
		done
		run=$((run + 1))
	done
	k=0
	while [ "$k" -lt "$n_tools" ]; do
		eval "tool=\${$((3 * k + 1))}"
		record "$corpus" "$cache" "$tool" "$BENCH_DIR/times.$k"
		k=$((k + 1))
	done
}

# cat_reader DIR: the command reading DIR's files with 16 parallel cats in
# inode order (the read limit before bench/readlimit.c)
cat_reader() {
	printf '%s' "find '$1' -type f -printf '%i %p\n' | sort -n | cut -d' ' -f2- | tr '\n' '\0' | xargs -0 -P 16 -n 64 cat"
}

bytes_of() {
	find "$1" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# OpenSSL's single-stream MD5 speed on 16 KiB blocks, bytes per second.
md5_speed() {
	openssl speed -evp md5 -seconds 2 2>/dev/null | awk '/^md5/ { v = $NF } END { sub(/k$/, "", v); printf "%.0f\n", v * 1000 }'
}

run_corpus() {
	c=$1
	dir="$BENCH_DIR/$c"
	db="$BENCH_DIR/$c.db"
	if [ "$c" = million ]; then
		run_million
		return
	fi
	for cache in warm cold; do
		# the library is for catalog work: its cold peers would add many
		# minutes and tell nothing the sequence does not
		[ "$c" = lib ] && [ "$cache" = cold ] && continue
		keep=""
		[ "$cache" = warm ] && keep="--keep-cache"
		measure "$c" "$cache" photoidx "rm -f '$db'*; '$PHOTOIDX' scan --db '$db' -q $keep '$dir'"
		measure "$c" "$cache" md5sum "find '$dir' -type f -print0 | xargs -0 -P $NPROC -n 64 md5sum"
		measure "$c" "$cache" hashdeep "hashdeep -c md5 -r '$dir'"
		[ "$c" = card ] && measure "$c" "$cache" exiftool "exiftool -q -q -r -fast2 -json '$dir'"
		measure "$c" "$cache" read_limit "'$READLIMIT' -t 16 '$dir'"
		if [ "$c" = small ]; then
			measure "$c" "$cache" read64 "'$READLIMIT' -t 64 '$dir'"
		fi
		measure "$c" "$cache" cat "$(cat_reader "$dir")"
	done
	if [ "$c" = card ]; then
		warm "$dir"
		rm -f "$db"*
		"$PHOTOIDX" scan --db "$db" -q --keep-cache --json "$dir" >"$BENCH_DIR/card.json"
		echo "card warm photoidx_meta $(jq .meta_seconds "$BENCH_DIR/card.json") 0" >>"$RESULTS"
		echo "card warm photoidx_scan $(jq .scan_seconds "$BENCH_DIR/card.json") 0" >>"$RESULTS"
	fi
	if [ "$c" = lib ]; then
		find "$dir" -type f | wc -l >"$BENCH_DIR/lib.files"
		# one more import, with --json: complete? and the catalog's write
		# rates by its size; its catalog is the one rescanned below
		warm "$dir"
		rm -f "$db"*
		log "lib warm import --json"
		"$PHOTOIDX" scan --db "$db" -q --keep-cache --json "$dir" >"$BENCH_DIR/lib-import.json" ||
			log "photoidx scan --json failed on lib (exit $?)"
		log "lib: $(jq .new "$BENCH_DIR/lib-import.json") new of $(cat "$BENCH_DIR/lib.files") files"
		# an unchanged rescan reads no file data
		"$PHOTOIDX" scan --db "$db" -q --json "$dir" >"$BENCH_DIR/lib-rescan.json" ||
			log "photoidx rescan --json failed on lib (exit $?)"
		"$PHOTOIDX" scan --db "$db" -q --quick --json "$dir" >"$BENCH_DIR/lib-quick.json" ||
			log "photoidx scan --quick --json failed on lib (exit $?)"
		measure "$c" warm photoidx_rescan "'$PHOTOIDX' scan --db '$db' -q '$dir'"
		measure "$c" warm photoidx_quick "'$PHOTOIDX' scan --db '$db' -q --quick '$dir'"
		measure "$c" warm find_stat "find '$dir' -printf '%s %T@ %C@ %i\n'"
		# reading the catalog: each command against the sqlite3 shell
		# running the nearest query over the same view
		measure "$c" warm q_photoidx_ls "'$PHOTOIDX' ls --db '$db'"
		measure "$c" warm q_sqlite3_ls "sqlite3 '$db' \"SELECT * FROM file_info WHERE state <> 'missing' ORDER BY date_taken IS NULL, date_taken, path\""
		measure "$c" warm q_photoidx_dups "'$PHOTOIDX' dups --db '$db'"
		measure "$c" warm q_sqlite3_dups "sqlite3 '$db' 'SELECT * FROM duplicates ORDER BY md5, path'"
		measure "$c" warm q_photoidx_stats "'$PHOTOIDX' stats --db '$db'"
		measure "$c" warm q_sqlite3_stats "sqlite3 '$db' \"SELECT media, make, model, substr(date_taken, 1, 7), count(*), sum(size) FROM file_info WHERE state <> 'missing' GROUP BY 1, 2, 3, 4\""
		measure "$c" warm q_photoidx_csv "'$PHOTOIDX' export --db '$db' --format csv"
		measure "$c" warm q_sqlite3_csv "sqlite3 -csv -header '$db' 'SELECT * FROM file_info'"
	fi
	rm -f "$db"*
}

# The million files, BENCH_MILLION_RUNS runs each: the import cold against
# the read limit (16 threads) and cat, warm against md5sum (no hashdeep: it
# would take many minutes); then the warm import of million10k, for the
# processor time per file at 10,000 files.
run_million() {
	saved_runs=$RUNS
	RUNS=$MILLION_RUNS
	measure million cold photoidx "rm -f '$db'*; '$PHOTOIDX' scan --db '$db' -q '$dir'"
	measure million cold read_limit "'$READLIMIT' -t 16 '$dir'"
	measure million cold cat "$(cat_reader "$dir")"
	measure million warm photoidx "rm -f '$db'*; '$PHOTOIDX' scan --db '$db' -q --keep-cache '$dir'"
	measure million warm md5sum "find '$dir' -type f -print0 | xargs -0 -P $NPROC -n 64 md5sum"
	RUNS=$saved_runs
	measure million10k warm photoidx "rm -f '$db'*; '$PHOTOIDX' scan --db '$db' -q --keep-cache '$BENCH_DIR/million10k'"
	rm -f "$db"*
}

# --- main -------------------------------------------------------------------

for c in $CORPORA; do
	case $c in
	card) make_corpus card "$CARD_FILES x $CARD_BYTES" gen_card ;;
	seq) make_corpus seq "$SEQ_FILES x $SEQ_BYTES" gen_seq ;;
	big) make_corpus big "$BIG_BYTES" gen_big ;;
	lib) make_corpus lib "$LIB_FILES x $LIB_BYTES in $LIB_LAYOUT" gen_lib ;;
	small) make_corpus small "$SMALL_FILES x $SMALL_BYTES" gen_small ;;
	million)
		make_corpus million "$MILLION_FILES x 1000-1600 in years/events/1000 a folder" gen_million million "$MILLION_FILES"
		make_corpus million10k "$SUBSET_FILES x 1000-1600 in years/events/1000 a folder" gen_million million10k "$SUBSET_FILES"
		;;
	*) echo "bench: unknown corpus $c" >&2; exit 64 ;;
	esac
done
log "OpenSSL MD5 speed"
MD5_BPS=$(md5_speed)
for c in $CORPORA; do
	run_corpus "$c"
done

# --- duplicates: photoidx dups against rmlint, jdupes and fclones ----------
#
# On a fresh tree photoidx has to read and hash every file (and index it)
# before `dups` can answer; the peers compare sizes first, then partial
# hashes, and read whole only the files still alike.  On a tree already in
# the catalog photoidx knows every MD5: an unchanged rescan reads no file
# data, `dups` alone reads only the catalog; the peers read the tree again.
DUPS_CORPORA=${BENCH_DUPS_CORPORA:-card lib}
DUPS_DIR="$BENCH_DIR/dups"
rm -rf "$DUPS_DIR" "$BENCH_DIR/dups-counts.txt" "$BENCH_DIR/dups-notes.txt"
has_fclones=0
command -v fclones >/dev/null && has_fclones=1

# fdupes_counts FILE: "GROUPS REMOVABLE" of a list in fdupes format (groups
# of paths, one a line, separated by blank lines; rmlint's begins with one)
fdupes_counts() {
	awk 'NF == 0 { if (n > 1) { g++; r += n - 1 } n = 0; next } { n++ }
		END { if (n > 1) { g++; r += n - 1 } printf "%d %d\n", g, r }' "$1"
}

# photoidx_counts FILE: the same from `photoidx dups`'s last line ("G groups
# of duplicates, F files: ..."); removable is F - G, the trees here having
# no hard links (which dups shows but does not count as freeing anything)
photoidx_counts() {
	awk '/^[0-9]+ groups? of duplicates, [0-9]+ files/ { g = $1; f = $5 }
		END { if (g == "") print "? ?"; else printf "%d %d\n", g, f - g }' "$1"
}

dups_note() {
	echo "$*" >>"$BENCH_DIR/dups-notes.txt"
	log "$*"
}

run_dups() {
	c=$1
	dir="$BENCH_DIR/$c"
	out="$DUPS_DIR/$c"
	db="$BENCH_DIR/$c-dups.db"		# knows the tree: the "in catalog" case
	fdb="$BENCH_DIR/$c-dups-fresh.db"	# new at each run
	rm -rf "$out" "$db"* "$fdb"*
	mkdir -p "$out"
	extra_trees=""
	# the catalog of the tree, which also tells whether the corpus has
	# duplicates as generated
	warm "$dir"
	"$PHOTOIDX" scan --db "$db" -q --keep-cache "$dir" || log "photoidx scan failed on $c (exit $?)"
	groups=$("$PHOTOIDX" dups --db "$db" --json | jq .n_groups)
	if [ "$groups" = 0 ]; then
		files=$(find "$dir" -type f | wc -l)
		copies=${BENCH_DUPS_COPIES:-$((files / 10))}
		[ "$copies" -lt 1 ] && copies=1
		[ "$copies" -gt "$files" ] && copies=$files
		step=$((files / copies))
		mkdir -p "$out/copies"
		# every step-th file (in path order) copied once, with its mtime
		(cd "$BENCH_DIR" && find "$c" -type f | sort | awk -v s="$step" -v k="$copies" 'NR % s == 0 && n < k { print; n++ }' |
			xargs -d '\n' cp -p --parents -t "$out/copies")
		find "$out/copies" -type d -exec touch -d '2 days ago' {} +
		sync
		extra_trees="$out/copies"
		dups_note "$c has no duplicates as generated: $copies of its $files files (every ${step}th) copied once into $out/copies, which every tool is given with the corpus"
		"$PHOTOIDX" scan --db "$db" -q --keep-cache "$dir" "$extra_trees" || log "photoidx scan failed on $c (exit $?)"
	fi
	"$PHOTOIDX" dups --db "$db" --json >"$out/reference.json"
	echo "$c reference $(jq -r '"\(.n_groups) \(.n_files - .n_groups)"' "$out/reference.json")" >>"$BENCH_DIR/dups-counts.txt"
	paths="'$dir'"
	[ -n "$extra_trees" ] && paths="$paths '$extra_trees'"

	# a fresh tree: cold, or warm when the caches cannot be dropped
	fcache=cold keep=""
	[ "$can_drop" = 1 ] || { fcache=warm keep="--keep-cache"; }
	measure "$c" "$fcache" dupf_photoidx_scan "rm -f '$fdb'*; '$PHOTOIDX' scan --db '$fdb' -q $keep $paths &&
		'$PHOTOIDX' dups --db '$fdb' >'$out/fresh-photoidx_scan'"
	measure "$c" "$fcache" dupf_rmlint "rmlint -T df --no-backup -o fdupes:'$out/fresh-rmlint' $paths"
	measure "$c" "$fcache" dupf_jdupes "jdupes -q -r $paths >'$out/fresh-jdupes'"
	[ "$has_fclones" = 1 ] && measure "$c" "$fcache" dupf_fclones "fclones group -f fdupes $paths >'$out/fresh-fclones'"

	# the tree already in the catalog, warm
	measure "$c" warm dupc_photoidx_scan "'$PHOTOIDX' scan --db '$db' -q $paths && '$PHOTOIDX' dups --db '$db' >'$out/cat-photoidx_scan'"
	measure "$c" warm dupc_photoidx "'$PHOTOIDX' dups --db '$db' >'$out/cat-photoidx'"
	measure "$c" warm dupc_rmlint "rmlint -T df --no-backup -o fdupes:'$out/cat-rmlint' $paths"
	measure "$c" warm dupc_jdupes "jdupes -q -r $paths >'$out/cat-jdupes'"
	[ "$has_fclones" = 1 ] && measure "$c" warm dupc_fclones "fclones group -f fdupes $paths >'$out/cat-fclones'"

	# do they agree?  (the last run's list of each)
	ref=$(awk -v c="$c" '$1 == c && $2 == "reference" { print $3, $4 }' "$BENCH_DIR/dups-counts.txt")
	for f in "$out"/fresh-* "$out"/cat-*; do
		[ -f "$f" ] || continue
		name=${f##*/}
		case $name in
		*photoidx*) got=$(photoidx_counts "$f") ;;
		*) got=$(fdupes_counts "$f") ;;
		esac
		echo "$c $name $got" >>"$BENCH_DIR/dups-counts.txt"
		[ "$got" = "$ref" ] ||
			dups_note "WARNING: $c: $name found $got (groups, removable files); photoidx's catalog has $ref"
	done
	extra_trees=""
	rm -rf "$out" "$db"* "$fdb"*
	rmdir "$DUPS_DIR" 2>/dev/null || true
}
if [ "$DUPS" = 1 ]; then
	[ "$has_fclones" = 1 ] ||
		dups_note "fclones skipped: not on PATH (Debian 12 has no package of it; put its release binary on PATH to include it)"
	for c in $CORPORA; do
		case " $DUPS_CORPORA " in *" $c "*) run_dups "$c" ;; esac
	done
fi

# --- similar images: dups --similar at 500,000 rows, and the variant corpus
# against findimagedupes (issue 27) ------------------------------------------
#
# BENCH_SIMILAR=0 to skip.  Two corpora, made once (kept while their
# parameters hold):
#   simcat   a catalog of BENCH_SIMILAR_ROWS (500000) image rows written by
#            SQL (no files behind them), each a content of its own with a
#            synthetic DCT hash (32 of its 64 bits set, as the hash's median
#            makes them); every tenth row is near an earlier one (0 to 5 of
#            its ones moved: 0 to 10 bits apart), the planted pairs
#   similar  tests/tools/similar-corpus.sh: KPhotoAlbum's demo photos (or
#            generated photographs) and six ImageMagick variants of each
# and measures, warm (BENCH_RUNS runs, the median):
#   simcat   `photoidx dups --similar --json`: time, peak RSS, and the
#            planted pairs it put in one group
#   similar  `photoidx scan --thumbnails` into a new catalog then `dups
#            --similar`, against `findimagedupes -R` (its default
#            threshold, no fingerprint file kept): time, and the variant
#            pairs each found and its false pairs (tests/tools/similar-score.sh)
# Targets: the 500,000 rows grouped within 10 s in under 100 MB; on the
# corpus at least 95% of the variant pairs photoidx has two hashes of
# found, and no false pair.  Rows in $BENCH_DIR/similar-results.txt.
SIM_ROWS=${BENCH_SIMILAR_ROWS:-500000}
SIM_RESULTS="$BENCH_DIR/similar-results.txt"

# the synthetic catalog: a real catalog of one scanned file (its schema,
# its directory), then the rows; planted pairs in simcat.planted
gen_simcat() {
	d="$BENCH_DIR/simcat"
	mkdir -p "$d/seed"
	"$MKFIXTURE" jpeg "$d/seed/a.jpg"
	touch -d '2 days ago' "$d/seed/a.jpg"
	"$PHOTOIDX" scan -q --db "$d/catalog.db" "$d/seed"
	python3 - "$SIM_ROWS" "$d/rows.csv" "$d/planted" <<-'PY'
	import random, sys
	n, rows, planted = int(sys.argv[1]), open(sys.argv[2], "w"), open(sys.argv[3], "w")
	random.seed(27)
	hashes = []
	for i in range(n):
	    if i % 10 == 9:
	        j = random.randrange(i)
	        h = hashes[j]
	        ones = [b for b in range(64) if h >> b & 1]
	        zeros = [b for b in range(64) if not h >> b & 1]
	        k = random.randrange(6)
	        for a, b in zip(random.sample(ones, k), random.sample(zeros, k)):
	            h ^= (1 << a) | (1 << b)
	        planted.write("%d %d\n" % (j + 1000, i + 1000))
	    else:
	        h = 0
	        for b in random.sample(range(64), 32):
	            h |= 1 << b
	    hashes.append(h)
	    rows.write("%d,IMG_%07d.JPG,%d,%d\n" % (i + 1000, i, 100000 + i, h - (1 << 64) if h >> 63 else h))
	PY
	sqlite3 "$d/catalog.db" <<-SQL
	CREATE TEMP TABLE h (id INTEGER, name TEXT, size INTEGER, phash INTEGER);
	.mode csv
	.import $d/rows.csv h
	ALTER TABLE h ADD COLUMN md5 BLOB;
	UPDATE h SET md5 = randomblob(16);
	BEGIN;
	INSERT INTO files (id, dir_id, name, dev, ino, mode, size, mtime_ns, ctime_ns, md5, mime, media, state,
	    first_seen_at, changed_at, hashed_at)
	  SELECT id, (SELECT min(id) FROM dirs), name, 1, id, 33188, size, 1600000000000000000 + id,
	    1600000000000000000 + id, md5, 'image/jpeg', 'image', 'ok', 0, 0, 0 FROM h;
	INSERT INTO meta (file_id, width, height) SELECT id, 4000, 3000 FROM h;
	INSERT INTO thumbs (md5, size, version, source, made_at, phash, phash_weak, phash_version)
	  SELECT md5, size, 1, 'jpeg', 0, phash, 0, 1 FROM h;
	COMMIT;
	SQL
	rm -f "$d/rows.csv"
}

gen_similar() {
	sh "$REPO/tests/tools/similar-corpus.sh" "$BENCH_DIR/similar" >"$BENCH_DIR/similar.kind"
}

# groups_of JSON: photoidx's groups one a line, paths separated by spaces
groups_of() {
	jq -r '.groups[] | [.files[].path] | join(" ")' "$1"
}

run_similar() {
	: >"$SIM_RESULTS"
	make_corpus simcat "$SIM_ROWS rows, 1 in 10 planted 0-10 bits from an earlier one" gen_simcat
	d="$BENCH_DIR/simcat"
	measure simcat warm photoidx_similar "'$PHOTOIDX' dups --similar --json --db '$d/catalog.db' >'$d/groups.json'"
	# the planted pairs in one group
	jq -r '.groups | to_entries[] | .key as $g | .value.files[] | "\(.id) \($g)"' "$d/groups.json" |
		awk 'FILENAME == ARGV[1] { g[$1] = $2; next } { n++ } ($1 in g) && ($2 in g) && g[$1] == g[$2] { k++ }
			END { printf "simcat planted %d %d\n", k, n }' - "$d/planted" >>"$SIM_RESULTS"
	jq -r '"simcat groups \(.n_groups) \(.n_files)"' "$d/groups.json" >>"$SIM_RESULTS"

	make_corpus similar "demo or generated photos x 7: half, q55, crop94, 1024 png, bright, 800q70" gen_similar
	c="$BENCH_DIR/similar" db="$BENCH_DIR/similar.db"
	prep="rm -f '$db' '$db-wal' '$db-shm'" \
		measure similar warm photoidx_similar "'$PHOTOIDX' scan -q --thumbnails --db '$db' '$c' && '$PHOTOIDX' dups --similar --json --db '$db' >'$BENCH_DIR/similar.json'"
	measure similar warm findimagedupes "findimagedupes -q -R '$c' >'$BENCH_DIR/similar.fid'"
	echo "similar photoidx $(groups_of "$BENCH_DIR/similar.json" | sh "$REPO/tests/tools/similar-score.sh" "$c")" >>"$SIM_RESULTS"
	echo "similar photoidx_hashed $(sqlite3 "$db" "select count(*) from file_info fi join file_phash p on p.id = fi.id where fi.name like '%\_\_%' escape '\\'")" >>"$SIM_RESULTS"
	echo "similar findimagedupes $(sh "$REPO/tests/tools/similar-score.sh" "$c" "$BENCH_DIR/similar.fid")" >>"$SIM_RESULTS"
	for dist in 8 12 16; do
		"$PHOTOIDX" dups --similar --distance "$dist" --json --db "$db" >"$BENCH_DIR/similar-$dist.json"
		echo "similar photoidx_d$dist $(groups_of "$BENCH_DIR/similar-$dist.json" | sh "$REPO/tests/tools/similar-score.sh" "$c")" >>"$SIM_RESULTS"
	done
	# the hashes compared (bench/phash-eval.c) on the same corpus, decoded by ImageMagick
	if [ -x "${PHASH_EVAL:-}" ]; then
		mkdir -p "$BENCH_DIR/similar-ppm"
		for f in "$c"/*; do
			p="$BENCH_DIR/similar-ppm/$(basename "$f").ppm"
			[ -f "$p" ] || convert "$f" -depth 8 "ppm:$p"
		done
		"$PHASH_EVAL" "$BENCH_DIR/similar-ppm"/*.ppm >"$BENCH_DIR/similar-hashes.md"
	fi
}

similar_report() {
	[ -s "$SIM_RESULTS" ] || return 0
	echo
	echo "Similar images (\`dups --similar\`, issue 27). At $SIM_ROWS catalog rows of synthetic hashes with planted near pairs,"
	echo "and on the variant corpus ($(cat "$BENCH_DIR/similar.kind" 2>/dev/null || echo '?') photos and six ImageMagick variants of each) against \`findimagedupes\` at its default threshold:"
	echo
	echo "| what | time | peak RSS | result | target |"
	echo "| --- | ---: | ---: | --- | --- |"
	cat "$RESULTS" "$SIM_RESULTS" | awk -v rows="$SIM_ROWS" '
		$1 == "simcat" && $2 == "warm" && $3 == "photoidx_similar" { t = $4; r = $5 }
		$1 == "simcat" && $2 == "planted" { planted = $3; of = $4 }
		$1 == "simcat" && $2 == "groups" { groups = $3; files = $4 }
		$1 == "similar" && $2 == "warm" { ct[$3] = $4; cr[$3] = $5 }
		$1 == "similar" && $2 ~ /^photoidx|^findimagedupes/ && $3 != "" { found[$2] = $3; total[$2] = $4; bad[$2] = $5; missed[$2] = $6 }
		$1 == "similar" && $2 == "photoidx_hashed" { hashed = $3 }
		END {
			if (t != "")
				printf "| `dups --similar`, %d rows | %.2f s | %.0f MB | %d groups, %d files; %d of %d planted pairs in one group | %s |\n",
					rows, t, r / 1024, groups, files, planted, of, (t <= 10 && r < 100 * 1024) ? "within 10 s, under 100 MB: met" : "within 10 s, under 100 MB: **NOT met**"
			if (ct["photoidx_similar"] != "") {
				ok = found["photoidx"] * 100 >= hashed * 95 && bad["photoidx"] == 0
				printf "| photoidx scan --thumbnails + dups --similar | %.2f s | %.0f MB | %d of %d variant pairs (%d with two hashes), %d false pairs | %s |\n",
					ct["photoidx_similar"], cr["photoidx_similar"] / 1024, found["photoidx"], total["photoidx"], hashed, bad["photoidx"],
					ok ? ">= 95% of those, no false pair: met" : ">= 95% of those, no false pair: **NOT met**"
				printf "| findimagedupes -R | %.2f s | %.0f MB | %d of %d variant pairs, %d false pairs | |\n",
					ct["findimagedupes"], cr["findimagedupes"] / 1024, found["findimagedupes"], total["findimagedupes"], bad["findimagedupes"]
				for (d = 8; d <= 16; d += 4)
					if (("photoidx_d" d) in found)
						printf "| photoidx at --distance %d | | | %d of %d variant pairs, %d false pairs; missed: %s | |\n", d,
							found["photoidx_d" d], total["photoidx_d" d], bad["photoidx_d" d], missed["photoidx_d" d]
			}
		}'
	if [ -s "$BENCH_DIR/similar-hashes.md" ]; then
		echo
		echo "The hashes compared on the same corpus (bench/phash-eval.c, every file decoded by ImageMagick, its whole image):"
		echo
		grep '^|' "$BENCH_DIR/similar-hashes.md"
	fi
}

if [ "${BENCH_SIMILAR:-1}" = 1 ]; then
	for tool in python3 sqlite3 convert findimagedupes; do
		command -v "$tool" >/dev/null || { echo "bench: $tool missing: run sh contrib/debian-deps.sh bench" >&2; exit 1; }
	done
	run_similar
fi

# --- watch: latency and the rate of a copy ----------------------------------
#
# A `photoidx watch` of an empty tree (default --settle 0.5).  Latency is
# from a file's close to its row being visible to a reader of the catalog
# (bench/watch-latency.c polls it every 2 ms): 1,000 files written one
# every 20 ms (a stream: the directory is never quiet) and 40 written one
# every 700 ms (each alone).  Then `cp -r` of BENCH_WATCH_FILES (10,000)
# 16 KiB JPEGs into the tree, timed from the start of the copy until every
# file has its row.
WATCH_FILES=${BENCH_WATCH_FILES:-10000}
rm -f "$BENCH_DIR/watch.txt"
run_watch() {
	wdir="$BENCH_DIR/watch"
	rm -rf "$wdir" && mkdir -p "$wdir/lib/stream" "$wdir/lib/single" "$wdir/src/card"
	cc -O2 -o "$BENCH_DIR/watch-latency" "$REPO/bench/watch-latency.c" -lsqlite3 -pthread ||
		{ log "cannot build bench/watch-latency.c"; return; }
	"$MKFIXTURE" jpeg "$wdir/src/card/IMG_%05d.JPG" --count "$WATCH_FILES" --size 16384 --width 256 --height 192 \
		--make Canon --model "EOS R6" --date "2024:06:01 12:00:00" || return
	db="$wdir/catalog.db"
	"$PHOTOIDX" watch -q --db "$db" "$wdir/lib" 2>"$BENCH_DIR/watch.err" &
	wpid=$!
	i=0
	until [ "$(sqlite3 "$db" "select count(*) from scans where state = 'running'" 2>/dev/null)" = 1 ] || [ $i -gt 300 ]; do
		sleep 0.1; i=$((i + 1))
	done
	sleep 1
	log "watch: latency, a stream of 1000 files"
	"$BENCH_DIR/watch-latency" "$db" "$wdir/lib/stream" 1000 20 >"$BENCH_DIR/watch-stream.txt"
	log "watch: latency, 40 files one at a time"
	"$BENCH_DIR/watch-latency" "$db" "$wdir/lib/single" 40 700 >"$BENCH_DIR/watch-single.txt"
	log "watch: cp -r of $WATCH_FILES files"
	start=$(date +%s.%N)
	cp -r "$wdir/src/card" "$wdir/lib/card"
	copied=$(date +%s.%N)
	i=0
	until [ "$(sqlite3 "$db" "select count(*) from file_info where dir = '$wdir/lib/card'" 2>/dev/null)" = "$WATCH_FILES" ] ||
	      [ $i -gt 6000 ]; do
		sleep 0.05; i=$((i + 1))
	done
	done_at=$(date +%s.%N)
	n=$(sqlite3 "$db" "select count(*) from file_info where dir = '$wdir/lib/card'")
	kill -TERM "$wpid"; wait "$wpid" || true
	{
		echo "Watch (\`photoidx watch\`, default --settle 0.5 s), from a file's close to its row in the catalog:"
		echo "a stream of $(cat "$BENCH_DIR/watch-stream.txt");"
		echo "files written alone, $(cut -d: -f2- "$BENCH_DIR/watch-single.txt")."
		awk -v s="$start" -v c="$copied" -v d="$done_at" -v n="$n" -v want="$WATCH_FILES" 'BEGIN {
			printf "`cp -r` of %d files of 16 KiB: the copy took %.2f s, every row was in the catalog %.2f s after it began (%.0f files/s), %.2f s after the copy ended; %d of %d indexed.\n",
				want, c - s, d - s, n / (d - s), d - c, n, want }'
	} >"$BENCH_DIR/watch.txt"
	rm -rf "$wdir"
}
if [ "${BENCH_WATCH:-1}" = 1 ]; then
	run_watch
fi

# --- a NAS over the network ------------------------------------------------

# BENCH_NAS=0 to skip.  The card's JPEGs (BENCH_NAS_CARD_FILES, 200, of the
# card's size) and BENCH_NAS_SMALL_FILES (4,000) small files, served by an
# sshd in a network namespace through a proxy adding BENCH_NAS_DELAY_MS
# (1) each way, mounted with sshfs (tests/tools/nas.sh), all cold: photoidx
# against the read limit with 16 and with 64 threads, 16 parallel `cat`s
# and md5sum on the mount; then an unchanged rescan against find on the
# mount, once sshfs's own listing cache has expired.
NAS_CARD_FILES=${BENCH_NAS_CARD_FILES:-200}
NAS_SMALL_FILES=${BENCH_NAS_SMALL_FILES:-4000}
NAS_DELAY=${BENCH_NAS_DELAY_MS:-1}
gen_nas() {
	mkdir -p "$BENCH_DIR/nas/card/DCIM/100CANON" "$BENCH_DIR/nas/small"
	"$MKFIXTURE" jpeg "$BENCH_DIR/nas/card/DCIM/100CANON/IMG_%04d.JPG" --count "$NAS_CARD_FILES" --size "$CARD_BYTES" \
		--make Canon --model "Canon EOS R6" --date "2024:06:01 09:00:00" --exif-size 6000,4000
	gen_folders "$NAS_SMALL_FILES" 500 'nas/small/dir%02d' 'IMG_%04d.JPG' --size "$SMALL_BYTES" --make Canon \
		--date "2025:03:01 08:00:00"
}
run_nas() {
	nas="$REPO/tests/tools/nas.sh"
	if ! why=$(sh "$nas" check 2>&1); then log "no NAS: $why"; return; fi
	make_corpus nas "$NAS_CARD_FILES x $CARD_BYTES + $NAS_SMALL_FILES x $SMALL_BYTES" gen_nas
	state="$BENCH_DIR/nas-state"
	sh "$nas" down "$state" 2>/dev/null || true
	mnt=$(NAS_SSHFS_OPTS="-o dcache_timeout=1 -o dcache_stat_timeout=1" sh "$nas" up "$state" "$BENCH_DIR/nas" "$NAS_DELAY")
	saved=$RESULTS
	RESULTS="$BENCH_DIR/nas-results.txt"
	: >"$RESULTS"
	db="$BENCH_DIR/nas.db"
	for part in card small; do
		d="$mnt/$part"
		measure "nas/$part" cold photoidx "rm -f '$db'*; '$PHOTOIDX' scan --db '$db' -q '$d'"
		measure "nas/$part" cold read_limit "'$READLIMIT' -t 16 '$d'"
		measure "nas/$part" cold read64 "'$READLIMIT' -t 64 '$d'"
		measure "nas/$part" cold cat "find '$d' -type f -print0 | xargs -0 -P 16 -n 8 cat"
		measure "nas/$part" cold md5sum "find '$d' -type f -print0 | xargs -0 -P $NPROC -n 64 md5sum"
	done
	rm -f "$db"*
	"$PHOTOIDX" scan --db "$db" -q "$mnt"
	settle=2
	measure nas cold rescan "'$PHOTOIDX' scan --db '$db' -q '$mnt'"
	measure nas cold find "find '$mnt' -printf '%s %T@ %C@ %i\n'"
	settle=""
	rm -f "$db"*
	RESULTS=$saved
	sh "$nas" down "$state"
}
if [ "${BENCH_NAS:-1}" = 1 ] && [ "$can_drop" = 1 ]; then
	run_nas
fi

# The NAS: photoidx against the read limit's better thread count, 16 cats
# and md5sum, and its rescan against find, on the same mount.
nas_report() {
	echo
	echo "A NAS over sshfs ($NAS_DELAY ms each way: an sshd in a network namespace, a delaying proxy; cold):"
	echo "photoidx against the read limit (bench/readlimit) with 16 and with 64 threads, 16 parallel \`cat\`s and md5sum."
	echo
	echo "| corpus | photoidx | read limit, 16 threads | 64 threads | 16 cats | md5sum -P$NPROC | vs best read limit | vs cat | vs md5sum |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	awk '{ t[$1, $3] = $4; c[$1] = 1 }
		function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2fx", a / b) }
		END {
			n = split("nas/card nas/small", k, " ")
			for (i = 1; i <= n; i++) {
				if (!(k[i] in c)) continue
				best = t[k[i], "read_limit"]
				if (t[k[i], "read64"] != "" && t[k[i], "read64"] < best) best = t[k[i], "read64"]
				printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %s | %s |\n", k[i], t[k[i], "photoidx"], t[k[i], "read_limit"],
					t[k[i], "read64"], t[k[i], "cat"], t[k[i], "md5sum"], ratio(t[k[i], "photoidx"], best),
					ratio(t[k[i], "photoidx"], t[k[i], "cat"]), ratio(t[k[i], "photoidx"], t[k[i], "md5sum"])
			}
			if (t["nas", "rescan"] != "")
				printf "\nAn unchanged rescan of the NAS: photoidx %.2f s, find (the same stat fields) %.2f s: %s.\n",
					t["nas", "rescan"], t["nas", "find"], ratio(t["nas", "rescan"], t["nas", "find"])
		}' "$BENCH_DIR/nas-results.txt"
}

# --- a PostgreSQL catalog --------------------------------------------------

# BENCH_PG=0 to skip.  A throwaway cluster (tests/tools/pg.sh) with fsync and
# synchronous_commit on, as a server keeps them, over TCP on loopback.  The
# `lib` corpus (BENCH_LIB_FILES) imported warm into SQLite and into
# PostgreSQL, then an unchanged rescan of each; and three scanners at once,
# each with its own volume (a tmpfs holding BENCH_PG_PART_FILES, 50,000,
# files: one scanner per volume holds the volume's lock), against one of
# them alone.  Every import starts from an empty catalog.
#
# Over a slow link: the same server through tests/tools/delay-proxy.py,
# BENCH_PG_DELAY_MS (0.5) each way (a 1 ms round trip), against loopback:
#   new files   BENCH_PG_NEW_FILES (5,000) new files of 16 KiB, 500 to a
#               folder, scanned into a catalog holding pgpart (imported
#               before each run, not timed)
#   rescan      the unchanged rescan of lib
# and, from the server's own log (log_statement = all for one more run of
# each, over loopback), the statements sent per 1,000 new files and per
# 1,000 directories rescanned.
PG_PART_FILES=${BENCH_PG_PART_FILES:-50000}
PG_NEW_FILES=${BENCH_PG_NEW_FILES:-5000}
PG_DELAY=${BENCH_PG_DELAY_MS:-0.5}
gen_pgpart() {
	gen_folders "$PG_PART_FILES" 1000 "pgpart/dir%03d" 'IMG_%04d.JPG' --size "$LIB_BYTES" --width 128 --height 96 \
		--make Canon --model "Canon EOS R6" --date "2025:03:01 08:00:00"
}
gen_pgnew() {
	gen_folders "$PG_NEW_FILES" 500 "pgnew/dir%02d" 'DSC_%04d.JPG' --size 16384 --width 160 --height 120 \
		--make NIKON --model "Z 6" --date "2025:04:01 08:00:00"
}
# statements the server logged so far
pg_statements() {
	grep -c "LOG:  \(execute [^ ]*:\|statement:\)" "$1/log" || true
}
run_pg() {
	pg="$REPO/tests/tools/pg.sh"
	if ! why=$(sh "$pg" check 2>&1); then log "no PostgreSQL: $why"; return; fi
	make_corpus lib "$LIB_FILES x $LIB_BYTES in $LIB_LAYOUT" gen_lib
	make_corpus pgpart "$PG_PART_FILES x $LIB_BYTES" gen_pgpart
	make_corpus pgnew "$PG_NEW_FILES x 16384" gen_pgnew
	state="$BENCH_DIR/pg-cluster"
	uri=$(PIX_PG_CONF="fsync = on
synchronous_commit = on
shared_buffers = 512MB
max_wal_size = 4GB" sh "$pg" start "$state")
	saved=$RESULTS
	RESULTS="$BENCH_DIR/pg-results.txt"
	: >"$RESULTS"
	db="$BENCH_DIR/pg-bench.db"
	fresh="sh '$pg' createdb '$state' bench >/dev/null"
	measure lib warm sqlite_import "rm -f '$db'*; '$PHOTOIDX' scan --db '$db' -q '$BENCH_DIR/lib'"
	measure lib warm sqlite_rescan "'$PHOTOIDX' scan --db '$db' -q '$BENCH_DIR/lib'"
	measure lib warm pg_import "$fresh; '$PHOTOIDX' scan --db '$uri/bench' -q '$BENCH_DIR/lib'"
	measure lib warm pg_rescan "'$PHOTOIDX' scan --db '$uri/bench' -q '$BENCH_DIR/lib'"
	# the same server over a slow link
	rm -f "$BENCH_DIR/pg-proxy.port"
	python3 "$REPO/tests/tools/delay-proxy.py" 127.0.0.1:0 "${uri##*@}" "$PG_DELAY" "$BENCH_DIR/pg-proxy.port" &
	proxy=$!
	i=0
	while [ ! -s "$BENCH_DIR/pg-proxy.port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	slow="${uri%:*}:$(cat "$BENCH_DIR/pg-proxy.port")"
	measure lib warm pg_rescan_slow "'$PHOTOIDX' scan --db '$slow/bench' -q '$BENCH_DIR/lib'"
	logged="?options=-c%20log_statement%3Dall"
	n0=$(pg_statements "$state")
	"$PHOTOIDX" scan --db "$uri/bench$logged" -q "$BENCH_DIR/lib"
	n1=$(pg_statements "$state")
	echo "lib warm pg_rescan_statements $((n1 - n0)) 0 0 0" >>"$RESULTS"
	echo "lib warm lib_dirs $(find "$BENCH_DIR/lib" -type d | wc -l) 0 0 0" >>"$RESULTS"
	base="$fresh; '$PHOTOIDX' scan --db '$uri/bench' -q '$BENCH_DIR/pgpart'"
	prep=$base
	extra_trees="$BENCH_DIR/pgpart"
	measure pgnew warm pg_new "'$PHOTOIDX' scan --db '$uri/bench' -q '$BENCH_DIR/pgnew'"
	measure pgnew warm pg_new_slow "'$PHOTOIDX' scan --db '$slow/bench' -q '$BENCH_DIR/pgnew'"
	prep="rm -f '$db'*; '$PHOTOIDX' scan --db '$db' -q '$BENCH_DIR/pgpart'"
	measure pgnew warm sqlite_new "'$PHOTOIDX' scan --db '$db' -q '$BENCH_DIR/pgnew'"
	prep=""
	extra_trees=""
	sh -c "$base" >/dev/null
	n0=$(pg_statements "$state")
	"$PHOTOIDX" scan --db "$uri/bench$logged" -q "$BENCH_DIR/pgnew"
	n1=$(pg_statements "$state")
	echo "pgnew warm pg_new_statements $((n1 - n0)) 0 0 0" >>"$RESULTS"
	kill "$proxy" 2>/dev/null || true
	wait "$proxy" 2>/dev/null || true
	rm -f "$db"*
	# three volumes: tmpfs mounts, each a copy of the part
	for i in 1 2 3; do
		m="$BENCH_DIR/pgvol$i"
		mkdir -p "$m"
		mountpoint -q "$m" || mount -t tmpfs -o size=2g "pgvol$i" "$m"
		[ -d "$m/part" ] || cp -a "$BENCH_DIR/pgpart" "$m/part"
	done
	extra_trees="$BENCH_DIR/pgvol1 $BENCH_DIR/pgvol2 $BENCH_DIR/pgvol3"
	measure pgpart warm pg_one "$fresh; '$PHOTOIDX' scan --db '$uri/bench' -q '$BENCH_DIR/pgvol1/part'"
	measure pgpart warm pg_three "$fresh; for i in 1 2 3; do '$PHOTOIDX' scan --db '$uri/bench' -q '$BENCH_DIR/pgvol'\$i/part & done; wait"
	measure pgpart warm sqlite_one "rm -f '$db'*; '$PHOTOIDX' scan --db '$db' -q '$BENCH_DIR/pgvol1/part'"
	extra_trees=""
	rm -f "$db"*
	for i in 1 2 3; do umount "$BENCH_DIR/pgvol$i" 2>/dev/null || true; done
	RESULTS=$saved
	sh "$pg" stop "$state"
}
if [ "${BENCH_PG:-1}" = 1 ] && [ "$(id -u)" = 0 ]; then
	run_pg
fi

# --- the photographer's metadata: the import against the photoidx before it --
#
# BENCH_TAGS=0 to skip.  Issue 28 reads keywords, people, ratings and texts
# (XMP, ExtendedXMP, IPTC-IIM, sidecars) in the same pass as EXIF, and
# writes their rows: the warm import of the card and of the library (the
# corpora as above, generated here when BENCH_CORPORA has not) by this
# photoidx against the photoidx of BENCH_TAGS_BASE (default: the commit
# before src/tags.c was added, today's main when the work began), built
# from git into $BENCH_DIR/tags-base-COMMIT (kept between runs).  Each run
# imports into a new catalog, the two photoidx in turn (BENCH_RUNS runs
# each, interleaved so that a busy moment falls on both); the medians of
# wall and processor time are compared.  Target: no slower than 1.05x.
TAGS_CORPORA=${BENCH_TAGS_CORPORA:-card lib}
tags_base_build() {
	base=${BENCH_TAGS_BASE:-}
	if [ -z "$base" ]; then
		added=$(git -C "$REPO" log --diff-filter=A --format=%H -1 -- src/tags.c 2>/dev/null) || added=""
		[ -n "$added" ] && base=$(git -C "$REPO" rev-parse "$added^")
	fi
	if [ -z "$base" ] || ! base=$(git -C "$REPO" rev-parse --verify -q "$base^{commit}"); then
		log "photographer's metadata: no base commit to build (not a git checkout?)"
		return 1
	fi
	TAGS_BASE=$(git -C "$REPO" rev-parse --short "$base")
	src="$BENCH_DIR/tags-base-$base"
	if [ ! -x "$src/photoidx" ]; then
		log "building the photoidx of $TAGS_BASE (the import's baseline)"
		rm -rf "$src"
		mkdir -p "$src"
		git -C "$REPO" archive "$base" | tar -x -C "$src"
		env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$src" SANITIZE= photoidx >"$src.log" 2>&1 ||
			{ log "cannot build the photoidx of $TAGS_BASE: $src.log"; rm -rf "$src"; return 1; }
	fi
	TAGS_BASE_PHOTOIDX=$src/photoidx
}
run_tags() {
	tags_base_build || return 0
	saved=$RESULTS
	RESULTS="$BENCH_DIR/tags-results.txt"
	: >"$RESULTS"
	echo "$TAGS_BASE" >"$BENCH_DIR/tags-base.txt"
	db="$BENCH_DIR/tags-bench.db"
	# (not $c: gen_lib counts with it)
	for tc in $TAGS_CORPORA; do
		case $tc in
		card) make_corpus card "$CARD_FILES x $CARD_BYTES" gen_card ;;
		lib) make_corpus lib "$LIB_FILES x $LIB_BYTES in $LIB_LAYOUT" gen_lib ;;
		*) log "BENCH_TAGS_CORPORA: card or lib, not $tc"; continue ;;
		esac
		measure_turns "$tc" warm \
			tags_base "rm -f '$db'*" "'$TAGS_BASE_PHOTOIDX' scan --db '$db' -q --keep-cache '$BENCH_DIR/$tc'" \
			tags_new "rm -f '$db'*" "'$PHOTOIDX' scan --db '$db' -q --keep-cache '$BENCH_DIR/$tc'"
	done
	rm -f "$db"*
	RESULTS=$saved
}
if [ "${BENCH_TAGS:-1}" = 1 ]; then
	run_tags
fi

# This photoidx's import against the photoidx before the photographer's
# metadata.
tags_report() {
	awk -v base="$(cat "$BENCH_DIR/tags-base.txt" 2>/dev/null)" -v runs="$RUNS" '
		{ t[$1, $3] = $4; r[$1, $3] = $5; cpu[$1, $3] = $6 + $7; if (!($1 in seen)) order[++n] = $1; seen[$1] = 1 }
		END {
			if (!n) exit
			printf "\nThe photographer'"'"'s metadata (issue 28): the warm import (`--keep-cache`, a new catalog each run, median of %d runs, the two in turn) by this photoidx against that of %s, before it:\n\n", runs, base
			print "| corpus | before | now | now over before | processor time before | now | now over before | peak RSS before, now |"
			print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
			for (i = 1; i <= n; i++) {
				c = order[i]
				if (t[c, "tags_base"] == "" || t[c, "tags_new"] == "") continue
				printf "| %s | %.2f s | %.2f s | %.2fx | %.2f s | %.2f s | %.2fx | %.0f MB, %.0f MB |\n", c, t[c, "tags_base"], t[c, "tags_new"],
					(t[c, "tags_base"] > 0 ? t[c, "tags_new"] / t[c, "tags_base"] : 0), cpu[c, "tags_base"], cpu[c, "tags_new"],
					(cpu[c, "tags_base"] > 0 ? cpu[c, "tags_new"] / cpu[c, "tags_base"] : 0), r[c, "tags_base"] / 1024, r[c, "tags_new"] / 1024
			}
		}' "$BENCH_DIR/tags-results.txt"
}

# PostgreSQL against SQLite, and three scanners against one.
pg_report() {
	awk -v lib="$LIB_FILES" -v part="$PG_PART_FILES" -v nproc="$NPROC" -v newf="$PG_NEW_FILES" -v delay="$PG_DELAY" '{ t[$1, $3] = $4 }
		function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2fx", a / b) }
		END {
			print ""
			printf "A PostgreSQL catalog (one local server, fsync on, over TCP), warm, against SQLite:\n\n"
			print "| work | SQLite | PostgreSQL | PostgreSQL files/s over SQLite |"
			print "| --- | ---: | ---: | ---: |"
			si = t["lib", "sqlite_import"]; pi = t["lib", "pg_import"]
			if (si != "" && pi != "")
				printf "| import of %d files | %.2f s (%.0f files/s) | %.2f s (%.0f files/s) | %s |\n", lib, si, lib / si, pi, lib / pi, ratio(si, pi)
			sr = t["lib", "sqlite_rescan"]; pr = t["lib", "pg_rescan"]
			if (sr != "" && pr != "")
				printf "| unchanged rescan | %.2f s | %.2f s | %s |\n", sr, pr, ratio(sr, pr)
			n = t["pgnew", "pg_new"]; ns = t["pgnew", "pg_new_slow"]; nl = t["pgnew", "sqlite_new"]
			if (n != "" && ns != "")
				printf "| %d new files into a catalog of %d | %.2f s | %.2f s, over %s ms each way %.2f s | slow link over loopback %s |\n", newf, part, nl, n, delay, ns, ratio(ns, n)
			rs = t["lib", "pg_rescan_slow"]
			if (pr != "" && rs != "")
				printf "| unchanged rescan, over %s ms each way | | %.2f s | slow link over loopback %s |\n", delay, rs, ratio(rs, pr)
			s1 = t["pgnew", "pg_new_statements"]; s2 = t["lib", "pg_rescan_statements"]; nd = t["lib", "lib_dirs"]
			if (s1 != "")
				printf "\nStatements the server logged (log_statement = all): %.0f per 1,000 new files (%d for %d), %.0f per 1,000 directories rescanned (%d for %d directories).\n", s1 * 1000 / newf, s1, newf, (nd > 0 ? s2 * 1000 / nd : 0), s2, nd
			o = t["pgpart", "pg_one"]; h = t["pgpart", "pg_three"]
			if (o != "" && h != "")
				printf "\nThree scanners at once, each its own volume of %d files, into one PostgreSQL catalog: %.2f s for all three, one alone %.2f s (SQLite alone %.2f s): %.2fx one scanner'"'"'s files/s, on %d cores.\n", part, h, o, t["pgpart", "sqlite_one"], 3 * o / h, nproc
		}' "$BENCH_DIR/pg-results.txt"
}

# --- thumbnails: scan --thumbnails against vipsthumbnail (issue 26) ---------
#
# BENCH_THUMBS=0 to skip.  Corpora, made once (kept while their
# parameters hold):
#   thumbs  BENCH_THUMB_FILES (200) camera-sized JPEGs: 6000 x 4000 pixels
#           (24 MP), 4:2:2 as cameras write them, 4-6 MB, made from
#           BENCH_THUMB_BASES (4) ImageMagick plasma-and-noise pictures,
#           each file a distinct content (a comment of its own); every
#           other one a camera's MPF JPEG with a 1920 x 1280 "full HD"
#           preview after its image (tests/tools/mkfixture.c mpf)
#   thumbraw BENCH_THUMB_RAWS (50) TIFF-based RAW files as NEF lays them
#           out (mkfixture raw): 18 MB of sensor data behind a preview,
#           half a full-size 6000 x 4000 JpgFromRaw, half a 1616 x 1080
#           PreviewImage as ARW has
# and times, warm, new catalog each run (BENCH_RUNS runs, the median; the
# three commands taking turns, measure_turns):
#   photoidx   scan --thumbnails: MD5, metadata and both renditions
#   vips       vipsthumbnail -s 256 of every image, xargs -P$(nproc) -n 8:
#              the thumbnails alone, no hash, no metadata.  For the RAW
#              files vipsthumbnail cannot read them: it is given their
#              previews as JPEG files of their own (the extraction free),
#              the least any tool that extracts then thumbnails spends
#   md5sum     md5sum of every file, xargs -P$(nproc) -n 8: the hash alone;
#              md5sum + vips is what the peers take for what one scan does
# Target: photoidx at most vipsthumbnail's time, peak RSS under 100 MB.
THUMB_FILES=${BENCH_THUMB_FILES:-200}
THUMB_RAWS=${BENCH_THUMB_RAWS:-50}
THUMB_BASES=${BENCH_THUMB_BASES:-4}

# thumb_base N OUT: a 24 MP camera-like JPEG (4-6 MB) from seed N
thumb_base() {
	convert -seed "$1" -size 1500x1000 plasma:fractal -resize 6000x4000! -attenuate 0.2 +noise Gaussian \
		-sampling-factor 2x1 -quality 90 "$2"
}

# thumb_variant IN OUT K: IN with a comment segment naming K after its SOI
thumb_variant() {
	{ head -c 2 "$1"; printf '\377\376\000\014bench%05d' "$3"; tail -c +3 "$1"; } >"$2"
}

gen_thumbs() {
	d="$BENCH_DIR/thumbs" b="$BENCH_DIR/thumb-bases"
	rm -rf "$b" && mkdir -p "$b" "$d/DCIM/100CANON"
	k=0
	while [ "$k" -lt "$THUMB_BASES" ]; do
		thumb_base "$k" "$b/base$k.jpg"
		convert "$b/base$k.jpg" -resize 1920x1280 -quality 90 "$b/pv$k.jpg"
		"$MKFIXTURE" mpf "$b/mpf$k.jpg" "$b/base$k.jpg" "$b/pv$k.jpg" --class fullhd
		k=$((k + 1))
	done
	i=1
	while [ "$i" -le "$THUMB_FILES" ]; do
		k=$((i % THUMB_BASES))
		src=$b/base$k.jpg
		[ $((i % 2)) = 0 ] && src=$b/mpf$k.jpg
		thumb_variant "$src" "$d/DCIM/100CANON/IMG_$(printf %04d "$i").JPG" "$i"
		i=$((i + 1))
	done
}

gen_thumbraw() {
	d="$BENCH_DIR/thumbraw" b="$BENCH_DIR/thumb-bases"
	rm -rf "$BENCH_DIR/thumbraw-previews"
	mkdir -p "$d/DCIM/100NIKON" "$BENCH_DIR/thumbraw-previews"
	[ -f "$b/base0.jpg" ] || gen_thumbs
	convert "$b/base0.jpg" -resize 1616x1080 -quality 90 "$b/arw.jpg"
	i=1
	while [ "$i" -le "$THUMB_RAWS" ]; do
		pv="$BENCH_DIR/thumbraw-previews/pv$(printf %04d "$i").jpg"
		if [ $((i % 2)) = 0 ]; then
			thumb_variant "$b/base$((i % THUMB_BASES)).jpg" "$pv" "$i"
		else
			thumb_variant "$b/arw.jpg" "$pv" "$i"
		fi
		"$MKFIXTURE" raw "$d/DCIM/100NIKON/DSC_$(printf %04d "$i").NEF" "$pv" --raw-bytes 18000000 \
			--width 6016 --height 4016
		i=$((i + 1))
	done
}

# run_thumbs CORPUS DIR_OF_IMAGES: the two rows of a corpus
run_thumbs() {
	c=$1 images=$2
	db="$BENCH_DIR/thumbs.db" out="$BENCH_DIR/thumbs-vips"
	measure_turns "$c" warm \
		photoidx_thumbs "rm -f '$db' '$db-wal' '$db-shm'" "'$PHOTOIDX' scan -q --thumbnails --db '$db' '$BENCH_DIR/$c'" \
		vipsthumbnail "rm -rf '$out' && mkdir -p '$out'" \
		"find '$images' -type f -print0 | xargs -0 -P $NPROC -n 8 vipsthumbnail -s 256 -o '$out/%s.jpg'" \
		thumb_md5sum "" "find '$BENCH_DIR/$c' -type f -print0 | xargs -0 -P $NPROC -n 8 md5sum"
	"$PHOTOIDX" scan -q --thumbnails --json --db "$db.check" "$BENCH_DIR/$c" >"$BENCH_DIR/$c-thumbs.json" 2>/dev/null || true
	rm -f "$db.check" "$db.check-wal" "$db.check-shm"
}

thumbs_report() {
	[ -n "$(awk '$3 == "photoidx_thumbs"' "$RESULTS")" ] || return 0
	echo
	echo "Thumbnails (\`scan --thumbnails\`: MD5, metadata and a 256 and a 512 px rendition) against \`vipsthumbnail -s 256\`"
	echo "(libvips, shrink-on-load) with \`xargs -P$NPROC\`, the thumbnails alone, and against md5sum then vipsthumbnail"
	echo "(what the peers take for the hash and the thumbnail), warm, the three taking turns run by run:"
	echo
	echo "| corpus | photoidx scan --thumbnails | vipsthumbnail | md5sum | photoidx over vips | photoidx over md5sum + vips | photoidx peak RSS | made, notes |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
	for c in thumbs thumbraw; do
		src=$(jq -r '"\(.thumbnails_made) made, \(.thumbnails_failed) notes"' "$BENCH_DIR/$c-thumbs.json" 2>/dev/null || echo -)
		awk -v c="$c" -v files="$(find "$BENCH_DIR/$c/DCIM" -type f 2>/dev/null | wc -l)" -v src="$src" '
			$1 == c && $2 == "warm" { t[$3] = $4; r[$3] = $5 }
			function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2fx", a / b) }
			END {
				if (t["photoidx_thumbs"] == "") exit
				what = c == "thumbs" ? "camera JPEGs, 24 MP, half with an MPF preview" : "RAW files of 18 MB, previews full-size and 1616 px (vips: the previews as files)"
				p = t["photoidx_thumbs"]; v = t["vipsthumbnail"]; m = t["thumb_md5sum"]
				printf "| %d %s | %.2f s | %.2f s | %.2f s | %s | %s | %.0f MB | %s |\n", files, what, p, v, m,
					ratio(p, v), ratio(p, v + m), r["photoidx_thumbs"] / 1024, src
			}' "$RESULTS"
	done
}

if [ "${BENCH_THUMBS:-1}" = 1 ]; then
	for tool in vipsthumbnail convert; do
		command -v "$tool" >/dev/null || { echo "bench: $tool missing: run sh contrib/debian-deps.sh bench" >&2; exit 1; }
	done
	make_corpus thumbs "$THUMB_FILES x 6000x4000 from $THUMB_BASES bases, every other MPF" gen_thumbs
	make_corpus thumbraw "$THUMB_RAWS x 18 MB, previews 6000 and 1616" gen_thumbraw
	run_thumbs thumbs "$BENCH_DIR/thumbs"
	extra_trees="$BENCH_DIR/thumbraw-previews" run_thumbs thumbraw "$BENCH_DIR/thumbraw-previews"
fi

# --- thumbnails: the exports into front ends' caches (issue 26) -----------
#
# BENCH_THUMBS=0 (or BENCH_THUMB_EXPORT=0) to skip.  A corpus of BENCH_THUMBS_FILES (10000) photos
# of 1600 x 1200 (BENCH_THUMBS_BASES, 16, plasma fractals made by
# ImageMagick, each copied with a trailer of its own after its end marker,
# so every file is a content of its own that the scan decodes; with
# mkfixture's grey noise where ImageMagick is missing, the worst case for
# PNG), scanned once with --thumbnails into its own catalog (not timed).
# Timed, warm, BENCH_RUNS runs each, the catalog in the page cache:
#   kpa         export --kphotoalbum into the corpus, from nothing:
#               index.xml, exif-info.db and .thumbnails (the 256 px
#               renditions as stored: no decoding)
#   kpa_200     the same at thumbSize 200 (every thumbnail decoded from
#               the 512 px rendition, scaled and encoded again)
#   kpa_again   export --kphotoalbum once more: everything up to date
#   xdg         export --xdg-thumbnails into an empty folder: 3 PNGs a file
#   xdg_again   the same again: every PNG current, none written
# Results in $BENCH_DIR/thumbexp-results.txt ("what seconds rss_kb user sys"),
# reported after the rest (thumbexp_report).
THUMBS_FILES=${BENCH_THUMBS_FILES:-10000}
THUMBS_BASES=${BENCH_THUMBS_BASES:-16}

gen_thumbexp() {
	base="$BENCH_DIR/thumbexp-bases"
	rm -rf "$base" && mkdir -p "$base"
	i=0
	while [ $i -lt "$THUMBS_BASES" ]; do
		if command -v convert >/dev/null; then
			convert -seed $((i + 1)) -size 1600x1200 plasma:fractal -blur 0x1 -quality 90 "$base/b$i.jpg"
		else
			"$MKFIXTURE" jpeg "$base/b$i.jpg" --width 1600 --height 1200 --size 400000 --seed $((i + 1))
		fi
		i=$((i + 1))
	done
	i=0
	while [ $i -lt "$THUMBS_FILES" ]; do
		d="$BENCH_DIR/thumbexp/$(printf '%03d' $((i / 500)))"
		[ $((i % 500)) = 0 ] && mkdir -p "$d"
		{ cat "$base/b$((i % THUMBS_BASES)).jpg"; printf 'photoidx bench %08d' $i; } >"$d/IMG_$(printf '%05d' $i).JPG"
		i=$((i + 1))
	done
	rm -rf "$base"
}

# thumbexp_time WHAT PREP CMD: CMD timed $RUNS times, PREP (not timed) before each
thumbexp_time() {
	what=$1 prep=$2 cmd=$3 runs=$RUNS
	: >"$BENCH_DIR/times"
	while [ "$runs" -gt 0 ]; do
		sh -c "$prep"
		"$TIME" -f '%e %M %U %S' -o "$BENCH_DIR/t1" sh -c "$cmd" >/dev/null 2>"$BENCH_DIR/stderr" ||
			{ log "thumbnails: $what failed:"; cat "$BENCH_DIR/stderr" >&2; }
		tail -n 1 "$BENCH_DIR/t1" >>"$BENCH_DIR/times"
		runs=$((runs - 1))
	done
	echo "$what $(cut -d' ' -f1 "$BENCH_DIR/times" | median) $(cut -d' ' -f2 "$BENCH_DIR/times" | sort -n | tail -n 1)" \
		"$(cut -d' ' -f3 "$BENCH_DIR/times" | median) $(cut -d' ' -f4 "$BENCH_DIR/times" | median)" >>"$BENCH_DIR/thumbexp-results.txt"
	log "thumbnails: $(tail -n 1 "$BENCH_DIR/thumbexp-results.txt")"
}

run_thumbexp() {
	corpus="$BENCH_DIR/thumbexp" db="$BENCH_DIR/thumbexp.db" xdg="$BENCH_DIR/thumbexp-xdg"
	kind=mkfixture
	command -v convert >/dev/null && kind=plasma
	make_corpus thumbexp "$THUMBS_FILES x 1600x1200 $kind, $THUMBS_BASES bases" gen_thumbexp
	rm -f "$db"*
	log "thumbnails: scanning $corpus with --thumbnails (not timed)"
	"$PHOTOIDX" scan --db "$db" -q --thumbnails "$corpus" || log "thumbnails: the scan exited $?"
	: >"$BENCH_DIR/thumbexp-results.txt"
	echo "kind $kind" >>"$BENCH_DIR/thumbexp-results.txt"
	echo "thumbnails $(sqlite3 "$db" "select count(*) from thumbs where note is null") \
$(sqlite3 "$db" "select coalesce(sum(length(large_jpeg) + length(xlarge_jpeg)), 0) from thumbs")" >>"$BENCH_DIR/thumbexp-results.txt"
	warm "$corpus" && cat "$db" >/dev/null
	clean="rm -rf '$corpus/.thumbnails' '$corpus/index.xml' '$corpus'/index.xml~* '$corpus/exif-info.db' '$corpus/.photoidx-kpa'"
	rc="$BENCH_DIR/thumbexp-config"
	mkdir -p "$rc"
	thumbexp_time kpa "$clean" "XDG_CONFIG_HOME='$rc' '$PHOTOIDX' export --db '$db' -q --kphotoalbum '$corpus'"
	echo "kpa_bytes $(du -sb "$corpus/.thumbnails" | cut -f1)" >>"$BENCH_DIR/thumbexp-results.txt"
	thumbexp_time kpa_again ":" "XDG_CONFIG_HOME='$rc' '$PHOTOIDX' export --db '$db' -q --kphotoalbum '$corpus'"
	printf '[Thumbnails - %s/]\nthumbSize=200\n' "$corpus" >"$rc/kphotoalbumrc"
	thumbexp_time kpa_200 "$clean" "XDG_CONFIG_HOME='$rc' '$PHOTOIDX' export --db '$db' -q --kphotoalbum '$corpus'"
	rm -f "$rc/kphotoalbumrc"
	sh -c "$clean"
	thumbexp_time xdg "rm -rf '$xdg'" "'$PHOTOIDX' export --db '$db' -q --xdg-thumbnails '$xdg'"
	echo "xdg_bytes $(du -sb "$xdg" | cut -f1)" >>"$BENCH_DIR/thumbexp-results.txt"
	thumbexp_time xdg_again ":" "'$PHOTOIDX' export --db '$db' -q --xdg-thumbnails '$xdg'"
	rm -rf "$xdg" "$rc"
}
rm -f "$BENCH_DIR/thumbexp-results.txt"
if [ "${BENCH_THUMBS:-1}" = 1 ] && [ "${BENCH_THUMB_EXPORT:-1}" = 1 ]; then
	run_thumbexp
fi

thumbexp_report() {
	[ -s "$BENCH_DIR/thumbexp-results.txt" ] || return 0
	awk -v nproc="$NPROC" '{ t[$1] = $2; r[$1] = $3; u[$1] = $4; s[$1] = $5 }
		function row(k, what) {
			if (t[k] == "") return
			printf "| %s | %.2f s | %.2f s | %.1f ms | %.0f MB |\n", what, t[k], u[k] + s[k], 1000 * (u[k] + s[k]) / n, r[k] / 1024
		}
		END {
			n = t["thumbnails"]
			if (n == 0) exit
			print ""
			printf "Thumbnails into front ends'"'"' caches (no image file opened): %d photos of 1600 x 1200 (%s), scanned with --thumbnails, %.0f MB of renditions in the catalog; warm, %d cores:\n\n", n, t["kind"] == "plasma" ? "ImageMagick plasma fractals" : "mkfixture grey noise", r["thumbnails"] / 1e6, nproc
			print "| export | wall | processor | processor per photo | peak RSS |"
			print "| --- | ---: | ---: | ---: | ---: |"
			row("kpa", "--kphotoalbum from nothing (index.xml, exif-info.db, .thumbnails at 256 px: as stored)")
			row("kpa_200", "--kphotoalbum at thumbSize 200 (each decoded from 512 px, scaled, encoded)")
			row("kpa_again", "--kphotoalbum again (up to date)")
			row("xdg", "--xdg-thumbnails into an empty cache (3 PNGs a photo)")
			row("xdg_again", "--xdg-thumbnails again (every PNG current)")
			printf "\nKPhotoAlbum'"'"'s .thumbnails: %.0f MB; the freedesktop.org cache: %.0f MB.\n", t["kpa_bytes"] / 1e6, t["xdg_bytes"] / 1e6
		}' "$BENCH_DIR/thumbexp-results.txt"
}

# --- report -----------------------------------------------------------------

# The run: when, what, where, and how quiet the machine was.
header() {
	echo "Figures of one \`make bench\` run on $START_DATE, photoidx $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo "(no git)"),"
	echo "on $NPROC cores, $(free -g | awk '/^Mem/ { print $2 }') GiB, Linux $(uname -r); load average (1 minute) $LOAD_START at start, $(load1) at end."
	if [ -n "$QUIET_NOTE" ]; then
		echo
		echo "$QUIET_NOTE"
	fi
}

# The targets, each beside the ratio (or value) measured in this run, and
# whether it was met.
targets() {
	lib_files="" lib_new="" rates="" rescan_read="" quick_read=""
	[ -f "$BENCH_DIR/lib.files" ] && lib_files=$(cat "$BENCH_DIR/lib.files")
	if [ -f "$BENCH_DIR/lib-import.json" ]; then
		lib_new=$(jq .new "$BENCH_DIR/lib-import.json")
		# first and last buckets' rates, busy and wall
		rates=$(jq -r 'if (.write_rates | length) > 1 then [.write_rates[0].items_per_s, .write_rates[-1].items_per_s,
			.write_rates[0].wall_items_per_s, .write_rates[-1].wall_items_per_s] | join(" ") else "" end' "$BENCH_DIR/lib-import.json")
	fi
	[ -f "$BENCH_DIR/lib-rescan.json" ] && rescan_read=$(jq .bytes_read "$BENCH_DIR/lib-rescan.json")
	[ -f "$BENCH_DIR/lib-quick.json" ] && quick_read=$(jq .bytes_read "$BENCH_DIR/lib-quick.json")
	echo "| what | measured | ratio or value | target | result |"
	echo "| --- | --- | ---: | ---: | --- |"
	cat "$RESULTS" "$BENCH_DIR/nas-results.txt" "$BENCH_DIR/pg-results.txt" "$BENCH_DIR/tags-results.txt" 2>/dev/null | awk -v nproc="$NPROC" \
		-v mfiles="$MILLION_FILES" -v sfiles="$SUBSET_FILES" -v lib_files="$lib_files" -v lib_new="$lib_new" \
		-v rates="$rates" -v rescan_read="$rescan_read" -v quick_read="$quick_read" '
		{ t[$1, $2, $3] = $4; rss[$1, $2, $3] = $5; cpu[$1, $2, $3] = $6 + $7 }
		function has(c, k, x) { return (c, k, x) in t }
		# v against the target: op is <=, <, >= or =
		function judge(v, op, lim) {
			v += 0; lim += 0
			return (op == "<=" ? v <= lim : op == "<" ? v < lim : op == ">=" ? v >= lim : v == lim) ? "met" : "**NOT met**"
		}
		function row(what, detail, shown, target, result) {
			printf "| %s | %s | %s | %s | %s |\n", what, detail, shown, target, result
		}
		function missing(what, target) { row(what, "-", "-", target, "not measured") }
		# vs(what, A, B, names, op, limit): the time of A over that of B,
		# each given as "corpus cache tool"
		function vs(what, a, b, na, nb, op, lim,   x, y, q) {
			split(a, x, " "); split(b, y, " ")
			if (!has(x[1], x[2], x[3]) || !has(y[1], y[2], y[3]) || t[y[1], y[2], y[3]] == 0) {
				missing(what, op " " lim "x")
				return
			}
			q = sprintf("%.2f", t[x[1], x[2], x[3]] / t[y[1], y[2], y[3]])
			row(what, sprintf("%s %.2f s, %s %.2f s", na, t[x[1], x[2], x[3]], nb, t[y[1], y[2], y[3]]), q "x", op " " lim "x", judge(q, op, lim))
		}
		function rss_under(what, detail, a, b,   x, y, kb) {
			split(a, x, " "); split(b, y, " ")
			kb = rss[x[1], x[2], x[3]] + 0
			if (b != "" && rss[y[1], y[2], y[3]] + 0 > kb) kb = rss[y[1], y[2], y[3]] + 0
			if (kb == 0) { missing(what, "< 100 MB"); return }
			row(what, detail, sprintf("%.0f MB", kb / 1024), "< 100 MB", judge(sprintf("%.0f", kb / 1024), "<", 100))
		}
		END {
			m = "million (" mfiles " files)"
			vs(m ": import, cold, vs the read limit (16 threads)", "million cold photoidx", "million cold read_limit",
				"photoidx", "read limit", "<=", 1.1)
			vs(m ": import, warm (`--keep-cache`), vs `md5sum -P" nproc "`", "million warm photoidx", "million warm md5sum",
				"photoidx", "md5sum", "<=", 0.7)
			rss_under(m ": import, photoidx peak RSS", "the cold and the warm imports", "million cold photoidx", "million warm photoidx")
			what = m ": processor time per file (user + sys) of the warm import, against " sfiles " files"
			if (has("million", "warm", "photoidx") && has("million10k", "warm", "photoidx") && cpu["million10k", "warm", "photoidx"] > 0) {
				a = cpu["million", "warm", "photoidx"] / mfiles * 1e6; b = cpu["million10k", "warm", "photoidx"] / sfiles * 1e6
				q = sprintf("%.2f", a / b)
				row(what, sprintf("%.1f µs at %d files, %.1f µs at %d", a, mfiles, b, sfiles), q "x", "<= 1.2x", judge(q, "<=", 1.2))
			} else missing(what, "<= 1.2x")
			vs("card: warm, vs `md5sum -P" nproc "`", "card warm photoidx", "card warm md5sum", "photoidx", "md5sum", "<=", 0.35)
			vs("small: warm, vs `md5sum -P" nproc "`", "small warm photoidx", "small warm md5sum", "photoidx", "md5sum", "<=", 0.7)
			vs("seq: warm, vs `md5sum -P" nproc "`", "seq warm photoidx", "seq warm md5sum", "photoidx", "md5sum", "<=", 0.7)
			vs("lib: warm, vs `md5sum -P" nproc "`", "lib warm photoidx", "lib warm md5sum", "photoidx", "md5sum", "<=", 0.7)
			vs("card: import, warm, vs the photoidx before issue 28 (keywords, people)", "card warm tags_new", "card warm tags_base",
				"now", "before", "<=", 1.05)
			vs("lib: import, warm, vs the photoidx before issue 28 (keywords, people)", "lib warm tags_new", "lib warm tags_base",
				"now", "before", "<=", 1.05)
			vs("small: cold, vs the read limit (16 threads)", "small cold photoidx", "small cold read_limit", "photoidx", "read limit", "<=", 1.1)
			vs("seq: cold, vs the read limit (16 threads)", "seq cold photoidx", "seq cold read_limit", "photoidx", "read limit", "<=", 1.1)
			rss_under("lib: import, photoidx peak RSS", "the warm import", "lib warm photoidx", "")
			what = "lib: import complete (`new` = the files)"
			if (lib_files != "" && lib_new != "")
				row(what, "--json", lib_new " of " lib_files, "all", lib_new == lib_files ? "met" : "**NOT met**")
			else missing(what, "all")
			split(rates, w, " ")
			what = "lib: catalog writes, last 100k rows over first, writer busy"
			if (rates != "" && w[1] > 0) {
				q = sprintf("%.2f", w[2] / w[1])
				row(what, sprintf("%.0f, %.0f items/s", w[2], w[1]), q "x", ">= 1x", judge(q, ">=", 1))
			} else missing(what, ">= 1x")
			what = "lib: catalog writes, last 100k rows over first, wall"
			if (rates != "" && w[3] > 0) {
				q = sprintf("%.2f", w[4] / w[3])
				row(what, sprintf("%.0f, %.0f items/s", w[4], w[3]), q "x", ">= 1x", judge(q, ">=", 1))
			} else missing(what, ">= 1x")
			vs("lib: unchanged rescan, vs `find` of the same stat fields", "lib warm photoidx_rescan", "lib warm find_stat",
				"photoidx", "find", "<=", 1.5)
			what = "lib: unchanged rescan, file data read"
			if (rescan_read != "") row(what, "--json", rescan_read " B", "0 B", judge(rescan_read, "=", 0))
			else missing(what, "0 B")
			vs("lib: `scan --quick`, vs `find`", "lib warm photoidx_quick", "lib warm find_stat", "photoidx", "find", "<", 1)
			best = has("nas/card", "cold", "read64") && t["nas/card", "cold", "read64"] < t["nas/card", "cold", "read_limit"] ? "read64" : "read_limit"
			vs("NAS card: cold, vs the better read limit (16 or 64 threads)", "nas/card cold photoidx", "nas/card cold " best,
				"photoidx", best == "read64" ? "read limit (64)" : "read limit (16)", "<=", 1.2)
			vs("NAS: unchanged rescan, vs `find`", "nas cold rescan", "nas cold find", "photoidx", "find", "<=", 1)
			vs("PostgreSQL: import, files/s over SQLite'"'"'s", "lib warm sqlite_import", "lib warm pg_import",
				"SQLite", "PostgreSQL", ">=", 0.8)
			vs("PostgreSQL: new files into a catalog, slow link (1 ms round trip) vs loopback", "pgnew warm pg_new_slow",
				"pgnew warm pg_new", "slow link", "loopback", "<=", 1.5)
			vs("PostgreSQL: unchanged rescan of lib, slow link vs loopback", "lib warm pg_rescan_slow", "lib warm pg_rescan",
				"slow link", "loopback", "<=", 1.5)
			what = "PostgreSQL: 3 scanners at once, files/s over one'"'"'s (with enough cores; " nproc " here)"
			if (has("pgpart", "warm", "pg_one") && has("pgpart", "warm", "pg_three") && t["pgpart", "warm", "pg_three"] > 0) {
				q = sprintf("%.2f", 3 * t["pgpart", "warm", "pg_one"] / t["pgpart", "warm", "pg_three"])
				row(what, sprintf("three %.2f s, one %.2f s", t["pgpart", "warm", "pg_three"], t["pgpart", "warm", "pg_one"]),
					q "x", ">= 2.5x", judge(q, ">=", 2.5))
			} else missing(what, ">= 2.5x")
		}'
}

report() {
	header
	echo
	targets
	echo
	echo "Medians of BENCH_RUNS=$RUNS runs (the million files: BENCH_MILLION_RUNS=$MILLION_RUNS, a run taking 20-80 s),"
	echo "seconds (lower is better). Ratios are photoidx's time over the other's: below 1 photoidx is faster."
	echo "The read limit is bench/readlimit: every file read once by 16 threads in inode order, in 1 MiB"
	echo "reads, with no process per file; \`cat\` is the reference before it, 16 parallel \`cat\`s in inode order"
	echo "(\`xargs -P 16 -n 64 cat\`: a process per 64 files). The MD5 limit is one OpenSSL MD5 stream"
	echo "($(awk -v b="$MD5_BPS" 'BEGIN { printf "%.2f", b / 1e9 }') GB/s here)."
	[ "$can_drop" = 1 ] || echo "(not root: no cold-cache figures)"
	echo
	echo "| corpus | cache | photoidx | read limit | cat | MD5 limit | md5sum -P$NPROC | hashdeep | exiftool | vs read limit | vs cat | vs md5sum | vs hashdeep | vs exiftool | photoidx peak RSS |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for c in $CORPORA; do
		bytes=$(bytes_of "$BENCH_DIR/$c")
		files=$(find "$BENCH_DIR/$c" -type f | wc -l)
		for cache in warm cold; do
			awk -v c="$c" -v k="$cache" -v bytes="$bytes" -v files="$files" -v md5bps="$MD5_BPS" '
				$1 == c && $2 == k { t[$3] = $4; r[$3] = $5 }
				function f(x) { return x == "" ? "-" : sprintf("%.2f", x) }
				function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2fx", a / b) }
				END {
					if (t["photoidx"] == "") exit
					md5lim = bytes / md5bps
					printf "| %s (%d files, %.1f GB) | %s | %s | %s | %s | %.2f | %s | %s | %s | %s | %s | %s | %s | %s | %.0f MB |\n",
						c, files, bytes / 1e9, k, f(t["photoidx"]), f(t["read_limit"]), f(t["cat"]), md5lim, f(t["md5sum"]),
						f(t["hashdeep"]), f(t["exiftool"]), ratio(t["photoidx"], t["read_limit"]), ratio(t["photoidx"], t["cat"]),
						ratio(t["photoidx"], t["md5sum"]), ratio(t["photoidx"], t["hashdeep"]),
						ratio(t["photoidx"], t["exiftool"]), r["photoidx"] / 1024
				}' "$RESULTS"
		done
	done
	small_report
	million_report
	similar_report
	[ -s "$BENCH_DIR/nas-results.txt" ] && nas_report
	[ -s "$BENCH_DIR/pg-results.txt" ] && pg_report
	[ -s "$BENCH_DIR/tags-results.txt" ] && tags_report
	if [ -f "$BENCH_DIR/lib-import.json" ]; then lib_report; query_report; fi
	if [ -f "$BENCH_DIR/dups-counts.txt" ]; then dups_report; fi
	thumbs_report
	thumbexp_report
	awk '$1 == "card" && $2 == "warm" && $3 == "photoidx_meta" { m = $4 } $1 == "card" && $2 == "warm" && $3 == "photoidx_scan" { s = $4 }
		$1 == "card" && $2 == "warm" && $3 == "exiftool" { e = $4 }
		END { if (m != "" && m > 0) printf "\nMetadata of the card: exiftool -fast2 %.2f s; photoidx spends %.3f s of processor time reading headers and EXIF (%.0fx faster) and %.2f s checking that each image reaches its end marker (a damage check exiftool does not make).\n", e, m, e / m, s }' "$RESULTS"
	if [ -f "$BENCH_DIR/watch.txt" ]; then
		echo
		cat "$BENCH_DIR/watch.txt"
	fi
	echo
	echo "![make bench](bench.png)"
}

# The README's part: the targets, and where the rest is.
summary() {
	targets
	echo
	note=""
	[ -n "$QUIET_NOTE" ] && note=": figures not clean"
	echo "Measured by one \`make bench\` run on $START_DATE, photoidx $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo "(no git)"), $NPROC cores, load average $LOAD_START at start$note; every figure, with the peers and the limits: [doc/bench.md](doc/bench.md)."
}

# Many small files against the read limit with 16 and 64 threads, and 16
# parallel cats, reading the same files.
small_report() {
	awk '$1 == "small" { t[$2, $3] = $4; seen = 1 }
		function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2fx", a / b) }
		END {
			if (!seen) exit
			print ""
			print "Many small files (the `small` corpus): photoidx against the read limit with 16 and with 64 threads, and 16 parallel `cat`s, reading the same files in inode order."
			print ""
			print "| cache | photoidx | read limit, 16 threads | 64 threads | 16 cats | vs 16 threads | vs 64 threads | vs cat |"
			print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
			n = split("warm cold", k, " ")
			for (i = 1; i <= n; i++)
				if (t[k[i], "photoidx"] != "")
					printf "| %s | %.2f | %.2f | %.2f | %.2f | %s | %s | %s |\n", k[i], t[k[i], "photoidx"], t[k[i], "read_limit"],
						t[k[i], "read64"], t[k[i], "cat"], ratio(t[k[i], "photoidx"], t[k[i], "read_limit"]),
						ratio(t[k[i], "photoidx"], t[k[i], "read64"]), ratio(t[k[i], "photoidx"], t[k[i], "cat"])
		}' "$RESULTS"
}

# The million files: import cold and warm against the limits and md5sum,
# peak RSS, and processor time per file against that at 10,000 files.
million_report() {
	awk -v mfiles="$MILLION_FILES" -v sfiles="$SUBSET_FILES" -v runs="$MILLION_RUNS" -v sruns="$RUNS" -v nproc="$NPROC" '
		$1 ~ /^million/ { t[$1, $2, $3] = $4; r[$1, $2, $3] = $5; u[$1, $2, $3] = $6; s[$1, $2, $3] = $7; seen = 1 }
		function f(x) { return x == "" ? "-" : sprintf("%.2f", x) }
		function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2fx", a / b) }
		function us(c) { return t[c, "warm", "photoidx"] == "" ? "-" : sprintf("%.1f", (u[c, "warm", "photoidx"] + s[c, "warm", "photoidx"]) / (c == "million" ? mfiles : sfiles) * 1e6) }
		END {
			if (!seen) exit
			printf "\nA million files (the `million` corpus: %d JPEGs of 1.0-1.6 KB with EXIF, 1,000 to a folder, 50 events a year from 2005), %d run%s each:\n\n",
				mfiles, runs, runs == 1 ? "" : "s"
			print "| work | photoidx | read limit, 16 threads | 16 cats | md5sum -P" nproc " | vs read limit | vs cat | vs md5sum | photoidx peak RSS |"
			print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
			if (t["million", "cold", "photoidx"] != "")
				printf "| import, cold (new catalog, caches dropped) | %s | %s | %s | - | %s | %s | - | %.0f MB |\n",
					f(t["million", "cold", "photoidx"]), f(t["million", "cold", "read_limit"]), f(t["million", "cold", "cat"]),
					ratio(t["million", "cold", "photoidx"], t["million", "cold", "read_limit"]),
					ratio(t["million", "cold", "photoidx"], t["million", "cold", "cat"]), r["million", "cold", "photoidx"] / 1024
			if (t["million", "warm", "photoidx"] != "")
				printf "| import, warm (`--keep-cache`) | %s | - | - | %s | - | - | %s | %.0f MB |\n",
					f(t["million", "warm", "photoidx"]), f(t["million", "warm", "md5sum"]),
					ratio(t["million", "warm", "photoidx"], t["million", "warm", "md5sum"]), r["million", "warm", "photoidx"] / 1024
			if (t["million10k", "warm", "photoidx"] != "")
				printf "\nProcessor time (user + sys) of the warm import, per file: %s µs at %d files (user %s s, sys %s s), %s µs at %d files (million10k: the first %d folders, generated alike; %.2f s, user %s s, sys %s s, median of %d runs): %s.\n",
					us("million"), mfiles, f(u["million", "warm", "photoidx"]), f(s["million", "warm", "photoidx"]),
					us("million10k"), sfiles, int((sfiles + 999) / 1000), t["million10k", "warm", "photoidx"], f(u["million10k", "warm", "photoidx"]),
					f(s["million10k", "warm", "photoidx"]), sruns, ratio(us("million"), us("million10k"))
		}' "$RESULTS"
}

# The library's import (completeness, RSS, write rates by catalog size) and
# its unchanged rescans against find.
lib_report() {
	files=$(cat "$BENCH_DIR/lib.files")
	new=$(jq .new "$BENCH_DIR/lib-import.json")
	: "${new:=unknown}"
	complete="complete"
	[ "$new" = "$files" ] || complete="INCOMPLETE"
	echo
	awk -v files="$files" -v new="$new" -v complete="$complete" '
		$1 == "lib" && $2 == "warm" && $3 == "photoidx" { t = $4; r = $5 }
		END {
			printf "Import of the library (%d files in year/event/camera folders), warm: %.2f s (%.0f files/s), peak RSS %.0f MB (target: under 100 MB); `new` = %s of %d files: %s.\n",
				files, t, (t > 0 ? files / t : 0), r / 1024, new, files, complete
		}' "$RESULTS"
	echo
	echo "Catalog writes by catalog size (import with --json; items per second of the writer thread's busy time and of wall time):"
	echo
	echo "| catalog file rows | items | writer busy s | items/s (busy) | items/s (wall) |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	jq -r '.write_rates[] | "\(.catalog_rows) \(.items) \(.busy_seconds) \(.items_per_s) \(.wall_items_per_s)"' \
		"$BENCH_DIR/lib-import.json" | awk '
		{
			printf "| %dk-%dk | %d | %.2f | %.0f | %.0f |\n", $1 / 1000, ($1 + 100000) / 1000, $2, $3, $4, $5
			if (NR == 1) { fb = $4; fw = $5; fl = $1 }
			lb = $4; lw = $5; ll = $1; n = NR
		}
		END {
			if (n > 1 && fb > 0 && fw > 0)
				printf "\nLast bucket (%dk-%dk) over first (%dk-%dk): %.2fx (busy), %.2fx (wall); target: no slower (1x or more).\n",
					ll / 1000, (ll + 100000) / 1000, fl / 1000, (fl + 100000) / 1000, lb / fb, lw / fw
		}'
	rescan_read=$(jq .bytes_read "$BENCH_DIR/lib-rescan.json")
	quick_read=$(jq .bytes_read "$BENCH_DIR/lib-quick.json")
	: "${rescan_read:=unknown}" "${quick_read:=unknown}"
	awk -v rb="$rescan_read" -v qb="$quick_read" '
		$1 == "lib" && $3 == "photoidx_rescan" { p = $4; pr = $5 }
		$1 == "lib" && $3 == "photoidx_quick" { q = $4; qr = $5 }
		$1 == "lib" && $3 == "find_stat" { f = $4 }
		function ratio(a, b) { return b > 0 ? sprintf("%.2fx", a / b) : "-" }
		END {
			if (p == "") exit
			printf "\nUnchanged rescan of the library, warm: `find -printf` of the same stat fields %.2f s; photoidx %.2f s (%s, target: 1.5x at most), peak RSS %.0f MB, %s bytes of file data read (target: 0); `scan --quick` %.2f s (%s, target: below 1x), peak RSS %.0f MB, %s bytes read.\n",
				f, p, ratio(p, f), pr / 1024, rb, q, ratio(q, f), qr / 1024, qb
		}' "$RESULTS"
}

# Reading the 500k-file catalog: photoidx's commands against sqlite3.
query_report() {
	awk '$1 == "lib" && $3 ~ /^q_/ { split($3, a, "_"); t[a[2], a[3]] = $4; r[a[2], a[3]] = $5; k[a[3]] = 1 }
		END {
			n = split("ls dups stats csv", order, " ")
			for (i = 1; i <= n; i++) if (order[i] in k) any = 1
			if (!any) exit
			printf "\nReading the catalog of the library (warm, median seconds). sqlite3 runs the same query over the same view: for ls every column sorted by date, for dups the duplicates view, for stats one GROUP BY of the three keys, for export every column:\n\n"
			printf "| command | photoidx | sqlite3 | ratio | photoidx peak RSS |\n| --- | --- | --- | --- | --- |\n"
			for (i = 1; i <= n; i++) {
				c = order[i]
				if (!(c in k)) continue
				name = c == "csv" ? "export --format csv" : c
				printf "| `%s` | %.2f | %.2f | %s | %.0f MB |\n", name, t["photoidx", c], t["sqlite3", c],
					(t["sqlite3", c] > 0 ? sprintf("%.2fx", t["photoidx", c] / t["sqlite3", c]) : "-"), r["photoidx", c] / 1024
			}
		}' "$RESULTS"
}

# The time to a list of duplicates, photoidx against rmlint, jdupes and
# fclones, fresh and with the tree in the catalog, and whether they agree.
dups_report() {
	echo
	echo "Duplicates: the time to a list of duplicate groups (median of $RUNS runs, seconds)."
	echo "Fresh tree: photoidx scans it into a new catalog (reading and hashing every file,"
	echo "with its metadata) then runs \`dups\`; rmlint (\`-T df --no-backup -o fdupes:FILE\`), \`jdupes -r\`"
	echo "and \`fclones group\` compare sizes, then partial hashes, then whole files."
	echo "In catalog: the tree was scanned before; photoidx's unchanged rescan plus \`dups\`,"
	echo "and \`dups\` alone, against the same peers, which read the tree again."
	echo "Ratios are photoidx's time over the fastest peer's: below 1 photoidx is faster."
	echo
	echo "| corpus | tree | cache | photoidx scan + dups | photoidx dups | rmlint | jdupes | fclones | fastest peer | scan + dups vs fastest | dups vs fastest | peak RSS: photoidx, rmlint, jdupes, fclones |"
	echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"
	for c in $CORPORA; do
		case " $DUPS_CORPORA " in *" $c "*) ;; *) continue ;; esac
		awk -v c="$c" -v files="$(find "$BENCH_DIR/$c" -type f | wc -l)" '
			$1 == c && $3 ~ /^dup[fc]_/ { split($3, a, "_"); w = a[1]; k[w] = $2; t[w, substr($3, 6)] = $4; r[w, substr($3, 6)] = $5 }
			function f(x) { return x == "" ? "-" : sprintf("%.2f", x) }
			function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2fx", a / b) }
			function mb(x) { return x == "" ? "-" : sprintf("%.0f", x / 1024) }
			function row(w, label,   p, best, name, n, i, pr) {
				if (!(w in k)) return
				n = split("rmlint jdupes fclones", p, " ")
				for (i = 1; i <= n; i++)
					if (t[w, p[i]] != "" && (best == "" || t[w, p[i]] + 0 < best + 0)) { best = t[w, p[i]]; name = p[i] }
				pr = r[w, "photoidx"] + 0 > r[w, "photoidx_scan"] + 0 ? r[w, "photoidx"] : r[w, "photoidx_scan"]
				printf "| %s (%d files) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s, %s, %s, %s MB |\n", c, files, label, k[w],
					f(t[w, "photoidx_scan"]), f(t[w, "photoidx"]), f(t[w, "rmlint"]), f(t[w, "jdupes"]), f(t[w, "fclones"]),
					(name == "" ? "-" : name), ratio(t[w, "photoidx_scan"], best), ratio(t[w, "photoidx"], best),
					mb(pr), mb(r[w, "rmlint"]), mb(r[w, "jdupes"]), mb(r[w, "fclones"])
			}
			END { row("dupf", "fresh"); row("dupc", "in catalog") }' "$RESULTS"
	done
	echo
	# what each found: groups and removable files (all but one a group)
	awk '$2 == "reference" { ref[$1] = $3 " " $4; order[++n] = $1; next }
		{ sub(/^fresh-/, "fresh ", $2); sub(/^cat-/, "in catalog ", $2); sub(/_scan$/, " scan + dups", $2)
		  nl[$1]++; if ($3 " " $4 != ref[$1]) { odd[$1] = odd[$1] sprintf("; %s: %s groups, %s removable", $2, $3, $4) } }
		END {
			for (i = 1; i <= n; i++) {
				c = order[i]
				split(ref[c], a, " ")
				printf "Found in %s: %d groups of duplicates, %d removable files (all but one of each group) in photoidx'"'"'s catalog", c, a[1], a[2]
				if (odd[c] == "") printf "; the same in each of the %d lists of the runs above (each tool'"'"'s, fresh and in catalog).\n", nl[c]
				else printf "; DIFFERENT%s.\n", odd[c]
			}
		}' "$BENCH_DIR/dups-counts.txt"
	if [ -f "$BENCH_DIR/dups-notes.txt" ]; then
		echo
		cat "$BENCH_DIR/dups-notes.txt"
	fi
	grep -q WARNING "$BENCH_DIR/dups-notes.txt" 2>/dev/null ||
		echo "All the tools found the same groups and removable files."
}

# A bar chart of the seconds of each tool, per corpus and cache state.
chart() {
	awk '$3 ~ /^(photoidx|md5sum|hashdeep|exiftool|read_limit)$/ { t[$1 " " $2, $3] = $4; rows[$1 " " $2] = 1 }
		END {
			printf "case photoidx read_limit md5sum hashdeep exiftool\n"
			n = split("card warm,card cold,seq warm,seq cold,big warm,big cold,lib warm", order, ",")
			for (i = 1; i <= n; i++) {
				k = order[i]
				if (!(k in rows)) continue
				printf "\"%s\"", k
				m = split("photoidx read_limit md5sum hashdeep exiftool", tools, " ")
				for (j = 1; j <= m; j++) printf " %s", ((k, tools[j]) in t) ? t[k, tools[j]] : "NaN"
				printf "\n"
			}
		}' "$RESULTS" >"$BENCH_DIR/chart.dat"
	gnuplot <<-GP
	set terminal png size 900,420 font ",10" noenhanced
	set output "$BENCH_DIR/bench.png"
	set title "make bench: seconds (lower is better), $NPROC cores"
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.8 border -1
	set key top left
	set ylabel "seconds"
	set yrange [0:*]
	plot for [col=2:6] "$BENCH_DIR/chart.dat" using col:xtic(1) title columnheader
	GP
}
report >"$BENCH_DIR/report.md"
summary >"$BENCH_DIR/summary.md"
cat "$BENCH_DIR/report.md"
if [ "$NO_PUBLISH" = 1 ]; then
	log "BENCH_NO_PUBLISH=1: README.md, doc/bench.md and doc/bench.png left as they were"
	exit 0
fi
chart && cp "$BENCH_DIR/bench.png" "$REPO/doc/bench.png"
cp "$BENCH_DIR/report.md" "$REPO/doc/bench.md.tmp" && mv "$REPO/doc/bench.md.tmp" "$REPO/doc/bench.md"
# the README: the targets only, and the link to the rest
awk -v summary="$BENCH_DIR/summary.md" '
	/^<!-- bench -->$/ {
		print
		while ((getline line < summary) > 0)
			print line
		skip = 1
		next
	}
	/^<!-- \/bench -->$/ { skip = 0 }
	!skip { print }' "$REPO/README.md" >"$REPO/README.md.tmp" && mv "$REPO/README.md.tmp" "$REPO/README.md"
