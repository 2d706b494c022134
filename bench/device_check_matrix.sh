#!/usr/bin/env bash
# Device check of the cooperative-matrix kernels (issue "Matrix hardware"),
# for a machine with an NVIDIA GPU and no package access. Two steps:
#
#   bench/device_check_matrix.sh prepare   here (Debian 12, packages at hand):
#       builds the project and gathers what the binaries load at run time
#       (the shared libraries, glibc's loader, and the Vulkan loader from
#       Debian's libvulkan1) into build/device/, about 30 MB
#   bench/device_check_matrix.sh run       there (the working tree with
#       build/ogtune, build/tests/test_matrix and build/device carried along,
#       about 40 MB: the device tool's carry takes exactly these three paths):
#       prints the device and its matrix capabilities, the choice and its
#       reasons, runs the correctness tests of the matrix variants, and times
#       float16 GEMM with the 8- and 4-subgroup kernels against the portable
#       64x64 tile at 1024, 2048 and 4096 cubed and the reference design's
#       BERT shapes. Output goes to stdout and, when $OUT is set, to
#       $OUT/device_check_matrix.log. About 5 minutes on an H200.
set -euo pipefail
cd "$(dirname "$0")/.."
step=${1:-}
lib=build/device/lib

if [ "$step" = prepare ]; then
  scripts/build.sh
  rm -rf build/device && mkdir -p "$lib"
  for bin in build/ogtune build/tests/test_matrix; do
    ldd "$bin" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }' |
      while read -r so; do cp -L "$so" "$lib/"; done
  done
  loader=$(ldconfig -p | awk '/libvulkan\.so\.1 .*x86-64/ { print $NF; exit }')
  if [ -z "$loader" ]; then
    (cd build/device && apt-get download libvulkan1 && dpkg-deb -x libvulkan1_*.deb pkg)
    loader=$(find build/device/pkg -name 'libvulkan.so.1*' -type f | head -n1)
  fi
  cp -L "$loader" "$lib/libvulkan.so.1"
  du -sh build/device
  exit 0
fi
if [ "$step" != run ]; then
  echo "usage: $0 prepare|run" >&2
  exit 2
fi

log=${OUT:-/tmp}/device_check_matrix.log
exec > >(tee "$log") 2>&1
# The binaries run with the device's own glibc when it is new enough (the
# other carried libraries on LD_LIBRARY_PATH), else with the glibc carried
# along, through its loader.
[ -x "$lib/ld-linux-x86-64.so.2" ] || { echo "$0: run '$0 prepare' first" >&2; exit 1; }
export LD_LIBRARY_PATH=$PWD/build/device/lib-no-libc
mkdir -p "$LD_LIBRARY_PATH"
for so in "$lib"/*; do
  case $(basename "$so") in
    libc.so* | ld-linux* | libm.so* | libpthread.so* | libdl.so* | librt.so*) ;;
    *) ln -sf "$PWD/$so" "$LD_LIBRARY_PATH/" ;;
  esac
done
run=()
if ! build/ogtune devices > /dev/null 2>&1; then
  run=("$lib"/ld-linux-x86-64.so.2 --library-path "$PWD/$lib")
fi
ogtune() { "${run[@]}" build/ogtune "$@"; }
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/onegpu-device-check OG_TUNING_DB=

echo "# onegpu device check: cooperative-matrix kernels, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $(nproc) cores"
ogtune devices
echo
echo "## the float16 choice at 1024 cubed, and why"
ogtune select --dtype f16 --shape 1024x1024x1024 --json
echo
echo "## correctness of every matrix variant (quick space) against the float64 reference"
"${run[@]}" build/tests/test_matrix --filter 'matrix/kernels*' --verbose || echo "(FAILED: exit $?)"
echo
bert=128x768x768,128x2304x768,128x3072x768,128x768x3072,1024x768x3072
for shapes in 1024x1024x1024,2048x2048x2048,4096x4096x4096 "$bert"; do
  for sg in "sgx=4,sgy=2" "sgx=2,sgy=2"; do
    params="variant=coopmat,bm=64,bn=64,bk=16,$sg,pad=8,load=staged"
    echo "## float16: $params against the 64x64 portable tile"
    ogtune bench --dtype f16 --shapes "$shapes" --params "$params" || echo "(FAILED: exit $?)"
    echo "## the same with direct fragment loads"
    ogtune bench --dtype f16 --shapes "$shapes" --params "${params/load=staged/load=direct}" ||
      echo "(FAILED: exit $?)"
  done
done
echo
echo "H200 float16 dense peak (NVIDIA's figure): 989 TFLOP/s; divide the GFLOP/s above by it."
