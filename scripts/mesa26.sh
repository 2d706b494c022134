#!/usr/bin/env bash
# The second driver lane: Mesa 26's lavapipe, which executes
# VK_KHR_cooperative_matrix (8x8x8 fragments, subgroups of 8), beside Debian
# 12's Mesa 22.3.6, which has no matrices (docs/platform.md, "Two lavapipes,
# two devices").
#
#   scripts/mesa26.sh setup          make the tree (seconds when it is there)
#   scripts/mesa26.sh run CMD ARGS   run CMD on Mesa 26's lavapipe
#   scripts/mesa26.sh root           print the tree's directory
#
# Trixie-backports' mesa-vulkan-drivers needs glibc 2.39, so it cannot be
# installed on Debian 12. `setup` has apt resolve it, with the Vulkan loader,
# glslang and SPIRV-Tools, against trixie and trixie-backports in a private
# apt state (Debian's archive only, checked with Debian's keyring, nothing of
# the system's apt configuration touched), downloads the .debs and unpacks
# them into the tree with dpkg-deb: a self-contained userland with its own
# glibc, made without root, chroot or maintainer scripts. The tree lives in
# $OG_MESA26_DIR (default ~/.cache/onegpu/mesa26: not under XDG_CACHE_HOME,
# which the tests point elsewhere) and is remade only when the package list
# changes or a newer version is published.
#
# `run` runs a program built here (ogtune, a test) against the tree's glibc,
# Vulkan loader and lavapipe: an ELF program runs as a copy whose interpreter
# is the tree's ld.so and whose RPATH is the tree's library directory followed
# by the program's own RPATH or RUNPATH (its $ORIGIN resolved to the original
# program's directory), so a program linked against this build's libonegpu.so
# finds it as it does outside the lane, the libraries it was linked with and
# does not find there (Lua, SQLite, SPIRV-Cross, Criterion) come from the
# system as usual, and its own children
# (ogtune's tuning workers re-execute /proc/self/exe) stay in the lane. Why not
# a chroot with the build inside: it needs root, a second toolchain (trixie's
# glslang compiles differently from the one the main lane tests), and a
# second build; this way the very binaries the main lane tested run on the
# newer driver. VK_DRIVER_FILES names the tree's lavapipe only, and
# OG_MESA26=1 and OG_MESA26_ROOT (the tree's directory) tell the lane's
# tests where they run. The tree's glslang, spirv-val and spirv-dis are in
# $(mesa26.sh root)/bin, as wrappers.
set -euo pipefail

dir=${OG_MESA26_DIR:-${HOME:?}/.cache/onegpu/mesa26}
# What the lane installs: the driver from trixie-backports (26.1.x, LLVM 19),
# everything else from trixie.
packages=(mesa-vulkan-drivers libvulkan1 glslang-tools spirv-tools)
lib=$dir/root/usr/lib/x86_64-linux-gnu
ldso=$lib/ld-linux-x86-64.so.2
manifest=$dir/lvp_icd.json

die() { echo "mesa26: $*" >&2; exit 1; }

apt_in_tree() {
  apt-get -q -o Dir::Etc::SourceList="$dir/apt/sources.list" \
    -o Dir::Etc::SourceParts=/dev/null -o Dir::Etc::Preferences=/dev/null \
    -o Dir::Etc::PreferencesParts=/dev/null -o Dir::State="$dir/apt/state" \
    -o Dir::State::status="$dir/apt/status" -o Dir::Cache="$dir/apt/cache" \
    -o APT::Architecture=amd64 -o APT::Architectures::=amd64 \
    -o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)" "$@"
}

setup() {
  command -v apt-get >/dev/null || die "needs apt-get (Debian)"
  command -v patchelf >/dev/null || die "needs patchelf (scripts/setup.sh --tests installs it)"
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -r "$keyring" ] || die "needs Debian's archive keyring ($keyring)"
  mkdir -p "$dir/apt/state/lists/partial" "$dir/apt/cache/archives/partial"
  cat >"$dir/apt/sources.list" <<EOF
deb [signed-by=$keyring] http://deb.debian.org/debian trixie main
deb [signed-by=$keyring] http://deb.debian.org/debian trixie-backports main
EOF
  : >"$dir/apt/status"
  apt_in_tree update >"$dir/apt/update.log" 2>&1 ||
    die "apt-get update for trixie failed (is deb.debian.org reachable?): $(tail -3 "$dir/apt/update.log")"
  # The exact versions apt would take now: the tree is current when they are
  # what it was made from.
  local want
  want=$(apt_in_tree install -s --no-install-recommends -t trixie-backports "${packages[@]}" 2>&1 |
    sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1=\2/p' | sort) ||
    die "apt cannot resolve ${packages[*]} in trixie-backports"
  [ -n "$want" ] || die "apt resolved nothing for ${packages[*]}"
  if [ -f "$dir/versions" ] && [ -x "$ldso" ] && [ "$want" = "$(cat "$dir/versions")" ]; then
    echo "mesa26: the tree in $dir is current ($(grep '^mesa-vulkan-drivers=' "$dir/versions"))"
    return
  fi
  echo "mesa26: downloading $(wc -l <<<"$want") packages into $dir"
  rm -f "$dir"/apt/cache/archives/*.deb
  apt_in_tree install -y --download-only --no-install-recommends -t trixie-backports \
    "${packages[@]}" >"$dir/apt/install.log" 2>&1 ||
    die "downloading failed: $(tail -3 "$dir/apt/install.log")"
  rm -rf "$dir/root.new" && mkdir -p "$dir/root.new"
  local deb
  for deb in "$dir"/apt/cache/archives/*.deb; do
    dpkg-deb -x "$deb" "$dir/root.new" || die "cannot unpack $deb"
  done
  rm -rf "$dir/root" && mv "$dir/root.new" "$dir/root"
  rm -f "$dir"/apt/cache/archives/*.deb
  [ -x "$ldso" ] || die "the tree has no $ldso"
  [ -f "$lib/libvulkan_lvp.so" ] || die "the tree has no lavapipe ($lib/libvulkan_lvp.so)"
  # lavapipe's manifest, naming the tree's library by its full path.
  sed "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$lib/libvulkan_lvp.so\"#" \
    "$dir/root/usr/share/vulkan/icd.d/lvp_icd.json" >"$manifest"
  mkdir -p "$dir/bin"
  local tool
  for tool in glslang glslangValidator spirv-val spirv-dis spirv-as spirv-opt; do
    [ -e "$dir/root/usr/bin/$tool" ] || continue
    printf '#!/bin/sh\nexec "%s" --library-path "%s" "%s" "$@"\n' \
      "$ldso" "$lib" "$dir/root/usr/bin/$tool" >"$dir/bin/$tool"
    chmod +x "$dir/bin/$tool"
  done
  printf '%s\n' "$want" >"$dir/versions"
  echo "mesa26: made $dir ($(grep '^mesa-vulkan-drivers=' "$dir/versions"))"
}

run() {
  [ $# -ge 1 ] || die "run: which command?"
  [ -x "$ldso" ] && [ -f "$manifest" ] || die "no tree in $dir: run scripts/mesa26.sh setup first"
  export VK_DRIVER_FILES=$manifest OG_MESA26=1 OG_MESA26_ROOT=$dir
  unset VK_ICD_FILENAMES
  local prog
  prog=$(command -v -- "$1") || die "run: no command $1"
  # A script's own programs would start on the system's glibc, outside the
  # lane: refused, so nothing silently runs on the other driver.
  [ "$(head -c 4 -- "$prog" | tail -c 3)" = ELF ] ||
    die "run: $1 is not an ELF program; run the programs inside it through mesa26.sh run"
  # The copy lives as long as the command: a temporary directory removed
  # when it ends (the copy is about 12 MB; copying takes milliseconds).
  local tmp status=0
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/og-mesa26.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cp -- "$prog" "$tmp/$(basename -- "$prog")"
  # The tree's library directory first, then the program's own RPATH or
  # RUNPATH (a program linked against this build's libonegpu.so finds it
  # there), its $ORIGIN the original program's directory, not the copy's.
  local origin rpath entry search=$lib entries=()
  origin=$(dirname -- "$(readlink -f -- "$prog")")
  rpath=$(patchelf --print-rpath "$prog") || die "run: cannot read $1's RPATH"
  IFS=: read -r -a entries <<<"$rpath"
  for entry in ${entries[@]+"${entries[@]}"}; do
    [ -n "$entry" ] || continue
    # shellcheck disable=SC2016 # $ORIGIN is the dynamic linker's, not the shell's
    entry=${entry//'${ORIGIN}'/$origin} entry=${entry//'$ORIGIN'/$origin}
    search=$search:$entry
  done
  patchelf --set-interpreter "$ldso" --force-rpath --set-rpath "$search" "$tmp/$(basename -- "$prog")"
  shift
  "$tmp/$(basename -- "$prog")" "$@" || status=$?
  exit "$status"
}

case ${1:-} in
  setup) setup ;;
  run) shift; run "$@" ;;
  root) echo "$dir" ;;
  *) echo "usage: scripts/mesa26.sh setup | run COMMAND [ARGS...] | root" >&2; exit 2 ;;
esac
