/* The argument-check targets' devices, calls and oracle (og_fuzz_plan.h). */
#include "og_fuzz_plan.h"

#include <string.h>

typedef unsigned __int128 og_u128; /* extents without overflow */

og_limits og_fuzz_limits(unsigned which)
{
    og_limits l = {.max_invocations = 1024,
                   .max_size = {1024, 1024, 64},
                   .max_count = {65535, 65535, 65535},
                   .max_shared_bytes = 32768,
                   .max_storage_range = 1u << 27,
                   .max_push_bytes = 256,
                   .subgroup_size = 8,
                   .max_texel_elements = 1u << 27,
                   .integer_dot = 1,
                   .buffer_address = 1,
                   .bind_align = 16,
                   .max_loop_iterations = 65535};
    switch (which % 3) {
    case 1: /* tiny counts and ranges: many pieces, many refusals */
        l.max_count[0] = 64;
        l.max_count[1] = 2;
        l.max_count[2] = 3;
        l.max_storage_range = 1u << 20;
        l.max_texel_elements = 1u << 12;
        l.integer_dot = 0;
        l.buffer_address = 0;
        l.bind_align = 0; /* bindings at the buffer's base */
        l.max_loop_iterations = 0;
        break;
    case 2: /* a discrete GPU: 4 GiB bindings, float16 cooperative matrices */
        l.max_count[0] = 0x7fffffffu;
        l.max_shared_bytes = 49152;
        l.max_storage_range = 0xffffffffu;
        l.bind_align = 256;
        l.subgroup_size = 32;
        l.max_texel_elements = 1u << 28;
        l.max_loop_iterations = 0;
        l.matrix = (og_matrix_caps){.n_shapes = 1,
                                    .shapes = {{.m = 16,
                                                .n = 16,
                                                .k = 16,
                                                .a = OG_COMPONENT_F16,
                                                .b = OG_COMPONENT_F16,
                                                .c = OG_COMPONENT_F32,
                                                .result = OG_COMPONENT_F32,
                                                .subgroup = 1}},
                                    .subgroup_min = 32,
                                    .subgroup_max = 32,
                                    .size_control = 1,
                                    .full_subgroups = 1,
                                    .float16 = 1,
                                    .storage16 = 1,
                                    .memory_model = 1};
        break;
    default:
        break;
    }
    return l;
}

static int64_t clamp64(__int128 v)
{
    return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* Mostly `near` plus a small step (-2 .. 5), so the fuzzer meets the
 * boundaries the checks draw; else any value. */
static int64_t near_value(og_fuzz_input *in, __int128 near)
{
    unsigned c = (unsigned)og_fuzz_bits(in, 1);
    if (c % 4 == 0)
        return og_fuzz_value(in);
    return clamp64(near + (int)(c / 4 % 8) - 2);
}

/* a * b, held within +-2^120 so that a few of them add without overflow. */
static __int128 product(__int128 a, __int128 b)
{
    const __int128 cap = (__int128)1 << 120;
    __int128 p = a * b; /* 64-bit values: within 2^126 */
    return p > cap ? cap : p < -cap ? -cap : p;
}

/* Elements from an operand's start to one past the last it holds, for
 * rows x cols stored with leading dimension ld, batch products stride
 * apart, from offset off (all 64-bit values); 0 when it holds none. Any
 * signs (a refused call); within +-2^122. */
static __int128 extent(int64_t off, int64_t batch, int64_t stride, int64_t rows, int64_t ld,
                       int64_t cols)
{
    if (rows <= 0 || cols <= 0 || batch <= 0)
        return 0;
    return (__int128)off + product(batch - 1, stride) + product(rows - 1, ld) + cols;
}

/* A buffer for an operand that needs `need` bytes: absent now and then, else
 * sized near need, possibly wrapped (a skew of whole words), with or
 * without texel views, and with or without a device address (16-byte
 * aligned, or only 4). */
static og_buffer *read_buffer(og_fuzz_input *in, og_buffer *buf, __int128 need)
{
    unsigned c = (unsigned)og_fuzz_bits(in, 1);
    if (c % 16 == 15)
        return NULL;
    int64_t size = near_value(in, need < 0 ? 0 : need);
    *buf = (og_buffer){.size = size < 0 ? 0 : (uint64_t)size,
                       .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                (c & 16 ? VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT : 0u),
                       .skew = 4 * (uint64_t)(c / 32),
                       .address = c & 8 ? ((uint64_t)1 << 40) + (c & 4) : 0};
    buf->allocated = buf->skew + ((buf->size + 3) & ~(uint64_t)3);
    if (buf->allocated < 4)
        buf->allocated = 4;
    return buf;
}

void og_fuzz_read_call(og_fuzz_input *in, og_fuzz_call *call)
{
    og_gemm_args *g = &call->g;
    unsigned flags = (unsigned)og_fuzz_bits(in, 1);
    g->trans_a = flags & 1;
    g->trans_b = (flags >> 1) & 1;
    g->m = og_fuzz_value(in);
    g->n = og_fuzz_value(in);
    g->k = og_fuzz_value(in);
    g->batch = og_fuzz_value(in);
    int64_t m = g->m, n = g->n, k = g->k, batch = g->batch == 0 ? 1 : g->batch;
    int64_t a_rows = g->trans_a ? k : m, a_cols = g->trans_a ? m : k;
    int64_t b_rows = g->trans_b ? n : k, b_cols = g->trans_b ? k : n;
    g->lda = near_value(in, a_cols);
    g->ldb = near_value(in, b_cols);
    g->ldc = near_value(in, n);
    g->a_offset = og_fuzz_value(in);
    g->b_offset = og_fuzz_value(in);
    g->c_offset = og_fuzz_value(in);
    g->stride_a = near_value(in, extent(0, 1, 0, a_rows, g->lda, a_cols));
    g->stride_b = near_value(in, extent(0, 1, 0, b_rows, g->ldb, b_cols));
    g->stride_c = near_value(in, extent(0, 1, 0, m, g->ldc, n));
    g->bias_offset = og_fuzz_value(in);
    call->col_scale_offset = og_fuzz_value(in);
    __int128 a_need = extent(g->a_offset, batch, g->stride_a, a_rows, g->lda, a_cols);
    __int128 b_need = extent(g->b_offset, batch, g->stride_b, b_rows, g->ldb, b_cols);
    __int128 c_need = extent(g->c_offset, batch, g->stride_c, m, g->ldc, n);
    g->a = read_buffer(in, &call->bufs[OG_FUZZ_A], product(a_need, (__int128)call->a_bytes));
    g->b = read_buffer(in, &call->bufs[OG_FUZZ_B], product(b_need, (__int128)call->b_bytes));
    g->c = read_buffer(in, &call->bufs[OG_FUZZ_C], product(c_need, 4));
    /* Flags choose whether there is a bias and column scales. */
    g->bias = flags & 4 ? read_buffer(in, &call->bufs[OG_FUZZ_BIAS],
                                      product((__int128)g->bias_offset + n, 4))
                        : NULL;
    call->col_scales = flags & 8 ? read_buffer(in, &call->bufs[OG_FUZZ_SCALES],
                                               product((__int128)call->col_scale_offset + n, 4))
                                 : NULL;
}

void og_fuzz_check_refusal(og_status st, const char *err)
{
    og_fuzz_assert(st == OG_ERROR_INVALID_ARGUMENT || st == OG_ERROR_UNSUPPORTED,
                   "refused with status %d: %s", (int)st, err);
    og_fuzz_assert(err[0] != '\0', "refused with status %d and no message", (int)st);
}

/* Elements from a binding's start to one past the last an operand of push
 * q holds: rows x cols with ld, q->batch products stride apart, from off. */
static og_u128 push_extent(const og_push *q, uint32_t off, uint32_t stride, uint32_t rows,
                           uint32_t ld, uint32_t cols)
{
    __int128 e = extent(off, q->batch, stride, rows, ld, cols);
    return (og_u128)e;
}

/* The operand buffer holds the extent [start, end) of a dispatch, in
 * elements of `bytes` bytes counted from its binding, which starts `base`
 * bytes past the buffer's base (the plan's start; the skew included). A
 * storage binding (`bound`) must also hold the extent within the device's
 * maxStorageBufferRange; texel views and device addresses need not. */
static void within(const og_limits *lim, const og_buffer *buf, const char *name, uint64_t bytes,
                   uint64_t base, og_u128 start, og_u128 end, int bound)
{
    og_fuzz_assert(buf != NULL, "%s is bound but absent", name);
    if (end == 0)
        return; /* reads nothing */
    og_fuzz_assert(base % bytes == 0, "%s's binding starts inside an element", name);
    og_fuzz_assert(!bound || end * bytes <= lim->max_storage_range,
                   "%s's binding spans %llu bytes, past maxStorageBufferRange %llu", name,
                   (unsigned long long)(end * bytes), (unsigned long long)lim->max_storage_range);
    start += base / bytes;
    end += base / bytes;
    og_fuzz_assert(start * bytes >= buf->skew, "%s starts %llu elements before its buffer", name,
                   (unsigned long long)((buf->skew - start * bytes) / bytes));
    og_fuzz_assert(end * bytes <= (og_u128)buf->skew + buf->size,
                   "%s reaches byte %llu of a buffer of %llu (skew %llu)", name,
                   (unsigned long long)(end * bytes - buf->skew), (unsigned long long)buf->size,
                   (unsigned long long)buf->skew);
}

/* Columns of C one workgroup of step s covers. */
static uint64_t step_width(const og_step *s)
{
    const og_params *p = &s->key.p;
    if (s->key.kernel != OG_KERNEL_GEMM && s->key.kernel != OG_KERNEL_PLANES)
        return OG_ELEMENTWISE_THREADS;
    switch (p->variant) {
    case OG_VARIANT_FEWROWS:
    case OG_VARIANT_INT8_SKINNY:
        return (uint64_t)p->cols;
    default:
        return (uint64_t)p->bn;
    }
}

/* One dispatch: its grid, and every operand it binds. Returns the rows x
 * products of C it writes (0 for a step that writes no C). */
static og_u128 check_step(const og_fuzz_call *call, const og_limits *lim, const og_plan *pl,
                          const og_step *s)
{
    const og_push *q = &s->push;
    const og_gemm_args *g = &call->g;
    for (int i = 0; i < 3; i++)
        og_fuzz_assert(s->grid[i] >= 1 && s->grid[i] <= lim->max_count[i],
                       "grid[%d] = %u, the device allows 1 .. %u", i, s->grid[i],
                       lim->max_count[i]);
    og_kernel kernel = s->key.kernel;
    if (kernel == OG_KERNEL_EXPONENTS)
        og_fuzz_assert((og_u128)s->grid[0] * OG_ELEMENTWISE_THREADS >= (og_u128)q->m + q->n,
                       "exponents: %u workgroups for %u rows and %u columns", s->grid[0], q->m,
                       q->n);
    else
        og_fuzz_assert((og_u128)s->grid[0] * step_width(s) >= q->n,
                       "kernel %d: %u workgroups of %llu columns for N = %u", (int)kernel,
                       s->grid[0], (unsigned long long)step_width(s), q->n);
    if (kernel == OG_KERNEL_GEMM || kernel == OG_KERNEL_PLANES) {
        int skinny = og_family_can(&s->key.p, OG_FAMILY_INT8) &&
                     !og_family_can(&s->key.p, OG_FAMILY_TILED);
        uint64_t rows = skinny ? (uint64_t)s->key.p.rows : pl->tile_rows ? pl->tile_rows : q->m;
        og_fuzz_assert((og_u128)s->grid[1] * rows >= q->m, "%u workgroups of %llu rows for %u",
                       s->grid[1], (unsigned long long)rows, q->m);
        og_fuzz_assert(s->grid[2] == (kernel == OG_KERNEL_PLANES ? q->batch * q->ranges : q->batch),
                       "grid[2] = %u for %u products", s->grid[2], q->batch);
    }
    if (kernel == OG_KERNEL_PLANES)
        og_fuzz_assert((og_u128)q->ranges * q->range_len >= q->k &&
                           (og_u128)(q->ranges - 1) * q->range_len < q->k,
                       "%u ranges of %u terms for K = %u", q->ranges, q->range_len, q->k);

    uint32_t a_rows = g->trans_a ? q->k : q->m, a_cols = g->trans_a ? q->m : q->k;
    uint32_t b_rows = g->trans_b ? q->n : q->k, b_cols = g->trans_b ? q->k : q->n;
    /* A and B through storage bindings, or through texel views or device
     * addresses (no binding range). */
    int reads_operands = kernel == OG_KERNEL_GEMM || kernel == OG_KERNEL_PLANES;
    int ab_bound = s->src == OG_SRC_STORAGE && !(reads_operands && s->key.p.src == OG_SRC_ADDR);
    const uint64_t *base = pl->start;
    og_u128 writes = 0;
    for (int i = 0; i < 5; i++) {
        switch (s->bind[i]) {
        case OG_OPERAND_A:
            og_fuzz_assert(g->k > 0, "A bound with K = 0");
            within(lim, g->a, "A", call->a_bytes, base[OG_OPERAND_A], q->off_a,
                   push_extent(q, q->off_a, q->stride_a, a_rows, q->lda, a_cols), ab_bound);
            break;
        case OG_OPERAND_B:
            og_fuzz_assert(g->k > 0, "B bound with K = 0");
            within(lim, g->b, "B", call->b_bytes, base[OG_OPERAND_B], q->off_b,
                   push_extent(q, q->off_b, q->stride_b, b_rows, q->ldb, b_cols), ab_bound);
            break;
        case OG_OPERAND_C:
            within(lim, g->c, "C", 4, base[OG_OPERAND_C], q->off_c,
                   push_extent(q, q->off_c, q->stride_c, q->m, q->ldc, q->n), 1);
            if (kernel != OG_KERNEL_EXPONENTS)
                writes = (og_u128)q->m * q->batch;
            break;
        case OG_OPERAND_BIAS:
            og_fuzz_assert(q->epi & OG_EPI_BIAS, "a bias bound, not used");
            within(lim, g->bias, "bias", 4, base[OG_OPERAND_BIAS], q->bias_off,
                   (og_u128)q->bias_off + q->n, 1);
            break;
        case OG_OPERAND_SCALES:
            within(lim, call->col_scales, "col_scales", 4, base[OG_OPERAND_SCALES], q->scale_off,
                   (og_u128)q->scale_off + q->n, 1);
            break;
        case OG_OPERAND_SCRATCH:
            og_fuzz_assert((og_u128)q->plane_stride >= (og_u128)q->batch * q->m * q->n &&
                               (og_u128)q->ranges * q->plane_stride * 4 <= pl->scratch_bytes,
                           "%u planes of %u floats (%u x %u x %u) in %llu bytes of scratch",
                           q->ranges, q->plane_stride, q->batch, q->m, q->n,
                           (unsigned long long)pl->scratch_bytes);
            break;
        case OG_OPERAND_EXPONENTS:
            og_fuzz_assert(((og_u128)q->m + q->n) * q->batch * 4 <= pl->exponent_bytes,
                           "exponents of %u x (%u + %u) in %llu bytes", q->batch, q->m, q->n,
                           (unsigned long long)pl->exponent_bytes);
            break;
        default:
            break;
        }
    }
    return writes;
}

/* The whole call's extent of an operand inside its buffer (from the arguments alone). */
static void call_within(const og_buffer *buf, const char *name, uint64_t bytes, __int128 end)
{
    og_fuzz_assert(buf != NULL, "%s is read but absent", name);
    og_fuzz_assert(end >= 0 && (og_u128)end * bytes <= buf->size,
                   "the call reaches element %lld of %s, whose buffer holds %llu bytes",
                   (long long)clamp64(end), name, (unsigned long long)buf->size);
}

void og_fuzz_check_plan(const og_fuzz_call *call, const og_limits *lim, const og_plan *pl)
{
    if (pl->pieces == 0)
        return; /* nothing recorded */
    const og_gemm_args *g = &call->g;
    int64_t m = g->m, n = g->n, k = g->k, batch = g->batch == 0 ? 1 : g->batch;
    og_fuzz_assert(m > 0 && n > 0, "%llu pieces for M = %lld, N = %lld",
                   (unsigned long long)pl->pieces, (long long)g->m, (long long)g->n);
    og_fuzz_assert(g->ldc >= g->n, "ldc %lld < N %lld accepted", (long long)g->ldc,
                   (long long)g->n);
    og_fuzz_assert(batch == 1 || g->stride_c >= product(m - 1, g->ldc) + n,
                   "stride_c %lld overlaps the outputs of %lld products", (long long)g->stride_c,
                   (long long)batch);

    /* Every piece when there are few; else the first and last ones. */
    const uint64_t cap = 4096;
    int all = pl->pieces <= cap;
    og_u128 written = 0;
    int reads[OG_OPERANDS] = {0};
    for (uint64_t j = 0; j < (all ? pl->pieces : cap); j++) {
        uint64_t i = all || j < cap / 2 ? j : pl->pieces - cap + j;
        og_piece piece;
        og_plan_piece(pl, i, &piece);
        og_fuzz_assert(piece.n_steps >= 1 && piece.n_steps <= OG_PIECE_STEPS,
                       "piece %llu has %d steps", (unsigned long long)i, piece.n_steps);
        for (int t = 0; t < piece.n_steps; t++) {
            const og_step *s = &piece.step[t];
            written += check_step(call, lim, pl, s);
            for (int b = 0; b < 5; b++)
                reads[s->bind[b]] = 1;
        }
    }
    if (all)
        og_fuzz_assert(written == (og_u128)product(m, batch),
                       "the pieces write %llu rows of C, the call has %lld x %lld",
                       (unsigned long long)written, (long long)g->m, (long long)batch);

    /* From the arguments alone, as onegpu.h defines the call. */
    int64_t a_rows = g->trans_a ? k : m, a_cols = g->trans_a ? m : k;
    int64_t b_rows = g->trans_b ? n : k, b_cols = g->trans_b ? k : n;
    if (reads[OG_OPERAND_A])
        call_within(g->a, "A", call->a_bytes,
                    extent(g->a_offset, batch, g->stride_a, a_rows, g->lda, a_cols));
    if (reads[OG_OPERAND_B])
        call_within(g->b, "B", call->b_bytes,
                    extent(g->b_offset, batch, g->stride_b, b_rows, g->ldb, b_cols));
    og_fuzz_assert(reads[OG_OPERAND_C], "a plan that writes no C");
    call_within(g->c, "C", 4, extent(g->c_offset, batch, g->stride_c, m, g->ldc, n));
    if (reads[OG_OPERAND_BIAS])
        call_within(g->bias, "bias", 4, (__int128)g->bias_offset + n);
    if (reads[OG_OPERAND_SCALES])
        call_within(call->col_scales, "col_scales", 4, (__int128)call->col_scale_offset + n);
}
