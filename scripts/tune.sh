#!/usr/bin/env bash
# The main job on a fresh machine: install the packages, build what it runs
# (ogtune and the pre-tuned databases the selection reads; not the tests), tune the
# default Vulkan device (lavapipe when there is no GPU) with the quick preset,
# the float GEMM (options are passed on) and then Int8Gemm on a decoder step
# and 512 cubed, and show the kernels chosen per shape and where the database is.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
OG_BUILD_TARGETS="ogtune og_pretuned" scripts/build.sh
build/ogtune devices
build/ogtune tune --preset quick "$@"
build/ogtune tune --op int8gemm --preset quick --shapes 1x768x768,512x512x512
