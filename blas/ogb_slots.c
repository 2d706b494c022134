/* The drop-in's own command buffers and fences (ogb_slots.h). */
#include "ogb_slots.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* vkGetDeviceProcAddr of the Vulkan loader libonegpu uses, or NULL. The
 * loader is never closed, as libonegpu is not. */
static PFN_vkGetDeviceProcAddr device_proc_addr(void)
{
    void *h = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    void *fn = h ? dlsym(h, "vkGetDeviceProcAddr") : NULL;
    PFN_vkGetDeviceProcAddr get = NULL;
    memcpy(&get, &fn, sizeof fn);
    return get;
}

/* Resolves a device function into *slot; non-zero on success. */
static int resolve(PFN_vkGetDeviceProcAddr get, VkDevice device, const char *name, void *slot, char *why,
                   size_t len)
{
    PFN_vkVoidFunction fn = get(device, name);
    if (!fn)
        snprintf(why, len, "the Vulkan loader lacks %s", name);
    memcpy(slot, &fn, sizeof fn);
    return fn != NULL;
}

int ogb_slots_create(ogb_slots *s, const ogb_runtime *rt, og_context *ctx, char *why, size_t len)
{
    *s = (ogb_slots){.device = rt->context_vk_device(ctx), .queue = rt->context_vk_queue(ctx)};
    PFN_vkGetDeviceProcAddr get = device_proc_addr();
    PFN_vkCreateCommandPool create_pool;
    PFN_vkAllocateCommandBuffers allocate;
    PFN_vkCreateFence create_fence;
    if (!get) {
        snprintf(why, len, "cannot open libvulkan.so.1: %s", dlerror());
        return -1;
    }
    if (!resolve(get, s->device, "vkCreateCommandPool", &create_pool, why, len) ||
        !resolve(get, s->device, "vkAllocateCommandBuffers", &allocate, why, len) ||
        !resolve(get, s->device, "vkCreateFence", &create_fence, why, len) ||
        !resolve(get, s->device, "vkDestroyCommandPool", &s->destroy_pool, why, len) ||
        !resolve(get, s->device, "vkDestroyFence", &s->destroy_fence, why, len) ||
        !resolve(get, s->device, "vkResetCommandBuffer", &s->reset, why, len) ||
        !resolve(get, s->device, "vkBeginCommandBuffer", &s->begin, why, len) ||
        !resolve(get, s->device, "vkEndCommandBuffer", &s->end, why, len) ||
        !resolve(get, s->device, "vkQueueSubmit", &s->submit, why, len) ||
        !resolve(get, s->device, "vkWaitForFences", &s->wait, why, len) ||
        !resolve(get, s->device, "vkResetFences", &s->reset_fences, why, len) ||
        !resolve(get, s->device, "vkCmdCopyBuffer", &s->copy, why, len) ||
        !resolve(get, s->device, "vkCmdPipelineBarrier", &s->barrier, why, len)) {
        *s = (ogb_slots){0};
        return -1;
    }
    VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                    .queueFamilyIndex = rt->context_queue_family(ctx)};
    VkCommandBufferAllocateInfo cmds = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = OGB_SLOTS};
    VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkResult r = create_pool(s->device, &pool, NULL, &s->pool);
    if (r == VK_SUCCESS) {
        cmds.commandPool = s->pool;
        r = allocate(s->device, &cmds, s->cmd);
    }
    for (int i = 0; i < OGB_SLOTS && r == VK_SUCCESS; i++)
        r = create_fence(s->device, &fence, NULL, &s->fence[i]);
    if (r != VK_SUCCESS) {
        snprintf(why, len, "making the drop-in's command buffers and fences: VkResult %d", (int)r);
        ogb_slots_destroy(s);
        return -1;
    }
    return 0;
}

void ogb_slots_destroy(ogb_slots *s)
{
    if (!s->device)
        return;
    for (int i = 0; i < OGB_SLOTS; i++) {
        ogb_slots_wait(s, i);
        if (s->fence[i])
            s->destroy_fence(s->device, s->fence[i], NULL);
    }
    if (s->pool)
        s->destroy_pool(s->device, s->pool, NULL); /* frees its command buffers */
    *s = (ogb_slots){0};
}

VkResult ogb_slots_begin(ogb_slots *s, int i)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = s->reset(s->cmd[i], 0);
    return r != VK_SUCCESS ? r : s->begin(s->cmd[i], &begin);
}

VkResult ogb_slots_submit(ogb_slots *s, int i)
{
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                           .pCommandBuffers = &s->cmd[i]};
    VkResult r = s->end(s->cmd[i]);
    if (r == VK_SUCCESS)
        r = s->submit(s->queue, 1, &submit, s->fence[i]);
    s->pending[i] = r == VK_SUCCESS;
    return r;
}

VkResult ogb_slots_wait(ogb_slots *s, int i)
{
    if (!s->pending[i])
        return VK_SUCCESS;
    VkResult r = s->wait(s->device, 1, &s->fence[i], VK_TRUE, UINT64_MAX);
    s->pending[i] = 0; /* a lost device's fences are never waited for again */
    return r != VK_SUCCESS ? r : s->reset_fences(s->device, 1, &s->fence[i]);
}

void ogb_slots_copy(ogb_slots *s, int i, const ogb_runtime *rt, og_buffer *src, og_buffer *dst, uint64_t bytes)
{
    VkBufferCopy region = {.srcOffset = rt->buffer_vk_offset(src), .dstOffset = rt->buffer_vk_offset(dst),
                           .size = bytes};
    s->copy(s->cmd[i], rt->buffer_vk_buffer(src), rt->buffer_vk_buffer(dst), 1, &region);
}

void ogb_slots_barrier(ogb_slots *s, int i, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                       VkPipelineStageFlags dst_stage, VkAccessFlags dst_access)
{
    VkMemoryBarrier m = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access,
                         .dstAccessMask = dst_access};
    s->barrier(s->cmd[i], src_stage, dst_stage, 0, 1, &m, 0, NULL, 0, NULL);
}
