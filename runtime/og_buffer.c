/* Host-visible storage buffers, padded to whole 32-bit words. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "og_internal.h"

static int find_memory_type(const og_context *ctx, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < ctx->memory.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (ctx->memory.memoryTypes[i].propertyFlags & want) == want)
            return (int)i;
    return -1;
}

og_status og_buffer_create(og_context *ctx, uint64_t bytes, og_buffer **out)
{
    *out = NULL;
    /* A 16-bit element at the end of an odd-length buffer is read as part of a word. */
    uint64_t allocated = bytes < 4 ? 4 : (bytes + 3) & ~(uint64_t)3;
    if (bytes > UINT64_MAX - 3)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "buffer: size %llu bytes is too large",
                       (unsigned long long)bytes);
    og_buffer *buf = og_mem_alloc(&ctx->allocator, sizeof *buf);
    if (!buf)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "buffer: out of memory");
    static atomic_uint_fast64_t next_serial = 1;
    buf->ctx = ctx;
    buf->serial = atomic_fetch_add(&next_serial, 1);
    buf->size = bytes;
    buf->allocated = allocated;
    VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = allocated,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                 VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = ctx->vk.vkCreateBuffer(ctx->device, &info, NULL, &buf->buffer);
    if (r != VK_SUCCESS) {
        og_buffer_destroy(buf);
        return og_vk_fail(ctx, r, "buffer: vkCreateBuffer");
    }
    VkMemoryRequirements req;
    ctx->vk.vkGetBufferMemoryRequirements(ctx->device, buf->buffer, &req);
    int type = find_memory_type(ctx, req.memoryTypeBits,
                                VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (type < 0) {
        og_buffer_destroy(buf);
        return og_fail(ctx, OG_ERROR_UNSUPPORTED, "buffer: no host-visible coherent memory type");
    }
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .allocationSize = req.size,
                                  .memoryTypeIndex = (uint32_t)type};
    if ((r = ctx->vk.vkAllocateMemory(ctx->device, &alloc, NULL, &buf->memory)) != VK_SUCCESS ||
        (r = ctx->vk.vkBindBufferMemory(ctx->device, buf->buffer, buf->memory, 0)) != VK_SUCCESS ||
        (r = ctx->vk.vkMapMemory(ctx->device, buf->memory, 0, VK_WHOLE_SIZE, 0, &buf->mapped)) !=
            VK_SUCCESS) {
        og_buffer_destroy(buf);
        return og_vk_fail(ctx, r, "buffer: allocating device memory");
    }
    memset(buf->mapped, 0, allocated);
    *out = buf;
    return OG_OK;
}

void og_buffer_destroy(og_buffer *buf)
{
    if (!buf)
        return;
    og_context *ctx = buf->ctx;
    for (int i = 0; i < 3; i++)
        ctx->vk.vkDestroyBufferView(ctx->device, buf->texels[i], NULL);
    ctx->vk.vkDestroyBuffer(ctx->device, buf->buffer, NULL);
    ctx->vk.vkFreeMemory(ctx->device, buf->memory, NULL); /* unmaps too */
    og_mem_free(&ctx->allocator, buf);
}

og_status og_buffer_texels(og_buffer *buf, uint32_t words, VkBufferView *out)
{
    static const VkFormat formats[3] = {VK_FORMAT_R32_UINT, VK_FORMAT_R32G32_UINT,
                                        VK_FORMAT_R32G32B32A32_UINT};
    og_context *ctx = buf->ctx;
    int kind = words == 4 ? 2 : words == 2 ? 1 : 0;
    if (!buf->texels[kind]) {
        /* Whole texels, as many as maxTexelBufferElements allows: og_params_for_call
         * sends calls that reach further to storage-buffer loads, and vector
         * loads only read whole aligned groups inside the operand. */
        uint64_t texel = 4 * (uint64_t)words;
        uint64_t count = buf->allocated / texel;
        if (count > ctx->limits.max_texel_elements)
            count = ctx->limits.max_texel_elements;
        if (count == 0)
            return og_fail(ctx, OG_ERROR_UNSUPPORTED, "buffer: %llu bytes hold no %llu-byte texel",
                           (unsigned long long)buf->allocated, (unsigned long long)texel);
        VkBufferViewCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
                                       .buffer = buf->buffer,
                                       .format = formats[kind],
                                       .range = count * texel};
        VkResult r = ctx->vk.vkCreateBufferView(ctx->device, &info, NULL, &buf->texels[kind]);
        if (r != VK_SUCCESS)
            return og_vk_fail(ctx, r, "buffer: vkCreateBufferView");
    }
    *out = buf->texels[kind];
    return OG_OK;
}

uint64_t og_buffer_size(const og_buffer *buf)
{
    return buf->size;
}

static og_status check_range(const og_buffer *buf, const char *op, uint64_t offset, uint64_t bytes)
{
    if (offset > buf->size || bytes > buf->size - offset)
        return og_fail(buf->ctx, OG_ERROR_INVALID_ARGUMENT,
                       "%s: bytes %llu..%llu lie outside the buffer of %llu bytes", op,
                       (unsigned long long)offset, (unsigned long long)(offset + bytes),
                       (unsigned long long)buf->size);
    return OG_OK;
}

og_status og_buffer_write(og_buffer *buf, uint64_t offset, const void *src, uint64_t bytes)
{
    og_status st = check_range(buf, "buffer write", offset, bytes);
    if (st == OG_OK && bytes)
        memcpy((char *)buf->mapped + offset, src, bytes);
    return st;
}

og_status og_buffer_read(const og_buffer *buf, uint64_t offset, void *dst, uint64_t bytes)
{
    og_status st = check_range(buf, "buffer read", offset, bytes);
    if (st == OG_OK && bytes)
        memcpy(dst, (const char *)buf->mapped + offset, bytes);
    return st;
}
