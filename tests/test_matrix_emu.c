/* The cooperative-matrix template on a device without matrices: mat=emu
 * replaces each 16x16x16 fragment operation (load, multiply-add, store)
 * with plain GLSL (templates/gemm_coopmat.tmpl), so everything else of the
 * kernel runs on lavapipe against the float64 reference within the design's
 * bounds (og_problem_verify): the staging copies, the double-buffer halves
 * and the barriers, the subgroups' accumulators, edges, transposes, direct
 * loads, the epilogue and recovered float32's three products. A spread of
 * the tuner's standard space: every tile shape it adds (256 wide, 64x64 per
 * subgroup, k steps of 64, two buffers, subgroups of 64), ragged, batched,
 * beta = 0 over NaN in C. A fault planted in the double buffering (the next
 * step staged into the half being multiplied) is caught. The emulation is
 * never a tuner candidate nor selected. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_plant.h"
#include "og_test.h"
#include "og_text.h"
#include "og_tmpdir.h"
#include "og_travel.h"

TestSuite(emu, .init = make_tmpdir, .fini = remove_tmpdir);

/* One run: a kernel (parameters with mat=emu), its operands and a call. */
typedef struct emu_case {
    const char *params;
    int recovered, scaled; /* recovered float32 (float32 A and B), row and column scaling */
    int trans_a, trans_b;
    int64_t m, n, k, batch;
    float alpha, beta;
    int nan_c; /* C holds NaN where beta = 0 must not read it */
    int relu;
} emu_case;

/* Runs c through the emulated kernel: *accepted as og_problem_verify says,
 * why its reason. */
static void run_case(og_context *ctx, const emu_case *c, int *accepted, char *why, size_t len)
{
    og_params p;
    char err[256] = "";
    cr_assert_eq(og_params_parse(c->params, &p, err, sizeof err), 0, "%s: %s", c->params, err);
    og_gemm_desc d = {.a_type = c->recovered ? OG_F32 : OG_F16,
                      .b_type = c->recovered ? OG_F32 : OG_F16,
                      .mode = OG_MODE_FAST,
                      .precision = c->recovered ? OG_PRECISION_RECOVERED : OG_PRECISION_NATIVE,
                      .range_scaling = c->scaled};
    og_gemm *g;
    cr_assert_eq(og_gemm_create_desc(ctx, &d, &g), OG_OK, "%s", og_context_last_error(ctx));
    og_problem *pr;
    cr_assert_eq(og_problem_create(ctx, c->recovered ? OG_F32 : OG_F16, c->trans_a, c->trans_b,
                                   c->m, c->n, c->k, c->batch, (uint64_t)(c->m * 31 + c->k), &pr),
                 OG_OK);
    if (c->nan_c)
        for (size_t e = 0; e < pr->nc; e++)
            pr->c0[e] = NAN;
    pr->args.activation = c->relu ? OG_ACTIVATION_RELU : OG_ACTIVATION_NONE;
    problem_scalars(pr, c->alpha, c->beta);
    if (c->relu)
        for (size_t e = 0; e < pr->nc; e++)
            pr->ref[e] = pr->ref[e] < 0 ? 0 : pr->ref[e];
    double metric;
    cr_assert_eq(og_problem_verify(g, pr, &p, accepted, &metric, why, len), OG_OK, "%s: %s",
                 c->params, og_context_last_error(ctx));
    og_problem_destroy(pr);
    og_gemm_destroy(g);
}

/* The spread: each new shape of the standard space in lavapipe's 32 KiB of
 * workgroup memory (pad 0 where 8 would not fit), staged and direct (K and
 * the transposed extents multiples of 8, so interior tiles load directly
 * and a partial last step is staged), one and two buffers, k steps of 16,
 * 32 and 64, every transpose, sizes 1, 17, 33, 130 and 257. */
static const emu_case cases[] = {
    /* The design's default tile, staged, ragged and batched. */
    {"variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,load=staged,mat=emu", 0, 0, 0, 0, 130, 17,
     57, 2, 0.75f, 0.5f, 0, 0},
    /* 128x128, 64x64 per subgroup (16 accumulators), k 32, direct. */
    {"variant=coopmat,bm=128,bn=128,bk=32,sgx=2,sgy=2,pad=0,load=direct,mat=emu", 0, 0, 0, 1, 130,
     136, 72, 1, 1.0f, 0.0f, 1, 0},
    /* 256x128, 64x64 per subgroup, two buffers, direct, A transposed. */
    {"variant=coopmat,bm=256,bn=128,bk=16,sgx=2,sgy=4,pad=0,load=direct,mat=emu,buf=2", 0, 0, 1, 0,
     264, 136, 88, 1, -1.25f, 0.5f, 0, 0},
    /* 128x256 (N the long side), one buffer, padded, staged, both transposed. */
    {"variant=coopmat,bm=128,bn=256,bk=16,sgx=4,sgy=2,pad=8,load=staged,mat=emu", 0, 0, 1, 1, 257,
     1, 40, 1, 1.0f, 0.0f, 1, 1},
    /* k step 64, two buffers, a narrow tile, direct. */
    {"variant=coopmat,bm=32,bn=64,bk=64,sgx=2,sgy=1,pad=8,load=direct,mat=emu,buf=2", 0, 0, 0, 0,
     33, 136, 200, 3, 0.5f, -1.0f, 0, 0},
    /* k step 64, one buffer, 128x64, staged, B transposed. */
    {"variant=coopmat,bm=128,bn=64,bk=64,sgx=2,sgy=2,pad=0,load=staged,mat=emu", 0, 0, 0, 1, 129,
     65, 130, 1, 1.0f, 1.0f, 0, 0},
    /* Subgroups of 64 (wave64): 128x128, two buffers, direct. */
    {"variant=coopmat,bm=128,bn=128,bk=16,sgx=2,sgy=2,pad=0,load=direct,mat=emu,sub=64,buf=2", 0, 0,
     0, 0, 256, 136, 48, 1, 1.0f, 0.0f, 1, 0},
    /* Recovered float32, two buffers, 64x32 per subgroup (8 + 8 accumulators). */
    {"variant=coopmat,bm=128,bn=64,bk=16,sgx=2,sgy=2,pad=0,load=staged,mat=emu,buf=2", 1, 0, 0, 1,
     130, 70, 100, 2, 1.0f, 0.0f, 1, 0},
    /* Recovered and scaled, k 32, one buffer, A transposed. */
    {"variant=coopmat,bm=64,bn=64,bk=32,sgx=4,sgy=2,pad=0,load=staged,mat=emu", 1, 1, 1, 0, 65, 66,
     300, 1, 1.25f, -0.5f, 0, 1},
};

Test(emu, the_spread_of_the_space_is_right, .timeout = 600)
{
    og_context *ctx = open_context();
    if (!ctx->limits.matrix.float16 || !ctx->limits.matrix.storage16) {
        close_context(ctx);
        cr_skip_test("the emulated kernels need shaderFloat16 and storageBuffer16BitAccess");
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int accepted;
        char why[512] = "";
        run_case(ctx, &cases[i], &accepted, why, sizeof why);
        cr_expect(accepted, "%s%s at %lldx%lldx%lld x%lld (op %c%c): %s", cases[i].params,
                  cases[i].recovered ? " recovered" : "", (long long)cases[i].m,
                  (long long)cases[i].n, (long long)cases[i].k, (long long)cases[i].batch,
                  cases[i].trans_a ? 'T' : 'N', cases[i].trans_b ? 'T' : 'N', why);
    }
    close_context(ctx);
}

/* The split of recovered float32 (og_half, integer arithmetic since the
 * H200 folded packHalf2x16 and back): with B the identity, C is each
 * element of A as hi + lo * 2^-11, hi = float16(A) and lo = float16 of the
 * scaled residual, which the host forms with og_f32_to_f16 (IEEE 754 round
 * to nearest even). A holds float16 ties at every exponent, values in
 * float16's subnormal range and below it, up to float16's largest, and
 * zeros of both signs: C must match bit for bit. */
Test(emu, the_recovered_split_rounds_as_float16, .timeout = 300)
{
    og_context *ctx = open_context();
    if (!ctx->limits.matrix.float16 || !ctx->limits.matrix.storage16) {
        close_context(ctx);
        cr_skip_test("the emulated kernels need shaderFloat16 and storageBuffer16BitAccess");
    }
    enum { N = 64 };
    og_params p;
    char err[512] = "";
    cr_assert_eq(og_params_parse("variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,"
                                 "load=staged,mat=emu",
                                 &p, err, sizeof err),
                 0, "%s", err);
    og_gemm_desc d = {.a_type = OG_F32, .b_type = OG_F32, .precision = OG_PRECISION_RECOVERED};
    og_gemm *g;
    cr_assert_eq(og_gemm_create_desc(ctx, &d, &g), OG_OK, "%s", og_context_last_error(ctx));
    og_problem *pr;
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, N, N, N, 1, 7, &pr), OG_OK);
    cr_assert_eq(pr->args.lda, N);
    float *a = pr->a, *b = pr->b, want[N * N];
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < N * N; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(seed >> 33);
        int e = (int)(r % 43) - 27; /* 2^-27 .. 2^15 */
        float mant = i % 3 == 0 ? 1.0f + (float)(2 * (r >> 8 & 1023) + 1) / 2048.0f /* a tie */
                                : 1.0f + (float)(r >> 8 & 0x7fffff) / 8388608.0f;
        a[i] = ldexpf(r & 1 ? -mant : mant, e);
    }
    a[0] = 0.0f;
    a[1] = -0.0f;
    a[2] = 65504.0f;         /* float16's largest */
    a[3] = 65519.0f;         /* rounds down to it */
    a[4] = ldexpf(1.0f, -25); /* the tie between 0 and float16's least */
    a[5] = ldexpf(3.0f, -26); /* above it: the least */
    for (int i = 0; i < N * N; i++) {
        b[i] = i / N == i % N ? 1.0f : 0.0f;
        float hi = og_f16_to_f32(og_f32_to_f16(a[i], OG_ROUND_NEAREST_EVEN));
        float lo = og_f16_to_f32(og_f32_to_f16((a[i] - hi) * 2048.0f, OG_ROUND_NEAREST_EVEN));
        want[i] = hi + lo / 2048.0f;
        pr->ref[i] = want[i];
    }
    cr_assert_eq(og_buffer_write(pr->args.a, 0, a, sizeof(float) * N * N), OG_OK);
    cr_assert_eq(og_buffer_write(pr->args.b, 0, b, sizeof(float) * N * N), OG_OK);
    int accepted;
    double metric;
    char why[256] = "";
    cr_assert_eq(og_problem_verify(g, pr, &p, &accepted, &metric, why, sizeof why), OG_OK, "%s",
                 og_context_last_error(ctx));
    int wrong = 0;
    for (int i = 0; i < N * N && wrong < 8; i++)
        if (pr->c[i] != want[i] || (want[i] == 0.0f && signbit(pr->c[i]) != signbit(want[i]))) {
            cr_expect_fail("A[%d] = %a: C %a, hi + lo * 2^-11 = %a", i, a[i], pr->c[i], want[i]);
            wrong++;
        }
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* The fault: the next k step staged into the half being multiplied. The
 * built-in template passes the case, the planted one is rejected. */
Test(emu, a_fault_in_the_double_buffering_is_caught, .timeout = 300)
{
    static const char at[] = "@   stage(\"k0 + \" .. BK .. \"u\", \"(cur ^ 1u)\")";
    static const char put[] = "@   stage(\"k0 + \" .. BK .. \"u\", \"cur\")";
    og_context *ctx = open_context();
    if (!ctx->limits.matrix.float16) {
        close_context(ctx);
        cr_skip_test("the emulated kernels need shaderFloat16");
    }
    const emu_case c = {"variant=coopmat,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8,load=staged,"
                        "mat=emu,buf=2",
                        0,
                        0,
                        0,
                        0,
                        64,
                        64,
                        64,
                        1,
                        1.0f,
                        0.0f,
                        0,
                        0};
    int accepted;
    char why[512] = "";
    run_case(ctx, &c, &accepted, why, sizeof why);
    cr_assert(accepted, "built-in: %s", why);
    close_context(ctx);

    plant_template("gemm_coopmat", at, put);
    ctx = open_context();
    run_case(ctx, &c, &accepted, why, sizeof why);
    cr_log_info("planted: %s", accepted ? "accepted" : why);
    cr_expect(!accepted, "the kernel staging into the half it multiplies was accepted");
    close_context(ctx);
    unsetenv("OG_TEMPLATE_DIR");
}

/* The emulation is the tests': never a candidate of the tuner's space,
 * never a choice, refused from a tuning record. */
Test(emu, never_a_candidate_or_a_choice)
{
    og_context *ctx = open_context();
    og_params *space = NULL;
    size_t n = 0;
    og_shape cube = {1024, 1024, 1024, 1};
    cr_assert_eq(og_space(&ctx->limits, OG_PRESET_STANDARD, OG_F16, 0, 0, &cube, &space, &n),
                 OG_OK);
    for (size_t i = 0; i < n; i++)
        cr_expect(space[i].variant != OG_VARIANT_COOPMAT || space[i].mat != OG_MATRIX_EMU);
    free(space);
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    og_matrix_choose(&ctx->limits, OG_F16, OG_MODE_FAST, notes);
    for (int i = 0; i < OG_MATRIX_VARIANTS; i++)
        cr_expect_neq(notes[i].params.mat, OG_MATRIX_EMU);
    og_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.key.op, sizeof r.key.op, "gemm");
    snprintf(r.template_name, sizeof r.template_name, "gemm_coopmat");
    r.template_hash = og_template_hash("gemm_coopmat");
    snprintf(r.params, sizeof r.params,
             "variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,load=staged,mat=emu");
    r.m = r.n = r.k = r.batch = 64;
    char why[256] = "";
    cr_expect_eq(og_record_check(&r, why, sizeof why), -1);
    cr_expect_not_null(strstr(why, "mat=emu"), "%s", why);
    close_context(ctx);
}
