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
#       finds the GPU's Vulkan driver manifest first (bench/device_env.sh says
#       how; it exits non-zero, listing where it looked, when there is none),
#       prints the device, the memory it measures in ("# measuring in:", from
#       the "memory_placement" of `ogtune devices --json`; OG_STAGING is
#       unset, so buffers are device-local) and the choice and its reasons,
#       runs the correctness tests of the matrix variants, and times
#       float16 GEMM with the 8- and 4-subgroup kernels against the portable
#       64x64 tile at 1024, 2048 and 4096 cubed and the reference design's
#       BERT shapes. Output goes to stdout and, when $OUT is set, to
#       $OUT/device_check_matrix.log. About 5 minutes on an H200.
#       DEVICE_CHECK_QUICK=1 stops after the driver and device section (a
#       rehearsal, e.g. here on lavapipe).
#
# The steps shared with other device scripts live in bench/device_env.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/device_env.sh
. bench/device_env.sh
step=${1:-}

if [ "$step" = prepare ]; then
  device_prepare build/ogtune build/tests/test_matrix
  exit 0
fi
if [ "$step" != run ]; then
  echo "usage: $0 prepare|run" >&2
  exit 2
fi

log=${OUT:-/tmp}/device_check_matrix.log
exec > >(tee "$log") 2>&1
echo "# onegpu device check: cooperative-matrix kernels, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $(nproc) cores"
device_find_icd
device_run_env build/ogtune
run=("${DEVICE_RUN[@]}")
ogtune() { "${run[@]}" build/ogtune "$@"; }
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/onegpu-device-check OG_TUNING_DB=
unset OG_STAGING # device-local buffers, not the staging path

ogtune devices
placement=$(ogtune devices --json 2> /dev/null |
  grep -o '"memory_placement"[[:space:]]*:[[:space:]]*\("[^"]*"\|{[^}]*}\|[^,}]*\)' |
  sed 's/^"memory_placement"[[:space:]]*:[[:space:]]*//; s/^"\(.*\)"$/\1/') || true
if [ -n "$placement" ]; then
  echo "$placement" | while read -r p; do echo "# measuring in: $p"; done
else
  echo "# measuring in: (ogtune devices does not report it)"
fi
echo
echo "## the float16 choice at 1024 cubed, and why"
ogtune select --dtype f16 --shape 1024x1024x1024 --json
if [ "${DEVICE_CHECK_QUICK:-}" = 1 ]; then
  echo "# DEVICE_CHECK_QUICK=1: stopping after the driver and device section"
  exit 0
fi
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
