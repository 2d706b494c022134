/*
 * Fuzz target: the convolution's argument checks and plan (og_conv_check,
 * og_conv_plan) on random geometries, layouts, offsets, buffer sizes,
 * shared buffers, devices and tiles, with no device. Properties: a refused
 * call names why (nothing is recorded); an accepted one has the output size
 * of the definition (computed here on its own), keeps x, wt, y and the bias
 * inside their buffers, y apart from the inputs, and its pieces within the
 * device's grid counts, starting on whole tiles of pixels and whole images
 * and covering every pixel of every product once.
 */
#include <string.h>

#include "og_fuzz_plan.h"

/* The output size along one axis, from the definition's formula in 128 bits. */
static __int128 out_size(int64_t size, int64_t pad0, int64_t pad1, int64_t taps, int64_t dil,
                         int64_t stride)
{
    __int128 span = (__int128)size + pad0 + pad1 - ((__int128)taps - 1) * dil - 1;
    return (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
}

static int64_t or_one(int64_t v)
{
    return v == 0 ? 1 : v;
}

/* Products and sums of the oracle, saturating at +-2^120 (far past any
 * buffer, so the comparisons still hold). */
#define BIG ((__int128)1 << 120)
static __int128 clamp(__int128 v)
{
    return v > BIG ? BIG : v < -BIG ? -BIG : v;
}

static __int128 mul(__int128 a, __int128 b)
{
    __int128 r;
    return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? -BIG : BIG) : clamp(r);
}

static __int128 add(__int128 a, __int128 b)
{
    return clamp(a + b); /* both within 2^120: no overflow */
}

/* A buffer of about `need` bytes (as the fuzzer says), with its own handle. */
static og_buffer *buffer(og_fuzz_input *in, og_buffer *buf, uintptr_t handle, __int128 need)
{
    unsigned c = (unsigned)og_fuzz_bits(in, 1);
    if (c % 16 == 15)
        return NULL;
    int64_t delta = (int64_t)(c % 8) - 2;
    __int128 size = need < 0 ? 0 : need + delta * 4;
    if (c & 8)
        size = og_fuzz_value(in);
    *buf = (og_buffer){.buffer = (VkBuffer)handle,
                       .size = size < 0           ? 0
                               : size > INT64_MAX ? INT64_MAX
                                                  : (uint64_t)size,
                       .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                       .skew = 4 * (uint64_t)(c / 64)};
    buf->allocated = buf->skew + ((buf->size + 3) & ~(uint64_t)3);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    og_fuzz_input in = {data, size};
    og_limits lim = og_fuzz_limits((unsigned)og_fuzz_bits(&in, 1));
    unsigned conf = (unsigned)og_fuzz_bits(&in, 1);
    og_conv_args a = {.layout = (og_conv_layout)(conf % 3 == 2 ? 7 : conf % 2),
                      .weights = (og_conv_weights)(conf / 4 % 2),
                      .activation = (og_activation)(conf / 8 % 5),
                      .beta = conf & 32 ? 1.0f : 0.0f};
    int64_t *fields[] = {&a.n,          &a.c,          &a.h,        &a.w,          &a.k,
                         &a.r,          &a.s,          &a.groups,   &a.stride_h,   &a.stride_w,
                         &a.dilation_h, &a.dilation_w, &a.pad_top,  &a.pad_bottom, &a.pad_left,
                         &a.pad_right,  &a.x_offset,   &a.w_offset, &a.y_offset,   &a.bias_offset};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = og_fuzz_value(&in);
    uint64_t bytes = conf & 64 ? 2 : 4;
    int64_t g = or_one(a.groups);
    __int128 P = out_size(a.h, a.pad_top, a.pad_bottom, a.r, or_one(a.dilation_h),
                          or_one(a.stride_h) > 0 ? or_one(a.stride_h) : 1);
    __int128 Q = out_size(a.w, a.pad_left, a.pad_right, a.s, or_one(a.dilation_w),
                          or_one(a.stride_w) > 0 ? or_one(a.stride_w) : 1);
    __int128 nx = mul(mul(a.n, a.c), mul(a.h, a.w)),
             kred = mul(mul(g ? (__int128)a.c / g : 0, a.r), a.s);
    __int128 nw = mul(a.k, kred), ny = mul(mul(a.n, a.k), mul(P, Q));
    og_buffer bufs[4];
    /* y shares x's buffer now and then: the overlap check must see it. */
    uintptr_t y_handle = conf & 128 ? 1 : 3;
    __int128 x_end = mul(add(nx, a.x_offset), bytes), w_end = mul(add(nw, a.w_offset), bytes);
    __int128 y_end = mul(add(ny, a.y_offset), 4), bias_end = mul(add(a.k, a.bias_offset), 4);
    a.x = buffer(&in, &bufs[0], 1, x_end);
    a.wt = buffer(&in, &bufs[1], 2, w_end);
    a.y = buffer(&in, &bufs[2], y_handle, y_end);
    a.bias = conf % 3 == 0 ? buffer(&in, &bufs[3], 4, bias_end) : NULL;

    char err[OG_ERROR_MAX] = "";
    og_conv_shape s;
    og_push push;
    og_plan plan;
    og_params p = og_params_default();
    p.split = (int)(og_fuzz_bits(&in, 1) % 18);
    if (p.split == 17)
        p = og_params_fewrows(0, 16); /* not a tile: og_conv_params takes the default */
    og_params q = og_conv_params(&p);
    og_status st = og_conv_check(&lim, err, bytes, &a, &s, &push);
    if (st == OG_OK && !s.empty)
        st = og_conv_plan(&lim, err, bytes == 4 ? OG_F32 : OG_F16, OG_MODE_FAST, &a, &s, &q, &push,
                          OG_SCRATCH_BYTES, &plan);
    if (st != OG_OK) {
        og_fuzz_check_refusal(st, err);
        return 0;
    }
    if (s.empty)
        return 0;
    og_fuzz_assert(P >= 1 && Q >= 1 && s.p == (int64_t)P && s.q == (int64_t)Q,
                   "output %lldx%lld accepted, the definition gives %lldx%lld", (long long)s.p,
                   (long long)s.q, (long long)P, (long long)Q);
    og_fuzz_assert(a.c % g == 0 && a.k % g == 0, "groups %lld accepted for C %lld and K %lld",
                   (long long)g, (long long)a.c, (long long)a.k);
    const struct {
        const og_buffer *b;
        __int128 end;
        const char *name;
    } t[] = {{a.x, x_end, "x"}, {a.wt, w_end, "wt"}, {a.y, y_end, "y"}, {a.bias, bias_end, "bias"}};
    for (size_t i = 0; i < 4; i++)
        og_fuzz_assert(!t[i].b || t[i].end <= (__int128)t[i].b->size, "%s ends past its buffer",
                       t[i].name);
    if (y_handle == 1) {
        __int128 x0 = add(a.x->skew, mul(a.x_offset, bytes));
        __int128 y0 = add(a.y->skew, mul(a.y_offset, 4));
        og_fuzz_assert(y0 >= add(x0, mul(nx, bytes)) || x0 >= add(y0, mul(ny, 4)), "y overlaps x");
    }
    /* The pieces: whole tiles and images, every pixel of every product once. */
    __int128 covered = 0;
    uint64_t n = plan.pieces < 4096 ? plan.pieces : 4096;
    for (uint64_t i = 0; i < n; i++) {
        og_piece piece;
        og_plan_piece(&plan, i, &piece);
        const og_push *qp = &piece.step[0].push;
        og_fuzz_assert((uint64_t)(uint32_t)qp->zero_b % plan.tile_rows == 0 &&
                           qp->batch % (uint32_t)g == 0 &&
                           (uint64_t)(uint32_t)qp->zero_b + qp->m <= (uint64_t)s.m,
                       "piece %llu: pixels %u..%u, %u products", (unsigned long long)i,
                       (unsigned)qp->zero_b, (unsigned)qp->zero_b + qp->m, qp->batch);
        for (int k = 0; k < piece.n_steps; k++)
            for (int d = 0; d < 3; d++)
                og_fuzz_assert(piece.step[k].grid[d] <= lim.max_count[d],
                               "piece %llu step %d: grid %u past the device's %u",
                               (unsigned long long)i, k, piece.step[k].grid[d], lim.max_count[d]);
        covered += (__int128)qp->m * qp->batch;
    }
    if (plan.pieces <= 4096)
        og_fuzz_assert(covered == (__int128)s.m * s.batch, "the pieces cover %lld of %lld x %lld",
                       (long long)covered, (long long)s.m, (long long)s.batch);
    return 0;
}
