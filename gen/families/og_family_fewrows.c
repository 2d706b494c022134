/* Few rows (templates/gemm_fewrows.tmpl): float32 or FP8, M <= 4, A not
 * transposed; B stored K x N or N x K (reference design, "Small grids and
 * few rows"). */
#include <stdio.h>

#include "og_family.h"

og_params og_params_fewrows(int trans_b, int64_t n)
{
    og_params p = {.variant = OG_VARIANT_FEWROWS, .cols = 8, .slices = 32, .vec = 4};
    if (!trans_b) {
        /* From N = 8192 a row of 32 columns is 128 bytes: one full transaction. */
        p.cols = n >= 8192 ? 32 : 16;
        p.slices = n >= 8192 ? 8 : 16;
    }
    return p;
}

/* Float32 or FP8, M <= 4, A not transposed (reference design). */
static int fewrows_takes(og_dtype a_type, int64_t m, int trans_a)
{
    return (a_type == OG_F32 || og_dtype_is_fp8(a_type)) && m >= 1 && m <= 4 && !trans_a;
}

/* Few rows read one element at a time unless vec says otherwise. */
static void fewrows_finish(og_params *p, unsigned seen)
{
    if (!(seen & OG_KEY_VEC))
        p->vec = 1;
}

static void fewrows_format(const og_params *p, char *buf, size_t len)
{
    snprintf(buf, len, "variant=fewrows,cols=%d,slices=%d,vec=%d%s", p->cols, p->slices, p->vec,
             p->src == OG_SRC_ADDR ? ",src=addr" : "");
}

static int fewrows_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    int terms = p->cols * p->slices;
    if (!og_one_of(p->cols, og_pow2, 8) || !og_one_of(p->slices, og_pow2, 8) || terms < 32 ||
        terms > 1024) {
        snprintf(why, len,
                 "params: few rows cols=%d, slices=%d must be powers of two up to 128 with "
                 "32..1024 columns times slices",
                 p->cols, p->slices);
        return -1;
    }
    /* vec=4: an invocation takes four columns (B K x N) or four slices (N x K). */
    if ((p->vec != 1 && p->vec != 4) || p->cols < p->vec || p->slices < p->vec) {
        snprintf(why, len, "params: few rows vec=%d must be 1 or 4, with cols and slices >= vec",
                 p->vec);
        return -1;
    }
    if (og_src_check(p, lim, "params: few rows read storage buffers or addresses (src=ssbo or addr)",
                     why, len) != 0)
        return -1;
    int threads = terms / p->vec;
    return lim ? og_limits_check(p, lim, (uint32_t)threads, 1, why, len) : 0;
}

/* The few-rows kernel reads float32 (or FP8) A not transposed (reference design). */
static int fewrows_check_key(const og_kernel_key *key, char *why, size_t len)
{
    og_dtype b = og_kernel_b_type(key);
    if ((key->dtype != OG_F32 && !og_dtype_is_fp8(key->dtype)) ||
        (b != OG_F32 && !og_dtype_is_fp8(b)) || key->trans_a) {
        snprintf(why, len,
                 "gen: the few-rows kernel takes float32 or FP8 inputs with A not transposed");
        return -1;
    }
    return 0;
}

/* One float per row (up to 4) and invocation, for the slice sums. */
static uint32_t fewrows_shared_bytes(const og_params *p)
{
    return (uint32_t)(16 * p->cols * p->slices);
}

/* vec=4: four columns (or four slices) an invocation. */
static void fewrows_local_size(const og_params *p, uint32_t size[3])
{
    size[0] = (uint32_t)(p->cols * p->slices / (p->vec == 4 ? 4 : 1));
}

/* k steps four to a trip, up to three single steps, one end test for each
 * of the two k loops of the four row counts (two versions each for B
 * K x N), then four rows' slice sums. */
static uint64_t fewrows_loops(const og_params *p, uint64_t k_len)
{
    return og_steps(k_len, 4 * p->slices) + 3u + 4u * 2u * 2u + 4u * (uint64_t)p->slices;
}

/* Few rows: the rule's shape first, then the column and slice counts
 * around it (256 columns times slices, and half and twice that), each read
 * one element and four elements at a time. */
static og_status fewrows_space(og_space_list *c, const og_space_ask *ask)
{
    static const int counts[] = {2, 4, 8, 16, 32, 64, 128};
    og_status st = og_space_add(c, og_params_fewrows(ask->trans_b, ask->n));
    for (int i = 0; i < 7 && st == OG_OK; i++)
        for (int j = 0; j < 7 && st == OG_OK; j++)
            for (int vec = 1; vec <= 4 && st == OG_OK; vec += 3) {
                int terms = counts[i] * counts[j];
                int keep =
                    ask->standard ? terms >= 128 && terms <= 512 : terms == 256;
                /* B stored N x K read one element at a time wants whole
                 * subgroups of lanes on one column; four at a time, an
                 * invocation reads 16 bytes of its column (on lavapipe four
                 * slices, one invocation a column, stream B fastest). */
                if (ask->trans_b && counts[j] < 16 && vec == 1)
                    keep = 0;
                if (counts[i] < vec || counts[j] < vec)
                    keep = 0;
                if (keep)
                    st = og_space_add(c, (og_params){.variant = OG_VARIANT_FEWROWS,
                                            .cols = counts[i],
                                            .slices = counts[j],
                                            .vec = vec});
            }
    return st;
}

const og_family og_family_fewrows = {
    .variant = OG_VARIANT_FEWROWS,
    .name = "fewrows",
    .template_name = OG_TEMPLATE_FEWROWS,
    .can = OG_FAMILY_FP8 | OG_FAMILY_ADDRESS | OG_FAMILY_VEC4 | OG_FAMILY_WGSL,
    .takes = fewrows_takes,
    .takes_text = "the few-rows kernel takes float32 or FP8 inputs, 1 <= M <= 4 and A not "
                  "transposed",
    .keys = OG_KEY_COLS | OG_KEY_SLICES,
    .extra = OG_KEY_VEC,
    .optional = OG_KEY_SRC,
    .keys_text = "cols and slices (and vec) for variant=fewrows",
    .finish = fewrows_finish,
    .format = fewrows_format,
    .check = fewrows_check,
    .check_key = fewrows_check_key,
    .shared_bytes = fewrows_shared_bytes,
    .local_size = fewrows_local_size,
    .loop_iterations = fewrows_loops,
    .space = fewrows_space,
};
