/* The coopmat2 tile (templates/gemm_coopmat2.tmpl): float16 A and B,
 * float32 sums, on cooperative matrices of flexible dimensions
 * (VK_NV_cooperative_matrix2's cooperativeMatrixFlexibleDimensions, on top
 * of VK_KHR_cooperative_matrix). Each of the sgx x sgy subgroups owns one
 * (bm/sgy) x (bn/sgx) accumulator matrix and multiplies a (bm/sgy) x bk
 * matrix of A by a bk x (bn/sgx) matrix of B a k step: how the product is
 * cut into the engine's fragments, and which are reused, is the driver's.
 * Fast mode only (docs/matrix-kernels.md, "coopmat2"). */
#include <stdio.h>

#include "og_family.h"

/* The matrix dimensions the parameters imply. */
static void derive(og_params *p)
{
    p->mat = OG_MATRIX_KHR;
    p->load = OG_LOAD_STAGED;
    p->fm = p->sgy > 0 ? p->bm / p->sgy : 0;
    p->fn = p->sgx > 0 ? p->bn / p->sgx : 0;
    p->fk = p->bk;
}

og_params og_params_coopmat2(int sub)
{
    og_params p = {.variant = OG_VARIANT_COOPMAT2,
                   .bm = 64,
                   .bn = 64,
                   .bk = 16,
                   .sgx = 2,
                   .sgy = 2,
                   .pad = 8,
                   .sub = sub ? sub : OG_COOPMAT_SUBGROUP,
                   .buf = 2};
    derive(&p);
    return p;
}

/* Its own rules: tiles of 32 to 256, k steps of 16 to 64, 1 to 16
 * subgroups of 8 to 64 each owning a matrix of multiples of 8 with at most
 * 128 of its elements a lane, pad 0 or 8 halves, one or two buffers. */
static int coopmat2_shape_check(const og_params *p, char *why, size_t len)
{
    static const int tiles[] = {32, 64, 128, 256}, steps[] = {16, 32, 64}, splits[] = {1, 2, 4, 8},
                     pads[] = {0, 8}, bufs[] = {1, 2}, subs[] = {8, 16, 32, 64};
    if (!og_one_of(p->bm, tiles, 4) || !og_one_of(p->bn, tiles, 4) || !og_one_of(p->bk, steps, 3) ||
        !og_one_of(p->pad, pads, 2) || !og_one_of(p->buf, bufs, 2) || !og_one_of(p->sub, subs, 4) ||
        !og_one_of(p->sgx, splits, 4) || !og_one_of(p->sgy, splits, 4)) {
        snprintf(why, len,
                 "params: coopmat2 tile %dx%dx%d, %dx%d subgroups of %d, pad=%d, buf=%d: tiles of "
                 "32, 64, 128 or 256, k step 16, 32 or 64, 1, 2, 4 or 8 subgroups each way, of 8, "
                 "16, 32 or 64, pad 0 or 8, buf 1 or 2",
                 p->bm, p->bn, p->bk, p->sgx, p->sgy, p->sub, p->pad, p->buf);
        return -1;
    }
    int wm = p->bm / p->sgy, wn = p->bn / p->sgx;
    if (p->sgx * p->sgy > 16 || wm < 8 || wn < 8 || wm % 8 || wn % 8 || wm * wn > 128 * p->sub) {
        snprintf(why, len,
                 "params: coopmat2 %dx%d subgroups of %d must number at most 16, each owning a "
                 "%dx%d matrix of C in multiples of 8 with at most 128 elements a lane",
                 p->sgx, p->sgy, p->sub, wm, wn);
        return -1;
    }
    if (p->mat != OG_MATRIX_KHR || p->load != OG_LOAD_STAGED || p->fm != wm || p->fn != wn ||
        p->fk != p->bk) {
        snprintf(why, len,
                 "params: coopmat2 speaks KHR matrices of %dx%dx%d, staged (its parameters say)",
                 wm, wn, p->bk);
        return -1;
    }
    return 0;
}

/* A flexible-dimensions shape of float16 A and B into float32 at subgroup
 * scope whose granularity divides the kernel's matrices. */
static int flexible_listed(const og_matrix_caps *m, const og_params *p)
{
    uint32_t n = m->n_flex_shapes < OG_MATRIX_SHAPES_MAX ? m->n_flex_shapes : OG_MATRIX_SHAPES_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const og_matrix_shape *s = &m->flex_shapes[i];
        if (s->subgroup && s->a == OG_COMPONENT_F16 && s->b == OG_COMPONENT_F16 &&
            s->c == OG_COMPONENT_F32 && s->result == OG_COMPONENT_F32 && s->m && s->n && s->k &&
            (uint32_t)p->fm % s->m == 0 && (uint32_t)p->fn % s->n == 0 &&
            (uint32_t)p->fk % s->k == 0)
            return 1;
    }
    return 0;
}

/* Its own rules, then the device's: flexible dimensions enabled with a
 * float16 -> float32 subgroup shape whose granularity divides the
 * matrices, none past the maximum dimension, KHR matrices in compute, and
 * what every matrix kernel needs. */
static int coopmat2_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    if (coopmat2_shape_check(p, why, len) != 0)
        return -1;
    if (!lim)
        return 0;
    const og_matrix_caps *m = &lim->matrix;
    if (!m->flexible) {
        snprintf(why, len,
                 "the device has no VK_NV_cooperative_matrix2 flexible dimensions "
                 "(cooperativeMatrixFlexibleDimensions)");
        return -1;
    }
    if (!flexible_listed(m, p)) {
        snprintf(why, len,
                 "the device lists no float16 flexible-dimensions shape at subgroup scope whose "
                 "granularity divides %dx%dx%d",
                 p->fm, p->fn, p->fk);
        return -1;
    }
    uint32_t most = (uint32_t)(p->fm > p->fn ? p->fm : p->fn);
    if ((uint32_t)p->fk > most)
        most = (uint32_t)p->fk;
    if (most > m->flex_max) {
        snprintf(why, len, "a %dx%dx%d matrix passes the device's flexible dimensions (%u at most)",
                 p->fm, p->fn, p->fk, m->flex_max);
        return -1;
    }
    if (!m->khr_compute) {
        snprintf(why, len,
                 "VK_KHR_cooperative_matrix's cooperativeMatrixSupportedStages lack compute");
        return -1;
    }
    if (og_matrix_device_check(p, lim, 0, why, len) != 0)
        return -1;
    return og_limits_check(p, lim, (uint32_t)(p->sub * p->sgx * p->sgy), 1, why, len);
}

/* Two buffers unless the string names one. */
static void coopmat2_finish(og_params *p, unsigned seen)
{
    if (!(seen & OG_KEY_BUF))
        p->buf = 2;
    derive(p);
}

static void coopmat2_format(const og_params *p, char *buf, size_t len)
{
    int used = snprintf(buf, len, "variant=coopmat2,bm=%d,bn=%d,bk=%d,sgx=%d,sgy=%d,pad=%d,sub=%d",
                        p->bm, p->bn, p->bk, p->sgx, p->sgy, p->pad, p->sub);
    if (p->buf != 2 && used >= 0 && (size_t)used < len)
        snprintf(buf + used, len - (size_t)used, ",buf=%d", p->buf);
}

/* Float16 A and B, GLSL (GL_NV_cooperative_matrix, rewritten to KHR). */
static int coopmat2_check_key(const og_kernel_key *key, char *why, size_t len)
{
    if (key->dtype != OG_F16 || og_kernel_b_type(key) != OG_F16 || key->recover ||
        key->qformat || key->conv || key->dialect != OG_GLSL) {
        snprintf(why, len, "gen: the coopmat2 kernel takes float16 A and B, in GLSL");
        return -1;
    }
    return 0;
}

/* One array: the padded float16 A and B tiles, buf times, or (after the
 * last k step) the float32 tile of C the accumulators leave through. */
static uint32_t coopmat2_shared_bytes(const og_params *p)
{
    int tiles = 2 * p->buf * (p->bm * (p->bk + p->pad) + p->bk * (p->bn + p->pad)),
        c = 4 * p->bm * p->bn;
    return (uint32_t)(tiles > c ? tiles : c);
}

static void coopmat2_local_size(const og_params *p, uint32_t size[3])
{
    size[0] = (uint32_t)(p->sub * p->sgx * p->sgy);
}

/* k steps (one more staged before the loop with two buffers): the loop's
 * own trip and the A and B staging loops (a word of two halves a trip);
 * then the epilogue's loop over the subgroup's matrix. */
static uint64_t coopmat2_loops(const og_params *p, uint64_t k_len)
{
    int threads = p->sub * p->sgx * p->sgy;
    uint64_t loads = og_steps((uint64_t)(p->bm * p->bk / 2), threads) +
                     og_steps((uint64_t)(p->bk * p->bn / 2), threads);
    return (og_steps(k_len, p->bk) + (uint64_t)p->buf) * (2u + loads) + 2u +
           og_steps((uint64_t)(p->fm * p->fn), p->sub) + 1u;
}

/* The candidates: the default, and a 128x64x32 tile of 2x2 subgroups
 * owning 64x32 each (32 KiB of workgroup memory: within NVIDIA's 48); the
 * standard preset adds tiles of 64 to 256, k steps
 * of 16 to 64, 4 to 16 subgroups, no padding and one buffer. Subgroups of
 * the size the device pins matrices to (og_space_add drops what its
 * flexible dimensions, invocations or workgroup memory refuse). */
static og_status coopmat2_space(og_space_list *c, const og_space_ask *ask)
{
    static const int tiles[][2] = {{64, 64}, {128, 64}, {64, 128}, {128, 128}, {256, 128},
                                   {128, 256}},
                     groups[][2] = {{2, 2}, {4, 2}, {2, 4}, {4, 4}};
    og_params p = og_params_coopmat2(c->lim ? og_matrix_subgroup(c->lim) : 0);
    og_status st = og_space_add(c, p);
    p.bm = 128;
    p.bk = 32;
    derive(&p);
    if (st == OG_OK)
        st = og_space_add(c, p);
    for (int t = 0; ask->standard && t < 6; t++)
        for (int k = 16; k <= 64; k *= 2)
            for (int g = 0; g < 4; g++)
                for (int v = 0; v < 3 && st == OG_OK; v++) {
                    p.bm = tiles[t][0];
                    p.bn = tiles[t][1];
                    p.bk = k;
                    p.sgx = groups[g][0];
                    p.sgy = groups[g][1];
                    p.pad = v == 1 ? 0 : 8;
                    p.buf = v == 2 ? 1 : 2;
                    derive(&p);
                    st = og_space_add(c, p);
                }
    return st;
}

const og_family og_family_coopmat2 = {
    .variant = OG_VARIANT_COOPMAT2,
    .name = "coopmat2",
    .template_name = OG_TEMPLATE_COOPMAT2,
    .can = OG_FAMILY_TILED | OG_FAMILY_MATRIX,
    .keys = OG_KEY_BM | OG_KEY_BN | OG_KEY_BK | OG_KEY_SGX | OG_KEY_SGY | OG_KEY_PAD | OG_KEY_SUB,
    .optional = OG_KEY_BUF,
    .keys_text = "bm,bn,bk,sgx,sgy,pad,sub (and buf) for variant=coopmat2",
    .finish = coopmat2_finish,
    .format = coopmat2_format,
    .check = coopmat2_check,
    .check_key = coopmat2_check_key,
    .shared_bytes = coopmat2_shared_bytes,
    .local_size = coopmat2_local_size,
    .loop_iterations = coopmat2_loops,
    .space = coopmat2_space,
};
