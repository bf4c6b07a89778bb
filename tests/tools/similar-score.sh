#!/bin/sh
# similar-score.sh CORPUS_DIR [GROUPS_FILE]: how well groups of similar
# images match tests/tools/similar-corpus.sh's corpus.  GROUPS_FILE
# (default: stdin) holds one group a line, its paths separated by
# spaces (findimagedupes' output; photoidx's with
# jq -r '.groups[] | [.files[].path] | join(" ")').  Prints
#
#   FOUND TOTAL FALSE MISSED
#
# FOUND: variant pairs (a photo and one of its variants) in one group,
# of TOTAL, the variants in CORPUS_DIR; FALSE: pairs of files of two
# different photos in one group; MISSED: the variants not found, as
# NAME__VARIANT, comma-separated ("-" for none).
set -eu
dir=$1
groups=${2:-}
if [ -z "$groups" ]; then
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	cat >"$tmp"
	groups=$tmp
fi
ls "$dir" | awk -v groups="$groups" '
	function photo(p,   b) { b = p; sub(/.*\//, "", b); if (b ~ /__/) sub(/__.*/, "", b); else sub(/\.[^.]*$/, "", b); return b }
	function variant(p,   b) { b = p; sub(/.*\//, "", b); if (b !~ /__/) return ""; sub(/.*__/, "", b); sub(/\..*$/, "", b); return b }
	/__/ { want[photo($0) "__" variant($0)] = 1; total++ }
	END {
		while ((getline line < groups) > 0) {
			n = split(line, f, " ")
			for (i = 1; i <= n; i++)
				for (j = i + 1; j <= n; j++) {
					pi = photo(f[i]); pj = photo(f[j])
					if (pi != pj) { bad++; continue }
					vi = variant(f[i]); vj = variant(f[j])
					if (vi == "" && vj != "") found[pi "__" vj] = 1
					if (vj == "" && vi != "") found[pj "__" vi] = 1
				}
		}
		nf = 0; missed = ""
		for (k in want) if (k in found) nf++; else missed = missed (missed == "" ? "" : ",") k
		printf "%d %d %d %s\n", nf, total, bad + 0, missed == "" ? "-" : missed
	}'
