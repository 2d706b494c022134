/* Int8Gemm on cooperative matrices (templates/int8gemm_coopmat.tmpl):
 * exact against the host definition (og_reference_int8) for int8 and uint8
 * mixes, zero points at the extremes, every op(A) x op(B), sizes around the
 * tile edges, batches, odd offsets and leading dimensions, int32 and scaled
 * float32 outputs with column scales, bias and activation, and the int32
 * wrap at K = 33026; the KHR rewrite's signed MulAdd operands (structure,
 * and in the lane the Mesa 26 tree's spirv-val); a fault planted in the
 * template is caught.
 * Where the tests run: under scripts/mesa26.sh run (OG_MESA26 set, the
 * CTest label mesa26) the device must list int8 matrices, and the real
 * kernels run (a device listing none FAILS the tests); elsewhere (OG_MESA26
 * unset: Mesa 22, which lists none) the same cases run the emulation
 * (mat=emu), and the KHR modules are checked structurally. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "og_khr_check.h"
#include "og_ogtune.h"
#include "og_spirv_val.h"
#include "og_plant.h"
#include "og_test.h"
#include "og_text.h"
#include "og_tmpdir.h"

TestSuite(int8_matrix, .init = make_tmpdir, .fini = remove_tmpdir);

/* Whether the tests run in the Mesa 26 lane. */
static int in_lane(void)
{
    const char *v = getenv("OG_MESA26");
    return v && *v;
}

/* The kernels to run on ctx: the device's choice (og_matrix_int8_choose)
 * and the same tile double buffered and with 4 subgroups and k steps of
 * 32; in the lane a device without int8 matrices fails the test, elsewhere
 * the emulation of the 8x8x8 fragments in subgroups of 8 runs. Returns
 * how many (at most 3). */
static size_t kernels(og_context *ctx, og_params out[3])
{
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    int i = og_matrix_int8_choose(&ctx->limits, OG_GLSL, notes);
    og_params p;
    if (i >= 0) {
        p = notes[i].params;
    } else {
        cr_assert(!in_lane(),
                  "OG_MESA26 is set, but the device takes no Int8Gemm matrix "
                  "kernel: %s; %s",
                  notes[0].why, notes[2].why);
        cr_assert(ctx->limits.matrix.int8, "the emulation needs shaderInt8");
        p = og_params_int8_coopmat(8);
        p.mat = OG_MATRIX_EMU;
        p.sub = 8;
        p.fm = p.fn = p.fk = 8;
    }
    out[0] = p;
    out[1] = p;
    out[1].buf = 2;
    out[2] = og_params_int8_coopmat(4);
    out[2].bk = 32;
    out[2].pad = 0;
    out[2].mat = p.mat;
    out[2].sub = p.sub;
    out[2].fm = p.fm;
    out[2].fn = p.fn;
    out[2].fk = p.fk;
    return 3;
}

/* Moves A and B of pr off_a and off_b bytes into new buffers (odd
 * offsets: a row starts anywhere in a word), the bytes before them 0x5a. */
static void offset_operands(og_context *ctx, og_int8_problem *pr, int64_t off_a, int64_t off_b)
{
    uint8_t **host[2] = {&pr->a, &pr->b};
    size_t *n[2] = {&pr->na, &pr->nb};
    og_buffer **dev[2] = {&pr->args.a, &pr->args.b};
    int64_t *at[2] = {&pr->args.a_offset, &pr->args.b_offset}, off[2] = {off_a, off_b};
    for (int i = 0; i < 2; i++) {
        uint8_t *moved = malloc(*n[i] + (size_t)off[i] + 4);
        cr_assert_not_null(moved);
        memset(moved, 0x5a, (size_t)off[i]);
        memcpy(moved + off[i], *host[i], *n[i]);
        free(*host[i]);
        *host[i] = moved;
        *n[i] += (size_t)off[i];
        *at[i] += off[i];
        og_buffer_destroy(*dev[i]);
        cr_assert_eq(og_buffer_create(ctx, *n[i], dev[i]), OG_OK);
        cr_assert_eq(og_buffer_write(*dev[i], 0, moved, *n[i]), OG_OK);
    }
}

/* Runs p on pr and expects C bit for bit equal to the reference. */
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

/* Type mixes, zero points at the extremes (and the shifted zero point 0 of
 * uint8 at 128, which needs no sums), every transpose, sizes around the
 * 64-wide tile edges, batches; the problems' leading dimensions and batch
 * strides are odd (a row's bytes start anywhere in a word), and A and B
 * start at odd offsets. */
Test(int8_matrix, exact_for_every_type_zero_point_layout_and_edge, .timeout = 900)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    og_params ps[3];
    size_t np = kernels(ctx, ps);
    static const og_dtype types[2] = {OG_INT8, OG_UINT8};
    static const int32_t zeros[2][3] = {{-128, 127, 0}, {0, 255, 128}};
    static const int64_t shapes[][4] = {{1, 1, 1, 1},    {17, 9, 33, 2},   {63, 65, 17, 1},
                                        {64, 64, 64, 1}, {65, 130, 47, 3}, {130, 63, 129, 1}};
    int case_no = 0, emulated = ps[0].mat == OG_MATRIX_EMU;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++, case_no++) {
                if (case_no % og_test_stride() != 0)
                    continue;
                int trans_a = case_no % 2, trans_b = (case_no / 2) % 2;
                /* The emulation: see the kernels' pick below. */
                if (emulated && (trans_a != ta || trans_b != tb))
                    continue;
                og_int8_problem *pr;
                cr_assert_eq(og_int8_problem_create(ctx, types[ta], types[tb], trans_a, trans_b,
                                                    shapes[s][0], shapes[s][1], shapes[s][2],
                                                    shapes[s][3], 300 + (uint64_t)case_no, &pr),
                             OG_OK);
                og_int8gemm_args *a = &pr->args;
                a->zero_a = zeros[ta][case_no % 3];
                a->zero_b = zeros[tb][(case_no / 3) % 3];
                offset_operands(ctx, pr, 1 + case_no % 3, 3);
                og_reference_int8(a, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
                char what[160];
                snprintf(what, sizeof what, "%s x %s za=%d zb=%d %s%s %lldx%lldx%lldx%lld",
                         og_dtype_name(types[ta]), og_dtype_name(types[tb]), a->zero_a, a->zero_b,
                         trans_a ? "T" : "N", trans_b ? "T" : "N", (long long)shapes[s][0],
                         (long long)shapes[s][1], (long long)shapes[s][2], (long long)shapes[s][3]);
                /* Each module (type pair and layout) compiles slowly: the
                 * emulated kernels are straight-line fragments, and in the
                 * lane every module is built cold by LLVM 19. The real
                 * matrix kernels in the lane run the device's choice (ps[0],
                 * what a call gets) on every case and one of the other two,
                 * picked by the case's type pair and transposes (whose
                 * modules differ), not by the case: 32 modules instead of
                 * 48, and each kernel meets every type pair and every
                 * layout. The emulation (outside the lane, whose real
                 * kernels cover all 16 type pairs and layouts) runs the
                 * cases whose transposes equal their type pair's
                 * (op(A) = A^T for uint8 A, op(B) = B^T for uint8 B): 4
                 * modules, each type pair once and each layout once, with
                 * the kernel picked by the type pair (2026-12-05, for CI's
                 * 45 minutes: 16 modules took about 150 s cold). */
                size_t pick = emulated ? (size_t)(2 * ta + tb) % np
                                       : 1 + (size_t)(2 * ta + tb + trans_a + 2 * trans_b) % (np - 1);
                for (size_t i = 0; i < np; i++)
                    if (i == pick || (!emulated && i == 0))
                        expect_exact(ctx, g, pr, &ps[i], what);
                og_int8_problem_destroy(pr);
            }
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* The scaled float32 output: per-tensor and per-column scales, the bias,
 * ReLU (the reference computes the GELUs in double: a few ulps apart, not
 * compared bit for bit); and C += sum (int32, wrapping). */
Test(int8_matrix, float_output_scales_bias_activation_and_accumulation, .timeout = 600)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    og_params ps[3];
    size_t np = kernels(ctx, ps);
    og_int8_problem *pr;
    int64_t m = 70, n = 37, k = 200;
    cr_assert_eq(og_int8_problem_create(ctx, OG_UINT8, OG_INT8, 1, 0, m, n, k, 2, 55, &pr), OG_OK);
    float scales[48], bias[48];
    uint64_t seed = 9;
    og_fill_random(OG_F32, scales, 48, &seed);
    og_fill_random(OG_F32, bias, 48, &seed);
    og_buffer *sbuf = make_buffer(ctx, scales, sizeof scales);
    og_buffer *bbuf = make_buffer(ctx, bias, sizeof bias);
    og_int8gemm_args *a = &pr->args;
    a->output = OG_INT8_OUTPUT_FLOAT32;
    a->scale_a = 0.0123f;
    a->scale_b = 3.5f;
    for (int form = 0; form < 4; form++) {
        a->col_scales = form & 1 ? sbuf : NULL;
        a->col_scale_offset = form & 1 ? 3 : 0;
        a->bias = form >= 2 ? bbuf : NULL;
        a->bias_offset = form >= 2 ? 1 : 0;
        a->activation = form == 3 ? OG_ACTIVATION_RELU : OG_ACTIVATION_NONE;
        og_reference_int8(a, pr->a, pr->b, pr->c0, form & 1 ? scales : NULL,
                          form >= 2 ? bias : NULL, pr->ref);
        char what[64];
        snprintf(what, sizeof what, "float32 output, form %d", form);
        for (size_t i = 0; i < np; i++)
            expect_exact(ctx, g, pr, &ps[i], what);
    }
    a->output = OG_INT8_OUTPUT_INT32_ADD;
    a->col_scales = a->bias = NULL;
    a->activation = OG_ACTIVATION_NONE;
    og_reference_int8(a, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
    for (size_t i = 0; i < np; i++)
        expect_exact(ctx, g, pr, &ps[i], "C += sum");
    og_buffer_destroy(sbuf);
    og_buffer_destroy(bbuf);
    og_int8_problem_destroy(pr);
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* The int32 sum wraps: 33026 * 255^2 = 2^32 - 2147451646, with every
 * operand at an extreme: int8 127 less -128, uint8 255 less 0 (shifted:
 * 127 less -128), int8 -128 less 127 times uint8 255 less 0. */
Test(int8_matrix, int32_wrap_at_k_33026, .timeout = 600)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    og_params ps[3];
    size_t np = kernels(ctx, ps);
    static const struct {
        og_dtype ta, tb;
        uint8_t a, b;
        int32_t za, zb, want;
    } cases[] = {{OG_INT8, OG_INT8, 127, 127, -128, -128, -2147451646},
                 {OG_UINT8, OG_UINT8, 255, 255, 0, 0, -2147451646},
                 {OG_INT8, OG_UINT8, 0x80, 255, 127, 0, 2147451646}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        og_int8_problem *pr;
        cr_assert_eq(
            og_int8_problem_create(ctx, cases[c].ta, cases[c].tb, 0, 0, 3, 2, 33026, 1, 1, &pr),
            OG_OK);
        memset(pr->a, cases[c].a, pr->na);
        memset(pr->b, cases[c].b, pr->nb);
        cr_assert_eq(og_buffer_write(pr->args.a, 0, pr->a, pr->na), OG_OK);
        cr_assert_eq(og_buffer_write(pr->args.b, 0, pr->b, pr->nb), OG_OK);
        pr->args.zero_a = cases[c].za;
        pr->args.zero_b = cases[c].zb;
        og_reference_int8(&pr->args, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
        cr_expect_eq((int32_t)pr->ref[pr->args.c_offset], cases[c].want, "reference, case %zu", c);
        for (size_t i = 0; i < np; i++)
            expect_exact(ctx, g, pr, &ps[i], "K = 33026");
        og_int8_problem_destroy(pr);
    }
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* Compiles key's NV module (Debian's spirv-val accepts it) and rewrites it
 * into KHR; *khr is malloc'ed. */
static void khr_module(const og_kernel_key *key, uint32_t **khr, size_t *khr_count)
{
    char *src = NULL, err[1024] = "";
    uint32_t *nv = NULL;
    size_t count = 0;
    cr_assert_eq(og_gen_source(key, &src, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(og_compile(src, OG_GLSL, 0, &nv, &count, err, sizeof err), OG_OK, "%s", err);
    free(src);
    cr_assert_eq(spirv_val(nv, count), 0, "Debian's spirv-val rejects the NV module");
    cr_assert_eq(og_spirv_khr(nv, count, khr, khr_count, err, sizeof err), OG_OK, "%s", err);
    free(nv);
}

/* The Cooperative Matrix Operands of every MulAdd of a module (-1 where
 * one has none); returns how many there are. */
static size_t muladd_operands(const uint32_t *w, size_t count, int *ops, size_t max)
{
    size_t n = 0;
    for (size_t i = 5; i < count && n < max; i += w[i] >> 16)
        if ((w[i] & 0xffffu) == 4459)
            ops[n++] = (w[i] >> 16) > 6 ? (int)w[i + 6] : -1;
    return n;
}

/* The rewrite marks every operand of Int8Gemm's MulAdds signed (0xf: the
 * int8 fragments and int32 accumulators, also for uint8 operands, shifted
 * into int8) and never saturating; float16's MulAdds carry no operands.
 * The modules' workgroup memory is og_kernel_shared_bytes'.
 * The KHR modules pass the structural checker and, in the lane, the tree's
 * spirv-val. */
Test(int8_matrix, khr_rewrite_signed_operands, .timeout = 600)
{
    /* Outside the lane, structurally only (cr_log_info: Criterion 2.4 exits
     * 1 after a warning, whatever the tests' results). */
    if (!in_lane())
        cr_log_info("outside the Mesa 26 lane: the KHR modules are checked structurally only");
    static const og_dtype types[2] = {OG_INT8, OG_UINT8};
    for (int c = 0; c < 8; c++) {
        og_kernel_key key = {.kernel = OG_KERNEL_GEMM,
                             .p = og_params_int8_coopmat(c % 2 ? 4 : 8),
                             .dtype = types[c % 2],
                             .dtype_b = types[(c / 2) % 2],
                             .trans_a = (c / 4) % 2,
                             .trans_b = (c / 2) % 2,
                             .dialect = OG_GLSL};
        key.p.mat = OG_MATRIX_KHR;
        key.p.sub = 8;
        key.p.fm = key.p.fn = key.p.fk = 8;
        key.p.buf = 1 + c % 2;
        uint32_t *khr;
        size_t n;
        khr_module(&key, &khr, &n);
        char why[256];
        cr_expect_eq(og_khr_check(khr, n, why, sizeof why), 0, "case %d: %s", c, why);
        og_reflection refl;
        og_reflect_raw(khr, n, &refl);
        cr_expect_eq(refl.shared_bytes, og_kernel_shared_bytes(&key), "case %d: %u bytes", c,
                     refl.shared_bytes);
        int ops[256];
        size_t muladds = muladd_operands(khr, n, ops, 256);
        cr_expect_gt(muladds, 0);
        for (size_t i = 0; i < muladds; i++)
            cr_expect_eq(ops[i], 0xf, "case %d, MulAdd %zu: operands %#x", c, i, ops[i]);
        if (in_lane())
            cr_expect_eq(lane_spirv_val(khr, n), 0,
                         "case %d: the tree's spirv-val rejects the KHR module", c);
        free(khr);
    }
    og_kernel_key f16 = {
        .kernel = OG_KERNEL_GEMM, .p = og_params_coopmat(8), .dtype = OG_F16, .dialect = OG_GLSL};
    f16.p.mat = OG_MATRIX_KHR;
    uint32_t *khr;
    size_t n;
    khr_module(&f16, &khr, &n);
    int ops[64];
    size_t muladds = muladd_operands(khr, n, ops, 64);
    cr_expect_gt(muladds, 0);
    for (size_t i = 0; i < muladds; i++)
        cr_expect_eq(ops[i], -1, "float16 MulAdd %zu has operands %#x", i, ops[i]);
    free(khr);
}

/* A fault planted in the fragment handling (the A fragments loaded with a
 * row stride one byte too long) fails the run: the built-in template
 * passes the same case. */
Test(int8_matrix, a_planted_fault_is_caught, .timeout = 600)
{
    static const char at[] = "(cur, AS, FRAG_M * i, AP), AP .. \"u\"";
    static const char put[] = "(cur, AS, FRAG_M * i, AP), (AP + 1) .. \"u\"";
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    og_params ps[3];
    kernels(ctx, ps);
    og_int8_problem *pr;
    cr_assert_eq(og_int8_problem_create(ctx, OG_INT8, OG_UINT8, 0, 0, 64, 64, 64, 1, 21, &pr),
                 OG_OK);
    int accepted;
    char why[256] = "";
    cr_assert_eq(og_int8_problem_verify(g, pr, &ps[0], &accepted, why, sizeof why), OG_OK);
    cr_assert(accepted, "built-in: %s", why);
    og_int8gemm_destroy(g);
    og_int8_problem_destroy(pr);
    close_context(ctx);

    plant_template("int8gemm_coopmat", at, put);
    ctx = open_context();
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    cr_assert_eq(og_int8_problem_create(ctx, OG_INT8, OG_UINT8, 0, 0, 64, 64, 64, 1, 21, &pr),
                 OG_OK);
    cr_assert_eq(og_int8_problem_verify(g, pr, &ps[0], &accepted, why, sizeof why), OG_OK);
    cr_log_info("planted: %s", accepted ? "accepted" : why);
    cr_expect(!accepted, "the kernel with the A fragments' stride off by one was accepted");
    og_int8_problem_destroy(pr);
    og_int8gemm_destroy(g);
    close_context(ctx);
    unsetenv("OG_TEMPLATE_DIR");
}
