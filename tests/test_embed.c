/* onegpu inside an application's own Vulkan: the test is the application.
 * It creates its VkInstance (with VK_LAYER_KHRONOS_validation and
 * synchronisation validation) and VkDevice on lavapipe, its buffers and its
 * compute pipeline; fills A with its own dispatch and B with a copy, records
 * onegpu's GEMM on buffers wrapped from its own, then its own dispatch that
 * reads C, all in one command buffer it submits itself. The result must be
 * exact and the layer silent; onegpu must enable and destroy nothing of the
 * application's. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"

typedef struct app {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    uint32_t errors;
    VkPhysicalDevice physical;
    VkDevice device;
    VkDeviceCreateInfo device_info;
    struct VolkDeviceTable vk;
    VkQueue queue;
    VkCommandPool pool;
    VkFence fence;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipeline_layout;
    VkPipeline pipeline;
    uint32_t memory_type;
} app;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                 void *user)
{
    (void)type;
    app *a = user;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        a->errors++;
        fprintf(stderr, "test_embed: validation error: %s\n", data->pMessage);
    }
    return VK_FALSE;
}

/* The application's shader: mode 0 writes dst[dst_off + i] = (7i mod 13) - 6,
 * mode 1 writes dst[dst_off + i] = 2 * src[src_off + i] + 1. */
static const char app_shader[] =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, set = 0, binding = 0) readonly buffer Src { float src[]; };\n"
    "layout(std430, set = 0, binding = 1) writeonly buffer Dst { float dst[]; };\n"
    "layout(push_constant) uniform P { uint src_off; uint dst_off; uint count; uint mode; };\n"
    "void main() {\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    if (i >= count) return;\n"
    "    dst[dst_off + i] = mode == 0u ? float(int((i * 7u) % 13u) - 6)\n"
    "                                  : 2.0 * src[src_off + i] + 1.0;\n"
    "}\n";

/* The application's instance and device; integer_dot and address enable
 * the packed dot product and bufferDeviceAddress on it. */
static void app_create(app *a, int integer_dot, int address)
{
    memset(a, 0, sizeof *a);
    cr_assert_eq(volkInitialize(), VK_SUCCESS);
    const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
    const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
    VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                        .enabledValidationFeatureCount = 1,
                                        .pEnabledValidationFeatures = enables};
    VkApplicationInfo info = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                              .pApplicationName = "test_embed",
                              .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pNext = &features,
                                .pApplicationInfo = &info,
                                .enabledLayerCount = 1,
                                .ppEnabledLayerNames = layers,
                                .enabledExtensionCount = 2,
                                .ppEnabledExtensionNames = exts};
    cr_assert_eq(vkCreateInstance(&ici, NULL, &a->instance), VK_SUCCESS,
                 "the application's instance (validation layer installed?)");
    volkLoadInstanceOnly(a->instance);
    VkDebugUtilsMessengerCreateInfoEXT m = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
        .pfnUserCallback = on_message,
        .pUserData = a};
    cr_assert_eq(vkCreateDebugUtilsMessengerEXT(a->instance, &m, NULL, &a->messenger), VK_SUCCESS);
    uint32_t n = 1;
    VkResult r = vkEnumeratePhysicalDevices(a->instance, &n, &a->physical);
    cr_assert(r == VK_SUCCESS || r == VK_INCOMPLETE);

    /* A plain device of one compute queue; 16-bit storage enabled, the
     * packed dot product and device addresses only when asked. */
    static float priority = 1.0f;
    static VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                            .queueFamilyIndex = 0,
                                            .queueCount = 1,
                                            .pQueuePriorities = &priority};
    static VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR dot = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR,
        .shaderIntegerDotProduct = VK_TRUE};
    static VkPhysicalDeviceVulkan11Features v11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .storageBuffer16BitAccess = VK_TRUE};
    static VkPhysicalDeviceVulkan12Features v12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .bufferDeviceAddress = VK_TRUE};
    static VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    static const char *dot_ext = VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME;
    f2.pNext = &v11;
    v11.pNext = integer_dot ? &dot : NULL;
    dot.pNext = NULL;
    if (address) {
        v12.pNext = v11.pNext;
        v11.pNext = &v12;
    }
    a->device_info = (VkDeviceCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                          .pNext = &f2,
                                          .queueCreateInfoCount = 1,
                                          .pQueueCreateInfos = &queue,
                                          .enabledExtensionCount = integer_dot ? 1 : 0,
                                          .ppEnabledExtensionNames = &dot_ext};
    cr_assert_eq(vkCreateDevice(a->physical, &a->device_info, NULL, &a->device), VK_SUCCESS);
    volkLoadDeviceTable(&a->vk, a->device);
    a->vk.vkGetDeviceQueue(a->device, 0, 0, &a->queue);
    VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .queueFamilyIndex = 0};
    cr_assert_eq(a->vk.vkCreateCommandPool(a->device, &pool, NULL, &a->pool), VK_SUCCESS);
    VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    cr_assert_eq(a->vk.vkCreateFence(a->device, &fence, NULL, &a->fence), VK_SUCCESS);

    VkDescriptorSetLayoutBinding b[2] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL}};
    VkDescriptorSetLayoutCreateInfo sl = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = 2,
                                          .pBindings = b};
    cr_assert_eq(a->vk.vkCreateDescriptorSetLayout(a->device, &sl, NULL, &a->set_layout),
                 VK_SUCCESS);
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 16};
    VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &a->set_layout,
                                     .pushConstantRangeCount = 1,
                                     .pPushConstantRanges = &push};
    cr_assert_eq(a->vk.vkCreatePipelineLayout(a->device, &pl, NULL, &a->pipeline_layout),
                 VK_SUCCESS);
    uint32_t *words;
    size_t count;
    char err[1024];
    cr_assert_eq(og_compile(app_shader, OG_GLSL, 0, &words, &count, err, sizeof err), OG_OK, "%s",
                 err);
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = count * 4,
                                   .pCode = words};
    VkShaderModule module;
    cr_assert_eq(a->vk.vkCreateShaderModule(a->device, &mi, NULL, &module), VK_SUCCESS);
    free(words);
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module,
                  .pName = "main"},
        .layout = a->pipeline_layout};
    cr_assert_eq(a->vk.vkCreateComputePipelines(a->device, VK_NULL_HANDLE, 1, &ci, NULL,
                                                &a->pipeline),
                 VK_SUCCESS);
    a->vk.vkDestroyShaderModule(a->device, module, NULL);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(a->physical, &mp);
    a->memory_type = UINT32_MAX;
    VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < mp.memoryTypeCount && a->memory_type == UINT32_MAX; i++)
        if ((mp.memoryTypes[i].propertyFlags & want) == want)
            a->memory_type = i;
    cr_assert_neq(a->memory_type, UINT32_MAX);
}

/* The application's objects, destroyed by the application: every call
 * would fail (or the layer would complain) had onegpu destroyed one. */
static void app_destroy(app *a)
{
    cr_expect_eq(a->vk.vkDeviceWaitIdle(a->device), VK_SUCCESS, "the device outlives onegpu");
    a->vk.vkDestroyPipeline(a->device, a->pipeline, NULL);
    a->vk.vkDestroyPipelineLayout(a->device, a->pipeline_layout, NULL);
    a->vk.vkDestroyDescriptorSetLayout(a->device, a->set_layout, NULL);
    a->vk.vkDestroyFence(a->device, a->fence, NULL);
    a->vk.vkDestroyCommandPool(a->device, a->pool, NULL);
    a->vk.vkDestroyDevice(a->device, NULL);
    uint32_t errors = a->errors;
    vkDestroyDebugUtilsMessengerEXT(a->instance, a->messenger, NULL);
    vkDestroyInstance(a->instance, NULL);
    cr_expect_eq(errors, 0, "%" PRIu32 " validation errors (synchronisation validation on)", errors);
}

static og_context *adopt(app *a)
{
    og_vulkan_device dev = {.instance = a->instance,
                            .get_instance_proc_addr = vkGetInstanceProcAddr,
                            .api_version = VK_API_VERSION_1_2,
                            .physical_device = a->physical,
                            .device = a->device,
                            .device_info = &a->device_info,
                            .queue = a->queue,
                            .queue_family = 0};
    og_context *ctx = NULL;
    og_status st = og_context_create(&(og_context_desc){.adopt = &dev, .tuning_db = ""}, &ctx);
    cr_assert_eq(st, OG_OK, "adopting: %s", og_last_error());
    cr_expect_eq(og_context_vk_device(ctx), a->device);
    cr_expect_eq(og_context_vk_queue(ctx), a->queue);
    return ctx;
}

typedef struct app_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped;
    VkDeviceSize size;
} app_buffer;

static app_buffer app_buffer_make(app *a, VkDeviceSize size, VkBufferUsageFlags usage)
{
    app_buffer b = {.size = size};
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = size,
                             .usage = usage,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    cr_assert_eq(a->vk.vkCreateBuffer(a->device, &bi, NULL, &b.buffer), VK_SUCCESS);
    VkMemoryRequirements req;
    a->vk.vkGetBufferMemoryRequirements(a->device, b.buffer, &req);
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = req.size,
                               .memoryTypeIndex = a->memory_type};
    cr_assert_eq(a->vk.vkAllocateMemory(a->device, &ai, NULL, &b.memory), VK_SUCCESS);
    cr_assert_eq(a->vk.vkBindBufferMemory(a->device, b.buffer, b.memory, 0), VK_SUCCESS);
    cr_assert_eq(a->vk.vkMapMemory(a->device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped),
                 VK_SUCCESS);
    return b;
}

static void app_buffer_free(app *a, app_buffer *b)
{
    a->vk.vkDestroyBuffer(a->device, b->buffer, NULL);
    a->vk.vkFreeMemory(a->device, b->memory, NULL);
}

/* Binds src [0, src_range) and dst [0, dst_range) and dispatches the
 * application's shader over count elements. */
static void app_dispatch(app *a, VkCommandBuffer cmd, VkDescriptorSet set, VkBuffer src,
                         VkDeviceSize src_range, VkBuffer dst, VkDeviceSize dst_range,
                         const uint32_t push[4])
{
    VkDescriptorBufferInfo infos[2] = {{src, 0, src_range}, {dst, 0, dst_range}};
    VkWriteDescriptorSet w[2];
    for (int i = 0; i < 2; i++)
        w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                      .dstSet = set,
                                      .dstBinding = (uint32_t)i,
                                      .descriptorCount = 1,
                                      .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .pBufferInfo = &infos[i]};
    a->vk.vkUpdateDescriptorSets(a->device, 2, w, 0, NULL);
    a->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->pipeline);
    a->vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->pipeline_layout, 0, 1,
                                  &set, 0, NULL);
    a->vk.vkCmdPushConstants(cmd, a->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 16, push);
    a->vk.vkCmdDispatch(cmd, (push[2] + 63) / 64, 1, 1);
}

/* Where A, B and C lie: in one VkBuffer at the byte offsets given, or in
 * three (offsets 0). */
typedef struct layout {
    int one_buffer;
    VkDeviceSize off[3];
    int64_t m, n, k;
} layout;

/* One command buffer: A by the application's dispatch, B by its copy from
 * a staging buffer, C = A*B + 0.5*C through onegpu on wrapped buffers,
 * D = 2*C + 1 by its dispatch. Exact: the inputs are small integers. */
static void run_layout(app *a, og_context *ctx, const layout *l)
{
    const int64_t m = l->m, n = l->n, k = l->k;
    const VkDeviceSize bytes[3] = {(VkDeviceSize)(m * k) * 4, (VkDeviceSize)(k * n) * 4,
                                   (VkDeviceSize)(m * n) * 4};
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    app_buffer bufs[3], staging, out;
    VkDeviceSize off[3];
    if (l->one_buffer) {
        bufs[0] = app_buffer_make(a, l->off[2] + bytes[2], usage);
        bufs[1] = bufs[2] = bufs[0];
        memcpy(off, l->off, sizeof off);
    } else {
        for (int i = 0; i < 3; i++) {
            /* Texel usage too: onegpu may read A and B through texel views. */
            bufs[i] = app_buffer_make(a, bytes[i], usage | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT);
            off[i] = 0;
        }
    }
    staging = app_buffer_make(a, bytes[1], VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
    out = app_buffer_make(a, bytes[2], usage);
    float *bh = staging.mapped, *c0 = (float *)((char *)bufs[2].mapped + off[2]);
    for (int64_t i = 0; i < k * n; i++)
        bh[i] = (float)((i * 5) % 11) - 5.0f;
    for (int64_t i = 0; i < m * n; i++)
        c0[i] = (float)(i % 9);
    float *cref = malloc((size_t)(m * n) * sizeof *cref);
    cr_assert_not_null(cref);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float s = 0;
            for (int64_t p = 0; p < k; p++)
                s += ((float)(((i * k + p) * 7) % 13) - 6.0f) * bh[p * n + j];
            cref[i * n + j] = s + 0.5f * c0[i * n + j];
        }

    og_buffer *ob[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(og_buffer_wrap(ctx, bufs[i].buffer, off[i], bytes[i],
                                    l->one_buffer ? usage
                                                  : usage | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT,
                                    &ob[i]),
                     OG_OK, "%s", og_context_last_error(ctx));
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);

    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4};
    VkDescriptorPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = 2,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &ps};
    VkDescriptorPool dpool;
    cr_assert_eq(a->vk.vkCreateDescriptorPool(a->device, &pi, NULL, &dpool), VK_SUCCESS);
    VkDescriptorSetLayout layouts[2] = {a->set_layout, a->set_layout};
    VkDescriptorSetAllocateInfo dsi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                       .descriptorPool = dpool,
                                       .descriptorSetCount = 2,
                                       .pSetLayouts = layouts};
    VkDescriptorSet sets[2];
    cr_assert_eq(a->vk.vkAllocateDescriptorSets(a->device, &dsi, sets), VK_SUCCESS);
    VkCommandBufferAllocateInfo cbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = a->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkCommandBuffer cmd;
    cr_assert_eq(a->vk.vkAllocateCommandBuffers(a->device, &cbi, &cmd), VK_SUCCESS);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    cr_assert_eq(a->vk.vkBeginCommandBuffer(cmd, &begin), VK_SUCCESS);

    /* A: the application's dispatch, its binding ending where A ends. */
    uint32_t fill[4] = {0, (uint32_t)(off[0] / 4), (uint32_t)(m * k), 0};
    app_dispatch(a, cmd, sets[0], out.buffer, bytes[2], bufs[0].buffer, off[0] + bytes[0], fill);
    /* B: a copy. */
    VkBufferCopy region = {0, off[1], bytes[1]};
    a->vk.vkCmdCopyBuffer(cmd, staging.buffer, bufs[1].buffer, 1, &region);
    /* C: onegpu, with no barrier of the application's (the contract). */
    og_gemm_args args = {.m = m, .n = n, .k = k, .alpha = 1, .beta = 0.5f,
                         .a = ob[0], .b = ob[1], .c = ob[2], .lda = k, .ldb = n, .ldc = n};
    cr_assert_eq(og_gemm_encode(g, cmd, &args), OG_OK, "%s", og_context_last_error(ctx));
    /* D = 2C + 1: the application's dispatch reads C right after. */
    uint32_t twice[4] = {(uint32_t)(off[2] / 4), 0, (uint32_t)(m * n), 1};
    app_dispatch(a, cmd, sets[1], bufs[2].buffer, off[2] + bytes[2], out.buffer, bytes[2], twice);
    VkMemoryBarrier host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    a->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                               0, 1, &host, 0, NULL, 0, NULL);
    cr_assert_eq(a->vk.vkEndCommandBuffer(cmd), VK_SUCCESS);
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cmd};
    cr_assert_eq(a->vk.vkResetFences(a->device, 1, &a->fence), VK_SUCCESS);
    cr_assert_eq(a->vk.vkQueueSubmit(a->queue, 1, &submit, a->fence), VK_SUCCESS);
    cr_assert_eq(a->vk.vkWaitForFences(a->device, 1, &a->fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);

    const float *d = out.mapped;
    for (int64_t i = 0; i < m * n; i++)
        cr_assert_eq(d[i], 2.0f * cref[i] + 1.0f, "%s %ldx%ldx%ld: D[%ld] = %g, expected %g",
                     l->one_buffer ? "one buffer" : "three buffers", (long)m, (long)n, (long)k,
                     (long)i, (double)d[i], (double)(2.0f * cref[i] + 1.0f));

    og_gemm_destroy(g);
    for (int i = 0; i < 3; i++)
        og_buffer_destroy(ob[i]);
    a->vk.vkFreeCommandBuffers(a->device, a->pool, 1, &cmd);
    a->vk.vkDestroyDescriptorPool(a->device, dpool, NULL);
    for (int i = 0; i < (l->one_buffer ? 1 : 3); i++)
        app_buffer_free(a, &bufs[i]);
    app_buffer_free(a, &staging);
    app_buffer_free(a, &out);
    free(cref);
}

Test(embed, gemm_between_the_applications_dispatches, .timeout = 600)
{
    app a;
    app_create(&a, 0, 0);
    og_context *ctx = adopt(&a);
    /* Three buffers; then one buffer with A, B and C at offsets that are
     * whole words but not aligned to minStorageBufferOffsetAlignment; then
     * the same with a split-k shape (64 x 48 x 256: one workgroup, 4 ranges). */
    const layout layouts[] = {
        {0, {0, 0, 0}, 33, 20, 40},
        {1, {20, 20 + 33 * 40 * 4 + 12, 20 + 33 * 40 * 4 + 12 + 40 * 20 * 4 + 4}, 33, 20, 40},
        {1, {4, 4 + 64 * 256 * 4 + 8, 4 + 64 * 256 * 4 + 8 + 256 * 48 * 4 + 36}, 64, 48, 256},
    };
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        run_layout(&a, ctx, &layouts[i]);
    og_context_destroy(ctx);
    app_destroy(&a);
}

/* og_gemm_encode's barrier after its last dispatch orders the application's
 * transfer writes that follow (onegpu.h: synchronisation): in one command
 * buffer, with no barrier of the application's, C = A * B, then its copy
 * over C (write after onegpu's write) and its fill of A (write after
 * onegpu's read), then C = A * B + C again, reading both. Synchronisation
 * validation must stay silent and the result must be the second product on
 * the copied C, A the filled value. */
Test(embed, transfer_writes_after_encode)
{
    app a;
    app_create(&a, 0, 0);
    og_context *ctx = adopt(&a);
    const int64_t m = 9, n = 12, k = 20;
    const VkDeviceSize bytes[3] = {m * k * 4, k * n * 4, m * n * 4};
    const VkDeviceSize off[3] = {12, 12 + bytes[0] + 4, 12 + bytes[0] + 4 + bytes[1] + 8};
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    app_buffer pool = app_buffer_make(&a, off[2] + bytes[2], usage);
    app_buffer src = app_buffer_make(&a, bytes[2], VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
    char *base = pool.mapped;
    float *ha = (float *)(base + off[0]), *hb = (float *)(base + off[1]);
    float *hc = (float *)(base + off[2]), *copied = src.mapped;
    for (int64_t i = 0; i < m * k; i++)
        ha[i] = (float)(i % 5) - 2.0f;
    for (int64_t i = 0; i < k * n; i++)
        hb[i] = (float)(i % 7) - 3.0f;
    for (int64_t i = 0; i < m * n; i++)
        copied[i] = (float)(i % 11);
    og_buffer *ob[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(og_buffer_wrap(ctx, pool.buffer, off[i], bytes[i], usage, &ob[i]), OG_OK, "%s",
                     og_context_last_error(ctx));
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    VkCommandBufferAllocateInfo cbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = a.pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkCommandBuffer cmd;
    cr_assert_eq(a.vk.vkAllocateCommandBuffers(a.device, &cbi, &cmd), VK_SUCCESS);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cr_assert_eq(a.vk.vkBeginCommandBuffer(cmd, &begin), VK_SUCCESS);
    og_gemm_args args = {.m = m, .n = n, .k = k, .alpha = 1, .a = ob[0], .b = ob[1], .c = ob[2],
                         .lda = k, .ldb = n, .ldc = n};
    cr_assert_eq(og_gemm_encode(g, cmd, &args), OG_OK, "%s", og_context_last_error(ctx));
    VkBufferCopy region = {0, off[2], bytes[2]};
    a.vk.vkCmdCopyBuffer(cmd, src.buffer, pool.buffer, 1, &region);
    const float fill = 0.5f;
    uint32_t bits;
    memcpy(&bits, &fill, sizeof bits);
    a.vk.vkCmdFillBuffer(cmd, pool.buffer, off[0], bytes[0], bits);
    args.beta = 1;
    cr_assert_eq(og_gemm_encode(g, cmd, &args), OG_OK, "%s", og_context_last_error(ctx));
    cr_assert_eq(a.vk.vkEndCommandBuffer(cmd), VK_SUCCESS);
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cmd};
    cr_assert_eq(a.vk.vkResetFences(a.device, 1, &a.fence), VK_SUCCESS);
    cr_assert_eq(a.vk.vkQueueSubmit(a.queue, 1, &submit, a.fence), VK_SUCCESS);
    cr_assert_eq(a.vk.vkWaitForFences(a.device, 1, &a.fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    cr_expect_eq(a.errors, 0, "%" PRIu32 " validation errors: writes after the GEMM unordered",
                 a.errors);
    for (int64_t i = 0; i < m * k; i++)
        cr_assert_eq(ha[i], fill, "A[%ld] = %g after the fill", (long)i, (double)ha[i]);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float want = copied[i * n + j];
            for (int64_t p = 0; p < k; p++)
                want += fill * hb[p * n + j];
            cr_assert_eq(hc[i * n + j], want, "C[%ld][%ld] = %g, expected %g", (long)i, (long)j,
                         (double)hc[i * n + j], (double)want);
        }
    a.vk.vkFreeCommandBuffers(a.device, a.pool, 1, &cmd);
    og_gemm_destroy(g);
    for (int i = 0; i < 3; i++)
        og_buffer_destroy(ob[i]);
    og_context_destroy(ctx);
    app_buffer_free(&a, &pool);
    app_buffer_free(&a, &src);
    app_destroy(&a);
}

/* What the kernels may use comes from what the application enabled: the
 * packed dot product is lavapipe's, but only a device created with it
 * gives it to onegpu. Nothing is enabled behind the application's back. */
Test(embed, eligibility_follows_what_the_application_enabled)
{
    for (int dot = 0; dot < 2; dot++) {
        app a;
        app_create(&a, dot, 0);
        og_context *ctx = adopt(&a);
        cr_expect_eq(ctx->limits.integer_dot, dot, "integer dot %d adopted as %d", dot,
                     ctx->limits.integer_dot);
        cr_expect_eq(ctx->limits.matrix.n_shapes, 0);
        og_context_destroy(ctx);
        app_destroy(&a);
    }
}

/* Validation on an adopted instance is the application's: asking onegpu for
 * it is refused, the application's own errors are not counted by onegpu,
 * and onegpu's errors reach the application's messenger (here provoked by a
 * wrapped buffer that claims a TRANSFER_DST usage its VkBuffer lacks, so
 * og_buffer_write's staging copy breaks a rule). */
Test(embed, validation_is_the_applications)
{
    app a;
    app_create(&a, 0, 0);
    og_vulkan_device dev = {.instance = a.instance,
                            .api_version = VK_API_VERSION_1_2,
                            .physical_device = a.physical,
                            .device = a.device,
                            .device_info = &a.device_info,
                            .queue = a.queue};
    og_context *ctx = NULL;
    cr_expect_eq(og_context_create(&(og_context_desc){.adopt = &dev, .validation = 1}, &ctx),
                 OG_ERROR_INVALID_ARGUMENT);
    cr_expect_null(ctx);
    cr_expect(strstr(og_last_error(), "validation") && strstr(og_last_error(), "adopted"), "%s",
              og_last_error());
    ctx = adopt(&a);
    uint32_t before = og_validation_errors_total();
    /* The application's own error: resetting no fence. */
    a.vk.vkResetFences(a.device, 0, &a.fence);
    cr_expect_eq(a.errors, 1, "the application's messenger heard %" PRIu32 " errors", a.errors);
    cr_expect_eq(og_context_validation_errors(ctx), 0);
    cr_expect_eq(og_validation_errors_total(), before, "onegpu counted the application's error");
    /* onegpu's error, heard by the application. */
    app_buffer b = app_buffer_make(&a, 64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    og_buffer *wrapped;
    cr_assert_eq(og_buffer_wrap(ctx, b.buffer, 0, 64,
                                VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                    VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                &wrapped),
                 OG_OK);
    float data[16] = {0};
    og_buffer_write(wrapped, 0, data, sizeof data);
    cr_expect_gt(a.errors, 1, "onegpu's copy into a buffer without TRANSFER_DST went unheard");
    cr_expect_eq(og_validation_errors_total(), before);
    og_buffer_destroy(wrapped);
    og_context_destroy(ctx);
    app_buffer_free(&a, &b);
    a.errors = 0; /* both were meant */
    app_destroy(&a);
}

/* Why a B past maxStorageBufferRange (by its leading dimension, in a small
 * wrapped buffer without device-address usage: checked before its size) is
 * refused on an adopted device, adopted with the instance's api_version. */
static void expect_far_b_refused(app *a, uint32_t api_version, const char *why)
{
    og_vulkan_device dev = {.instance = a->instance,
                            .api_version = api_version,
                            .physical_device = a->physical,
                            .device = a->device,
                            .device_info = &a->device_info,
                            .queue = a->queue};
    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(&(og_context_desc){.adopt = &dev, .tuning_db = ""}, &ctx), OG_OK,
                 "%s", og_last_error());
    uint64_t range_words = ctx->limits.max_storage_range / 4;
    if (range_words >= UINT32_MAX / 2) {
        og_context_destroy(ctx);
        cr_skip_test("maxStorageBufferRange covers 2^31 words");
    }
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    app_buffer buf = app_buffer_make(a, 256, usage);
    og_buffer *ob;
    cr_assert_eq(og_buffer_wrap(ctx, buf.buffer, 0, 256, usage, &ob), OG_OK);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    og_gemm_args args = {.m = 1, .n = 4, .k = 2, .alpha = 1, .a = ob, .b = ob, .c = ob,
                         .lda = 2, .ldb = (int64_t)range_words, .ldc = 4};
    cr_expect_eq(og_gemm_run(g, &args), OG_ERROR_UNSUPPORTED);
    const char *msg = og_context_last_error(ctx);
    cr_expect(strstr(msg, "gemm: B needs") && strstr(msg, why), "wanted '%s' in: %s", why, msg);
    og_gemm_destroy(g);
    og_buffer_destroy(ob);
    og_context_destroy(ctx);
    app_buffer_free(a, &buf);
}

/* An operand past maxStorageBufferRange is refused saying why it cannot be
 * read by address: lavapipe has bufferDeviceAddress, so the application
 * that did not enable it is told so; with it enabled, an instance below
 * Vulkan 1.2 is named, and on 1.2 the buffer's missing usage. */
Test(embed, refusal_says_bufferDeviceAddress_was_not_enabled)
{
    app a;
    app_create(&a, 0, 0);
    expect_far_b_refused(&a, VK_API_VERSION_1_2,
                         "created without bufferDeviceAddress, which the device has");
    app_destroy(&a);
    app_create(&a, 0, 1);
    expect_far_b_refused(&a, VK_API_VERSION_1_1, "below 1.2");
    expect_far_b_refused(&a, VK_API_VERSION_1_2, "lacks VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT");
    app_destroy(&a);
}

/* Bad adoptions are refused, naming what is missing. */
Test(embed, incomplete_adoption_is_refused)
{
    app a;
    app_create(&a, 0, 0);
    og_vulkan_device dev = {.instance = a.instance,
                            .physical_device = a.physical,
                            .device = a.device,
                            .queue = a.queue};
    og_context *ctx = NULL;
    cr_expect_eq(og_context_create(&(og_context_desc){.adopt = &dev}, &ctx),
                 OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_last_error(), "VkDeviceCreateInfo") != NULL, "%s", og_last_error());
    dev.device_info = &a.device_info;
    dev.queue_family = 7;
    cr_expect_eq(og_context_create(&(og_context_desc){.adopt = &dev}, &ctx),
                 OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_last_error(), "queue family 7") != NULL, "%s", og_last_error());
    dev.queue_family = 0;
    dev.queue = VK_NULL_HANDLE;
    cr_expect_eq(og_context_create(&(og_context_desc){.adopt = &dev}, &ctx),
                 OG_ERROR_INVALID_ARGUMENT);
    cr_expect_null(ctx);
    app_destroy(&a);
}
