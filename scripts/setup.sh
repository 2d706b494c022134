#!/usr/bin/env bash
# Installs the Debian packages onegpu builds and tests with: Lua 5.4 (the
# template engine), the Vulkan headers and volk (the loader is opened at run
# time), shaderc (GLSL and HLSL to SPIR-V), SPIRV-Cross (reflection, MSL),
# SQLite (the tuning database), Criterion (the tests), Mesa's lavapipe (the
# CPU Vulkan device every test runs on), spirv-tools (spirv-val on every
# generated module) and the Vulkan validation layers; clang-14 and its
# libFuzzer runtime, libclang-rt-14-dev, for the fuzz targets
# (fuzz/README.md). docs/platform.md, "Dependencies", says why each is
# there. Does nothing when every package is
# already present. nodejs, npm and libegl-dev (the unversioned libEGL.so that
# Dawn's OpenGL backend opens) run the WGSL tests in web/ (npm's webgpu
# package, which scripts/test.sh installs from web/package-lock.json).
# --tests adds chromium, which only CTest's test_webgpu_browser needs (the
# WebGPU runtime in a real browser: headless Chromium, WebGPU on
# SwiftShader), and patchelf, with which scripts/mesa26.sh runs programs on
# Mesa 26; and for the drop-in BLAS's tests (blas/tests): netlib's test
# programs (libblas-test), numpy and pytest (hypothesis: numpy's
# test_multiarray imports it), and OpenBLAS as the system's libblas.so.3
# (the CPU BLAS the drop-in's cost model measures against, as on most
# machines; netlib's programs still run on the reference BLAS). scripts/test.sh
# passes it, scripts/tune.sh does not.
# --peers adds what bench/peers.sh compares against (CLBlast and its tuners on
# PoCL, OpenBLAS); the build and the tests never need those.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  liblua5.4-dev
  libvulkan-dev libvulkan-volk-dev
  libshaderc-dev
  libspirv-cross-c-shared-dev
  libsqlite3-dev
  libcriterion-dev
  mesa-vulkan-drivers
  spirv-tools
  vulkan-validationlayers
  clang-14 libclang-rt-14-dev
  libegl-dev
)
# Node.js from Debian, unless a node and npm are already installed (another
# distribution's nodejs package brings its own npm, which Debian's conflicts with).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi
for option in "$@"; do
  case $option in
    --tests) packages+=(chromium patchelf
        libblas-test libopenblas0-pthread python3-numpy python3-pytest python3-hypothesis) ;;
    --peers) packages+=(
        libclblast-dev clblast-utils
        pocl-opencl-icd ocl-icd-opencl-dev opencl-headers
        libopenblas-dev
      ) ;;
    *) echo "setup: unknown option $option (--tests, --peers)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
