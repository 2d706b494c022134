/* Storage buffers: made in device memory (og_memory_choose) or wrapped
 * around the application's VkBuffer; host access mapped or staged. */
#include <inttypes.h>
#include <string.h>

#include "og_vk.h"

/* Up to how many bytes a new mapped buffer is zeroed by the host. */
#define OG_HOST_ZERO_BYTES (256u * 1024u)

/* The device address of byte offset of buffer, 0 where the context does
 * not read buffers by address. */
static uint64_t device_address(og_context *ctx, VkBuffer buffer, uint64_t offset)
{
    if (!ctx->limits.buffer_address || !ctx->vk.vkGetBufferDeviceAddress)
        return 0;
    VkBufferDeviceAddressInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
                                      .buffer = buffer};
    return ctx->vk.vkGetBufferDeviceAddress(ctx->device, &info) + offset;
}

og_status og_buffer_create(og_context *ctx, uint64_t bytes, og_buffer **out)
{
    og_buffer *buf;
    VkBufferUsageFlags usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
        VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
        (ctx->limits.buffer_address ? VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT : 0u);
    og_status st = og_buffer_made(ctx, "buffer", bytes, usage, 0, &buf);
    *out = NULL;
    if (st != OG_OK)
        return st;
    buf->address = device_address(ctx, buf->buffer, 0);
    /* Small mapped buffers (host-coherent memory) are zeroed by the host:
     * no queue round trip, and the next vkQueueSubmit makes the writes
     * visible to the device. Large ones are filled on the device, where a
     * memset through a discrete GPU's BAR would be the slower way. */
    if (buf->mapped && buf->allocated <= OG_HOST_ZERO_BYTES)
        memset(buf->mapped, 0, buf->allocated);
    else if ((st = og_buffer_zero(buf)) != OG_OK) {
        og_buffer_destroy(buf);
        return st;
    }
    *out = buf;
    return OG_OK;
}

og_status og_buffer_create_host(og_context *ctx, uint64_t bytes, og_buffer **out)
{
    og_status st = og_buffer_made(ctx, "host buffer", bytes,
                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 1, out);
    if (st == OG_OK)
        (*out)->map_reads = 1; /* its only host access is the mapping */
    return st;
}

/* The alignment descriptors of this buffer must start at: the larger of
 * the storage and the texel offset alignments (both powers of two). */
static uint64_t bind_alignment(const og_context *ctx)
{
    uint64_t s = ctx->props.limits.minStorageBufferOffsetAlignment;
    uint64_t t = ctx->props.limits.minTexelBufferOffsetAlignment;
    uint64_t a = s > t ? s : t;
    return a ? a : 1;
}

og_status og_buffer_wrap(og_context *ctx, VkBuffer buffer, uint64_t offset, uint64_t bytes,
                         VkBufferUsageFlags usage, og_buffer **out)
{
    *out = NULL;
    if (buffer == VK_NULL_HANDLE)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "buffer wrap: the VkBuffer is VK_NULL_HANDLE");
    if (!(usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT))
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "buffer wrap: usage 0x%x lacks VK_BUFFER_USAGE_STORAGE_BUFFER_BIT",
                       (unsigned)usage);
    if (offset % 4 != 0 || bytes % 4 != 0 || bytes == 0)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "buffer wrap: offset (%" PRIu64 ") and size (%" PRIu64 ") must be whole "
                       "32-bit words, size at least one (the kernels read words)",
                       offset, bytes);
    if (offset > UINT64_MAX - bytes)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "buffer wrap: offset %" PRIu64 " + size %" PRIu64 " overflows", offset, bytes);
    og_buffer *buf = og_buffer_new(ctx, bytes);
    if (!buf)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "buffer wrap: out of memory");
    buf->wrapped = 1;
    buf->buffer = buffer;
    buf->usage = usage;
    uint64_t align = bind_alignment(ctx);
    buf->base = offset / align * align;
    buf->skew = offset - buf->base;
    buf->allocated = buf->skew + bytes;
    if (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT)
        buf->address = device_address(ctx, buffer, buf->base);
    *out = buf;
    return OG_OK;
}

void og_buffer_destroy(og_buffer *buf)
{
    if (!buf)
        return;
    og_context *ctx = buf->ctx;
    og_sets_forget(buf);
    for (int i = 0; i < 3; i++)
        ctx->vk.vkDestroyBufferView(ctx->device, buf->texels[i], NULL);
    if (buf->wrapped)
        og_mem_free(&ctx->allocator, buf);
    else
        og_buffer_free(buf);
}

int og_buffer_texel_ok(const og_buffer *buf)
{
    return (buf->usage & VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
}

int og_buffer_bindable(const og_buffer *buf)
{
    return (buf->usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT) != 0;
}

uint64_t og_buffer_size(const og_buffer *buf)
{
    return buf->size;
}

void *og_buffer_host_pointer(const og_buffer *buf)
{
    return buf->mapped ? (char *)buf->mapped + buf->skew : NULL;
}

VkBuffer og_buffer_vk_buffer(const og_buffer *buf)
{
    return buf->buffer;
}

uint64_t og_buffer_vk_offset(const og_buffer *buf)
{
    return buf->base + buf->skew;
}

static og_status check_range(const og_buffer *buf, const char *op, uint64_t offset, uint64_t bytes,
                             VkBufferUsageFlags need)
{
    if (offset > buf->size || bytes > buf->size - offset)
        return og_fail(buf->ctx, OG_ERROR_INVALID_ARGUMENT,
                       "%s: bytes %" PRIu64 "..%" PRIu64 " lie outside the buffer of %" PRIu64
                       " bytes",
                       op, offset, offset + bytes, buf->size);
    if (!buf->mapped && !(buf->usage & need))
        return og_fail(buf->ctx, OG_ERROR_UNSUPPORTED,
                       "%s: the wrapped VkBuffer's usage 0x%x lacks %s", op, (unsigned)buf->usage,
                       need == VK_BUFFER_USAGE_TRANSFER_DST_BIT ? "VK_BUFFER_USAGE_TRANSFER_DST_BIT"
                                                                : "VK_BUFFER_USAGE_TRANSFER_SRC_BIT");
    return OG_OK;
}

og_status og_buffer_write(og_buffer *buf, uint64_t offset, const void *src, uint64_t bytes)
{
    og_status st = check_range(buf, "buffer write", offset, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
    if (st != OG_OK || bytes == 0)
        return st;
    if (buf->mapped) {
        memcpy((char *)buf->mapped + buf->skew + offset, src, bytes);
        return OG_OK;
    }
    return og_staging_write(buf, offset, src, bytes);
}

og_status og_buffer_read(const og_buffer *buf, uint64_t offset, void *dst, uint64_t bytes)
{
    og_status st = check_range(buf, "buffer read", offset, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
    if (st != OG_OK || bytes == 0)
        return st;
    if (buf->mapped && buf->map_reads) {
        memcpy(dst, (const char *)buf->mapped + buf->skew + offset, bytes);
        return OG_OK;
    }
    return og_staging_read(buf, offset, dst, bytes);
}
