#!/usr/bin/env bash
# Configures and builds onegpu into build/ (or $OG_BUILD_DIR). Extra arguments
# go to CMake, e.g. -DOG_WERROR=ON or -DOG_SANITIZE=ON. OG_BUILD_TARGETS, a
# space-separated list of targets (e.g. "ogtune og_pretuned"), builds only
# those and what they need; unset, everything (the tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${OG_BUILD_DIR:-build}
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
targets=()
read -r -a targets <<<"${OG_BUILD_TARGETS:-}"
cmake --build "$dir" -j"$(nproc)" ${targets[@]+--target "${targets[@]}"}
