/* The convolution on cooperative matrices executed (issue 27's implicit
 * GEMM on matrix hardware): run on a device that lists
 * VK_KHR_cooperative_matrix float16 shapes (Mesa 26's lavapipe through
 * scripts/mesa26.sh run, CTest label mesa26: 8x8x8 fragments in subgroups
 * of 8), float16 convolutions in Fast mode through og_conv_run take the KHR
 * matrix tile (templates/gemm_coopmat.tmpl with CONV) as the default, and
 * other KHR tiles (k steps of 16 and 32, one and two buffers, one to four
 * subgroups) with the device's fragment and subgroup size run with
 * og_conv_encode_params; each over og_conv_matrix_cases (every layout and
 * weight order, stride, dilation, padding, groups, depthwise, bias and
 * activations, beta), every element exact against the float64 direct
 * convolution (quarter-integer values: the sums are exact in any order).
 * Deterministic mode keeps the portable tile on this device too.
 * On a device without KHR matrices every test fails: this file is the
 * lane's evidence, never skipped (test_conv's matrix_tile_emulated runs the
 * same template with emulated fragments on any device). */
#include "og_conv_case.h"
#include "og_lane.h"

static const size_t n_cases = sizeof og_conv_matrix_cases / sizeof og_conv_matrix_cases[0];

/* Each case's selected kernel in mode, as og_conv_describe names it, must
 * contain want (or, with want NULL, not name the matrix tile); every
 * element exact. */
static void run_selected(og_context *ctx, og_mode mode, const char *want)
{
    for (size_t i = 0; i < n_cases; i++) {
        const conv_case *t = &og_conv_matrix_cases[i];
        og_conv_args a = args_of(t);
        int64_t P, Q;
        og_conv_output_size(&a, &P, &Q);
        size_t nx = (size_t)(t->n * t->c * t->h * t->w),
               nw = (size_t)(t->k * t->c / one(t->groups) * t->r * t->s),
               ny = (size_t)(t->n * t->k * P * Q);
        cr_assert_eq(og_buffer_create(ctx, nx * 2, &a.x), OG_OK);
        cr_assert_eq(og_buffer_create(ctx, nw * 2, &a.wt), OG_OK);
        cr_assert_eq(og_buffer_create(ctx, ny * 4, &a.y), OG_OK);
        if (t->bias)
            cr_assert_eq(og_buffer_create(ctx, (size_t)t->k * 4, &a.bias), OG_OK);
        og_conv *cv;
        char desc[512] = "";
        cr_assert_eq(og_conv_create(ctx, OG_F16, mode, &cv), OG_OK);
        cr_assert_eq(og_conv_describe(cv, &a, desc, sizeof desc), OG_OK, "%s",
                     og_context_last_error(ctx));
        og_conv_destroy(cv);
        og_buffer_destroy(a.x);
        og_buffer_destroy(a.wt);
        og_buffer_destroy(a.y);
        og_buffer_destroy(a.bias);
        /* Few channels a group run the depthwise kernel in both modes. */
        og_conv_shape shape;
        cr_assert_eq(og_conv_geometry_check(ctx->error, &a, &shape), OG_OK);
        if (og_conv_depthwise_eligible(&shape))
            cr_expect(strstr(desc, "conv_depthwise") != NULL, "case %zu runs %s", i, desc);
        else if (want)
            cr_expect(strstr(desc, want) != NULL, "case %zu runs %s, not %s", i, desc, want);
        else
            cr_expect(strstr(desc, "coopmat") == NULL, "case %zu runs %s", i, desc);
        char first[1024] = "";
        size_t differ =
            conv_mismatches(ctx, mode, t, NULL, (uint32_t)(i + 900), 1, first, sizeof first);
        cr_expect_eq(differ, 0, "%zu elements differ; %s", differ, first);
    }
}

Test(conv_lane, the_default_float16_kernel_is_the_matrix_tile, .timeout = 900)
{
    og_params khr;
    og_context *ctx = lane_matrix_context(&khr);
    char want[128];
    snprintf(want, sizeof want, "mat=khr,sub=%d,frag=%dx%dx%d", khr.sub, khr.fm, khr.fn, khr.fk);
    run_selected(ctx, OG_MODE_FAST, want);
    run_selected(ctx, OG_MODE_DETERMINISTIC, NULL);
    close_context(ctx);
}

/* KHR tiles of the device's fragment: one to four subgroups, k steps of 16
 * and 32, one and two buffers, padded and not. */
Test(conv_lane, khr_tiles_are_right, .timeout = 900)
{
    og_params khr;
    og_context *ctx = lane_matrix_context(&khr);
    static const char *const tiles[] = {
        "variant=coopmat,bm=32,bn=32,bk=16,sgx=2,sgy=2,pad=8,load=staged",
        "variant=coopmat,bm=64,bn=32,bk=32,sgx=1,sgy=2,pad=0,load=staged,buf=2",
        "variant=coopmat,bm=32,bn=64,bk=16,sgx=2,sgy=1,pad=8,load=staged,buf=2",
    };
    for (size_t v = 0; v < sizeof tiles / sizeof tiles[0]; v++) {
        char text[OG_PARAMS_MAX + 64], err[256] = "";
        snprintf(text, sizeof text, "%s,mat=khr,sub=%d,frag=%dx%dx%d", tiles[v], khr.sub, khr.fm,
                 khr.fn, khr.fk);
        og_params p;
        cr_assert_eq(og_params_parse(text, &p, err, sizeof err), 0, "%s: %s", text, err);
        for (size_t i = 0; i < n_cases; i++) {
            char first[1024] = "";
            size_t differ = conv_mismatches(ctx, OG_MODE_FAST, &og_conv_matrix_cases[i], &p,
                                            (uint32_t)(i + 950 + 10 * v), 1, first, sizeof first);
            cr_expect_eq(differ, 0, "%zu elements differ; %s", differ, first);
        }
    }
    close_context(ctx);
}
