/* Two command buffers of the drop-in's own, so that one tile's product runs
 * while the next tile's operands are copied (ogb_tiled.c). */
#ifndef OGB_SLOTS_H
#define OGB_SLOTS_H

#include <stddef.h>

#include "ogb_runtime.h"

#define OGB_SLOTS 2

/* A command pool of the context's queue family, a command buffer and a
 * fence per slot, and the Vulkan functions they need: resolved through the
 * Vulkan loader's vkGetDeviceProcAddr (libvulkan.so.1, which libonegpu has
 * loaded) for onegpu's device. */
typedef struct ogb_slots {
    VkDevice device;
    VkQueue queue;
    VkCommandPool pool;
    VkCommandBuffer cmd[OGB_SLOTS];
    VkFence fence[OGB_SLOTS];
    int pending[OGB_SLOTS]; /* submitted and not yet waited for */
    PFN_vkDestroyCommandPool destroy_pool;
    PFN_vkDestroyFence destroy_fence;
    PFN_vkResetCommandBuffer reset;
    PFN_vkBeginCommandBuffer begin;
    PFN_vkEndCommandBuffer end;
    PFN_vkQueueSubmit submit;
    PFN_vkWaitForFences wait;
    PFN_vkResetFences reset_fences;
    PFN_vkCmdCopyBuffer copy;
    PFN_vkCmdPipelineBarrier barrier;
} ogb_slots;

/* Makes the slots for the context; 0 on success, else a reason in why
 * (len bytes) and nothing left to free. */
int ogb_slots_create(ogb_slots *s, const ogb_runtime *rt, og_context *ctx, char *why, size_t len);

/* Waits for both slots (a lost device aside) and frees them; a zeroed
 * ogb_slots is allowed. */
void ogb_slots_destroy(ogb_slots *s);

/* Resets slot i's command buffer (the slot must not be pending) and begins
 * recording a one-time submission into it. */
VkResult ogb_slots_begin(ogb_slots *s, int i);

/* Ends slot i's recording and submits it to the queue with the slot's
 * fence, without waiting. */
VkResult ogb_slots_submit(ogb_slots *s, int i);

/* Records into slot i a copy of `bytes` bytes from src to dst (each at
 * its og_buffer's first byte). */
void ogb_slots_copy(ogb_slots *s, int i, const ogb_runtime *rt, og_buffer *src, og_buffer *dst, uint64_t bytes);

/* Records into slot i a global memory barrier from the stages and accesses
 * src_stage/src_access to dst_stage/dst_access. */
void ogb_slots_barrier(ogb_slots *s, int i, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                       VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

/* Waits for slot i's submission (VK_SUCCESS at once when none is pending). */
VkResult ogb_slots_wait(ogb_slots *s, int i);

#endif /* OGB_SLOTS_H */
