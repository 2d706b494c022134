/* The one-chain tile (acc=chain, docs/accumulation-order.md "The tile: one
 * chain"), which the tuner picks on lavapipe at 1024 cubed: every chain
 * configuration of the tuning spaces, on shapes ragged around its tile and k
 * step, whole and cut into split-k ranges as the tuner may cut them, with
 * element and vector loads, gives exactly the bits of the documented order,
 * emulated here from the document alone (the ranges too: documented_ranges,
 * not og_split_ranges), and lies within the design's bound of the float64
 * reference. The data come from one seed: OG_TEST_SEED, else 2024. */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"

/* Chain candidates of the spaces at most. */
#define MAX_CHAIN 64

/* The data's seed: OG_TEST_SEED (strtoull: decimal or 0x hex), else 2024. */
static uint64_t test_seed(void)
{
    const char *s = getenv("OG_TEST_SEED");
    uint64_t seed = s && *s ? strtoull(s, NULL, 0) : 2024;
    cr_log_info("seed %" PRIu64 " (set OG_TEST_SEED to change it)", seed);
    return seed;
}

/* The standard space's chain candidates (it holds every quick one: asserted)
 * at a K that every split count may cut (og_space keeps split=n where
 * K / n >= 32). */
static size_t chain_candidates(const og_limits *lim, og_params *out)
{
    og_params quick[MAX_CHAIN];
    size_t n = 0, nq = 0;
    const og_shape shape = {256, 256, 4096, 1};
    for (int preset = OG_PRESET_QUICK; preset <= OG_PRESET_STANDARD; preset++) {
        og_params *space, *list = preset == OG_PRESET_QUICK ? quick : out;
        size_t count, *kept = preset == OG_PRESET_QUICK ? &nq : &n;
        cr_assert_eq(og_space(lim, (og_preset)preset, OG_F32, 0, 0, &shape, &space, &count), OG_OK);
        for (size_t i = 0; i < count; i++)
            if (space[i].acc == OG_ACC_CHAIN) {
                cr_assert_lt(*kept, (size_t)MAX_CHAIN);
                list[(*kept)++] = space[i];
            }
        free(space);
    }
    cr_assert_gt(nq, 0, "the quick space holds no chain candidate");
    for (size_t i = 0; i < nq; i++) {
        size_t j = 0;
        while (j < n && memcmp(&quick[i], &out[j], sizeof *out) != 0)
            j++;
        char text[OG_PARAMS_MAX];
        og_params_format(&quick[i], text, sizeof text);
        cr_assert_lt(j, n, "quick chain candidate %s is not in the standard space", text);
    }
    return n;
}

/* The distinct kernels of the candidates: each tile once, unsplit. */
static size_t chain_tiles(const og_params *cands, size_t n, og_params *out)
{
    size_t tiles = 0;
    for (size_t i = 0; i < n; i++) {
        og_params p = cands[i];
        p.split = 1;
        size_t j = 0;
        while (j < tiles && memcmp(&p, &out[j], sizeof p) != 0)
            j++;
        if (j == tiles)
            out[tiles++] = p;
    }
    return tiles;
}

/* One call: its shape, layout and epilogue. */
typedef struct chain_call {
    og_dtype dtype;
    int trans_a, trans_b;
    int64_t m, n, k;
    /* 1: leading dimensions in fours, no offsets, one product, beta = 0 (vector
     * loads and the direct store inside C); 0: odd leading dimensions,
     * offsets and two products, beta != 0 (element loads, C read). */
    int packed;
    int epilogue; /* a bias and ReLU too */
} chain_call;

/* Which kernels a test ran: [split][vector loads]. */
typedef int chain_coverage[2][2];

static int64_t round4(int64_t x)
{
    return (x + 3) / 4 * 4;
}

/* Element idx of an operand of type t, decoded exactly. */
static float elem(og_dtype t, const void *data, int64_t idx)
{
    return (float)og_elem(t, data, (size_t)idx);
}

/* One product term rounded as the device's shader fma rounds: once, or the
 * product and the sum apart (device_fuses). */
static float fma_as_device(float a, float b, float acc, int fused)
{
    if (fused)
        return fmaf(a, b, acc);
    volatile float prod = a * b;
    return acc + prod;
}

/* C as docs/accumulation-order.md writes the one-chain tile's result. Range
 * r of the split (one range of K terms unsplit) sums terms
 * k = r * len .. min(K, (r + 1) * len) - 1 as tot = +0, then
 * tot = fma(a_k, b_k, tot) in increasing k; the range sums are added in
 * range order (s = tot_0, then s = s + tot_r); then r = alpha * s,
 * r = r + beta * C when beta != 0, r = r + bias[j] when bound, ReLU. Each
 * operation rounds on its own (volatile: no contraction on hosts with fma). */
static void chain_oracle(og_dtype t, const og_gemm_args *g, const void *a, const void *b,
                         const float *c0, const float *bias, int fused, uint32_t ranges,
                         uint32_t len, float *out)
{
    size_t na, nb, nc;
    og_gemm_extents(g, &na, &nb, &nc);
    memcpy(out, c0, nc * sizeof *out); /* outside the region C keeps its bits */
    int64_t batch = g->batch ? g->batch : 1;
    for (int64_t p = 0; p < batch; p++)
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++) {
                float s = 0.0f;
                for (uint32_t r = 0; r < ranges; r++) {
                    int64_t k0 = (int64_t)r * len, k1 = k0 + len < g->k ? k0 + len : g->k;
                    float tot = 0.0f;
                    for (int64_t k = k0; k < k1; k++) {
                        int64_t ia = g->trans_a ? k * g->lda + i : i * g->lda + k;
                        int64_t ib = g->trans_b ? j * g->ldb + k : k * g->ldb + j;
                        tot = fma_as_device(elem(t, a, g->a_offset + p * g->stride_a + ia),
                                            elem(t, b, g->b_offset + p * g->stride_b + ib), tot,
                                            fused);
                    }
                    s = r == 0 ? tot : s + tot;
                }
                size_t ci = (size_t)(g->c_offset + p * g->stride_c + i * g->ldc + j);
                volatile float v = g->alpha * s;
                if (g->beta != 0.0f) {
                    volatile float old = g->beta * c0[ci];
                    v = v + old;
                }
                if (bias) {
                    v = v + bias[g->bias_offset + j];
                    v = v < 0.0f ? 0.0f : v;
                }
                out[ci] = v;
            }
}

/* Runs call c with candidate p, checks C within the bound of the float64
 * reference and bit for bit against the oracle (the whole buffer: nothing
 * outside the region may change), or with same = 0 that the oracle tells it
 * apart, and marks the kernel it ran. */
static void run_call(og_context *ctx, og_gemm *g, int fused, const og_params *p,
                     const chain_call *c, uint64_t *seed, chain_coverage cov, int same)
{
    og_gemm_args args = {.trans_a = c->trans_a,
                         .trans_b = c->trans_b,
                         .m = c->m,
                         .n = c->n,
                         .k = c->k,
                         .batch = c->packed ? 1 : 2,
                         .alpha = c->packed ? 1.5f : -0.625f,
                         .beta = c->packed ? 0.0f : 0.75f};
    int64_t pad = c->packed ? 0 : 1, ra = c->trans_a ? c->k : c->m, rb = c->trans_b ? c->n : c->k;
    args.lda = round4(c->trans_a ? c->m : c->k) + pad;
    args.ldb = round4(c->trans_b ? c->k : c->n) + pad;
    args.ldc = round4(c->n) + pad;
    args.a_offset = pad;
    args.b_offset = 2 * pad;
    args.c_offset = 3 * pad;
    args.stride_a = ra * args.lda + pad;
    args.stride_b = rb * args.ldb + pad;
    args.stride_c = c->m * args.ldc + pad;
    size_t na, nb, nc, eb = og_dtype_bytes(c->dtype);
    og_gemm_extents(&args, &na, &nb, &nc);
    void *a = malloc(na * eb), *b = malloc(nb * eb);
    float *c0 = malloc(nc * sizeof *c0), *got = malloc(nc * sizeof *got),
          *want = malloc(nc * sizeof *want), *bias = malloc((size_t)c->n * sizeof *bias);
    double *ref = malloc(nc * sizeof *ref);
    cr_assert(a && b && c0 && got && want && bias && ref);
    og_fill_random(c->dtype, a, na, seed);
    og_fill_random(c->dtype, b, nb, seed);
    og_fill_random(OG_F32, c0, nc, seed);
    og_fill_random(OG_F32, bias, (size_t)c->n, seed);
    args.a = make_buffer(ctx, a, na * eb);
    args.b = make_buffer(ctx, b, nb * eb);
    args.c = make_buffer(ctx, c0, nc * sizeof *c0);
    args.bias = c->epilogue ? make_buffer(ctx, bias, (size_t)c->n * sizeof *bias) : NULL;
    args.activation = c->epilogue ? OG_ACTIVATION_RELU : OG_ACTIVATION_NONE;

    uint32_t ranges, len;
    documented_ranges(p->split, c->m, c->n, c->k, args.batch, g->scratch_bytes / 4, &ranges, &len);
    og_gemm_config cfg = og_gemm_config_of(g);
    og_params ran = og_params_for_call(&cfg, &ctx->limits, &args, p, ranges > 1 ? len : 0);
    cov[ranges > 1][ran.vec == 4] = 1;

    char what[OG_PARAMS_MAX + 160];
    og_params_format(p, what, sizeof what);
    size_t used = strlen(what);
    snprintf(what + used, sizeof what - used,
             " %s %c%c %lldx%lldx%lld %s%s: %u ranges of %u, vec=%d (%s fma)",
             og_dtype_name(c->dtype), c->trans_a ? 'T' : 'N', c->trans_b ? 'T' : 'N',
             (long long)c->m, (long long)c->n, (long long)c->k, c->packed ? "packed" : "odd",
             c->epilogue ? " bias+ReLU" : "", ranges, len, ran.vec, fused ? "fused" : "unfused");
    cr_assert_eq(run_params(g, ctx, &args, p), OG_OK, "%s: %s", what, og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(args.c, 0, got, nc * sizeof *got), OG_OK);

    chain_oracle(c->dtype, &args, a, b, c0, c->epilogue ? bias : NULL, fused, ranges, len, want);
    size_t e = 0, bad = bits_differ(got, want, nc, &e);
    if (same)
        cr_assert_eq(bad, 0,
                     "%s: %zu elements differ from the documented order; element %zu is %a, the "
                     "order gives %a",
                     what, bad, e, (double)got[e], (double)want[e]);
    else
        cr_assert_gt(bad, 0, "%s: the one-chain oracle gives every bit of it", what);
    if (!c->epilogue) { /* the float64 reference has no bias or activation */
        double metric, max_rel;
        og_reference_gemm(c->dtype, &args, a, b, c0, ref);
        size_t outside = og_compare(&args, ref, got, c0, &metric, &max_rel);
        cr_assert(outside == 0 && metric <= og_dtype_bound(c->dtype),
                  "%s: error %.3g against float64 (bound %.0e), %zu elements wrong outside", what,
                  metric, og_dtype_bound(c->dtype), outside);
    }
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.b);
    og_buffer_destroy(args.c);
    og_buffer_destroy(args.bias);
    free(a);
    free(b);
    free(c0);
    free(got);
    free(want);
    free(bias);
    free(ref);
}

static void check_call(og_context *ctx, og_gemm *g, int fused, const og_params *p,
                       const chain_call *c, uint64_t *seed, chain_coverage cov)
{
    run_call(ctx, g, fused, p, c, seed, cov, 1);
}

/* M, N and K of 1, one below, at, one above and twice plus one the tile's
 * BM, BN and step BK (interior and edge workgroups, whole k steps and the
 * checked ragged one), packed and odd, for each chain tile unsplit: every M
 * with every N, K = ks[(i + j) % 5] so that every M and every N also meet
 * every K (25 shapes, not 125). */
Test(chain, edges_of_every_tile, .timeout = 600)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    uint64_t seed = test_seed();
    og_params cands[MAX_CHAIN], tiles[MAX_CHAIN];
    size_t n = chain_tiles(cands, chain_candidates(&ctx->limits, cands), tiles);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    for (size_t t = 0; t < n; t++) {
        const og_params *p = &tiles[t];
        const int64_t ms[] = {1, p->bm - 1, p->bm, p->bm + 1, 2 * p->bm + 1};
        const int64_t ns[] = {1, p->bn - 1, p->bn, p->bn + 1, 2 * p->bn + 1};
        const int64_t ks[] = {1, p->bk - 1, p->bk, p->bk + 1, 2 * p->bk + 1};
        chain_coverage cov = {{0}};
        for (int packed = 0; packed < 2; packed++)
            for (int i = 0; i < 5; i++)
                for (int j = 0; j < 5; j++) {
                    chain_call c = {OG_F32, 0, 0, ms[i], ns[j], ks[(i + j) % 5], packed, 0};
                    check_call(ctx, g, fused, p, &c, &seed, cov);
                }
        cr_expect(cov[0][0] && cov[0][1], "tile %zu: element loads %s, vector loads %s", t,
                  cov[0][0] ? "ran" : "did not run", cov[0][1] ? "ran" : "did not run");
    }
    og_gemm_destroy(g);
    close_context(ctx);
}

/* Each split count of the spaces (the rule and 2..16) on K cut into ranges
 * of 1 to 256 terms, the last one short or whole: K = 129 (the rule: ranges
 * of 64, 64 and 1; split=16: 15 ranges of 9), 256 and 300; ragged and whole
 * tiles, packed and odd. */
Test(chain, split_ranges, .timeout = 600)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    uint64_t seed = test_seed();
    og_params cands[MAX_CHAIN];
    size_t n = chain_candidates(&ctx->limits, cands);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    chain_coverage cov = {{0}};
    size_t splits = 0;
    for (size_t i = 0; i < n; i++) {
        const og_params *p = &cands[i];
        if (p->split == 1)
            continue;
        splits++;
        const int64_t ks[] = {129, 256, 300};
        const int64_t mn[2][2] = {{p->bm + 1, p->bn - 1}, {p->bm, p->bn}};
        for (int packed = 0; packed < 2; packed++)
            for (int s = 0; s < 2; s++)
                for (int k = 0; k < 3; k++) {
                    chain_call c = {OG_F32, 0, 0, mn[s][0], mn[s][1], ks[k], packed, 0};
                    check_call(ctx, g, fused, p, &c, &seed, cov);
                }
    }
    cr_expect_gt(splits, 0, "the spaces hold no split chain candidate");
    cr_expect(cov[1][0] && cov[1][1], "split calls: element loads %s, vector loads %s",
              cov[1][0] ? "ran" : "did not run", cov[1][1] ? "ran" : "did not run");
    og_gemm_destroy(g);
    close_context(ctx);
}

/* On the first chain tile (loads are the same code in every tile): A and B
 * both transposed (A's vector loads run along m, B's along k), float16 and
 * bfloat16 operands, and storage buffers in place of texel buffers, with
 * vector and element loads (what a call runs whose operands cannot be texel
 * views: a wrapped buffer without texel usage, more elements than
 * maxTexelBufferElements). Per tile, a bias with ReLU fused into the
 * epilogue. */
Test(chain, loads_types_and_fused_epilogue, .timeout = 600)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    uint64_t seed = test_seed();
    og_params cands[MAX_CHAIN], tiles[MAX_CHAIN];
    size_t n = chain_tiles(cands, chain_candidates(&ctx->limits, cands), tiles);
    og_gemm *g32, *g16, *gb16;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g32), OG_OK);
    cr_assert_eq(og_gemm_create(ctx, OG_F16, OG_MODE_FAST, &g16), OG_OK);
    cr_assert_eq(og_gemm_create(ctx, OG_BF16, OG_MODE_FAST, &gb16), OG_OK);
    chain_coverage cov = {{0}};
    for (size_t t = 0; t < n; t++) {
        const og_params *p = &tiles[t];
        int64_t m = 2 * p->bm + 1, nn = 2 * p->bn + 1, k = 2 * p->bk + 1;
        if (t == 0) {
            check_call(ctx, g32, fused, p, &(chain_call){OG_F32, 1, 1, m, nn, k, 1, 0}, &seed, cov);
            check_call(ctx, g16, fused, p, &(chain_call){OG_F16, 0, 0, m, nn, k, 1, 0}, &seed, cov);
            check_call(ctx, gb16, fused, p, &(chain_call){OG_BF16, 0, 0, m, nn, k, 1, 0}, &seed,
                       cov);
            og_params storage = *p;
            storage.src = OG_SRC_STORAGE;
            for (int packed = 0; packed < 2; packed++)
                check_call(ctx, g32, fused, &storage,
                           &(chain_call){OG_F32, 0, 0, m, nn, k, packed, 0}, &seed, cov);
            cr_expect(cov[0][0] && cov[0][1], "element loads %s, vector loads %s",
                      cov[0][0] ? "ran" : "did not run", cov[0][1] ? "ran" : "did not run");
        }
        check_call(ctx, g32, fused, p, &(chain_call){OG_F32, 0, 0, m, nn, k, 0, 1}, &seed, cov);
    }
    og_gemm_destroy(g32);
    og_gemm_destroy(g16);
    og_gemm_destroy(gb16);
    close_context(ctx);
}

/* The oracle is not vacuous: it tells the blocked order (the default tile,
 * within the bound all the same) from one chain once K holds two chains of
 * 16, unsplit and split. */
Test(chain, the_oracle_tells_the_blocked_order_apart)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    uint64_t seed = test_seed();
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    og_params p = og_params_default();
    chain_coverage cov = {{0}};
    for (int split = 0; split < 2; split++) {
        p.split = split ? 4 : 1;
        run_call(ctx, g, fused, &p, &(chain_call){OG_F32, 0, 0, 65, 63, 300, 1, 0}, &seed, cov, 0);
    }
    og_gemm_destroy(g);
    close_context(ctx);
}
