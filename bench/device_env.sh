# shellcheck shell=bash disable=SC2034 # (its variables are for the scripts that source it)
# What the device scripts (bench/device_check_*.sh) share, sourced from the
# repository root by a script that has `set -euo pipefail`:
#
#   device_prepare BIN...   here: builds the project, then copies what BIN...
#       load at run time (their shared libraries, glibc's loader, Debian's
#       Vulkan loader, glvnd's libGLdispatch) into build/device/lib
#   device_find_icd         there, first: finds the Vulkan driver (ICD)
#       manifest (below); returns non-zero, saying where it looked, if none
#   device_run_env PROBE    there: puts the carried libraries on
#       LD_LIBRARY_PATH (all but glibc's), and when PROBE cannot start with the
#       machine's own glibc, sets the array DEVICE_RUN to the carried glibc
#       loader; run the binaries as "${DEVICE_RUN[@]}" BIN ARGS
#
# ICD discovery: VK_DRIVER_FILES or VK_ICD_FILENAMES when set and naming files
# that exist; else the manifests in the loader's own places (XDG config dirs,
# /etc/vulkan, XDG data dirs, /usr/{local/,}share/vulkan), each printed with
# its library_path. NVIDIA's is preferred: when other drivers' manifests lie
# beside it, VK_ICD_FILENAMES is narrowed to it (the loader's device 0 is the
# one measured). With no NVIDIA manifest but NVIDIA's driver library present
# (libGLX_nvidia.so.0 or libEGL_nvidia.so.0, through ldconfig -p or the usual
# library dirs), a manifest for it is written to a temporary dir and exported.
# Otherwise the carried loader reads the standard places itself and nothing is
# exported. DEVICE_ROOT (testing only) prefixes every searched path and turns
# off the ldconfig search.

DEVICE_LIB=build/device/lib
DEVICE_RUN=()

device_prepare() {
  scripts/build.sh
  rm -rf build/device && mkdir -p "$DEVICE_LIB"
  local bin so loader
  for bin in "$@"; do
    ldd "$bin" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }' |
      while read -r so; do cp -L "$so" "$DEVICE_LIB/"; done
  done
  loader=$(ldconfig -p | awk '/libvulkan\.so\.1 .*x86-64/ { print $NF; exit }')
  if [ -z "$loader" ]; then
    (cd build/device && apt-get download libvulkan1 && dpkg-deb -x libvulkan1_*.deb pkg)
    loader=$(find build/device/pkg -name 'libvulkan.so.1*' -type f | head -n1)
  fi
  cp -L "$loader" "$DEVICE_LIB/libvulkan.so.1"
  # NVIDIA's Vulkan driver (libGLX_nvidia.so.0) needs glvnd's dispatch
  # library, which a bare machine may lack: vkCreateInstance then fails with
  # VK_ERROR_INCOMPATIBLE_DRIVER (an H200 machine, 2026-12-04).
  (cd build/device && apt-get download libglvnd0 && dpkg-deb -x libglvnd0_*.deb glvnd)
  cp -L "$(find build/device/glvnd -name 'libGLdispatch.so.0*' -type f | head -n1)" \
    "$DEVICE_LIB/libGLdispatch.so.0"
  rm -rf build/device/glvnd build/device/*.deb
  du -sh build/device
}

device_run_env() {
  local probe=$1 so
  [ -x "$DEVICE_LIB/ld-linux-x86-64.so.2" ] || {
    echo "$0: run '$0 prepare' first" >&2
    return 1
  }
  # The binaries run with the machine's own glibc when it is new enough (the
  # other carried libraries on LD_LIBRARY_PATH), else with the glibc carried
  # along, through its loader.
  export LD_LIBRARY_PATH=$PWD/build/device/lib-no-libc
  mkdir -p "$LD_LIBRARY_PATH"
  for so in "$DEVICE_LIB"/*; do
    case $(basename "$so") in
      libc.so* | ld-linux* | libm.so* | libpthread.so* | libdl.so* | librt.so*) ;;
      *) ln -sf "$PWD/$so" "$LD_LIBRARY_PATH/" ;;
    esac
  done
  DEVICE_RUN=()
  if ! "$probe" help > /dev/null 2>&1; then
    DEVICE_RUN=("$DEVICE_LIB"/ld-linux-x86-64.so.2 --library-path "$PWD/$DEVICE_LIB")
    echo "# the machine's glibc cannot run $probe; using the carried one"
  fi
}

# The loader's ICD directories, in its order, without repeats (DEVICE_ICD_DIRS).
device__icd_dirs() {
  local home=${HOME:-/root} d seen=:
  local -a cfg data all
  IFS=: read -ra cfg <<< "${XDG_CONFIG_DIRS:-/etc/xdg}"
  IFS=: read -ra data <<< "${XDG_DATA_DIRS:-/usr/local/share:/usr/share}"
  all=("${XDG_CONFIG_HOME:-$home/.config}")
  for d in "${cfg[@]}"; do [ -z "$d" ] || all+=("$d"); done
  all+=(/etc "${XDG_DATA_HOME:-$home/.local/share}")
  for d in "${data[@]}"; do [ -z "$d" ] || all+=("$d"); done
  all+=(/usr/share /usr/local/share)
  DEVICE_ICD_DIRS=()
  for d in "${all[@]}"; do
    d=${DEVICE_ROOT:-}${d%/}/vulkan/icd.d
    case $seen in *":$d:"*) continue ;; esac
    seen+="$d:"
    DEVICE_ICD_DIRS+=("$d")
  done
}

DEVICE_NVIDIA_LIBS=(libGLX_nvidia.so.0 libEGL_nvidia.so.0)
DEVICE_LIB_DIRS=(/usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/nvidia/lib64)

# Where the dynamic linker finds library NAME (a bare file name), or nothing.
device__find_lib() {
  local name=$1 d hit ldconfig
  if [ -z "${DEVICE_ROOT:-}" ]; then
    ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
    hit=$("$ldconfig" -p 2> /dev/null |
      awk -v n="$name" '$1 == n && /x86-64/ { print $NF; exit }') || true
    [ -z "$hit" ] || { echo "$hit"; return 0; }
  fi
  for d in "${DEVICE_LIB_DIRS[@]}"; do
    [ ! -e "${DEVICE_ROOT:-}$d/$name" ] || { echo "${DEVICE_ROOT:-}$d/$name"; return 0; }
  done
  return 1
}

device__library_path() {
  sed -n 's/.*"library_path"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$1" | head -n1
}

# Prints manifest FILE and its library, and whether that library is there.
# Returns 0 when the library is there.
device__show_manifest() {
  local f=$1 lib state=found at
  lib=$(device__library_path "$f")
  case $lib in
    "") state="no library_path" ;;
    */*)
      at=$lib
      [ "${lib#/}" != "$lib" ] || at=$(dirname "$f")/$lib
      [ -e "$at" ] || state="library missing"
      ;;
    *) device__find_lib "$lib" > /dev/null || state="library not found" ;;
  esac
  echo "#   $f: library_path ${lib:-?} ($state)"
  [ "$state" = found ]
}

device__is_nvidia() {
  case $(basename "$1") in nvidia_icd*.json) return 0 ;; esac
  case $(device__library_path "$1") in *libGLX_nvidia* | *libEGL_nvidia* | *libnvidia*) return 0 ;; esac
  return 1
}

device__export_icd() {
  export VK_ICD_FILENAMES=$1 VK_DRIVER_FILES=$1
  echo "# exported VK_ICD_FILENAMES=VK_DRIVER_FILES=$1"
}

device_find_icd() {
  local var val f d ok lib tmp
  local -a list found usable nvidia
  echo "# Vulkan driver (ICD) manifests"
  # VK_DRIVER_FILES first: the loader prefers it.
  for var in VK_DRIVER_FILES VK_ICD_FILENAMES; do
    val=${!var:-}
    [ -n "$val" ] || continue
    IFS=: read -ra list <<< "$val"
    ok=1 found=()
    for f in "${list[@]}"; do
      if [ -d "$f" ]; then
        for d in "$f"/*.json; do [ ! -f "$d" ] || found+=("$d"); done
      elif [ -f "$f" ]; then
        found+=("$f")
      else
        ok=0
      fi
    done
    if [ "$ok" = 1 ] && [ "${#found[@]}" -gt 0 ]; then
      echo "# from $var=$val:"
      for f in "${found[@]}"; do device__show_manifest "$f" || true; done
      return 0
    fi
    echo "# $var=$val names no manifest that exists; unset, searching instead"
    unset "$var"
  done

  device__icd_dirs
  found=() usable=() nvidia=()
  for d in "${DEVICE_ICD_DIRS[@]}"; do
    for f in "$d"/*.json; do
      [ -f "$f" ] || continue
      found+=("$f")
      device__show_manifest "$f" || continue
      usable+=("$f")
      ! device__is_nvidia "$f" || nvidia+=("$f")
    done
  done
  if [ "${#nvidia[@]}" -gt 0 ]; then
    echo "# using NVIDIA's: ${nvidia[*]}"
    if [ "${#usable[@]}" -gt "${#nvidia[@]}" ]; then
      # Only NVIDIA's, so that its GPU is the loader's device 0.
      device__export_icd "$(IFS=:; echo "${nvidia[*]}")"
    fi
    return 0
  fi

  for lib in "${DEVICE_NVIDIA_LIBS[@]}"; do
    f=$(device__find_lib "$lib") || continue
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/onegpu-icd.XXXXXX")
    printf '{"file_format_version":"1.0.0","ICD":{"library_path":"%s","api_version":"1.3.0"}}\n' \
      "$f" > "$tmp/nvidia_icd.json"
    echo "# no NVIDIA manifest, but NVIDIA's Vulkan driver library is at $f:"
    echo "# wrote $tmp/nvidia_icd.json for it"
    device__export_icd "$tmp/nvidia_icd.json"
    return 0
  done

  if [ "${#usable[@]}" -gt 0 ]; then
    echo "# no NVIDIA Vulkan driver found; the loader uses the manifests above"
    return 0
  fi
  {
    echo "$0: no Vulkan driver (ICD) manifest or NVIDIA Vulkan library (${DEVICE_NVIDIA_LIBS[*]}) was found."
    [ "${#found[@]}" = 0 ] ||
      echo "  (the manifests printed above name libraries that are not there)"
    echo "  manifests looked for (*.json) in:"
    printf '    %s\n' "${DEVICE_ICD_DIRS[@]}"
    echo "  the library looked for in:${DEVICE_ROOT:+ (ldconfig skipped under DEVICE_ROOT)}"
    [ -n "${DEVICE_ROOT:-}" ] || echo "    ldconfig -p"
    for d in "${DEVICE_LIB_DIRS[@]}"; do echo "    ${DEVICE_ROOT:-}$d"; done
    echo "  VK_ICD_FILENAMES / VK_DRIVER_FILES: unset or naming nothing that exists"
    echo "  Point VK_ICD_FILENAMES at the GPU driver's manifest (NVIDIA's: nvidia_icd.json naming libGLX_nvidia.so.0)."
  } >&2
  return 1
}
