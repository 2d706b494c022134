/* The instance side of a context: the instance (with the validation layer
 * and its messenger when asked), the physical device OG_DEVICE names, and
 * what the kernels need to know of it. */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_vk.h"

/* Every context's errors, destroyed contexts included: a process reads it at
 * its end. Atomic: two threads may each use a context of their own. */
static atomic_uint_least32_t process_errors;

void og_validation_count(og_context *ctx, uint32_t n)
{
    ctx->validation_errors += n;
    atomic_fetch_add(&process_errors, n);
}

uint32_t og_validation_errors_total(void)
{
    return (uint32_t)atomic_load(&process_errors);
}

static VKAPI_ATTR VkBool32 VKAPI_CALL
on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT type,
              const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)type;
    og_context *ctx = user;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        og_validation_count(ctx, 1);
        fprintf(stderr, "onegpu: validation error: %s\n", data->pMessage);
    }
    return VK_FALSE;
}

/* The messenger's description: errors and warnings, to on_validation. */
static VkDebugUtilsMessengerCreateInfoEXT messenger_info(og_context *ctx)
{
    return (VkDebugUtilsMessengerCreateInfoEXT){
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
        .pfnUserCallback = on_validation,
        .pUserData = ctx};
}

/* The validation layer's messenger on the instance the context created. */
static og_status messenger_create(og_context *ctx)
{
    VkDebugUtilsMessengerCreateInfoEXT m = messenger_info(ctx);
    if (!vkCreateDebugUtilsMessengerEXT)
        return og_fail(NULL, OG_ERROR_NOT_FOUND,
                       "context: validation asked for, but the instance lacks %s",
                       VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    VkResult r = vkCreateDebugUtilsMessengerEXT(ctx->instance, &m, NULL, &ctx->messenger);
    if (r != VK_SUCCESS)
        return og_fail(NULL, OG_ERROR_VULKAN, "context: debug messenger failed (VkResult %d)",
                       (int)r);
    return OG_OK;
}

og_status og_instance_create(og_context *ctx, int validation)
{
    const char *layer = "VK_LAYER_KHRONOS_validation";
    const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                          VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    /* In the instance's chain, the messenger also hears vkCreateInstance
     * and vkDestroyInstance (objects left when the instance goes). */
    VkDebugUtilsMessengerCreateInfoEXT hear = messenger_info(ctx);
    VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                        .pNext = &hear,
                                        .enabledValidationFeatureCount = 1,
                                        .pEnabledValidationFeatures = &sync};
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
    /* validation 2: with synchronisation validation (hazards between commands). */
    VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                 .pNext = validation == 2 ? (void *)&features
                                          : validation    ? (void *)&hear
                                                          : NULL,
                                 .pApplicationInfo = &app,
                                 .enabledLayerCount = validation ? 1 : 0,
                                 .ppEnabledLayerNames = &layer,
                                 .enabledExtensionCount = validation == 2 ? 2 : validation ? 1 : 0,
                                 .ppEnabledExtensionNames = exts};
    VkResult r = vkCreateInstance(&info, NULL, &ctx->instance);
    if (r != VK_SUCCESS)
        return og_fail(NULL, OG_ERROR_VULKAN, "context: vkCreateInstance failed (VkResult %d)",
                       (int)r);
    ctx->owns_instance = 1;
    volkLoadInstanceOnly(ctx->instance);
    return validation ? messenger_create(ctx) : OG_OK;
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
og_status og_physical_pick(og_context *ctx, const char *want)
{
    uint32_t n = 0;
    VkResult r = vkEnumeratePhysicalDevices(ctx->instance, &n, NULL);
    if (r != VK_SUCCESS || n == 0)
        return og_fail(NULL, OG_ERROR_NOT_FOUND,
                       "context: the Vulkan loader found no device (no driver manifest, or the driver found no "
                       "GPU; install the GPU's Vulkan driver, or mesa-vulkan-drivers for the CPU driver "
                       "lavapipe)");
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

void og_properties_read(og_context *ctx)
{
    VkPhysicalDeviceMaintenance3Properties maintenance3 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceDriverProperties driver = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, .pNext = &maintenance3};
    VkPhysicalDeviceSubgroupProperties subgroup = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, .pNext = &driver};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &subgroup};
    vkGetPhysicalDeviceProperties2(ctx->physical, &p2);
    ctx->props = p2.properties;
    ctx->max_allocation = maintenance3.maxMemoryAllocationSize;
    vkGetPhysicalDeviceMemoryProperties(ctx->physical, &ctx->memory_props);
    og_memory_choose(&ctx->memory_props, ~0u, ctx->force_staging, &ctx->memory);

    const VkPhysicalDeviceLimits *l = &ctx->props.limits;
    og_limits *lim = &ctx->limits;
    lim->max_invocations = l->maxComputeWorkGroupInvocations;
    lim->max_shared_bytes = l->maxComputeSharedMemorySize;
    lim->max_storage_range = l->maxStorageBufferRange;
    lim->bind_align = l->minStorageBufferOffsetAlignment > 16
                          ? (uint32_t)l->minStorageBufferOffsetAlignment
                          : 16u;
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
    /* driverName and driverInfo are 256 bytes each, NUL-terminated. */
    snprintf(info->driver_name, sizeof info->driver_name, "%.*s",
             (int)sizeof driver.driverName, driver.driverName);
    snprintf(info->driver_info, sizeof info->driver_info, "%.*s",
             (int)sizeof driver.driverInfo, driver.driverInfo);
    for (unsigned i = 0; i < VK_UUID_SIZE; i++)
        snprintf(info->pipeline_cache_uuid + 2 * i, 3, "%02x", ctx->props.pipelineCacheUUID[i]);
}

