#!/usr/bin/env bash
# demo.sh: pgmirror's main job on a throwaway local PostgreSQL.
#
# Builds pgmirror (in build/default) if needed, starts a temporary cluster
# with pg_virtualenv, loads a small shop with a few rows (sql/demo.sql),
# runs pgmirror once (it creates its slot and copies the rows), makes some
# changes (sql/demo-changes.sql), runs pgmirror --once again, and shows the
# mirror with sqlite3. The mirror stays in ./demo.db to query afterwards.
# PGMIRROR names another binary to run, such as the installed
# /usr/bin/pgmirror of the Debian package.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"

bin=$top/build/default/pgmirror
[ -x "$top/pgmirror" ] && bin=$top/pgmirror
if [ -n "${PGMIRROR:-}" ]; then
	bin=$PGMIRROR
	[ -x "$bin" ] || { echo "demo: PGMIRROR=$bin is not an executable" >&2; exit 1; }
elif [ ! -x "$bin" ]; then
	echo "demo: building pgmirror in build/default" >&2
	(cd "$top" && autoreconf -fi >/dev/null 2>&1)
	mkdir -p "$top/build/default"
	(cd "$top/build/default" && "$top/configure" -q && make -s -j2)
fi

mirror=$PWD/demo.db
rm -f "$mirror" "$mirror-wal" "$mirror-shm"

export bin mirror top
pg_virtualenv -t -o wal_level=logical bash -euc '
	say() { printf "\n\033[1m%s\033[0m\n" "$*"; }
	psql -q -v ON_ERROR_STOP=1 -f "$top/sql/demo.sql"
	say "\$ pgmirror -d dbname=$PGDATABASE -P shop --once -v demo.db    # first run: slot + initial copy"
	"$bin" -d "dbname=$PGDATABASE" -P shop --once -v "$mirror"
	say "\$ sqlite3 -header -column demo.db \"SELECT * FROM products ORDER BY id\"    # the copied rows"
	sqlite3 -header -column "$mirror" "SELECT * FROM products ORDER BY id"
	psql -q -v ON_ERROR_STOP=1 -f "$top/sql/demo-changes.sql"
	say "\$ pgmirror -d dbname=$PGDATABASE --once demo.db              # later runs (cron): catch up, exit"
	"$bin" -d "dbname=$PGDATABASE" --once "$mirror"
	say "\$ sqlite3 -header -column demo.db \"SELECT * FROM products ORDER BY id\""
	sqlite3 -header -column "$mirror" "SELECT * FROM products ORDER BY id"
	say "\$ sqlite3 -header -column demo.db \"SELECT * FROM orders ORDER BY id\""
	sqlite3 -header -column "$mirror" "SELECT * FROM orders ORDER BY id"
	say "\$ pgmirror --status demo.db"
	"$bin" --status "$mirror"
'
printf '\nThe mirror is %s; query it with: sqlite3 demo.db\n' "$mirror"
