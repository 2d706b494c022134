/* The driver's pipeline cache, kept on disk so a new process does not
 * compile the kernels' pipelines again (for a GPU driver, the machine code
 * of each kernel; the SPIR-V cache only spares the shader compiler):
 *
 *   <cache dir>/pipelines-<vendorID>-<deviceID>-<driverVersion>-<pipelineCacheUUID>.bin
 *
 * (og_cache_dir; the three numbers as 8 hex digits, the UUID as 32), so a
 * driver update or another device never reads another's file. It holds
 * vkGetPipelineCacheData's bytes followed by their checksum (og_cache_write).
 *
 * Read at og_context_create: the driver gets the bytes only when the
 * checksum holds (a truncated or damaged file is refused) and their
 * VkPipelineCacheHeaderVersionOne names this device: header size 32, version
 * one, vendorID, deviceID and pipelineCacheUUID. What follows the header is
 * the driver's own format, left to the driver to check. Written at
 * og_context_destroy when the context created a pipeline: not after the
 * first pipeline, which would put a file write into every process's first
 * call, the very latency this cache is for; a process that ends without
 * og_context_destroy keeps the SPIR-V cache only. OG_SPIRV_CACHE=0 turns it
 * off with the SPIR-V cache. */
#include <stdio.h>
#include <string.h>

#include "og_vk.h"

/* Larger files are ignored and larger caches not written. */
#define OG_PIPELINE_CACHE_MAX (64u << 20)

/* sizeof(VkPipelineCacheHeaderVersionOne), which the specification fixes. */
#define OG_PIPELINE_CACHE_HEADER 32u

/* The file of ctx's device and driver; 0 when the caches are off. */
static int cache_file(const og_context *ctx, char *path, size_t len)
{
    char dir[900];
    if (!og_cache_dir(dir, sizeof dir))
        return 0;
    /* The UUID as the tuning database keeps it (og_device_info). */
    int n = snprintf(path, len, "%s/pipelines-%08x-%08x-%08x-%s.bin", dir, ctx->info.vendor_id,
                     ctx->info.device_id, ctx->info.driver_version, ctx->info.pipeline_cache_uuid);
    return n > 0 && (size_t)n < len;
}

/* The header's fields are stored least significant byte first, whatever
 * the host's byte order (Vulkan specification, VkPipelineCacheHeaderVersionOne). */
static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Whether bytes of data start with the header of ctx's device. */
static int header_matches(const og_context *ctx, const unsigned char *data, size_t bytes)
{
    return bytes >= OG_PIPELINE_CACHE_HEADER && le32(data) == OG_PIPELINE_CACHE_HEADER &&
           le32(data + 4) == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
           le32(data + 8) == ctx->props.vendorID && le32(data + 12) == ctx->props.deviceID &&
           memcmp(data + 16, ctx->props.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

void og_pipeline_cache_open(og_context *ctx)
{
    void *data = NULL;
    size_t bytes = 0;
    if (!cache_file(ctx, ctx->pipeline_cache_path, sizeof ctx->pipeline_cache_path))
        ctx->pipeline_cache_path[0] = '\0';
    else if (og_cache_read(&ctx->allocator, ctx->pipeline_cache_path, OG_PIPELINE_CACHE_HEADER,
                           OG_PIPELINE_CACHE_MAX, &data, &bytes) &&
             !header_matches(ctx, data, bytes)) {
        og_mem_free(&ctx->allocator, data);
        data = NULL;
        bytes = 0;
    }
    VkPipelineCacheCreateInfo info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                      .initialDataSize = bytes,
                                      .pInitialData = data};
    VkResult r = ctx->vk.vkCreatePipelineCache(ctx->device, &info, NULL, &ctx->pipeline_cache);
    if (r != VK_SUCCESS && bytes) { /* the driver refused the bytes: start empty */
        info.initialDataSize = bytes = 0;
        info.pInitialData = NULL;
        r = ctx->vk.vkCreatePipelineCache(ctx->device, &info, NULL, &ctx->pipeline_cache);
    }
    if (r != VK_SUCCESS) /* pipelines are then created without a cache */
        ctx->pipeline_cache = VK_NULL_HANDLE;
    ctx->pipeline_cache_loaded = ctx->pipeline_cache ? bytes : 0;
    og_mem_free(&ctx->allocator, data);
}

/* Writes the driver's data to the context's file; silent when it cannot. */
static void store(og_context *ctx)
{
    size_t bytes = 0;
    VkResult r = ctx->vk.vkGetPipelineCacheData(ctx->device, ctx->pipeline_cache, &bytes, NULL);
    if (r != VK_SUCCESS || bytes < OG_PIPELINE_CACHE_HEADER || bytes > OG_PIPELINE_CACHE_MAX)
        return;
    void *data = og_mem_alloc(&ctx->allocator, bytes);
    if (data && ctx->vk.vkGetPipelineCacheData(ctx->device, ctx->pipeline_cache, &bytes, data) ==
                    VK_SUCCESS)
        og_cache_write(ctx->pipeline_cache_path, data, bytes);
    og_mem_free(&ctx->allocator, data);
}

void og_pipeline_cache_close(og_context *ctx)
{
    if (!ctx->pipeline_cache)
        return;
    if (ctx->pipeline_cache_path[0] && ctx->n_pipelines > 0)
        store(ctx);
    ctx->vk.vkDestroyPipelineCache(ctx->device, ctx->pipeline_cache, NULL);
    ctx->pipeline_cache = VK_NULL_HANDLE;
}
