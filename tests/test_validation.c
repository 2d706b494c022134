/* Every invalid GEMM call is refused with a message naming the dimension,
 * and nothing is dispatched: through og_gemm_run and og_gemm_encode alike,
 * A, B and C (every byte of their buffers) stay bit-identical. Also the
 * argument checks of og_gemm_create and og_buffer_write/read. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"

/* A valid call that writes C (beta 0.5, so C is read too): M 5, N 6, K 7,
 * batch 2, every leading dimension, offset and stride above its minimum. */
static og_gemm_args base_args(void)
{
    return (og_gemm_args){.m = 5,
                          .n = 6,
                          .k = 7,
                          .batch = 2,
                          .alpha = 1.0f,
                          .beta = 0.5f,
                          .lda = 8,
                          .ldb = 9,
                          .ldc = 10,
                          .a_offset = 1,
                          .b_offset = 2,
                          .c_offset = 3,
                          .stride_a = 41,
                          .stride_b = 64,
                          .stride_c = 47};
}

/* ---- a command buffer of the caller's own ---- */

typedef struct recorder {
    og_context *ctx;
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
} recorder;

static recorder recorder_make(og_context *ctx)
{
    const struct VolkDeviceTable *vk = &ctx->vk;
    VkDevice dev = og_context_vk_device(ctx);
    recorder r = {.ctx = ctx};
    VkCommandPoolCreateInfo pool_info = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                         .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                         .queueFamilyIndex = og_context_queue_family(ctx)};
    cr_assert_eq(vk->vkCreateCommandPool(dev, &pool_info, NULL, &r.pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                         .commandPool = r.pool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                         .commandBufferCount = 1};
    cr_assert_eq(vk->vkAllocateCommandBuffers(dev, &alloc, &r.cmd), VK_SUCCESS);
    VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    cr_assert_eq(vk->vkCreateFence(dev, &fence_info, NULL, &r.fence), VK_SUCCESS);
    return r;
}

static void recorder_free(recorder *r)
{
    VkDevice dev = og_context_vk_device(r->ctx);
    r->ctx->vk.vkDestroyFence(dev, r->fence, NULL);
    r->ctx->vk.vkDestroyCommandPool(dev, r->pool, NULL);
}

/* Begins the command buffer, encodes args, ends, submits and waits; the
 * command buffer must stay usable whatever the encode returned. */
static og_status encode_submit(recorder *r, og_gemm *g, const og_gemm_args *args)
{
    const struct VolkDeviceTable *vk = &r->ctx->vk;
    VkDevice dev = og_context_vk_device(r->ctx);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    cr_assert_eq(vk->vkBeginCommandBuffer(r->cmd, &begin), VK_SUCCESS);
    og_status st = og_gemm_encode(g, r->cmd, args);
    cr_assert_eq(vk->vkEndCommandBuffer(r->cmd), VK_SUCCESS);
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &r->cmd};
    cr_assert_eq(vk->vkQueueSubmit(og_context_vk_queue(r->ctx), 1, &submit, r->fence), VK_SUCCESS);
    cr_assert_eq(vk->vkWaitForFences(dev, 1, &r->fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    cr_assert_eq(vk->vkResetFences(dev, 1, &r->fence), VK_SUCCESS);
    return st;
}

/* ---- operands and their snapshots ---- */

/* A, B and C buffers of the given element counts, filled with random bits. */
typedef struct operands {
    og_buffer *buf[3];
    void *before[3]; /* contents after filling */
    uint64_t bytes[3];
} operands;

static operands operands_make(og_context *ctx, og_dtype t, const size_t elems[3], uint64_t seed)
{
    operands o = {0};
    for (int i = 0; i < 3; i++) {
        og_dtype ti = i < 2 ? t : OG_F32;
        o.bytes[i] = elems[i] * og_dtype_bytes(ti);
        o.before[i] = malloc(o.bytes[i] + 1);
        cr_assert_not_null(o.before[i]);
        og_fill_random(ti, o.before[i], elems[i], &seed);
        cr_assert_eq(og_buffer_create(ctx, o.bytes[i], &o.buf[i]), OG_OK, "og_buffer_create: %s",
                     og_context_last_error(ctx));
        cr_assert_eq(og_buffer_write(o.buf[i], 0, o.before[i], o.bytes[i]), OG_OK);
    }
    return o;
}

static void operands_free(operands *o)
{
    for (int i = 0; i < 3; i++) {
        og_buffer_destroy(o->buf[i]);
        free(o->before[i]);
    }
}

/* Whether any byte of the three buffers differs from the snapshot. */
static int operands_changed(const operands *o)
{
    int changed = 0;
    for (int i = 0; i < 3; i++) {
        void *now = malloc(o->bytes[i] + 1);
        cr_assert_not_null(now);
        cr_assert_eq(og_buffer_read(o->buf[i], 0, now, o->bytes[i]), OG_OK);
        changed |= memcmp(now, o->before[i], o->bytes[i]) != 0;
        free(now);
    }
    return changed;
}

/* The call must fail with `expect` and a message "gemm: <dim> ...", through
 * og_gemm_run and through og_gemm_encode, and leave every buffer as it was. */
static void expect_refused(og_gemm *g, recorder *r, const og_gemm_args *args, const operands *o,
                           og_status expect, const char *dim, const char *what)
{
    char needle[64];
    snprintf(needle, sizeof needle, "gemm: %s ", dim);
    og_status st = og_gemm_run(g, args);
    const char *msg = og_context_last_error(r->ctx);
    cr_assert_eq(st, expect, "%s: og_gemm_run returned %d, expected %d (%s)", what, st, expect,
                 msg);
    cr_assert_not_null(strstr(msg, needle), "%s: og_gemm_run message \"%s\" lacks \"%s\"", what,
                       msg, needle);
    cr_assert_not(operands_changed(o), "%s: og_gemm_run changed a buffer", what);

    st = encode_submit(r, g, args);
    msg = og_context_last_error(r->ctx);
    cr_assert_eq(st, expect, "%s: og_gemm_encode returned %d, expected %d (%s)", what, st, expect,
                 msg);
    cr_assert_not_null(strstr(msg, needle), "%s: og_gemm_encode message \"%s\" lacks \"%s\"", what,
                       msg, needle);
    cr_assert_not(operands_changed(o), "%s: og_gemm_encode changed a buffer", what);
}

/* ---- the table of invalid calls ---- */

/* One field of og_gemm_args changed from base_args(). */
typedef struct field_set {
    char name[12];
    size_t offset; /* offsetof an int64_t field; 0 (trans_a, an int) ends the list */
    int64_t value;
} field_set;

#define SET(field, v)                                                                              \
    {                                                                                              \
#field, offsetof(og_gemm_args, field), (v)                                                 \
    }
#define NONE                                                                                       \
    {                                                                                              \
        {                                                                                          \
            "", 0, 0                                                                               \
        }                                                                                          \
    }
#define TWO_32 ((int64_t)1 << 32)

/* Plain data only: Criterion copies parameters into the test's process. */
typedef struct vcase {
    char dim[16]; /* what the message must name */
    int trans_a, trans_b;
    field_set set[2];
    char shrink;  /* 'A', 'B' or 'C': that buffer one element short of what the call needs */
    char null_op; /* 'A', 'B' or 'C': that operand is NULL */
} vcase;

static const vcase cases[] = {
    /* Negative values. */
    {"M", 0, 0, {SET(m, -1)}, 0, 0},
    {"N", 0, 0, {SET(n, -1)}, 0, 0},
    {"K", 0, 0, {SET(k, -1)}, 0, 0},
    {"batch", 0, 0, {SET(batch, -1)}, 0, 0},
    {"a_offset", 0, 0, {SET(a_offset, -1)}, 0, 0},
    {"b_offset", 0, 0, {SET(b_offset, -1)}, 0, 0},
    {"c_offset", 0, 0, {SET(c_offset, -1)}, 0, 0},
    {"stride_a", 0, 0, {SET(stride_a, -1)}, 0, 0},
    {"stride_b", 0, 0, {SET(stride_b, -1)}, 0, 0},
    {"stride_c", 0, 0, {SET(stride_c, -1)}, 0, 0},
    {"lda", 0, 0, {SET(lda, -1)}, 0, 0},
    {"ldb", 0, 0, {SET(ldb, -1)}, 0, 0},
    {"ldc", 0, 0, {SET(ldc, -1)}, 0, 0},
    /* Values of 2^32 and more, beyond the kernel's 32-bit indexing. */
    {"M", 0, 0, {SET(m, TWO_32)}, 0, 0},
    {"N", 0, 0, {SET(n, TWO_32)}, 0, 0},
    {"K", 0, 0, {SET(k, TWO_32)}, 0, 0},
    {"batch", 0, 0, {SET(batch, TWO_32)}, 0, 0},
    /* Offsets are 64-bit (bindings and addresses start near the operand):
     * 2^32 is refused for the buffer's size, INT64_MAX as too large. */
    {"A", 0, 0, {SET(a_offset, TWO_32)}, 0, 0},
    {"B", 0, 0, {SET(b_offset, INT64_MAX)}, 0, 0},
    {"C", 0, 0, {SET(c_offset, TWO_32)}, 0, 0},
    {"stride_a", 0, 0, {SET(stride_a, TWO_32)}, 0, 0},
    {"stride_b", 0, 0, {SET(stride_b, TWO_32 + 1)}, 0, 0},
    {"stride_c", 0, 0, {SET(stride_c, TWO_32)}, 0, 0},
    {"lda", 0, 0, {SET(lda, TWO_32)}, 0, 0},
    {"ldb", 0, 0, {SET(ldb, TWO_32)}, 0, 0},
    {"ldc", 0, 0, {SET(ldc, TWO_32)}, 0, 0},
    /* Each value fits in 32 bits but the operand's last element does not. */
    {"A", 0, 0, {SET(a_offset, TWO_32 - 1)}, 0, 0},
    {"B", 0, 0, {SET(ldb, (int64_t)1 << 30)}, 0, 0},
    {"C", 0, 0, {SET(stride_c, TWO_32 - 1)}, 0, 0},
    /* Leading dimensions below the stored row length. */
    {"lda", 0, 0, {SET(lda, 6)}, 0, 0}, /* < K = 7 */
    {"lda", 1, 0, {SET(lda, 4)}, 0, 0}, /* < M = 5 */
    {"ldb", 0, 0, {SET(ldb, 5)}, 0, 0}, /* < N = 6 */
    {"ldb", 0, 1, {SET(ldb, 6)}, 0, 0}, /* < K = 7 */
    {"ldc", 0, 0, {SET(ldc, 5)}, 0, 0}, /* < N = 6 */
    /* Buffers one element short, with the shortfall due to each term. */
    {"A", 0, 0, NONE, 'A', 0},
    {"B", 0, 0, NONE, 'B', 0},
    {"C", 0, 0, NONE, 'C', 0},
    {"A", 1, 0, NONE, 'A', 0},
    {"B", 0, 1, NONE, 'B', 0},
    {"A", 0, 0, {SET(a_offset, 30)}, 'A', 0},
    {"B", 0, 0, {SET(b_offset, 40)}, 'B', 0},
    {"C", 0, 0, {SET(c_offset, 50)}, 'C', 0},
    {"A", 0, 0, {SET(stride_a, 60)}, 'A', 0},
    {"B", 0, 0, {SET(stride_b, 80)}, 'B', 0},
    {"C", 0, 0, {SET(stride_c, 70)}, 'C', 0},
    {"A", 0, 0, {SET(batch, 3)}, 'A', 0},
    {"B", 0, 0, {SET(batch, 3)}, 'B', 0},
    {"C", 0, 0, {SET(batch, 3)}, 'C', 0},
    {"B", 0, 0, {SET(stride_b, 0)}, 'B', 0}, /* one shared B */
    {"C", 0, 0, {SET(batch, 0)}, 'C', 0},    /* batch 0 is one product */
    /* Outputs of the batch overlapping: stride_c below (M-1)*ldc + N = 46. */
    {"stride_c", 0, 0, {SET(stride_c, 45)}, 0, 0},
    {"stride_c", 0, 0, {SET(stride_c, 0)}, 0, 0},
    /* Absent operands. */
    {"A", 0, 0, NONE, 0, 'A'},
    {"B", 0, 0, NONE, 0, 'B'},
    {"C", 0, 0, NONE, 0, 'C'},
    {"C", 0, 0, {SET(k, 0)}, 0, 'C'}, /* K = 0 excuses A and B, never C */
};

static og_gemm_args case_args(const vcase *c)
{
    og_gemm_args args = base_args();
    args.trans_a = c->trans_a;
    args.trans_b = c->trans_b;
    for (size_t i = 0; i < 2 && c->set[i].offset; i++)
        memcpy((char *)&args + c->set[i].offset, &c->set[i].value, sizeof(int64_t));
    return args;
}

static void case_name(const vcase *c, char *buf, size_t len)
{
    int n =
        snprintf(buf, len, "%s%s%s", c->dim, c->trans_a ? " A^T" : "", c->trans_b ? " B^T" : "");
    for (size_t i = 0; i < 2 && c->set[i].offset; i++)
        n += snprintf(buf + n, len - (size_t)n, " %s=%" PRId64, c->set[i].name, c->set[i].value);
    if (c->shrink)
        n += snprintf(buf + n, len - (size_t)n, " %c one short", c->shrink);
    if (c->null_op)
        snprintf(buf + n, len - (size_t)n, " %c NULL", c->null_op);
}

ParameterizedTestParameters(validation, refused)
{
    return cr_make_param_array(vcase, (vcase *)cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(vcase *c, validation, refused)
{
    og_context *ctx = open_context();
    recorder r = recorder_make(ctx);
    og_gemm_args args = case_args(c);
    char what[160];
    case_name(c, what, sizeof what);

    /* Buffers as this call needs, the shrunk one one element short. Calls
     * with values that make no extent (negative, huge) get what base_args()
     * needs. */
    og_gemm_args sized = c->shrink ? args : base_args();
    size_t elems[3];
    og_gemm_extents(&sized, &elems[0], &elems[1], &elems[2]);
    if (c->shrink)
        elems[c->shrink - 'A']--;
    for (og_dtype t = OG_F32; t <= OG_BF16; t++) {
        og_gemm *g = NULL;
        cr_assert_eq(og_gemm_create(ctx, t, OG_MODE_FAST, &g), OG_OK);
        operands o = operands_make(ctx, t, elems, 10 + (uint64_t)t);
        args.a = c->null_op == 'A' ? NULL : o.buf[0];
        args.b = c->null_op == 'B' ? NULL : o.buf[1];
        args.c = c->null_op == 'C' ? NULL : o.buf[2];
        expect_refused(g, &r, &args, &o, OG_ERROR_INVALID_ARGUMENT, c->dim, what);
        operands_free(&o);
        og_gemm_destroy(g);
    }
    recorder_free(&r);
    close_context(ctx);
}

/* The base call is valid and writes C, through both paths: so a buffer left
 * unchanged by a refused call means the refusal, not a no-op call. */
Test(validation, base_call_writes_c)
{
    og_context *ctx = open_context();
    recorder r = recorder_make(ctx);
    og_gemm_args args = base_args();
    size_t elems[3];
    og_gemm_extents(&args, &elems[0], &elems[1], &elems[2]);
    og_gemm *g = NULL;
    cr_assert_eq(og_gemm_create(ctx, OG_F16, OG_MODE_FAST, &g), OG_OK);
    for (int encode = 0; encode < 2; encode++) {
        operands o = operands_make(ctx, OG_F16, elems, 20 + (uint64_t)encode);
        args.a = o.buf[0];
        args.b = o.buf[1];
        args.c = o.buf[2];
        og_status st = encode ? encode_submit(&r, g, &args) : og_gemm_run(g, &args);
        cr_assert_eq(st, OG_OK, "%s: %s", encode ? "og_gemm_encode" : "og_gemm_run",
                     og_context_last_error(ctx));
        cr_assert(operands_changed(&o), "the valid call left C unchanged");
        operands_free(&o);
    }
    og_gemm_destroy(g);
    recorder_free(&r);
    close_context(ctx);
}

/* An operand whose own extent reaches past maxStorageBufferRange, which
 * one descriptor cannot bind (a leading dimension of the range's elements):
 * C is refused as unsupported; A and B, which the kernels read by device
 * address where the device has bufferDeviceAddress, are then refused only
 * because their buffers are too small (unsupported without it). An offset of
 * that size alone passes the range: each operand's binding starts near its
 * first element, so only the buffer's size refuses it. No such buffer is
 * needed. */
Test(validation, beyond_storage_range)
{
    og_context *ctx = open_context();
    uint64_t range_elems = ctx->limits.max_storage_range / sizeof(float);
    if (range_elems >= UINT32_MAX - 100) {
        close_context(ctx);
        cr_skip_test("maxStorageBufferRange covers all 2^32 float32 elements");
    }
    recorder r = recorder_make(ctx);
    og_gemm_args base = base_args();
    base.batch = 1;
    size_t elems[3];
    og_gemm_extents(&base, &elems[0], &elems[1], &elems[2]);
    static const char dims[] = "ABC";
    for (int by_offset = 0; by_offset <= 1; by_offset++) {
        for (int i = 0; i < 3; i++) {
            og_gemm *g = NULL;
            cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
            operands o = operands_make(ctx, OG_F32, elems, 30 + (uint64_t)i);
            og_gemm_args args = base;
            args.a = o.buf[0];
            args.b = o.buf[1];
            args.c = o.buf[2];
            int64_t *field = by_offset ? (i == 0 ? &args.a_offset
                                          : i == 1 ? &args.b_offset
                                                   : &args.c_offset)
                                       : (i == 0 ? &args.lda : i == 1 ? &args.ldb : &args.ldc);
            *field = (int64_t)range_elems;
            char dim[2] = {dims[i], 0};
            char what[64];
            snprintf(what, sizeof what, "%s %s %" PRIu64, dim, by_offset ? "offset" : "ld",
                     range_elems);
            int past = !by_offset && !(i < 2 && ctx->limits.buffer_address);
            expect_refused(g, &r, &args, &o, past ? OG_ERROR_UNSUPPORTED : OG_ERROR_INVALID_ARGUMENT,
                           dim, what);
            cr_assert_not_null(strstr(og_context_last_error(ctx),
                                      past ? "maxStorageBufferRange" : "but its buffer holds"),
                               "%s: %s", what, og_context_last_error(ctx));
            operands_free(&o);
            og_gemm_destroy(g);
        }
    }
    recorder_free(&r);
    close_context(ctx);
}

/* A batch with more products than maxComputeWorkGroupCount[2] is cut into
 * batch pieces (reference design, "Limits and errors"): every product right. */
Test(validation, batch_beyond_grid_is_cut)
{
    og_context *ctx = open_context();
    uint32_t max_z = ctx->limits.max_count[2];
    if (max_z > (1u << 20)) {
        close_context(ctx);
        cr_skip_test("maxComputeWorkGroupCount[2] = %" PRIu32 " is too large to exceed cheaply",
                     max_z);
    }
    recorder r = recorder_make(ctx);
    /* 1x1x1 products; A and B shared (stride 0), C one element per product. */
    og_gemm_args args = {.m = 1,
                         .n = 1,
                         .k = 1,
                         .batch = (int64_t)max_z + 3,
                         .alpha = 1.0f,
                         .beta = 0.5f,
                         .lda = 1,
                         .ldb = 1,
                         .ldc = 1,
                         .stride_c = 1};
    size_t elems[3] = {1, 1, (size_t)max_z + 3};
    og_gemm *g = NULL;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    operands o = operands_make(ctx, OG_F32, elems, 40);
    args.a = o.buf[0];
    args.b = o.buf[1];
    args.c = o.buf[2];
    cr_assert_eq(encode_submit(&r, g, &args), OG_OK, "%s", og_context_last_error(ctx));
    float *c = malloc(elems[2] * sizeof *c);
    cr_assert_not_null(c);
    og_buffer_read(args.c, 0, c, elems[2] * sizeof *c);
    const float *a = o.before[0], *b = o.before[1], *c0 = o.before[2];
    size_t wrong = 0;
    for (size_t i = 0; i < elems[2]; i++) {
        volatile float prod = a[0] * b[0], old = 0.5f * c0[i];
        wrong += c[i] != prod + old;
    }
    cr_expect_eq(wrong, (size_t)0, "%zu of %zu products wrong", wrong, elems[2]);
    free(c);
    operands_free(&o);
    og_gemm_destroy(g);
    recorder_free(&r);
    close_context(ctx);
}

/* Columns past maxComputeWorkGroupCount[0] tiles cannot be cut: refused as
 * unsupported, naming N (limit lowered for the test). */
Test(validation, columns_beyond_grid)
{
    og_context *ctx = open_context();
    recorder r = recorder_make(ctx);
    og_gemm_args args = base_args();
    args.n = 130; /* three 64-wide tiles */
    args.ldb = args.ldc = 130;
    args.stride_b = 7 * 130;
    args.stride_c = 5 * 130;
    size_t elems[3];
    og_gemm_extents(&args, &elems[0], &elems[1], &elems[2]);
    og_gemm *g = NULL;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    operands o = operands_make(ctx, OG_F32, elems, 41);
    args.a = o.buf[0];
    args.b = o.buf[1];
    args.c = o.buf[2];
    ctx->limits.max_count[0] = 1;
    expect_refused(g, &r, &args, &o, OG_ERROR_UNSUPPORTED, "N", "N past the grid");
    cr_assert_not_null(strstr(og_context_last_error(ctx), "maxComputeWorkGroupCount"));
    operands_free(&o);
    og_gemm_destroy(g);
    recorder_free(&r);
    close_context(ctx);
}

/* ---- og_gemm_create ---- */

Test(validation, gemm_create)
{
    og_context *ctx = open_context();
    static const struct {
        int dtype, mode;
        const char *needle;
    } bad[] = {{3, OG_MODE_FAST, "gemm: input type"},
               {-1, OG_MODE_FAST, "gemm: input type"},
               {OG_F32, 2, "gemm: mode"},
               {OG_BF16, -1, "gemm: mode"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        og_gemm *g = (og_gemm *)(uintptr_t)1; /* not NULL: it must be cleared */
        og_status st = og_gemm_create(ctx, (og_dtype)bad[i].dtype, (og_mode)bad[i].mode, &g);
        cr_assert_eq(st, OG_ERROR_INVALID_ARGUMENT, "dtype %d mode %d: status %d", bad[i].dtype,
                     bad[i].mode, st);
        cr_assert_null(g, "dtype %d mode %d: *out not NULL", bad[i].dtype, bad[i].mode);
        cr_assert_not_null(strstr(og_context_last_error(ctx), bad[i].needle),
                           "message \"%s\" lacks \"%s\"", og_context_last_error(ctx),
                           bad[i].needle);
    }
    close_context(ctx);
}

/* ---- og_buffer_write / og_buffer_read ---- */

Test(validation, buffer_range)
{
    og_context *ctx = open_context();
    og_buffer *buf = NULL;
    cr_assert_eq(og_buffer_create(ctx, 18, &buf), OG_OK);
    cr_assert_eq(og_buffer_size(buf), 18);
    unsigned char fill[18], src[32], dst[32], now[18];
    memset(fill, 0x5a, sizeof fill);
    memset(src, 0xc3, sizeof src);
    cr_assert_eq(og_buffer_write(buf, 0, fill, sizeof fill), OG_OK);

    /* The edges are allowed. */
    cr_assert_eq(og_buffer_write(buf, 18, src, 0), OG_OK);
    cr_assert_eq(og_buffer_read(buf, 10, dst, 8), OG_OK);
    cr_assert_eq(memcmp(dst, fill, 8), 0);

    /* offset + bytes past the end (18 bytes; the allocation is padded to 20,
     * and the padding is not the caller's), or past 2^64. */
    static const uint64_t bad[][2] = {{17, 2}, {0, 19},         {18, 1},
                                      {19, 0}, {UINT64_MAX, 2}, {2, UINT64_MAX}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t off = bad[i][0], bytes = bad[i][1];
        og_status st = og_buffer_write(buf, off, src, bytes);
        cr_assert_eq(st, OG_ERROR_INVALID_ARGUMENT, "write %" PRIu64 "+%" PRIu64 ": %d", off, bytes,
                     st);
        cr_assert_not_null(strstr(og_context_last_error(ctx), "buffer write"), "message \"%s\"",
                           og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(buf, 0, now, sizeof now), OG_OK);
        cr_assert_eq(memcmp(now, fill, sizeof fill), 0,
                     "refused write %" PRIu64 "+%" PRIu64 " changed the buffer", off, bytes);

        memset(dst, 0xee, sizeof dst);
        st = og_buffer_read(buf, off, dst, bytes);
        cr_assert_eq(st, OG_ERROR_INVALID_ARGUMENT, "read %" PRIu64 "+%" PRIu64 ": %d", off, bytes,
                     st);
        cr_assert_not_null(strstr(og_context_last_error(ctx), "buffer read"), "message \"%s\"",
                           og_context_last_error(ctx));
        for (size_t j = 0; j < sizeof dst; j++)
            cr_assert_eq(dst[j], 0xee, "refused read %" PRIu64 "+%" PRIu64 " wrote dst[%zu]", off,
                         bytes, j);
    }
    og_buffer_destroy(buf);
    close_context(ctx);
}
