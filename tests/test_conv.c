/* Convolution (onegpu.h, og_conv_*; issue 27): against a float64 direct
 * convolution written from the formulas of onegpu.h alone (not from the
 * kernel's index math), over ggml's test grid and the known traps; the
 * Deterministic order against the host emulation of the GEMM's order on an
 * explicit im2col matrix; and the checks that refuse a call before anything
 * is written. */
#include "og_conv_case.h"

/* ggml's convolution test grid (test-backend-ops, conv_2d): strides,
 * paddings, dilation, channels, filter and input sizes, batch 2. Every
 * 7th case of the grid (7 * OG_TEST_STRIDE-th), each with a layout,
 * weight layout, type and epilogue that turn with the case. */
Test(conv, ggml_grid, .timeout = 1800)
{
    og_context *ctx = open_context();
    const int64_t strides[2][2] = {{1, 5}, {3, 5}}, pads[2][2] = {{5, 2}, {5, 5}};
    const int64_t cs[2] = {1, 25}, ks[2] = {1, 12}, taps[4] = {1, 2, 3, 11}, hs[2] = {1, 133},
                  ws[2] = {1, 141};
    int every = 7 * og_test_stride(), ran = 0;
    int index = 0;
    for (int st = 0; st < 2; st++)
        for (int pd = 0; pd < 2; pd++)
            for (int ci = 0; ci < 2; ci++)
                for (int ki = 0; ki < 2; ki++)
                    for (int ri = 0; ri < 4; ri++)
                        for (int si = 0; si < 4; si++)
                            for (int hi = 0; hi < 2; hi++)
                                for (int wi = 0; wi < 2; wi++, index++) {
                                    if (index % every != 0)
                                        continue;
                                    conv_case t = {.layout = (og_conv_layout)(index / every % 2),
                                                   .weights =
                                                       (og_conv_weights)(index / every / 2 % 2),
                                                   .dtype = (og_dtype)(index / every % 3),
                                                   .n = 2,
                                                   .c = cs[ci],
                                                   .h = hs[hi],
                                                   .w = ws[wi],
                                                   .k = ks[ki],
                                                   .r = taps[ri],
                                                   .s = taps[si],
                                                   .sh = strides[st][0],
                                                   .sw = strides[st][1],
                                                   .dh = 2,
                                                   .dw = 4,
                                                   .pt = pads[pd][0],
                                                   .pb = pads[pd][0],
                                                   .pl = pads[pd][1],
                                                   .pr = pads[pd][1],
                                                   .bias = index % 3 == 0,
                                                   .act = (og_activation)(index / every % 4),
                                                   .beta = index % 5 == 0 ? 1.0f : 0.0f};
                                    og_conv_args a = args_of(&t);
                                    int64_t p, q;
                                    og_conv_output_size(&a, &p, &q);
                                    if (p < 1 || q < 1)
                                        continue; /* refused: conv/refusals */
                                    /* Sampled passes check every 13th element:
                                     * the host reference dominates there. */
                                    char first[1024] = "";
                                    size_t differ = conv_mismatches(
                                        ctx, OG_MODE_FAST, &t, NULL, (uint32_t)index,
                                        og_test_stride() > 1 ? 13 : 1, first, sizeof first);
                                    cr_assert_eq(differ, 0, "%zu elements differ; %s", differ,
                                                 first);
                                    ran++;
                                }
    /* A tenth of the 1024 / every sampled shapes at least (some are refused: conv/refusals). */
    cr_expect_gt(ran, 100 / every, "%d of the grid's shapes ran", ran);
    close_context(ctx);
}

/* The traps of issue 27: the dilated output size, asymmetric padding,
 * windows wholly inside the padding, C*R*S not a multiple of the k step
 * (Whisper's 80*3, a first layer's 3*7*7), few input channels, groups and
 * depthwise, 1-D, and the 1x1 convolution that is a GEMM. */
Test(conv, traps, .timeout = 900)
{
    og_context *ctx = open_context();
    /* One convolution a line: layout, weights, type, N, C, H, W, K, R, S, groups,
     * strides, dilations, pads (top, bottom, left, right), bias, activation, beta. */
    // clang-format off
    const conv_case cases[] = {
        /* H = 8, R = 3, d = 2: P = 4. */
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 2, 2, 0, 0, 0, 0, 0, OG_ACTIVATION_NONE, 0.0f},
        /* asymmetric padding, stride 2 */
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F32, 2, 5, 9, 11, 6, 3, 2, 1, 2, 2, 1, 1, 2, 0, 1, 3, 1, OG_ACTIVATION_RELU, 0.0f},
        /* padding larger than the filter: rows wholly in the padding */
        {OG_CONV_NHWC, OG_CONV_KCRS, OG_F16, 1, 2, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 4, 4, 4, 4, 1, OG_ACTIVATION_NONE, 0.0f},
        /* Whisper's first layer, 1-D: C 80, K 12 (of 384), R 1, S 3, pad 1 */
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F16, 1, 80, 1, 300, 12, 1, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, OG_ACTIVATION_GELU_ERF, 0.0f},
        /* Whisper's second: stride 2 */
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_BF16, 1, 24, 1, 61, 16, 1, 3, 1, 1, 2, 1, 1, 0, 0, 1, 1, 0, OG_ACTIVATION_NONE, 0.0f},
        /* a first layer: C 3, 7x7, stride 2, pad 3 */
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F32, 2, 3, 23, 19, 8, 7, 7, 1, 2, 2, 1, 1, 3, 3, 3, 3, 1, OG_ACTIVATION_NONE, 0.0f},
        /* groups 2 and depthwise (G = C) */
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 2, 8, 7, 6, 4, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_NONE, 0.0f},
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F16, 2, 6, 10, 9, 12, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_GELU_TANH, 0.0f},
        /* 1x1 NHWC, stride 1, unpadded: the GEMM itself, with beta */
        {OG_CONV_NHWC, OG_CONV_KCRS, OG_F32, 2, 7, 5, 6, 9, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, OG_ACTIVATION_NONE, 1.0f},
        /* 1x1 NCHW: not a plain GEMM */
        {OG_CONV_NCHW, OG_CONV_KRSC, OG_BF16, 2, 7, 5, 6, 9, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, OG_ACTIVATION_NONE, 1.0f},
        /* large K, C*R*S = 576 (split-k by the rule: few workgroups) */
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 1, 64, 6, 6, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_NONE, 0.0f},
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F32, 1, 64, 6, 6, 70, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_RELU, 1.0f},
    };
    // clang-format on
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(ctx, OG_MODE_FAST, &cases[i], (uint32_t)i + 100);
        run_case(ctx, OG_MODE_DETERMINISTIC, &cases[i], (uint32_t)i + 200);
    }
    og_conv_args a = args_of(&cases[0]);
    int64_t p, q;
    og_conv_output_size(&a, &p, &q);
    cr_expect(p == 4 && q == 4, "H = 8, R = 3, d = 2 gives P = %" PRId64, p);
    close_context(ctx);
}

/* The cooperative-matrix tile's convolution (templates/gemm_coopmat.tmpl
 * with CONV) with its fragment operations emulated in plain code (mat=emu),
 * so any device runs the gather, the group offsets, the edges and the
 * epilogue through workgroup memory: 16x16x16 fragments in subgroups of 32
 * with one buffer, and 8x8x8 fragments in subgroups of 8 (lavapipe's) with
 * two, over og_conv_matrix_cases, every element exact (quarter-integer
 * values: every sum is exact in float32, whatever the order). Mesa 26's
 * lane runs the real fragments (test_conv_lane). */
Test(conv, matrix_tile_emulated, .timeout = 900)
{
    og_context *ctx = open_context();
    const char *tiles[] = {
        "variant=coopmat,bm=64,bn=32,bk=16,sgx=1,sgy=2,pad=8,load=staged,mat=emu",
        "variant=coopmat,bm=32,bn=32,bk=16,sgx=2,sgy=2,pad=8,load=staged,"
        "mat=emu,sub=8,frag=8x8x8,buf=2"};
    size_t n = sizeof og_conv_matrix_cases / sizeof og_conv_matrix_cases[0];
    for (size_t t = 0; t < 2; t++) {
        og_params p;
        char err[256] = "";
        cr_assert_eq(og_params_parse(tiles[t], &p, err, sizeof err), 0, "%s: %s", tiles[t], err);
        for (size_t i = 0; i < n; i++) {
            char first[1024] = "";
            size_t differ = conv_mismatches(ctx, OG_MODE_FAST, &og_conv_matrix_cases[i], &p,
                                            (uint32_t)(i + 800 + 10 * t), 1, first, sizeof first);
            cr_assert_eq(differ, 0, "%zu elements differ; %s", differ, first);
        }
    }
    /* Deterministic mode keeps the portable order: the matrix tile is refused. */
    og_params p;
    char err[256] = "";
    cr_assert_eq(og_params_parse(tiles[0], &p, err, sizeof err), 0);
    og_conv_args a = args_of(&og_conv_matrix_cases[0]);
    og_conv *cv;
    cr_assert_eq(og_conv_create(ctx, OG_F16, OG_MODE_DETERMINISTIC, &cv), OG_OK);
    og_buffer *bx, *bw, *by;
    cr_assert_eq(og_buffer_create(ctx, 4096, &bx), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, 4096, &bw), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, 4096, &by), OG_OK);
    a.x = bx, a.wt = bw, a.y = by;
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cr_assert_eq(ctx->vk.vkBeginCommandBuffer(ctx->cmd, &begin), VK_SUCCESS);
    og_status st = og_conv_encode_params(cv, ctx->cmd, &a, &p);
    cr_assert_eq(ctx->vk.vkEndCommandBuffer(ctx->cmd), VK_SUCCESS);
    cr_expect_eq(st, OG_ERROR_UNSUPPORTED);
    cr_expect(strstr(og_context_last_error(ctx), "Fast mode only") != NULL, "%s",
              og_context_last_error(ctx));
    og_conv_destroy(cv);
    og_buffer_destroy(bx);
    og_buffer_destroy(bw);
    og_buffer_destroy(by);
    close_context(ctx);
}

/* y, 64 floats of a pattern, must keep it through a refused call. */
#define GUARD_FLOATS 64

/* A call that must be refused: its status, a message naming `names`, and
 * nothing written to y's buffer. */
static void expect_refused(og_context *ctx, og_conv *cv, og_conv_args a, og_status want,
                           const char *names)
{
    float before[GUARD_FLOATS], after[GUARD_FLOATS];
    cr_assert_eq(og_buffer_read(a.y, 0, before, sizeof before), OG_OK);
    og_status st = og_conv_run(cv, &a);
    const char *msg = og_context_last_error(ctx);
    cr_expect_eq(st, want, "status %d (want %d) for \"%s\": %s", st, want, names, msg);
    cr_expect(strstr(msg, names) != NULL && strncmp(msg, "conv: ", 6) == 0,
              "message \"%s\" does not name %s", msg, names);
    cr_assert_eq(og_buffer_read(a.y, 0, after, sizeof after), OG_OK);
    cr_expect(memcmp(before, after, sizeof before) == 0, "%s: y was written", names);
}

/* Every check of og_conv_encode refuses before anything is recorded:
 * sizes, the output size, groups, strides the kernel cannot carry, extents,
 * overlaps and the epilogue. */
Test(conv, refusals)
{
    og_context *ctx = open_context();
    float pattern[GUARD_FLOATS * 4];
    for (size_t i = 0; i < sizeof pattern / sizeof pattern[0]; i++)
        pattern[i] = (float)i + 0.5f;
    og_buffer *x = make_buffer(ctx, pattern, sizeof pattern);
    og_buffer *wt = make_buffer(ctx, pattern, sizeof pattern);
    og_buffer *y = make_buffer(ctx, pattern, GUARD_FLOATS * sizeof(float));
    og_buffer *bias = make_buffer(ctx, pattern, 2 * sizeof(float));
    og_conv *cv;
    cr_assert_eq(og_conv_create(ctx, OG_F32, OG_MODE_FAST, &cv), OG_OK);
    /* 1 image, C 2, 4x4, K 2, 3x3: y holds 2 x 2 x 2 = 8 floats. */
    const og_conv_args good = {
        .n = 1, .c = 2, .h = 4, .w = 4, .k = 2, .r = 3, .s = 3, .x = x, .wt = wt, .y = y};
    cr_assert_eq(og_conv_run(cv, &good), OG_OK, "%s", og_context_last_error(ctx));
    cr_assert_eq(og_buffer_write(y, 0, pattern, GUARD_FLOATS * sizeof(float)), OG_OK);
    og_conv_args a = good;
    a.r = 6; /* a 6-row filter on 4 rows: P = -1 */
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "P (-1)");
    a = good;
    a.s = 2, a.dilation_w = 4; /* 5 columns wide */
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "Q (0)");
    a = good;
    a.groups = 3;
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "groups (3)");
    a = good;
    a.stride_h = -1;
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "stride_h (-1)");
    a = good;
    a.stride_w = 70000;
    expect_refused(ctx, cv, a, OG_ERROR_UNSUPPORTED, "stride_w (70000)");
    a = good;
    a.pad_left = -2;
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "pad_left (-2)");
    a = good;
    a.c = 0;
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "C (0)");
    a = good;
    a.layout = (og_conv_layout)5;
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "layout 5");
    a = good;
    a.x = NULL;
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "x is NULL");
    a = good;
    a.n = 20; /* x holds 256 floats, 20 images need 640 */
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "x needs");
    a = good;
    a.y_offset = GUARD_FLOATS - 4;
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "y needs");
    a = good;
    a.bias = bias, a.bias_offset = 1;
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "bias needs");
    a = good;
    a.activation = (og_activation)9;
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "activation 9");
    a = good;
    a.x = y, a.x_offset = 4; /* x's 32 floats from 4 meet y's 8 from 0 */
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "y overlaps x");
    a = good;
    a.wt = y, a.w_offset = 8, a.y_offset = 40; /* wt's 36 floats from 8 meet y's from 40 */
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "y overlaps wt");
    a = good;
    a.h = (int64_t)1 << 40;
    expect_refused(ctx, cv, a, OG_ERROR_INVALID_ARGUMENT, "H (1099511627776)");
    /* Nothing to compute: no image, or no output channel. */
    cr_assert_eq(og_buffer_write(y, 0, pattern, GUARD_FLOATS * sizeof(float)), OG_OK);
    a = good;
    a.n = 0;
    cr_expect_eq(og_conv_run(cv, &a), OG_OK, "%s", og_context_last_error(ctx));
    float after[GUARD_FLOATS];
    cr_assert_eq(og_buffer_read(y, 0, after, sizeof after), OG_OK);
    cr_expect(memcmp(after, pattern, sizeof after) == 0, "no image: y was written");
    og_conv_destroy(cv);
    cr_expect_eq(og_conv_create(ctx, OG_INT8, OG_MODE_FAST, &cv), OG_ERROR_INVALID_ARGUMENT);
    cr_expect_null(cv);
    og_buffer_destroy(x);
    og_buffer_destroy(wt);
    og_buffer_destroy(y);
    og_buffer_destroy(bias);
    close_context(ctx);
}

/* Deterministic mode sums in the GEMM's documented order over the reduction
 * index in the weights' order (docs/accumulation-order.md, "Convolution"):
 * bit for bit the host emulation of that order (og_reference_ordered) on an
 * explicit im2col matrix, split-k ranges included. Values are random
 * float32, so every rounding shows. */
static void check_order(og_context *ctx, og_conv_layout layout, og_conv_weights weights, int64_t c,
                        int64_t k, int64_t hw, int fused)
{
    const int64_t n = 2, r = 3, s = 3, P = hw, Q = hw, crs = c * r * s, pq = P * Q;
    conv_case t = {.layout = layout,
                   .weights = weights,
                   .n = n,
                   .c = c,
                   .h = hw,
                   .w = hw,
                   .k = k,
                   .r = r,
                   .s = s,
                   .pt = 1,
                   .pb = 1,
                   .pl = 1,
                   .pr = 1};
    size_t nx = (size_t)(n * c * hw * hw), nw = (size_t)(k * crs), ny = (size_t)(n * k * pq);
    float *x = malloc(nx * sizeof *x), *wt = malloc(nw * sizeof *wt), *bias = malloc((size_t)k * 4);
    float *cols = calloc((size_t)(n * pq * crs), sizeof *cols), *want = malloc(ny * 4);
    float *got = malloc(ny * 4), *zero = calloc(ny, 4);
    cr_assert(x && wt && bias && cols && want && got && zero);
    uint32_t seed = 7;
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) * 0x1p-23f - 1.0f;
    for (size_t i = 0; i < nw; i++)
        wt[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) * 0x1p-23f - 1.0f;
    for (int64_t i = 0; i < k; i++)
        bias[i] = (float)i * 0.125f - 1.0f;
    im2col(&t, P, Q, x, cols);
    og_gemm_args g = {.trans_b = 1,
                      .m = pq,
                      .n = k,
                      .k = crs,
                      .batch = n,
                      .alpha = 1.0f,
                      .lda = crs,
                      .ldb = crs,
                      .ldc = k,
                      .stride_a = pq * crs,
                      .stride_c = pq * k,
                      .activation = OG_ACTIVATION_RELU};
    og_order order = {.variant = OG_VARIANT_TILE, .acc = OG_ACC_BLOCKED};
    documented_ranges(OG_SPLIT_RULE, pq, k, crs, n, OG_SCRATCH_BYTES / 4, &order.ranges,
                      &order.range_len);
    float *rows = malloc(ny * 4);
    cr_assert_not_null(rows);
    og_reference_ordered(OG_F32, &g, cols, wt, zero, bias, fused, &order, rows);
    for (int64_t img = 0; img < n; img++)
        for (int64_t pix = 0; pix < pq; pix++)
            for (int64_t kk = 0; kk < k; kk++)
                want[y_at(&t, P, Q, img, kk, pix / Q, pix % Q)] = rows[(img * pq + pix) * k + kk];
    og_buffer *bx = make_buffer(ctx, x, nx * 4), *bw = make_buffer(ctx, wt, nw * 4);
    og_buffer *by = make_buffer(ctx, zero, ny * 4), *bb = make_buffer(ctx, bias, (size_t)k * 4);
    og_conv_args a = args_of(&t);
    a.x = bx, a.wt = bw, a.y = by, a.bias = bb, a.activation = OG_ACTIVATION_RELU;
    og_conv *cv;
    cr_assert_eq(og_conv_create(ctx, OG_F32, OG_MODE_DETERMINISTIC, &cv), OG_OK);
    cr_assert_eq(og_conv_run(cv, &a), OG_OK, "%s", og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(by, 0, got, ny * 4), OG_OK);
    size_t first = 0, differ = bits_differ(got, want, ny, &first);
    cr_expect_eq(differ, 0,
                 "%s %s c%" PRId64 " k%" PRId64 " %" PRId64 "x%" PRId64
                 " (%u ranges): %zu elements differ, first y[%zu] = %a, want %a",
                 layout ? "NCHW" : "NHWC", weights ? "KCRS" : "KRSC", c, k, hw, hw, order.ranges,
                 differ, first, (double)got[first], (double)want[first]);
    og_conv_destroy(cv);
    og_buffer_destroy(bx);
    og_buffer_destroy(bw);
    og_buffer_destroy(by);
    og_buffer_destroy(bb);
    free(x), free(wt), free(bias), free(cols), free(want), free(got), free(zero), free(rows);
}

Test(conv, deterministic_order, .timeout = 900)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    check_order(ctx, OG_CONV_NHWC, OG_CONV_KRSC, 5, 7, 9, fused); /* 45 terms, one range */
    check_order(ctx, OG_CONV_NCHW, OG_CONV_KCRS, 5, 7, 9, fused);
    check_order(ctx, OG_CONV_NHWC, OG_CONV_KCRS, 40, 12, 6, fused); /* 360 terms, split-k */
    check_order(ctx, OG_CONV_NCHW, OG_CONV_KRSC, 40, 12, 6, fused);
    close_context(ctx);
}

/* Grids past the device's workgroup counts run in pieces of whole tiles of
 * pixels and whole images (with every group): the same results with the
 * counts lowered so that every call is cut along y and z, split-k included. */
Test(conv, pieces, .timeout = 900)
{
    og_context *ctx = open_context();
    ctx->limits.max_count[1] = 1; /* one 64-pixel tile of rows a dispatch */
    /* One convolution a line: layout, weights, type, N, C, H, W, K, R, S, groups,
     * strides, dilations, pads (top, bottom, left, right), bias, activation, beta. */
    // clang-format off
    const conv_case cases[] = {
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 3, 4, 13, 11, 6, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_RELU, 1.0f},
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F16, 5, 2, 12, 12, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_NONE, 0.0f},
        /* 32 * 3 * 3 = 288 terms a group, split-k in 5 ranges: 2 products a piece */
        {OG_CONV_NCHW, OG_CONV_KRSC, OG_F32, 3, 64, 10, 10, 8, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_NONE, 0.0f},
    };
    // clang-format on
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* Four products (images x groups) a dispatch; ten with 5 ranges. */
        ctx->limits.max_count[2] = i == 2 ? 10 : 4;
        run_case(ctx, OG_MODE_DETERMINISTIC, &cases[i], (uint32_t)i + 300);
    }
    close_context(ctx);
}

/* Few input channels (C of 1, 3 and 4: C*R*S of 9 to 36, off the k step),
 * output channels from 1 to 130 (three column tiles), and groups with odd
 * channels a group (C/G and K/G of 3 and 5; depthwise 5). */
Test(conv, channels_and_groups, .timeout = 900)
{
    og_context *ctx = open_context();
    const int64_t cs[] = {1, 3, 4}, ks[] = {1, 4, 12, 130};
    int index = 0;
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 4; j++, index++) {
            conv_case t = {.layout = (og_conv_layout)(index % 2),
                           .weights = (og_conv_weights)(index / 2 % 2),
                           .dtype = (og_dtype)(index % 3),
                           .n = 1,
                           .c = cs[i],
                           .h = 7,
                           .w = 9,
                           .k = ks[j],
                           .r = 3,
                           .s = 3,
                           .pt = 1,
                           .pb = 1,
                           .pl = 1,
                           .pr = 1,
                           .bias = 1};
            run_case(ctx, index % 4 == 0 ? OG_MODE_DETERMINISTIC : OG_MODE_FAST, &t,
                     (uint32_t)index + 400);
        }
    /* Fields as in conv/traps. */
    // clang-format off
    const conv_case grouped[] = {
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 2, 6, 6, 7, 10, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_NONE, 0.0f},
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F32, 2, 9, 6, 7, 15, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_NONE, 0.0f},
        {OG_CONV_NHWC, OG_CONV_KCRS, OG_F16, 1, 5, 8, 8, 5, 3, 3, 5, 2, 2, 1, 1, 1, 1, 1, 1, 0, OG_ACTIVATION_NONE, 0.0f},
    };
    // clang-format on
    for (size_t i = 0; i < sizeof grouped / sizeof grouped[0]; i++)
        run_case(ctx, OG_MODE_FAST, &grouped[i], (uint32_t)i + 450);
    close_context(ctx);
}

/* Whether the plan of case t (og_conv_plan, as a call makes it) keeps vec =
 * 4 for tile p with x, the weights and y at element offsets off[0..2]. */
static int vector_loads_kept(og_context *ctx, const conv_case *t, const og_params *p,
                             const size_t off[3])
{
    og_conv_args a = args_of(t);
    og_conv_shape s;
    og_push push;
    og_plan plan;
    char err[512];
    cr_assert_eq(og_conv_geometry_check(err, &a, &s), OG_OK, "%s", err);
    uint64_t elem = og_dtype_bytes(t->dtype);
    cr_assert_eq(og_buffer_create(ctx, (off[0] + (size_t)(t->n * t->c * t->h * t->w)) * elem, &a.x),
                 OG_OK);
    cr_assert_eq(og_buffer_create(ctx, (off[1] + (size_t)(t->k * s.k)) * elem, &a.wt), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, (off[2] + (size_t)(t->n * t->k * s.m)) * 4, &a.y), OG_OK);
    a.x_offset = (int64_t)off[0];
    a.w_offset = (int64_t)off[1];
    a.y_offset = (int64_t)off[2];
    cr_assert_eq(og_conv_check(&ctx->limits, err, elem, &a, &s, &push), OG_OK, "%s", err);
    cr_assert_eq(og_conv_plan(&ctx->limits, err, t->dtype, OG_MODE_FAST, &a, &s, p, &push,
                              OG_SCRATCH_BYTES, &plan),
                 OG_OK, "%s", err);
    og_buffer_destroy(a.x);
    og_buffer_destroy(a.wt);
    og_buffer_destroy(a.y);
    cr_assert_eq(plan.key.p.src, p->src, "texel views reach these small tensors");
    return plan.key.p.vec == 4;
}

/* Vector loads (vec = 4) and texel buffers in the convolution's tile: the
 * weights four at a time in every layout where K = Cg*R*S and the offsets
 * are multiples of 4, and with NHWC input and KRSC weights four channels of
 * a tap (Cg % 4 == 0), windows in the padding included; direct loads, and
 * staged ones from texel buffers; split-k planes with ranges of a multiple of 4 terms; float32,
 * float16 and bfloat16. Shapes with interior workgroups (the direct tile's
 * vector loads run there). Where Cg or an offset is not a multiple of 4
 * the same tile runs with element loads, and still right. */
Test(conv, vector_and_texel_loads, .timeout = 900)
{
    og_context *ctx = open_context();
    static const char *tiles[] = {
        "bm=32,bn=32,bk=16,tm=4,tn=4,wgx=8,wgy=8,pad=0,load=direct,acc=blocked,vec=4,src=texel",
        "bm=32,bn=32,bk=16,tm=4,tn=4,wgx=8,wgy=8,pad=0,load=direct,acc=chain,vec=4,src=ssbo",
        "bm=32,bn=32,bk=16,tm=4,tn=4,wgx=8,wgy=8,pad=0,load=direct,acc=blocked,vec=4,src=texel,"
        "split=3",
        "bm=32,bn=32,bk=16,tm=4,tn=4,wgx=8,wgy=8,pad=1,load=staged,acc=blocked,vec=1,src=texel"};
    /* Fields as in conv/traps; the last column is whether the rule keeps
     * vec = 4 at offsets in fours. */
    // clang-format off
    const struct { conv_case t; int vec; } cases[] = {
        {{OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 2, 8, 9, 11, 64, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_RELU, 0.0f}, 1},
        {{OG_CONV_NHWC, OG_CONV_KRSC, OG_F16, 1, 16, 20, 20, 40, 3, 3, 1, 2, 2, 2, 2, 2, 1, 3, 0, 1, OG_ACTIVATION_GELU_ERF, 0.0f}, 1},
        {{OG_CONV_NCHW, OG_CONV_KCRS, OG_BF16, 1, 12, 8, 12, 36, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, OG_ACTIVATION_NONE, 1.0f}, 1},
        {{OG_CONV_NHWC, OG_CONV_KCRS, OG_F32, 1, 4, 1, 100, 33, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, OG_ACTIVATION_NONE, 0.0f}, 1},
        {{OG_CONV_NCHW, OG_CONV_KRSC, OG_F32, 1, 20, 1, 80, 32, 1, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, OG_ACTIVATION_GELU_TANH, 0.0f}, 1},
        {{OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 1, 6, 9, 9, 40, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, OG_ACTIVATION_NONE, 0.0f}, 0},
    };
    // clang-format on
    static const size_t fours[3] = {4, 8, 12}, odd[3] = {3, 5, 7};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* Two tiles a case, turning with it (one under OG_TEST_STRIDE). */
        for (size_t j = 0; j < (og_test_stride() > 1 ? 1u : 2u); j++) {
            const char *tile = tiles[(i + 2 * j) % 4];
            og_params p;
            char err[1024] = "";
            cr_assert_eq(og_params_parse(tile, &p, err, sizeof err), 0, "%s: %s", tile, err);
            const conv_case *t = &cases[i].t;
            cr_expect_eq(vector_loads_kept(ctx, t, &p, fours), cases[i].vec && p.vec == 4,
                         "case %zu, %s", i, tile);
            cr_expect_eq(vector_loads_kept(ctx, t, &p, odd), 0, "case %zu, %s", i, tile);
            size_t differ = conv_mismatches_at(ctx, OG_MODE_FAST, t, &p, (uint32_t)(i * 2 + j) + 700,
                                               1, fours, err, sizeof err);
            cr_expect_eq(differ, 0, "%zu elements differ; %s", differ, err);
        }
    }
    close_context(ctx);
}

/* Runs t's x, weights and bias through conv in Deterministic mode with
 * parameters p (NULL: og_conv_run's own route) and returns y (malloc'ed). */
static float *deterministic_output(og_context *ctx, const conv_case *t, const og_params *p,
                                   const float *x, const float *wt, size_t nx, size_t nw, size_t ny)
{
    og_buffer *bx = make_buffer(ctx, x, nx * 4), *bw = make_buffer(ctx, wt, nw * 4), *by;
    cr_assert_eq(og_buffer_create(ctx, ny * 4, &by), OG_OK);
    og_conv_args a = args_of(t);
    a.x = bx, a.wt = bw, a.y = by;
    og_conv *cv;
    cr_assert_eq(og_conv_create(ctx, OG_F32, OG_MODE_DETERMINISTIC, &cv), OG_OK);
    if (p) {
        run_conv_params(ctx, cv, &a, p, "conv");
    } else {
        cr_assert_eq(og_conv_run(cv, &a), OG_OK, "%s", og_context_last_error(ctx));
    }
    float *y = malloc(ny * 4);
    cr_assert_not_null(y);
    cr_assert_eq(og_buffer_read(by, 0, y, ny * 4), OG_OK);
    og_conv_destroy(cv);
    og_buffer_destroy(bx);
    og_buffer_destroy(bw);
    og_buffer_destroy(by);
    return y;
}

static float *random_floats(size_t n, uint32_t seed)
{
    float *v = malloc(n * sizeof *v);
    cr_assert_not_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) * 0x1p-23f - 1.0f;
    return v;
}

/* In Deterministic mode a 1x1 NHWC convolution gives the same bits through
 * the GEMM (og_conv_run's route) and through the convolution kernel, split-k
 * included (C = 160 on a small grid); with stride 2 it is no GEMM; and the
 * two layouts give the same bits, element for element. Random float32
 * values, so every rounding shows. */
Test(conv, routes_and_layouts_agree, .timeout = 900)
{
    og_context *ctx = open_context();
    conv_case t = {
        .layout = OG_CONV_NHWC, .n = 2, .c = 160, .h = 9, .w = 7, .k = 24, .r = 1, .s = 1};
    size_t nx = 2 * 160 * 63, nw = 24 * 160, ny = 2 * 24 * 63;
    float *x = random_floats(nx, 5), *wt = random_floats(nw, 6);
    og_params def = og_params_default();
    float *gemm = deterministic_output(ctx, &t, NULL, x, wt, nx, nw, ny);
    float *conv = deterministic_output(ctx, &t, &def, x, wt, nx, nw, ny);
    size_t first = 0, differ = bits_differ(gemm, conv, ny, &first);
    cr_expect_eq(differ, 0, "1x1: GEMM and convolution kernel differ in %zu, first y[%zu] %a %a",
                 differ, first, (double)gemm[first], (double)conv[first]);
    og_conv *cv;
    char desc[512];
    og_buffer *b;
    cr_assert_eq(og_buffer_create(ctx, nx * 4, &b), OG_OK);
    og_conv_args a = args_of(&t);
    a.x = a.wt = b;
    cr_assert_eq(og_buffer_create(ctx, ny * 4, &a.y), OG_OK);
    cr_assert_eq(og_conv_create(ctx, OG_F32, OG_MODE_DETERMINISTIC, &cv), OG_OK);
    cr_assert_eq(og_conv_describe(cv, &a, desc, sizeof desc), OG_OK);
    cr_expect(strstr(desc, "as a GEMM"), "%s", desc);
    a.stride_h = 2;
    cr_assert_eq(og_conv_describe(cv, &a, desc, sizeof desc), OG_OK);
    cr_expect(strstr(desc, "conv NHWC") && !strstr(desc, "as a GEMM"), "%s", desc);
    og_conv_destroy(cv);
    og_buffer_destroy(a.y);
    og_buffer_destroy(b);
    free(gemm), free(conv), free(x), free(wt);

    /* NHWC against NCHW: the same tensors transposed, 3x3 stride 2. */
    conv_case h = {.layout = OG_CONV_NHWC,
                   .n = 2,
                   .c = 12,
                   .h = 11,
                   .w = 10,
                   .k = 7,
                   .r = 3,
                   .s = 3,
                   .sh = 2,
                   .sw = 2,
                   .pt = 1,
                   .pb = 1,
                   .pl = 1,
                   .pr = 1};
    conv_case c = h;
    c.layout = OG_CONV_NCHW;
    int64_t P = positions(h.h, 1, 1, 3, 1, 2), Q = positions(h.w, 1, 1, 3, 1, 2);
    nx = 2 * 12 * 110, nw = 7 * 12 * 9, ny = (size_t)(2 * 7 * P * Q);
    float *xh = random_floats(nx, 7), *xc = malloc(nx * 4);
    wt = random_floats(nw, 8);
    cr_assert_not_null(xc);
    for (int64_t img = 0; img < 2; img++)
        for (int64_t ch = 0; ch < 12; ch++)
            for (int64_t i = 0; i < 11; i++)
                for (int64_t j = 0; j < 10; j++)
                    xc[x_at(&c, img, ch, i, j)] = xh[x_at(&h, img, ch, i, j)];
    float *yh = deterministic_output(ctx, &h, NULL, xh, wt, nx, nw, ny);
    float *yc = deterministic_output(ctx, &c, NULL, xc, wt, nx, nw, ny);
    size_t layouts_differ = 0;
    for (int64_t img = 0; img < 2; img++)
        for (int64_t kk = 0; kk < 7; kk++)
            for (int64_t p = 0; p < P; p++)
                for (int64_t q = 0; q < Q; q++)
                    layouts_differ += memcmp(&yh[y_at(&h, P, Q, img, kk, p, q)],
                                             &yc[y_at(&c, P, Q, img, kk, p, q)], 4) != 0;
    cr_expect_eq(layouts_differ, 0, "NHWC and NCHW differ in %zu elements", layouts_differ);
    free(xh), free(xc), free(wt), free(yh), free(yc);
    close_context(ctx);
}

/* Sizes past one dispatch and one binding: 2049 x 2049 output pixels
 * (65,600 tiles of 64 rows, past maxComputeWorkGroupCount[1]), and
 * C = 128, 3x3 on a 192 x 192 output, whose im2col matrix (170 MB) would
 * not fit lavapipe's 128 MiB binding while each tensor is 19 MB; then split-k
 * with a bias and GELU, applied once. */
Test(conv, past_the_limits, .timeout = 900)
{
    og_context *ctx = open_context();
    /* Fields as in conv/traps. */
    // clang-format off
    const conv_case cases[] = {
        {OG_CONV_NCHW, OG_CONV_KRSC, OG_F32, 1, 1, 2049, 2049, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, OG_ACTIVATION_NONE, 0.0f},
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F16, 1, 128, 192, 192, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, OG_ACTIVATION_NONE, 0.0f},
        {OG_CONV_NHWC, OG_CONV_KCRS, OG_F32, 1, 64, 6, 6, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_GELU_ERF, 0.0f},
    };
    // clang-format on
    /* The later passes (OG_TEST_STRIDE > 1) run the split-k case only. The
     * first two are the device's work, not the host's: under the sanitizers
     * the 2049 x 2049 convolution took 114 CPU seconds, 52 of them in the
     * kernel (lavapipe's memory, allocated through ASan's allocator, faulted
     * in and unmapped while the kernel runs; 16 s in the plain build), and
     * the host code it reaches, cutting the grid into pieces along y, runs
     * there in conv/pieces with the counts lowered. The plain pass runs all
     * three at the device's own limits. */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (og_test_stride() == 1 || i == 2)
            run_case(ctx, OG_MODE_DETERMINISTIC, &cases[i], (uint32_t)i + 500);
    close_context(ctx);
}

/* The models' convolutions of issue 27 at full size (every 97th output
 * element against the reference): Whisper's encoder (80 mel channels to
 * 384, kernel 3, padding 1, length 3000; then 384 to 384 at stride 2; bias
 * and GELU), ResNet-50's 7x7/2 first layer, a 3x3 and a 1x1 layer, a
 * MobileNet depthwise 3x3, a Stable Diffusion UNet 3x3 at 64x64x320. */
Test(conv, model_shapes, .timeout = 1200)
{
    og_context *ctx = open_context();
    /* Fields as in conv/traps. */
    // clang-format off
    const conv_case models[] = {
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F16, 1, 80, 1, 3000, 384, 1, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, OG_ACTIVATION_GELU_ERF, 0.0f},
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F16, 1, 384, 1, 3000, 384, 1, 3, 1, 1, 2, 1, 1, 0, 0, 1, 1, 1, OG_ACTIVATION_GELU_ERF, 0.0f},
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F32, 1, 3, 224, 224, 64, 7, 7, 1, 2, 2, 1, 1, 3, 3, 3, 3, 0, OG_ACTIVATION_RELU, 0.0f},
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_RELU, 0.0f},
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 1, 256, 56, 56, 64, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, OG_ACTIVATION_NONE, 1.0f},
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 1, 32, 112, 112, 32, 3, 3, 32, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_RELU, 0.0f},
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F16, 1, 320, 64, 64, 320, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_NONE, 0.0f},
    };
    // clang-format on
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        if (i % (size_t)og_test_stride() != 0)
            continue;
        char first[1024] = "";
        size_t differ = conv_mismatches(ctx, OG_MODE_FAST, &models[i], NULL, (uint32_t)i + 600, 97,
                                        first, sizeof first);
        cr_expect_eq(differ, 0, "model %zu: %zu sampled elements differ; %s", i, differ, first);
    }
    close_context(ctx);
}

/* dir/conv_gather.tmpl with its one `from` replaced by `to`. */
static void plant(const char *dir, const char *from, const char *to)
{
    char path[512], text[16384];
    snprintf(path, sizeof path, "%s/conv_gather.tmpl", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *at = strstr(text, from);
    cr_assert(at && !strstr(at + 1, from), "'%s' is not once in conv_gather.tmpl", from);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    fclose(f);
}

/* Faults planted in a copy of the templates (OG_TEMPLATE_DIR) are caught:
 * the padding offset off by one, the dilation ignored, every group reading
 * the first group's channels. */
Test(conv, planted_faults_are_caught, .timeout = 900)
{
    static const struct {
        const char *name, *from, *to;
    } faults[] = {
        {"padding offset off by one", "- (pc.addr_b_hi & 0xffffu);",
         "+ 1u - (pc.addr_b_hi & 0xffffu);"},
        {"dilation ignored", "kk / og_conv_cg() / og_conv_s() * (pc.addr_b_lo & 0xffffu)",
         "kk / og_conv_cg() / og_conv_s()"},
        {"groups read group 0", "return g * og_conv_cg();", "return 0u * g;"},
    };
    /* 9 output channels a group: the tile, not the depthwise kernel (whose
     * faults test_conv_depthwise plants). */
    const conv_case t = {
        OG_CONV_NHWC,       OG_CONV_KRSC, OG_F32, 1, 6, 7, 8, 18, 3, 3, 2, 1, 1, 2, 1, 2, 2, 1, 1, 0,
        OG_ACTIVATION_NONE, 0.0f};
    char dir[] = "/tmp/og_conv_plant_XXXXXX", cmd[1024];
    cr_assert_not_null(mkdtemp(dir));
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        snprintf(cmd, sizeof cmd, "cp %s/*.tmpl %s/", OG_TEMPLATES, dir);
        cr_assert_eq(system(cmd), 0);
        plant(dir, faults[i].from, faults[i].to);
        setenv("OG_TEMPLATE_DIR", dir, 1);
        og_context *ctx = open_context();
        char first[1024] = "";
        size_t differ =
            conv_mismatches(ctx, OG_MODE_DETERMINISTIC, &t, NULL, 700, 1, first, sizeof first);
        cr_expect_gt(differ, 0, "%s was not caught", faults[i].name);
        close_context(ctx);
        unsetenv("OG_TEMPLATE_DIR");
    }
    /* The same case without a fault passes. */
    og_context *ctx = open_context();
    run_case(ctx, OG_MODE_DETERMINISTIC, &t, 700);
    close_context(ctx);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}
