/* The context: a Vulkan device and queue, owned or adopted from the
 * application, and what every GEMM of it shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_vk.h"

const char *og_context_device_name(const og_context *ctx)
{
    return ctx->props.deviceName;
}

uint32_t og_context_validation_errors(const og_context *ctx)
{
    return ctx->validation_errors;
}

VkDevice og_context_vk_device(const og_context *ctx)
{
    return ctx->device;
}

VkQueue og_context_vk_queue(const og_context *ctx)
{
    return ctx->queue;
}

uint32_t og_context_queue_family(const og_context *ctx)
{
    return ctx->queue_family;
}

const char *og_context_memory_placement(const og_context *ctx)
{
    return og_placement_name(ctx->memory.placement);
}

void og_context_device_limits(const og_context *ctx, og_device_limits *out)
{
    *out = (og_device_limits){.max_binding_bytes = ctx->limits.max_storage_range,
                              .max_buffer_bytes = ctx->max_allocation};
}

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* The queue family of an owned device, in order of preference: compute
 * without graphics that can write timestamps (the dedicated compute queue
 * of NVIDIA, AMD and Intel GPUs), any compute family that can, compute
 * without graphics, any compute family. */
static uint32_t pick_family(const VkQueueFamilyProperties *fams, uint32_t n)
{
    for (int pass = 0; pass < 4; pass++)
        for (uint32_t i = 0; i < n; i++) {
            VkQueueFlags f = fams[i].queueFlags;
            int timed = fams[i].timestampValidBits > 0;
            int alone = !(f & VK_QUEUE_GRAPHICS_BIT);
            if ((f & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount > 0 &&
                (pass == 0 ? alone && timed : pass == 1 ? timed : pass == 2 ? alone : 1))
                return i;
        }
    return UINT32_MAX;
}

/* The device's queue families (*n of them), or NULL when out of memory. */
static VkQueueFamilyProperties *read_families(og_context *ctx, uint32_t *n)
{
    *n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical, n, NULL);
    VkQueueFamilyProperties *fams = og_mem_alloc(&ctx->allocator, (*n ? *n : 1) * sizeof *fams);
    if (fams)
        vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical, n, fams);
    return fams;
}

/* The queue family the context uses, and its timestampValidBits (0: the
 * device cannot time, also when it gives no timestampPeriod). */
static void use_family(og_context *ctx, const VkQueueFamilyProperties *fam, uint32_t family)
{
    ctx->queue_family = family;
    ctx->timestamp_bits = ctx->props.limits.timestampPeriod > 0 ? fam->timestampValidBits : 0;
}

static og_status create_device(og_context *ctx)
{
    uint32_t n;
    VkQueueFamilyProperties *fams = read_families(ctx, &n);
    if (!fams)
        return og_fail(NULL, OG_ERROR_OUT_OF_MEMORY, "context: out of memory");
    uint32_t family = pick_family(fams, n);
    if (family != UINT32_MAX)
        use_family(ctx, &fams[family], family);
    og_mem_free(&ctx->allocator, fams);
    if (family == UINT32_MAX)
        return og_fail(NULL, OG_ERROR_NOT_FOUND, "context: %s has no compute queue",
                       ctx->props.deviceName);

    float priority = 1.0f;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
    og_device_features features;
    og_device_features_read(ctx, &features);
    VkDeviceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                               .pNext = features.chain,
                               .queueCreateInfoCount = 1,
                               .pQueueCreateInfos = &q,
                               .enabledExtensionCount = features.n_extensions,
                               .ppEnabledExtensionNames = features.extensions};
    VkResult r = vkCreateDevice(ctx->physical, &info, NULL, &ctx->device);
    if (r != VK_SUCCESS)
        return og_fail(NULL, OG_ERROR_VULKAN, "context: vkCreateDevice failed (VkResult %d)",
                       (int)r);
    ctx->owns_device = 1;
    volkLoadDeviceTable(&ctx->vk, ctx->device);
    ctx->vk.vkGetDeviceQueue(ctx->device, family, 0, &ctx->queue);
    return OG_OK;
}

/* The context of an application's device: its handles, and what the kernels
 * may use from what it enabled. Validation is the application's: its layer
 * and messengers hear onegpu's calls on its instance along with its own, and
 * a messenger of onegpu's could not tell the two apart. */
static og_status adopt(og_context *ctx, const og_vulkan_device *app, int validation)
{
    if (validation)
        return og_fail(NULL, OG_ERROR_INVALID_ARGUMENT,
                       "context: validation asked for on an adopted instance, whose validation "
                       "is the application's (its messengers report onegpu's calls too); leave "
                       "og_context_desc.validation 0");
    if (!app->instance || !app->physical_device || !app->device || !app->queue)
        return og_fail(NULL, OG_ERROR_INVALID_ARGUMENT,
                       "context: adopting needs the instance, physical device, device and queue "
                       "(one of them is VK_NULL_HANDLE)");
    if (!app->device_info)
        return og_fail(NULL, OG_ERROR_INVALID_ARGUMENT,
                       "context: adopting needs the VkDeviceCreateInfo the device was created with "
                       "(device_info): onegpu uses only what it enabled");
    uint32_t version = app->api_version ? app->api_version : VK_API_VERSION_1_1;
    if (VK_API_VERSION_MAJOR(version) == 1 && VK_API_VERSION_MINOR(version) < 1)
        return og_fail(NULL, OG_ERROR_UNSUPPORTED,
                       "context: the instance's apiVersion %u.%u is below the Vulkan 1.1 the "
                       "kernels are compiled for",
                       VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
    ctx->instance = app->instance;
    volkLoadInstanceOnly(ctx->instance);
    ctx->physical = app->physical_device;
    og_properties_read(ctx);
    uint32_t n;
    VkQueueFamilyProperties *fams = read_families(ctx, &n);
    if (!fams)
        return og_fail(NULL, OG_ERROR_OUT_OF_MEMORY, "context: out of memory");
    int known = app->queue_family < n;
    int compute = known && (fams[app->queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0;
    if (compute)
        use_family(ctx, &fams[app->queue_family], app->queue_family);
    og_mem_free(&ctx->allocator, fams);
    if (!known)
        return og_fail(NULL, OG_ERROR_INVALID_ARGUMENT,
                       "context: queue family %u is not one of the device's %u",
                       app->queue_family, n);
    if (!compute)
        return og_fail(NULL, OG_ERROR_INVALID_ARGUMENT,
                       "context: queue family %u has no compute (VK_QUEUE_COMPUTE_BIT)",
                       app->queue_family);
    ctx->device = app->device;
    ctx->queue = app->queue;
    volkLoadDeviceTable(&ctx->vk, ctx->device);
    og_device_features_adopt(ctx, app->device_info);
    /* vkGetBufferDeviceAddress is Vulkan 1.2's: the instance must allow it. */
    if (ctx->limits.buffer_address && VK_API_VERSION_MAJOR(version) == 1 &&
        VK_API_VERSION_MINOR(version) < 2) {
        ctx->limits.buffer_address = 0;
        ctx->limits.address_off = OG_ADDRESS_OLD_INSTANCE;
    }
    return OG_OK;
}

/* The command pool, fence and layouts every GEMM shares: A, B, C and the
 * bias, and the kernels' push constants (og_push). */
static og_status create_shared_objects(og_context *ctx)
{
    VkDevice d = ctx->device;
    VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                    .queueFamilyIndex = ctx->queue_family};
    VkResult r = ctx->vk.vkCreateCommandPool(d, &pool, NULL, &ctx->pool);
    if (r != VK_SUCCESS)
        return og_fail(NULL, OG_ERROR_VULKAN, "context: vkCreateCommandPool failed (VkResult %d)",
                       (int)r);
    VkCommandBufferAllocateInfo cb = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = ctx->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = ctx->vk.vkAllocateCommandBuffers(d, &cb, &ctx->cmd)) != VK_SUCCESS ||
        (r = ctx->vk.vkAllocateCommandBuffers(d, &cb, &ctx->copy_cmd)) != VK_SUCCESS ||
        (r = ctx->vk.vkCreateFence(d, &fence, NULL, &ctx->fence)) != VK_SUCCESS)
        return og_fail(NULL, OG_ERROR_VULKAN,
                       "context: creating shared objects failed (VkResult %d)", (int)r);
    VkPushConstantRange push = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = sizeof(og_push)};
    for (int src = OG_SRC_STORAGE; src <= OG_SRC_TEXEL; src++) {
        VkDescriptorType operand = src == OG_SRC_TEXEL ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                       : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        /* 0, 1: A and B; 2: C; 3: Int8Gemm's column scales; 5: the bias.
         * Texel layouts have 3, 4: A and B with vector texels, and the
         * column scales at 6. */
        static const uint32_t storage[] = {0, 1, 2, 3, 5}, texel[] = {0, 1, 2, 3, 4, 5, 6};
        const uint32_t *which = src == OG_SRC_TEXEL ? texel : storage;
        uint32_t count = src == OG_SRC_TEXEL ? 7 : 5;
        VkDescriptorSetLayoutBinding b[7];
        for (uint32_t w = 0; w < count; w++)
            b[w] = (VkDescriptorSetLayoutBinding){
                .binding = which[w],
                .descriptorType = which[w] == 2 || which[w] >= 5 || src != OG_SRC_TEXEL
                                      ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                      : operand,
                .descriptorCount = 1,
                .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
        VkDescriptorSetLayoutCreateInfo set = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
            .bindingCount = count,
            .pBindings = b};
        r = ctx->vk.vkCreateDescriptorSetLayout(d, &set, NULL, &ctx->set_layout[src]);
        if (r != VK_SUCCESS)
            return og_fail(NULL, OG_ERROR_VULKAN,
                           "context: vkCreateDescriptorSetLayout failed (VkResult %d)", (int)r);
        VkPipelineLayoutCreateInfo layout = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                             .setLayoutCount = 1,
                                             .pSetLayouts = &ctx->set_layout[src],
                                             .pushConstantRangeCount = 1,
                                             .pPushConstantRanges = &push};
        r = ctx->vk.vkCreatePipelineLayout(d, &layout, NULL, &ctx->pipeline_layout[src]);
        if (r != VK_SUCCESS)
            return og_fail(NULL, OG_ERROR_VULKAN,
                           "context: vkCreatePipelineLayout failed (VkResult %d)", (int)r);
    }
    return OG_OK;
}

og_status og_context_create(const og_context_desc *desc, og_context **out)
{
    *out = NULL;
    og_last_error_clear();
    const og_vulkan_device *app = desc ? desc->adopt : NULL;
    VkResult loaded = app && app->get_instance_proc_addr
                          ? (volkInitializeCustom(app->get_instance_proc_addr), VK_SUCCESS)
                          : volkInitialize();
    if (loaded != VK_SUCCESS)
        return og_fail(NULL, OG_ERROR_NOT_FOUND, "context: no Vulkan loader (install libvulkan1)");
    const og_allocator *alloc = desc ? desc->allocator : NULL;
    og_context *ctx = og_mem_alloc(alloc, sizeof *ctx);
    if (!ctx)
        return og_fail(NULL, OG_ERROR_OUT_OF_MEMORY, "context: out of memory");
    if (alloc)
        ctx->allocator = *alloc;
    ctx->force_staging = (desc && desc->force_staging) || env_on("OG_STAGING");
    ctx->staging_chunk = desc && desc->staging_chunk_bytes
                             ? (desc->staging_chunk_bytes + 3) & ~(uint64_t)3
                             : OG_STAGING_CHUNK;
    /* An application's instance is validated only when it asks. */
    const char *env = app ? NULL : getenv("OG_VALIDATION");
    int validation = desc && desc->validation ? (desc->validation == 2 ? 2 : 1)
                     : env && strcmp(env, "sync") == 0 ? 2
                     : env_on("OG_VALIDATION") && !app ? 1
                                                       : 0;
    const char *want = desc && desc->device ? desc->device : getenv("OG_DEVICE");
    const char *dbs = desc && desc->tuning_db ? desc->tuning_db : NULL;
    og_status st;
    if (app) {
        st = adopt(ctx, app, validation);
    } else {
        st = og_instance_create(ctx, validation);
        if (st == OG_OK)
            st = og_physical_pick(ctx, want);
        if (st == OG_OK) {
            og_properties_read(ctx);
            st = create_device(ctx);
        }
    }
    if (st == OG_OK)
        st = create_shared_objects(ctx);
    if (st == OG_OK)
        og_pipeline_cache_open(ctx);
    if (st == OG_OK && dbs && !(ctx->db_paths = og_mem_strdup(&ctx->allocator, dbs)))
        st = og_fail(NULL, OG_ERROR_OUT_OF_MEMORY, "context: out of memory");
    if (st == OG_OK && og_buffer_create(ctx, 4, &ctx->placeholder) != OG_OK)
        st = og_fail(NULL, OG_ERROR_OUT_OF_MEMORY, "context: %s", ctx->error);
    if (st != OG_OK) {
        og_context_destroy(ctx);
        return st;
    }
    *out = ctx;
    return OG_OK;
}

void og_context_destroy(og_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->device) {
        /* onegpu's own submissions are waited for on their fence; an
         * application's device may be busy with its own work, which is not
         * ours to wait for. */
        if (ctx->owns_device)
            ctx->vk.vkDeviceWaitIdle(ctx->device);
        og_buffer_destroy(ctx->placeholder);
        og_buffer_free(ctx->staging);
        og_sets_destroy(ctx);
        og_pipeline_cache_close(ctx); /* while ctx->n_pipelines still counts them */
        og_pipelines_destroy(ctx);
        for (int src = OG_SRC_STORAGE; src <= OG_SRC_TEXEL; src++) {
            ctx->vk.vkDestroyPipelineLayout(ctx->device, ctx->pipeline_layout[src], NULL);
            ctx->vk.vkDestroyDescriptorSetLayout(ctx->device, ctx->set_layout[src], NULL);
        }
        ctx->vk.vkDestroyFence(ctx->device, ctx->fence, NULL);
        ctx->vk.vkDestroyCommandPool(ctx->device, ctx->pool, NULL);
        if (ctx->owns_device)
            ctx->vk.vkDestroyDevice(ctx->device, NULL);
    }
    for (size_t i = 0; i < ctx->n_dbs; i++)
        og_db_close(ctx->dbs[i].db);
    og_mem_free(&ctx->allocator, ctx->dbs);
    og_mem_free(&ctx->allocator, ctx->db_paths);
    if (ctx->messenger)
        vkDestroyDebugUtilsMessengerEXT(ctx->instance, ctx->messenger, NULL);
    if (ctx->instance && ctx->owns_instance)
        vkDestroyInstance(ctx->instance, NULL);
    og_allocator alloc = ctx->allocator;
    og_mem_free(&alloc, ctx);
}
