/* Low-bit weight products with GGUF's K-quants (Q4_K and Q6_K) against the
 * float64 reference of og_qgemm_case.h, which reads the image by
 * onegpu_formats.h's table with its own code: every M from 1 to 16 that
 * the decode kernel takes ({1, 2, 3, 8, 16}) and the prefill tile above,
 * A of each type, Fast and Deterministic; the epilogue, stacked experts and
 * offsets; the decode kernel's variants (unrolled trips, 16-byte and word
 * loads, texel views) bit for bit alike, and split-k; and a sub-block scale
 * changed in the weights the device reads caught by the reference. */
#include "og_qgemm_case.h"

static const og_dtype TYPES[3] = {OG_F32, OG_F16, OG_BF16};

Test(qgemm_kquants, every_row_count)
{
    og_context *ctx = open_context();
    static const int64_t rows[] = {1, 2, 3, 8, 16, 17, 40};
    int stride = og_test_stride(), i = 0;
    for (size_t fi = 0; fi < 2; fi++)
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++, i++) {
            if (i % stride)
                continue;
            qcase c = {.f = kquant_formats[fi],
                       .a_type = TYPES[(fi + r) % 3],
                       .m = rows[r],
                       .n = 21,
                       .k = rows[r] > 16 ? 768 : 512};
            run_case(ctx, &c, r % 2 ? OG_MODE_DETERMINISTIC : OG_MODE_FAST);
        }
    close_context(ctx);
}

Test(qgemm_kquants, epilogue_experts_and_offsets)
{
    og_context *ctx = open_context();
    for (size_t fi = 0; fi < 2; fi++) {
        qcase c = {.f = kquant_formats[fi],
                   .a_type = fi ? OG_F16 : OG_F32,
                   .m = fi ? 5 : 18,
                   .n = 13,
                   .k = 256,
                   .batch = 3,
                   .lda_pad = 8,
                   .ldc_pad = 3,
                   .a_off = 8,
                   .c_off = 5,
                   .w_off = 2,
                   .beta = 0.5f,
                   .bias = 1,
                   .act = fi ? OG_ACTIVATION_GELU_ERF : OG_ACTIVATION_RELU};
        run_case(ctx, &c, OG_MODE_FAST);
    }
    close_context(ctx);
}

/* Unrolled trips, word and 16-byte loads and texel views give the bits of
 * one unit a trip from storage buffers (24 units over 8 slices leave units
 * after the last whole trip); split-k, whose ranges add in another order,
 * is within the reference's bound. */
Test(qgemm_kquants, variants_give_the_same_bits, .timeout = 600)
{
    og_context *ctx = open_context();
    int64_t m = 3, n = 9, k = 3 * 256;
    float *a = random_a((size_t)(m * k), 128.0f);
    for (size_t fi = 0; fi < 2; fi++) {
        og_params p[5];
        p[0] = og_params_qdecode(m);
        p[0].cols = 4;
        p[0].slices = 8;
        p[0].vec = 1;
        for (int i = 1; i < 5; i++)
            p[i] = p[0];
        p[1].unroll = 2;
        p[2].unroll = 4;
        p[2].vec = 4;
        p[3].src = OG_SRC_TEXEL;
        p[3].vec = 4;
        p[4].split = 2;
        same_bits(ctx, &kquant_formats[fi], TYPES[fi], a, m, n, k, p, 4, 1);
        /* Split-k adds its ranges in another order: against the reference. */
        qcase c = {.f = kquant_formats[fi], .a_type = TYPES[fi], .m = m, .n = n, .k = k,
                   .params = &p[4]};
        run_case(ctx, &c, OG_MODE_FAST);
    }
    free(a);
    close_context(ctx);
}

/* A sub-block scale off by one in the image the device reads, for the
 * decode kernel and the prefill tile: the reference must see it. */
Test(faults, kquant_scale_in_the_kernel_is_caught)
{
    og_context *ctx = open_context();
    for (size_t fi = 0; fi < 2; fi++)
        for (int tile = 0; tile < 2; tile++) {
            qcase c = {.f = kquant_formats[fi], .a_type = OG_F32, .m = tile ? 17 : 1, .n = 5,
                       .k = 256, .plant = 1};
            char first[512] = "";
            size_t wrong = case_mismatches(ctx, &c, OG_MODE_FAST, first, sizeof first);
            cr_expect_gt(wrong, 0, "format %d, M %" PRId64 ": the planted scale went unseen",
                         (int)c.f.format, c.m);
            c.plant = 0;
            run_case(ctx, &c, OG_MODE_FAST);
        }
    close_context(ctx);
}
