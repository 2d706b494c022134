#!/bin/sh
# An application linked against the build's libonegpu.so starts in the Mesa 26
# lane with no LD_LIBRARY_PATH: `mesa26.sh run` keeps the program's own
# RUNPATH behind the tree's library directory, and resolves its $ORIGIN to
# the original program's directory (the lane runs a copy elsewhere). gemm
# (examples/gemm.c) runs as linked (the build directory in its RUNPATH) and
# as a copy that finds the library through $ORIGIN only, each on the lane's
# lavapipe (the device `ogtune devices` names there).
# Usage: test_lane_library.sh MESA26_SH OGTUNE GEMM LIBDIR
set -eu
mesa26=$1 ogtune=$2 gemm=$3 libdir=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset LD_LIBRARY_PATH
device=$("$mesa26" run "$ogtune" devices | sed -n 's/^0: //p' | sed 's/) (.*/)/')
[ -n "$device" ] || { echo "test_lane_library: ogtune devices named no device in the lane" >&2; exit 1; }
mkdir "$tmp/bin"
ln -s "$libdir" "$tmp/bin/lib"
cp "$gemm" "$tmp/bin/gemm"
# shellcheck disable=SC2016 # $ORIGIN is the dynamic linker's
patchelf --set-rpath '$ORIGIN/lib' "$tmp/bin/gemm"
for program in "$gemm" "$tmp/bin/gemm"; do
  out=$("$mesa26" run "$program" 2>&1) ||
    { echo "test_lane_library: $program (RUNPATH $(patchelf --print-rpath "$program")) failed in the lane: $out" >&2; exit 1; }
  case $out in
    *"on $device matches the host loop"*) ;;
    *) echo "test_lane_library: $program did not run on the lane's $device: $out" >&2; exit 1 ;;
  esac
done
echo "test_lane_library: gemm, linked against $libdir/libonegpu.so, ran on $device by its RUNPATH and by \$ORIGIN"
