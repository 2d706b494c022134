#!/usr/bin/env bash
# Decode products against ggml-vulkan on the same device, in one run: for
# each weight format, ggml's `test-backend-ops perf -o MUL_MAT` (its
# mul_mat_vec at n = M <= 8) and onegpu's kernel for the same format
# (`ogtune bench --op qgemm`, which also times vkCmdCopyBuffer of the same
# weight bytes and the float16 GEMM of the shape; bfloat16 through `ogtune
# bench` with the selected kernel), alternating, PASSES passes, with the load
# average; then a table of the best time of each side and their ratio.
# ggml is never built or fetched by this script: build test-backend-ops by
# hand in a scratch folder (the commands go into the log's header, GGML_HOW)
# and give its path as GGML_TBO. The log goes to bench/logs/.
# Usage: GGML_TBO=/path/to/test-backend-ops [GGML_HOW=file] bench/decode_vs_ggml.sh
#        (SHAPES=MxNxK,... FORMATS="f16 q8_0 ..." PASSES=n override)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${GGML_TBO:?give the path of test-backend-ops of ggml, built by hand (see the usage)}"
shapes=${SHAPES:-1x4096x14336,8x4096x14336}
formats=${FORMATS:-f16 bf16 q8_0 q4_0 q4_K q6_K mxfp4}
passes=${PASSES:-2}
scripts/build.sh >/dev/null
log=bench/logs/$(date -u +%Y-%m-%d)-decode-vs-ggml-$(build/ogtune devices --json 2>/dev/null |
  grep -o '"driver":"[a-z]*' | head -1 | sed 's/.*"//').txt
# onegpu's format for ggml's: Q4_0 is 4-bit integers in groups of 32 with a
# float16 scale and the zero point 8; the K-quants have onegpu's names in
# lower case.
og_weights() {
  case $1 in
    q4_0) echo int4:g32:f16:none ;;
    q4_K | q6_K) echo "${1,,}" ;;
    *) echo "$1" ;;
  esac
}
# One ggml measurement: its us/run for weights $1 at M x N x K = $2.
ggml_us() {
  local m n k
  IFS=x read -r m n k <<<"$2"
  GGML_VK_VISIBLE_DEVICES=0 "$GGML_TBO" perf -o MUL_MAT -b Vulkan0 \
    -p "type_a=$1,type_b=f32,m=$n,n=$m,k=$k," 2>&1 | grep 'MUL_MAT(' |
    sed -n 's/.* \([0-9.]*\) us\/run.*/\1/p' | head -n1
}
# One onegpu measurement: microseconds of the selected kernel (and, for the
# low-bit formats, the copy rate of the weights in GB/s).
og_us() {
  local f=$1 shape=$2
  export OG_TUNING_DB=''
  case $f in
    f16 | bf16)
      local p
      p=$(build/ogtune select --shape "$shape" --dtype "$f" --trans-b --json |
        grep -o '"params":"[^"]*"' | head -n1 | cut -d'"' -f4)
      build/ogtune bench --shapes "$shape" --dtype "$f" --trans-b --params "$p" --against "$p" \
        --json | sed -n 's/.*"selected_gflops":\([0-9.]*\).*/\1/p' |
        awk -v s="$shape" '{split(s, d, "x"); printf "%.1f -\n", 2 * d[1] * d[2] * d[3] / ($1 * 1e3)}'
      ;;
    *)
      build/ogtune bench --op qgemm --weights "$(og_weights "$f")" --shapes "$shape" |
        awk '$1 ~ /^[0-9]+x/ {print $3, $6}'
      ;;
  esac
}
{
  echo "# onegpu against ggml-vulkan, decode products, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)"
  echo "# $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-); $(build/ogtune devices --json | sed -n 's/.*"name":"\([^"]*\)".*/\1/p' | head -n1)"
  echo "# ggml: $GGML_TBO"
  if [ -n "${GGML_HOW:-}" ]; then sed 's/^/#   /' "$GGML_HOW"; fi
  echo "# time of one product in us (ggml: us/run of test-backend-ops perf; onegpu: the"
  echo "# median of its timestamps); copy: vkCmdCopyBuffer of the weights, GB/s"
  for pass in $(seq "$passes"); do
    for shape in ${shapes//,/ }; do
      for f in $formats; do
        echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "pass $pass $shape $f ggml $(ggml_us "$f" "$shape")"
        read -r us copy <<<"$(og_us "$f" "$shape")"
        echo "pass $pass $shape $f onegpu $us copy $copy"
      done
    done
  done
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$log"
{
  echo
  echo "# best of the passes; ratio = ggml time / onegpu time (above 1: onegpu faster)"
  printf '%-14s %-6s %12s %12s %8s %10s\n' shape format "ggml us" "onegpu us" ratio "copy GB/s"
  awk '$1 == "pass" {
         key = $3 " " $4
         if (!(key in seen)) { order[++n] = key; seen[key] = 1 }
         if ($6 == "" || $6 == "-") next
         if ($5 == "ggml" && (!(key in g) || $6 < g[key])) g[key] = $6
         if ($5 == "onegpu" && (!(key in o) || $6 < o[key])) o[key] = $6
         if ($5 == "onegpu" && $8 != "-" && $8 > c[key]) c[key] = $8
       }
       END {
         for (i = 1; i <= n; i++) {
           split(order[i], kf, " ")
           ratio = (order[i] in g) && (order[i] in o) ? sprintf("%.2fx", g[order[i]] / o[order[i]]) : "-"
           printf "%-14s %-6s %12s %12s %8s %10s\n", kf[1], kf[2], (order[i] in g) ? g[order[i]] : "none",
                  (order[i] in o) ? o[order[i]] : "none", ratio, (order[i] in c) ? c[order[i]] : "-"
         }
       }' "$log"
} | tee -a "$log"
echo "bench/decode_vs_ggml.sh: wrote $log"
