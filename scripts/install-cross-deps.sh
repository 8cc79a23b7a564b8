#!/usr/bin/env bash
# install-cross-deps.sh: installs what the arm64 and armhf cross builds, their
# tests under qemu-user and the Debian package need (with sudo when not
# root): the two foreign architectures (Debian multiarch), the cross
# compilers, the target's libraries, qemu-user, and the packaging tools.
# Like install-deps.sh it does nothing when everything is present, unless
# given --always (CI).
set -euo pipefail

arches=(arm64 armhf)
packages=(
	crossbuild-essential-arm64 crossbuild-essential-armhf
	qemu-user
	debhelper dh-autoreconf dpkg-dev fakeroot lintian pkgconf
)
for a in "${arches[@]}"; do
	packages+=("libpq-dev:$a" "libsqlite3-dev:$a" "libcmocka-dev:$a" "pkgconf:$a")
done

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo

missing=()
for a in "${arches[@]}"; do
	dpkg --print-foreign-architectures | grep -qx "$a" || missing+=("arch:$a")
done
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ "${1:-}" != --always ] && [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

for a in "${arches[@]}"; do
	$sudo dpkg --add-architecture "$a"
done
echo "install-cross-deps: installing ${missing[*]:-${packages[*]}}" >&2
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${packages[@]}"
