#!/bin/sh
# The second driver lane's choice, as a user sees it: on Mesa 26's lavapipe
# `ogtune select --dtype f16 --json` chooses the KHR matrix kernel with the
# fragment the device lists (8x8x8, subgroups of 8), and names it for each
# variant, and notes the coopmat2 kernel as a tuner candidate; so do
# `ogtune select --op int8gemm` and `--op conv`. Usage: test_lane_select.sh MESA26_SH OGTUNE
set -eu
mesa26=$1 ogtune=$2
out=$("$mesa26" run "$ogtune" select --dtype f16 --shape 256x256x256 --json)
fail() { echo "test_lane_select: $1" >&2; echo "$out" >&2; exit 1; }
case $out in
  *'"variant":"gemm_coopmat","params":"variant=coopmat,'*'mat=khr,sub=8,frag=8x8x8"'*) ;;
  *) fail "float16 in Fast mode did not choose the KHR kernel with 8x8x8 fragments" ;;
esac
case $out in
  *'"extension":"VK_KHR_cooperative_matrix","subgroups":8,"subgroup_size":8,"fragment":"8x8x8"'*'"chosen":true'*) ;;
  *) fail "the chosen KHR variant does not name its fragment" ;;
esac
case $out in
  *'"reason":"the device lists no 16x16x16 float16 combination for VK_NV_cooperative_matrix'*) ;;
  *) fail "the NV variants' reason does not name the fragment missing" ;;
esac
# The coopmat2 kernel qualifies here (flexible dimensions of granularity
# 8) and is a tuner candidate, not the default: the note says so.
case $out in
  *'"coopmat2":{"extension":"VK_NV_cooperative_matrix2","params":"variant=coopmat2,'*'sub=8","chosen":false,"reason":"a tuner candidate'*) ;;
  *) fail "the coopmat2 note does not say it is a tuner candidate in subgroups of 8" ;;
esac
# Int8Gemm: the KHR matrix kernel on the int8 x int8 -> int32 fragment.
out=$("$mesa26" run "$ogtune" select --op int8gemm --shape 256x256x256 --json)
case $out in
  *'"variant":"int8gemm_coopmat","params":"variant=int8coopmat,'*'mat=khr,sub=8,frag=8x8x8"'*) ;;
  *) fail "Int8Gemm did not choose the KHR matrix kernel with 8x8x8 fragments" ;;
esac
# A float16 convolution (Whisper's first layer, NCHW): its implicit GEMM on
# the KHR matrix tile, staged.
out=$("$mesa26" run "$ogtune" select --op conv --dtype f16 --shape 1x80x1x3000/384x1x3/p0x0x1x1/nchw/kcrs --json)
case $out in
  *'"variant":"gemm_coopmat","params":"variant=coopmat,'*'load=staged,mat=khr,sub=8,frag=8x8x8"'*) ;;
  *) fail "the float16 convolution did not choose the KHR matrix tile with 8x8x8 fragments" ;;
esac
# Deterministic mode keeps the portable tile, on this device too.
out=$("$mesa26" run "$ogtune" select --dtype f16 --shape 256x256x256 --mode deterministic --json)
case $out in
  *'"variant":"gemm_tile"'*) ;;
  *) fail "Deterministic mode left the portable tile" ;;
esac
echo "test_lane_select: coopmat2 noted as a candidate; the KHR 8x8x8 kernels chosen for float16, Int8Gemm and the float16 convolution, the portable tile in Deterministic mode"
