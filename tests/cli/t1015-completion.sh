#!/bin/sh
# contrib/bash-completion/photoidx: commands and options come from photoidx's
# --help, values and file names complete, in a bash without bash-completion
# and again, where it is installed, with it (its _init_completion and
# _filedir).  Each completion runs in a fresh non-interactive bash that
# sources the script, sets COMP_WORDS as bash does for the line (breaking
# "--type=vi" into "--type" "=" "vi") and calls _photoidx.
. "$(dirname "$0")/lib.sh"

SCRIPT="$REPO/contrib/bash-completion/photoidx"
BASH_COMPLETION=/usr/share/bash-completion/bash_completion

mkdir bin fake
ln -s "$PHOTOIDX" bin/photoidx

# bash comp.bash SCRIPT LINE...: completes each LINE in turn, the cursor at
# its end, and prints the last one's COMPREPLY, one word a line.  With
# COMP_BC=1, loads bash-completion first.
cat >comp.bash <<'EOF'
if [ "${COMP_BC:-0}" = 1 ]; then
	. /usr/share/bash-completion/bash_completion || exit 1
fi
. "$1" || exit 1
shift
for line in "$@"; do
	COMP_LINE=$line COMP_POINT=${#line}
	COMP_WORDS=()
	set -f
	for w in $line; do
		while [[ $w == *=* ]]; do
			[[ -n ${w%%=*} ]] && COMP_WORDS+=("${w%%=*}")
			COMP_WORDS+=("=")
			w=${w#*=}
		done
		[[ -n $w ]] && COMP_WORDS+=("$w")
	done
	set +f
	[[ $line == *' ' ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	cur=${COMP_WORDS[COMP_CWORD]}
	[[ $cur == = ]] && cur=
	COMPREPLY=()
	_photoidx "${COMP_WORDS[0]}" "$cur" "${COMP_WORDS[COMP_CWORD - 1]}" || :
done
printf '%s\n' "${COMPREPLY[@]}"
EOF

# expect_comp WANT LINE...: the last LINE completes to WANT (the words
# sorted, space-separated), and bash says nothing on stderr.  photoidx is
# the one in bin/, or with FAKE=1 the one in fake/.
expect_comp() {
	want=$1
	shift
	dir=bin
	[ "${FAKE:-0}" = 1 ] && dir=fake
	PATH="$TRASH/$dir:$PATH" COMP_BC=$mode bash "$TRASH/comp.bash" "$SCRIPT" "$@" \
		>"$TRASH/comp.out" 2>"$TRASH/comp.err" || return 1
	got=$(LC_ALL=C sort "$TRASH/comp.out" | paste -sd " " -)
	if [ -s "$TRASH/comp.err" ] || [ "$got" != "$want" ]; then
		for line; do :; done
		echo "completing '$line': want '$want', got '$got'" >&2
		cat "$TRASH/comp.err" >&2
		return 1
	fi
}

# A photoidx from the future: a new command, a new option with listed
# values, and a --device-class whose help lists none.
cat >fake/photoidx <<EOF
#!/bin/sh
echo "\$*" >>"$TRASH/fake.log"
case "\$*" in
--help) printf 'usage: photoidx [--version] [--help] [--color] COMMAND\n\ncommands:\n  ls     list\n  tag    a new command\n\nmore text\n' ;;
"ls --help") printf 'Usage:\n  ls [OPTION…] [PATH...] - list\n\nApplication Options:\n  --shiny=FINISH           gold, silver or bronze\n  -c, --device-class=CLASS the class\n  --json                   JSON\n\n' ;;
*) exit 64 ;;
esac
EOF
chmod +x fake/photoidx

test_expect_success 'setup: a library and a catalog to complete' '
	mkdir -p lib/2024 &&
	: >lib/catalog.db &&
	: >lib/a.jpg
'

cases() {
	mode=$1
	how=$2

	test_expect_success "sourcing the script prints nothing, runs nothing, and registers _photoidx ($how)" '
		: >fake.log &&
		PATH="$TRASH/fake:$PATH" COMP_BC=$mode bash -c "
			[ \"\$COMP_BC\" = 1 ] && . $BASH_COMPLETION
			. \"\$1\" && complete -p photoidx" sh "$SCRIPT" >out 2>&1 &&
		test "$(cat out)" = "complete -F _photoidx photoidx" &&
		! test -s fake.log
	'

	test_expect_success "the commands are those photoidx --help lists ($how)" '
		want=$(px --help | sed -n "/^commands:/,/^\$/s/^  \([a-z][-a-z]*\) .*/\1/p" | LC_ALL=C sort | paste -sd " " -) &&
		echo "$want" | grep -q "^changes dups export forget ls scan stats status verify volumes watch\$" &&
		expect_comp "$want" "photoidx " &&
		expect_comp "scan stats status" "photoidx s" &&
		expect_comp "--version" "photoidx --v"
	'

	test_expect_success "a command's options, not after -- ($how)" '
		expect_comp "--make" "photoidx ls --ma" &&
		expect_comp "--no-default-excludes" "photoidx scan --no-d" &&
		expect_comp "" "photoidx ls -- --ma" &&
		expect_comp "--quick --quiet" "photoidx scan --exclude -- --qu" &&
		expect_comp "" "photoidx nosuchcommand --"
	'

	test_expect_success "--type: the media types, after = or a space, the last of a comma list ($how)" '
		expect_comp "video" "photoidx ls --type=vi" &&
		expect_comp "video" "photoidx ls --type vi" &&
		expect_comp "video" "photoidx dups -t vi" &&
		expect_comp "image,raw" "photoidx ls --type image,r" &&
		expect_comp "image,raw,other image,raw,photo image,raw,sidecar image,raw,video" "photoidx stats --type=image,raw," &&
		expect_comp "image other photo raw sidecar video" "photoidx ls --type="
	'

	test_expect_success "--format, --sort and --device-class values ($how)" '
		expect_comp "csv jsonl" "photoidx export --format " &&
		expect_comp "csv jsonl" "photoidx export --format=" &&
		expect_comp "jsonl" "photoidx export -f j" &&
		expect_comp "date none path size" "photoidx ls --sort " &&
		expect_comp "path" "photoidx ls -s p" &&
		expect_comp "auto network rotational ssd virtual" "photoidx scan --device-class " &&
		expect_comp "" "photoidx ls --make "
	'

	test_expect_success "--db and -o complete files; --kphotoalbum and scan a directory ($how)" '
		expect_comp "lib/catalog.db" "photoidx scan --db lib/cat" &&
		expect_comp "lib/catalog.db" "photoidx ls --db=lib/cat" &&
		expect_comp "lib/catalog.db" "photoidx export -o lib/c" &&
		expect_comp "lib/2024" "photoidx export --kphotoalbum lib/" &&
		expect_comp "lib/2024" "photoidx scan lib/" &&
		expect_comp "lib/2024" "photoidx watch --json lib/" &&
		expect_comp "lib/2024 lib/a.jpg lib/catalog.db" "photoidx ls lib/" &&
		expect_comp "lib/2024 lib/a.jpg lib/catalog.db" "photoidx ls -- lib/" &&
		expect_comp "" "photoidx changes "
	'

	test_expect_success "a command or option new in --help completes at once, each --help read once ($how)" '
		: >fake.log &&
		FAKE=1 expect_comp "ls tag" "photoidx " &&
		FAKE=1 expect_comp "--color" "photoidx --c" &&
		FAKE=1 expect_comp "--shiny" "photoidx ls --sh" &&
		FAKE=1 expect_comp "bronze gold silver" "photoidx ls --shiny=" &&
		FAKE=1 expect_comp "hdd ssd" "photoidx ls --device-class " &&
		FAKE=1 expect_comp "ssd" "photoidx ls -c s" &&
		: >fake.log &&
		FAKE=1 expect_comp "ls" "photoidx ls --j" "photoidx ls --sh" "photoidx ls --shiny " "photoidx l" &&
		test "$(LC_ALL=C sort fake.log | paste -sd : -)" = "--help:ls --help"
	'
}

cases 0 "bash alone"
if [ -f "$BASH_COMPLETION" ]; then
	cases 1 "with bash-completion"
else
	test_skip "completion with bash-completion" "package bash-completion is not installed"
fi

test_done
