#!/usr/bin/env bash
# cross-sysroot.sh ARCH: prints the directory of a sysroot for Debian
# architecture ARCH (arm64, armhf), making it first when it is missing or
# out of date.
#
# Why not "apt-get install libpq-dev:ARCH": Debian 12's libpq-dev is not
# Multi-Arch, so libpq-dev:arm64 replaces the machine's own libpq-dev (and
# arm64 and armhf exclude each other), and a foreign Multi-Arch: same
# library must have exactly the version of the native one, which a mirror
# in the middle of a security update does not always offer. So the target's
# libraries are downloaded with apt-get (the indexes of the foreign
# architecture that install-cross-deps.sh enables) and unpacked here instead:
#
#   DIR/root   the unpacked packages: libpq-dev, libsqlite3-dev,
#              libcmocka-dev and the libraries they need, with the target's
#              libc6 (qemu-user runs the tests with -L DIR/root);
#   DIR/admin  a dpkg database of those packages (paths under DIR/root) for
#              dpkg-shlibdeps --admindir, so that a cross-built package gets
#              its dependencies from the target's symbols files.
#
# The compiler keeps its own C library headers (crossbuild-essential), so
# the -dev packages of the C library itself are left out.
set -euo pipefail

arch=${1:?usage: cross-sysroot.sh ARCH}
base=${PGMIRROR_SYSROOTS:-/var/tmp/pgmirror-sysroot}
dir=$base/$arch
roots=(libpq-dev libsqlite3-dev libcmocka-dev)
skip='^(libc6-dev|libc-dev-bin|linux-libc-dev|libcrypt-dev|libnsl-dev|libtirpc-dev|rpcsvc-proto)$'

# the packages and versions the sysroot is made of
want=$(apt-cache depends --recurse --no-recommends --no-suggests \
		--no-conflicts --no-breaks --no-replaces --no-enhances \
		"${roots[@]/%/:$arch}" 2>/dev/null |
	sed -n "s/^\([a-z0-9][a-z0-9.+-]*\):$arch\$/\1/p" | sort -u |
	grep -Ev "$skip" | sed "s/\$/:$arch/" |
	xargs apt-cache show --no-all-versions 2>/dev/null |
	awk '/^Package:/ {p = $2} /^Version:/ {print p "=" $2}' | sort -u)
if [ -z "$want" ] || ! grep -q '^libpq5=' <<<"$want"; then
	echo "cross-sysroot: no $arch packages known to apt: run scripts/install-cross-deps.sh" >&2
	exit 1
fi
if [ -f "$dir/packages" ] && [ "$(cat "$dir/packages")" = "$want" ]; then
	echo "$dir"
	exit 0
fi

echo "cross-sysroot: making $dir" >&2
rm -rf "$dir"
mkdir -p "$dir/debs" "$dir/root" "$dir/admin/info" "$dir/admin/updates"
chmod 777 "$dir/debs" # apt downloads as _apt
(cd "$dir/debs" && apt-get download -q $(sed "s/=/:$arch=/" <<<"$want") >&2)
printf '%s\n' amd64 arm64 armhf >"$dir/admin/arch"
: >"$dir/admin/status"
ctl=$(mktemp -d)
trap 'rm -rf "$ctl"' EXIT
for deb in "$dir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$dir/root"
	rm -rf "${ctl:?}"/*
	dpkg-deb -e "$deb" "$ctl"
	pkg=$(dpkg-deb -f "$deb" Package):$arch
	for f in shlibs symbols; do
		[ -f "$ctl/$f" ] && cp "$ctl/$f" "$dir/admin/info/$pkg.$f"
	done
	dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' -e '/^\/*$/d' |
		sed "s|^|$dir/root|" >"$dir/admin/info/$pkg.list"
	{
		dpkg-deb -f "$deb" Package
		echo "Status: install ok installed"
		dpkg-deb -f "$deb" Architecture Multi-Arch Version
		echo
	} | sed '1s/^/Package: /' >>"$dir/admin/status"
done
rm -rf "$dir/debs"
echo "$want" >"$dir/packages"
echo "$dir"
