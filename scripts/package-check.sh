#!/usr/bin/env bash
# package-check.sh: the installed package, as an operator uses it. Run as
# root after "dpkg -i pgmirror_*.deb", with the PG* variables naming a
# PostgreSQL with wal_level=logical (pg_virtualenv; scripts/check.sh runs it
# so). Checks:
#  - the system user pgmirror and /var/lib/pgmirror;
#  - systemd-analyze verify of an instance of each installed unit, and
#    systemd-analyze security's exposure of the three services at most 2.0
#    (both work without systemd running);
#  - the ExecStart command lines of the installed pgmirror-once@.service and
#    pgmirror@.service, with a sample /etc/pgmirror/NAME.conf (a
#    pg_service.conf service and a password file), run by hand as pgmirror:
#    they make and follow a mirror;
#  - a second account in group pgmirror reads the mirror (README's recipe)
#    while the service runs and after it stopped;
#    The conf's OPTIONS holds two options in double quotes, as shop.conf
#    says to write them;
#  - the cron example parsed as cron reads /etc/cron.d (variables; five time
#    fields, a user, a command), its command run through sh -c as that user
#    (with a spread of 1 s, to stay fast): it brings the mirror up to date,
#    and exits 0 when it overlaps a running pgmirror (exit 3);
#  - after root's read-write sqlite3 removed -wal and -shm, the ExecStart of
#    pgmirror-share@.service and the cron example's pgmirror-share line give
#    the reader the mirror back (and touch nothing while the files are there);
#  - the metrics: pgmirror-metrics@.service's ExecStart, run by hand as root
#    after root's read-write sqlite3 removed -wal and -shm, writes a file
#    promtool accepts and gives the reader the mirror back; the example
#    alert rules pass promtool check rules; the metrics cron line.
# Prints "ok: ..." per check; exits non-zero at the first failure.
set -euo pipefail
export PGOPTIONS="-c client_min_messages=warning"

units=/lib/systemd/system
examples=/usr/share/doc/pgmirror/examples
name=pgmci
conf=/etc/pgmirror/$name.conf
mirror=/var/lib/pgmirror/$name.db
db=pgm_package
role=pgm_package_user
reader=pgm_package_reader
secret="pkg-$RANDOM-$RANDOM"
tmp=$(mktemp -d)
service_pid=
shop_conf_made=

fail() { echo "package-check: FAILED: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

cleanup() {
	[ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null
	if [ -f "$conf" ]; then
		runuser -u pgmirror -- env -i PATH=/usr/bin:/bin sh -c \
			"set -a; . $conf; pgmirror -q --drop-slot --slot=\$SLOT \$MIRROR" >/dev/null 2>&1 || true
	fi
	rm -f "$conf" /etc/pgmirror/$name.service.conf /etc/pgmirror/$name.pgpass "$mirror"*
	[ -n "$shop_conf_made" ] && rm -f /etc/pgmirror/shop.conf
	id "$reader" >/dev/null 2>&1 && userdel "$reader"
	psql -qX -d postgres -c "DROP DATABASE IF EXISTS $db" -c "DROP ROLE IF EXISTS $role" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# rows in the mirror's table t, as the given account reads it ("" when it cannot)
rows_as() { runuser -u "$1" -- sqlite3 "$mirror" "SELECT count(*) FROM t" 2>/dev/null || true; }
# waits until the mirror holds $1 rows (as root, read-only: a read-write
# connection that closes last would remove -wal and -shm)
wait_rows() {
	local i
	for i in $(seq 1 150); do
		[ "$(sqlite3 -readonly "$mirror" 'SELECT count(*) FROM t' 2>/dev/null)" = "$1" ] && return 0
		sleep 0.2
	done
	fail "the mirror did not reach $1 rows: $(sqlite3 -readonly "$mirror" 'SELECT count(*) FROM t' 2>&1)"
}
# an installed unit's ExecStart, run by hand as pgmirror with only the
# conf file's environment, as systemd would (%i is the instance); in a
# subshell, which becomes pgmirror (exec all the way down)
exec_start() {
	local line
	line=$(sed -n 's/^ExecStart=//p' "$units/$1")
	[ -n "$line" ] || fail "$1 has no ExecStart"
	line=${line//%i/$name}
	exec setpriv --reuid=pgmirror --regid=pgmirror --init-groups -- \
		env -i PATH=/usr/bin:/bin sh -c "set -a; . $conf; exec $line"
}

# --- the user, the units ---
getent passwd pgmirror >/dev/null || fail "no user pgmirror"
[ "$(stat -c %U /var/lib/pgmirror)" = pgmirror ] || fail "/var/lib/pgmirror does not belong to pgmirror"
ok "system user pgmirror, /var/lib/pgmirror"
for u in pgmirror@.service pgmirror-once@.service pgmirror-once@.timer \
	pgmirror-metrics@.service pgmirror-metrics@.timer pgmirror-share@.path pgmirror-share@.service; do
	[ -f "$units/$u" ] || fail "$units/$u is not installed"
	cp "$units/$u" "$tmp/${u/@./@$name.}"
done
systemd-analyze verify "$tmp/pgmirror@$name.service" "$tmp/pgmirror-once@$name.service" \
	"$tmp/pgmirror-once@$name.timer" "$tmp/pgmirror-metrics@$name.service" \
	"$tmp/pgmirror-metrics@$name.timer" "$tmp/pgmirror-share@$name.path" \
	"$tmp/pgmirror-share@$name.service" || fail "systemd-analyze verify"
ok "systemd-analyze verify of the seven units"
for u in pgmirror@$name.service pgmirror-once@$name.service pgmirror-share@$name.service; do
	score=$(systemd-analyze security --offline=true "$tmp/$u" 2>&1 |
		sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
	[ -n "$score" ] || fail "no exposure level for $u"
	awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || fail "$u: exposure $score, more than 2.0"
	ok "$u: exposure $score"
done

# --- a source, and the sample conf ---
psql -qX -d postgres -c "DROP DATABASE IF EXISTS $db" -c "DROP ROLE IF EXISTS $role" \
	-c "CREATE ROLE $role LOGIN REPLICATION PASSWORD '$secret'" -c "CREATE DATABASE $db" >/dev/null
psql -qX -d "$db" -c "CREATE TABLE t (id int PRIMARY KEY)" -c "INSERT INTO t VALUES (1)" \
	-c "GRANT SELECT ON t TO $role" -c "CREATE PUBLICATION pub FOR TABLE t" >/dev/null
host=${PGHOST:-localhost}
case $host in /*) host=localhost ;; esac
sed -e "s/^\[shop\]/[$name]/" -e "s/^host=.*/host=$host/" -e "s/^port=.*/port=${PGPORT:-5432}/" \
	-e "s/^dbname=.*/dbname=$db/" -e "s/^user=.*/user=$role/" \
	"$examples/pg_service.conf" >/etc/pgmirror/$name.service.conf
install -m 0600 -o pgmirror -g pgmirror /dev/null /etc/pgmirror/$name.pgpass
echo "*:*:$db:$role:$secret" >/etc/pgmirror/$name.pgpass
sed -e "s|^MIRROR=.*|MIRROR=$mirror|" -e "s/^SLOT=.*/SLOT=pgm_package_slot/" \
	-e "s/^PUBLICATIONS=.*/PUBLICATIONS=pub/" -e 's/^OPTIONS=.*/OPTIONS="-s 5 --no-binary"/' \
	-e "s|^PGSERVICEFILE=.*|PGSERVICEFILE=/etc/pgmirror/$name.service.conf|" \
	-e "s/^PGSERVICE=.*/PGSERVICE=$name/" -e "s|^PGPASSFILE=.*|PGPASSFILE=/etc/pgmirror/$name.pgpass|" \
	"$examples/shop.conf" >"$conf"

# --- the timer's service, then the service, by hand ---
(exec_start pgmirror-once@.service) || fail "pgmirror-once@.service's ExecStart exited $?"
wait_rows 1
ok "pgmirror-once@.service's ExecStart made the mirror"
# README's recipe for readers in other accounts
id "$reader" >/dev/null 2>&1 || useradd --user-group --no-create-home --shell /usr/sbin/nologin "$reader"
adduser --quiet "$reader" pgmirror
chmod 0640 "$mirror"*
[ "$(rows_as "$reader")" = 1 ] || fail "$reader cannot read the mirror with pgmirror stopped"
ok "a reader in group pgmirror reads the mirror while pgmirror is stopped"

(exec_start pgmirror@.service) >"$tmp/service.log" 2>&1 &
service_pid=$!
psql -qX -d "$db" -c "INSERT INTO t VALUES (2)"
wait_rows 2
[ "$(rows_as "$reader")" = 2 ] || fail "$reader cannot read the mirror while the service runs"
ok "pgmirror@.service's ExecStart follows the source; the reader reads meanwhile"
# the password reaches pgmirror only through the password file
pids=$(pgrep -x pgmirror) || fail "no pgmirror process while the service runs"
for pid in $pids; do
	! grep -qaF "$secret" "/proc/$pid/cmdline" "/proc/$pid/environ" ||
		fail "the password is on pgmirror's command line or in its environment"
done
ok "no password on the running pgmirror's command line or in its environment"

# --- the cron example ---
cronfile=$examples/pgmirror.cron
cronenv=()
jobs=0
while IFS= read -r line; do
	case $line in '' | '#'*) continue ;; esac
	if [[ $line =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then
		cronenv+=("$line")
		continue
	fi
	read -r m h dom mon dow user command <<<"$line"
	for f in "$m" "$h" "$dom" "$mon" "$dow"; do
		[[ $f =~ ^(\*|[0-9]+(-[0-9]+)?)(/[0-9]+)?(,(\*|[0-9]+(-[0-9]+)?)(/[0-9]+)?)*$ ]] ||
			fail "cron line with a bad time field \"$f\": $line"
	done
	[ "$user" = pgmirror ] || fail "the cron line's user is \"$user\", not pgmirror"
	[ -n "$command" ] || fail "the cron line has no command"
	jobs=$((jobs + 1))
	case $command in
	*"pgmirror --once"*) cron_command=$command ;;
	*/usr/lib/pgmirror/pgmirror-share*) share_command=$command ;;
	*) fail "a cron line that is neither the run nor pgmirror-share: $line" ;;
	esac
done <"$cronfile"
[ "$jobs" -eq 2 ] && [ -n "${cron_command:-}" ] && [ -n "${share_command:-}" ] ||
	fail "$cronfile has $jobs job lines, expected the run's and pgmirror-share's"
ok "the cron example: variables ${cronenv[*]}; two jobs with five time fields, user pgmirror, a command"
[ -e /etc/pgmirror/shop.conf ] || { cp "$conf" /etc/pgmirror/shop.conf; shop_conf_made=1; }
[ -n "$shop_conf_made" ] || fail "/etc/pgmirror/shop.conf exists: not touching it"
run_cron() { runuser -u pgmirror -- env -i "${cronenv[@]}" PGMIRROR_SPREAD=1 sh -c "$cron_command"; }
psql -qX -d "$db" -c "INSERT INTO t VALUES (3)"
out=$(run_cron 2>&1) || fail "the cron command, overlapping the service, exited $? (expected 0: exit 3 is no error)"
[ -z "$out" ] || fail "the cron command, overlapping the service, wrote (cron would mail it): $out"
ok "the cron command overlapping a running pgmirror exits 0, silently"
kill -TERM "$service_pid"
rc=0
wait "$service_pid" || rc=$?
service_pid=
[ "$rc" -eq 0 ] || fail "the service exited $rc on SIGTERM: $(cat "$tmp/service.log")"
wait_rows 3
[ "$(rows_as "$reader")" = 3 ] || fail "$reader cannot read the mirror after the service stopped"
ok "the service stops with 0 on SIGTERM; the reader reads after"
psql -qX -d "$db" -c "INSERT INTO t VALUES (4)"
run_cron || fail "the cron command exited $?"
wait_rows 4
[ "$(rows_as "$reader")" = 4 ] || fail "$reader cannot read the mirror after the cron run"
ok "the cron command brings the mirror up to date; the reader reads it"

# --- readers after root's read-write sqlite3, the last to close the mirror,
# removed -wal and -shm: pgmirror-share makes them again ---
rootclose() {
	sqlite3 "$mirror" "SELECT count(*) FROM t" >/dev/null
	[ ! -e "$mirror-shm" ] && [ -z "$(rows_as "$reader")" ] ||
		fail "$reader read the mirror after root's read-write sqlite3: SQLite changed?"
}
rootclose
(exec_start pgmirror-share@.service) || fail "pgmirror-share@.service's ExecStart exited $?"
[ "$(rows_as "$reader")" = 4 ] || fail "$reader cannot read the mirror after pgmirror-share@.service"
ok "after root's read-write sqlite3, pgmirror-share@.service's ExecStart gives the reader the mirror back"
before=$(stat -c %i:%Y "$mirror-shm")
(exec_start pgmirror-share@.service) || fail "pgmirror-share@.service's ExecStart exited $? with nothing to do"
[ "$(stat -c %i:%Y "$mirror-shm")" = "$before" ] || fail "pgmirror-share touched a -shm that was there"
rootclose
runuser -u pgmirror -- env -i "${cronenv[@]}" sh -c "$share_command" || fail "the cron example's pgmirror-share line exited $?"
[ "$(rows_as "$reader")" = 4 ] || fail "$reader cannot read the mirror after the cron example's pgmirror-share line"
ok "the cron example's pgmirror-share line does the same; with -wal and -shm there, nothing"

# --- the metrics: the timer's service by hand (as root, as systemd runs it),
# into a directory of ours in place of node_exporter's ---
line=$(sed -n 's/^ExecStart=//p' "$units/pgmirror-metrics@.service")
line=${line//%i/$name}
mkdir "$tmp/textfile"
# root's read-write sqlite3, the last to close the mirror, removes -wal and
# -shm: the reader cannot open it until a pgmirror opens it again
sqlite3 "$mirror" "SELECT count(*) FROM t" >/dev/null
[ -z "$(rows_as "$reader")" ] || fail "$reader read the mirror without -wal and -shm"
env -i PATH=/usr/bin:/bin PGMIRROR_TEXTFILE_DIR="$tmp/textfile" sh -c "exec $line" ||
	fail "pgmirror-metrics@.service's ExecStart exited $?"
[ "$(ls "$tmp/textfile")" = "pgmirror-$name.prom" ] ||
	fail "pgmirror-metrics@.service wrote: $(ls -a "$tmp/textfile")"
promtool check metrics <"$tmp/textfile/pgmirror-$name.prom" ||
	fail "promtool check metrics refused pgmirror-$name.prom"
grep -q "^pgmirror_table_rows{slot=\"pgm_package_slot\",table=\"t\"} 4\$" \
	"$tmp/textfile/pgmirror-$name.prom" || fail "pgmirror-$name.prom: $(cat "$tmp/textfile/pgmirror-$name.prom")"
ok "pgmirror-metrics@.service's ExecStart writes metrics that promtool accepts"
[ "$(rows_as "$reader")" = 4 ] || fail "$reader cannot read the mirror after the metrics timer's run"
ok "after root's read-write sqlite3, the metrics run gives the reader -wal and -shm back"
promtool check rules "$examples/pgmirror-alerts.yml" >/dev/null || fail "promtool check rules"
ok "the example alert rules: promtool check rules"
read -r m h dom mon dow user command < <(grep -v -e '^#' -e '^$' -e '=' "$examples/pgmirror-metrics.cron")
[ "$user" = root ] && [ "$command" = "/usr/lib/pgmirror/pgmirror-textfile shop" ] ||
	fail "the metrics cron line: $user $command"
ok "the metrics cron example: root runs /usr/lib/pgmirror/pgmirror-textfile shop"
echo "package-check: all passed"
