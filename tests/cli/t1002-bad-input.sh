#!/bin/sh
# Bad input is normal input: each broken, unreadable, special, vanishing or
# growing file is named on stderr, recorded with what went wrong, and every
# other file is still indexed; the scan exits 1 and never hangs.
. "$(dirname "$0")/lib.sh"

# as_nobody CMD...: runs CMD as user nobody (root bypasses permissions).
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}
can_drop_root() {
	[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && as_nobody true 2>/dev/null
}

q_van() {
	qdb van.db "$@"
}

state_of() {
	q "select state from file_info where name = '$1'"
}

test_expect_success 'setup: good files beside the bad ones' '
	mkdir -p lib/good &&
	for i in 1 2 3; do mkfix jpeg lib/good/ok$i.jpg --seed $i --make Canon; done &&
	age lib
'

test_expect_success 'a truncated JPEG: error recorded with its MD5, others indexed, exit 1' '
	mkfix jpeg lib/trunc.jpg --size 20000 --make Canon --truncate 15000 && age lib/trunc.jpg &&
	test_expect_code 1 px scan --db "$DB" -q lib 2>err &&
	test "$(grep -c "trunc.jpg" err)" = 1 &&
	grep -q "damaged .*/lib/trunc.jpg.: truncated JPEG" err &&
	test "$(state_of trunc.jpg)" = error &&
	q "select error from file_info where name = '\''trunc.jpg'\''" | grep -q "truncated JPEG" &&
	test "$(q "select md5 from file_info where name = '\''trunc.jpg'\''")" = "$(md5sum <lib/trunc.jpg | cut -c1-32)" &&
	test "$(q "select make from file_info where name = '\''trunc.jpg'\''")" = Canon &&
	test "$(q "select count(*) from file_info where name like '\''ok%'\'' and state = '\''ok'\''")" = 3
'

test_expect_success 'JPEGs cut at every 512 bytes: all indexed, no crash' '
	mkdir -p cuts && mkfix jpeg cuts/full.jpg --size 8000 --thumbnail --make Canon &&
	size=$(stat -c %s cuts/full.jpg) && n=512 &&
	while [ $n -lt $size ]; do mkfix jpeg cuts/cut$n.jpg --size 8000 --thumbnail --make Canon --truncate $n; n=$((n + 512)); done &&
	age cuts &&
	test_expect_code 1 px scan --db cuts.db -q cuts 2>err &&
	total=$(ls cuts | wc -l) &&
	test "$(qdb cuts.db "select count(*) from files where md5 is not null")" = "$total" &&
	test "$(qdb cuts.db "select count(*) from files where state = '\''error'\''")" = $((total - 1)) &&
	test "$(qdb cuts.db "select state from files where name = '\''full.jpg'\''")" = ok
'

test_expect_success 'corrupt EXIF (IFD0 offset out of range): error, MD5 kept' '
	mkfix jpeg lib/badexif.jpg --make Canon && age lib/badexif.jpg &&
	off=$(grep -obUa "Exif" lib/badexif.jpg | head -1 | cut -d: -f1) &&
	printf "\377\377\377\000" | dd of=lib/badexif.jpg bs=1 seek=$((off + 6 + 4)) conv=notrunc 2>/dev/null &&
	age lib/badexif.jpg &&
	test_expect_code 1 px scan --db "$DB" -q lib 2>err &&
	grep -q "badexif.jpg.: corrupt EXIF: bad IFD0 directory" err &&
	test "$(state_of badexif.jpg)" = error &&
	test "$(q "select md5 from file_info where name = '\''badexif.jpg'\''")" = "$(md5sum <lib/badexif.jpg | cut -c1-32)"
'

test_expect_success 'an unchanged damaged file is not reported again' '
	px scan --db "$DB" -q lib 2>err &&
	test ! -s err
'

test_expect_success 'a FIFO, a socket and a device node are recorded, never opened' '
	mkfifo lib/pipe &&
	perl -MSocket -e "socket(S, PF_UNIX, SOCK_STREAM, 0) or die; bind(S, sockaddr_un(\"lib/sock\")) or die" &&
	{ mknod lib/null c 1 3 2>/dev/null || true; } &&
	test_expect_code 1 timeout 60 "$PHOTOIDX" scan --db "$DB" -q lib 2>err &&
	grep -q "not reading .*/lib/pipe.: it is a FIFO" err &&
	test "$(q "select state || '\'': '\'' || error from file_info where name = '\''pipe'\''")" = "error: not read: it is a FIFO" &&
	test "$(q "select error from file_info where name = '\''sock'\''")" = "not read: it is a socket" &&
	if [ -c lib/null ]; then test "$(q "select error from file_info where name = '\''null'\''")" = "not read: it is a character device"; fi &&
	test "$(q "select count(*) from file_info where name like '\''ok%'\'' and state = '\''ok'\''")" = 3
'

test_expect_success 'symlink loops and dangling links: not followed, not errors' '
	mkdir -p links/sub && mkfix jpeg links/sub/real.jpg && age links &&
	ln -s loop links/loop && ln -s .. links/sub/up && ln -s ../sub links/sub/self && ln -s nowhere links/dangling &&
	timeout 60 "$PHOTOIDX" scan --db links.db --json links >s.json &&
	test "$(jq .new s.json)" = 1 && test "$(jq .skipped s.json)" = 4 && test "$(jq .exit_status s.json)" = 0
'

test_expect_success 'names with a newline, a tab and invalid UTF-8 are stored byte-exact' '
	mkdir -p names &&
	mkfix jpeg "names/new
line.jpg" && mkfix jpeg "names/tab	bed.jpg" && mkfix jpeg "$(printf "names/bad\377name.jpg")" &&
	mkfix jpeg "names/'\''); DROP TABLE files;--.jpg" &&
	age names &&
	px scan --db names.db -q names &&
	test "$(qdb names.db "select count(*) from files")" = 4 &&
	test "$(qdb names.db "select hex(name) from files where hex(name) like '\''%0A%'\''")" = "$(printf "new\nline.jpg" | od -An -tx1 | tr -d " \n" | tr a-f A-F)" &&
	test "$(qdb names.db "select hex(name) from files where hex(name) like '\''%FF%'\''")" = "$(printf "bad\377name.jpg" | od -An -tx1 | tr -d " \n" | tr a-f A-F)" &&
	test "$(qdb names.db "select hex(name) from files where name like '\''tab%'\''")" = "$(printf "tab\tbed.jpg" | od -An -tx1 | tr -d " \n" | tr a-f A-F)" &&
	if backend_is sqlite; then
		test "$(qdb names.db "select typeof(name) from files where hex(name) like '\''%FF%'\''")" = blob &&
		test "$(qdb names.db "select typeof(path) from file_info where hex(name) like '\''%FF%'\''")" = blob &&
		test "$(qdb names.db "select typeof(path) from file_info where name like '\''tab%'\''")" = text &&
		sound names.db
	fi &&
	# the row found by the bytes of its name in the table (the view of
	# PostgreSQL shows such a name escaped, as ls does)
	test "$(qdb names.db "select case when hex(i.path) = hex(i.dir) || '\''2F'\'' || hex(i.name) then 1 else 0 end
	                      from file_info i join files f on f.id = i.id where hex(f.name) like '\''%FF%'\''")" = 1 &&
	qdb names.db "select hex(name) from files" | unhex | grep -q "DROP TABLE files"
'

test_expect_success 'a bad name in a message is escaped on one line' '
	mkfix jpeg "names/cut
name.jpg" --size 5000 --truncate 3000 && age names &&
	test_expect_code 1 px scan --db names.db -q names 2>err &&
	test "$(wc -l <err)" = 1 &&
	grep -q "cut\\\\nname.jpg" err &&
	mkfix jpeg "$(printf "names/cut\377.jpg")" --size 5000 --truncate 3000 && age names &&
	test_expect_code 1 px scan --db names.db -q names 2>err &&
	grep -q "cut\\\\xff.jpg" err
'

test_expect_success 'an empty file is indexed with the MD5 of nothing' '
	: >lib/empty.bin && age lib/empty.bin &&
	px scan --db "$DB" -q lib 2>/dev/null; true &&
	test "$(q "select state || md5 from file_info where name = '\''empty.bin'\''")" = okd41d8cd98f00b204e9800998ecf8427e
'

test_expect_success 'unreadable file: named, recorded without MD5, read again once readable' '
	if ! can_drop_root; then echo "needs root and setpriv to run as nobody: not checked"; exit 0; fi
	mkdir -p priv/d && for i in 1 2; do mkfix jpeg priv/d/p$i.jpg --seed $i; done &&
	mkfix jpeg priv/d/secret.jpg --seed 7 && chmod 000 priv/d/secret.jpg && age priv &&
	chown -R 65534:65534 priv && mkdir -p pdb && chown 65534:65534 pdb &&
	catalog_uri pdb/cat.db >/dev/null &&
	test_expect_code 1 as_nobody "$PHOTOIDX" scan --db pdb/cat.db -q priv 2>err &&
	grep -q "cannot index .*/priv/d/secret.jpg.: cannot open: Permission denied" err &&
	test "$(qdb pdb/cat.db "select state || '\''|'\'' || coalesce(md5, '\''null'\'') from file_info where name = '\''secret.jpg'\''")" = "error|null" &&
	test "$(qdb pdb/cat.db "select count(*) from file_info where state = '\''ok'\''")" = 2 &&
	chmod 644 priv/d/secret.jpg &&
	as_nobody "$PHOTOIDX" scan --db pdb/cat.db -q priv &&
	test "$(qdb pdb/cat.db "select state || '\''|'\'' || md5 from file_info where name = '\''secret.jpg'\''")" = "ok|$(md5sum <priv/d/secret.jpg | cut -c1-32)"
'

test_expect_success 'unreadable directory: named, its files are not marked missing' '
	if ! can_drop_root; then echo "needs root and setpriv to run as nobody: not checked"; exit 0; fi
	chmod 000 priv/d &&
	test_expect_code 1 as_nobody "$PHOTOIDX" scan --db pdb/cat.db -q priv 2>err &&
	grep -q "cannot open directory .*/priv/d.: Permission denied" err &&
	test "$(qdb pdb/cat.db "select count(*) from file_info where state = '\''missing'\''")" = 0 &&
	test "$(qdb pdb/cat.db "select state || '\''|'\'' || error from dirs where path like '\''%/priv/d'\''")" = "error|cannot open directory: Permission denied" &&
	chmod 755 priv/d
'

# wait_open PID NAME: until process PID has a file NAME open (20 s at most)
wait_open() {
	i=0 && until ls -l /proc/$1/fd 2>/dev/null | grep -q "$2" || [ $i -gt 1000 ]; do sleep 0.02; i=$((i + 1)); done
}

# The files that vanish are in van/sub: plan queues a directory's files
# before its subdirectories', so with one reader they are read after a.bin.
# PIX_IO=threads: one open at a time, in that order (io_uring opens a
# reader's whole batch at once, so a file of the batch deleted later was
# open already, and is read: not vanished).
test_expect_success 'a new file that vanishes between walk and read: a notice, no row' '
	mkdir -p van/sub && dd if=/dev/urandom of=van/a.bin bs=1k count=1000 2>/dev/null &&
		echo b >van/sub/b.txt && age van
	PIX_IO=threads "$PHOTOIDX" scan --db van.db --readers 1 --limit-rate 1M van >out 2>err &
	pid=$!
	# once a.bin is open, plan has queued b.txt behind it
	wait_open $pid "van/a.bin"
	rm van/sub/b.txt &&
	set +e && wait $pid; rc=$? && set -e &&
	test $rc = 0 &&
	grep -q ".*/van/sub/b.txt. is gone since it was listed" err &&
	test "$(qdb van.db "select count(*) from file_info where name = '\''b.txt'\''")" = 0 &&
	test "$(qdb van.db "select state from file_info where name = '\''a.bin'\''")" = ok
'

test_expect_success 'a known file that vanishes before its re-read: missing, its MD5 and metadata kept' '
	mkfix jpeg van/sub/c.jpg --make Canon --date "2020:01:01 10:00:00" && age van/sub/c.jpg &&
	px scan --db van.db -q van &&
	md5=$(q_van "select md5 from file_info where name = '\''c.jpg'\''") &&
	touch van/sub/c.jpg van/a.bin
	PIX_IO=threads "$PHOTOIDX" scan --db van.db -q --readers 1 --limit-rate 1M van 2>err &
	pid=$!
	wait_open $pid "van/a.bin"
	rm van/sub/c.jpg &&
	set +e && wait $pid; rc=$? && set -e &&
	test $rc = 0 &&
	test "$(q_van "select state || '\''|'\'' || md5 || '\''|'\'' || make from file_info where name = '\''c.jpg'\''")" = "missing|$md5|Canon" &&
	test "$(q_van "select kind from changes where file_id = (select id from files where name = '\''c.jpg'\'') order by seq desc limit 1")" = missing
'

test_expect_success 'a file that grows while read is read again: the MD5 is of the final content' '
	mkdir -p grow && dd if=/dev/urandom of=grow/g.bin bs=1k count=1200 2>/dev/null && age grow
	( set +e; px scan --db grow.db -q --readers 1 --read-size 64K --limit-rate 2M grow 2>err; echo $? >rc ) &
	sleep 0.25 && echo appended >>grow/g.bin && wait &&
	test "$(cat rc)" = 0 &&
	test "$(qdb grow.db "select state || md5 from file_info where name = '\''g.bin'\''")" = "ok$(md5sum <grow/g.bin | cut -c1-32)" &&
	test "$(qdb grow.db "select size from file_info")" = "$(stat -c %s grow/g.bin)"
'

test_expect_success 'a file that keeps changing while read: an error, no MD5, named; read again next scan' '
	mkdir -p busy && dd if=/dev/urandom of=busy/b.bin bs=1k count=600 2>/dev/null && age busy
	( i=0; while [ $i -lt 60 ] && [ ! -e busy.done ]; do echo x >>busy/b.bin; sleep 0.1; i=$((i + 1)); done ) &
	writer=$!
	( set +e; px scan --db busy.db -q --readers 1 --read-size 64K --limit-rate 1M busy 2>err; echo $? >rc ) &&
	touch busy.done && wait $writer &&
	test "$(cat rc)" = 1 &&
	grep -q "b.bin.*changed while being read (3 tries)" err &&
	test "$(qdb busy.db "select state || '\''|'\'' || coalesce(md5, '\''null'\'') from file_info")" = "error|null" &&
	age busy && px scan --db busy.db -q busy &&
	test "$(qdb busy.db "select state || md5 from file_info")" = "ok$(md5sum <busy/b.bin | cut -c1-32)"
'

test_sqlite_only 'integrity_check is a PRAGMA of the SQLite file'
test_expect_success 'the catalogs stay sound' '
	sound &&
	sound names.db
'

test_done
