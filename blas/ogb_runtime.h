/* libonegpu, opened at the first GPU call: the public API (onegpu.h) as a table. */
#ifndef OGB_RUNTIME_H
#define OGB_RUNTIME_H

#include <stddef.h>

#include "onegpu.h"

/* The functions of onegpu.h the drop-in uses, resolved from libonegpu.so. */
typedef struct ogb_runtime {
    __typeof__(og_context_create) *context_create;
    __typeof__(og_context_destroy) *context_destroy;
    __typeof__(og_context_last_error) *context_last_error;
    __typeof__(og_last_error) *last_error;
    __typeof__(og_context_device_name) *context_device_name;
    __typeof__(og_context_device_limits) *context_device_limits;
    __typeof__(og_context_validation_errors) *context_validation_errors;
    __typeof__(og_context_vk_device) *context_vk_device;
    __typeof__(og_context_vk_queue) *context_vk_queue;
    __typeof__(og_context_queue_family) *context_queue_family;
    __typeof__(og_context_memory_placement) *context_memory_placement;
    __typeof__(og_buffer_create) *buffer_create;
    __typeof__(og_buffer_create_host) *buffer_create_host;
    __typeof__(og_buffer_host_pointer) *buffer_host_pointer;
    __typeof__(og_buffer_vk_buffer) *buffer_vk_buffer;
    __typeof__(og_buffer_vk_offset) *buffer_vk_offset;
    __typeof__(og_buffer_destroy) *buffer_destroy;
    __typeof__(og_buffer_write) *buffer_write;
    __typeof__(og_buffer_read) *buffer_read;
    __typeof__(og_gemm_create) *gemm_create;
    __typeof__(og_gemm_destroy) *gemm_destroy;
    __typeof__(og_gemm_run) *gemm_run;
    __typeof__(og_gemm_encode) *gemm_encode;
} ogb_runtime;

/* Opens libonegpu (RTLD_NOW | RTLD_LOCAL) and resolves the table, once:
 * ONEGPU_BLAS_RUNTIME when set, else the runtime's soname in this library's
 * own directory (dladdr; where both are installed and built), else the
 * soname through the dynamic linker's search. Loading it is deferred to the
 * first call that runs on the GPU so that a preloaded drop-in costs a
 * process nothing until then (no C++ runtime, shader compiler or Vulkan
 * loader). It is never closed (Vulkan drivers keep threads). Returns NULL
 * and a reason in why (len bytes) when it cannot be opened or lacks a
 * function. Not thread-safe: called under the GPU lock (ogb_gpu.c). */
const ogb_runtime *ogb_runtime_open(char *why, size_t len);

#endif /* OGB_RUNTIME_H */
