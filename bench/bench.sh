#!/bin/bash
# pgmirror throughput benchmark, against pg_recvlogical as the baseline.
#
#   bench/bench.sh [-n ROWS] [-r REPEATS] [-b PGMIRROR] [-p PROTO] [-w WORKLOADS]
#                  [-k ROWS] [-c CHANGES] [-a ROWS]
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
#           transaction: the best pgmirror's writer could do; the rate
#           is given of the medians, and paired: the median of each
#           repeat's own rate, whose two runs follow each other, which a
#           neighbour's load moves less; and "beside": SQLite alone once
#           more while psql -c "COPY bench_t TO STDOUT (FORMAT binary)"
#           runs in a loop beside it, the load the server and a reader put
#           on the machine during pgmirror's copy, without its pipeline;
#           and twice more outside the mirror's settings, to show what
#           they cost: with a rollback journal, and with 64 kB pages
#   keyless a table of K rows (-k, default 500000), mirrored by a first run,
#           then C single-row DELETEs and C single-row UPDATEs (-c, default
#           20000), each its own transaction; pgmirror's time to apply them
#           on the REPLICA IDENTITY FULL version of the table (no key; the
#           source finds its rows through a hash index, which the mirror
#           does not copy) against the same on the keyed version
#   addcol  ALTER TABLE ... ADD COLUMN ... DEFAULT on a keyed table of A rows
#           (-a, default 1000000) that pgmirror mirrors, then one change:
#           pgmirror's time to follow (rebuild and refill), against its
#           first run on the same table
#   wire    bytes and CPU per row change of the streamed workloads (insert,
#           small, upddel, run again for it) in pgoutput's text and binary
#           formats: bench/wire.py runs the client through a byte-counting
#           proxy and reports the bytes the server sent (all the client's
#           connections, without TCP/IP headers), the client's CPU (user +
#           system, wait4) and the CPU of the server processes that served
#           it (the walsender, and a plain backend if one was opened; read
#           from /proc just before each connection's end is passed on).
#           pgmirror streams in binary where it can unless told
#           --no-binary: both are measured when its --help shows that
#           switch, else only its one (text) format. pg_recvlogical, with
#           -o binary=false|true, is the reference for the same stream.
# -w picks workloads (comma-separated; default all of them).
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
WORKLOADS=insert,small,upddel,copy,keyless,addcol,wire
KROWS=500000
KCHANGES=20000
AROWS=1000000
while getopts "n:r:b:p:w:k:c:a:h" opt; do
    case $opt in
        n) N=$OPTARG ;;
        r) REPEATS=$OPTARG ;;
        b) BIN=$OPTARG ;;
        p) PROTO=$OPTARG ;;
        w) WORKLOADS=$OPTARG ;;
        k) KROWS=$OPTARG ;;
        c) KCHANGES=$OPTARG ;;
        a) AROWS=$OPTARG ;;
        h) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//;/^set -u/d'; exit 0 ;;
        *) echo "usage: $0 [-n ROWS] [-r REPEATS] [-b PGMIRROR] [-p PROTO] [-w WORKLOADS]" \
                "[-k ROWS] [-c CHANGES] [-a ROWS]" >&2; exit 2 ;;
    esac
done
for v in "$N" "$KROWS" "$KCHANGES" "$AROWS"; do
    case $v in ''|*[!0-9]*) echo "bench: -n, -k, -c and -a want a number" >&2; exit 2 ;; esac
done
if [ $((KROWS % 7919)) = 0 ] || [ $((2 * KCHANGES)) -gt "$KROWS" ]; then
    echo "bench: -k must not be a multiple of 7919 and at least twice -c" >&2; exit 2
fi
wanted() { case ",$WORKLOADS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
case $REPEATS in ''|*[!0-9]*|0) echo "bench: -r wants a positive number" >&2; exit 2 ;; esac

HERE=$(cd "$(dirname "$0")" && pwd)
[ -n "$BIN" ] || BIN="$HERE/../pgmirror"

if [ -z "${PGHOST:-}" ]; then
    exec pg_virtualenv -t -o wal_level=logical -o max_replication_slots=20 \
        -o max_wal_senders=20 -o fsync=off \
        "$0" -n "$N" -r "$REPEATS" -b "$BIN" -p "$PROTO" -w "$WORKLOADS" \
        -k "$KROWS" -c "$KCHANGES" -a "$AROWS"
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
STREAMED=""
for w in insert small upddel; do
    wanted "$w" || continue
    STREAMED="$STREAMED $w"
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

# Bytes on the wire and CPU per row change, both ends, per streaming format.
WIRE_FORMATS=text
if [ "$have_pgmirror" = yes ] && "$BIN" --help 2>/dev/null | grep -q -- --no-binary; then
    WIRE_FORMATS="text binary"
fi
wire_run() {  # wire_run OUTFILE COMMAND...: one line of wire.py's figures into OUTFILE
    local out=$1; shift
    timeout "$T" /usr/bin/python3 "$HERE/wire.py" -- "$@" >> "$out" 2>>"$WORK/pgmirror.err"
}
declare -A WROWS
WIRED=""
for w in insert small upddel; do
    { wanted wire && [ "$have_pgmirror" = yes ]; } || break
    WIRED="$WIRED $w"
    for fmt in $WIRE_FORMATS; do
        if [ "$fmt" = text ]; then rb=false; else rb=true; fi
        flag=; [ "$fmt" = text ] && [ "$WIRE_FORMATS" != text ] && flag=--no-binary
        : > "$WORK/wire.recv.$w.$fmt"; : > "$WORK/wire.pgm.$w.$fmt"
        for r in $(seq "$REPEATS"); do
            setup
            rows=$(workload "$w") || exit 1
            end=$(q "SELECT pg_current_wal_insert_lsn()")
            wire_run "$WORK/wire.recv.$w.$fmt" pg_recvlogical -d "$DB" -S "$S2" --start -E "$end" \
                -o proto_version="$PROTO" -o publication_names="$PUB" -o binary=$rb -f /dev/null \
                || { echo "bench: pg_recvlogical failed (wire, $w, $fmt)" >&2; exit 1; }
            if [ "$MIRROR_OK" = yes ]; then
                # shellcheck disable=SC2086
                wire_run "$WORK/wire.pgm.$w.$fmt" "$BIN" -q -d "dbname=$DB" -S "$S1" -P "$PUB" \
                    --endpos "$end" $flag "$WORK/mirror.db" ||
                    echo "bench: pgmirror failed (wire, $w, $fmt, repeat $r)" >&2
            fi
            echo "  wire $w $fmt #$r: recvlogical $(tail -n1 "$WORK/wire.recv.$w.$fmt")," \
                 "pgmirror $(tail -n1 "$WORK/wire.pgm.$w.$fmt")" >&2
        done
        WROWS[$w]=$rows
    done
done
wire_per_row() {  # wire_per_row FILE FIELD ROWS SCALE: the median of FIELD over the runs, per row
    local v
    v=$(sed -n "s/.*\b$2=\([0-9.]*\).*/\1/p" "$1" | median)
    [ "$v" = n/a ] && { echo n/a; return; }
    echo "$v * $4 / $3" | bc -l | xargs printf "%.1f"
}

# Initial copy: pgmirror's first run (slot, COPY, SQLite, one commit) on a
# table of CN rows, against psql's COPY of the same table to /dev/null and
# against SQLite alone inserting the same rows.
CN=${BENCH_COPY_ROWS:-$N}
case $CN in ''|*[!0-9]*) echo "bench: BENCH_COPY_ROWS wants a number" >&2; exit 2 ;; esac
ALONE=$WORK/sqlite_alone
# shellcheck disable=SC2046
if wanted copy && ! cc -O2 -o "$ALONE" "$HERE/sqlite_alone.c" $(pkg-config --cflags --libs sqlite3) \
        2>>"$WORK/pgmirror.err"; then
    echo "bench: could not build bench/sqlite_alone.c: its column will be n/a" >&2
    ALONE=
fi
sqlite_alone() {  # sqlite_alone WHAT [JOURNAL_MODE [PAGE_SIZE]]: its seconds for pgmirror's
                  # rows, or a failure said
    local out what=$1
    shift
    sync  # the disk writes of the run before are not this one's
    if out=$(timeout "$T" "$ALONE" "$WORK/mirror.db" bench_t "$WORK/alone.db" "$@" \
             2>>"$WORK/pgmirror.err"); then
        [ "$(echo "$out" | awk '{ print $1 }')" = "$CN" ] ||
            echo "bench: WARNING: $what inserted $out rows, not $CN" >&2
        echo "$out" | awk '{ print $2 }'
    else
        echo "bench: $what failed (copy, repeat $r)" >&2
        echo n/a
        rm -f "$WORK"/alone.db*
        return 1
    fi
    rm -f "$WORK"/alone.db*
}
: > "$WORK/copy.psql"; : > "$WORK/copy.pgm"; : > "$WORK/copy.alone"; : > "$WORK/copy.pair"
: > "$WORK/copy.beside"; : > "$WORK/copy.rollback"; : > "$WORK/copy.bigpages"
for r in $(seq "$REPEATS"); do
    wanted copy || break
    make_table
    q "INSERT INTO bench_t (a, b, d) SELECT g, md5(g::text), g / 100.0
       FROM generate_series(1, $CN) g" || exit 1
    # the load's dirty pages and WAL written out before anything is timed
    # (the cluster runs with fsync=off: sync(1) writes them to the disk)
    q "VACUUM ANALYZE bench_t" && q "CHECKPOINT" || exit 1
    sync
    t0=$(now)
    timeout "$T" psql -X -q -d "$DB" -c "COPY bench_t TO STDOUT" > /dev/null \
        || { echo "bench: psql COPY failed" >&2; exit 1; }
    t1=$(now)
    echo "$t1 - $t0" | bc -l >> "$WORK/copy.psql"
    pgm=n/a
    if [ "$have_pgmirror" = yes ]; then
        sync
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
    alone=n/a beside=n/a
    if [ -n "$ALONE" ] && [ "$pgm" != n/a ]; then
        # the same rows, as pgmirror stored them; it times only the inserting
        if alone=$(sqlite_alone "SQLite alone"); then
            echo "$alone" >> "$WORK/copy.alone"
            echo "$alone / $pgm" | bc -l >> "$WORK/copy.pair"
        fi
        # outside the mirror's settings, where a mirror may not go: what
        # they would be worth (the WAL writes each page twice; bigger
        # pages make fewer, bigger writes)
        out=$(sqlite_alone "SQLite alone, rollback journal" DELETE) &&
            echo "$out" >> "$WORK/copy.rollback"
        out=$(sqlite_alone "SQLite alone, 64 kB pages" WAL 65536) &&
            echo "$out" >> "$WORK/copy.bigpages"
        # again, while the server sends the table to a psql beside, as it
        # sends it to pgmirror's reader during its copy (in binary: every
        # column of bench_t is of a type pgmirror reads in it)
        rm -f "$WORK/beside.stop"
        ( while [ ! -e "$WORK/beside.stop" ]; do
              timeout "$T" psql -X -q -d "$DB" -c "COPY bench_t TO STDOUT (FORMAT binary)" \
                  > /dev/null ||
                  { echo "bench: the COPY beside SQLite alone failed: that run had no load" >&2
                    break; }
          done ) &
        busy=$!
        sleep 0.2
        beside=$(sqlite_alone "SQLite alone beside a COPY") && echo "$beside" >> "$WORK/copy.beside"
        touch "$WORK/beside.stop"
        wait "$busy"
    fi
    echo "  copy #$r: $CN rows, psql COPY $(tail -n1 "$WORK/copy.psql")s pgmirror ${pgm}s" \
         "SQLite alone ${alone}s, beside a COPY ${beside}s" >&2
done
COPY_PSQL=$(median < "$WORK/copy.psql")
COPY_PGM=$(median < "$WORK/copy.pgm")
COPY_ALONE=$(median < "$WORK/copy.alone")
COPY_PAIR=$(median < "$WORK/copy.pair")
COPY_BESIDE=$(median < "$WORK/copy.beside")
COPY_ROLLBACK=$(median < "$WORK/copy.rollback")
COPY_BIGPAGES=$(median < "$WORK/copy.bigpages")

first_run() {  # first_run FILE: pgmirror's first run, with its copy, timed into FILE
    local t0 t1
    t0=$(now)
    timeout "$T" "$BIN" -q -d "dbname=$DB" -S "$S1" -P "$PUB" --once "$WORK/mirror.db" \
        2>>"$WORK/pgmirror.err" || return 1
    t1=$(now)
    echo "$t1 - $t0" | bc -l >> "$1"
}

timed_mirror() {  # timed_mirror FILE ENDPOS: pgmirror up to ENDPOS, timed into FILE
    local t0 t1
    t0=$(now)
    mirror "$2" || return 1
    t1=$(now)
    echo "$t1 - $t0" | bc -l >> "$1"
}

mirror_count() {  # mirror_count SQL: one number from the mirror
    /usr/bin/python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' \
        "$WORK/mirror.db" "$1" 2>/dev/null || echo "?"
}

# Keyless against keyed: the same table and the same single-row changes,
# once with a primary key and once with REPLICA IDENTITY FULL and no key
# (the source finds its rows through a hash index, which pgmirror does not
# copy: the mirror has only what it makes of a keyless table itself).
cat > "$WORK/changes.sql" <<'SQL'
-- rows all over the table (i * 7919 mod rows is one-to-one while rows is
-- prime to 7919), not only the first ones, which a scan would find early
CREATE OR REPLACE PROCEDURE bench_k_changes(n int, nrows int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    DELETE FROM bench_k WHERE id = (i::bigint * 7919) % nrows + 1;
    COMMIT;
  END LOOP;
  FOR i IN n + 1..2 * n LOOP
    UPDATE bench_k SET a = a + 1 WHERE id = (i::bigint * 7919) % nrows + 1;
    COMMIT;
  END LOOP;
END $$;
SQL
ktable() {  # ktable keyed|keyless: a fresh bench_k of KROWS rows, published
    drop_slots
    q "DROP TABLE IF EXISTS bench_t, bench_k, bench_a; DROP PUBLICATION IF EXISTS $PUB;
       CREATE TABLE bench_k (id int NOT NULL, a int, b text, c timestamptz DEFAULT now());
       INSERT INTO bench_k (id, a, b) SELECT g, g % 1000, md5(g::text)
       FROM generate_series(1, $KROWS) g;" || exit 1
    if [ "$1" = keyed ]; then
        q "ALTER TABLE bench_k ADD PRIMARY KEY (id)" || exit 1
    else
        q "ALTER TABLE bench_k REPLICA IDENTITY FULL;
           CREATE INDEX bench_k_id ON bench_k USING hash (id)" || exit 1
    fi
    q "CREATE PUBLICATION $PUB FOR TABLE bench_k" && q "VACUUM ANALYZE bench_k" || exit 1
    PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -d "$DB" \
        -f "$WORK/changes.sql" || exit 1
    rm -f "$WORK"/mirror.db*
}
declare -A KTIME
for kind in keyed keyless; do : > "$WORK/k.$kind"; done
for r in $(seq "$REPEATS"); do
    { wanted keyless && [ "$have_pgmirror" = yes ]; } || break
    for kind in keyed keyless; do
        ktable "$kind"
        first_run "$WORK/first.$kind" || { echo "bench: pgmirror first run failed ($kind)" >&2; continue; }
        q "CALL bench_k_changes($KCHANGES, $KROWS)" || exit 1
        end=$(q "SELECT pg_current_wal_insert_lsn()")
        if timed_mirror "$WORK/k.$kind" "$end"; then
            src=$(q "SELECT count(*) || ' ' || sum(a) FROM bench_k")
            got=$(mirror_count "SELECT count(*) || ' ' || sum(a) FROM bench_k")
            [ "$src" = "$got" ] || echo "bench: WARNING: mirror has $got (rows, sum), source $src ($kind)" >&2
            echo "  $kind #$r: $((2 * KCHANGES)) changes on $KROWS rows, pgmirror $(tail -n1 "$WORK/k.$kind")s" >&2
        else
            echo "bench: pgmirror failed or timed out ($kind, repeat $r)" >&2
        fi
    done
done
for kind in keyed keyless; do KTIME[$kind]=$(median < "$WORK/k.$kind"); done

# Adding a column with a default to a big keyed table: pgmirror rebuilds
# the table and reads the column's values from the source by key.
: > "$WORK/a.first"; : > "$WORK/a.add"
for r in $(seq "$REPEATS"); do
    { wanted addcol && [ "$have_pgmirror" = yes ]; } || break
    drop_slots
    q "DROP TABLE IF EXISTS bench_t, bench_k, bench_a; DROP PUBLICATION IF EXISTS $PUB;
       CREATE TABLE bench_a (id int PRIMARY KEY, a int, b text);
       INSERT INTO bench_a SELECT g, g % 1000, md5(g::text) FROM generate_series(1, $AROWS) g;
       CREATE PUBLICATION $PUB FOR TABLE bench_a" && q "VACUUM ANALYZE bench_a" || exit 1
    rm -f "$WORK"/mirror.db*
    first_run "$WORK/a.first" || { echo "bench: pgmirror first run failed (addcol)" >&2; continue; }
    q "ALTER TABLE bench_a ADD COLUMN f int DEFAULT 7; UPDATE bench_a SET a = -1 WHERE id = 1" || exit 1
    end=$(q "SELECT pg_current_wal_insert_lsn()")
    if timed_mirror "$WORK/a.add" "$end"; then
        got=$(mirror_count "SELECT count(*) FROM bench_a WHERE f = 7")
        [ "$got" = "$AROWS" ] || echo "bench: WARNING: mirror has $got rows with f = 7, not $AROWS" >&2
        echo "  addcol #$r: $AROWS rows, first run $(tail -n1 "$WORK/a.first")s," \
             "ADD COLUMN $(tail -n1 "$WORK/a.add")s" >&2
    else
        echo "bench: pgmirror failed or timed out (addcol, repeat $r)" >&2
    fi
done
A_FIRST=$(median < "$WORK/a.first")
A_ADD=$(median < "$WORK/a.add")
drop_slots

rate() { [ "$2" = n/a ] && echo n/a || echo "$1 / $2" | bc -l | xargs printf "%.0f"; }
echo
echo "pgmirror benchmark: N=$N, $REPEATS repeats (medians), proto_version=$PROTO, $(psql -X -At -d "$DB" -c 'SHOW server_version')"
ratio_of() { if [ "$1" = n/a ] || [ "$2" = n/a ]; then echo n/a; else
    echo "$1 / $2" | bc -l | xargs printf "%.2f"; fi; }
secs() { [ "$1" = n/a ] && echo n/a || printf %.3f "$1"; }
if [ -n "$STREAMED" ]; then
printf "%-8s %9s %12s %14s %12s %14s %8s\n" workload rows "recv s" "recv rows/s" "pgmirror s" "pgm rows/s" "ratio"
for w in $STREAMED; do
    rr=$(rate "${ROWS[$w]}" "${RECV[$w]}")
    mr=$(rate "${ROWS[$w]}" "${MIRR[$w]}")
    if [ "${MIRR[$w]}" = n/a ]; then ratio=n/a; else
        ratio=$(echo "${MIRR[$w]} / ${RECV[$w]}" | bc -l | xargs printf "%.2f"); fi
    printf "%-8s %9s %12.3f %14s %12s %14s %8s\n" "$w" "${ROWS[$w]}" "${RECV[$w]}" "$rr" \
        "$( [ "${MIRR[$w]}" = n/a ] && echo n/a || printf %.3f "${MIRR[$w]}")" "$mr" "$ratio"
done
echo "(ratio = pgmirror time / pg_recvlogical time for the same stream)"
echo
fi
if [ -n "$WIRED" ]; then
printf "%-8s %-6s %-9s %9s %10s %12s %12s\n" wire format client rows "B/row" "client us/row" "server us/row"
for w in $WIRED; do
    for fmt in $WIRE_FORMATS; do
        for who in recv pgm; do
            f=$WORK/wire.$who.$w.$fmt
            printf "%-8s %-6s %-9s %9s %10s %12s %12s\n" "$w" "$fmt" \
                "$( [ $who = recv ] && echo recvlogical || echo pgmirror)" "${WROWS[$w]}" \
                "$(wire_per_row "$f" bytes_in "${WROWS[$w]}" 1)" \
                "$(wire_per_row "$f" client_cpu "${WROWS[$w]}" 1000000)" \
                "$(wire_per_row "$f" server_cpu "${WROWS[$w]}" 1000000)"
        done
    done
done
echo "(bench/wire.py: B/row = bytes the server sent over all the client's connections per row change,"
echo " TCP/IP headers not counted; client = its user+system CPU; server = the CPU of the walsender and any"
echo " other backend that served it; medians of $REPEATS runs; pgmirror's formats: $WIRE_FORMATS)"
echo
fi
if wanted copy; then
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
[ "$COPY_PAIR" = n/a ] || printf "(paired rate, the median of each repeat's own rate, its two runs back to back: %.2f)\n" "$COPY_PAIR"
if [ "$COPY_PGM" != n/a ] && [ "$COPY_BESIDE" != n/a ]; then
    printf "%-8s %9s %12.3f %14s %12.3f %14s %8s\n" beside "$CN" "$COPY_BESIDE" \
        "$(rate "$CN" "$COPY_BESIDE")" "$COPY_PGM" "$(rate "$CN" "$COPY_PGM")" \
        "$(echo "$COPY_BESIDE / $COPY_PGM" | bc -l | xargs printf "%.2f")"
    echo "(beside = SQLite alone again, while the server sends the table to a psql beside it in binary, as it"
    echo " sends it to pgmirror's reader: the two cores' load of pgmirror's copy, without its pipeline)"
fi
if [ "$COPY_ROLLBACK" != n/a ] && [ "$COPY_BIGPAGES" != n/a ]; then
    printf "%-8s %9s %12s %14s %12s\n" outside rows "alone s" "alone rows/s" "of COPY's"
    printf "%-8s %9s %12.3f %14s %12.2f\n" rollback "$CN" "$COPY_ROLLBACK" \
        "$(rate "$CN" "$COPY_ROLLBACK")" "$(echo "$COPY_PSQL / $COPY_ROLLBACK" | bc -l)"
    printf "%-8s %9s %12.3f %14s %12.2f\n" 64kpages "$CN" "$COPY_BIGPAGES" \
        "$(rate "$CN" "$COPY_BIGPAGES")" "$(echo "$COPY_PSQL / $COPY_BIGPAGES" | bc -l)"
    echo "(SQLite alone outside the mirror's settings, which a mirror may not leave: a rollback journal,"
    echo " which writes new pages once where the WAL writes them twice, but locks readers out while it"
    echo " writes; 64 kB pages in WAL mode, which make every small transaction write 64 kB per page"
    echo " it touches; of COPY's = COPY's time / this one's, as for pgmirror's rate against COPY)"
fi
echo
fi
if wanted keyless; then
printf "%-8s %9s %9s %12s %14s %8s\n" changes rows changes "keyed s" "keyless s" "ratio"
printf "%-8s %9s %9s %12s %14s %8s\n" single "$KROWS" "$((2 * KCHANGES))" "$(secs "${KTIME[keyed]}")" \
    "$(secs "${KTIME[keyless]}")" "$(ratio_of "${KTIME[keyless]}" "${KTIME[keyed]}")"
echo "(pgmirror applying $KCHANGES single-row DELETE and $KCHANGES single-row UPDATE transactions;"
echo " ratio = REPLICA IDENTITY FULL table without a key / the same table with a primary key)"
echo
fi
if wanted addcol; then
printf "%-8s %9s %14s %14s %8s\n" addcol rows "first run s" "ADD COLUMN s" "ratio"
printf "%-8s %9s %14s %14s %8s\n" default "$AROWS" "$(secs "$A_FIRST")" "$(secs "$A_ADD")" \
    "$(ratio_of "$A_ADD" "$A_FIRST")"
echo "(ADD COLUMN ... DEFAULT on a keyed table: pgmirror's time to follow it, the rebuild and"
echo " the refill from the source; ratio = that / pgmirror's first run on the same table)"
fi
if [ -s "$WORK/pgmirror.err" ]; then
    echo; echo "pgmirror stderr (last lines):"; tail -n 5 "$WORK/pgmirror.err"
fi
psql -X -q -d "${PGDATABASE:-postgres}" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
