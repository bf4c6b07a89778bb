#!/bin/sh
# contrib/: the crontab line and the systemd units run what they say, with
# the README's install path (/usr/local/bin) pointed at this build, on a
# library in $HOME/Pictures and the default catalog.
. "$(dirname "$0")/lib.sh"

CRON="$REPO/contrib/photoidx.cron"
UNITS="$REPO/contrib/systemd"

test_expect_success 'setup: a library where the units expect it' '
	mkdir -p home/Pictures/2024 &&
	for i in 1 2 3; do mkfix jpeg home/Pictures/2024/img$i.jpg --seed $i; done &&
	age home/Pictures
'

# runs a command line the way cron or systemd would: HOME set, no
# XDG_DATA_HOME, the installed binary being this build
run_installed() {
	env -u XDG_DATA_HOME HOME="$TRASH/home" sh -c "$(echo "$1" | sed "s|/usr/local/bin/photoidx|$PHOTOIDX|g")"
}

test_sqlite_only 'the crontab line and the units use the default catalog, a SQLite file in $HOME/.local/share/photoidx'
test_expect_success 'the crontab line scans, then verifies, into the default catalog' '
	line=$(grep -v "^#" "$CRON" | grep -v "^[[:space:]]*$") &&
	test "$(echo "$line" | wc -l)" = 1 &&
	echo "$line" | grep -q "/usr/local/bin/photoidx scan" &&
	cmd=$(echo "$line" | awk "{ for (i = 6; i <= NF; i++) printf \"%s \", \$i }") &&
	run_installed "$cmd" &&
	db="$TRASH/home/.local/share/photoidx/catalog.db" &&
	test "$(sqlite3 "$db" "select group_concat(command || state) from scans")" = scandone,verifydone &&
	test "$(sqlite3 "$db" "select count(*) from files where verify_state = '\''ok'\''")" = 3
'

test_sqlite_only 'the crontab line and the units use the default catalog, a SQLite file in $HOME/.local/share/photoidx'
test_expect_success 'the systemd units: what the timer starts runs scan, then verify' '
	grep -q "^Unit=photoidx-verify.service" "$UNITS/photoidx-nightly.timer" &&
	grep -q "^After=photoidx-scan.service" "$UNITS/photoidx-verify.service" &&
	grep -q "^Wants=photoidx-scan.service" "$UNITS/photoidx-verify.service" &&
	rm -rf home/.local &&
	for u in photoidx-scan photoidx-verify; do
		f="$UNITS/$u.service" &&
		envs=$(sed -n "s/^Environment=//p" "$f" | sed "s|%h|$TRASH/home|g") &&
		exec=$(sed -n "s/^ExecStart=//p" "$f") &&
		run_installed "$envs; $exec" || exit 1
	done &&
	db="$TRASH/home/.local/share/photoidx/catalog.db" &&
	test "$(sqlite3 "$db" "select group_concat(command || state) from scans")" = scandone,verifydone
'

if command -v systemd-analyze >/dev/null; then
	test_expect_success 'systemd-analyze verify accepts the units' '
		mkdir -p units rt &&
		for f in "$UNITS"/*; do sed "s|/usr/local/bin/photoidx|$PHOTOIDX|" "$f" >units/$(basename "$f"); done &&
		XDG_RUNTIME_DIR="$TRASH/rt" systemd-analyze verify --man=no units/photoidx-scan.service \
			units/photoidx-verify.service units/photoidx-nightly.timer units/photoidx-watch.service 2>err &&
		! grep -v "^$" err
	'
else
	test_skip 'systemd-analyze verify accepts the units' 'systemd-analyze is not installed'
fi

test_sqlite_only 'the crontab line and the units use the default catalog, a SQLite file in $HOME/.local/share/photoidx'
test_expect_success 'the watch unit runs the watcher on the library, and SIGTERM (systemctl stop) ends it cleanly' '
	f="$UNITS/photoidx-watch.service"
	envs=$(sed -n "s/^Environment=//p" "$f" | sed "s|%h|$TRASH/home|g")
	exec=$(sed -n "s/^ExecStart=//p" "$f")
	rm -rf home/.local
	( set +e; run_installed "$envs; exec $exec"; echo $? >watch.rc ) &
	db="file:$TRASH/home/.local/share/photoidx/catalog.db?mode=ro" &&
	! grep -q "^SuccessExitStatus" "$f" &&
	i=0 && until [ "$(sqlite3 "$db" "select count(*) from scans where state = '\''running'\''" 2>/dev/null)" = 1 ] &&
		[ "$(sqlite3 "$db" "select count(*) from files" 2>/dev/null)" = 3 ] || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done &&
	sleep 0.5 && echo new >home/Pictures/2024/new.txt &&
	i=0 && until [ "$(sqlite3 "$db" "select count(*) from files" 2>/dev/null)" = 4 ] || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done &&
	echo "files: $(sqlite3 "$db" "select count(*) from files")" &&
	pkill -TERM -f "photoidx watch -q $TRASH/home/Pictures" &&
	i=0 && until [ -s watch.rc ] || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done &&
	test "$(cat watch.rc)" = 0 &&
	test "$(sqlite3 "$db" "select state || exit_status from scans where command = '\''watch'\''")" = done0 &&
	test "$(sqlite3 "$db" "select count(*) from files")" = 4
'

test_sqlite_only 'the crontab line and the units use the default catalog, a SQLite file in $HOME/.local/share/photoidx'
test_expect_success 'a night whose scan exits 1 (a damaged file) still verifies, in the crontab and the man page' '
	line=$(grep -v "^#" "$CRON" | grep -v "^[[:space:]]*$") &&
	cmd=$(echo "$line" | awk "{ for (i = 6; i <= NF; i++) printf \"%s \", \$i }") &&
	mkfix jpeg full.jpg && head -c 300 full.jpg >"$TRASH/home/Pictures/broken.jpg" && age "$TRASH/home/Pictures" &&
	db="$TRASH/home/.local/share/photoidx/catalog.db" &&
	before=$(sqlite3 "$db" "select count(*) from scans where command = '\''verify'\''") &&
	run_installed "$cmd" 2>err;
	grep -q "broken.jpg" err &&
	test "$(sqlite3 "$db" "select count(*) from scans where command = '\''verify'\''")" = $((before + 1)) &&
	example=$(grep "^30 3 \* \* \* photoidx scan" "$REPO/doc/photoidx.1") &&
	! echo "$example" | grep -q "&&"
'

test_expect_success 'the README and the man page point at contrib/' '
	grep -q "contrib/photoidx.cron" "$REPO/README.md" &&
	grep -q "contrib/systemd" "$REPO/README.md" &&
	grep -q "/usr/local" "$REPO/README.md"
'

test_done
