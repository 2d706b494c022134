#!/usr/bin/env bash
# Device check of float32 recovered from float16 products on a matrix
# engine (docs/recovered-float32.md), for a machine with an NVIDIA GPU and no
# package access; prepared as bench/device_check_matrix.sh is:
#
#   bench/device_check_recovered.sh prepare   here: builds, gathers build/device
#   bench/device_check_recovered.sh run       there (carry build/ogtune and
#       build/device): the error table of `ogtune accuracy` (float32, float16,
#       recovered, scaled; error = max |C - C64| / (|A| |B|)) at K = 16, 256
#       and 4096, where the error of an accumulator that rounds toward zero
#       grows with K and one of lost residuals does not; then the recovered
#       kernel timed against the recovered 64x64 tile at 2048 cubed (ogtune
#       bench verifies each kernel against the float64 reference first).
#       With OG_TRY_TEMPLATES=DIR, both again with the templates of DIR
#       (OG_TEMPLATE_DIR: a changed template measured without a rebuild).
# Output goes to stdout and, when $OUT is set, $OUT/device_check_recovered.log.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/device_env.sh
. bench/device_env.sh
case ${1:-} in
  prepare) device_prepare build/ogtune; exit 0 ;;
  run) ;;
  *) echo "usage: $0 prepare|run" >&2; exit 2 ;;
esac

exec > >(tee "${OUT:-/tmp}/device_check_recovered.log") 2>&1
echo "# onegpu device check: recovered float32, $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores"
device_find_icd
device_run_env build/ogtune
ogtune() { "${DEVICE_RUN[@]}" build/ogtune "$@"; }
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/onegpu-device-check OG_TUNING_DB=
unset OG_STAGING
ogtune devices | head -n 1

tiles=(variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,load=staged
  variant=coopmat,bm=128,bn=128,bk=16,sgx=2,sgy=2,pad=0,load=staged,buf=2)
check() {
  echo "## $1: the error table (the default recovered kernel)"
  ogtune accuracy --shapes 256x256x16,256x256x256,256x256x4096 || echo "(FAILED: exit $?)"
  local p
  for p in "${tiles[@]}"; do
    echo "## $1: $p against the recovered 64x64 tile"
    ogtune bench --precision recovered --shapes 2048x2048x2048 --params "$p" ||
      echo "(FAILED: exit $?)"
  done
}
check "shipped templates"
if [ -n "${OG_TRY_TEMPLATES:-}" ]; then
  OG_TEMPLATE_DIR=$PWD/$OG_TRY_TEMPLATES check "templates of $OG_TRY_TEMPLATES"
fi
