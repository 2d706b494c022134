#!/bin/sh
# Installs the build tree into a temporary prefix, checks the installed files
# and that the libraries define no name of Vulkan or volk, then builds
# examples/gemm.c and examples/vulkan_app.c (which calls Vulkan itself)
# against it with CMake (find_package: the shared and the static library)
# and with pkg-config, and runs each build.
# Usage: test_install.sh CMAKE BUILD_DIR EXAMPLES_DIR LIBDIR [CFLAGS]
# CFLAGS go to every example build (a sanitizer build's -fsanitize=...).
set -eu
cmake=$1 build=$2 examples=$3 libdir=$4 cflags=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
for f in "$libdir/libonegpu.so" "$libdir/libonegpu.a" "$libdir/libonegpu_blas.so" include/onegpu.h include/onegpu_formats.h \
         bin/ogtune "$libdir/pkgconfig/onegpu.pc" "$libdir/cmake/onegpu/onegpuConfig.cmake" \
         "$libdir/cmake/onegpu/onegpuConfigVersion.cmake"; do
  [ -f "$prefix/$f" ] || { echo "test_install: $f was not installed" >&2; exit 1; }
done
"$prefix/bin/ogtune" devices >/dev/null
# No name of the Vulkan API (vk...), nor of volk (volk...), is defined by
# the libraries for an application's link to meet: volk's are og_vk...,
# og_volk... (runtime/vk/og_volk.h), and the shared library hides them too.
defined=$(nm -g --defined-only "$prefix/$libdir/libonegpu.a"; nm -D --defined-only "$prefix/$libdir/libonegpu.so")
echo "$defined" | grep -q ' og_vkCreateInstance$' ||
  { echo "test_install: libonegpu.a defines no og_vkCreateInstance (volk renamed?)" >&2; exit 1; }
names=$(echo "$defined" | awk '$NF ~ /^(vk|volk)[A-Z]/ { print $NF }' | sort -u)
[ -z "$names" ] ||
  { echo "test_install: the libraries define names of Vulkan or volk: $(echo "$names" | tr '\n' ' ')" >&2; exit 1; }
# Every pre-tuned database the build made (from db/pretuned/*.sql) is installed.
for db in "$build"/pretuned/*.db; do
  [ -e "$db" ] || continue
  [ -f "$prefix/share/onegpu/$(basename "$db")" ] ||
    { echo "test_install: share/onegpu/$(basename "$db") was not installed" >&2; exit 1; }
done

# An installed pre-tuned database is read by users who may not write
# share/onegpu (a database in SQLite's WAL mode could not be: it needs its
# -shm file beside it): another user, reading a copy in a directory it may
# not write, gets the choice its owner gets; on lavapipe, from the records.
for db in "$prefix"/share/onegpu/*.db; do
  [ -e "$db" ] || continue
  select="select --shape 1x768x768 --db"
  # shellcheck disable=SC2086 # $select is a word list
  want=$(OG_TUNING_DB= "$prefix/bin/ogtune" $select "$db" 2>&1)
  case $db in
    */llvmpipe.db) if "$prefix/bin/ogtune" devices | grep -q llvmpipe; then
        case $want in *"(db)") ;; *) echo "test_install: $db gave no record: $want" >&2; exit 1 ;; esac
      fi ;;
  esac
  mkdir "$tmp/ro" "$tmp/home" && cp "$db" "$tmp/ro/" && chmod 555 "$tmp/ro"
  as_reader=
  if [ "$(id -u)" = 0 ]; then
    # root may write anywhere: read as nobody, who needs to reach the prefix.
    id nobody >/dev/null && command -v runuser >/dev/null ||
      { echo "test_install: reading as another user needs the user nobody and runuser" >&2; exit 1; }
    chmod 755 "$tmp" && chown nobody "$tmp/home"
    as_reader="runuser -u nobody --"
  fi
  # shellcheck disable=SC2086 # $as_reader and $select are word lists
  got=$($as_reader env HOME="$tmp/home" XDG_CACHE_HOME="$tmp/home" OG_TUNING_DB= \
        "$prefix/bin/ogtune" $select "$tmp/ro/$(basename "$db")" 2>&1)
  [ "$got" = "$want" ] ||
    { echo "test_install: $(basename "$db") read from a directory the reader may not write: '$got', not '$want'" >&2; exit 1; }
  rm -rf "$tmp/ro" "$tmp/home"
done

# shellcheck source=tests/og_examples.sh
. "$(dirname "$0")/og_examples.sh"
og_examples "$cmake" "$examples" "$tmp" "$cflags" -DCMAKE_PREFIX_PATH="$prefix" \
  "$prefix/$libdir/pkgconfig" "$prefix/$libdir"

# The prefix is not the one the build was configured for, yet its programs
# find its pre-tuned databases with no OG_PRETUNED_DIR (and no user cache):
# ogtune (libonegpu.a, in bin/) and gemm (libonegpu.so) look in the prefix's
# share/onegpu, found from their own files; gemm_static, linked statically
# outside the prefix, is pointed there by OG_PRETUNED_DIR. On lavapipe the
# shipped llvmpipe.db has records for both shapes, so each kernel must come
# from a database ("(db" in the choice), not be the built-in default.
if [ -f "$prefix/share/onegpu/llvmpipe.db" ] && "$prefix/bin/ogtune" devices | grep -q llvmpipe; then
  mkdir "$tmp/fresh"
  fresh="env -u OG_PRETUNED_DIR -u OG_TUNING_DB HOME=$tmp/fresh XDG_CACHE_HOME=$tmp/fresh"
  for run in "$prefix/bin/ogtune select --shape 1x768x768" "$tmp/cmake/gemm" \
             "OG_PRETUNED_DIR=$prefix/share/onegpu $tmp/cmake/gemm_static"; do
    # shellcheck disable=SC2086 # $fresh and $run are word lists
    got=$($fresh $run 2>&1)
    case $got in
      *"(db"*) ;;
      *) echo "test_install: '$run' found no pre-tuned database in $prefix: $got" >&2; exit 1 ;;
    esac
  done
fi
