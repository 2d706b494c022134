/* Host access to device-local buffers: copies through one host-visible
 * staging buffer of ctx->staging_chunk bytes, one submit a chunk, so an
 * upload of any size needs no staging buffer of its size; and zero-fill
 * with vkCmdFillBuffer. Every transfer is fenced on the context's queue and
 * ordered against earlier compute and transfer work by barriers. */
#include <string.h>

#include "og_vk.h"

/* Earlier compute and transfer access to the buffer -> this transfer. */
static void barrier_before(og_context *ctx, VkCommandBuffer cmd)
{
    og_cmd_barrier(ctx, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
}

/* This transfer's writes -> later kernels, transfers and the host. */
static void barrier_after(og_context *ctx, VkCommandBuffer cmd)
{
    og_cmd_barrier(ctx, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                       VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                       VK_ACCESS_HOST_READ_BIT);
}

typedef struct copy_job {
    og_context *ctx;
    VkBuffer src, dst;
    VkBufferCopy region;
} copy_job;

static og_status record_copy(void *user, VkCommandBuffer cmd)
{
    copy_job *j = user;
    barrier_before(j->ctx, cmd);
    j->ctx->vk.vkCmdCopyBuffer(cmd, j->src, j->dst, 1, &j->region);
    barrier_after(j->ctx, cmd);
    return OG_OK;
}

typedef struct fill_job {
    og_context *ctx;
    const og_buffer *buf;
} fill_job;

static og_status record_fill(void *user, VkCommandBuffer cmd)
{
    fill_job *j = user;
    barrier_before(j->ctx, cmd);
    j->ctx->vk.vkCmdFillBuffer(cmd, j->buf->buffer, j->buf->base, j->buf->allocated, 0);
    barrier_after(j->ctx, cmd);
    return OG_OK;
}

og_status og_buffer_zero(og_buffer *buf)
{
    fill_job j = {buf->ctx, buf};
    return og_run_on(buf->ctx, buf->ctx->copy_cmd, record_fill, &j);
}

/* The staging buffer, made on first use in the staging memory type. */
static og_status staging(og_context *ctx, og_buffer **out)
{
    if (ctx->staging) {
        *out = ctx->staging;
        return OG_OK;
    }
    og_buffer *s;
    og_status st = og_buffer_made(ctx, "staging", ctx->staging_chunk,
                                  VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 1, &s);
    if (st != OG_OK)
        return st;
    ctx->staging = *out = s;
    return OG_OK;
}

og_status og_staging_write(og_buffer *buf, uint64_t offset, const void *src, uint64_t bytes)
{
    og_context *ctx = buf->ctx;
    og_buffer *s;
    og_status st = staging(ctx, &s);
    for (uint64_t done = 0; st == OG_OK && done < bytes; done += ctx->staging_chunk) {
        uint64_t n = bytes - done < ctx->staging_chunk ? bytes - done : ctx->staging_chunk;
        memcpy(s->mapped, (const char *)src + done, n);
        copy_job j = {ctx, s->buffer, buf->buffer, {0, buf->base + buf->skew + offset + done, n}};
        st = og_run_on(ctx, ctx->copy_cmd, record_copy, &j);
    }
    return st;
}

og_status og_staging_read(const og_buffer *buf, uint64_t offset, void *dst, uint64_t bytes)
{
    og_context *ctx = buf->ctx;
    og_buffer *s;
    og_status st = staging(ctx, &s);
    for (uint64_t done = 0; st == OG_OK && done < bytes; done += ctx->staging_chunk) {
        uint64_t n = bytes - done < ctx->staging_chunk ? bytes - done : ctx->staging_chunk;
        copy_job j = {ctx, buf->buffer, s->buffer, {buf->base + buf->skew + offset + done, 0, n}};
        st = og_run_on(ctx, ctx->copy_cmd, record_copy, &j);
        if (st == OG_OK)
            memcpy((char *)dst + done, s->mapped, n);
    }
    return st;
}
