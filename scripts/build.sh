#!/usr/bin/env bash
# Configures and builds onegpu into build/ (or $OG_BUILD_DIR). Extra arguments
# go to CMake, e.g. -DOG_WERROR=ON or -DOG_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${OG_BUILD_DIR:-build}
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
