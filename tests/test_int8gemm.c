/* Int8Gemm (reference design, "8-bit products"): exact int32 sums modulo
 * 2^32 for every operand type, zero point, layout and kernel; the float32
 * output; the cases of public bug reports; argument errors. */
#include "og_ogtune.h"
#include "og_test.h"
#include "og_tmpdir.h"

/* The direct-load tile (32x32, 4x4 registers, word loads where the layout
 * allows) and the skinny kernel with word loads (4 rows, 32 columns). */
static og_params direct_tile(int vec)
{
    og_params p = {.variant = OG_VARIANT_INT8_TILE,
                   .bm = 32,
                   .bn = 32,
                   .bk = 16,
                   .tm = 4,
                   .tn = 4,
                   .wgx = 8,
                   .wgy = 8,
                   .load = OG_LOAD_DIRECT,
                   .vec = vec};
    return p;
}

static og_params word_skinny(void)
{
    og_params p = {.variant = OG_VARIANT_INT8_SKINNY, .rows = 4, .cols = 32, .slices = 8, .vec = 4};
    return p;
}

/* The same kernel reading A and B through texel buffers (the column scales
 * then bind at 6). */
static og_params texel(og_params p)
{
    p.src = OG_SRC_TEXEL;
    return p;
}

/* The kernels a shape can run: the default tile, a small tile with a
 * ragged-friendly register tile and padding, the same with packed dot
 * products where the device has them, the direct-load tile with word and
 * byte loads, and for M <= 16 with B not transposed the skinny kernel,
 * another shape of it (with packed dot products where the device has them)
 * and its word loads, word loads also through texel buffers. */
static size_t kernels_for(const og_context *ctx, const og_int8gemm_args *g, og_params *out)
{
    size_t n = 0;
    out[n++] = og_params_int8_tile();
    og_params small = {.variant = OG_VARIANT_INT8_TILE,
                       .bm = 32,
                       .bn = 16,
                       .bk = 32,
                       .tm = 2,
                       .tn = 2,
                       .wgx = 8,
                       .wgy = 16,
                       .pad = 1};
    out[n++] = small;
    if (ctx->limits.integer_dot) {
        small.dot = 1;
        out[n++] = small;
        og_params dot = og_params_int8_tile();
        dot.dot = 1;
        out[n++] = dot;
    }
    if (og_int8_skinny_eligible(g->m, g->trans_b)) {
        out[n] = og_params_int8_skinny();
        out[n + 1] = out[n];
        out[n + 1].rows = 8;
        out[n + 1].slices = 8;
        out[n + 1].dot = ctx->limits.integer_dot;
        out[n + 2] = word_skinny();
        out[n + 3] = texel(word_skinny());
        n += 4;
    }
    out[n++] = direct_tile(4);
    out[n++] = direct_tile(1);
    out[n++] = texel(direct_tile(4));
    return n;
}

/* Verifies params p on pr bit for bit. */
static void expect_exact(og_context *ctx, og_int8gemm *g, og_int8_problem *pr, const og_params *p,
                         const char *what)
{
    int accepted;
    char why[256] = "", params[OG_PARAMS_MAX];
    og_params_format(p, params, sizeof params);
    og_status st = og_int8_problem_verify(g, pr, p, &accepted, why, sizeof why);
    cr_assert_eq(st, OG_OK, "%s, %s: %s", what, params, og_context_last_error(ctx));
    cr_expect(accepted, "%s, %s: %s", what, params, why);
}

static void check_all_kernels(og_context *ctx, og_int8gemm *g, og_int8_problem *pr,
                              const char *what)
{
    og_params ps[16];
    size_t n = kernels_for(ctx, &pr->args, ps);
    for (size_t i = 0; i < n; i++)
        expect_exact(ctx, g, pr, &ps[i], what);
}

Test(int8gemm, every_type_zero_point_and_layout, .timeout = 600)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    static const og_dtype types[2] = {OG_INT8, OG_UINT8};
    /* Zero points at the extremes of each type. */
    static const int32_t zeros[2][2] = {{-128, 127}, {0, 255}};
    static const int64_t shapes[][4] = {{1, 1, 1, 1},   {3, 70, 45, 2},  {16, 33, 130, 1},
                                        {67, 5, 17, 3}, {65, 65, 64, 1}, {5, 129, 300, 1}};
    int case_no = 0;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++, case_no++) {
                int trans_a = case_no % 2, trans_b = (case_no / 2) % 2;
                og_int8_problem *pr;
                cr_assert_eq(og_int8_problem_create(ctx, types[ta], types[tb], trans_a, trans_b,
                                                    shapes[s][0], shapes[s][1], shapes[s][2],
                                                    shapes[s][3], 1000 + (uint64_t)case_no, &pr),
                             OG_OK);
                pr->args.zero_a = zeros[ta][case_no % 2];
                pr->args.zero_b = zeros[tb][(case_no / 3) % 2];
                og_reference_int8(&pr->args, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
                char what[128];
                snprintf(what, sizeof what, "%s x %s za=%d zb=%d %s%s %lldx%lldx%lldx%lld",
                         og_dtype_name(types[ta]), og_dtype_name(types[tb]), pr->args.zero_a,
                         pr->args.zero_b, trans_a ? "T" : "N", trans_b ? "T" : "N",
                         (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2],
                         (long long)shapes[s][3]);
                /* The default tile on every case, and one other kernel
                 * per type pair and layout (a module each), rotating
                 * through the list: 32 modules instead of about 170
                 * (2026-12-05, for CI's 45 minutes). The other kernels
                 * meet every type pair in their own sweeps below
                 * (direct_tile_around_its_edges, word_skinny_..., the
                 * skinny kernel for every M, dot_products_...). */
                og_params ps[16];
                size_t n = kernels_for(ctx, &pr->args, ps);
                size_t pick = 1 + (size_t)(2 * ta + tb + 4 * trans_a + 8 * trans_b) % (n - 1);
                expect_exact(ctx, g, pr, &ps[0], what);
                expect_exact(ctx, g, pr, &ps[pick], what);
                og_int8_problem_destroy(pr);
            }
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* Fills n bytes with value v. */
static void fill(uint8_t *p, size_t n, uint8_t v)
{
    memset(p, v, n);
}

Test(int8gemm, extremes_at_k_4096, .timeout = 600)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    /* Every value and zero point at an extreme: (a - za)(b - zb) = +-255^2 or
     * +-128 * 255 terms, 4096 of them, well past 2^31 and wrapping. */
    static const struct {
        og_dtype ta, tb;
        uint8_t va, vb;
        int32_t za, zb;
    } cases[] = {{OG_UINT8, OG_UINT8, 255, 0, 0, 255},
                 {OG_INT8, OG_INT8, 0x80, 0x80, 127, 127},
                 {OG_INT8, OG_UINT8, 0x7f, 0, -128, 255},
                 {OG_UINT8, OG_INT8, 0, 0x7f, 255, -128},
                 {OG_INT8, OG_INT8, 0x80, 0x7f, 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        og_int8_problem *pr;
        cr_assert_eq(og_int8_problem_create(ctx, cases[c].ta, cases[c].tb, 0, (int)c % 2, 9, 20,
                                            4096, 1, 7 + c, &pr),
                     OG_OK);
        fill(pr->a, pr->na, cases[c].va);
        fill(pr->b, pr->nb, cases[c].vb);
        cr_assert_eq(og_buffer_write(pr->args.a, 0, pr->a, pr->na), OG_OK);
        cr_assert_eq(og_buffer_write(pr->args.b, 0, pr->b, pr->nb), OG_OK);
        pr->args.zero_a = cases[c].za;
        pr->args.zero_b = cases[c].zb;
        og_reference_int8(&pr->args, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
        check_all_kernels(ctx, g, pr, "extremes at K = 4096");
        og_int8_problem_destroy(pr);
    }
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* 25 problems around the edges of a kernel: case c = 5 i + j takes M =
 * ms[i], N = ns[j], K = ks[(i + 2 j) % 5], A transposed when c is odd, B
 * when bit 1 of c is set and b_both, a cycle of type pairs, rows in whole
 * words unless c % 3 == 2, batch 1 or 2; each of ps[0..np) bit for bit. */
static void sweep_edges(og_context *ctx, og_int8gemm *g, const int64_t ms[5], const int64_t ns[5],
                        const int64_t ks[5], int b_both, uint64_t seed, const og_params *ps,
                        size_t np)
{
    static const og_dtype types[2] = {OG_INT8, OG_UINT8};
    int case_no = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++, case_no++) {
            if (case_no % og_test_stride() != 0)
                continue;
            int64_t m = ms[i], n = ns[j], k = ks[(i + 2 * j) % 5];
            int trans_a = case_no & 1, trans_b = b_both && ((case_no >> 1) & 1);
            int words = case_no % 3 != 2;
            og_int8_problem *pr;
            og_status st = (words ? og_int8_problem_create_words : og_int8_problem_create)(
                ctx, types[case_no % 2], types[(case_no / 2) % 2], trans_a, trans_b, m, n, k,
                1 + case_no % 2, seed + (uint64_t)case_no, &pr);
            cr_assert_eq(st, OG_OK);
            char what[128];
            snprintf(what, sizeof what, "%s x %s %s%s %lldx%lldx%lld%s",
                     og_dtype_name(pr->args.type_a), og_dtype_name(pr->args.type_b),
                     trans_a ? "T" : "N", trans_b ? "T" : "N", (long long)m, (long long)n,
                     (long long)k, words ? " in words" : "");
            for (size_t q = 0; q < np; q++)
                expect_exact(ctx, g, pr, &ps[q], what);
            og_int8_problem_destroy(pr);
        }
}

/* The direct-load tile (32x32, k steps of 16, sums in float32 chunks of 256
 * k) around every edge of its tile: M, N, K of 1, 31, 32, 33 and 65 (K not
 * a multiple of 4 but at 32), both transposes, every pair of types, zero
 * points away from 0, rows in whole words (word loads) or not (bytes), and
 * batches; from storage and from texel buffers. Then K = 600 (two chunks and a ragged step) with every value at
 * the extreme that makes the chunk sums largest (255^2 a term). */
Test(int8gemm, direct_tile_around_its_edges, .timeout = 900)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    static const int64_t sizes[] = {1, 31, 32, 33, 65};
    const og_params tiles[3] = {direct_tile(1), direct_tile(4), texel(direct_tile(4))};
    sweep_edges(ctx, g, sizes, sizes, sizes, 1, 500, tiles, 3);
    static const struct {
        og_dtype ta, tb;
        uint8_t va, vb;
        int32_t za, zb;
    } extremes[] = {{OG_UINT8, OG_UINT8, 255, 0, 0, 255},
                    {OG_INT8, OG_INT8, 0x80, 0x7f, 127, -128}};
    for (int c = 0; c < 4; c++) {
        og_int8_problem *pr;
        cr_assert_eq(og_int8_problem_create_words(ctx, extremes[c % 2].ta, extremes[c % 2].tb,
                                                  c / 2, c % 2, 33, 65, 600, 1, 9, &pr),
                     OG_OK);
        memset(pr->a, extremes[c % 2].va, pr->na);
        memset(pr->b, extremes[c % 2].vb, pr->nb);
        cr_assert_eq(og_buffer_write(pr->args.a, 0, pr->a, pr->na), OG_OK);
        cr_assert_eq(og_buffer_write(pr->args.b, 0, pr->b, pr->nb), OG_OK);
        pr->args.zero_a = extremes[c % 2].za;
        pr->args.zero_b = extremes[c % 2].zb;
        og_reference_int8(&pr->args, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
        og_params p = direct_tile(4);
        expect_exact(ctx, g, pr, &p, "extremes at K = 600");
        og_int8_problem_destroy(pr);
    }
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* The skinny kernel's word loads (4 rows, 32 columns, 8 slices: quads of k
 * 32 apart) around its edges: M of 1, 3, 4, 5 and 16, N of 1, 31, 32, 33
 * and 65, K of 1, 3, 4, 5 and 133 (ragged quads and slices), A both ways,
 * rows in whole words or not (the byte-loading kernel), from storage and
 * from texel buffers. */
Test(int8gemm, word_skinny_around_its_edges, .timeout = 600)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    static const int64_t ms[] = {1, 3, 4, 5, 16}, ns[] = {1, 31, 32, 33, 65},
                         ks[] = {1, 3, 4, 5, 133};
    const og_params skinny[2] = {word_skinny(), texel(word_skinny())};
    sweep_edges(ctx, g, ms, ns, ks, 0, 700, skinny, 2);
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* Word loads need A and B in whole 32-bit words; anything else reads bytes. */
Test(int8gemm, word_loads_fall_back_to_bytes)
{
    og_params tile = direct_tile(4), skinny = word_skinny();
    og_buffer a = {0}, b = {0};
    og_limits lim = {.max_texel_elements = 1u << 27};
    og_int8gemm_args args = {.m = 40, .n = 40, .k = 40, .a = &a, .b = &b, .lda = 40, .ldb = 40};
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &tile).vec, 4);
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &skinny).vec, 4);
    int64_t *fields[] = {&args.lda, &args.ldb, &args.a_offset, &args.b_offset};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        int64_t keep = *fields[f];
        *fields[f] += 2;
        cr_expect_eq(og_int8_params_for_call(&lim, &args, &tile).vec, 1, "field %zu", f);
        cr_expect_eq(og_int8_params_for_call(&lim, &args, &skinny).vec, 0, "field %zu", f);
        *fields[f] = keep;
    }
    args.batch = 2;
    args.stride_b = 1602;
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &tile).vec, 1);
    args.stride_b = 1600;
    b.skew = 2;
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &tile).vec, 1);
    b.skew = 0;
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &tile).vec, 4);
}

/* Texel loads need buffers made for texel views and operands within
 * maxTexelBufferElements words (counted from the buffer's base); the
 * skinny kernel's byte loads and K = 0 keep storage buffers. */
Test(int8gemm, texel_loads_fall_back_to_storage)
{
    og_params tile = texel(direct_tile(4)), skinny = texel(word_skinny());
    og_buffer a = {.usage = VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT}, b = a, plain = {0};
    /* A and B of 40 x 40 bytes: 400 words each. */
    og_limits lim = {.max_texel_elements = 400};
    og_int8gemm_args args = {.m = 40, .n = 40, .k = 40, .a = &a, .b = &b, .lda = 40, .ldb = 40};
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &tile).src, OG_SRC_TEXEL);
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &skinny).src, OG_SRC_TEXEL);
    lim.max_texel_elements = 399;
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &tile).src, OG_SRC_STORAGE);
    lim.max_texel_elements = 400;
    b.skew = 4; /* one word before B's first */
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &tile).src, OG_SRC_STORAGE);
    b.skew = 0;
    args.a = &plain;
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &tile).src, OG_SRC_STORAGE);
    args.a = &a;
    args.k = 0;
    cr_expect_eq(og_int8_params_for_call(&lim, &args, &tile).src, OG_SRC_STORAGE);
    args.k = 40;
    /* Rows out of words: the tile reads bytes through texels, the skinny
     * kernel bytes from storage. */
    args.lda = 42;
    lim.max_texel_elements = 1u << 27;
    og_params t = og_int8_params_for_call(&lim, &args, &tile);
    cr_expect(t.src == OG_SRC_TEXEL && t.vec == 1);
    og_params s = og_int8_params_for_call(&lim, &args, &skinny);
    cr_expect(s.src == OG_SRC_STORAGE && s.vec == 0);
}

Test(int8gemm, skinny_for_every_m_up_to_16)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    for (int64_t m = 1; m <= 16; m += og_test_stride()) {
        og_int8_problem *pr;
        cr_assert_eq(og_int8_problem_create(ctx, m % 2 ? OG_INT8 : OG_UINT8, OG_INT8, m % 3 == 0, 0,
                                            m, 45, 77 + m, 1 + m % 2, 300 + (uint64_t)m, &pr),
                     OG_OK);
        og_params p;
        cr_assert_eq(og_int8gemm_choose(g, &pr->args, &p), OG_OK);
        cr_assert_eq(p.variant, OG_VARIANT_INT8_SKINNY, "M = %lld takes the skinny kernel",
                     (long long)m);
        int accepted;
        char why[256] = "";
        cr_assert_eq(og_int8_problem_verify(g, pr, NULL, &accepted, why, sizeof why), OG_OK);
        cr_assert(accepted, "skinny M = %lld: %s", (long long)m, why);
        og_int8_problem_destroy(pr);
    }
    /* Past 16 rows, and with B transposed at M = 1, the portable tile. */
    og_params p;
    og_int8gemm_args tall = {.m = 17, .n = 8, .k = 8}, bt = {.m = 1, .n = 8, .k = 8, .trans_b = 1};
    cr_assert_eq(og_int8gemm_choose(g, &tall, &p), OG_OK);
    cr_assert_eq(p.variant, OG_VARIANT_INT8_TILE);
    cr_assert_eq(og_int8gemm_choose(g, &bt, &p), OG_OK);
    cr_assert_eq(p.variant, OG_VARIANT_INT8_TILE);
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* Runs a call with M = N = 1 on host data through the selected kernel and
 * every kernel of kernels_for; returns the int32 result. */
static int32_t run_one(og_context *ctx, og_dtype ta, og_dtype tb, int32_t za, int32_t zb,
                       const uint8_t *a, const uint8_t *b, int64_t k)
{
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    og_int8_problem *pr;
    cr_assert_eq(og_int8_problem_create(ctx, ta, tb, 0, 0, 1, 1, k, 1, 1, &pr), OG_OK);
    memcpy(pr->a, a, (size_t)k);
    for (int64_t i = 0; i < k; i++)
        pr->b[i * pr->args.ldb] = b[i];
    cr_assert_eq(og_buffer_write(pr->args.a, 0, pr->a, pr->na), OG_OK);
    cr_assert_eq(og_buffer_write(pr->args.b, 0, pr->b, pr->nb), OG_OK);
    pr->args.zero_a = za;
    pr->args.zero_b = zb;
    og_reference_int8(&pr->args, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
    int accepted;
    char why[256] = "";
    cr_assert_eq(og_int8_problem_verify(g, pr, NULL, &accepted, why, sizeof why), OG_OK);
    cr_assert(accepted, "selected kernel: %s", why);
    check_all_kernels(ctx, g, pr, "bug report case");
    int32_t got = (int32_t)pr->c[pr->args.c_offset];
    og_int8_problem_destroy(pr);
    og_int8gemm_destroy(g);
    return got;
}

/* No 16-bit intermediate may saturate or wrap. */
Test(int8gemm_bug_reports, no_16_bit_intermediate)
{
    og_context *ctx = open_context();
    const uint8_t a2[2] = {255, 255}, b2[2] = {127, 127};
    cr_expect_eq(run_one(ctx, OG_UINT8, OG_INT8, 0, 0, a2, b2, 2), 64770);
    uint8_t m128[16];
    memset(m128, 0x80, sizeof m128);
    cr_expect_eq(run_one(ctx, OG_INT8, OG_INT8, 0, 0, m128, m128, 16), 262144);
    uint8_t sparse[9] = {0x80, 0, 0, 0, 0, 0, 0, 0, 0x80};
    cr_expect_eq(run_one(ctx, OG_INT8, OG_INT8, 0, 0, sparse, sparse, 9), 32768);
    close_context(ctx);
}

/* The int32 sum wraps: 33026 * 255^2 = 2147516650 = 2^32 - 2147451646. */
Test(int8gemm_bug_reports, int32_sum_wraps)
{
    og_context *ctx = open_context();
    enum { K = 33026 };
    uint8_t *a = malloc(K), *b = malloc(K);
    cr_assert(a && b);
    memset(a, 127, K);
    memset(b, 127, K);
    cr_expect_eq(run_one(ctx, OG_INT8, OG_INT8, -128, -128, a, b, K), -2147451646);
    memset(a, 255, K);
    memset(b, 255, K);
    cr_expect_eq(run_one(ctx, OG_UINT8, OG_UINT8, 0, 0, a, b, K), -2147451646);
    free(a);
    free(b);
    close_context(ctx);
}

Test(int8gemm, float_output_and_accumulation)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    for (int variant = 0; variant < 4; variant++) {
        /* M = 3 (skinny) and M = 40 (tile), rows in bytes and in whole
         * words, per-column and per-tensor scales; the selected kernel and
         * the texel-loading one (column scales at binding 6). */
        og_int8_problem *pr;
        int64_t m = variant & 1 ? 40 : 3, n = 37;
        og_status made = (variant & 2 ? og_int8_problem_create_words : og_int8_problem_create)(
            ctx, OG_INT8, OG_UINT8, 0, 0, m, n, 200, 2, 55, &pr);
        cr_assert_eq(made, OG_OK);
        const og_params texel_kernel = texel(m == 3 ? word_skinny() : direct_tile(4));
        const og_params *kernels[2] = {NULL, &texel_kernel};
        float *scales = malloc((size_t)(n + 3) * sizeof *scales);
        float *bias = malloc((size_t)(n + 1) * sizeof *bias);
        cr_assert(scales && bias);
        uint64_t seed = 9;
        og_fill_random(OG_F32, scales, (size_t)n + 3, &seed);
        og_fill_random(OG_F32, bias, (size_t)n + 1, &seed);
        og_buffer *sbuf = make_buffer(ctx, scales, (size_t)(n + 3) * sizeof *scales);
        og_buffer *bbuf = make_buffer(ctx, bias, (size_t)(n + 1) * sizeof *bias);
        og_int8gemm_args *a = &pr->args;
        a->output = OG_INT8_OUTPUT_FLOAT32;
        a->scale_a = 0.0123f;
        a->scale_b = 3.5f;
        for (int form = 0; form < 4; form++) {
            a->col_scales = form & 1 ? sbuf : NULL;
            a->col_scale_offset = form & 1 ? 3 : 0;
            a->bias = form & 2 ? bbuf : NULL;
            a->bias_offset = form & 2 ? 1 : 0;
            a->activation = form == 3 ? OG_ACTIVATION_RELU : OG_ACTIVATION_NONE;
            og_reference_int8(a, pr->a, pr->b, pr->c0, form & 1 ? scales : NULL,
                              form & 2 ? bias : NULL, pr->ref);
            for (int kernel = 0; kernel < 2; kernel++) {
                int accepted;
                char why[256] = "";
                cr_assert_eq(
                    og_int8_problem_verify(g, pr, kernels[kernel], &accepted, why, sizeof why),
                    OG_OK, "%s", og_context_last_error(ctx));
                cr_expect(accepted, "float output, M = %lld, variant %d, form %d, kernel %d: %s",
                          (long long)m, variant, form, kernel, why);
            }
        }
        /* C += sum, wrapping: C starts as random 32-bit words. */
        a->output = OG_INT8_OUTPUT_INT32_ADD;
        a->col_scales = a->bias = NULL;
        a->activation = OG_ACTIVATION_NONE;
        og_reference_int8(a, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
        int accepted;
        char why[256] = "";
        cr_assert_eq(og_int8_problem_verify(g, pr, NULL, &accepted, why, sizeof why), OG_OK);
        cr_expect(accepted, "C += sum, M = %lld: %s", (long long)m, why);
        og_buffer_destroy(sbuf);
        og_buffer_destroy(bbuf);
        free(scales);
        free(bias);
        og_int8_problem_destroy(pr);
    }
    og_int8gemm_destroy(g);
    close_context(ctx);
}

Test(int8gemm, shared_b_and_empty_k)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    og_int8_problem *pr;
    cr_assert_eq(og_int8_problem_create(ctx, OG_UINT8, OG_INT8, 1, 1, 20, 30, 50, 3, 5, &pr),
                 OG_OK);
    pr->args.stride_b = 0; /* one B for the whole batch */
    og_reference_int8(&pr->args, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
    check_all_kernels(ctx, g, pr, "stride_b = 0");
    /* K = 0: every sum is 0, A and B may be absent. */
    pr->args.k = 0;
    og_buffer *a = pr->args.a, *b = pr->args.b;
    pr->args.a = pr->args.b = NULL;
    og_reference_int8(&pr->args, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
    int accepted;
    char why[256] = "";
    cr_assert_eq(og_int8_problem_verify(g, pr, NULL, &accepted, why, sizeof why), OG_OK, "%s",
                 og_context_last_error(ctx));
    cr_expect(accepted, "K = 0: %s", why);
    pr->args.a = a;
    pr->args.b = b;
    og_int8_problem_destroy(pr);
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* Grids beyond the device's workgroup counts (lowered here): rows and
 * products run as pieces with the bits of one dispatch; columns beyond the x
 * count are refused naming N. */
Test(int8gemm, grids_cut_into_pieces)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    og_int8_problem *tall, *rows;
    cr_assert_eq(og_int8_problem_create(ctx, OG_INT8, OG_UINT8, 1, 0, 150, 70, 40, 3, 21, &tall),
                 OG_OK);
    cr_assert_eq(og_int8_problem_create(ctx, OG_UINT8, OG_INT8, 0, 0, 13, 70, 40, 3, 22, &rows),
                 OG_OK);
    uint32_t saved[3];
    memcpy(saved, ctx->limits.max_count, sizeof saved);
    ctx->limits.max_count[1] = 1; /* one workgroup row a dispatch */
    ctx->limits.max_count[2] = 2; /* two products a dispatch */
    og_params small = og_params_int8_skinny();
    small.rows = 2; /* 13 rows: seven pieces of one workgroup row */
    check_all_kernels(ctx, g, tall, "pieces of rows and products (tile)");
    int accepted;
    char why[256] = "";
    cr_assert_eq(og_int8_problem_verify(g, rows, &small, &accepted, why, sizeof why), OG_OK, "%s",
                 og_context_last_error(ctx));
    cr_expect(accepted, "pieces of rows and products (skinny): %s", why);
    ctx->limits.max_count[0] = 1; /* 70 columns need 2 or 3 workgroups along x */
    cr_assert_eq(og_buffer_write(tall->args.c, 0, tall->c0, tall->nc * 4), OG_OK);
    cr_expect_eq(og_int8gemm_run(g, &tall->args), OG_ERROR_UNSUPPORTED);
    cr_expect(strstr(og_context_last_error(ctx), "int8gemm: N = 70 needs"), "%s",
              og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(tall->args.c, 0, tall->c, tall->nc * 4), OG_OK);
    cr_expect(memcmp(tall->c, tall->c0, tall->nc * 4) == 0, "C changed by a refused call");
    memcpy(ctx->limits.max_count, saved, sizeof saved);
    og_int8_problem_destroy(tall);
    og_int8_problem_destroy(rows);
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* A bad call fails naming what is wrong, and C is left as it was. */
static void expect_refused(og_int8gemm *g, og_int8_problem *pr, og_status want, const char *text)
{
    og_context *ctx = g->gemm.ctx;
    cr_assert_eq(og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * 4), OG_OK);
    og_status st = og_int8gemm_run(g, &pr->args);
    cr_expect_eq(st, want, "status %d for '%s' (%s)", st, text, og_context_last_error(ctx));
    cr_expect(strstr(og_context_last_error(ctx), text) != NULL, "'%s' not in '%s'", text,
              og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(pr->args.c, 0, pr->c, pr->nc * 4), OG_OK);
    cr_expect(memcmp(pr->c, pr->c0, pr->nc * 4) == 0, "C changed by a refused call");
}

Test(int8gemm, bad_arguments)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    og_int8_problem *pr;
    cr_assert_eq(og_int8_problem_create(ctx, OG_INT8, OG_UINT8, 0, 0, 8, 8, 8, 1, 3, &pr), OG_OK);
    og_int8gemm_args good = pr->args;
    og_buffer *bias = make_buffer(ctx, NULL, 0);

    pr->args.zero_a = 128;
    expect_refused(g, pr, OG_ERROR_INVALID_ARGUMENT, "zero point of A (128) is outside i8");
    pr->args = good;
    pr->args.zero_b = -1;
    expect_refused(g, pr, OG_ERROR_INVALID_ARGUMENT, "zero point of B (-1) is outside u8");
    pr->args = good;
    pr->args.type_a = OG_F16;
    expect_refused(g, pr, OG_ERROR_INVALID_ARGUMENT, "type of A");
    pr->args = good;
    pr->args.lda = 7;
    expect_refused(g, pr, OG_ERROR_INVALID_ARGUMENT, "int8gemm: lda (7) is smaller than K");
    pr->args = good;
    pr->args.k = -1;
    expect_refused(g, pr, OG_ERROR_INVALID_ARGUMENT, "int8gemm: K (-1) is negative");
    pr->args = good;
    pr->args.bias = bias;
    expect_refused(g, pr, OG_ERROR_INVALID_ARGUMENT, "need the float32 output");
    pr->args = good;
    pr->args.output = OG_INT8_OUTPUT_FLOAT32;
    pr->args.col_scales = bias;
    expect_refused(g, pr, OG_ERROR_INVALID_ARGUMENT, "int8gemm: col_scales needs 8 elements");
    pr->args = good;
    pr->args.b = NULL;
    expect_refused(g, pr, OG_ERROR_INVALID_ARGUMENT, "int8gemm: B is NULL");
    pr->args = good;
    pr->args.n = 9;
    expect_refused(g, pr, OG_ERROR_INVALID_ARGUMENT, "int8gemm: ldc (8) is smaller than N (9)");

    /* Forced parameters the call cannot take: an error, never a crash. */
    pr->args = good;
    pr->args.trans_b = 1;
    pr->args.ldb = pr->args.k;
    og_params skinny = og_params_int8_skinny();
    cr_assert_eq(og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * 4), OG_OK);
    cr_expect_eq(run_int8_params(g, ctx, &pr->args, &skinny), OG_ERROR_UNSUPPORTED);
    cr_expect(strstr(og_context_last_error(ctx), "B not transposed"), "%s",
              og_context_last_error(ctx));
    og_params float_tile = og_params_default();
    cr_expect_eq(run_int8_params(g, ctx, &pr->args, &float_tile), OG_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(og_buffer_read(pr->args.c, 0, pr->c, pr->nc * 4), OG_OK);
    cr_expect(memcmp(pr->c, pr->c0, pr->nc * 4) == 0, "C changed by a refused call");

    og_buffer_destroy(bias);
    pr->args = good;
    og_int8_problem_destroy(pr);
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* The packed dot-product kernels give the very words of the plain ones, for
 * every pair of types and zero points, on ragged transposed shapes. */
Test(int8gemm, dot_products_match_plain_products)
{
    og_context *ctx = open_context();
    if (!ctx->limits.integer_dot) {
        close_context(ctx);
        cr_skip_test("the device has no VK_KHR_shader_integer_dot_product");
    }
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    static const og_dtype types[2] = {OG_INT8, OG_UINT8};
    for (int c = 0; c < 8; c++) {
        og_int8_problem *pr;
        cr_assert_eq(og_int8_problem_create(ctx, types[c & 1], types[(c >> 1) & 1], c & 4, c & 2,
                                            35, 50, 101, 2, 40 + (uint64_t)c, &pr),
                     OG_OK);
        og_params plain = og_params_int8_tile(), dot = plain;
        dot.dot = 1;
        uint32_t *first = malloc(pr->nc * 4);
        cr_assert_not_null(first);
        cr_assert_eq(og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * 4), OG_OK);
        cr_assert_eq(run_int8_params(g, ctx, &pr->args, &plain), OG_OK);
        cr_assert_eq(og_buffer_read(pr->args.c, 0, first, pr->nc * 4), OG_OK);
        cr_assert_eq(og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * 4), OG_OK);
        cr_assert_eq(run_int8_params(g, ctx, &pr->args, &dot), OG_OK, "%s",
                     og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(pr->args.c, 0, pr->c, pr->nc * 4), OG_OK);
        cr_expect(memcmp(first, pr->c, pr->nc * 4) == 0, "case %d: dot=1 differs from dot=0", c);
        char why[256] = "";
        cr_expect_eq(og_int8_mismatches(&pr->args, pr->ref, first, pr->nc, why, sizeof why), 0,
                     "case %d: %s", c, why);
        free(first);
        og_int8_problem_destroy(pr);
    }
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* ---- tuning: op "int8gemm" records, selection, ogtune ---- */

TestSuite(int8gemm_tuning, .init = make_tmpdir, .fini = remove_tmpdir);

/* The candidates ogtune tune measures of each shape in tune_store_select:
 * a seeded random sample (--budget Nc --strategy random: the default first,
 * then a spread that also meets the packed dot products and the word
 * loads), never under 2, so that selection still picks the best of several
 * records of each shape. In the plain pass, half the larger quick space
 * (27 of 54 candidates): each is compiled cold and verified in a worker,
 * and the whole space took about 170 s there, the largest item of CI's
 * plain pass (2026-12-05: halved for CI's 45 minutes; test_gen builds
 * every quick Int8Gemm module, and a candidate that fails on a user's
 * device is rejected by the tuner, never selected). The later passes
 * (OG_TEST_STRIDE > 1) look for what does not depend on the candidate (the
 * Vulkan calls' validity, the host code's memory and undefined behaviour
 * in ogtune and its workers): there about 1 / OG_TEST_STRIDE of it. */
static void tune_sample(char *out, size_t len)
{
    int stride = og_test_stride();
    if (stride == 1)
        stride = 2;
    og_context *ctx = open_context();
    static const og_shape shapes[2] = {{2, 40, 96, 1}, {40, 48, 64, 1}};
    size_t most = 0;
    for (int i = 0; i < 2; i++) {
        og_params *space = NULL;
        size_t n = 0;
        cr_assert_eq(og_space(&ctx->limits, OG_PRESET_QUICK, OG_INT8, 0, 0, &shapes[i], &space, &n),
                     OG_OK);
        free(space);
        most = n > most ? n : most;
    }
    close_context(ctx);
    size_t budget = (most + (size_t)stride - 1) / (size_t)stride;
    snprintf(out, len, " --budget %zuc --strategy random", budget < 2 ? 2 : budget);
}

Test(int8gemm_tuning, tune_store_select)
{
    char db[512], args[1400], sample[64], *out;
    tmp_path(db, sizeof db, "int8.db");
    /* A skinny shape and a tile shape, a sample of the quick space of each
     * (tune_sample). */
    tune_sample(sample, sizeof sample);
    snprintf(args, sizeof args,
             "tune --op int8gemm --shapes 2x40x96,40x48x64 --preset quick%s --json --db '%s'",
             sample, db);
    cr_assert_eq(ogtune(args, &out), 0, "ogtune tune failed:\n%s", out);
    cr_expect_not_null(strstr(out, "\"op\":\"int8gemm\",\"dtype\":\"i8\""), "%s", out);
    cr_expect_null(strstr(out, "\"accepted\":false"), "a candidate was rejected:\n%s", out);
    free(out);

    /* The library selects the best accepted record of each shape's template. */
    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = db}, &ctx), OG_OK);
    og_db *handle;
    char err[512];
    cr_assert_eq(og_db_open(db, 0, &handle, err, sizeof err), OG_OK, "%s", err);
    static const int64_t shapes[2][3] = {{2, 40, 96}, {40, 48, 64}};
    for (int i = 0; i < 2; i++) {
        og_choice c;
        cr_assert_eq(og_select_int8(ctx, 0, 0, shapes[i][0], shapes[i][1], shapes[i][2], 1, &c),
                     OG_OK);
        cr_expect_eq(c.source, OG_SOURCE_DB, "shape %d", i);
        cr_expect_eq(c.params.variant, i == 0 ? OG_VARIANT_INT8_SKINNY : OG_VARIANT_INT8_TILE);
        og_record_key key = {.op = "int8gemm", .dtype = OG_INT8, .mode = OG_MODE_FAST};
        og_record rec;
        og_device_info rec_dev;
        int found, other;
        const char *name = og_params_template(&c.params);
        cr_assert_eq(og_db_select(handle, &ctx->info, &key, name, og_template_hash(name),
                                  shapes[i][0], shapes[i][1], shapes[i][2], 1, &rec, &rec_dev,
                                  &found, &other, err, sizeof err),
                     OG_OK, "%s", err);
        char params[OG_PARAMS_MAX];
        og_params_format(&c.params, params, sizeof params);
        cr_expect_str_eq(params, rec.params, "the best record is selected");
        /* The float GEMM of the same shape reads none of these records. */
        cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 0, 40, 48, 64, 1, &c), OG_OK);
        cr_expect_eq(c.source, OG_SOURCE_DEFAULT);
    }
    og_db_close(handle);
    close_context(ctx);

    snprintf(args, sizeof args, "select --op int8gemm --shape 1x40x96 --json --db '%s'", db);
    cr_expect_eq(ogtune(args, &out), 0);
    cr_expect_not_null(strstr(out, "\"op\":\"int8gemm\""), "%s", out);
    cr_expect_not_null(strstr(out, "\"variant\":\"int8gemm_skinny\""), "%s", out);
    cr_expect_not_null(strstr(out, "\"match\":\"nearest\""), "%s", out);
    free(out);
    snprintf(args, sizeof args, "select --op int8gemm --shape 1x40x96 --trans-b --json --db '%s'",
             db);
    cr_expect_eq(ogtune(args, &out), 0);
    cr_expect_not_null(strstr(out, "\"variant\":\"int8gemm_tile\""), "B^T at M = 1: %s", out);
    free(out);
    cr_expect_neq(ogtune("select --op int8gemm --dtype f16 --shape 1x2x3 2>/dev/null", &out), 0);
    free(out);
}

/* A record naming another kernel family under int8gemm's template is never
 * run: selection falls back to the default. */
Test(int8gemm_tuning, foreign_params_are_ignored)
{
    static const char *const hostile[] = {
        "bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,vec=1,src=ssbo",
        "variant=int8skinny,rows=4,cols=32,slices=16,dot=0",
        "variant=int8tile,bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,dot=7",
        "variant=int8tile,bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,dot=0;DROP TABLE "
        "records"};
    og_context *probe = open_context();
    og_device_info device_info = probe->info;
    close_context(probe);
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        char db[512], name[32], err[512];
        snprintf(name, sizeof name, "hostile%zu.db", i);
        tmp_path(db, sizeof db, name);
        og_db *handle;
        cr_assert_eq(og_db_open(db, 1, &handle, err, sizeof err), OG_OK, "%s", err);
        int64_t device;
        cr_assert_eq(og_db_device(handle, &device_info, &device, err, sizeof err), OG_OK);
        og_record r = {.key = {.op = "int8gemm", .dtype = OG_INT8, .mode = OG_MODE_FAST},
                       .m = 64,
                       .n = 64,
                       .k = 64,
                       .batch = 1,
                       .gflops = 1e9,
                       .accepted = 1};
        snprintf(r.template_name, sizeof r.template_name, "%s", OG_TEMPLATE_INT8_TILE);
        r.template_hash = og_template_hash(OG_TEMPLATE_INT8_TILE);
        snprintf(r.params, sizeof r.params, "%s", hostile[i]);
        cr_assert_eq(og_db_insert(handle, device, &r, err, sizeof err), OG_OK, "%s", err);
        og_db_close(handle);
        og_context *ctx = NULL;
        cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = db}, &ctx), OG_OK);
        og_choice c;
        cr_assert_eq(og_select_int8(ctx, 0, 0, 64, 64, 64, 1, &c), OG_OK);
        og_params def = og_params_int8_tile();
        cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "'%s' was selected", hostile[i]);
        cr_expect(memcmp(&c.params, &def, sizeof def) == 0, "'%s' was selected", hostile[i]);
        close_context(ctx);
    }
}
