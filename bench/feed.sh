#!/bin/bash
# feed.sh: what a feed (--feed, --from; docs/feed.md) costs a hub and gives
# a device, side by side in one run, against the same mirror without it.
#
#   bench/feed.sh [-b PGMIRROR] [-n CHANGES] [-r REPEATS] [-p PARTS] [-l TXNS] [-R RATE] [-k]
#
# PGMIRROR: the binary (default build/default/pgmirror, as check.sh builds
# it, else ./pgmirror). CHANGES: the backlogs' size (default 1000000).
# REPEATS: default 3 (medians are printed). PARTS (comma-separated, default
# all): hub (the hub's CPU and the feed's bytes on a mix of small and large
# transactions of inserts, updates and deletes; the same backlog caught up
# by a device from the feed and by a plain mirror from PostgreSQL),
# catchup (a backlog of CHANGES inserts caught up from the feed, from
# PostgreSQL and by SQLite alone, bench/sqlite_alone.c), live (TXNS small
# transactions, default 25000, of the mix at RATE a second, default 1000,
# followed as they come by a hub service and a plain service; then caught
# up by a device from the feed and by a plain --once), first (a device's
# first run from a snapshot of that CHANGES-row mirror against a plain first
# run that copies it from PostgreSQL), compress (the bench's own segments
# and snapshot compressed with zstd -1, -3, -9 and gzip -6). -k keeps the
# work directory. bench/feed.py's opening comment says what is run and
# measured.
#
# Where it runs: if PGHOST is unset, the script re-executes itself under
#   pg_virtualenv -t -o wal_level=logical -o max_replication_slots=20 \
#                 -o max_wal_senders=20 -o fsync=off
# (a throwaway PostgreSQL 15 cluster; fsync=off only speeds up the
# workload). With PGHOST set it uses that server as is: it needs
# wal_level=logical, and creates and drops a database pgm_feed there.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=
N=1000000
REPEATS=3
PARTS=hub,catchup,live,first,compress
LTXNS=25000
LRATE=1000
KEEP=
while getopts "b:n:r:p:l:R:kh" opt; do
	case $opt in
	b) BIN=$OPTARG ;;
	n) N=$OPTARG ;;
	r) REPEATS=$OPTARG ;;
	p) PARTS=$OPTARG ;;
	l) LTXNS=$OPTARG ;;
	R) LRATE=$OPTARG ;;
	k) KEEP=--keep ;;
	h) sed -n '2,/^set -eu/p' "$0" | sed 's/^# \{0,1\}//;/^set -eu/d'; exit 0 ;;
	*) echo "usage: $0 [-b PGMIRROR] [-n CHANGES] [-r REPEATS] [-p PARTS] [-l TXNS] [-R RATE] [-k]" >&2
	   exit 2 ;;
	esac
done
if [ -z "$BIN" ]; then
	BIN=$HERE/../build/default/pgmirror
	[ -x "$BIN" ] || BIN=$HERE/../pgmirror
fi
[ -x "$BIN" ] || { echo "feed: no pgmirror binary at $BIN (build it, or -b)" >&2; exit 1; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

if [ -z "${PGHOST:-}" ]; then
	exec pg_virtualenv -t -o wal_level=logical -o max_replication_slots=20 \
		-o max_wal_senders=20 -o fsync=off \
		"$0" -b "$BIN" -n "$N" -r "$REPEATS" -p "$PARTS" -l "$LTXNS" -R "$LRATE" ${KEEP:+-k}
fi
exec /usr/bin/python3 "$HERE/feed.py" --pgmirror "$BIN" --changes "$N" --repeats "$REPEATS" \
	--parts "$PARTS" --live-txns "$LTXNS" --live-rate "$LRATE" $KEEP
