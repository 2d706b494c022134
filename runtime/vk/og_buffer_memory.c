/* A buffer's VkBuffer and device memory: created, allocated, bound and
 * mapped for og_buffer_create, og_buffer_create_host and the staging
 * buffer alike, and freed (below them, so og_buffer.c and og_staging.c
 * call down into it). */
#include <inttypes.h>
#include <stdatomic.h>

#include "og_vk.h"

static atomic_uint_fast64_t next_serial = 1;

og_buffer *og_buffer_new(og_context *ctx, uint64_t bytes)
{
    og_buffer *buf = og_mem_alloc(&ctx->allocator, sizeof *buf);
    if (!buf)
        return NULL;
    buf->ctx = ctx;
    buf->serial = atomic_fetch_add(&next_serial, 1);
    buf->size = bytes;
    return buf;
}

og_status og_buffer_back(og_buffer *buf, int staging)
{
    og_context *ctx = buf->ctx;
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = buf->allocated,
                               .usage = buf->usage,
                               .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = ctx->vk.vkCreateBuffer(ctx->device, &info, NULL, &buf->buffer);
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, staging ? "host buffer: creating a host-visible buffer"
                                          : "buffer: vkCreateBuffer");
    VkMemoryRequirements req;
    ctx->vk.vkGetBufferMemoryRequirements(ctx->device, buf->buffer, &req);
    og_memory_choice mc;
    og_memory_choose(&ctx->memory_props, req.memoryTypeBits, staging || ctx->force_staging, &mc);
    int type = staging ? mc.staging_type : mc.operand_type;
    int map = staging || mc.map_writes;
    if (staging && type < 0)
        return og_fail(ctx, OG_ERROR_UNSUPPORTED,
                       "host buffer: the device has no host-visible coherent memory type");
    if (!staging && (type < 0 || (!mc.map_writes && mc.staging_type < 0)))
        return og_fail(ctx, OG_ERROR_UNSUPPORTED,
                       "buffer: no memory type for a storage buffer of %" PRIu64 " bytes "
                       "(memoryTypeBits 0x%x)",
                       buf->size, (unsigned)req.memoryTypeBits);
    /* Memory of a buffer read by device address must say so (Vulkan 1.2). */
    VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                       .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
    VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .pNext = buf->usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT ? &flags : NULL,
        .allocationSize = req.size,
        .memoryTypeIndex = (uint32_t)type};
    if ((r = ctx->vk.vkAllocateMemory(ctx->device, &alloc, NULL, &buf->memory)) != VK_SUCCESS ||
        (r = ctx->vk.vkBindBufferMemory(ctx->device, buf->buffer, buf->memory, 0)) != VK_SUCCESS ||
        (map && (r = ctx->vk.vkMapMemory(ctx->device, buf->memory, 0, VK_WHOLE_SIZE, 0,
                                         &buf->mapped)) != VK_SUCCESS))
        return og_vk_fail(ctx, r, staging ? "host buffer: creating a host-visible buffer"
                                          : "buffer: allocating device memory");
    buf->map_reads = !staging && mc.map_reads;
    return OG_OK;
}

void og_buffer_free(og_buffer *buf)
{
    if (!buf)
        return;
    og_context *ctx = buf->ctx;
    ctx->vk.vkDestroyBuffer(ctx->device, buf->buffer, NULL);
    ctx->vk.vkFreeMemory(ctx->device, buf->memory, NULL); /* unmaps too */
    og_mem_free(&ctx->allocator, buf);
}

og_status og_buffer_made(og_context *ctx, const char *what, uint64_t bytes, VkBufferUsageFlags usage,
                         int host, og_buffer **out)
{
    *out = NULL;
    if (bytes > UINT64_MAX - 3)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "%s: size %" PRIu64 " bytes is too large", what,
                       bytes);
    og_buffer *buf = og_buffer_new(ctx, bytes);
    if (!buf)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    buf->allocated = bytes < 4 ? 4 : (bytes + 3) & ~(uint64_t)3;
    buf->usage = usage;
    og_status st = og_buffer_back(buf, host);
    if (st != OG_OK) {
        og_buffer_free(buf);
        return st;
    }
    *out = buf;
    return OG_OK;
}
