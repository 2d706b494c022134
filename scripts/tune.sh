#!/usr/bin/env bash
# The main job on a fresh machine: install the packages, build, tune the
# default Vulkan device (lavapipe when there is no GPU) with the quick preset,
# and show the kernels chosen per shape and where the database is.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/ogtune devices
build/ogtune tune --preset quick "$@"
