/* The cooperative-matrix kernels executed: run on a device that lists
 * VK_KHR_cooperative_matrix shapes (Mesa 26's lavapipe through
 * scripts/mesa26.sh run, CTest label mesa26: 8x8x8 fragments in subgroups
 * of 8), the KHR kernels of templates/gemm_coopmat.tmpl, with the device's
 * own fragment and subgroup size, against the float64 reference within the
 * design's bounds (og_problem_verify: float16 2e-3, recovered float32 1e-5,
 * C untouched outside its region, NaN in C unread with beta = 0): every
 * op(A) x op(B), sizes around the tile edges, batches, staged and direct
 * loads, one and two buffers, the epilogue, recovered float32 with and
 * without range scaling; through the public API (the default matrix kernel
 * as Fast mode selects it, odd offsets, one and two buffers); the emulated
 * kernel (mat=emu) against the real one on the same inputs; the rewritten
 * KHR module against one compiled directly from GL_KHR_cooperative_matrix
 * GLSL by the lane's current glslang; and faults planted in the fragment
 * handling, each of which must fail the real run.
 * On a device without KHR matrices every test fails: this file is the
 * lane's evidence, never skipped. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "og_khr_glsl.h"
#include "og_lane.h"
#include "og_plant.h"
#include "og_test.h"
#include "onegpu_formats.h"
#include "og_text.h"
#include "og_tmpdir.h"

TestSuite(lane, .init = make_tmpdir, .fini = remove_tmpdir);

/* base ("variant=coopmat,bm=..,load=..") with the extension, the device's
 * subgroup size and fragment, and extra (",buf=2" or ""). */
static og_params lane_params(const og_params *khr, const char *base, og_matrix_ext mat,
                             const char *extra)
{
    char text[OG_PARAMS_MAX + 64], err[256] = "";
    snprintf(text, sizeof text, "%s,mat=%s,sub=%d,frag=%dx%dx%d%s", base,
             mat == OG_MATRIX_EMU ? "emu" : "khr", khr->sub, khr->fm, khr->fn, khr->fk, extra);
    og_params p;
    cr_assert_eq(og_params_parse(text, &p, err, sizeof err), 0, "%s: %s", text, err);
    return p;
}

/* One run: a kernel, its operands and a call. */
typedef struct lane_case {
    const char *base, *extra;
    int recovered, scaled; /* recovered float32 (float32 A and B), row and column scaling */
    int trans_a, trans_b;
    int64_t m, n, k, batch;
    float alpha, beta;
    int nan_c; /* C holds NaN where beta = 0 must not read it */
    og_activation act;
} lane_case;

static og_gemm *case_gemm(og_context *ctx, const lane_case *c)
{
    og_gemm_desc d = {.a_type = c->recovered ? OG_F32 : OG_F16,
                      .b_type = c->recovered ? OG_F32 : OG_F16,
                      .mode = OG_MODE_FAST,
                      .precision = c->recovered ? OG_PRECISION_RECOVERED : OG_PRECISION_NATIVE,
                      .range_scaling = c->scaled};
    og_gemm *g;
    cr_assert_eq(og_gemm_create_desc(ctx, &d, &g), OG_OK, "%s", og_context_last_error(ctx));
    return g;
}

/* The activation applied to the reference (bias 0). */
static double activated(double v, og_activation act)
{
    switch (act) {
    case OG_ACTIVATION_RELU:
        return v < 0 ? 0 : v;
    case OG_ACTIVATION_GELU_ERF:
        return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    case OG_ACTIVATION_GELU_TANH:
        return 0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
    default:
        return v;
    }
}

/* c's problem on ctx (reference with alpha, beta and the activation). */
static og_problem *case_problem(og_context *ctx, const lane_case *c)
{
    og_problem *pr;
    cr_assert_eq(og_problem_create(ctx, c->recovered ? OG_F32 : OG_F16, c->trans_a, c->trans_b,
                                   c->m, c->n, c->k, c->batch, (uint64_t)(c->m * 31 + c->k), &pr),
                 OG_OK);
    if (c->nan_c)
        for (size_t e = 0; e < pr->nc; e++)
            pr->c0[e] = NAN;
    pr->args.activation = c->act;
    problem_scalars(pr, c->alpha, c->beta);
    for (size_t e = 0; e < pr->nc; e++)
        pr->ref[e] = activated(pr->ref[e], c->act);
    return pr;
}

/* Runs c with parameters p: *accepted as og_problem_verify says, why its
 * reason; C read back into got (pr->nc floats) when got is given. */
static void run_case(og_context *ctx, const lane_case *c, const og_params *p, int *accepted,
                     char *why, size_t len, float *got)
{
    og_gemm *g = case_gemm(ctx, c);
    og_problem *pr = case_problem(ctx, c);
    double metric;
    cr_assert_eq(og_problem_verify(g, pr, p, accepted, &metric, why, len), OG_OK, "%s: %s",
                 c->base, og_context_last_error(ctx));
    if (got)
        memcpy(got, pr->c, pr->nc * sizeof *got);
    og_problem_destroy(pr);
    og_gemm_destroy(g);
}

/* Tiles that fit lavapipe's 32 KiB of workgroup memory with 8x8 fragments
 * (at most 16 accumulators a subgroup: 32x32 of C), staged and direct (K
 * and the transposed extents multiples of 8 where interior tiles should
 * load directly, a partial last step staged), one and two buffers, k steps
 * of 16, 32 and 64, every transpose, sizes 1 to 264, batches up to 3,
 * alpha and beta, NaN in C under beta = 0, each activation. */
static const lane_case cases[] = {
    /* The design's default tile, 8 subgroups, staged, ragged and batched. */
    {"variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,load=staged", "", 0, 0, 0, 0, 130, 17,
     57, 2, 0.75f, 0.5f, 0, OG_ACTIVATION_NONE},
    /* 4 subgroups (32x32 each: 16 accumulators), direct, B transposed, beta 0 over NaN. */
    {"variant=coopmat,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8,load=direct", "", 0, 0, 0, 1, 130, 136,
     72, 1, 1.0f, 0.0f, 1, OG_ACTIVATION_NONE},
    /* 128x128 of 16 subgroups, two buffers, direct, A transposed. */
    {"variant=coopmat,bm=128,bn=128,bk=16,sgx=4,sgy=4,pad=0,load=direct", ",buf=2", 0, 0, 1, 0,
     264, 136, 88, 1, -1.25f, 0.5f, 0, OG_ACTIVATION_NONE},
    /* k step 64, 128x64, one buffer, staged, B transposed, beta 1. */
    {"variant=coopmat,bm=128,bn=64,bk=64,sgx=2,sgy=4,pad=0,load=staged", "", 0, 0, 0, 1, 129, 65,
     130, 1, 1.0f, 1.0f, 0, OG_ACTIVATION_NONE},
    /* k step 64, two buffers, a narrow tile, direct, batched. */
    {"variant=coopmat,bm=32,bn=64,bk=64,sgx=2,sgy=1,pad=8,load=direct", ",buf=2", 0, 0, 0, 0, 33,
     136, 200, 3, 0.5f, -1.0f, 0, OG_ACTIVATION_NONE},
    /* k step 32, both transposed, one column, ReLU over NaN in C. */
    {"variant=coopmat,bm=64,bn=128,bk=32,sgx=4,sgy=2,pad=8,load=staged", "", 0, 0, 1, 1, 257, 1,
     40, 1, 1.0f, 0.0f, 1, OG_ACTIVATION_RELU},
    /* One element; GELU (erf). */
    {"variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,load=direct", "", 0, 0, 0, 0, 1, 1, 1,
     1, 2.0f, 0.0f, 0, OG_ACTIVATION_GELU_ERF},
    /* Recovered float32, two buffers, B transposed, batched. */
    {"variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=0,load=staged", ",buf=2", 1, 0, 0, 1, 130,
     70, 100, 2, 1.0f, 0.0f, 1, OG_ACTIVATION_NONE},
    /* Recovered and scaled, k 32, A transposed, ReLU. */
    {"variant=coopmat,bm=64,bn=64,bk=32,sgx=2,sgy=2,pad=0,load=staged", "", 1, 1, 1, 0, 65, 66,
     300, 1, 1.25f, -0.5f, 0, OG_ACTIVATION_RELU},
    /* GELU (tanh), k 16, staged, 8 subgroups, batched. */
    {"variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,load=staged", "", 0, 0, 1, 1, 72, 90,
     17, 2, 1.0f, 0.5f, 0, OG_ACTIVATION_GELU_TANH},
};
#define N_CASES (sizeof cases / sizeof cases[0])

static void describe(const lane_case *c, const og_params *p, char *out, size_t len)
{
    char text[OG_PARAMS_MAX];
    og_params_format(p, text, sizeof text);
    snprintf(out, len, "%s%s at %lldx%lldx%lld x%lld (op %c%c)", text,
             c->recovered ? (c->scaled ? " recovered, scaled" : " recovered") : "",
             (long long)c->m, (long long)c->n, (long long)c->k, (long long)c->batch,
             c->trans_a ? 'T' : 'N', c->trans_b ? 'T' : 'N');
}

/* Runs c with p on ctx and expects it accepted; returns whether it was. */
static int expect_right(og_context *ctx, const lane_case *c, const og_params *p)
{
    char what[512], why[512] = "";
    int accepted;
    run_case(ctx, c, p, &accepted, why, sizeof why, NULL);
    if (!accepted) {
        describe(c, p, what, sizeof what);
        cr_expect(accepted, "%s: %s", what, why);
    }
    return accepted;
}

Test(lane, khr_kernels_are_right, .timeout = 900)
{
    og_params khr;
    og_context *ctx = lane_matrix_context(&khr);
    for (size_t i = 0; i < N_CASES; i++) {
        const lane_case *c = &cases[i];
        og_params p = lane_params(&khr, c->base, OG_MATRIX_KHR, c->extra);
        expect_right(ctx, c, &p);
    }
    close_context(ctx);
}

/* The default KHR kernel (8 subgroups, staged) and the 4-subgroup one
 * (direct loads) at every size around the edges of the 64x64 tile and of
 * the fragments, M and N of 1 to 257, every op(A) x op(B), K around the k
 * step and the fragment's k. */
Test(lane, every_size_around_the_tile_edges, .timeout = 900)
{
    og_params khr;
    og_context *ctx = lane_matrix_context(&khr);
    static const int64_t sizes[] = {1, 7, 8, 9, 63, 64, 65, 129, 257};
    static const int64_t ks[] = {1, 8, 15, 16, 17, 40, 65};
    static const char *const bases[] = {
        "variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,load=staged",
        "variant=coopmat,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8,load=direct"};
    size_t runs = 0, wrong = 0;
    for (size_t v = 0; v < 2; v++) {
        og_params p = lane_params(&khr, bases[v], OG_MATRIX_KHR, "");
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
                lane_case c = {bases[v], "", 0, 0, (int)((i + j) % 2), (int)((i + j + v) / 2 % 2),
                               sizes[i], sizes[j], ks[(i + 2 * j + v) % 7], 1, 1.0f, 0.0f, 1,
                               OG_ACTIVATION_NONE};
                runs++;
                wrong += !expect_right(ctx, &c, &p);
            }
    }
    cr_log_info("%zu sizes around the tile edges, %zu wrong", runs, wrong);
    close_context(ctx);
}

/* The emulation and the hardware on the same inputs: both within the
 * bounds, and within float16's bound of each other (the order of the
 * products inside a fragment is the hardware's, so not bit for bit). */
Test(lane, emulated_and_real_agree, .timeout = 900)
{
    og_params khr;
    og_context *ctx = lane_matrix_context(&khr);
    for (size_t i = 0; i < N_CASES; i += 2) {
        const lane_case *c = &cases[i];
        og_params real = lane_params(&khr, c->base, OG_MATRIX_KHR, c->extra),
                  emu = lane_params(&khr, c->base, OG_MATRIX_EMU, c->extra);
        size_t nc = (size_t)(c->m * c->n * c->batch) + 4096;
        float *a = calloc(nc, sizeof *a), *b = calloc(nc, sizeof *b);
        cr_assert(a && b);
        char what[512], why[512] = "";
        describe(c, &real, what, sizeof what);
        int ok_real, ok_emu;
        run_case(ctx, c, &real, &ok_real, why, sizeof why, a);
        cr_expect(ok_real, "%s: %s", what, why);
        run_case(ctx, c, &emu, &ok_emu, why, sizeof why, b);
        cr_expect(ok_emu, "emulated %s: %s", what, why);
        double diff = 0, big = 0;
        for (size_t e = 0; e < nc; e++) {
            if (isnan(a[e]) && isnan(b[e]))
                continue;
            double d = fabs((double)a[e] - (double)b[e]);
            diff = d > diff || isnan(d) ? d : diff;
            big = fabs((double)a[e]) > big ? fabs((double)a[e]) : big;
        }
        double bound = c->recovered ? 2e-5 : 4e-3;
        cr_expect(diff <= bound * big, "%s: emulated and real differ by %g (largest %g)", what,
                  diff, big);
        free(a);
        free(b);
    }
    close_context(ctx);
}

/* The public API: Fast mode's default for float16 is the KHR kernel, right
 * for a small grid with a long k, A, B and C at odd element offsets inside
 * one buffer (and inside three), bias and GELU. */
Test(lane, the_default_through_the_api, .timeout = 600)
{
    og_params khr;
    og_context *ctx = lane_matrix_context(&khr);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F16, OG_MODE_FAST, &g), OG_OK);
    const int64_t m = 37, n = 70, k = 1500, oa = 3, ob = 5, oc = 7;
    og_gemm_args args = {.m = m, .n = n, .k = k, .alpha = 0.5f, .beta = 0.25f, .lda = k,
                         .ldb = n, .ldc = n, .activation = OG_ACTIVATION_GELU_ERF};
    og_params chosen;
    cr_assert_eq(og_gemm_choose(g, &args, &chosen), OG_OK);
    cr_expect(chosen.variant == OG_VARIANT_COOPMAT && chosen.mat == OG_MATRIX_KHR &&
                  chosen.fm == khr.fm && chosen.fk == khr.fk && chosen.sub == khr.sub,
              "Fast mode's float16 default is not the KHR kernel");
    size_t na = (size_t)(m * k), nb = (size_t)(k * n), nc = (size_t)(m * n);
    uint16_t *a = malloc(na * 2), *b = malloc(nb * 2);
    float *c = malloc(nc * 4), *bias = malloc((size_t)n * 4), *got = malloc(nc * 4);
    cr_assert(a && b && c && bias && got);
    uint64_t s = 12345;
    for (size_t e = 0; e < na + nb; e++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        float v = (float)((int)(s >> 40) % 2001 - 1000) / 1000.0f;
        uint16_t h = og_f32_to_f16(v, OG_ROUND_NEAREST_EVEN);
        if (e < na)
            a[e] = h;
        else
            b[e - na] = h;
    }
    for (size_t e = 0; e < nc; e++)
        c[e] = (float)(e % 7) - 3.0f;
    for (int64_t j = 0; j < n; j++)
        bias[j] = (float)j / 16.0f;
    for (int one = 0; one < 2; one++) {
        og_buffer *all = NULL, *bufs[3] = {NULL, NULL, NULL};
        size_t off_b = (size_t)oa * 2 + na * 2, off_c = ((off_b + nb * 2 + 3) / 4) * 4;
        if (one) { /* A, B and C in one buffer, at odd element offsets */
            cr_assert_eq(og_buffer_create(ctx, off_c + (size_t)(oc + 1) * 4 + nc * 4, &all), OG_OK);
            cr_assert_eq(og_buffer_write(all, (size_t)oa * 2, a, na * 2), OG_OK);
            cr_assert_eq(og_buffer_write(all, off_b + (size_t)ob * 2, b, nb * 2), OG_OK);
            cr_assert_eq(og_buffer_write(all, off_c + (size_t)oc * 4, c, nc * 4), OG_OK);
            args.a = args.b = args.c = all;
            args.a_offset = oa;
            args.b_offset = (off_b / 2) + (size_t)ob;
            args.c_offset = off_c / 4 + (size_t)oc;
        } else {
            bufs[0] = make_buffer(ctx, a, na * 2);
            bufs[1] = make_buffer(ctx, b, nb * 2);
            bufs[2] = make_buffer(ctx, c, nc * 4);
            args.a = bufs[0];
            args.b = bufs[1];
            args.c = bufs[2];
            args.a_offset = args.b_offset = args.c_offset = 0;
        }
        og_buffer *bias_buf = make_buffer(ctx, bias, (size_t)n * 4);
        args.bias = bias_buf;
        cr_assert_eq(og_gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(args.c, args.c_offset * 4, got, nc * 4), OG_OK);
        double worst = 0, big = 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double sum = 0;
                for (int64_t q = 0; q < k; q++)
                    sum += (double)og_f16_to_f32(a[i * k + q]) *
                           (double)og_f16_to_f32(b[q * n + j]);
                double want = activated(0.5 * sum + 0.25 * c[i * n + j] + bias[j],
                                        OG_ACTIVATION_GELU_ERF);
                double d = fabs(want - (double)got[i * n + j]);
                worst = d > worst || isnan(d) ? d : worst;
                big = fabs(want) > big ? fabs(want) : big;
            }
        cr_expect(worst <= 2e-3 * big, "%s buffer(s): error %g of %g", one ? "one" : "three",
                  worst, big);
        og_buffer_destroy(bias_buf);
        for (int i = 0; i < 3; i++)
            if (bufs[i])
                og_buffer_destroy(bufs[i]);
        if (all)
            og_buffer_destroy(all);
    }
    free(a);
    free(b);
    free(c);
    free(bias);
    free(got);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* A fault planted in a copy of template (OG_TEMPLATE_DIR): edits holds
 * pairs of text and its replacement, NULL after the last. The built-in
 * kernel p passes case c, the planted one must fail it. */
static void planted_in(const char *template, const char *what, const char *const *edits,
                       const lane_case *c, const og_params *p)
{
    og_context *ctx = open_context();
    int accepted;
    char why[512] = "";
    run_case(ctx, c, p, &accepted, why, sizeof why, NULL);
    cr_assert(accepted, "built-in: %s", why);
    close_context(ctx);

    plant_template(template, edits[0], edits[1]);
    for (size_t i = 2; edits[i]; i += 2)
        plant_again(template, edits[i], edits[i + 1]);
    ctx = open_context();
    run_case(ctx, c, p, &accepted, why, sizeof why, NULL);
    cr_log_info("planted %s: %s", what, accepted ? "accepted" : why);
    cr_expect(!accepted, "the kernel with %s was accepted", what);
    close_context(ctx);
    unsetenv("OG_TEMPLATE_DIR");
}

/* The same in the matrix tile's template, with the device's fragment. */
static void planted(const char *what, const char *at, const char *put, const lane_case *c,
                    const char *extra)
{
    og_params khr;
    close_context(lane_matrix_context(&khr));
    og_params p = lane_params(&khr, c->base, OG_MATRIX_KHR, extra);
    const char *const edits[] = {at, put, NULL};
    planted_in("gemm_coopmat", what, edits, c, &p);
}

static const lane_case square = {"variant=coopmat,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8,load=staged",
                                 "",
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
                                 OG_ACTIVATION_NONE};

/* B's fragments loaded column-major from the row-major B tile. */
Test(lane, b_loaded_with_the_wrong_layout_fails, .timeout = 300)
{
    planted("B loaded column-major",
            "${load_b(\"fb\" .. j, \"b_tile\", (\"%s * %du + kk * %du + sg_col + %du\"):format(cur, "
            "BS, BP, FRAG_N * j), BP .. \"u\", false,",
            "${load_b(\"fb\" .. j, \"b_tile\", (\"%s * %du + kk * %du + sg_col + %du\"):format(cur, "
            "BS, BP, FRAG_N * j), BP .. \"u\", true,",
            &square, "");
}

/* A's fragments read with a row stride one element too long. */
Test(lane, a_fragment_stride_off_by_one_fails, .timeout = 300)
{
    planted("A's fragment stride off by one",
            "${load_a(\"fa\" .. i, \"a_tile\", (\"%s * %du + (sg_row + %du) * %du + kk\"):format(cur, "
            "AS, FRAG_M * i, AP), AP .. \"u\",",
            "${load_a(\"fa\" .. i, \"a_tile\", (\"%s * %du + (sg_row + %du) * %du + kk\"):format(cur, "
            "AS, FRAG_M * i, AP), (AP + 1) .. \"u\",",
            &square, "");
}

/* No barrier between the double-buffered halves: the next step is staged
 * while other subgroups still multiply the half it overwrites next. */
Test(lane, a_missing_barrier_between_the_halves_fails, .timeout = 300)
{
    planted("no barrier between the double-buffered halves",
            "@   multiply(\"cur\")\n        barrier();\n", "@   multiply(\"cur\")\n", &square,
            ",buf=2");
}

/* The SPIR-V the lane's glslang makes of GLSL text: malloc'ed words. */
static uint32_t *glslang_compile(const char *glsl, size_t *count)
{
    const char *root = getenv("OG_MESA26_ROOT");
    cr_assert_not_null(root, "OG_MESA26_ROOT is unset: run through scripts/mesa26.sh run");
    char src[512], spv[512], cmd[2048];
    tmp_path(src, sizeof src, "khr.comp");
    tmp_path(spv, sizeof spv, "khr.spv");
    write_text(src, glsl);
    snprintf(cmd, sizeof cmd,
             "'%s/bin/glslangValidator' -V --target-env vulkan1.3 -S comp -o '%s' '%s' >&2", root,
             spv, src);
    cr_assert_eq(system(cmd), 0, "%s failed", cmd);
    FILE *f = fopen(spv, "rb");
    cr_assert_not_null(f, "no %s", spv);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long bytes = ftell(f);
    cr_assert(bytes > 20 && bytes % 4 == 0, "%s: %ld bytes", spv, bytes);
    rewind(f);
    uint32_t *words = malloc((size_t)bytes);
    cr_assert_not_null(words);
    cr_assert_eq(fread(words, 1, (size_t)bytes, f), (size_t)bytes);
    fclose(f);
    *count = (size_t)bytes / 4;
    return words;
}

/* Item 7 of the lane: a kernel compiled directly from GLSL with
 * GL_KHR_cooperative_matrix by the lane's glslang 15 gives, bit for bit,
 * what the rewrite of the NV module Debian 12's glslang compiles gives, on
 * the same inputs. The direct module takes the rewritten one's place in a
 * SPIR-V cache of the test's own (the runtime's cache is keyed by the
 * kernel, so a new context runs it); that the swap takes effect is shown
 * by a direct module with B loaded column-major, which fails. */
Test(lane, direct_khr_glsl_matches_the_rewrite, .timeout = 600)
{
    char cache[512];
    tmp_path(cache, sizeof cache, "cache");
    cr_assert_eq(mkdir(cache, 0700), 0);
    cr_assert_eq(setenv("XDG_CACHE_HOME", cache, 1), 0);
    og_params khr;
    og_context *ctx = lane_matrix_context(&khr);
    const lane_case c = {"variant=coopmat,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8,load=direct",
                         "",
                         0,
                         0,
                         0,
                         1,
                         130,
                         72,
                         96,
                         2,
                         0.75f,
                         0.5f,
                         0,
                         OG_ACTIVATION_NONE};
    og_params p = lane_params(&khr, c.base, OG_MATRIX_KHR, c.extra);
    size_t nc = (size_t)(c.m * c.n * c.batch);
    float *rewritten = malloc(nc * sizeof *rewritten), *direct = malloc(nc * sizeof *direct);
    cr_assert(rewritten && direct);
    int accepted;
    char why[512] = "";
    run_case(ctx, &c, &p, &accepted, why, sizeof why, rewritten);
    cr_assert(accepted, "rewritten: %s", why);
    close_context(ctx);

    /* The kernel as the runtime keys it, and its NV source. */
    og_kernel_key key;
    memset(&key, 0, sizeof key);
    key.kernel = OG_KERNEL_GEMM;
    key.p = p;
    key.dtype = OG_F16;
    key.trans_b = 1;
    key.dialect = OG_GLSL;
    uint32_t *cached;
    size_t n_cached;
    cr_assert(og_spirv_cache_load(&key, &cached, &n_cached),
              "the run left no cached module under the key the test computes");
    free(cached);
    char *nv_src, err[2048] = "";
    cr_assert_eq(og_gen_source(&key, &nv_src, err, sizeof err), OG_OK, "%s", err);
    char *khr_src = khr_glsl(nv_src);
    free(nv_src);
    cr_assert_eq(count(khr_src, "NV"), 0, "NV left in the KHR GLSL");

    size_t n_words;
    uint32_t *words = glslang_compile(khr_src, &n_words);
    og_spirv_cache_store(&key, words, n_words);
    free(words);
    ctx = open_context();
    run_case(ctx, &c, &p, &accepted, why, sizeof why, direct);
    cr_expect(accepted, "direct KHR: %s", why);
    size_t differ = 0;
    for (size_t e = 0; e < nc; e++)
        differ += memcmp(&rewritten[e], &direct[e], sizeof *direct) != 0;
    cr_expect_eq(differ, 0, "%zu of %zu elements differ between the rewritten and the direct KHR "
                 "module", differ, nc);
    close_context(ctx);

    /* The swap takes effect: B's fragments loaded column-major fail. */
    static const char row_b[] = ", b_half, b_base";
    char *at = strstr(khr_src, row_b);
    cr_assert_not_null(at, "no direct B load in the KHR GLSL");
    char *end = strstr(at, "gl_CooperativeMatrixLayoutColumnMajor);");
    cr_assert_not_null(end, "the direct B load (B transposed) is not column-major");
    char *faulty = replaced(strdup(khr_src), "b_base + (col0 + sg_col + 0u) * pc.ldb + (k0 + kk), "
                                             "pc.ldb, gl_CooperativeMatrixLayoutColumnMajor);",
                            "b_base + (col0 + sg_col + 0u) * pc.ldb + (k0 + kk), pc.ldb, "
                            "gl_CooperativeMatrixLayoutRowMajor);");
    words = glslang_compile(faulty, &n_words);
    og_spirv_cache_store(&key, words, n_words);
    free(words);
    free(faulty);
    ctx = open_context();
    run_case(ctx, &c, &p, &accepted, why, sizeof why, NULL);
    cr_expect(!accepted, "the planted direct module was accepted: the cache swap took no effect");
    close_context(ctx);
    free(khr_src);
    free(rewritten);
    free(direct);
}

/* ---- coopmat2: one flexible-dimensions matrix a subgroup ---- */

/* A context on a device with VK_NV_cooperative_matrix2's flexible
 * dimensions, or the test fails saying how to run it; *sub: the subgroup
 * size its matrices run in. */
static og_context *lane_flexible_context(int *sub)
{
    og_context *ctx = open_context();
    cr_assert(ctx->limits.matrix.flexible,
              "%s has no flexible-dimensions matrices: run this test on Mesa 26 "
              "(scripts/mesa26.sh run, CTest label mesa26)",
              ctx->props.deviceName);
    *sub = og_matrix_subgroup(&ctx->limits);
    return ctx;
}

/* base ("variant=coopmat2,bm=..,pad=..") with the subgroup size and extra. */
static og_params coopmat2_params(const char *base, int sub, const char *extra)
{
    char text[OG_PARAMS_MAX + 32];
    snprintf(text, sizeof text, "%s,sub=%d%s", base, sub, extra);
    og_params p;
    char err[256] = "";
    cr_assert_eq(og_params_parse(text, &p, err, sizeof err), 0, "%s: %s", text, err);
    return p;
}

/* Tiles within lavapipe's 32 KiB of workgroup memory (the float32 tile of C
 * or the staged tiles, which share it): 2x2, 4x2, 4x4 and 2x1 subgroups
 * (matrices of 32x32, 32x16, 16x16, 32x32 and 64x16), k steps of 16 to 64, one and two buffers, pad 0
 * and 8, every transpose, ragged sizes, batches, alpha and beta, NaN in C
 * under beta = 0, each activation. */
static const lane_case cases2[] = {
    {"variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8", "", 0, 0, 0, 0, 130, 17, 57, 2, 0.75f,
     0.5f, 0, OG_ACTIVATION_NONE},
    {"variant=coopmat2,bm=64,bn=64,bk=32,sgx=2,sgy=2,pad=8", ",buf=1", 0, 0, 0, 1, 130, 136, 72, 1,
     1.0f, 0.0f, 1, OG_ACTIVATION_NONE},
    {"variant=coopmat2,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=0", "", 0, 0, 1, 0, 264, 136, 88, 1,
     -1.25f, 0.5f, 0, OG_ACTIVATION_NONE},
    {"variant=coopmat2,bm=32,bn=64,bk=64,sgx=2,sgy=1,pad=8", ",buf=1", 0, 0, 0, 0, 33, 136, 200, 3,
     0.5f, -1.0f, 0, OG_ACTIVATION_NONE},
    {"variant=coopmat2,bm=64,bn=64,bk=16,sgx=4,sgy=4,pad=8", "", 0, 0, 1, 1, 257, 1, 40, 1, 1.0f,
     0.0f, 1, OG_ACTIVATION_RELU},
    {"variant=coopmat2,bm=64,bn=32,bk=32,sgx=1,sgy=2,pad=8", "", 0, 0, 0, 0, 1, 1, 1, 1, 2.0f, 0.0f,
     0, OG_ACTIVATION_GELU_ERF},
    {"variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8", "", 0, 0, 1, 1, 72, 90, 17, 2, 1.0f,
     0.5f, 0, OG_ACTIVATION_GELU_TANH},
    /* 128x64: the tile of C fills the 32 KiB the staged tiles share. */
    {"variant=coopmat2,bm=128,bn=64,bk=16,sgx=4,sgy=2,pad=8", "", 0, 0, 0, 1, 200, 100, 70, 1, 1.0f,
     0.5f, 0, OG_ACTIVATION_NONE},
};

Test(lane, coopmat2_kernels_are_right, .timeout = 900)
{
    int sub;
    og_context *ctx = lane_flexible_context(&sub);
    for (size_t i = 0; i < sizeof cases2 / sizeof cases2[0]; i++) {
        const lane_case *c = &cases2[i];
        og_params p = coopmat2_params(c->base, sub, c->extra);
        expect_right(ctx, c, &p);
    }
    close_context(ctx);
}

/* The default at sizes around the edges of the tile and of the k step,
 * every op(A) x op(B). */
Test(lane, coopmat2_every_size_around_the_tile_edges, .timeout = 900)
{
    int sub;
    og_context *ctx = lane_flexible_context(&sub);
    static const int64_t sizes[] = {1, 9, 63, 64, 65, 129};
    static const int64_t ks[] = {1, 15, 16, 17, 33, 65};
    const char *base = "variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8";
    og_params p = coopmat2_params(base, sub, "");
    size_t runs = 0, wrong = 0;
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 6; j++)
            for (int t = 0; t < 4; t++) {
                lane_case c = {base, "", 0, 0, t & 1, t >> 1, sizes[i], sizes[j], ks[(i + j + t) % 6],
                               1, 1.0f, 0.0f, 1, OG_ACTIVATION_NONE};
                runs++;
                wrong += !expect_right(ctx, &c, &p);
            }
    cr_log_info("coopmat2: %zu sizes around the tile edges, %zu wrong", runs, wrong);
    close_context(ctx);
}

/* The default on a ragged case: K of three and a half k steps, so both
 * halves and the edge of K are used; B N x K and two batches, so that reads
 * past K land inside the operands (the next row, the next batch), where
 * the driver's bounds checks would not zero them. */
static const lane_case ragged2 = {"variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8", "", 0, 0,
                                  0, 1, 64, 64, 56, 2, 1.0f, 0.0f, 0, OG_ACTIVATION_NONE};

static void planted2(const char *what, const char *const *edits)
{
    int sub;
    close_context(lane_flexible_context(&sub));
    og_params p = coopmat2_params(ragged2.base, sub, "");
    planted_in("gemm_coopmat2", what, edits, &ragged2, &p);
}

/* The halves never swapped: every step after the second multiplies stale
 * data. */
Test(lane, coopmat2_skipped_stage_swap_fails, .timeout = 300)
{
    const char *const edits[] = {"        cur ^= 1u;\n", "", NULL};
    planted2("no swap of the double-buffered halves", edits);
}

/* A's rows read at the unskewed stride: the padding is not where the
 * kernel loads from. */
Test(lane, coopmat2_wrong_skew_fails, .timeout = 300)
{
    const char *const edits[] = {"sg_row * ${AP}u) >> 1u, ${AP // 2}u, false);",
                                 "sg_row * ${AP}u) >> 1u, ${BK // 2}u, false);", NULL};
    planted2("A's matrix loaded without the skew", edits);
}

/* The edge of K read unclamped in A and in B: the terms past K (the next
 * rows' of A, of B the next k's) enter the sums. One operand unclamped
 * alone is harmless (the other's zeros cancel it), and so are rows past M
 * and columns past N (never written). */
Test(lane, coopmat2_unclamped_edge_fails, .timeout = 300)
{
    const char *const edits[] = {"gi < pc.M && gk < pc.K)",          "gi < pc.M)",
                                 "gi < pc.M && gk + 1u < pc.K)",     "gi < pc.M)",
                                 "gj < pc.N && gk < pc.K)",          "gj < pc.N)",
                                 "gj + 1u < pc.N && gk < pc.K)",     "gj + 1u < pc.N)",
                                 NULL};
    planted2("the edge of K read unclamped", edits);
}
