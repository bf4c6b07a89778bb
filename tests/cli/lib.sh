# lib.sh: sourced by every tests/cli/tNNNN-*.sh script.
#
# Gives each script a fresh temporary directory (its working directory),
# a private XDG_DATA_HOME and HOME, a catalog path $DB, and TAP output:
#
#   test_expect_success 'what it shows' '
#       commands; the test passes when the last one succeeds
#   '
#   test_done
#
# A test body runs in a subshell with `set -e`, but the shell ignores -e
# inside an && chain, so write a body as one && chain (setup that must not
# join a background job goes on its own line before it).  Quote SQL string
# literals with single quotes: "error" in double quotes is the column
# files.error, not a string.  Helpers: px (photoidx), q (SQL on $DB), mkfix (the fixture
# generator), test_must_fail, test_expect_code, age (set old mtimes), wait_for (poll SQL),
# require_samples (skip the script without ../shared/samples).
#
# Numbering follows git: t0xxx basics and usage, t1xxx indexing,
# t2xxx watch, t3xxx queries, t4xxx catalog checks and migrations.

set -u
TEST_NAME=$(basename "$0" .sh)
TEST_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$TEST_DIR/../.." && pwd)
: "${PHOTOIDX:=$REPO/photoidx}"
: "${MKFIXTURE:=$REPO/build/tests/mkfixture}"
: "${PIX_SAMPLES:=$REPO/../shared/samples}"
export PHOTOIDX MKFIXTURE PIX_SAMPLES

TRASH=$(mktemp -d "${TMPDIR:-/tmp}/photoidx-$TEST_NAME.XXXXXX")
chmod 755 "$TRASH"      # tests that drop root must reach it
cleanup() {
	chmod -R u+rwx "$TRASH" 2>/dev/null
	[ -n "${PIX_TEST_KEEP:-}" ] || rm -rf "$TRASH"
}
trap cleanup EXIT
cd "$TRASH" || exit 1
export XDG_DATA_HOME="$TRASH/xdg" HOME="$TRASH/home"
# the developer's own catalog and configuration stay out of the tests
unset PHOTOIDX_DB XDG_CONFIG_HOME
mkdir -p "$HOME"
DB="$TRASH/catalog.db"
export LC_ALL=C.UTF-8

test_count=0
test_failed=0

# photoidx itself (under valgrind with PIX_TEST_VALGRIND=1: valgrind's own
# messages go to $TRASH/.valgrind.PID, so the program's stderr is what the
# test sees; an error exits 99 and test_done prints the reports).
px() {
	if [ "${PIX_TEST_VALGRIND:-0}" = 1 ]; then
		valgrind -q --log-file="$TRASH/.valgrind.%p" --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite --suppressions="$REPO/tests/valgrind.supp" "$PHOTOIDX" "$@"
	else
		"$PHOTOIDX" "$@"
	fi
}

# SQL on the catalog, one value per line.
q() {
	sqlite3 -batch -bail "$DB" "$@"
}

mkfix() {
	"$MKFIXTURE" "$@"
}

# Sets the mtime of files (or trees) to two days ago, so that a scan does
# not flag them as possibly still being written (the recheck rule: mtime within two seconds of the read).
age() {
	find "$@" -exec touch -h -d '2 days ago' {} +
}

# wait_for SQL WANT: until SQL on $DB gives WANT (up to 30 s), for what
# a background process (a watch) writes.
wait_for() {
	i=0
	while [ $i -lt 300 ]; do
		[ "$(sqlite3 "$DB" "$1" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "waited 30 s for [$1] = $2, got $(sqlite3 "$DB" "$1" 2>&1)" >&2
	return 1
}

test_must_fail() {
	if "$@"; then
		echo "expected failure: $*" >&2
		return 1
	fi
	return 0
}

# test_expect_code N cmd...: cmd exits with status N.
test_expect_code() {
	want=$1
	shift
	set +e
	"$@"
	got=$?
	set -e
	if [ "$got" -ne "$want" ]; then
		echo "expected exit status $want, got $got: $*" >&2
		return 1
	fi
}

test_expect_success() {
	test_count=$((test_count + 1))
	out="$TRASH/.out.$test_count"
	(
		set -e
		eval "$2"
	) >"$out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "ok $test_count - $1"
	else
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$out" | tail -n 40
		test_failed=$((test_failed + 1))
	fi
	cd "$TRASH" || exit 1
}

test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

require_samples() {
	if [ ! -d "$PIX_SAMPLES" ]; then
		echo "1..0 # SKIP ../shared/samples is absent (the real camera samples are not part of the repository)"
		exit 0
	fi
}

# What valgrind said, but its notices of ioctls it has no wrapper for.
valgrind_said() {
	cat "$TRASH"/.valgrind.* 2>/dev/null | grep "^==[0-9]*==" |
		grep -v -e "noted but unhandled ioctl" -e "spurious value errors to appear" -e "README_MISSING_SYSCALL_OR_IOCTL"
}

test_done() {
	# valgrind's reports (its notices, such as an unhandled syscall, are
	# not errors: photoidx falls back from openat2 where it is missing)
	# nor is an ioctl it does not know, which libblkid's probe of a
	# volume's device issues)
	if [ "${PIX_TEST_VALGRIND:-0}" = 1 ] && valgrind_said | grep -q .; then
		echo "# valgrind reported:"
		valgrind_said | sed "s/^/#   /" | head -n 80
		test_failed=$((test_failed + 1))
	fi
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
	exit $?
}
