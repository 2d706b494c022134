/* Barriers, and submitting the context's own command buffers and waiting for them. On an
 * adopted queue the application must not use the queue from another
 * thread meanwhile (vkQueueSubmit's external synchronisation). */
#include "og_vk.h"

void og_cmd_barrier(og_context *ctx, VkCommandBuffer cmd, VkPipelineStageFlags src_stages,
                    VkAccessFlags src_access, VkPipelineStageFlags dst_stages,
                    VkAccessFlags dst_access)
{
    VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                         .srcAccessMask = src_access,
                         .dstAccessMask = dst_access};
    ctx->vk.vkCmdPipelineBarrier(cmd, src_stages, dst_stages, 0, 1, &b, 0, NULL, 0, NULL);
}

og_status og_submit_wait(og_context *ctx, VkCommandBuffer cmd)
{
    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
    VkResult r = ctx->vk.vkResetFences(ctx->device, 1, &ctx->fence);
    if (r == VK_SUCCESS)
        r = ctx->vk.vkQueueSubmit(ctx->queue, 1, &submit, ctx->fence);
    if (r == VK_SUCCESS)
        r = ctx->vk.vkWaitForFences(ctx->device, 1, &ctx->fence, VK_TRUE, UINT64_MAX);
    return r == VK_SUCCESS ? OG_OK : og_vk_fail(ctx, r, "submit");
}

og_status og_run_on(og_context *ctx, VkCommandBuffer cmd, og_encoder fn, void *user)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = ctx->vk.vkBeginCommandBuffer(cmd, &begin);
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "vkBeginCommandBuffer");
    og_status st = fn(user, cmd);
    r = ctx->vk.vkEndCommandBuffer(cmd);
    if (st != OG_OK)
        return st;
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "vkEndCommandBuffer");
    return og_submit_wait(ctx, cmd);
}

og_status og_run_recorded(og_context *ctx, og_encoder fn, void *user)
{
    return og_run_on(ctx, ctx->cmd, fn, user);
}
