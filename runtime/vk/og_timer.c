/* GPU time of recorded work from Vulkan timestamp queries (Vulkan
 * specification, "Timestamp Queries": differences of timestampValidBits
 * bits, in units of timestampPeriod nanoseconds). */
#include <math.h>
#include <stdlib.h>

#include "og_vk.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double og_timestamp_ns(uint64_t start, uint64_t end, uint32_t valid_bits, float period)
{
    /* Masking the difference to the valid bits also carries it across a
     * wrap of the counter. */
    uint64_t mask = valid_bits >= 64 ? ~0ull : (1ull << valid_bits) - 1;
    return (double)((end - start) & mask) * (double)period;
}

/* Records warmup untimed and reps timed calls of encode in the context's
 * command buffer, submits, waits and writes the reps times (us) to times. */
static og_status time_reps(og_context *ctx, og_encoder encode, void *user, int warmup, int reps,
                           double *times)
{
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = 2 * (uint32_t)reps};
    VkQueryPool pool;
    VkResult r = ctx->vk.vkCreateQueryPool(ctx->device, &qi, NULL, &pool);
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "timer: vkCreateQueryPool");
    og_status st = OG_OK;
    uint64_t *stamps = og_mem_alloc(&ctx->allocator, 2 * (size_t)reps * sizeof *stamps);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (!stamps)
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
    if (st == OG_OK)
        for (int i = 0; i < reps; i++)
            times[i] = og_timestamp_ns(stamps[2 * i], stamps[2 * i + 1], ctx->timestamp_bits,
                                       ctx->props.limits.timestampPeriod) /
                       1000.0;
    og_mem_free(&ctx->allocator, stamps);
    ctx->vk.vkDestroyQueryPool(ctx->device, pool, NULL);
    return st;
}

og_status og_time_encoder(og_context *ctx, og_encoder encode, void *user,
                          const og_timing_plan *plan, og_timing *out)
{
    *out = (og_timing){0};
    if (ctx->timestamp_bits == 0)
        return og_fail(ctx, OG_ERROR_UNSUPPORTED,
                       "timer: queue family %u of %s has no valid timestamp bits "
                       "(timestampValidBits 0): timing needs a queue that can write timestamps",
                       ctx->queue_family, ctx->props.deviceName);
    if (plan->min_reps < 1 || plan->max_reps < plan->min_reps || plan->warmup < 0)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "timer: repetitions %d..%d and warm-up %d are out of range", plan->min_reps,
                       plan->max_reps, plan->warmup);
    /* One timed call after the warm-up estimates how many cover min_gpu_us. */
    double first;
    og_status st = time_reps(ctx, encode, user, plan->warmup, 1, &first);
    if (st != OG_OK)
        return st;
    double want = first > 0 ? ceil(plan->min_gpu_us / first) : plan->max_reps;
    int reps = want > plan->max_reps ? plan->max_reps
               : want < plan->min_reps ? plan->min_reps
                                       : (int)want;
    double *times = og_mem_alloc(&ctx->allocator, (size_t)reps * sizeof *times);
    if (!times)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "timer: out of memory");
    st = time_reps(ctx, encode, user, 1, reps, times);
    if (st == OG_OK) {
        qsort(times, (size_t)reps, sizeof *times, cmp_double);
        double median =
            reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
        *out = (og_timing){.median_us = median,
                           .spread = median > 0 ? (times[reps - 1] - times[0]) / median : 0,
                           .reps = reps};
    }
    og_mem_free(&ctx->allocator, times);
    return st;
}
