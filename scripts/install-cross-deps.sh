#!/usr/bin/env bash
# install-cross-deps.sh: installs what the arm64 and armhf cross builds, their
# tests under qemu-user and the Debian package need (with sudo when not
# root): the cross compilers (crossbuild-essential-ARCH), qemu-user, and the
# packaging tools; then makes the sysroots of the targets' libraries
# (libpq-dev, libsqlite3-dev, libcmocka-dev, libzstd-dev, libssl-dev and
# libjansson-dev of ARCH: scripts/cross-sysroot.sh says why they are
# unpacked there rather than installed with
# "dpkg --add-architecture"). Like install-deps.sh it installs nothing when
# everything is present, unless given --always (CI).
set -euo pipefail

arches=(arm64 armhf)
packages=(
	crossbuild-essential-arm64 crossbuild-essential-armhf
	qemu-user
	debhelper dh-autoreconf dpkg-dev fakeroot lintian pkgconf
)

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ "${1:-}" = --always ] || [ ${#missing[@]} -gt 0 ]; then
	echo "install-cross-deps: installing ${missing[*]:-${packages[*]}}" >&2
	$sudo apt-get update
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${packages[@]}"
fi
for a in "${arches[@]}"; do
	"$(dirname "$0")/cross-sysroot.sh" "$a" >/dev/null
done
