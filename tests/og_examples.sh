# shellcheck shell=sh
# Sourced by test_install.sh and test_build_tree.sh: og_examples builds
# examples/gemm.c and examples/vulkan_app.c against a onegpu package and runs
# every build. vulkan_app includes onegpu.h before <vulkan/vulkan.h> and
# calls Vulkan before, between and after onegpu's calls: a prototype
# onegpu.h took away fails its build (-Werror=implicit-function-declaration),
# a Vulkan name libonegpu.a defined crashes its first call.
# Usage: og_examples CMAKE EXAMPLES_DIR WORK_DIR CFLAGS FIND_ARG PC_DIR LIB_DIR
#   FIND_ARG: how CMake finds the package (-DCMAKE_PREFIX_PATH=<prefix>,
#   -Donegpu_DIR=<build>); PC_DIR: the directory of onegpu.pc; LIB_DIR: that
#   of libonegpu.so. With CMake, gemm and vulkan_app link libonegpu.so,
#   gemm_static and vulkan_app_static libonegpu.a; with pkg-config, both
#   link libonegpu.so.
og_examples() {
  og_cmake=$1 og_src=$2 og_work=$3 og_cflags="$4 -Werror=implicit-function-declaration"
  og_find=$5 og_pc=$6 og_lib=$7
  "$og_cmake" -S "$og_src" -B "$og_work/cmake" "$og_find" -DCMAKE_C_FLAGS="$og_cflags" >/dev/null
  "$og_cmake" --build "$og_work/cmake" >/dev/null
  for og_program in gemm gemm_static vulkan_app vulkan_app_static; do
    "$og_work/cmake/$og_program"
  done
  for og_program in gemm vulkan_app; do
    og_with=
    [ "$og_program" = vulkan_app ] && og_with=vulkan
    # shellcheck disable=SC2046,SC2086 # pkg-config's output and CFLAGS are word lists
    cc $og_cflags -o "$og_work/${og_program}_pc" "$og_src/$og_program.c" \
       $(PKG_CONFIG_PATH="$og_pc" pkg-config --cflags --libs onegpu $og_with)
    LD_LIBRARY_PATH="$og_lib" "$og_work/${og_program}_pc"
  done
}
