/* The Vulkan context: device choice by index or name (OG_DEVICE), the
 * validation-layer counter the other tests rely on, several contexts at once,
 * og_gemm_describe, the descriptor-set cache, the allocator hook and the
 * kernels kept on disk. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"

static og_context *create(const og_context_desc *desc)
{
    og_context *ctx = NULL;
    og_status st = og_context_create(desc, &ctx);
    cr_assert_eq(st, OG_OK, "og_context_create: %s", og_last_error());
    return ctx;
}

Test(context, device_by_index_and_name)
{
    og_context *first = create(&(og_context_desc){.device = "0"});
    char name[256], upper[8] = {0};
    snprintf(name, sizeof name, "%s", og_context_device_name(first));
    close_context(first);
    /* A case-insensitive substring of the name picks the same device. */
    for (size_t i = 0; i + 1 < sizeof upper && name[i]; i++)
        upper[i] = (char)toupper((unsigned char)name[i]);
    og_context *by_name = create(&(og_context_desc){.device = upper});
    cr_expect_str_eq(og_context_device_name(by_name), name);
    close_context(by_name);
}

/* The limits the drop-in BLAS tiles by: the device's, as Vulkan reports them. */
Test(context, device_limits_are_the_devices)
{
    og_context *ctx = open_context();
    og_device_limits lim;
    og_context_device_limits(ctx, &lim);
    cr_expect_eq(lim.max_binding_bytes, ctx->limits.max_storage_range);
    cr_expect_gt(lim.max_buffer_bytes, 0);
    cr_expect_geq(lim.max_buffer_bytes, lim.max_binding_bytes > (1u << 30) ? 1u << 30 : 0);
    close_context(ctx);
}

Test(context, unknown_device_is_an_error)
{
    const char *wanted[] = {"no-such-device-xyz", "99"};
    for (size_t i = 0; i < 2; i++) {
        og_context *ctx = (og_context *)1;
        og_status st = og_context_create(&(og_context_desc){.device = wanted[i]}, &ctx);
        cr_expect_eq(st, OG_ERROR_NOT_FOUND, "OG_DEVICE=%s", wanted[i]);
        cr_expect_null(ctx);
        cr_expect(strstr(og_last_error(), wanted[i]) != NULL, "message: %s", og_last_error());
    }
}

/* Host memory for the buffer test below leaves to the device's end: taken
 * from a static arena and never freed, so the driver's object stays
 * reachable (LeakSanitizer reports no leak for what the test leaves on
 * purpose). */
static unsigned char left_arena[1 << 14] __attribute__((aligned(64)));
static size_t left_used;

static void *VKAPI_PTR left_alloc(void *user, size_t size, size_t align, VkSystemAllocationScope s)
{
    (void)user;
    (void)s;
    size_t at = (left_used + align - 1) / align * align;
    if (at + size > sizeof left_arena)
        return NULL;
    left_used = at + size;
    return left_arena + at;
}

static void *VKAPI_PTR left_realloc(void *user, void *old, size_t size, size_t align,
                                    VkSystemAllocationScope s)
{
    (void)user, (void)old, (void)size, (void)align, (void)s;
    return NULL; /* a buffer's creation never reallocates */
}

static void VKAPI_PTR left_free(void *user, void *memory)
{
    (void)user, (void)memory;
}

/* The counters behind every test's "no validation errors" check are live: a
 * buffer of size 0 breaks a valid-usage rule and the layer reports it, on
 * the context and in the process's total. */
Test(context, validation_layer_counts_errors)
{
    og_context *ctx = create(&(og_context_desc){.validation = 1});
    uint32_t total = og_validation_errors_total();
    cr_assert_eq(og_context_validation_errors(ctx), 0);
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = 0,
                               .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    VkBuffer buf = VK_NULL_HANDLE;
    if (ctx->vk.vkCreateBuffer(ctx->device, &info, NULL, &buf) == VK_SUCCESS)
        ctx->vk.vkDestroyBuffer(ctx->device, buf, NULL);
    cr_expect_gt(og_context_validation_errors(ctx), 0);
    cr_expect_eq(og_validation_errors_total() - total, og_context_validation_errors(ctx));
    /* A buffer left to og_context_destroy is reported as the device goes:
     * the total counts it (the context's own count is gone with it). */
    info.size = 4;
    const VkAllocationCallbacks arena = {
        .pfnAllocation = left_alloc, .pfnReallocation = left_realloc, .pfnFree = left_free};
    cr_assert_eq(ctx->vk.vkCreateBuffer(ctx->device, &info, &arena, &buf), VK_SUCCESS);
    total = og_validation_errors_total();
    og_context_destroy(ctx);
    cr_expect_gt(og_validation_errors_total(), total, "the buffer left behind went unreported");
}

/* Each context has its own device and function table. */
Test(context, two_contexts_at_once)
{
    og_context *ctx[2] = {create(NULL), create(NULL)};
    const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    for (int i = 0; i < 2; i++) {
        og_gemm_args g = {.m = 2, .n = 2, .k = 2, .alpha = 1, .lda = 2, .ldb = 2, .ldc = 2};
        og_gemm *gemm;
        float c[4] = {0};
        cr_assert_eq(og_buffer_create(ctx[i], sizeof a, &g.a), OG_OK);
        cr_assert_eq(og_buffer_create(ctx[i], sizeof b, &g.b), OG_OK);
        cr_assert_eq(og_buffer_create(ctx[i], sizeof c, &g.c), OG_OK);
        og_buffer_write(g.a, 0, a, sizeof a);
        og_buffer_write(g.b, 0, b, sizeof b);
        cr_assert_eq(og_gemm_create(ctx[i], OG_F32, OG_MODE_FAST, &gemm), OG_OK);
        cr_assert_eq(og_gemm_run(gemm, &g), OG_OK, "%s", og_context_last_error(ctx[i]));
        og_buffer_read(g.c, 0, c, sizeof c);
        cr_expect(c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50, "context %d: %g %g %g %g",
                  i, c[0], c[1], c[2], c[3]);
        og_gemm_destroy(gemm);
        og_buffer_destroy(g.a);
        og_buffer_destroy(g.b);
        og_buffer_destroy(g.c);
    }
    close_context(ctx[0]);
    close_context(ctx[1]);
}

Test(context, describe_without_database)
{
    og_context *ctx = create(&(og_context_desc){.tuning_db = "/nonexistent/onegpu.db"});
    og_gemm *gemm;
    char text[256];
    og_gemm_args g = {.m = 100, .n = 100, .k = 100, .alpha = 1};
    cr_assert_eq(og_gemm_create(ctx, OG_F16, OG_MODE_FAST, &gemm), OG_OK);
    cr_assert_eq(og_gemm_describe(gemm, &g, text, sizeof text), OG_OK);
    cr_expect(strstr(text, "gemm_tile bm=64,bn=64,bk=16,tm=4,tn=4") == text, "%s", text);
    cr_expect(strstr(text, "(default)") != NULL, "%s", text);
    og_gemm_destroy(gemm);
    close_context(ctx);
}

/* The descriptor-set cache: 70 distinct (A, B, C) triples through one GEMM
 * object, buffers destroyed and made again (their sets retired and
 * rewritten for the new ones; a new buffer may get the old handle), and
 * every result right. */
Test(context, binding_cache_wraps_and_forgets_destroyed_buffers)
{
    og_context *ctx = create(NULL);
    og_gemm *gemm;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &gemm), OG_OK);
    for (int i = 0; i < 70; i++) {
        const float a[2] = {1, (float)i}, b[2] = {2, 3};
        float c = -1;
        og_gemm_args g = {.m = 1, .n = 1, .k = 2, .alpha = 1, .lda = 2, .ldb = 1, .ldc = 1};
        cr_assert_eq(og_buffer_create(ctx, sizeof a, &g.a), OG_OK);
        cr_assert_eq(og_buffer_create(ctx, sizeof b, &g.b), OG_OK);
        cr_assert_eq(og_buffer_create(ctx, sizeof c, &g.c), OG_OK);
        og_buffer_write(g.a, 0, a, sizeof a);
        og_buffer_write(g.b, 0, b, sizeof b);
        cr_assert_eq(og_gemm_run(gemm, &g), OG_OK, "%s", og_context_last_error(ctx));
        og_buffer_read(g.c, 0, &c, sizeof c);
        cr_expect_eq(c, 2.0f + 3.0f * (float)i, "triple %d: %g", i, c);
        og_buffer_destroy(g.a);
        og_buffer_destroy(g.b);
        og_buffer_destroy(g.c);
    }
    og_gemm_destroy(gemm);
    close_context(ctx);
}

/* ---- the runtime's host memory goes through the caller's allocator ---- */

typedef struct counting {
    size_t calls; /* alloc and realloc calls */
    size_t live;  /* blocks not yet freed */
} counting;

static void *count_alloc(void *user, size_t bytes)
{
    counting *c = user;
    c->calls++;
    c->live++;
    return malloc(bytes);
}

static void *count_realloc(void *user, void *ptr, size_t bytes)
{
    counting *c = user;
    c->calls++;
    c->live += ptr == NULL;
    return realloc(ptr, bytes);
}

static void count_free(void *user, void *ptr)
{
    counting *c = user;
    c->live -= ptr != NULL;
    free(ptr);
}

/* Records into a command buffer of the test's own and submits it. */
static void record_and_submit(og_context *ctx, VkCommandBuffer cmd, VkFence fence, og_gemm *g,
                              const og_gemm_args *args, size_t *allocations, counting *c)
{
    VkDevice dev = og_context_vk_device(ctx);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cr_assert_eq(ctx->vk.vkBeginCommandBuffer(cmd, &begin), VK_SUCCESS);
    size_t before = c->calls;
    cr_assert_eq(og_gemm_encode(g, cmd, args), OG_OK, "%s", og_context_last_error(ctx));
    *allocations = c->calls - before;
    cr_assert_eq(ctx->vk.vkEndCommandBuffer(cmd), VK_SUCCESS);
    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
    cr_assert_eq(ctx->vk.vkQueueSubmit(og_context_vk_queue(ctx), 1, &submit, fence), VK_SUCCESS);
    cr_assert_eq(ctx->vk.vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    cr_assert_eq(ctx->vk.vkResetFences(dev, 1, &fence), VK_SUCCESS);
}

/* Recording a call whose descriptor set, pipeline, selection and scratch are
 * cached allocates nothing (reference design, "Limits and errors"), on the
 * tile, split-k and few-rows paths; everything is freed at the end. */
Test(context, cached_recording_allocates_nothing)
{
    counting c = {0};
    og_allocator alloc = {&c, count_alloc, count_realloc, count_free};
    og_context *ctx = create(&(og_context_desc){.allocator = &alloc});
    cr_expect_gt(c.calls, 0, "the context allocated nothing through the hook");
    VkDevice dev = og_context_vk_device(ctx);
    VkCommandPoolCreateInfo pool_info = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                         .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                         .queueFamilyIndex = og_context_queue_family(ctx)};
    VkCommandPool pool;
    cr_assert_eq(ctx->vk.vkCreateCommandPool(dev, &pool_info, NULL, &pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo cb = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBuffer cmd;
    cr_assert_eq(ctx->vk.vkAllocateCommandBuffers(dev, &cb, &cmd), VK_SUCCESS);
    VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    cr_assert_eq(ctx->vk.vkCreateFence(dev, &fence_info, NULL, &fence), VK_SUCCESS);

    const struct {
        const char *name;
        int64_t m, n, k;
    } paths[] = {{"tile", 70, 70, 40}, {"split-k", 70, 70, 512}, {"few rows", 2, 70, 512}};
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    for (size_t i = 0; i < 3; i++) {
        og_problem *pr;
        cr_assert_eq(
            og_problem_create(ctx, OG_F32, 0, 0, paths[i].m, paths[i].n, paths[i].k, 1, 3, &pr),
            OG_OK);
        size_t first, second;
        record_and_submit(ctx, cmd, fence, g, &pr->args, &first, &c);
        record_and_submit(ctx, cmd, fence, g, &pr->args, &second, &c);
        /* The first call of the object fills its caches: the hook sees that. */
        if (i == 0)
            cr_expect_gt(first, 0, "%s: the first recording allocated nothing", paths[i].name);
        cr_expect_eq(second, 0, "%s: a cached recording allocated %zu times", paths[i].name,
                     second);
        og_problem_destroy(pr);
    }
    og_gemm_destroy(g);
    ctx->vk.vkDestroyFence(dev, fence, NULL);
    ctx->vk.vkDestroyCommandPool(dev, pool, NULL);
    close_context(ctx);
    cr_expect_eq(c.live, 0, "%zu blocks never freed", c.live);
}

/* ---- compiled kernels on disk ---- */

/* A 1 x 1 x 2 GEMM on a fresh context: 1 * 3 + 2 * 4. */
static float small_gemm(void)
{
    og_context *ctx = create(NULL);
    const float a[2] = {1, 2}, b[2] = {3, 4};
    float c = run_dot(ctx, OG_MODE_DETERMINISTIC, a, b, 2);
    close_context(ctx);
    return c;
}

/* The .spv files under dir/onegpu/spirv: how many, and the path of one. */
static int spirv_files(const char *dir, char *one, size_t len)
{
    char sub[512];
    snprintf(sub, sizeof sub, "%s/onegpu/spirv", dir);
    DIR *d = opendir(sub);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, ".spv")) {
            n++;
            snprintf(one, len, "%s/%s", sub, e->d_name);
        }
    if (d)
        closedir(d);
    return n;
}

/* A kernel compiled once is kept under XDG_CACHE_HOME and used by the next
 * context; a damaged file is compiled again; OG_SPIRV_CACHE=0 keeps nothing. */
Test(context, spirv_cache_on_disk)
{
    char dir[] = "/tmp/og_cache_XXXXXX", file[600] = "", cmd[600];
    cr_assert_not_null(mkdtemp(dir));
    setenv("XDG_CACHE_HOME", dir, 1);
    cr_expect_eq(small_gemm(), 11.0f);
    cr_assert_eq(spirv_files(dir, file, sizeof file), 1, "one kernel, one file");
    struct stat st;
    cr_assert_eq(stat(file, &st), 0);
    time_t written = st.st_mtime;
    cr_expect_eq(small_gemm(), 11.0f);
    cr_expect_eq(stat(file, &st), 0);
    cr_expect_eq(st.st_mtime, written, "a cached kernel was written again");
    /* Damage one byte of the module: the checksum catches it. */
    FILE *f = fopen(file, "r+b");
    cr_assert_not_null(f);
    fseek(f, 100, SEEK_SET);
    fputc(0x5a ^ fgetc(f), f);
    fclose(f);
    cr_expect_eq(small_gemm(), 11.0f, "a damaged cache file broke the GEMM");
    snprintf(cmd, sizeof cmd, "rm -rf '%s/onegpu'", dir);
    cr_assert_eq(system(cmd), 0);
    setenv("OG_SPIRV_CACHE", "0", 1);
    cr_expect_eq(small_gemm(), 11.0f);
    cr_expect_eq(spirv_files(dir, file, sizeof file), 0, "OG_SPIRV_CACHE=0 wrote a file");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The cache key covers the template engine (and the generator and the
 * compiler): the same kernel expanded by an engine whose text differs only
 * by a comment is compiled again into a file of its own. */
Test(context, spirv_cache_key_covers_the_engine)
{
    char dir[] = "/tmp/og_cache_XXXXXX", file[600] = "", cmd[1400];
    cr_assert_not_null(mkdtemp(dir));
    setenv("XDG_CACHE_HOME", dir, 1);
    uint64_t builtin = og_generator_hash();
    cr_expect_eq(small_gemm(), 11.0f);
    cr_assert_eq(spirv_files(dir, file, sizeof file), 1, "one kernel, one file");
    /* OG_TEMPLATE_DIR/engine.lua: the source's engine and a comment. */
    snprintf(cmd, sizeof cmd,
             "cp '%s' '%s/engine.lua' && echo '-- another engine' >> '%s/engine.lua'",
             OG_ENGINE_LUA, dir, dir);
    cr_assert_eq(system(cmd), 0);
    setenv("OG_TEMPLATE_DIR", dir, 1);
    cr_expect_neq(og_generator_hash(), builtin);
    cr_expect_eq(small_gemm(), 11.0f);
    cr_expect_eq(spirv_files(dir, file, sizeof file), 2,
                 "the other engine's kernel was not compiled");
    unsetenv("OG_TEMPLATE_DIR");
    cr_expect_eq(og_generator_hash(), builtin);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
