#!/bin/sh
# onegpu used from its build tree, uninstalled: <build>/onegpu.pc
# (PKG_CONFIG_PATH=<build>) and the CMake package exported there
# (-Donegpu_DIR=<build>) name directories that exist, and the examples build
# against them and run (tests/og_examples.sh); its programs, and those linked
# against its libonegpu.so, find its own pre-tuned databases.
# Usage: test_build_tree.sh CMAKE BUILD_DIR EXAMPLES_DIR [CFLAGS]
set -eu
cmake=$1 build=$2 examples=$3 cflags=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for variable in includedir libdir; do
  dir=$(PKG_CONFIG_PATH="$build" pkg-config --variable="$variable" onegpu)
  [ -d "$dir" ] || { echo "test_build_tree: onegpu.pc's $variable '$dir' does not exist" >&2; exit 1; }
done
[ -f "$(PKG_CONFIG_PATH="$build" pkg-config --variable=includedir onegpu)/onegpu.h" ] ||
  { echo "test_build_tree: onegpu.pc's includedir has no onegpu.h" >&2; exit 1; }
[ -f "$(PKG_CONFIG_PATH="$build" pkg-config --variable=libdir onegpu)/libonegpu.so" ] ||
  { echo "test_build_tree: onegpu.pc's libdir has no libonegpu.so" >&2; exit 1; }

# shellcheck source=tests/og_examples.sh
. "$(dirname "$0")/og_examples.sh"
og_examples "$cmake" "$examples" "$tmp" "$cflags" -Donegpu_DIR="$build" "$build" "$build"
echo "test_build_tree: the examples built from the build tree (pkg-config and CMake) and ran"

# The build tree's programs find the build tree's own pre-tuned databases
# (<build>/pretuned, made from db/pretuned/*.sql) with no OG_PRETUNED_DIR and
# an empty cache: ogtune (libonegpu.a, in the build tree) and gemm (built
# outside, linked against the build's libonegpu.so). On lavapipe the shipped
# llvmpipe.db has a record for the shape, so the kernel must come from that
# database, not be the built-in default.
real=$(cd "$build" && pwd -P)
if [ -f "$build/pretuned/llvmpipe.db" ] && "$build/ogtune" devices | grep -q llvmpipe; then
  mkdir "$tmp/fresh"
  fresh="env -u OG_PRETUNED_DIR -u OG_TUNING_DB HOME=$tmp/fresh XDG_CACHE_HOME=$tmp/fresh"
  # shellcheck disable=SC2086 # $fresh is a word list
  got=$($fresh "$build/ogtune" select --shape 1x768x768 --json 2>&1)
  case $got in
    *'"source":"db"'*'"database":"'"$real"'/pretuned/llvmpipe.db"'*) ;;
    *) echo "test_build_tree: ogtune select chose no record of $real/pretuned/llvmpipe.db: $got" >&2; exit 1 ;;
  esac
  # shellcheck disable=SC2086 # $fresh is a word list
  got=$($fresh "$tmp/cmake/gemm" 2>&1)
  case $got in
    *"(db"*) ;;
    *) echo "test_build_tree: gemm (the build's libonegpu.so) found no pre-tuned database: $got" >&2; exit 1 ;;
  esac
  echo "test_build_tree: ogtune and gemm chose records of the build tree's pretuned/llvmpipe.db"
fi
