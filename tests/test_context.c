/* The Vulkan context: device choice by index or name (OG_DEVICE), the
 * validation-layer counter the other tests rely on, several contexts at once,
 * and og_gemm_describe. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "og_internal.h"

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
    og_context_destroy(first);
    /* A case-insensitive substring of the name picks the same device. */
    for (size_t i = 0; i + 1 < sizeof upper && name[i]; i++)
        upper[i] = (char)toupper((unsigned char)name[i]);
    og_context *by_name = create(&(og_context_desc){.device = upper});
    cr_expect_str_eq(og_context_device_name(by_name), name);
    og_context_destroy(by_name);
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

/* The counter behind every test's "no validation errors" check is live: a
 * buffer of size 0 breaks a valid-usage rule and the layer reports it. */
Test(context, validation_layer_counts_errors)
{
    og_context *ctx = create(&(og_context_desc){.validation = 1});
    cr_assert_eq(og_context_validation_errors(ctx), 0);
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = 0,
                               .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    VkBuffer buf = VK_NULL_HANDLE;
    if (ctx->vk.vkCreateBuffer(ctx->device, &info, NULL, &buf) == VK_SUCCESS)
        ctx->vk.vkDestroyBuffer(ctx->device, buf, NULL);
    cr_expect_gt(og_context_validation_errors(ctx), 0);
    og_context_destroy(ctx);
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
    og_context_destroy(ctx[0]);
    og_context_destroy(ctx[1]);
}

Test(context, describe_without_database)
{
    og_context *ctx = create(&(og_context_desc){.tuning_db = "/nonexistent/onegpu.db"});
    og_gemm *gemm;
    char text[256];
    og_gemm_args g = {.m = 100, .n = 100, .k = 100};
    cr_assert_eq(og_gemm_create(ctx, OG_F16, OG_MODE_FAST, &gemm), OG_OK);
    cr_assert_eq(og_gemm_describe(gemm, &g, text, sizeof text), OG_OK);
    cr_expect(strstr(text, "gemm_tile bm=64,bn=64,bk=16,tm=4,tn=4") == text, "%s", text);
    cr_expect(strstr(text, "(default)") != NULL, "%s", text);
    og_gemm_destroy(gemm);
    og_context_destroy(ctx);
}

/* The descriptor-set cache: 70 distinct (A, B, C) triples through one GEMM
 * object (the cache of 64 starts over), buffers destroyed and made again
 * without og_gemm_release_bindings (a new buffer may get the old handle),
 * and every result right. */
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
    cr_expect_eq(og_context_validation_errors(ctx), 0);
    og_gemm_destroy(gemm);
    og_context_destroy(ctx);
}
