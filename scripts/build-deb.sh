#!/usr/bin/env bash
# build-deb.sh [ARCH]: builds pgmirror's Debian package for ARCH (default:
# this machine's architecture) from a copy of the source tree in
# build/deb-ARCH, and runs lintian on it when lintian is installed. The
# package is build/deb-ARCH/pgmirror_VERSION_ARCH.deb.
#
# The native build is the plain "dpkg-buildpackage -b -us -uc" (with the
# unit tests). A cross build (ARCH arm64 or armhf) is
# "dpkg-buildpackage -a ARCH -Pnocheck -b -us -uc" with the target's
# libraries from scripts/cross-sysroot.sh (PGMIRROR_SYSROOT, read by
# debian/rules) instead of installed ARCH packages, so dpkg-buildpackage
# does not check the build dependencies (-d): see cross-sysroot.sh for why.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
native=$(dpkg --print-architecture)
arch=${1:-$native}
out=$top/build/deb-$arch
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -SVersion)

rm -rf "$out"
mkdir -p "$out/pgmirror-$version"
# the source tree without builds, git data and the demo's mirror
tar -C "$top" --exclude=./build --exclude=./.git --exclude='./demo.db*' \
	--exclude=./autom4te.cache -cf - . | tar -C "$out/pgmirror-$version" -xf -
cd "$out/pgmirror-$version"
if [ "$arch" = "$native" ]; then
	dpkg-buildpackage -b -us -uc -j"${JOBS:-2}"
else
	PGMIRROR_SYSROOT=$("$top/scripts/cross-sysroot.sh" "$arch") \
	DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
		dpkg-buildpackage -a"$arch" -Pnocheck -d -b -us -uc -j"${JOBS:-2}"
fi
cd "$out"
rm -rf "pgmirror-$version"
deb=$out/pgmirror_${version}_$arch.deb
dpkg-deb -I "$deb" | sed -n 's/^ \(Depends\|Architecture\):/  &/p'
dpkg-deb -c "$deb" | awk '{print "  " $6}' | grep -E 'bin/|man1/|examples/|systemd/|lib/pgmirror/'
if command -v lintian >/dev/null; then
	lintian --fail-on error,warning "$out"/pgmirror_"${version}"_"$arch".changes
fi
echo "build-deb: $deb"
echo "build-deb: install it with: sudo apt install $deb"
