#!/bin/sh
# onegpu used from its build tree, uninstalled: <build>/onegpu.pc
# (PKG_CONFIG_PATH=<build>) and the CMake package exported there
# (-Donegpu_DIR=<build>) name directories that exist, and the examples build
# against them and run (tests/og_examples.sh).
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
