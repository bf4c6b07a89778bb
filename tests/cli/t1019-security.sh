#!/bin/sh
# What a hostile library or command line cannot make photoidx do: run SQL
# (names and filter values are bound parameters, never SQL text), open a
# path it read inside a file (an XMP reference, an EXIF string, a symbolic
# link out of the tree), or write outside an export's directory through a
# symbolic link planted there.
. "$(dirname "$0")/lib.sh"

CANARY="$TRASH/outside/canary.jpg"

# the catalog's tables, to count: TABLES where TABLE_NAME in (...)
if backend_is sqlite; then
	TABLES="select count(*) from sqlite_master" TABLE_NAME="type = 'table' and name"
else
	TABLES="select count(*) from information_schema.tables" TABLE_NAME="table_schema = current_schema() and table_name"
fi

test_expect_success 'setup: files whose names are SQL, whose contents name a path outside the tree' '
	mkdir -p lib outside &&
	mkfix jpeg "$CANARY" --make Canary &&
	mkfix jpeg "lib/'\''); DROP TABLE files;--.jpg" --make "Robert'\''); DROP TABLE meta;--" --date "2024:01:01 00:00:00" &&
	mkfix jpeg "lib/x\" OR 1=1 --.jpg" --model "%'\'' OR '\''1'\''='\''1" &&
	mkfix jpeg lib/refs.jpg --make "$CANARY" --model "../outside/canary.jpg" --lens "file://$CANARY" &&
	cat >lib/refs.xmp <<-EOF &&
	<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
	<rdf:Description xmlns:xmpMM="http://ns.adobe.com/xap/1.0/mm/" xmlns:stRef="http://ns.adobe.com/xap/1.0/sType/ResourceRef#"
	  xmlns:crs="http://ns.adobe.com/camera-raw-settings/1.0/" xmpMM:DerivedFrom="$CANARY"
	  stRef:filePath="$CANARY" crs:RawFileName="../outside/canary.jpg"/>
	</rdf:RDF></x:xmpmeta>
	EOF
	ln -s "$CANARY" lib/link-out.jpg &&
	ln -s ../outside lib/dir-out &&
	age lib outside
'

test_expect_success 'names that are SQL are just names; the tables are all there' '
	px scan --db "$DB" -q lib &&
	test "$(q "select count(*) from files where name like '\''%DROP TABLE files%'\''")" = 1 &&
	test "$(q "select make from file_info where name like '\''%DROP TABLE files%'\''")" = "Robert'\''); DROP TABLE meta;--" &&
	sound &&
	test "$(q "$TABLES where $TABLE_NAME in ('\''files'\'', '\''meta'\'', '\''dirs'\'', '\''changes'\'', '\''scans'\'', '\''roots'\'')")" = 6
'

test_expect_success 'filter values that are SQL match nothing and change nothing' '
	q "select count(*) from files" >before &&
	for v in "'\'' OR 1=1 --" "x'\''); DROP TABLE files;--" "_'\'' OR '\''a'\''='\''a" "\" OR \"\"=\""; do
		px ls --db "$DB" --make "$v" >out && test ! -s out &&
		px stats --db "$DB" --json --model "$v" | jq -e ".files == 0" >/dev/null &&
		px dups --db "$DB" --json --make "$v" | jq -e ".n_groups == 0" >/dev/null &&
		px export --db "$DB" --format jsonl --make "$v" >out && test ! -s out || exit 1
	done &&
	test "$(px ls --db "$DB" --make "Robert'\''); DROP TABLE meta;--" | wc -l)" = 1 &&
	test "$(px ls --db "$DB" --model "%'\'' OR '\''1'\''='\''1" | wc -l)" = 1 &&
	q "select count(*) from files" | diff before - &&
	sound
'

# (PIX_IO=threads: strace does not see the opens io_uring makes, so a run
# traced to prove what was not opened reads with blocking system calls)
test_expect_success 'no path read inside a file, and no symbolic link out of the tree, is ever opened' '
	if ! command -v strace >/dev/null; then echo "strace is not installed"; exit 1; fi
	catalog_rm "$DB" &&
	strace -f -qq -e trace=open,openat,openat2,creat,stat,lstat,newfstatat,statx,access,faccessat,faccessat2,readlink,readlinkat,execve \
		-o trace.txt env ASAN_OPTIONS=detect_leaks=0 PIX_IO=threads "$PHOTOIDX" scan --db "$DB" -q lib &&
	test "$(grep -c "lib/refs.jpg" trace.txt)" -ge 1 &&
	! grep -n "outside" trace.txt &&
	test "$(q "select count(*) from file_info where name = '\''refs.jpg'\'' and make = '\''$CANARY'\''")" = 1 &&
	test "$(q "select media from file_info where name = '\''link-out.jpg'\''")" != image
'

# (a relative name: an attribute under a sysfs directory libblkid opened,
# such as dm/uuid when it probes a mounted loop or dm device for its UUID)
test_expect_success 'every file photoidx opens during a scan is in the tree, the catalog, or the system' '
	sed -n "s/.*open[a-z0-9]*([^\"]*\"\\([^\"]*\\)\".*/\\1/p" trace.txt | sort -u >opened &&
	test -s opened &&
	# on PostgreSQL the trace has the harness too (pg-catalogs.sh and what
	# it reads and runs, before it execs photoidx)
	if backend_is pg; then harness="^$REPO/tests/"; else harness="^$TRASH/lib"; fi &&
	! grep -v -e "$harness" -e "^$TRASH/lib" -e "^$TRASH/catalog.db" -e "^$TRASH/lib/" -e "^/etc/" -e "^/usr/" -e "^/lib" \
		-e "^/proc/" -e "^/sys/" -e "^/dev/" -e "^/tmp/photoidx-" -e "^[a-z.]*$" \
		-e "^[a-z_]*/[a-z_]*$" opened
'

test_expect_success 'export --kphotoalbum --force writes in its directory, not through symbolic links planted there' '
	px scan --db "$DB" -q lib &&
	echo "keep me" >outside/victim.xml && echo "keep me too" >outside/victim.db && echo "and me" >outside/victim.bak &&
	echo "<KPhotoAlbum/>" >lib/real-index.xml &&
	ln -s "$TRASH/outside/victim.xml" lib/index.xml &&
	ln -s "$TRASH/outside/victim.bak" lib/index.xml~ &&
	ln -s "$TRASH/outside/victim.db" lib/exif-info.db &&
	px export --db "$DB" --kphotoalbum lib --force 2>err; rc=$?
	cat err && test $rc -le 1 &&
	test "$(cat outside/victim.xml)" = "keep me" &&
	test "$(cat outside/victim.db)" = "keep me too" &&
	test "$(cat outside/victim.bak)" = "and me" &&
	test ! -L lib/index.xml && test ! -L lib/exif-info.db &&
	grep -q "<KPhotoAlbum" lib/index.xml &&
	test "$(ls -A outside | sort | tr "\n" " ")" = "canary.jpg victim.bak victim.db victim.xml "
'

test_expect_success 'export -o through a temporary file: nothing left beside it, the target replaced whole' '
	echo old >out.csv &&
	px export --db "$DB" --format csv -o out.csv &&
	head -n 1 out.csv | grep -q "^id,path," &&
	test "$(ls -A | grep -c "^\.out\.csv\.")" = 0
'

test_done
