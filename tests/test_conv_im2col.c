/* The explicit im2col matrix (templates/conv_im2col.tmpl, the benchmarks'
 * im2col + GEMM baseline): bit for bit the matrix built on the host from
 * onegpu.h's layouts (not from the kernel's index math), nothing written
 * past it; the GEMMs of og_conv_im2col_gemm on it give the convolution;
 * a matrix past one binding is refused, naming it. */
#include <string.h>

#include "og_conv_case.h"

/* Runs the im2col kernel on case t (input at element offset 3) and
 * compares the matrix with the host's, and the guard words after it; for
 * float32 cases, also the GEMMs on it against the float64 convolution. */
static void check_case(og_context *ctx, conv_case t, uint32_t seed)
{
    int64_t P = positions(t.h, t.pt, t.pb, t.r, one(t.dh), one(t.sh));
    int64_t Q = positions(t.w, t.pl, t.pr, t.s, one(t.dw), one(t.sw));
    int64_t g = one(t.groups), crs = t.c / g * t.r * t.s;
    size_t nx = (size_t)(t.n * t.c * t.h * t.w), off_x = 3, guard = 16;
    size_t ncols = (size_t)(t.n * P * Q * g * crs);
    float *x = calloc(nx + off_x, sizeof *x), *want = calloc(ncols, sizeof *want);
    float *got = malloc((ncols + guard) * sizeof *got);
    cr_assert(x && want && got);
    for (size_t i = 0; i < nx; i++)
        x[off_x + i] = quarter(&seed);
    im2col(&t, P, Q, x + off_x, want);
    /* Weights and output too: the im2col kernel takes a whole convolution call. */
    size_t nw = (size_t)(t.k * crs), ny = (size_t)(t.n * t.k * P * Q);
    float *wt = malloc(nw * sizeof *wt), *y = malloc(ny * sizeof *y),
          *ref = malloc(ny * sizeof *ref);
    cr_assert(wt && y && ref);
    for (size_t i = 0; i < nw; i++)
        wt[i] = quarter(&seed);
    for (size_t i = 0; i < ny; i++)
        y[i] = ref[i] = 7.0f;
    size_t xb, wb;
    void *xs = stored(t.dtype, x, nx + off_x, &xb), *ws = stored(t.dtype, wt, nw, &wb);
    for (size_t i = 0; i < ncols + guard; i++)
        got[i] = -99.0f;
    og_buffer *bx = make_buffer(ctx, xs, xb), *bw = make_buffer(ctx, ws, wb);
    og_buffer *by = make_buffer(ctx, y, ny * sizeof *y);
    og_buffer *bcols = make_buffer(ctx, got, (ncols + guard) * sizeof *got);
    og_conv_args a = args_of(&t);
    a.x = bx;
    a.x_offset = (int64_t)off_x;
    a.wt = bw;
    a.y = by;
    og_conv *cv;
    cr_assert_eq(og_conv_create(ctx, t.dtype, OG_MODE_FAST, &cv), OG_OK);
    char what[160];
    snprintf(what, sizeof what, "%s %s %s n%lld c%lld %lldx%lld k%lld %lldx%lld g%lld",
             t.layout ? "NCHW" : "NHWC", t.weights ? "KCRS" : "KRSC", og_dtype_name(t.dtype),
             (long long)t.n, (long long)t.c, (long long)t.h, (long long)t.w, (long long)t.k,
             (long long)t.r, (long long)t.s, (long long)g);
    cr_assert_eq(og_conv_im2col_run(cv, &a, bcols), OG_OK, "%s: %s", what,
                 og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(bcols, 0, got, (ncols + guard) * sizeof *got), OG_OK);
    for (size_t i = 0; i < ncols; i++)
        cr_assert(memcmp(&got[i], &want[i], sizeof got[i]) == 0, "%s: cols[%zu] = %a, want %a",
                  what, i, (double)got[i], (double)want[i]);
    for (size_t i = ncols; i < ncols + guard; i++)
        cr_assert_eq(got[i], -99.0f, "%s: written past the matrix at %zu", what, i);

    if (t.dtype == OG_F32) {
        /* The baseline's product: each image and group's GEMM on the matrix. */
        reference(&t, P, Q, x + off_x, wt, NULL, NULL, ref, 1);
        og_conv_shape s;
        og_push push;
        cr_assert_eq(og_conv_check(&ctx->limits, ctx->error, 4, &a, &s, &push), OG_OK);
        og_gemm *gemm;
        cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &gemm), OG_OK);
        for (int64_t img = 0; img < t.n; img++)
            for (int64_t grp = 0; grp < g; grp++) {
                og_gemm_args ga = og_conv_im2col_gemm(&a, &s, bcols, img, grp);
                cr_assert_eq(og_gemm_run(gemm, &ga), OG_OK, "%s: %s", what,
                             og_context_last_error(ctx));
            }
        cr_assert_eq(og_buffer_read(by, 0, y, ny * sizeof *y), OG_OK);
        /* Quarter-integer operands: the float32 sums are exact. */
        for (size_t i = 0; i < ny; i++)
            cr_assert_eq(y[i], ref[i], "%s: im2col + GEMM y[%zu] = %a, want %a", what, i,
                         (double)y[i], (double)ref[i]);
        og_gemm_destroy(gemm);
    }
    og_conv_destroy(cv);
    og_buffer_destroy(bx);
    og_buffer_destroy(bw);
    og_buffer_destroy(by);
    og_buffer_destroy(bcols);
    free(xs);
    free(ws);
    free(wt);
    free(y);
    free(ref);
    free(x);
    free(want);
    free(got);
}

/* The matrix cases of the convolution tests (every layout and weight
 * order, dilation, stride, asymmetric padding, windows in the padding,
 * Whisper's 1-D layer, groups with odd C/G and K/G, depthwise) in float16,
 * then in float32 and bfloat16; without beta, bias or activation. */
Test(conv_im2col, matches_the_host_matrix, .timeout = 600)
{
    og_context *ctx = open_context();
    static const og_dtype types[] = {OG_F16, OG_F32, OG_BF16};
    size_t n = sizeof og_conv_matrix_cases / sizeof og_conv_matrix_cases[0];
    for (size_t d = 0; d < 3; d++)
        for (size_t i = 0; i < n; i++) {
            conv_case t = og_conv_matrix_cases[i];
            t.dtype = types[d];
            /* The baseline's GEMM is the bare product. */
            t.beta = 0.0f;
            t.bias = 0;
            t.act = OG_ACTIVATION_NONE;
            check_case(ctx, t, 11u + (uint32_t)i);
        }
    close_context(ctx);
}

/* The im2col trap of issue 27: C = 128, 3x3 on a 192 x 192 output is a
 * 170 MB matrix, past lavapipe's 128 MiB binding, while each tensor is
 * about 19 MB: refused before anything is recorded, naming the matrix.
 * Also an empty call and a buffer too small. */
Test(conv_im2col, refusals)
{
    og_context *ctx = open_context();
    og_buffer *x, *w, *y, *small;
    cr_assert_eq(og_buffer_create(ctx, (size_t)128 * 192 * 192 * 4, &x), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, (size_t)128 * 128 * 9 * 4, &w), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, (size_t)128 * 192 * 192 * 4, &y), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, 64, &small), OG_OK);
    og_conv_args a = {.n = 1,
                      .c = 128,
                      .h = 192,
                      .w = 192,
                      .k = 128,
                      .r = 3,
                      .s = 3,
                      .pad_top = 1,
                      .pad_bottom = 1,
                      .pad_left = 1,
                      .pad_right = 1,
                      .x = x,
                      .wt = w,
                      .y = y};
    og_conv *cv;
    cr_assert_eq(og_conv_create(ctx, OG_F32, OG_MODE_FAST, &cv), OG_OK);
    og_conv_shape s;
    og_push push;
    cr_assert_eq(og_conv_check(&ctx->limits, ctx->error, 4, &a, &s, &push), OG_OK);
    uint64_t bytes = og_conv_im2col_bytes(&s);
    cr_assert_eq(bytes, (uint64_t)192 * 192 * 128 * 9 * 4);
    if (bytes > ctx->limits.max_storage_range) {
        og_buffer *big;
        cr_assert_eq(og_buffer_create(ctx, bytes, &big), OG_OK);
        cr_assert_eq(og_conv_im2col_run(cv, &a, big), OG_ERROR_UNSUPPORTED);
        cr_expect_not_null(strstr(og_context_last_error(ctx), "exceeds one binding"), "%s",
                           og_context_last_error(ctx));
        og_buffer_destroy(big);
    } else {
        cr_log_info("this device binds %llu bytes: the 170 MB matrix is not refused here",
                    (unsigned long long)ctx->limits.max_storage_range);
    }
    cr_assert_eq(og_conv_im2col_run(cv, &a, small), OG_ERROR_INVALID_ARGUMENT);
    cr_expect_not_null(strstr(og_context_last_error(ctx), "the buffer holds 64"), "%s",
                       og_context_last_error(ctx));
    a.k = 0;
    cr_assert_eq(og_conv_im2col_run(cv, &a, small), OG_ERROR_INVALID_ARGUMENT);
    og_conv_destroy(cv);
    og_buffer_destroy(x);
    og_buffer_destroy(w);
    og_buffer_destroy(y);
    og_buffer_destroy(small);
    close_context(ctx);
}
