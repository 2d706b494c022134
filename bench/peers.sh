#!/usr/bin/env bash
# Peers, side by side: float32 row-major GEMM at 256, 512 and 1024 cubed and two BERT-base
# products of the reference design's table (M = 128 tokens: 128x768x768, a projection, and
# 128x3072x768, the feed-forward layer up), measured in one run on this machine with
#  - onegpu on the default Vulkan device (lavapipe here): the 64x64 tile and the kernel that
#    `ogtune tune --preset quick` selects into a fresh database (ogtune bench, Vulkan timestamps);
#  - CLBlast on PoCL (OpenCL on the same CPU): its built-in parameters, and the best
#    parameters its own tuners (clblast_tuner_xgemm, clblast_tuner_xgemm_direct) find for each
#    shape, applied with CLBlastOverrideParameters (bench/peers/peer_gemm.c; host clock);
#  - OpenBLAS (cblas_sgemm; host clock).
# Prints GFLOP/s, the ratios and both tuners' times; keeps the log in bench/logs/.
# The peers' packages come from `scripts/setup.sh --peers` (run here; the build and the tests
# never need them).
# Usage: bench/peers.sh [extra ogtune tune options]
# CLBlast's tuners sample 1/F of each of their spaces (their -fraction F; the same sample for
# every shape, their seed is fixed): F is PEERS_XGEMM_FRACTION (default 1250) and
# PEERS_DIRECT_FRACTION (default 512). Their full spaces would take hours here; these give
# them about the time ogtune's quick preset takes, and the whole script 13 minutes on a 2-core
# machine at a load average of 0.7 to 1.6 (longer when the machine is busier).
# PEERS_SHAPES replaces the shapes (MxNxK,...; M and N multiples of 128, as CLBlast's xgemm
# tuner needs).
# Then the convolution (issue 27): ResNet-50's 3x3 layer, Whisper's first encoder convolution
# and ResNet-50's 7x7/2 first layer, NCHW input and KCRS weights (CLBlast's only layouts),
# float32: onegpu's implicit GEMM with its default tile and with the tile `ogtune tune --op
# conv --preset quick` selects, the GEMM of the same M, N, K and onegpu's explicit im2col +
# GEMM (ogtune bench --op conv; their GEMMs tuned into the same database), and CLBlast's
# CLBlastSconvgemm with its built-in parameters (bench/peers/peer_conv.c; its xconvgemm tuner is
# not run). PEERS_CONV_SHAPES replaces the convolutions (ogtune's shape strings; CLBlast takes
# those in NCHW/KCRS without dilation or groups and with one padding a side); PEERS_PARTS="gemm",
# "conv" or "gemm conv" (default) picks the parts; PEERS_LOG names the log (default
# bench/logs/DATE-peers-DEVICE.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --peers
scripts/build.sh
shapes=${PEERS_SHAPES:-256x256x256,512x512x512,1024x1024x1024,128x768x768,128x3072x768}
xgemm_fraction=${PEERS_XGEMM_FRACTION:-1250}
direct_fraction=${PEERS_DIRECT_FRACTION:-512}
parts=${PEERS_PARTS:-gemm conv}
conv_shapes=${PEERS_CONV_SHAPES:-1x64x56x56/64x3x3/p1/nchw/kcrs,1x80x1x3000/384x1x3/p0x0x1x1/nchw/kcrs,1x3x224x224/64x7x7/s2/p3/nchw/kcrs}
tmp=$(mktemp -d)
db=$tmp/tuning.db
# Both sides start without compiled kernels: PoCL's kernel cache and Mesa's shader cache
# (onegpu's SPIR-V cache lies beside the fresh database).
export POCL_CACHE_DIR=$tmp/pocl-cache MESA_SHADER_CACHE_DIR=$tmp/mesa-cache
peer=$tmp/peer_gemm
# shellcheck disable=SC2046
cc -std=c17 -O2 -Wall -Wextra $(pkg-config --cflags openblas) bench/peers/peer_gemm.c -o "$peer" \
  -lclblast $(pkg-config --libs openblas OpenCL) -lm
peer_conv=$tmp/peer_conv
cc -std=c17 -O2 -Wall -Wextra bench/peers/peer_conv.c -o "$peer_conv" -lclblast \
  $(pkg-config --libs OpenCL) -lm
platform=$("$peer" --platform-index)
log=${PEERS_LOG:-bench/logs/$(date +%Y-%m-%d)-peers-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt}
strip() { sed 's/\x1b\[[0-9;]*m//g'; }

{
  echo "# onegpu and its peers, float32 row-major C = A * B, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "# parts: $parts; GEMM shapes MxNxK: $shapes; convolutions: $conv_shapes"
  echo "# load at start:$(uptime | sed 's/.*,  *load/ load/')"
  build/ogtune devices
  echo

  if [[ " $parts " == *" gemm "* ]]; then
    echo "## onegpu: ogtune tune --preset quick into a fresh database"
    t0=$(date +%s)
    build/ogtune tune --preset quick --shapes "$shapes" --db "$db" "$@" | tee "$tmp/ogtune-tune.txt"
    og_tune_s=$(( $(date +%s) - t0 ))
    og_candidates=$(sed -n 's/^f32 .*: \([0-9]*\) candidates.*/\1/p' "$tmp/ogtune-tune.txt" |
                    awk '{s += $1} END {print s + 0}')
    echo "ogtune tuning took $og_tune_s s ($og_candidates candidates)"
    echo

    echo "## CLBlast: its tuners on PoCL (OpenCL platform $platform), -fraction $xgemm_fraction (xgemm)" \
         "and $direct_fraction (xgemm_direct): a random 1/F of each space, 2 timed runs a candidate"
    cl_xgemm_s=0 cl_direct_s=0 cl_candidates=0
    tuned=$tmp/clblast-tuned.txt
    : >"$tuned"
    for s in ${shapes//,/ }; do
      IFS=x read -r m n k <<<"$s"
      dir=$tmp/clblast/$s
      mkdir -p "$dir"
      for tuner in xgemm xgemm_direct; do
        fraction=$xgemm_fraction
        [ $tuner = xgemm ] || fraction=$direct_fraction
        t0=$(date +%s)
        status=0
        (cd "$dir" && exec clblast_tuner_$tuner -platform "$platform" -device 0 -precision 32 \
           -m "$m" -n "$n" -k "$k" -alpha 1 -beta 0 -fraction "$fraction") \
           >"$dir/$tuner.txt" 2>&1 || status=$?
        secs=$(( $(date +%s) - t0 ))
        if [ $tuner = xgemm ]; then cl_xgemm_s=$((cl_xgemm_s + secs)); else cl_direct_s=$((cl_direct_s + secs)); fi
        count=$(strip <"$dir/$tuner.txt" | sed -n 's/^\* Exploring a random subset of \([0-9]*\).*/\1/p' |
                awk '{s += $1} END {print s + 0}')
        cl_candidates=$((cl_candidates + count))
        echo "$s clblast_tuner_$tuner: $secs s, $count candidates"
        strip <"$dir/$tuner.txt" | sed -n 's/^\* (\(.*\)/  (\1/p; s/^\* \(Found [0-9]* conf.*\)/    \1/p;
                                           s/^\* \(Exploring.*\)/    \1/p; s/^\* \(Found best.*\)/    \1/p;
                                           s/^\* \(Best parameters.*\)/    \1/p'
        [ $status -eq 0 ] ||
          echo "    the tuner exited with status $status (134: abort, 139: segmentation fault) in the" \
               "last phase listed; the phases it completed are used"
      done
      # The best of each kernel over the tuners' phases (one JSON file a phase with results).
      for f in "$dir"/clblast_xgemm_*_32.json; do
        [ -e "$f" ] || continue
        case $f in *xgemm_direct_*) kernel=XgemmDirect ;; *) kernel=Xgemm ;; esac
        printf '%s %s %s %s\n' "$(sed -n 's/.*"best_time": "\(.*\)".*/\1/p' "$f")" "$s" "$kernel" \
          "$(sed -n 's/.*"best_parameters": "\(.*\)".*/\1/p' "$f")"
      done | sort -k3,3 -k1,1g | awk '!seen[$3]++ { $1 = ""; sub(/^ /, ""); print }' >>"$tuned"
    done
    echo "CLBlast tuning took $((cl_xgemm_s + cl_direct_s)) s ($cl_xgemm_s xgemm, $cl_direct_s xgemm_direct;" \
         "$cl_candidates candidates)"
    echo "parameters applied (CLBlastOverrideParameters, per shape; full tuner output in $tmp/clblast):"
    sed 's/^/  /' "$tuned"
    echo

    echo "## onegpu: 64x64 tile and selected kernel (ogtune bench)"
    echo "# load before measuring:$(uptime | sed 's/.*,  *load/ load/')"
    build/ogtune bench --shapes "$shapes" --db "$db" | tee "$tmp/ogtune-bench.txt"
    echo
    echo "## CLBlast (defaults, then tuned through either kernel) and OpenBLAS (peer_gemm)"
    "$peer" --shapes "$shapes" --tuned "$tuned" | tee "$tmp/peers.txt"
    echo "# load at end:$(uptime | sed 's/.*,  *load/ load/')"
    echo

    echo "## GFLOP/s and ratios"
    echo "# onegpu: Vulkan timestamps of the kernel alone; CLBlast, OpenBLAS: host clock around the"
    echo "# call (CLBlast's row-major call includes its transposes of A, B and C around Xgemm)."
    echo "# CLBlast tuned: the faster of its tuned indirect (Xgemm) and direct (XgemmDirect) paths."
    awk '
      FNR == NR && $1 == "f32" { s = $2; sub(/x1$/, "", s); ogd[s] = $3; ogt[s] = $5; next }
      $1 == "result" {
        s = $2; order[++n] = s; ob[s] = $4; cd[s] = $6
        ct[s] = $8; path[s] = "indirect"
        if ($10 != "-" && ($8 == "-" || $10 + 0 > $8 + 0)) { ct[s] = $10; path[s] = "direct" }
      }
      function r(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
      END {
        printf "%-16s %8s %8s  %8s %8s %-8s  %8s  %9s %9s %9s  %8s %8s\n", "", "onegpu", "onegpu",
               "CLBlast", "CLBlast", "", "OpenBLAS", "onegpu t", "onegpu t", "onegpu d", "onegpu", "CLBlast"
        printf "%-16s %8s %8s  %8s %8s %-8s  %8s  %9s %9s %9s  %8s %8s\n", "shape MxNxK", "default",
               "tuned", "default", "tuned", "(path)", "", "/CLB t", "/OpenBLAS", "/CLB d", "t/d", "t/d"
        for (i = 1; i <= n; i++) {
          s = order[i]
          printf "%-16s %8s %8s  %8s %8s %-8s  %8s  %9s %9s %9s  %8s %8s\n", s, ogd[s], ogt[s], cd[s],
                 ct[s], path[s], ob[s], r(ogt[s], ct[s]), r(ogt[s], ob[s]), r(ogd[s], cd[s]),
                 r(ogt[s], ogd[s]), r(ct[s], cd[s])
        }
      }' "$tmp/ogtune-bench.txt" "$tmp/peers.txt"
    echo
    echo "tuning time: ogtune $og_tune_s s ($og_candidates candidates, --preset quick);" \
         "CLBlast $((cl_xgemm_s + cl_direct_s)) s ($cl_candidates candidates: xgemm 1/$xgemm_fraction," \
         "xgemm_direct 1/$direct_fraction of their spaces)"
  fi
  if [[ " $parts " == *" conv "* ]]; then
    echo "## convolution: onegpu's implicit GEMM (default and tuned tile), the GEMM of the same"
    echo "## M, N, K and onegpu's explicit im2col + GEMM (ogtune bench --op conv), CLBlast's"
    echo "## CLBlastSconvgemm with its built-in parameters (peer_conv); NCHW input, KCRS weights"
    echo "# load before tuning:$(uptime | sed 's/.*,  *load/ load/')"
    # The GEMMs the bench runs: the implicit GEMM's M x N x K and, for NCHW, the im2col
    # product's N x M x K (weights times the matrix transposed), both with B transposed.
    gemm_shapes= peer_args=()
    for c in ${conv_shapes//,/ }; do
      json=$(build/ogtune select --op conv --shape "$c" --json --db "$db" 2>/dev/null)
      read -r m n k _ <<<"$(sed -n 's/.*"implicit_gemm":\[\([0-9,]*\)\].*/\1/p' <<<"$json" | tr ',' ' ')"
      gemm_shapes+="${gemm_shapes:+,}${m}x${n}x${k},${n}x${m}x${k}"
      # CLBlast's geometry from the normalized name: no dilation, no groups, one padding a side.
      name=$(sed -n 's/.*"conv":"\([^"]*\)".*/\1/p' <<<"$json")
      IFS=/ read -r img filt stride dil pad groups layouts <<<"$name"
      IFS=x read -r N C H W <<<"$img"; IFS=x read -r K R S <<<"$filt"
      IFS=x read -r sh sw <<<"${stride#s}"; IFS=x read -r pt pb pl pr <<<"${pad#p}"
      if [ "$layouts" = nchw/kcrs ] && [ "$dil" = d1x1 ] && [ "$groups" = g1 ] && [ "$pt" = "$pb" ] &&
         [ "$pl" = "$pr" ]; then
        peer_args+=(--conv "${N}x${C}x${H}x${W}x${K}x${R}x${S}x${sh}x${sw}x${pt}x${pl}" "$name")
      fi
    done
    t0=$(date +%s)
    build/ogtune tune --preset quick --trans-b --shapes "$gemm_shapes" --db "$db" "$@" >"$tmp/conv-gemm-tune.txt"
    build/ogtune tune --op conv --preset quick --shapes "$conv_shapes" --db "$db" "$@" >"$tmp/conv-tune.txt"
    echo "ogtune tuning took $(( $(date +%s) - t0 )) s (GEMMs $gemm_shapes, B transposed; the convolutions)"
    echo "# load before measuring:$(uptime | sed 's/.*,  *load/ load/')"
    build/ogtune bench --op conv --shapes "$conv_shapes" --db "$db" | tee "$tmp/conv-bench.txt"
    "$peer_conv" "${peer_args[@]}" 2>/dev/null | tee "$tmp/conv-peer.txt"
    echo "# load at end:$(uptime | sed 's/.*,  *load/ load/')"
    echo
    echo "## convolution GF/s and ratios (onegpu: Vulkan timestamps; CLBlast: host clock around the call)"
    awk '
      FNR == NR && $1 == "result" { peer[$2] = $3; next }
      $3 == "GF/s" && $5 == "GF/s" {
        name = $1; order[++n] = name; d[name] = $2; t[name] = $4; g[name] = $7
        i[name] = ($10 == "-") ? "-" : $10
      }
      function r(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
      END {
        printf "%-52s %8s %8s %8s %8s %8s  %8s %8s %8s\n", "convolution", "default", "tuned", "GEMM",
               "im2col", "CLBlast", "t/GEMM", "t/im2col", "t/CLBlast"
        for (j = 1; j <= n; j++) {
          s = order[j]; c = (s in peer) ? peer[s] : "-"
          printf "%-52s %8s %8s %8s %8s %8s  %8s %8s %8s\n", s, d[s], t[s], g[s], i[s], c,
                 r(t[s], g[s]), r(t[s], i[s]), r(t[s], c)
        }
      }' "$tmp/conv-peer.txt" "$tmp/conv-bench.txt"
    echo
  fi
  echo "whole script: $SECONDS s"
} 2>&1 | tee "$log"
echo "log: $log"
