#!/bin/sh
# Installs the build tree into a temporary prefix, checks the installed files,
# then builds examples/gemm.c against it with CMake (find_package: the shared
# and the static library) and with pkg-config, and runs each build.
# Usage: test_install.sh CMAKE BUILD_DIR EXAMPLES_DIR LIBDIR [CFLAGS]
# CFLAGS go to every example build (a sanitizer build's -fsanitize=...).
set -eu
cmake=$1 build=$2 examples=$3 libdir=$4 cflags=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
for f in "$libdir/libonegpu.so" "$libdir/libonegpu.a" include/onegpu.h include/onegpu_formats.h \
         bin/ogtune "$libdir/pkgconfig/onegpu.pc" "$libdir/cmake/onegpu/onegpuConfig.cmake" \
         "$libdir/cmake/onegpu/onegpuConfigVersion.cmake"; do
  [ -f "$prefix/$f" ] || { echo "test_install: $f was not installed" >&2; exit 1; }
done
"$prefix/bin/ogtune" devices >/dev/null
# Every pre-tuned database the build made (from db/pretuned/*.sql) is installed.
for db in "$build"/pretuned/*.db; do
  [ -e "$db" ] || continue
  [ -f "$prefix/share/onegpu/$(basename "$db")" ] ||
    { echo "test_install: share/onegpu/$(basename "$db") was not installed" >&2; exit 1; }
done

"$cmake" -S "$examples" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$cflags" >/dev/null
"$cmake" --build "$tmp/cmake" >/dev/null
"$tmp/cmake/gemm"
"$tmp/cmake/gemm_static"

# shellcheck disable=SC2046,SC2086 # pkg-config's output and CFLAGS are word lists
cc $cflags -o "$tmp/gemm_pc" "$examples/gemm.c" \
   $(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs onegpu)
LD_LIBRARY_PATH="$prefix/$libdir" "$tmp/gemm_pc"
