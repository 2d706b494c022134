/* The Vulkan context: instance, device chosen by OG_DEVICE, queue, shared layouts. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_internal.h"

static _Thread_local char create_error[1024];

const char *og_last_error(void)
{
    return create_error;
}

og_status og_fail(og_context *ctx, og_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx ? ctx->error : create_error, sizeof create_error, fmt, ap);
    va_end(ap);
    return st;
}

og_status og_vk_fail(og_context *ctx, VkResult r, const char *what)
{
    og_status st = r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                       ? OG_ERROR_OUT_OF_MEMORY
                   : r == VK_ERROR_DEVICE_LOST ? OG_ERROR_DEVICE_LOST
                                               : OG_ERROR_VULKAN;
    return og_fail(ctx, st, "%s failed (VkResult %d)", what, (int)r);
}

const char *og_context_last_error(const og_context *ctx)
{
    return ctx ? ctx->error : create_error;
}

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

static VKAPI_ATTR VkBool32 VKAPI_CALL
on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT type,
              const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)type;
    og_context *ctx = user;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        ctx->validation_errors++;
        fprintf(stderr, "onegpu: validation error: %s\n", data->pMessage);
    }
    return VK_FALSE;
}

static int validation_wanted(const og_context_desc *desc)
{
    const char *env = getenv("OG_VALIDATION");
    return (desc && desc->validation) || (env && strcmp(env, "0") != 0 && *env);
}

static og_status create_instance(og_context *ctx, int validation)
{
    const char *layer = "VK_LAYER_KHRONOS_validation";
    const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    if (validation) {
        uint32_t n = 0;
        vkEnumerateInstanceLayerProperties(&n, NULL);
        VkLayerProperties *layers = og_mem_alloc(&ctx->allocator, (n ? n : 1) * sizeof *layers);
        int found = 0;
        if (layers && vkEnumerateInstanceLayerProperties(&n, layers) == VK_SUCCESS)
            for (uint32_t i = 0; i < n; i++)
                found |= strcmp(layers[i].layerName, layer) == 0;
        og_mem_free(&ctx->allocator, layers);
        if (!found)
            return og_fail(NULL, OG_ERROR_NOT_FOUND,
                           "context: validation asked for, but %s is not installed", layer);
    }
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "onegpu",
                             .pEngineName = "onegpu",
                             .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                 .pApplicationInfo = &app,
                                 .enabledLayerCount = validation ? 1 : 0,
                                 .ppEnabledLayerNames = &layer,
                                 .enabledExtensionCount = validation ? 1 : 0,
                                 .ppEnabledExtensionNames = &ext};
    VkResult r = vkCreateInstance(&info, NULL, &ctx->instance);
    if (r != VK_SUCCESS)
        return og_fail(NULL, OG_ERROR_VULKAN, "context: vkCreateInstance failed (VkResult %d)",
                       (int)r);
    volkLoadInstanceOnly(ctx->instance);
    if (validation) {
        VkDebugUtilsMessengerCreateInfoEXT m = {
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
            .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
            .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
            .pfnUserCallback = on_validation,
            .pUserData = ctx};
        r = vkCreateDebugUtilsMessengerEXT(ctx->instance, &m, NULL, &ctx->messenger);
        if (r != VK_SUCCESS)
            return og_fail(NULL, OG_ERROR_VULKAN, "context: debug messenger failed (VkResult %d)",
                           (int)r);
    }
    return OG_OK;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* OG_DEVICE (or desc->device): an index, or a substring of the device name. */
static og_status pick_device(og_context *ctx, const char *want)
{
    uint32_t n = 0;
    VkResult r = vkEnumeratePhysicalDevices(ctx->instance, &n, NULL);
    if (r != VK_SUCCESS || n == 0)
        return og_fail(NULL, OG_ERROR_NOT_FOUND,
                       "context: no Vulkan device (install mesa-vulkan-drivers for lavapipe)");
    VkPhysicalDevice *devs = og_mem_alloc(&ctx->allocator, n * sizeof *devs);
    if (!devs)
        return og_fail(NULL, OG_ERROR_OUT_OF_MEMORY, "context: out of memory");
    vkEnumeratePhysicalDevices(ctx->instance, &n, devs);
    char *end = NULL;
    long index = want && *want ? strtol(want, &end, 10) : 0;
    int by_index = !want || !*want || (end && *end == '\0');
    for (uint32_t i = 0; i < n && !ctx->physical; i++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(devs[i], &p);
        if (by_index ? (long)i == index : contains_nocase(p.deviceName, want))
            ctx->physical = devs[i];
    }
    og_mem_free(&ctx->allocator, devs);
    if (!ctx->physical)
        return og_fail(NULL, OG_ERROR_NOT_FOUND,
                       "context: OG_DEVICE=%s matches none of the %u devices", want, n);
    return OG_OK;
}

static void read_properties(og_context *ctx)
{
    VkPhysicalDeviceDriverProperties driver = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties subgroup = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, .pNext = &driver};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &subgroup};
    vkGetPhysicalDeviceProperties2(ctx->physical, &p2);
    ctx->props = p2.properties;
    vkGetPhysicalDeviceMemoryProperties(ctx->physical, &ctx->memory);

    const VkPhysicalDeviceLimits *l = &ctx->props.limits;
    og_limits *lim = &ctx->limits;
    lim->max_invocations = l->maxComputeWorkGroupInvocations;
    lim->max_shared_bytes = l->maxComputeSharedMemorySize;
    lim->max_storage_range = l->maxStorageBufferRange;
    lim->max_push_bytes = l->maxPushConstantsSize;
    lim->subgroup_size = subgroup.subgroupSize;
    for (int i = 0; i < 3; i++) {
        lim->max_size[i] = l->maxComputeWorkGroupSize[i];
        lim->max_count[i] = l->maxComputeWorkGroupCount[i];
    }
    static const VkFormat texel_formats[] = {VK_FORMAT_R32_UINT, VK_FORMAT_R32G32_UINT,
                                             VK_FORMAT_R32G32B32A32_UINT};
    lim->max_texel_elements = l->maxTexelBufferElements;
    for (size_t i = 0; i < sizeof texel_formats / sizeof texel_formats[0]; i++) {
        VkFormatProperties f;
        vkGetPhysicalDeviceFormatProperties(ctx->physical, texel_formats[i], &f);
        if (!(f.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT))
            lim->max_texel_elements = 0;
    }
    og_device_info *info = &ctx->info;
    info->vendor_id = ctx->props.vendorID;
    info->device_id = ctx->props.deviceID;
    info->driver_id = (uint32_t)driver.driverID;
    /* Mesa's gallivm ends a shader's loops after this many iterations in all. */
    lim->max_loop_iterations = driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE ? 65535u : 0u;
    info->driver_version = ctx->props.driverVersion;
    snprintf(info->name, sizeof info->name, "%s", ctx->props.deviceName);
    /* driverName and driverInfo are 256 bytes each; keep what fits. */
    size_t used = strnlen(driver.driverName, sizeof info->driver_name - 1);
    memcpy(info->driver_name, driver.driverName, used);
    info->driver_name[used] = '\0';
    if (driver.driverInfo[0] && used + 2 < sizeof info->driver_name) {
        info->driver_name[used] = ' ';
        snprintf(info->driver_name + used + 1, sizeof info->driver_name - used - 1, "%.*s",
                 (int)(sizeof info->driver_name - used - 2), driver.driverInfo);
    }
}

static og_status create_device(og_context *ctx)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical, &n, NULL);
    VkQueueFamilyProperties *fams = og_mem_alloc(&ctx->allocator, (n ? n : 1) * sizeof *fams);
    if (!fams)
        return og_fail(NULL, OG_ERROR_OUT_OF_MEMORY, "context: out of memory");
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical, &n, fams);
    uint32_t family = UINT32_MAX;
    for (uint32_t i = 0; i < n && family == UINT32_MAX; i++)
        if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            family = i;
    ctx->has_timestamps = family != UINT32_MAX && fams[family].timestampValidBits > 0 &&
                          ctx->props.limits.timestampPeriod > 0;
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
    volkLoadDeviceTable(&ctx->vk, ctx->device);
    ctx->queue_family = family;
    ctx->vk.vkGetDeviceQueue(ctx->device, family, 0, &ctx->queue);
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
        (r = ctx->vk.vkCreateFence(d, &fence, NULL, &ctx->fence)) != VK_SUCCESS)
        return og_fail(NULL, OG_ERROR_VULKAN,
                       "context: creating shared objects failed (VkResult %d)", (int)r);
    VkPushConstantRange push = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = sizeof(og_push)};
    for (int src = OG_SRC_STORAGE; src <= OG_SRC_TEXEL; src++) {
        VkDescriptorType operand = src == OG_SRC_TEXEL ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                       : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        /* 0, 1: A and B; 2: C; 3: Int8Gemm's column scales; 5: the bias.
         * Texel layouts have 3, 4: A and B with vector texels. */
        static const uint32_t storage[] = {0, 1, 2, 3, 5}, texel[] = {0, 1, 2, 3, 4, 5};
        const uint32_t *which = src == OG_SRC_TEXEL ? texel : storage;
        uint32_t count = src == OG_SRC_TEXEL ? 6 : 5;
        VkDescriptorSetLayoutBinding b[6];
        for (uint32_t w = 0; w < count; w++)
            b[w] = (VkDescriptorSetLayoutBinding){
                .binding = which[w],
                .descriptorType = which[w] == 2 || which[w] == 5 || src != OG_SRC_TEXEL
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
    create_error[0] = '\0';
    if (volkInitialize() != VK_SUCCESS)
        return og_fail(NULL, OG_ERROR_NOT_FOUND, "context: no Vulkan loader (install libvulkan1)");
    const og_allocator *alloc = desc ? desc->allocator : NULL;
    og_context *ctx = og_mem_alloc(alloc, sizeof *ctx);
    if (!ctx)
        return og_fail(NULL, OG_ERROR_OUT_OF_MEMORY, "context: out of memory");
    if (alloc)
        ctx->allocator = *alloc;
    const char *want = desc && desc->device ? desc->device : getenv("OG_DEVICE");
    const char *dbs = desc && desc->tuning_db ? desc->tuning_db : NULL;
    og_status st = create_instance(ctx, validation_wanted(desc));
    if (st == OG_OK)
        st = pick_device(ctx, want);
    if (st == OG_OK) {
        read_properties(ctx);
        st = create_device(ctx);
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
        ctx->vk.vkDeviceWaitIdle(ctx->device);
        og_buffer_destroy(ctx->placeholder);
        og_pipeline_cache_close(ctx); /* while ctx->n_pipelines still counts them */
        og_pipelines_destroy(ctx);
        for (int src = OG_SRC_STORAGE; src <= OG_SRC_TEXEL; src++) {
            ctx->vk.vkDestroyPipelineLayout(ctx->device, ctx->pipeline_layout[src], NULL);
            ctx->vk.vkDestroyDescriptorSetLayout(ctx->device, ctx->set_layout[src], NULL);
        }
        ctx->vk.vkDestroyFence(ctx->device, ctx->fence, NULL);
        ctx->vk.vkDestroyCommandPool(ctx->device, ctx->pool, NULL);
        ctx->vk.vkDestroyDevice(ctx->device, NULL);
    }
    for (size_t i = 0; i < ctx->n_dbs; i++)
        og_db_close(ctx->dbs[i].db);
    og_mem_free(&ctx->allocator, ctx->dbs);
    og_mem_free(&ctx->allocator, ctx->db_paths);
    if (ctx->messenger)
        vkDestroyDebugUtilsMessengerEXT(ctx->instance, ctx->messenger, NULL);
    if (ctx->instance)
        vkDestroyInstance(ctx->instance, NULL);
    og_allocator alloc = ctx->allocator;
    og_mem_free(&alloc, ctx);
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
