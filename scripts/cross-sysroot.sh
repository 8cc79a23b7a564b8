#!/usr/bin/env bash
# cross-sysroot.sh ARCH: prints the directory of a sysroot for Debian
# architecture ARCH (arm64, armhf), making it first when it is missing or
# out of date.
#
# Why not "dpkg --add-architecture ARCH; apt-get install libpq-dev:ARCH":
# Debian 12's libpq-dev is not Multi-Arch, so libpq-dev:arm64 would replace
# the machine's own libpq-dev (and arm64 and armhf exclude each other); a
# foreign Multi-Arch: same library must have exactly the version of the
# native one, which a mirror halfway through a security update does not
# always offer; and a foreign architecture whose index fails to download
# makes every "apt-get update" on the machine fail. So this script keeps
# its own apt index of ARCH (the machine's sources, in DIR/../apt-ARCH) and
# unpacks the target's packages instead of installing them:
#
#   DIR/root   the unpacked packages: libpq-dev, libsqlite3-dev,
#              libcmocka-dev, libzstd-dev, libssl-dev, libjansson-dev and
#              the libraries they need, with the target's libc6 (qemu-user
#              runs the tests with -L DIR/root);
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
roots=(libpq-dev libsqlite3-dev libcmocka-dev libzstd-dev libssl-dev libjansson-dev)
skip='^(libc6-dev|libc-dev-bin|linux-libc-dev|libcrypt-dev|libnsl-dev|libtirpc-dev|rpcsvc-proto)$'

# apt for ARCH alone, with its own index and no installed packages
aptdir=$base/apt-$arch
mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial"
: >"$aptdir/status"
apt=(-o APT::Architecture="$arch" -o APT::Architectures::="$arch"
	-o Dir::State::Lists="$aptdir/lists" -o Dir::State::status="$aptdir/status"
	-o Dir::Cache="$aptdir/cache" -o Debug::NoLocking=1 -q)
# a failed index (a mirror in the middle of a sync) leaves the previous one
apt-get "${apt[@]}" update >&2 ||
	echo "cross-sysroot: apt-get update for $arch reported errors; going on" >&2

# the packages and versions the sysroot is made of
want=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests \
		--no-conflicts --no-breaks --no-replaces --no-enhances \
		"${roots[@]}" 2>/dev/null |
	grep -E '^[a-z0-9][a-z0-9.+-]*$' | sort -u | grep -Ev "$skip" |
	xargs apt-cache "${apt[@]}" show --no-all-versions 2>/dev/null |
	awk '/^Package:/ {p = $2} /^Version:/ {print p "=" $2}' | sort -u)
if [ -z "$want" ] || ! grep -q '^libpq5=' <<<"$want"; then
	echo "cross-sysroot: apt knows no libpq5 for $arch: see the errors of apt-get update above" >&2
	exit 1
fi
if [ -f "$dir/packages" ] && [ "$(cat "$dir/packages")" = "$want" ] &&
	[ "$(cat "$dir/format" 2>/dev/null)" = 4 ]; then
	echo "$dir"
	exit 0
fi

echo "cross-sysroot: making $dir" >&2
# made in DIR.new, then moved in place: a test may be using the old one
new=$dir.new
rm -rf "$new"
mkdir -p "$new/debs" "$new/root" "$new/admin/info" "$new/admin/updates"
chmod 777 "$new/debs" # apt downloads as _apt
(cd "$new/debs" && apt-get "${apt[@]}" download $want >&2)
printf '%s\n' amd64 arm64 armhf >"$new/admin/arch"
echo 1 >"$new/admin/info/format"   # list files named PACKAGE:ARCH.list
: >"$new/admin/status"
ctl=$(mktemp -d)
trap 'rm -rf "$ctl"' EXIT
for deb in "$new"/debs/*.deb; do
	dpkg-deb -x "$deb" "$new/root"
	rm -rf "${ctl:?}"/*
	dpkg-deb -e "$deb" "$ctl"
	# dpkg names the files of a Multi-Arch: same package PACKAGE:ARCH.*
	pkg=$(dpkg-deb -f "$deb" Package)
	[ "$(dpkg-deb -f "$deb" Multi-Arch)" != same ] || pkg=$pkg:$arch
	for f in shlibs symbols; do
		[ -f "$ctl/$f" ] && cp "$ctl/$f" "$new/admin/info/$pkg.$f"
	done
	dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' -e '/^\/*$/d' |
		sed "s|^|$dir/root|" >"$new/admin/info/$pkg.list"
	{
		dpkg-deb -f "$deb" | sed '1a Status: install ok installed'
		echo
	} >>"$new/admin/status"
done
rm -rf "$new/debs"
echo "$want" >"$new/packages"
echo 4 >"$new/format"   # of this script's sysroots
rm -rf "$dir"
mv "$new" "$dir"
echo "$dir"
