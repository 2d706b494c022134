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
#       runs the correctness tests of the matrix variants (NV and KHR, as
#       the device lists them), then Int8Gemm (the kernel select chooses,
#       verified exact, against the portable tile at 1024 to 4096 cubed),
#       then times against the portable 64x64 tile, each kernel verified
#       against the float64 reference first (ogtune bench): float16 with
#       the NV and the KHR 8-subgroup tile (staged) and the tuner's
#       double-buffered 128x128x32 tile (direct), and recovered float32
#       (--precision recovered) on the default tile, at 1024, 2048 and 4096
#       cubed, then the reference design's BERT shapes, and where the device
#       enables VK_NV_cooperative_matrix2's flexible dimensions the coopmat2
#       kernel at the cubes; each line ends with
#       the fraction of the H200's dense peak
#       (float16 990 TFLOP/s; recovered float32 against the 67 TFLOP/s
#       float32 peak it must beat to be worth it). A device without matrix
#       variants (lavapipe) stops after saying why; an extension the device
#       does not list is skipped with the reason. Sections start only while
#       less than DEVICE_CHECK_BUDGET seconds (default 300; one section
#       takes up to 40 s on an H200) have passed, so the run stays under 8
#       minutes. Output goes to stdout and, when $OUT
#       is set, to $OUT/device_check_matrix.log.
#       DEVICE_CHECK_QUICK=1 stops after the driver and device section and
#       a check that every kernel the run would time generates and compiles
#       (NV and KHR forms; a rehearsal, e.g. here on lavapipe).
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
echo "## the float16 choice at 1024 cubed, and why (every matrix variant, NV and KHR)"
choice=$(ogtune select --dtype f16 --shape 1024x1024x1024 --json) || true
echo "$choice"
# The kernels timed below: the design's 8-subgroup tile (staged) and the
# tuner's double-buffered 128x128x32 tile (direct), the H200's fastest on
# 2026-12-04; for recovered float32 the default tile. (That run also timed
# the 64x64 tile direct, 256x128x16 and a recovered 128x128: no faster, and
# the whole took over 8 minutes: bench/logs/2026-12-04-h200-matrix.txt.)
base="variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8"
f16_kernels=("$base,load=staged"
  "variant=coopmat,bm=128,bn=128,bk=32,sgx=2,sgy=2,pad=8,load=direct,buf=2")
recovered_kernels=("$base,load=staged")
# The coopmat2 kernel (VK_NV_cooperative_matrix2's flexible dimensions),
# where the device enables them: tiles within 48 KiB of workgroup memory
# (the float32 tile of C and the staged tiles share it), in the subgroup
# size its matrices run in.
coopmat2_kernels=("variant=coopmat2,bm=64,bn=64,bk=32,sgx=2,sgy=2,pad=8"
  "variant=coopmat2,bm=128,bn=64,bk=32,sgx=4,sgy=2,pad=8"
  "variant=coopmat2,bm=64,bn=128,bk=32,sgx=4,sgy=2,pad=8")
if [ "${DEVICE_CHECK_QUICK:-}" = 1 ]; then
  echo "## the kernels the run times generate and compile (NV and KHR; the recovered"
  echo "## tiles in their float16 form: tests/test_matrix compiles their recovered one)"
  for mat in "" ",mat=khr"; do
    for p in "${f16_kernels[@]}"; do
      ogtune gen --emit spv --dtype f16 --params "$p$mat" > /dev/null && echo "ok f16 $p$mat" ||
        echo "(FAILED: f16 $p$mat)"
    done
    # The other fragments a GPU may list (NVIDIA's 16x8x16, Intel's 8x16x16
    # in subgroups of 16), on the design's tile.
    for f in ",frag=16x8x16" ",sub=16,frag=8x16x16"; do
      ogtune gen --emit spv --dtype f16 --params "$base,load=direct$mat$f" > /dev/null &&
        echo "ok f16 $base,load=direct$mat$f" || echo "(FAILED: f16 $base,load=direct$mat$f)"
    done
  done
  for f in "" ",frag=16x16x32"; do
    p="variant=int8coopmat,bm=64,bn=64,bk=32,sgx=4,sgy=2,pad=16,load=staged,mat=khr$f"
    ogtune gen --emit spv --op int8gemm --params "$p" > /dev/null && echo "ok int8 $p" ||
      echo "(FAILED: int8 $p)"
  done
  for p in "${coopmat2_kernels[@]}"; do
    ogtune gen --emit spv --dtype f16 --params "$p,sub=32" > /dev/null && echo "ok f16 $p,sub=32" ||
      echo "(FAILED: f16 $p,sub=32)"
  done
  echo "# DEVICE_CHECK_QUICK=1: stopping after the driver and device section"
  exit 0
fi
# Which extensions the device takes: a variant of it qualifies or merely
# qualifies second ("qualifies first"), from the explained choice.
takes() {
  echo "$choice" | tr '{' '\n' | grep "\"extension\":\"$1\"" |
    grep -q -e '"chosen":true' -e 'qualifies first'
}
exts=()
for e in NV KHR; do
  if takes "VK_${e}_cooperative_matrix"; then exts+=("$e"); else
    echo "# VK_${e}_cooperative_matrix: no variant qualifies here (reasons above), skipped"
  fi
done
if [ ${#exts[@]} = 0 ]; then
  echo "# no cooperative-matrix variant qualifies on this device: the matrix checks are skipped"
  exit 0
fi
budget=${DEVICE_CHECK_BUDGET:-300}
in_budget() {
  if [ "$SECONDS" -ge "$budget" ]; then
    echo "# skipped (${SECONDS}s of the ${budget}s budget used): $1"
    return 1
  fi
}
# ogtune bench, each line followed by its fraction of the dense peak (TFLOP/s).
bench() {
  local peak=$1
  shift
  ogtune bench "$@" | awk -v peak="$peak" '
    $4 == "GF/s" && $6 == "GF/s" { printf "%s   [%.2f%% of %d TFLOP/s; tile %.2f%%]\n", $0, $5 / (peak * 10), peak, $3 / (peak * 10); next }
    { print }' || echo "(FAILED: exit $?)"
}
echo
echo "## correctness of every matrix variant (quick space) against the float64 reference"
"${run[@]}" build/tests/test_matrix --filter 'matrix/kernels*' --verbose || echo "(FAILED: exit $?)"
cubes=1024x1024x1024,2048x2048x2048,4096x4096x4096
bert=128x768x768,128x2304x768,128x3072x768,128x768x3072,1024x768x3072
echo
# Int8Gemm on matrix hardware: the kernel select chooses for int8 (the KHR
# or NV int8 x int8 -> int32 fragment the device lists), verified exact
# against the host definition before it is timed, then the portable tile.
echo "## Int8Gemm at 1024 to 4096 cubed: the selected kernel, then the portable tile"
int8_choice=$(ogtune select --op int8gemm --shape 1024x1024x1024 --json) || true
echo "$int8_choice"
if in_budget "Int8Gemm"; then
  ogtune bench --op int8gemm --shapes "$cubes" || echo "(FAILED: exit $?)"
  ogtune bench --op int8gemm --shapes "$cubes" \
    --params "variant=int8tile,bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,dot=0" ||
    echo "(FAILED: exit $?)"
fi
for shapes in "$cubes" "$bert"; do
  for e in "${exts[@]}"; do
    mat=$([ "$e" = KHR ] && echo ",mat=khr" || true)
    # The subgroup size and the fragment the device runs this extension's
    # kernels with (32 and 16x16x16 unless it lists otherwise).
    variant=$(echo "$choice" | tr '{' '\n' | grep "\"extension\":\"VK_${e}_cooperative_matrix\"" |
      head -1)
    sub=$(echo "$variant" | grep -o '"subgroup_size":[0-9]*' | cut -d: -f2)
    frag=$(echo "$variant" | grep -o '"fragment":"[0-9x]*"' | cut -d'"' -f4)
    [ "${sub:-32}" = 32 ] || mat="$mat,sub=$sub"
    [ "${frag:-16x16x16}" = 16x16x16 ] || mat="$mat,frag=$frag"
    for p in "${f16_kernels[@]}"; do
      in_budget "float16 $e $p $shapes" || continue
      echo "## float16, $e matrices: $p$mat against the 64x64 portable tile"
      bench 990 --dtype f16 --shapes "$shapes" --params "$p$mat"
    done
    for p in "${recovered_kernels[@]}"; do
      in_budget "recovered float32 $e $p $shapes" || continue
      echo "## recovered float32 (three float16 products), $e matrices: $p$mat against the recovered 64x64 tile"
      bench 67 --dtype f32 --precision recovered --shapes "$shapes" --params "$p$mat"
    done
  done
done
# coopmat2, where its note says it qualifies (a tuner candidate here).
cm2_sub=$(echo "$choice" | grep -o '"coopmat2":{[^}]*' | grep 'a tuner candidate' |
  grep -o 'sub=[0-9]*' | cut -d= -f2) || true
if [ -z "$cm2_sub" ]; then
  echo "# coopmat2: not run here ($(echo "$choice" | grep -o '"coopmat2":{[^}]*' || echo 'no note'))"
fi
for p in "${coopmat2_kernels[@]}"; do
  [ -n "$cm2_sub" ] || break
  in_budget "coopmat2 $p" || continue
  echo "## float16, coopmat2 (flexible dimensions): $p,sub=$cm2_sub against the 64x64 portable tile"
  bench 990 --dtype f16 --shapes "$cubes" --params "$p,sub=$cm2_sub"
done
echo
echo "H200 dense peaks (NVIDIA's figures): float16 989.5 TFLOP/s, float32 67 TFLOP/s; recovered"
echo "float32 is worth it where its GFLOP/s beat 67 000."
echo "# done in ${SECONDS}s"
