/* What ogtune needs of the runtime that applications don't (og_tuning.h):
 * the context's facts and the objects' contexts, the planted validation
 * error and the copy ogtune qgemm-bench times. */
#include <string.h>

#include "og_internal.h"

const og_limits *og_context_limits(const og_context *ctx)
{
    return &ctx->limits;
}

og_dialect og_context_dialect(const og_context *ctx)
{
    return ctx->dialect;
}

const og_device_info *og_context_device_info(const og_context *ctx)
{
    return &ctx->info;
}

void og_context_facts_of(const og_context *ctx, og_context_facts *out)
{
    memset(out, 0, sizeof *out);
    out->queue_family = ctx->queue_family;
    out->timestamp_bits = ctx->timestamp_bits;
    out->validation = ctx->messenger != VK_NULL_HANDLE;
    out->caches_on = ctx->pipeline_cache_path[0] != '\0';
    out->pipeline_cache_loaded = ctx->pipeline_cache_loaded;
    out->kernels_compiled = ctx->kernels_compiled;
    out->memory_props = ctx->memory_props;
    out->operand_type = ctx->memory.operand_type;
    out->staging_type = ctx->memory.staging_type;
    out->map_writes = ctx->memory.map_writes;
    out->map_reads = ctx->memory.map_reads;
}

og_context *og_gemm_context(const og_gemm *g)
{
    return g->ctx;
}

og_context *og_int8gemm_context(const og_int8gemm *g)
{
    return g->gemm.ctx;
}

og_context *og_conv_context(const og_conv *cv)
{
    return cv->gemm.ctx;
}

og_context *og_qgemm_context(const og_qgemm *q)
{
    return q->gemm.ctx;
}

void og_validation_provoke(og_context *ctx)
{
    if (!ctx->messenger)
        return;
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = 0,
                               .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    VkBuffer buf = VK_NULL_HANDLE;
    if (ctx->vk.vkCreateBuffer(ctx->device, &info, NULL, &buf) == VK_SUCCESS)
        ctx->vk.vkDestroyBuffer(ctx->device, buf, NULL);
}

void og_record_copy(VkCommandBuffer cmd, const og_buffer *src, const og_buffer *dst, uint64_t bytes)
{
    VkBufferCopy region = {.srcOffset = og_buffer_vk_offset(src),
                           .dstOffset = og_buffer_vk_offset(dst),
                           .size = bytes};
    src->ctx->vk.vkCmdCopyBuffer(cmd, og_buffer_vk_buffer(src), og_buffer_vk_buffer(dst), 1,
                                 &region);
}
