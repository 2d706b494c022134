# Writes OUT, a header of #defines that give every external name volk.c
# defines an og_ prefix: its function pointers (vkCreateInstance ->
# og_vkCreateInstance, one for each `extern PFN_vkX vkX;` of volk.h) and its
# functions (volkInitialize -> og_volkInitialize). Included before volk.h by
# onegpu's sources (runtime/vk/og_volk.h) and before volk.c
# (runtime/vk/og_volk.c), it keeps every name of the Vulkan API, and volk's
# own, out of an application's link: an application that calls Vulkan, or
# uses its own volk, next to libonegpu.a binds to its loader or its volk.
# Usage: cmake -DVOLK_H=/usr/include/volk.h -DOUT=og_volk_names.h -P volk_names.cmake
file(STRINGS "${VOLK_H}" pointers REGEX "^extern PFN_vk[A-Za-z0-9_]+ vk[A-Za-z0-9_]+;")
file(STRINGS "${VOLK_H}" functions REGEX "^[A-Za-z].* volk[A-Za-z0-9_]+\\(")
set(names)
foreach(line ${pointers})
  string(REGEX REPLACE "^extern PFN_vk[A-Za-z0-9_]+ (vk[A-Za-z0-9_]+);.*" "\\1" name "${line}")
  list(APPEND names ${name})
endforeach()
foreach(line ${functions})
  string(REGEX REPLACE "^.* (volk[A-Za-z0-9_]+)\\(.*" "\\1" name "${line}")
  list(APPEND names ${name})
endforeach()
list(REMOVE_DUPLICATES names)
list(LENGTH names count)
if(count LESS 100)
  message(FATAL_ERROR "volk_names.cmake: only ${count} names found in ${VOLK_H}")
endif()
list(SORT names)
set(text "/* Generated from ${VOLK_H} by cmake/volk_names.cmake: volk's ${count}\n")
string(APPEND text " * external names under onegpu's prefix. */\n")
string(APPEND text "#ifndef OG_VOLK_NAMES_H\n#define OG_VOLK_NAMES_H\n")
foreach(name ${names})
  string(APPEND text "#define ${name} og_${name}\n")
endforeach()
string(APPEND text "#endif\n")
file(WRITE "${OUT}" "${text}")
