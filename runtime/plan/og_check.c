/* Validation of a GEMM call, in 64-bit arithmetic, before anything is recorded. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "og_plan.h"

static og_status bad(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static og_status bad(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, OG_ERROR_MAX, fmt, ap);
    va_end(ap);
    return OG_ERROR_INVALID_ARGUMENT;
}

static uint64_t max1(int64_t v)
{
    return v < 1 ? 1 : (uint64_t)v;
}

/* One past the last element an operand of rows x cols touches, or
 * UINT64_MAX on overflow: off + (batch-1)*stride + (rows-1)*ld + cols. */
static uint64_t extent(int64_t off, int64_t batch, int64_t stride, int64_t rows, int64_t ld,
                       int64_t cols)
{
    uint64_t a, b, sum;
    if (__builtin_mul_overflow((uint64_t)(batch - 1), (uint64_t)stride, &a) ||
        __builtin_mul_overflow((uint64_t)(rows - 1), (uint64_t)ld, &b) ||
        __builtin_add_overflow(a, b, &sum) || __builtin_add_overflow(sum, (uint64_t)off, &sum) ||
        __builtin_add_overflow(sum, (uint64_t)cols, &sum))
        return UINT64_MAX;
    return sum;
}

/* The byte of buf where an operand's first element lies (a wrapped
 * buffer's operands lie skew bytes into its VkBuffer); offsets are checked
 * against overflow before this is used. */
static uint64_t first_byte(const og_buffer *buf, int64_t offset, uint64_t elem_bytes)
{
    return buf->skew + (uint64_t)offset * elem_bytes;
}

void og_binding_starts(const og_limits *lim, const og_gemm_args *g, uint64_t a_bytes,
                       uint64_t b_bytes, const og_buffer *scales, int64_t scale_offset,
                       uint64_t start[OG_OPERANDS])
{
    memset(start, 0, sizeof(uint64_t) * OG_OPERANDS);
    const struct {
        og_operand op;
        const og_buffer *buf;
        int64_t offset;
        uint64_t bytes;
    } operands[] = {{OG_OPERAND_A, g->a, g->a_offset, a_bytes},
                    {OG_OPERAND_B, g->b, g->b_offset, b_bytes},
                    {OG_OPERAND_C, g->c, g->c_offset, 4},
                    {OG_OPERAND_BIAS, g->bias, g->bias_offset, 4},
                    {OG_OPERAND_SCALES, scales, scale_offset, 4}};
    for (size_t i = 0; i < sizeof operands / sizeof operands[0]; i++)
        if (operands[i].buf)
            start[operands[i].op] = og_binding_start(
                lim, first_byte(operands[i].buf, operands[i].offset, operands[i].bytes));
}

/* Why operand name cannot be read past maxStorageBufferRange: device
 * addresses read A and B where the device and the buffer have them. */
static const char *why_bound(const og_limits *lim, const char *name, const og_buffer *buf)
{
    if (strcmp(name, "A") != 0 && strcmp(name, "B") != 0)
        return "it is written or read through a binding";
    if (!lim->buffer_address)
        return lim->address_off == OG_ADDRESS_NOT_ENABLED
                   ? "the application's VkDevice was created without bufferDeviceAddress, "
                     "which the device has: enable it (VkPhysicalDeviceVulkan12Features) to "
                     "read it by address"
               : lim->address_off == OG_ADDRESS_OLD_INSTANCE
                   ? "the instance's apiVersion (og_vulkan_device.api_version) is below 1.2, "
                     "and reading it by address needs Vulkan 1.2's vkGetBufferDeviceAddress"
                   : "the device has no bufferDeviceAddress to read it by address";
    if (!buf->address)
        return "its VkBuffer lacks VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT";
    return NULL;
}

/* The bytes a kernel indexes from an operand's device address (32-bit
 * words; SPIR-V's access-chain indices are signed). */
#define OG_ADDRESS_SPAN ((uint64_t)1 << 33)

uint64_t og_binding_start(const og_limits *lim, uint64_t first)
{
    return lim->bind_align ? first / lim->bind_align * lim->bind_align : 0;
}

uint32_t og_binding_offset(const og_limits *lim, const og_buffer *buf, int64_t offset,
                           uint64_t elem_bytes)
{
    uint64_t first = first_byte(buf, offset, elem_bytes);
    return (uint32_t)((first - og_binding_start(lim, first)) / elem_bytes);
}

/* A buffer kernels cannot bind: og_buffer_create_host's, for copies only. */
static og_status not_bindable(char *err, const char *op, const char *name)
{
    return bad(err, "%s: %s is a host buffer (og_buffer_create_host), which kernels cannot bind", op,
               name);
}

og_status og_check_operand(const og_limits *lim, char *err, const char *op, const char *name,
                               const og_buffer *buf, uint64_t elem_bytes, int64_t off,
                               int64_t batch, int64_t stride, int64_t rows, int64_t ld,
                               int64_t cols)
{
    if (!buf)
        return bad(err, "%s: %s is NULL", op, name);
    if (!og_buffer_bindable(buf))
        return not_bindable(err, op, name);
    /* A wrapped buffer's operand starts skew bytes into its buffer. The
     * offset may pass 2^32 elements (the binding or the address starts near
     * the operand); the kernels index the operand's own extent in 32 bits. */
    uint64_t end = extent(off, batch, stride, rows, ld, cols), need;
    if (end == UINT64_MAX || end - (uint64_t)off > UINT32_MAX)
        return bad(err, "%s: %s spans more than 2^32 elements (stride and ld too large)", op,
                   name);
    if (__builtin_mul_overflow(end, elem_bytes, &need) ||
        __builtin_add_overflow(need, buf->skew, &need))
        return bad(err, "%s: %s offset (%" PRId64 ") is too large", op, name, off);
    /* The operand's binding (or address) starts near its first element,
     * og_binding_start; the kernels index from there in 32 bits. */
    uint64_t bound_bytes = need - og_binding_start(lim, first_byte(buf, off, elem_bytes));
    if (bound_bytes / elem_bytes > UINT32_MAX)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                       "%s: %s spans more than 2^32 elements from where the device can bind it "
                       "(offset %" PRId64 ")",
                       op, name, off);
    const char *bound = bound_bytes > lim->max_storage_range ? why_bound(lim, name, buf) : NULL;
    if (bound)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                       "%s: %s needs %" PRIu64 " bytes in one binding, more than the device's "
                       "maxStorageBufferRange of %" PRIu64 ", and %s",
                       op, name, bound_bytes, lim->max_storage_range, bound);
    if (bound_bytes > lim->max_storage_range && bound_bytes > OG_ADDRESS_SPAN)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                       "%s: %s spans %" PRIu64 " bytes; read by device address, an operand may "
                       "span at most 2^33 bytes (2^31 words)",
                       op, name, bound_bytes);
    if (need > buf->skew + buf->size)
        return bad(err,
                   "%s: %s needs %" PRIu64 " elements (offset %" PRId64 ", %" PRId64 " x %" PRId64
                   " with ld %" PRId64 ", batch %" PRId64 " with stride %" PRId64
                   "), but its buffer holds %" PRIu64,
                   op, name, end, off, rows, cols, ld, batch, stride, buf->size / elem_bytes);
    return OG_OK;
}

og_status og_check_fields(char *err, const char *op, const og_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (f[i].v < 0)
            return bad(err, "%s: %s (%" PRId64 ") is negative", op, f[i].name, f[i].v);
        if ((uint64_t)f[i].v > UINT32_MAX && !strstr(f[i].name, "offset"))
            return bad(err, "%s: %s (%" PRId64 ") exceeds 32-bit indexing", op, f[i].name, f[i].v);
    }
    return OG_OK;
}

og_status og_check_columns(const og_limits *lim, char *err, const char *op, const char *name,
                               const og_buffer *buf, int64_t offset, int64_t n)
{
    if (!og_buffer_bindable(buf))
        return not_bindable(err, op, name);
    if (offset < 0 || (uint64_t)offset > UINT64_MAX / 8)
        return bad(err, "%s: %s offset (%" PRId64 ") is negative or too large", op, name, offset);
    uint64_t need = buf->skew + 4 * ((uint64_t)offset + (uint64_t)n);
    uint64_t bound_bytes = need - og_binding_start(lim, first_byte(buf, offset, 4));
    if (bound_bytes / 4 > UINT32_MAX)
        return bad(err, "%s: %s offset (%" PRId64 ") exceeds 32-bit indexing from where the "
                        "device can bind it",
                   op, name, offset);
    if (bound_bytes > lim->max_storage_range)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                       "%s: %s needs %" PRIu64 " bytes in one binding, more than the device's "
                       "maxStorageBufferRange of %" PRIu64,
                       op, name, bound_bytes, lim->max_storage_range);
    if (need > buf->skew + buf->size)
        return bad(err,
                   "%s: %s needs %" PRIu64 " elements (offset %" PRId64 " + N %" PRId64
                   "), but its buffer holds %" PRIu64,
                   op, name, (need - buf->skew) / 4, offset, n, buf->size / 4);
    return OG_OK;
}

/* A leading dimension ld_name = ld against the stored row length dim_name =
 * dim: at least max(1, dim), BLAS's rule, which holds when dim is 0 too;
 * what ends the message (" for A transposed", or ""). */
static og_status check_ld(char *err, const char *op, const char *ld_name, int64_t ld,
                          const char *dim_name, int64_t dim, const char *what)
{
    if ((uint64_t)ld >= max1(dim))
        return OG_OK;
    if (dim == 0)
        return bad(err, "%s: %s (%" PRId64 ") must be at least 1 (%s is 0; BLAS asks for max(1, %s))%s",
                   op, ld_name, ld, dim_name, dim_name, what);
    return bad(err, "%s: %s (%" PRId64 ") is smaller than %s (%" PRId64 ")%s", op, ld_name, ld,
               dim_name, dim, what);
}

/* With more than one product, their M x N outputs (stride_c apart) must not
 * overlap: each element of C is written once. */
static og_status check_batch_overlap(char *err, const char *op, const og_gemm_args *g,
                                     int64_t batch)
{
    uint64_t need = (uint64_t)(g->m - 1) * (uint64_t)g->ldc + (uint64_t)g->n;
    if (batch > 1 && (uint64_t)g->stride_c < need)
        return bad(err,
                   "%s: stride_c (%" PRId64 ") makes the batch's outputs overlap (needs at least "
                   "(M-1)*ldc + N = %" PRIu64 ")",
                   op, g->stride_c, need);
    return OG_OK;
}

/* The bias and the activation: bias[bias_offset + j] for every column j < N. */
static og_status check_epilogue(const og_limits *lim, char *err, const char *op, const og_gemm_args *g)
{
    if ((unsigned)g->activation > OG_ACTIVATION_GELU_TANH)
        return bad(err, "%s: activation %d is not none, ReLU, GELU (erf) or GELU (tanh)", op,
                   (int)g->activation);
    return g->bias ? og_check_columns(lim, err, op, "bias", g->bias, g->bias_offset, g->n) : OG_OK;
}

static uint32_t epilogue_bits(const og_gemm_args *g)
{
    return (uint32_t)g->activation | (g->bias ? OG_EPI_BIAS : 0u);
}

/* The product's shape, layout and epilogue (everything but the input type),
 * for operation op with a_bytes-byte elements of A and b_bytes-byte of B. */
og_status og_check_product(const og_limits *lim, char *err, const char *op, uint64_t a_bytes,
                           uint64_t b_bytes, const og_gemm_args *g, og_push *push)
{
    const int64_t batch = g->batch == 0 ? 1 : g->batch;
    const og_field fields[] = {{"M", g->m},
                               {"N", g->n},
                               {"K", g->k},
                               {"batch", g->batch},
                               {"a_offset", g->a_offset},
                               {"b_offset", g->b_offset},
                               {"c_offset", g->c_offset},
                               {"stride_a", g->stride_a},
                               {"stride_b", g->stride_b},
                               {"stride_c", g->stride_c},
                               {"lda", g->lda},
                               {"ldb", g->ldb},
                               {"ldc", g->ldc}};
    og_status st = og_check_fields(err, op, fields, sizeof fields / sizeof fields[0]);
    if (st != OG_OK)
        return st;

    /* Leading dimensions: the stored row length, at least 1 (as BLAS asks). */
    if ((st = check_ld(err, op, "lda", g->lda, g->trans_a ? "M" : "K", g->trans_a ? g->m : g->k,
                       g->trans_a ? " for A transposed" : " for A not transposed")) != OG_OK ||
        (b_bytes && (st = check_ld(err, op, "ldb", g->ldb, g->trans_b ? "K" : "N",
                                   g->trans_b ? g->k : g->n,
                                   g->trans_b ? " for B transposed" : " for B not transposed")) !=
                        OG_OK) ||
        (st = check_ld(err, op, "ldc", g->ldc, "N", g->n, "")) != OG_OK)
        return st;

    st = check_epilogue(lim, err, op, g);
    if (st != OG_OK)
        return st;
    memset(push, 0, sizeof *push);
    if (g->m == 0 || g->n == 0)
        return OG_OK; /* nothing to compute */

    if ((st = check_batch_overlap(err, op, g, batch)) != OG_OK)
        return st;

    if (g->k > 0) {
        st = og_check_operand(lim, err, op, "A", g->a, a_bytes, g->a_offset, batch, g->stride_a,
                           g->trans_a ? g->k : g->m, g->lda, g->trans_a ? g->m : g->k);
        if (st == OG_OK && b_bytes)
            st = og_check_operand(lim, err, op, "B", g->b, b_bytes, g->b_offset, batch, g->stride_b,
                               g->trans_b ? g->n : g->k, g->ldb, g->trans_b ? g->k : g->n);
        if (st != OG_OK)
            return st;
    }
    st = og_check_operand(lim, err, op, "C", g->c, 4, g->c_offset, batch, g->stride_c, g->m, g->ldc, g->n);
    if (st != OG_OK)
        return st;
    og_product_push(lim, a_bytes, b_bytes, g, push);
    return OG_OK;
}

void og_product_push(const og_limits *lim, uint64_t a_bytes, uint64_t b_bytes,
                     const og_gemm_args *g, og_push *push)
{
    const int64_t batch = g->batch == 0 ? 1 : g->batch;
    *push = (og_push){.m = (uint32_t)g->m,
                      .n = (uint32_t)g->n,
                      .k = (uint32_t)g->k,
                      .lda = (uint32_t)g->lda,
                      .ldb = (uint32_t)g->ldb,
                      .ldc = (uint32_t)g->ldc,
                      .stride_a = (uint32_t)g->stride_a,
                      .stride_b = (uint32_t)g->stride_b,
                      .stride_c = (uint32_t)g->stride_c,
                      .alpha = g->alpha,
                      .beta = g->beta,
                      .batch = (uint32_t)batch,
                      .ranges = 1,
                      .epi = epilogue_bits(g)};
    /* Element offsets count from the start of each operand's binding
     * (og_binding_offset; a wrapped buffer's operand lies skew bytes into it). */
    if (g->k > 0) {
        push->off_a = og_binding_offset(lim, g->a, g->a_offset, a_bytes);
        if (b_bytes)
            push->off_b = og_binding_offset(lim, g->b, g->b_offset, b_bytes);
    }
    push->off_c = og_binding_offset(lim, g->c, g->c_offset, 4);
    if (g->bias)
        push->bias_off = og_binding_offset(lim, g->bias, g->bias_offset, 4);
}

og_status og_gemm_check(const og_gemm_config *cfg, const og_limits *lim, char *err,
                        const og_gemm_args *g, og_push *push)
{
    og_dtype ta = cfg->a_type, tb = cfg->b_type;
    int fp8 = og_dtype_is_fp8(ta) || og_dtype_is_fp8(tb);
    float scale_a = g->scale_a == 0.0f ? 1.0f : g->scale_a;
    float scale_b = g->scale_b == 0.0f ? 1.0f : g->scale_b;
    if (fp8 && (!isfinite(scale_a) || !isfinite(scale_b)))
        return bad(err, "gemm: FP8 scale of %s (%g) is not finite", isfinite(scale_a) ? "B" : "A",
                   isfinite(scale_a) ? scale_b : scale_a);
    og_status st = og_check_product(lim, err, "gemm", og_dtype_bytes(ta), og_dtype_bytes(tb), g, push);
    if (st != OG_OK || !fp8)
        return st;
    /* cuBLASLt's order: the sum of decoded values times alpha * scale_a * scale_b. */
    float factor = g->alpha * (og_dtype_is_fp8(ta) ? scale_a : 1.0f);
    push->alpha = factor * (og_dtype_is_fp8(tb) ? scale_b : 1.0f);
    return OG_OK;
}

og_gemm_args og_int8gemm_layout(const og_int8gemm_args *g)
{
    return (og_gemm_args){.trans_a = g->trans_a,
                          .trans_b = g->trans_b,
                          .m = g->m,
                          .n = g->n,
                          .k = g->k,
                          .batch = g->batch,
                          .a = g->a,
                          .b = g->b,
                          .c = g->c,
                          .lda = g->lda,
                          .ldb = g->ldb,
                          .ldc = g->ldc,
                          .a_offset = g->a_offset,
                          .b_offset = g->b_offset,
                          .c_offset = g->c_offset,
                          .stride_a = g->stride_a,
                          .stride_b = g->stride_b,
                          .stride_c = g->stride_c};
}

og_status og_int8gemm_check(const og_limits *lim, char *err, const og_int8gemm_args *g, og_push *push)
{
    const og_dtype types[2] = {g->type_a, g->type_b};
    const int32_t zeros[2] = {g->zero_a, g->zero_b};
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "B" : "A";
        if (!og_dtype_is_int8(types[i]))
            return bad(err, "int8gemm: type of %s (%d) is not int8 or uint8", name, (int)types[i]);
        int32_t lo = types[i] == OG_INT8 ? -128 : 0, hi = types[i] == OG_INT8 ? 127 : 255;
        if (zeros[i] < lo || zeros[i] > hi)
            return bad(err, "int8gemm: zero point of %s (%" PRId32 ") is outside %s's %d..%d", name,
                       zeros[i], og_dtype_name(types[i]), (int)lo, (int)hi);
    }
    if ((unsigned)g->output > OG_INT8_OUTPUT_FLOAT32)
        return bad(err, "int8gemm: output %d is not int32, int32 added to C or float32",
                   (int)g->output);
    int float_out = g->output == OG_INT8_OUTPUT_FLOAT32;
    if (!float_out && (g->bias || g->col_scales || g->activation != OG_ACTIVATION_NONE))
        return bad(err, "int8gemm: bias, column scales and activation need the float32 output");
    og_gemm_args shape = og_int8gemm_layout(g);
    shape.bias = g->bias;
    shape.bias_offset = g->bias_offset;
    shape.activation = g->activation;
    og_status st = og_check_product(lim, err, "int8gemm", 1, 1, &shape, push);
    if (st != OG_OK)
        return st;
    if (g->col_scales) {
        st = og_check_columns(lim, err, "int8gemm", "col_scales", g->col_scales, g->col_scale_offset, g->n);
        if (st != OG_OK)
            return st;
    }
    push->alpha = g->scale_a;
    push->beta = g->scale_b;
    push->zero_a = g->zero_a;
    push->zero_b = g->zero_b;
    if (g->col_scales)
        push->scale_off = og_binding_offset(lim, g->col_scales, g->col_scale_offset, 4);
    push->epi |= (float_out ? OG_EPI_FLOAT_OUT : 0u) | (g->col_scales ? OG_EPI_COLUMN_SCALES : 0u) |
                 (g->output == OG_INT8_OUTPUT_INT32_ADD ? OG_EPI_ACCUMULATE : 0u);
    return OG_OK;
}

og_status og_elementwise_check(const og_limits *lim, char *err, const og_gemm_args *g, og_push *push)
{
    const int64_t batch = g->batch == 0 ? 1 : g->batch;
    const og_field fields[] = {{"M", g->m},
                               {"N", g->n},
                               {"batch", g->batch},
                               {"c_offset", g->c_offset},
                               {"stride_c", g->stride_c},
                               {"ldc", g->ldc}};
    og_status st = og_check_fields(err, "elementwise", fields, sizeof fields / sizeof fields[0]);
    if (st != OG_OK)
        return st;
    if ((st = check_ld(err, "elementwise", "ldc", g->ldc, "N", g->n, "")) != OG_OK)
        return st;
    st = check_epilogue(lim, err, "elementwise", g);
    if (st != OG_OK)
        return st;
    memset(push, 0, sizeof *push);
    if (g->m == 0 || g->n == 0)
        return OG_OK;
    if ((st = check_batch_overlap(err, "elementwise", g, batch)) != OG_OK)
        return st;
    st = og_check_operand(lim, err, "elementwise", "C", g->c, 4, g->c_offset, batch, g->stride_c, g->m,
                       g->ldc, g->n);
    if (st != OG_OK)
        return st;
    *push = (og_push){.m = (uint32_t)g->m,
                      .n = (uint32_t)g->n,
                      .ldc = (uint32_t)g->ldc,
                      .stride_c = (uint32_t)g->stride_c,
                      .batch = (uint32_t)batch,
                      .ranges = 1,
                      .epi = epilogue_bits(g)};
    push->off_c = og_binding_offset(lim, g->c, g->c_offset, 4);
    if (g->bias)
        push->bias_off = og_binding_offset(lim, g->bias, g->bias_offset, 4);
    return OG_OK;
}

og_status og_loops_check(const og_limits *lim, char *err, const char *op, const og_kernel_key *key, int64_t k,
                         uint64_t k_len)
{
    uint32_t cap = lim->max_loop_iterations;
    uint64_t need = og_kernel_loop_iterations(key, k_len);
    if (cap == 0 || need <= cap)
        return OG_OK;
    return og_failf(err, OG_ERROR_UNSUPPORTED,
                   "%s: K = %" PRId64 " takes %" PRIu64
                   " loop iterations in one invocation of the kernel, and the device's driver "
                   "(Mesa lavapipe) ends a shader's loops after %u in all, which would leave C "
                   "wrong; split K into calls, or choose a kernel with a longer k step",
                   op, k, need, cap);
}

og_status og_grid_x_check(const og_limits *lim, char *err, const char *op, int64_t n, uint64_t gx)
{
    uint32_t cap = lim->max_count[0];
    if (gx <= cap)
        return OG_OK;
    return og_failf(err, OG_ERROR_UNSUPPORTED,
                   "%s: N = %" PRId64 " needs %" PRIu64
                   " workgroups along x, more than the device's maxComputeWorkGroupCount[0] of %u",
                   op, n, gx, cap);
}
