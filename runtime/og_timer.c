/* GPU time of recorded work (a GEMM, an Int8Gemm) from Vulkan timestamp queries. */
#include <stdlib.h>

#include "og_internal.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

og_status og_time_encoder(og_context *ctx, og_encoder encode, void *user, int warmup, int reps,
                          double *median_us)
{
    *median_us = 0;
    if (!ctx->has_timestamps)
        return og_fail(ctx, OG_ERROR_UNSUPPORTED,
                       "timer: %s has no timestamp queries on its compute queue",
                       ctx->props.deviceName);
    if (reps < 1 || warmup < 0)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "timer: reps (%d) must be at least 1", reps);
    og_status st = OG_OK;
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = 2 * (uint32_t)reps};
    VkQueryPool pool;
    VkResult r = ctx->vk.vkCreateQueryPool(ctx->device, &qi, NULL, &pool);
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "timer: vkCreateQueryPool");
    uint64_t *stamps = og_mem_alloc(&ctx->allocator, 2 * (size_t)reps * sizeof *stamps);
    double *times = og_mem_alloc(&ctx->allocator, (size_t)reps * sizeof *times);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (!stamps || !times)
        st = og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "timer: out of memory");
    else if ((r = ctx->vk.vkBeginCommandBuffer(ctx->cmd, &begin)) != VK_SUCCESS)
        st = og_vk_fail(ctx, r, "timer: vkBeginCommandBuffer");
    if (st == OG_OK) {
        ctx->vk.vkCmdResetQueryPool(ctx->cmd, pool, 0, 2 * (uint32_t)reps);
        for (int i = 0; i < warmup && st == OG_OK; i++)
            st = encode(user, ctx->cmd);
        for (int i = 0; i < reps && st == OG_OK; i++) {
            ctx->vk.vkCmdWriteTimestamp(ctx->cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, pool,
                                        2 * (uint32_t)i);
            st = encode(user, ctx->cmd);
            ctx->vk.vkCmdWriteTimestamp(ctx->cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, pool,
                                        2 * (uint32_t)i + 1);
        }
        r = ctx->vk.vkEndCommandBuffer(ctx->cmd);
        if (st == OG_OK && r != VK_SUCCESS)
            st = og_vk_fail(ctx, r, "timer: vkEndCommandBuffer");
        if (st == OG_OK)
            st = og_submit_wait(ctx, ctx->cmd);
    }
    if (st == OG_OK) {
        r = ctx->vk.vkGetQueryPoolResults(ctx->device, pool, 0, 2 * (uint32_t)reps,
                                          2 * (size_t)reps * sizeof *stamps, stamps, sizeof *stamps,
                                          VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
        if (r != VK_SUCCESS)
            st = og_vk_fail(ctx, r, "timer: vkGetQueryPoolResults");
    }
    if (st == OG_OK) {
        double ns = ctx->props.limits.timestampPeriod;
        for (int i = 0; i < reps; i++)
            times[i] = (double)(stamps[2 * i + 1] - stamps[2 * i]) * ns / 1000.0;
        qsort(times, (size_t)reps, sizeof *times, cmp_double);
        *median_us = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
    }
    og_mem_free(&ctx->allocator, stamps);
    og_mem_free(&ctx->allocator, times);
    ctx->vk.vkDestroyQueryPool(ctx->device, pool, NULL);
    return st;
}

typedef struct gemm_call {
    og_gemm *g;
    const og_gemm_args *args;
    const og_params *p;
} gemm_call;

static og_status encode_gemm(void *user, VkCommandBuffer cmd)
{
    gemm_call *c = user;
    return og_gemm_encode_params(c->g, cmd, c->args, c->p);
}

og_status og_gemm_time(og_gemm *g, const og_gemm_args *args, const og_params *p, int warmup,
                       int reps, double *median_us)
{
    og_push push;
    *median_us = 0;
    og_status st = og_gemm_check(g, args, &push);
    if (st != OG_OK)
        return st;
    gemm_call call = {g, args, p};
    return og_time_encoder(g->ctx, encode_gemm, &call, warmup, reps, median_us);
}
