/* volk, the Vulkan meta-loader, under onegpu's own names: og_volk_names.h
 * (generated from volk.h, cmake/volk_names.cmake) turns every name volk
 * defines into og_<name> (vkCreateInstance -> og_vkCreateInstance,
 * volkInitialize -> og_volkInitialize), in onegpu's sources and in volk.c
 * (og_volk.c) alike. The code still reads as plain volk; the objects define
 * no name of the Vulkan API, so an application that links libonegpu.a and
 * calls Vulkan itself reaches its own loader (tests/test_install.sh checks
 * the archive with nm). Include this header, never volk.h. */
#ifndef OG_VOLK_H
#define OG_VOLK_H

#include "og_volk_names.h"
#include <volk.h>

#endif
