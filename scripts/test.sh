#!/usr/bin/env bash
# The test job on a fresh machine: install the packages, then
#  1. a -Werror build and the whole Criterion suite through CTest;
#  1b. the second driver lane (scripts/mesa26.sh): the CTest label mesa26 on
#     Mesa 26's lavapipe, which executes the cooperative-matrix kernels
#     (made from Debian's trixie and trixie-backports packages; if the tree
#     cannot be made, this step fails and says why);
#  2. an AddressSanitizer + UndefinedBehaviorSanitizer build and the suite
#     in it (a report in ogtune or a tuner worker, whose exits LeakSanitizer
#     checks, fails the test that started it), in three parts:
#     a. with VK_LAYER_KHRONOS_validation on (OG_VALIDATION=1: every test
#        asserts the layer reported no error, in its own process and in the
#        ogtune commands and tuner workers it starts), but for the kernel
#        tests of b and the tests of c;
#     b. the kernel tests (CTest label "staging") with uploads and
#        downloads forced through staging copies (OG_STAGING=1), under the
#        layer with its synchronisation validation too
#        (OG_VALIDATION=sync), without LeakSanitizer (see there);
#     c. the tests with no Vulkan calls of onegpu's to validate;
#  3. each libFuzzer target (fuzz/README.md) for 10 s from its committed
#     corpus, built with clang under both sanitizers: a crash, a report or a
#     failed property fails the run (steps 1 and 2 replay the corpora).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's wall time and the load average, so a CI log shows where the
# time goes (the run of 2026-12-03 took 65 minutes, and its log said only
# that the sanitizer pass took 18 of them).
start=$SECONDS last=$SECONDS
step() {
  echo "test.sh: $1 took $((SECONDS - last)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  last=$SECONDS
}
scripts/setup.sh --tests
jobs=$(nproc)

# The Mesa 26 lane's tree (scripts/mesa26.sh) is made while the build and the
# suite run: mostly downloads and unpacking, about 3 minutes on a fresh
# machine. Its output is shown, and a failure stops the run, before the lane.
mesa26_log=$(mktemp)
scripts/mesa26.sh setup >"$mesa26_log" 2>&1 &
mesa26_setup=$!

# web/'s pinned npm packages (Dawn for Node) for CTest's test_wgsl_webgpu and
# test_webgpu_runtime.
(cd web && npm ci --no-audit --no-fund --loglevel=error)
step "set-up"

scripts/build.sh -DOG_WERROR=ON
step "build"
# Most of this pass is compiling kernels cold (shaderc's optimizer, then
# lavapipe's LLVM; both caches live in .test-cache and serve the later
# passes), so the heavy tests build samples of the tuning spaces that keep
# every template path and parameter value but not every large tile:
# test_gen every 80th standard tile (and the first of each parameter value)
# and every 16th standard Int8Gemm tile, test_order every 175th standard
# tile, test_int8_matrix four emulated modules (each type pair once, each
# layout once; the Mesa 26 lane runs all 16 for real), test_int8gemm's
# type and layout sweep the default tile and one other kernel a module,
# its tune_store_select half of Int8Gemm's quick spaces (each candidate
# compiled cold in its own worker; the later passes tune a smaller sample,
# see below). Measured cold, each test alone: test_gen 444 to 341 CPU
# seconds, then 302 to about 200; test_order 385 to 235; test_int8_matrix
# 221 to 128, then 82 (62 s on 2 cores); tune_store_select 166 to about 85.
# Each step's time is in the run's own output (step, above).
ctest --test-dir build --output-on-failure -j"$jobs" -LE mesa26
step "the suite"

mesa26_status=0
wait "$mesa26_setup" || mesa26_status=$?
cat "$mesa26_log"
rm -f "$mesa26_log"
if [ "$mesa26_status" != 0 ]; then
  echo "test.sh: scripts/mesa26.sh setup failed (exit $mesa26_status, its output above): the Mesa 26 lane cannot run" >&2
  exit 1
fi
ctest --test-dir build --output-on-failure -j"$jobs" -L mesa26
step "the Mesa 26 lane"

OG_BUILD_DIR=build-asan scripts/build.sh -DOG_WERROR=ON -DOG_SANITIZE=ON
step "the sanitizer build"

# The later parts run in the sanitizer build: the layer's checks and the
# sanitizers' in one run of each test rather than in a pass of their own
# (each pass runs every test again; the kernels come compiled from
# .test-cache, onegpu's SPIR-V and Mesa's shader cache: test_order alone
# took 128 s cold, 68 s with the SPIR-V cached, 5 s with both), and every
# 8th case of the heavy tests' sweeps
# (OG_TEST_STRIDE, tests/og_test.h): the plain pass ran them all. Under
# OG_TEST_STRIDE the tests also spend less on what is the device's or the
# host reference's work rather than onegpu's host code: test_int8gemm's
# tune_store_select tunes a seeded random sample of about an 8th of each
# shape's quick space (the plain pass tunes half of it), test_large
# checks every 8th column of its sampled rows against the float64
# reference, test_conv's past_the_limits runs its split-k case only
# (the 2049 x 2049 grid's pieces are conv/pieces' too), and test_resume's
# tuners measure the first 5 of the quick space's 10 candidates (a worker
# each, started under ASan and the layer). shaderc runs several
# times slower under ASan: the generator test builds a spread of 40 modules
# here (all of its sample in the plain run above), the number-format test
# visits every 97th of the 2^32 float32 inputs, and the matrix module and
# KHR rewrite tests build every 8th matrix kernel of the standard space (all
# of them in the plain run). The samples, measured (2026-12-05, each test
# alone with the caches warm, CPU seconds under ASan, at loads of 3 to 9 on
# 2 cores): tune_store_select 24 to 5 (8 candidates of 54; 271 when other
# processes had rewritten the pipeline cache, as at -j2 they do),
# test_large 166 to 120 (the rest is lavapipe's work: as much in the plain
# build), test_conv 131 to 18 (its past_the_limits 114 to 1).
# The WebGPU tests (test_wgsl_webgpu, test_webgpu_runtime,
# test_webgpu_qgemm, test_webgpu_browser) are left out: they run node, Dawn
# and Chromium, none of onegpu's code but ogtune gen (and show, import,
# export), which test_wgsl, test_travel_dumps and test_travel_merge cover
# here.
export OG_TEST_STRIDE=8 OG_TEST_GEN_MODULES=40 OG_TEST_FORMATS_STRIDE=97
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# c's tests: test_gen only generates and compiles kernels,
# test_formats_convert and test_formats_blocks convert numbers, test_search
# replays recorded measurements on the host, test_wgsl generates WGSL and the
# fuzz_replay_ tests replay the fuzz corpora: no Vulkan calls to validate;
# test_install's and test_build_tree's examples do not count the layer's
# reports.
no_vulkan='test_gen|test_formats_convert|test_formats_blocks|test_search|test_install|test_build_tree|test_wgsl|fuzz_replay_.*'
webgpu='test_wgsl_webgpu|test_webgpu_runtime|test_webgpu_qgemm|test_webgpu_browser'
OG_VALIDATION=1 ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE 'mesa26|staging' \
  -E "^($no_vulkan|$webgpu)\$"
step "the sanitizers under the validation layer"

# The kernel tests with uploads and downloads through the staging buffer
# (the memory path of a discrete GPU; tests/CMakeLists.txt, label
# "staging"), under the validation layer with synchronisation validation:
# every copy, fill and dispatch must be ordered by the barriers onegpu
# records. Without LeakSanitizer: under synchronisation validation Debian
# 12's layer (1.3.239) keeps lavapipe's objects alive past
# vkDestroyInstance, and LeakSanitizer reports their LLVM allocations from
# the unloaded driver in ogtune and its workers, whose exit status the tests
# check (2026-12-05: about 6 KB in a dozen allocations a process, none of
# onegpu's; test_int8gemm's tuning failed on it). ogtune's and its
# workers' leaks are checked in part a (test_tuner, test_resume,
# test_workers, test_conv_tune, test_qgemm_tune...). A report in a test's
# own process does not fail it (test_embed prints five of lavapipe's LLVM
# allocations, without the layer too, and passes): Criterion's runner does
# not read LeakSanitizer's exit status.
OG_STAGING=1 OG_VALIDATION=sync ASAN_OPTIONS=detect_leaks=0 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L staging
step "the sanitizers on the staging path under synchronisation validation"

ctest --test-dir build-asan --output-on-failure -j"$jobs" -R "^($no_vulkan)\$"
step "the sanitizers on the tests without Vulkan calls"
unset OG_TEST_STRIDE OG_TEST_GEN_MODULES OG_TEST_FORMATS_STRIDE ASAN_OPTIONS UBSAN_OPTIONS

# Bounded fuzzing: six targets, 10 s each, from a fixed seed so that a
# failure replays (scripts/fuzz.sh SECONDS, unseeded, for longer runs; the
# committed corpora came from runs of minutes and are replayed in steps 1
# and 2).
OG_FUZZ_SEED=1 scripts/fuzz.sh 10
step "fuzzing"
echo "test.sh: every step passed in $((SECONDS - start)) s"
