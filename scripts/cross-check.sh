#!/usr/bin/env bash
# cross-check.sh ARCH [TEST...]: cross-builds pgmirror for the Debian
# architecture ARCH (arm64 or armhf) in build/ARCH, warnings as errors, and
# runs its tests under qemu-user: the unit tests, and the integration tests
# named (default: all of them) against a throwaway amd64 PostgreSQL
# (pg_virtualenv). The results are in build/ARCH/test-suite.log.
#
# The target's libraries come from scripts/cross-sysroot.sh; qemu-user runs
# each binary explicitly with -L SYSROOT, so no binfmt support is needed.
# Needs scripts/install-cross-deps.sh (crossbuild-essential-ARCH, qemu-user).
set -euo pipefail

arch=${1:?usage: cross-check.sh ARCH [TEST...]}
shift
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-2}
triplet=$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null)
case $arch in
arm64) qemu=qemu-aarch64 ;;
armhf) qemu=qemu-arm ;;
*) echo "cross-check: unknown architecture $arch: arm64 or armhf" >&2; exit 2 ;;
esac
command -v "$triplet-gcc" >/dev/null && command -v "$qemu" >/dev/null || {
	echo "cross-check: $triplet-gcc or $qemu missing: run scripts/install-cross-deps.sh" >&2
	exit 1
}
root=$("$top/scripts/cross-sysroot.sh" "$arch")/root

build=$top/build/$arch
mkdir -p "$build"
cd "$build"
[ -f "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null 2>&1)
# pkg-config gives the flags of the sysroot's libraries (also when make
# runs configure again); their headers of the architecture's own (OpenSSL's
# opensslconf.h) are under usr/include/TRIPLET, which no .pc file names
export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 \
	PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
if [ ! -f Makefile ]; then
	"$top/configure" -q --enable-werror --host="$triplet" \
		PKG_CONFIG=pkg-config PKG_CONFIG_PATH= \
		PKG_CONFIG_LIBDIR="$root/usr/lib/$triplet/pkgconfig:$root/usr/share/pkgconfig" \
		CPPFLAGS="-isystem $root/usr/include/$triplet" \
		LDFLAGS="-Wl,-rpath-link,$root/usr/lib/$triplet:$root/lib/$triplet"
fi
make -s -j"$jobs"

# runs a target binary: the unit tests through LOG_COMPILER, pgmirror
# through the wrapper that the integration tests get as PGMIRROR
printf '#!/bin/sh\nexec %s -L %s "$@"\n' "$qemu" "$root" >qemu-run
# (a test's LD_PRELOAD fault shim is a target library: it goes to the
# emulated program, not to qemu itself)
cat >pgmirror-qemu <<EOF
#!/bin/sh
if [ -n "\${LD_PRELOAD:-}" ]; then
	preload=\$LD_PRELOAD
	unset LD_PRELOAD
	exec $qemu -L $root -E "LD_PRELOAD=\$preload" $build/pgmirror "\$@"
fi
exec $qemu -L $root $build/pgmirror "\$@"
EOF
printf '#!/bin/sh\nexec %s -L %s %s "$@"\n' "$qemu" "$root" "$build/tests/unit/key_order" \
	>key-order-qemu
chmod +x qemu-run pgmirror-qemu key-order-qemu

tests='$(UNIT_TESTS) $(INTEGRATION_TESTS)'
[ $# -eq 0 ] || tests="\$(UNIT_TESTS) $*"
# the emulated binary is several times slower than a native one
export PGMIRROR_TEST_SLOW=${PGMIRROR_TEST_SLOW:-5}
rm -f test-suite.log
pg_virtualenv -t -o wal_level=logical -o max_replication_slots=80 \
	-o max_wal_senders=80 -o max_prepared_transactions=10 -o fsync=off \
	make -s -j"$jobs" check TESTS="$tests" LOG_COMPILER="$build/qemu-run" \
	PGMIRROR_BIN="$build/pgmirror-qemu" PGMIRROR_KEY_ORDER_BIN="$build/key-order-qemu"
