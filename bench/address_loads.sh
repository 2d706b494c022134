#!/usr/bin/env bash
# A and B read by buffer device address (src=addr, what a call takes for an
# operand past maxStorageBufferRange) against the same kernels reading
# storage bindings (src=ssbo), in one run: the few-rows kernel and the tile
# (staged, and direct with vector loads) on shapes both can run, alternating,
# two rounds, with the load average before each; then the products that only
# addresses can serve on lavapipe (operands past its 128 MiB), with the
# selected kernels (the 64x64 tile column is the same kernel by address). Prints GFLOP/s (and GB/s of B for few rows), the addr /
# ssbo ratio of each kernel, and keeps the log in bench/logs/.
# Usage: bench/address_loads.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
log=bench/logs/$(date +%Y-%m-%d)-address-loads-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt
export OG_TUNING_DB=
fewrows="variant=fewrows,cols=32,slices=8,vec=4"
staged="bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=1,load=staged,acc=blocked,vec=1,split=1"
direct="bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=direct,acc=chain,vec=4,split=1"
# kernel name, shape, parameters without src
runs=("fewrows 1x8192x768 $fewrows" "staged 1024x1024x1024 $staged" "direct 1024x1024x1024 $direct")
{
  echo "# onegpu: A and B by device address (src=addr) and by storage binding (src=ssbo), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  for round in 1 2; do
    for r in "${runs[@]}"; do
      read -r name shape params <<< "$r"
      for src in ssbo addr; do
        p=$params
        [ "$name" = fewrows ] && p="$params,src=$src" || p="${params/,split=/,src=$src,split=}"
        echo "## round $round, $name $src, load average $(cut -d' ' -f1-3 /proc/loadavg)"
        build/ogtune bench --shapes "$shape" --params "$p" | grep '^f32'
      done
    done
  done
  echo
  echo "## past lavapipe's 128 MiB binding range: selected kernels, by address; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  build/ogtune bench --shapes 1x51865x768,4x51865x768 | grep '^f32'
  # A past the range (2400 x 14336 floats, 138 MB) in a product small
  # enough for the bench's 40 timed calls; tests/test_large.c runs
  # 4096x512x14336 (60 GFLOP a call) once.
  build/ogtune bench --shapes 2400x64x14336 | grep '^f32'
  echo "## load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$log"
# Mean GFLOP/s of each kernel over the rounds, addr / ssbo.
awk '/^## round/ { name = $4; src = $5; sub(/,$/, "", src) }
     /^## past/ { name = "" }
     /^f32/ && name != "" { g[name, src] += $5; n[name, src]++; shape[name] = $2
               if (!(name in seen)) { seen[name] = 1; order[++count] = name } }
     END { print "\n## addr / ssbo, mean of the rounds (GFLOP/s of the given kernel)"
           for (i = 1; i <= count; i++) { k = order[i]
             a = g[k, "addr"] / n[k, "addr"]; s = g[k, "ssbo"] / n[k, "ssbo"]
             printf "%-8s %-22s %8.2f / %8.2f GFLOP/s = %.2fx\n", k, shape[k], a, s, a / s } }' \
  "$log" | tee -a "$log"
echo "log: $log"
