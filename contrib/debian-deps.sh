#!/bin/sh
# Installs what photoidx needs on Debian 12 (bookworm) and its derivatives,
# through apt, and nothing else.  Run as root or with sudo available.
#
#   sh contrib/debian-deps.sh          build and run photoidx
#   sh contrib/debian-deps.sh test     ... and run `make check`
#   sh contrib/debian-deps.sh bench    ... and run `make bench` (the peers)
#   sh contrib/debian-deps.sh fuzz     ... and run `make fuzz` (clang, libFuzzer)
#
# Packages already installed are not asked for again, so a second run is
# quick and needs no network.
set -eu

build="build-essential pkg-config libglib2.0-dev libsqlite3-dev libssl-dev libblkid-dev liburing-dev libpq-dev libjpeg62-turbo-dev libpng-dev libwebp-dev libheif-dev zlib1g-dev"
# the tests: exiftool for the samples' oracle, python3 for the structural
# comparison of index.xml, and the real KPhotoAlbum under Xvfb (its "don't
# ask again" settings are kept only with frameworkintegration), a NAS
# over sshfs from an sshd in a network namespace (tests/tools/nas.sh), and
# a PostgreSQL server for the shared catalog (tests/tools/pg.sh starts its
# own throwaway clusters; postgresql is postgresql-15 on bookworm), and
# GNOME's thumbnail factory (python3-gi, gir1.2-gnomedesktop-3.0) and
# ImageMagick to check the freedesktop.org thumbnails photoidx writes
test="$build sqlite3 jq strace inotify-tools util-linux perl valgrind bash-completion libxml2-utils e2fsprogs dosfstools fusefat hashdeep libimage-exiftool-perl python3 webp libheif-examples kphotoalbum xvfb xauth frameworkintegration sshfs openssh-server iproute2 postgresql python3-gi gir1.2-gnomedesktop-3.0 imagemagick"
# rmlint and jdupes are the duplicate finders `photoidx dups` is compared
# with; fclones, the third, is not packaged in Debian 12 (the bench runs it
# only where it is on PATH)
bench="$test hyperfine time gnuplot-nox rmlint jdupes libvips-tools imagemagick"
# libFuzzer (libclang_rt.fuzzer) and the sanitizers' runtimes live in
# libclang-rt-14-dev, which clang only recommends (and recommends are not
# installed here)
fuzz="$build clang libclang-rt-14-dev"
# dups --similar: ImageMagick makes the variants of its corpus (of
# kphotoalbum's demo photos) for the tests and the bench, and
# findimagedupes is the peer both compare with
similar="imagemagick findimagedupes"

case "${1:-build}" in
build) want=$build ;;
test) want="$test $similar" ;;
bench) want="$bench $similar" ;;
fuzz) want=$fuzz ;;
*) echo "usage: sh contrib/debian-deps.sh [build|test|bench|fuzz]" >&2; exit 64 ;;
esac

missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
echo "installing:$missing" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
