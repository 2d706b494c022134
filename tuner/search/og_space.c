/* The tuning spaces of ogtune's ops: which families compete for a call
 * (float GEMM tiles, split-k counts and few-rows shapes, float16 matrix
 * tiles; Int8Gemm tiles, matrix tiles and skinny shapes; the convolution's
 * and the low-bit weights' kernels), each family's candidates from its
 * entry's space (gen/families/), filtered by the device's limits. */
#include <stdlib.h>

#include "og_tuner.h"

/* A family's space for preset and shape s. */
static og_status family_space(const og_family *f, og_space_list *c, og_preset preset,
                              const og_shape *s, int trans_b)
{
    og_space_ask ask = {.standard = preset == OG_PRESET_STANDARD,
                        .m = s->m,
                        .n = s->n,
                        .k = s->k,
                        .batch = s->batch,
                        .trans_b = trans_b};
    return f->space(c, &ask);
}

/* Hands the list of c to the caller, or frees it on an error. */
static og_status space_done(og_status st, og_space_list *c, og_params **out, size_t *n)
{
    if (st != OG_OK) {
        free(c->list);
        *n = 0;
        return st;
    }
    *out = c->list;
    *n = c->n;
    return OG_OK;
}

og_status og_space(const og_limits *lim, og_preset preset, og_dtype dtype, int trans_a, int trans_b,
                   const og_shape *s, og_params **out, size_t *n)
{
    return og_space_in(lim, OG_GLSL, preset, dtype, trans_a, trans_b, s, out, n);
}

og_status og_space_in(const og_limits *lim, og_dialect dialect, og_preset preset, og_dtype dtype,
                      int trans_a, int trans_b, const og_shape *s, og_params **out, size_t *n)
{
    og_space_list c = {.lim = lim};
    og_status st;
    int fewrows = og_fewrows_eligible(dtype, s->m, trans_a);
    int decode = og_decode_eligible(dtype, s->m, trans_a, dialect);
    *n = 0;
    if (og_dtype_is_int8(dtype) && og_int8_skinny_eligible(s->m, trans_b))
        st = family_space(&og_family_int8_skinny, &c, preset, s, trans_b);
    else if (og_dtype_is_int8(dtype)) {
        /* The portable tiles, then the matrix tiles where the device qualifies. */
        st = family_space(&og_family_int8_tile, &c, preset, s, trans_b);
        if (st == OG_OK)
            st = family_space(&og_family_int8_coopmat, &c, preset, s, trans_b);
    } else if (fewrows)
        st = family_space(&og_family_fewrows, &c, preset, s, trans_b);
    else if (decode)
        st = family_space(&og_family_decode, &c, preset, s, trans_b);
    else
        st = family_space(&og_family_tile, &c, preset, s, trans_b);
    /* Float16 in Fast mode: the cooperative-matrix tiles, where the device
     * qualifies (og_space_add drops them elsewhere), after the portable ones
     * so the first candidate stays the portable default. */
    if (dtype == OG_F16 && !fewrows && !decode && st == OG_OK) {
        st = family_space(&og_family_coopmat, &c, preset, s, trans_b);
        if (st == OG_OK)
            st = family_space(&og_family_coopmat2, &c, preset, s, trans_b);
    }
    return space_done(st, &c, out, n);
}

og_status og_space_recovered(const og_limits *lim, og_dialect dialect, og_preset preset,
                             og_mode mode, const og_shape *s, og_params **out, size_t *n)
{
    og_space_list c = {.lim = lim}, all = {.lim = lim};
    *n = 0;
    og_status st = og_space_add(&c, og_params_recovered(lim, dialect, mode));
    if (st == OG_OK)
        st = family_space(&og_family_tile, &all, preset, s, 1);
    if (st == OG_OK)
        st = family_space(&og_family_coopmat, &all, preset, s, 1);
    for (size_t i = 0; i < all.n && st == OG_OK; i++) {
        og_params p = all.list[i];
        char why[256];
        if (og_family_can(&p, OG_FAMILY_SPLIT))
            p.split = 1;
        if (og_params_recover_check(&p, lim, dialect, OG_RECOVER_SHIFT, why, sizeof why) == 0)
            st = og_space_add(&c, p);
    }
    free(all.list);
    return space_done(st, &c, out, n);
}

og_status og_space_conv(const og_limits *lim, og_preset preset, og_dtype dtype, const og_shape *s,
                        int depthwise, og_params **out, size_t *n)
{
    og_space_list c = {.lim = lim}, all = {.lim = lim};
    *n = 0;
    if (depthwise)
        return space_done(family_space(&og_family_depthwise, &c, preset, s, 1), &c, out, n);
    og_params def = og_params_default();
    og_status st = og_space_add(&c, og_conv_params(&def));
    if (st == OG_OK)
        st = family_space(&og_family_tile, &all, preset, s, 1);
    /* Float16: the cooperative-matrix tiles after the portable ones, as
     * og_space orders them (staged, so a direct tile repeats its staged twin). */
    if (st == OG_OK && dtype == OG_F16)
        st = family_space(&og_family_coopmat, &all, preset, s, 1);
    for (size_t i = 0; i < all.n && st == OG_OK; i++)
        st = og_space_add(&c, og_conv_params(&all.list[i]));
    free(all.list);
    return space_done(st, &c, out, n);
}

og_status og_space_qgemm(const og_limits *lim, og_preset preset, const og_shape *s, og_params **out,
                         size_t *n)
{
    og_space_list c = {.lim = lim};
    *n = 0;
    og_params def = og_qgemm_default(s->m);
    og_status st = og_space_add(&c, def);
    if (og_family_can(&def, OG_FAMILY_PREFILL)) {
        /* The prefill: og_space's tiles, each unsplit with element loads
         * from storage buffers (the weights are decoded one at a time). */
        og_space_list all = {.lim = lim};
        st = family_space(&og_family_tile, &all, preset, s, 1);
        for (size_t i = 0; i < all.n && st == OG_OK; i++) {
            og_params p = all.list[i];
            p.vec = 1;
            p.src = OG_SRC_STORAGE;
            p.split = 1;
            st = og_space_add(&c, p);
        }
        free(all.list);
        /* On matrix hardware, the matrix tiles that run recovered with range
         * scaling (og_space_recovered's, staged), which og_select_qgemm
         * weighs against the tile. */
        og_params *rec = NULL;
        size_t n_rec = 0;
        if (st == OG_OK)
            st = og_space_recovered(lim, OG_GLSL, preset, OG_MODE_FAST, s, &rec, &n_rec);
        for (size_t i = 0; i < n_rec && st == OG_OK; i++)
            if (og_params_matrix(&rec[i]))
                st = og_space_add(&c, rec[i]);
        free(rec);
        /* The decode kernel over tiles of 16 rows competes (og_select_qgemm):
         * the default and its neighbours in columns and slices. */
        static const int qcols[] = {4, 2, 8}, qslices[] = {32, 16, 64};
        for (int i = 0; i < 3 && st == OG_OK; i++)
            for (int j = 0; j < 3 && st == OG_OK; j++) {
                og_params q = og_params_qdecode(s->m);
                q.cols = qcols[i];
                q.slices = qslices[j];
                if (preset == OG_PRESET_STANDARD || i == 0 || j == 0)
                    st = og_space_add(&c, q);
            }
        return space_done(st, &c, out, n);
    }
    /* M <= 16: the decode kernel's space (the default first). */
    if (st == OG_OK)
        st = family_space(&og_family_qdecode, &c, preset, s, 1);
    return space_done(st, &c, out, n);
}
