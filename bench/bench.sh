#!/bin/bash
# pgmirror throughput benchmark, against pg_recvlogical as the baseline.
#
#   bench/bench.sh [-n ROWS] [-r REPEATS] [-b PGMIRROR] [-p PROTO]
#
# Where it runs: if PGHOST is unset, the script re-executes itself under
#   pg_virtualenv -t -o wal_level=logical -o max_replication_slots=20 \
#                 -o max_wal_senders=20 -o fsync=off
# (a throwaway cluster; fsync=off only speeds up the workload, not the
# decoding being measured).  With PGHOST set it uses that server as is; it
# needs wal_level=logical and creates/drops a database pgm_bench there.
#
# Workloads (N = -n, default 100000 rows):
#   insert  one transaction inserting N rows
#   small   N/10 single-row INSERT transactions (pgbench, one client)
#   upddel  one transaction updating all N rows, then one deleting them all
#           (the N rows are inserted and consumed by both sides first)
#   copy    the initial copy: pgmirror's first run on a table of
#           BENCH_COPY_ROWS rows (default N) (slot creation, COPY, SQLite,
#           one commit) against, side by side in each repeat,
#           psql -c "COPY bench_t TO STDOUT" > /dev/null of the same table
#           and "SQLite alone": bench/sqlite_alone.c (compiled here with
#           cc -O2) inserting the same rows, read from pgmirror's mirror
#           into memory beforehand, into a new file with pgmirror's
#           settings, CREATE TABLE and prepared INSERT OR REPLACE, in one
#           transaction: the best pgmirror's writer could do
# For each workload and each repeat (-r, default 3), two fresh slots exist
# before the workload: pgmirror's own (created by a first pgmirror run on the
# empty table, since pgmirror refuses slots it did not create) and a pgoutput
# slot for pg_recvlogical with the same options (proto_version,
# publication_names), so the server does the same decoding work for both.
# Then, with END = pg_current_wal_insert_lsn() after the workload:
#   pg_recvlogical -d DB -S S2 --start -E END -o proto_version=P \
#                  -o publication_names=bench_pub -f /dev/null
#   pgmirror -d DB -S S1 -P bench_pub --endpos END MIRROR.db
# are timed.  Printed: median seconds, row changes per second, and the time
# ratio pgmirror/pg_recvlogical (1.0 = as fast as just receiving the stream).
# Every command runs under `timeout` (BENCH_TIMEOUT, default 300 s; a pgmirror that fails or times out
# is not run again), so the
# script always ends.  Without a usable pgmirror binary its columns read n/a
# and the pg_recvlogical half still runs.
set -u

N=100000
REPEATS=3
PROTO=1
BIN=${PGMIRROR:-}
while getopts "n:r:b:p:h" opt; do
    case $opt in
        n) N=$OPTARG ;;
        r) REPEATS=$OPTARG ;;
        b) BIN=$OPTARG ;;
        p) PROTO=$OPTARG ;;
        h) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//;/^set -u/d'; exit 0 ;;
        *) echo "usage: $0 [-n ROWS] [-r REPEATS] [-b PGMIRROR] [-p PROTO]" >&2; exit 2 ;;
    esac
done
case $N in ''|*[!0-9]*) echo "bench: -n wants a number" >&2; exit 2 ;; esac
case $REPEATS in ''|*[!0-9]*|0) echo "bench: -r wants a positive number" >&2; exit 2 ;; esac

HERE=$(cd "$(dirname "$0")" && pwd)
[ -n "$BIN" ] || BIN="$HERE/../pgmirror"

if [ -z "${PGHOST:-}" ]; then
    exec pg_virtualenv -t -o wal_level=logical -o max_replication_slots=20 \
        -o max_wal_senders=20 -o fsync=off \
        "$0" -n "$N" -r "$REPEATS" -b "$BIN" -p "$PROTO"
fi

T=${BENCH_TIMEOUT:-300}
DB=pgm_bench
PUB=bench_pub
S1=pgm_bench_mirror
S2=pgm_bench_recv
WORK=$(mktemp -d /tmp/pgm_bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

have_pgmirror=yes
if [ ! -x "$BIN" ]; then
    echo "bench: no pgmirror binary at $BIN: pgmirror columns will be n/a" >&2
    have_pgmirror=no
fi

q() { PGOPTIONS="-c client_min_messages=warning" timeout "$T" psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }
now() { date +%s.%N; }

drop_slots() {
    q "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots
       WHERE slot_name IN ('$S1', '$S2') AND active_pid IS NOT NULL" >/dev/null
    for _ in $(seq 50); do
        [ "$(q "SELECT count(*) FROM pg_replication_slots WHERE slot_name IN ('$S1','$S2') AND active")" = 0 ] && break
        sleep 0.1
    done
    q "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
       WHERE slot_name IN ('$S1', '$S2')" >/dev/null
}

PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -d "${PGDATABASE:-postgres}" \
    -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" || exit 1
[ "$(q 'SHOW wal_level')" = logical ] || { echo "bench: wal_level is not logical" >&2; exit 1; }

recv() {  # recv ENDPOS: consume S2 up to ENDPOS
    timeout "$T" pg_recvlogical -d "$DB" -S "$S2" --start -E "$1" \
        -o proto_version="$PROTO" -o publication_names="$PUB" -f /dev/null
}

mirror() {  # mirror ENDPOS [extra args]: consume S1 up to ENDPOS
    local end=$1; shift
    timeout "$T" "$BIN" -q -d "dbname=$DB" -S "$S1" -P "$PUB" --endpos "$end" "$@" \
        "$WORK/mirror.db" 2>>"$WORK/pgmirror.err"
}

make_table() {  # a fresh empty bench_t, published; no slots, no mirror
    drop_slots
    q "DROP TABLE IF EXISTS bench_t; DROP PUBLICATION IF EXISTS $PUB;
       CREATE TABLE bench_t (id bigserial PRIMARY KEY, a int, b text,
                             c timestamptz DEFAULT now(), d numeric(10,2));
       CREATE PUBLICATION $PUB FOR TABLE bench_t;" || exit 1
    rm -f "$WORK"/mirror.db*
}

# setup for one repeat: fresh table, publication, both slots
setup() {
    make_table
    MIRROR_OK=$have_pgmirror
    if [ "$MIRROR_OK" = yes ]; then
        if ! timeout "$T" "$BIN" -q -d "dbname=$DB" -S "$S1" -P "$PUB" --once \
                --no-initial-copy "$WORK/mirror.db" 2>>"$WORK/pgmirror.err"; then
            MIRROR_OK=no
        fi
    fi
    q "SELECT lsn FROM pg_create_logical_replication_slot('$S2', 'pgoutput')" >/dev/null || exit 1
}

insert_rows() {
    q "INSERT INTO bench_t (a, b, d) SELECT g, md5(g::text), g / 100.0
       FROM generate_series(1, $N) g" || exit 1
}

workload() {  # workload NAME: run it; print the number of row changes
    case $1 in
        insert)
            insert_rows
            echo "$N" ;;
        small)
            local n=$((N / 10))
            echo "INSERT INTO bench_t (a, b, d) VALUES (:client_id, md5(random()::text), 1.5);" \
                > "$WORK/small.sql"
            timeout "$T" pgbench -n -c 1 -t "$n" -f "$WORK/small.sql" "$DB" >/dev/null 2>&1 \
                || { echo "bench: pgbench failed" >&2; exit 1; }
            echo "$n" ;;
        upddel)
            insert_rows
            local l0; l0=$(q "SELECT pg_current_wal_insert_lsn()")
            recv "$l0" || { echo "bench: pg_recvlogical (pre-load) failed" >&2; exit 1; }
            if [ "$MIRROR_OK" = yes ]; then mirror "$l0" || MIRROR_OK=no; fi
            q "UPDATE bench_t SET a = a + 1, b = b || 'x'" || exit 1
            q "DELETE FROM bench_t" || exit 1
            echo $((2 * N)) ;;
    esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a";
    else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A ROWS RECV MIRR
for w in insert small upddel; do
    : > "$WORK/recv.$w"; : > "$WORK/mirr.$w"
    for r in $(seq "$REPEATS"); do
        setup
        rows=$(workload "$w") || exit 1
        end=$(q "SELECT pg_current_wal_insert_lsn()")
        t0=$(now)
        recv "$end" || { echo "bench: pg_recvlogical failed ($w)" >&2; exit 1; }
        t1=$(now)
        echo "$t1 - $t0" | bc -l >> "$WORK/recv.$w"
        if [ "$MIRROR_OK" = yes ]; then
            t0=$(now)
            if mirror "$end"; then
                t1=$(now)
                echo "$t1 - $t0" | bc -l >> "$WORK/mirr.$w"
                src=$(q "SELECT count(*) FROM bench_t")
                got=$(/usr/bin/python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM bench_t").fetchone()[0])' \
                      "$WORK/mirror.db" 2>/dev/null || echo "?")
                [ "$src" = "$got" ] || echo "bench: WARNING: mirror has $got rows, source $src ($w)" >&2
            else
                echo "bench: pgmirror failed or timed out ($w, repeat $r): not run" \
                     "again; see its stderr below" >&2
                have_pgmirror=no
            fi
        fi
        echo "  $w #$r: $rows rows, recvlogical $(tail -n1 "$WORK/recv.$w")s" \
             "pgmirror $( [ "$MIRROR_OK" = yes ] && tail -n1 "$WORK/mirr.$w" || echo n/a)s" >&2
    done
    ROWS[$w]=$rows
    RECV[$w]=$(median < "$WORK/recv.$w")
    MIRR[$w]=$(median < "$WORK/mirr.$w")
done

# Initial copy: pgmirror's first run (slot, COPY, SQLite, one commit) on a
# table of CN rows, against psql's COPY of the same table to /dev/null and
# against SQLite alone inserting the same rows.
CN=${BENCH_COPY_ROWS:-$N}
case $CN in ''|*[!0-9]*) echo "bench: BENCH_COPY_ROWS wants a number" >&2; exit 2 ;; esac
ALONE=$WORK/sqlite_alone
# shellcheck disable=SC2046
if ! cc -O2 -o "$ALONE" "$HERE/sqlite_alone.c" $(pkg-config --cflags --libs sqlite3) \
        2>>"$WORK/pgmirror.err"; then
    echo "bench: could not build bench/sqlite_alone.c: its column will be n/a" >&2
    ALONE=
fi
: > "$WORK/copy.psql"; : > "$WORK/copy.pgm"; : > "$WORK/copy.alone"
for r in $(seq "$REPEATS"); do
    make_table
    q "INSERT INTO bench_t (a, b, d) SELECT g, md5(g::text), g / 100.0
       FROM generate_series(1, $CN) g" || exit 1
    # the load's dirty pages and WAL written out before anything is timed
    q "VACUUM ANALYZE bench_t" && q "CHECKPOINT" || exit 1
    t0=$(now)
    timeout "$T" psql -X -q -d "$DB" -c "COPY bench_t TO STDOUT" > /dev/null \
        || { echo "bench: psql COPY failed" >&2; exit 1; }
    t1=$(now)
    echo "$t1 - $t0" | bc -l >> "$WORK/copy.psql"
    pgm=n/a
    if [ "$have_pgmirror" = yes ]; then
        t0=$(now)
        if timeout "$T" "$BIN" -q -d "dbname=$DB" -S "$S1" -P "$PUB" --once \
                "$WORK/mirror.db" 2>>"$WORK/pgmirror.err"; then
            t1=$(now)
            echo "$t1 - $t0" | bc -l >> "$WORK/copy.pgm"
            pgm=$(tail -n1 "$WORK/copy.pgm")
        else
            echo "bench: pgmirror first run failed (copy, repeat $r)" >&2
        fi
    fi
    alone=n/a
    if [ -n "$ALONE" ] && [ "$pgm" != n/a ]; then
        # the same rows, as pgmirror stored them; it times only the inserting
        if out=$(timeout "$T" "$ALONE" "$WORK/mirror.db" bench_t "$WORK/alone.db" \
                 2>>"$WORK/pgmirror.err"); then
            alone=$(echo "$out" | awk '{ print $2 }')
            echo "$alone" >> "$WORK/copy.alone"
            [ "$(echo "$out" | awk '{ print $1 }')" = "$CN" ] ||
                echo "bench: WARNING: SQLite alone inserted $out rows, not $CN" >&2
        else
            echo "bench: sqlite_alone failed (copy, repeat $r)" >&2
        fi
        rm -f "$WORK"/alone.db*
    fi
    echo "  copy #$r: $CN rows, psql COPY $(tail -n1 "$WORK/copy.psql")s pgmirror ${pgm}s" \
         "SQLite alone ${alone}s" >&2
done
COPY_PSQL=$(median < "$WORK/copy.psql")
COPY_PGM=$(median < "$WORK/copy.pgm")
COPY_ALONE=$(median < "$WORK/copy.alone")
drop_slots

rate() { [ "$2" = n/a ] && echo n/a || echo "$1 / $2" | bc -l | xargs printf "%.0f"; }
echo
echo "pgmirror benchmark: N=$N, $REPEATS repeats (medians), proto_version=$PROTO, $(psql -X -At -d "$DB" -c 'SHOW server_version')"
printf "%-8s %9s %12s %14s %12s %14s %8s\n" workload rows "recv s" "recv rows/s" "pgmirror s" "pgm rows/s" "ratio"
for w in insert small upddel; do
    rr=$(rate "${ROWS[$w]}" "${RECV[$w]}")
    mr=$(rate "${ROWS[$w]}" "${MIRR[$w]}")
    if [ "${MIRR[$w]}" = n/a ]; then ratio=n/a; else
        ratio=$(echo "${MIRR[$w]} / ${RECV[$w]}" | bc -l | xargs printf "%.2f"); fi
    printf "%-8s %9s %12.3f %14s %12s %14s %8s\n" "$w" "${ROWS[$w]}" "${RECV[$w]}" "$rr" \
        "$( [ "${MIRR[$w]}" = n/a ] && echo n/a || printf %.3f "${MIRR[$w]}")" "$mr" "$ratio"
done
echo "(ratio = pgmirror time / pg_recvlogical time for the same stream)"
echo
printf "%-8s %9s %12s %14s %12s %14s %8s\n" copy rows "COPY s" "COPY rows/s" "pgmirror s" "pgm rows/s" "ratio"
if [ "$COPY_PGM" = n/a ]; then ratio=n/a; else
    ratio=$(echo "$COPY_PGM / $COPY_PSQL" | bc -l | xargs printf "%.2f"); fi
printf "%-8s %9s %12.3f %14s %12s %14s %8s\n" initial "$CN" "$COPY_PSQL" \
    "$(rate "$CN" "$COPY_PSQL")" \
    "$( [ "$COPY_PGM" = n/a ] && echo n/a || printf %.3f "$COPY_PGM")" \
    "$(rate "$CN" "$COPY_PGM")" "$ratio"
echo "(ratio = pgmirror's first run, with its initial copy, / psql -c \"COPY bench_t TO STDOUT\" > /dev/null)"
printf "%-8s %9s %12s %14s %12s %14s %8s\n" copy rows "alone s" "alone rows/s" "pgmirror s" "pgm rows/s" "rate"
if [ "$COPY_PGM" = n/a ] || [ "$COPY_ALONE" = n/a ]; then ratio=n/a; else
    ratio=$(echo "$COPY_ALONE / $COPY_PGM" | bc -l | xargs printf "%.2f"); fi
printf "%-8s %9s %12s %14s %12s %14s %8s\n" initial "$CN" \
    "$( [ "$COPY_ALONE" = n/a ] && echo n/a || printf %.3f "$COPY_ALONE")" \
    "$(rate "$CN" "$COPY_ALONE")" \
    "$( [ "$COPY_PGM" = n/a ] && echo n/a || printf %.3f "$COPY_PGM")" \
    "$(rate "$CN" "$COPY_PGM")" "$ratio"
echo "(rate = pgmirror's first-run rate / SQLite alone's rate for the same rows, bench/sqlite_alone.c)"
if [ -s "$WORK/pgmirror.err" ]; then
    echo; echo "pgmirror stderr (last lines):"; tail -n 5 "$WORK/pgmirror.err"
fi
psql -X -q -d "${PGDATABASE:-postgres}" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
