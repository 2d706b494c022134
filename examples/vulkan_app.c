/*
 * vulkan_app: an application that calls Vulkan itself and records onegpu's
 * GEMM between its own commands.
 *
 * Before onegpu: it enumerates the instance's layers, creates its instance
 * and a device with a compute queue. Between onegpu's calls: it creates one
 * host-visible VkBuffer holding A (64 x 40), B (40 x 48) and C (64 x 48) at
 * word-aligned offsets, writes A and B through its mapping, and records in
 * one command buffer its own fill of C, onegpu's C = A * B + 0.5 * C (on
 * og_buffer_wrap's views of the buffer) and its own copy of C to a read-back
 * range. After onegpu: it submits, waits, checks C against a host loop
 * (exact: the elements are multiples of 1/8) and destroys its objects.
 *
 * onegpu.h comes first on purpose: it must leave Vulkan's prototypes, which
 * this program calls, as <vulkan/vulkan.h> declares them. Link the Vulkan
 * loader (-lvulkan, or CMake's Vulkan::Vulkan) beside onegpu, statically
 * (libonegpu.a) or not:
 *     cc vulkan_app.c $(pkg-config --cflags --libs onegpu vulkan)
 * Exits 1 when a call fails or C differs.
 */
#include <onegpu.h>

#include <stdio.h>
#include <string.h>
#include <vulkan/vulkan.h>

enum { M = 64, N = 48, K = 40 };

/* Byte offsets of A, B, C and the read-back copy of C in the one buffer:
 * whole 32-bit words, deliberately not 16-byte aligned. */
static const VkDeviceSize off_a = 4, off_b = off_a + 4 * M * K + 8, off_c = off_b + 4 * K * N + 12,
                          off_back = off_c + 4 * M * N + 4, buffer_bytes = off_back + 4 * M * N;

/* The application's objects; VK_NULL_HANDLE (or NULL) where not made. */
typedef struct app {
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkDeviceCreateInfo device_info;
    uint32_t family;
    VkQueue queue;
    VkBuffer buffer;
    VkDeviceMemory memory;
    float *mapped;
    VkCommandPool pool;
    VkFence fence;
} app;

static int fail(const char *what, VkResult r)
{
    fprintf(stderr, "vulkan_app: %s failed (VkResult %d)\n", what, (int)r);
    return 1;
}

/* A deterministic value in {-5/8, ..., 5/8}. */
static float element(int i, int j)
{
    return (float)((i * 7 + j * 3) % 11 - 5) / 8.0f;
}

/* Vulkan before onegpu: the instance, a device with one compute queue. */
static int app_create(app *a)
{
    uint32_t layers = 0;
    VkResult r = vkEnumerateInstanceLayerProperties(&layers, NULL);
    if (r != VK_SUCCESS)
        return fail("vkEnumerateInstanceLayerProperties", r);
    VkApplicationInfo info = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                              .pApplicationName = "vulkan_app",
                              .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &info};
    if ((r = vkCreateInstance(&ici, NULL, &a->instance)) != VK_SUCCESS)
        return fail("vkCreateInstance", r);
    uint32_t n = 1;
    r = vkEnumeratePhysicalDevices(a->instance, &n, &a->physical);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0)
        return fail("vkEnumeratePhysicalDevices (no device)", r);
    VkQueueFamilyProperties fams[16];
    uint32_t n_fams = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(a->physical, &n_fams, fams);
    for (a->family = 0; a->family < n_fams; a->family++)
        if (fams[a->family].queueFlags & VK_QUEUE_COMPUTE_BIT)
            break;
    if (a->family == n_fams)
        return fail("finding a compute queue family", VK_ERROR_FEATURE_NOT_PRESENT);
    static const float priority = 1.0f;
    static VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                            .queueCount = 1,
                                            .pQueuePriorities = &priority};
    queue.queueFamilyIndex = a->family;
    a->device_info = (VkDeviceCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                          .queueCreateInfoCount = 1,
                                          .pQueueCreateInfos = &queue};
    if ((r = vkCreateDevice(a->physical, &a->device_info, NULL, &a->device)) != VK_SUCCESS)
        return fail("vkCreateDevice", r);
    vkGetDeviceQueue(a->device, a->family, 0, &a->queue);
    return 0;
}

/* Vulkan between onegpu's calls: the buffer (A and B written through its
 * mapping), a command pool and a fence. */
static int app_buffer_create(app *a)
{
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = buffer_bytes,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = vkCreateBuffer(a->device, &bi, NULL, &a->buffer);
    if (r != VK_SUCCESS)
        return fail("vkCreateBuffer", r);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(a->device, a->buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(a->physical, &mp);
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = 0;
    while (type < mp.memoryTypeCount && !((req.memoryTypeBits >> type & 1) &&
                                          (mp.memoryTypes[type].propertyFlags & want) == want))
        type++;
    if (type == mp.memoryTypeCount)
        return fail("finding host-visible memory", VK_ERROR_FEATURE_NOT_PRESENT);
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = req.size,
                               .memoryTypeIndex = type};
    if ((r = vkAllocateMemory(a->device, &ai, NULL, &a->memory)) != VK_SUCCESS)
        return fail("vkAllocateMemory", r);
    if ((r = vkBindBufferMemory(a->device, a->buffer, a->memory, 0)) != VK_SUCCESS)
        return fail("vkBindBufferMemory", r);
    void *mapped;
    if ((r = vkMapMemory(a->device, a->memory, 0, VK_WHOLE_SIZE, 0, &mapped)) != VK_SUCCESS)
        return fail("vkMapMemory", r);
    a->mapped = mapped;
    float *ha = a->mapped + off_a / 4, *hb = a->mapped + off_b / 4;
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++)
            ha[i * K + k] = element(i, k);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            hb[k * N + j] = element(j, k + 1);
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .queueFamilyIndex = a->family};
    if ((r = vkCreateCommandPool(a->device, &pi, NULL, &a->pool)) != VK_SUCCESS)
        return fail("vkCreateCommandPool", r);
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = vkCreateFence(a->device, &fi, NULL, &a->fence)) != VK_SUCCESS)
        return fail("vkCreateFence", r);
    return 0;
}

/* Records the application's fill of C (every element 2), onegpu's GEMM and
 * the application's copy of C to the read-back range, with no barrier of
 * its own around the GEMM (onegpu.h: og_gemm_encode's synchronisation);
 * submits and waits. */
static int app_run(app *a, og_context *ctx, og_gemm *gemm, const og_gemm_args *args)
{
    VkCommandBufferAllocateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = a->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBuffer cmd;
    VkResult r = vkAllocateCommandBuffers(a->device, &ci, &cmd);
    if (r != VK_SUCCESS)
        return fail("vkAllocateCommandBuffers", r);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    int failed = 0;
    if ((r = vkBeginCommandBuffer(cmd, &begin)) != VK_SUCCESS)
        failed = fail("vkBeginCommandBuffer", r);
    if (!failed) {
        const float two = 2.0f;
        uint32_t bits;
        memcpy(&bits, &two, sizeof bits);
        vkCmdFillBuffer(cmd, a->buffer, off_c, 4 * M * N, bits);
        og_status st = og_gemm_encode(gemm, cmd, args);
        if (st != OG_OK) {
            fprintf(stderr, "vulkan_app: og_gemm_encode: %s\n", og_context_last_error(ctx));
            failed = 1;
        }
        VkBufferCopy back = {off_c, off_back, 4 * M * N};
        vkCmdCopyBuffer(cmd, a->buffer, a->buffer, 1, &back);
        VkMemoryBarrier host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                             &host, 0, NULL, 0, NULL);
        if ((r = vkEndCommandBuffer(cmd)) != VK_SUCCESS && !failed)
            failed = fail("vkEndCommandBuffer", r);
    }
    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
    if (!failed && (r = vkQueueSubmit(a->queue, 1, &submit, a->fence)) != VK_SUCCESS)
        failed = fail("vkQueueSubmit", r);
    if (!failed &&
        (r = vkWaitForFences(a->device, 1, &a->fence, VK_TRUE, UINT64_MAX)) != VK_SUCCESS)
        failed = fail("vkWaitForFences", r);
    vkFreeCommandBuffers(a->device, a->pool, 1, &cmd);
    return failed;
}

/* Checks the read-back C against a host loop: A * B + 0.5 * 2. */
static int check(const app *a)
{
    const float *ha = a->mapped + off_a / 4, *hb = a->mapped + off_b / 4,
                *c = a->mapped + off_back / 4;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = 0;
            for (int k = 0; k < K; k++)
                want += ha[i * K + k] * hb[k * N + j];
            want += 1.0f;
            if (c[i * N + j] != want) {
                fprintf(stderr, "vulkan_app: C(%d, %d) = %g, the host loop gives %g\n", i, j,
                        c[i * N + j], want);
                return 1;
            }
        }
    return 0;
}

/* onegpu on the application's device: wraps A, B and C, records the GEMM
 * through app_run, and frees what it made. */
static int with_onegpu(app *a)
{
    og_vulkan_device dev = {.instance = a->instance,
                            .api_version = VK_API_VERSION_1_2,
                            .physical_device = a->physical,
                            .device = a->device,
                            .device_info = &a->device_info,
                            .queue = a->queue,
                            .queue_family = a->family};
    og_context *ctx;
    if (og_context_create(&(og_context_desc){.adopt = &dev}, &ctx) != OG_OK) {
        fprintf(stderr, "vulkan_app: %s\n", og_last_error());
        return 1;
    }
    /* The buffer's usage as created: storage for the kernels, transfer for
     * og_buffer_write and og_buffer_read (not used here). */
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    og_buffer *ba = NULL, *bb = NULL, *bc = NULL;
    og_gemm *gemm = NULL;
    og_status st = og_buffer_wrap(ctx, a->buffer, off_a, 4 * M * K, usage, &ba);
    if (st == OG_OK)
        st = og_buffer_wrap(ctx, a->buffer, off_b, 4 * K * N, usage, &bb);
    if (st == OG_OK)
        st = og_buffer_wrap(ctx, a->buffer, off_c, 4 * M * N, usage, &bc);
    if (st == OG_OK)
        st = og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &gemm);
    if (st != OG_OK)
        fprintf(stderr, "vulkan_app: %s\n", og_context_last_error(ctx));
    og_gemm_args args = {.m = M,
                         .n = N,
                         .k = K,
                         .alpha = 1,
                         .beta = 0.5f,
                         .a = ba,
                         .b = bb,
                         .c = bc,
                         .lda = K,
                         .ldb = N,
                         .ldc = N};
    int failed = st != OG_OK || app_run(a, ctx, gemm, &args);
    og_gemm_destroy(gemm);
    og_buffer_destroy(bc);
    og_buffer_destroy(bb);
    og_buffer_destroy(ba);
    og_context_destroy(ctx);
    return failed;
}

/* Vulkan after onegpu: the application destroys what it made. */
static void app_destroy(app *a)
{
    if (a->device) {
        vkDeviceWaitIdle(a->device);
        vkDestroyFence(a->device, a->fence, NULL);
        vkDestroyCommandPool(a->device, a->pool, NULL);
        vkDestroyBuffer(a->device, a->buffer, NULL);
        vkFreeMemory(a->device, a->memory, NULL); /* unmapped with it */
        vkDestroyDevice(a->device, NULL);
    }
    if (a->instance)
        vkDestroyInstance(a->instance, NULL);
}

int main(void)
{
    app a = {0};
    int failed = app_create(&a) || app_buffer_create(&a) || with_onegpu(&a) || check(&a);
    if (!failed) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(a.physical, &p);
        printf("vulkan_app: %dx%dx%d float32 between the application's Vulkan calls on %s "
               "matches the host loop\n",
               M, N, K, p.deviceName);
    }
    app_destroy(&a);
    return failed;
}
