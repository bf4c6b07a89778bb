#!/bin/sh
# fuzz/run.sh: runs each fuzz target named in turn for $FUZZ_SECONDS, at
# the lowest CPU priority, one process at a time, and prints one line per
# target: executions, seconds, coverage (edges "cov" and features "ft" as
# libFuzzer counts them) and CLEAN, or the input that crashed, hung or
# leaked.  Each line is also appended to build-fuzz/results.tsv.
#
# Corpora grow across runs in build-fuzz/corpus/TARGET/ (seeded from
# build-fuzz/seeds/TARGET/, see seeds.sh); crashing inputs are written to
# build-fuzz/crashes/TARGET/; libFuzzer's output to build-fuzz/logs/.
# Usage: sh fuzz/run.sh TARGET...   (run by `make fuzz`)
# Exit status 1 when a target did not run clean.
#
# A target stops at its first crash, unless FUZZ_KEEP_GOING=1: then
# libFuzzer runs its jobs in a child process (-fork=1, still one at a
# time), saves every crash, hang and out-of-memory input and goes on for
# the whole time (for a target with a known bug awaiting its fix).
set -u

build=${FUZZ_BUILD:-build-fuzz}
secs=${FUZZ_SECONDS:-60}
results=$build/results.tsv

# Inputs longer than this are cut: enough for a file's metadata structure
# (a JPEG's EXIF segment is at most 64 KiB), small enough to run fast.
max_len() {
	case $1 in
	xmp | mrw | raf | crw | x3f) echo 16384 ;;
	*) echo 65536 ;;
	esac
}

mkdir -p "$build/logs"
# the whole parser sees every format: every dictionary
cat fuzz/dict/*.dict > "$build/meta.dict"

status=0
printf '%-6s %11s %8s %7s %7s  %s\n' target runs seconds cov ft result
for t in "$@"; do
	corpus=$build/corpus/$t
	crashes=$build/crashes/$t
	log=$build/logs/$t.log
	dict=fuzz/dict/$t.dict
	[ "$t" = meta ] && dict=$build/meta.dict
	case $t in thumbjpeg) dict=fuzz/dict/jpeg.dict ;; thumbpng) dict=fuzz/dict/png.dict ;;
		thumbwebp) dict=fuzz/dict/riff.dict ;; thumbheif) dict=fuzz/dict/bmff.dict ;; thumbraw) dict=fuzz/dict/tiff.dict ;; esac
	mkdir -p "$corpus" "$crashes" "$build/seeds/$t"
	keep=""
	[ "${FUZZ_KEEP_GOING:-0}" = 1 ] && keep="-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1"
	touch "$log.start"
	start=$(date +%s)
	# shellcheck disable=SC2086 # $keep is words
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_string_checks=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		nice -n 19 "$build/fuzz-$t" $keep -max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=10 \
		-rss_limit_mb=2048 -dict="$dict" -artifact_prefix="$crashes/" -print_final_stats=1 \
		"$corpus" "$build/seeds/$t" >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	if [ -z "$runs" ]; then
		# no final stats after a crash: the last status line's count
		runs=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
	fi
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' "$log" | tail -n 1)
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' "$log" | tail -n 1)
	# the inputs saved by this run
	new=$(find "$crashes" -type f -newer "$log.start" | sort | tr '\n' ' ')
	rm -f "$log.start"
	if [ "$rc" -eq 0 ] && [ -z "$new" ]; then
		result=CLEAN
	else
		result="FAILED (status $rc) ${new:-no input saved}; log $log"
		status=1
	fi
	printf '%-6s %11s %8s %7s %7s  %s\n' "$t" "${runs:-?}" "$took" "${cov:-?}" "${ft:-?}" "$result"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$t" "$took" "${runs:-?}" \
		"${cov:-?}" "${ft:-?}" "$result" >>"$results"
done
exit $status
