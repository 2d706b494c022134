/* Int8Gemm's skinny kernel (templates/int8gemm_skinny.tmpl): M <= 16, B
 * not transposed, k split into slices (reference design, "8-bit
 * products"). */
#include <stdio.h>

#include "og_family.h"

og_params og_params_int8_skinny(void)
{
    og_params p = {.variant = OG_VARIANT_INT8_SKINNY, .rows = 4, .cols = 32, .slices = 16};
    return p;
}

static void skinny_format(const og_params *p, char *buf, size_t len)
{
    int used = snprintf(buf, len, "variant=int8skinny,rows=%d,cols=%d,slices=%d,dot=%d", p->rows,
                        p->cols, p->slices, p->dot);
    /* As for the tile: the byte-loading kernel keeps its old text. */
    if (p->vec != 0 && used >= 0 && (size_t)used < len)
        used += snprintf(buf + used, len - (size_t)used, ",vec=%d", p->vec);
    if (p->src != OG_SRC_STORAGE && used >= 0 && (size_t)used < len)
        snprintf(buf + used, len - (size_t)used, ",src=%s", og_src_name(p->src));
}

static int skinny_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    int threads = p->cols * p->slices;
    if (!og_one_of(p->rows, og_pow2, 5) || !og_one_of(p->cols, og_pow2, 8) ||
        !og_one_of(p->slices, og_pow2, 8) || threads < 32 || threads > 1024) {
        snprintf(why, len,
                 "params: skinny rows=%d, cols=%d, slices=%d must be powers of two (rows up to "
                 "16, the others up to 128) with 32..1024 invocations",
                 p->rows, p->cols, p->slices);
        return -1;
    }
    if (og_dot_check(p, lim, why, len) != 0 ||
        og_src_check(p, lim,
                     p->vec == 0
                         ? "params: Int8Gemm src=texel needs load=direct (tile) or vec (skinny)"
                         : NULL,
                     why, len) != 0)
        return -1;
    /* Word loads: a quarter of the invocations, each owning four columns;
     * the byte-loading kernel the runtime falls back to keeps them all. */
    if (p->vec != 0 && (p->vec != 4 || p->dot != 0 || p->cols < 4 || threads / 4 < 32)) {
        snprintf(why, len,
                 "params: skinny vec=%d must be absent, or 4 with dot=0 and at least 128 "
                 "columns times slices",
                 p->vec);
        return -1;
    }
    return lim ? og_limits_check(p, lim, (uint32_t)(p->vec == 4 ? threads / 4 : threads), 1, why,
                                 len)
               : 0;
}

/* The skinny kernel streams rows of B stored K x N (reference design). */
static int skinny_check_key(const og_kernel_key *key, char *why, size_t len)
{
    if (key->trans_b) {
        snprintf(why, len, "gen: the skinny Int8Gemm kernel takes B not transposed");
        return -1;
    }
    return 0;
}

/* One 32-bit sum per row and invocation. */
static uint32_t skinny_shared_bytes(const og_params *p)
{
    return (uint32_t)(4 * p->rows * p->cols * p->slices);
}

/* vec=4: four columns an invocation. */
static void skinny_local_size(const og_params *p, uint32_t size[3])
{
    size[0] = (uint32_t)(p->cols * p->slices / (p->vec == 4 ? 4 : 1));
}

/* k slices; rows of slice sums. Lavapipe runs an invocation's loops as SIMD
 * code under masks, so a loop costs its trips plus one, even where no lane
 * takes a trip: og_row4_a's tail loop costs one in every k step of the
 * packed path. */
static uint64_t skinny_loops(const og_params *p, uint64_t k_len)
{
    uint64_t rows = (uint64_t)p->rows, sums = rows * ((uint64_t)p->slices + 1u) + rows + 1u;
    /* Word loads: quads of k, unchecked then checked (one more quad and
     * one more exit); four columns' slice sums per row. */
    if (p->vec == 4)
        return og_steps(k_len, 4 * p->slices) + 1u + 2u +
               rows * 4u * ((uint64_t)p->slices + 1u) + rows + 1u;
    if (!p->dot)
        return og_steps(k_len, p->slices) + 1u + sums;
    /* Four terms a step, with a row-end loop per row (up to 3 trips at the end). */
    return og_steps(k_len, 4 * p->slices) * (1u + rows) + 1u + 3u * rows + sums;
}

/* Int8Gemm's skinny kernel: the reference design's shape first, then rows,
 * columns and slices around it, with 32-bit or packed dot products (where the
 * device has them: og_params_check drops them otherwise), then word loads
 * (four columns an invocation), each from storage and from texel buffers.
 * The quick preset keeps 512 invocations and
 * 1, 2 or 4 rows (one row: the decoder steps), and for word loads 64
 * columns with 4 or 8 slices or 128 with 4 (64 to 128 invocations: where
 * lavapipe ran them fastest at 768 and 3072 columns). */
static og_status skinny_space(og_space_list *c, const og_space_ask *ask)
{
    static const int rows[] = {1, 2, 4, 8, 16}, cols[] = {16, 32, 64, 128},
                     slices[] = {4, 8, 16, 32};
    og_status st = og_space_add(c, og_params_int8_skinny());
    for (int dot = 0; dot < 2; dot++)
        for (int r = 0; r < 5 && st == OG_OK; r++)
            for (int i = 0; i < 3 && st == OG_OK; i++)
                for (int j = 0; j < 4 && st == OG_OK; j++) {
                    int threads = cols[i] * slices[j];
                    int keep = ask->standard ? threads >= 128
                                                            : threads == 512 && rows[r] <= 4;
                    if (keep)
                        st = og_space_add(c, (og_params){.variant = OG_VARIANT_INT8_SKINNY,
                                                .rows = rows[r],
                                                .cols = cols[i],
                                                .slices = slices[j],
                                                .dot = dot});
                }
    for (int r = 0; r < 5 && st == OG_OK; r++)
        for (int i = 0; i < 4 && st == OG_OK; i++)
            for (int j = 0; j < 4 && st == OG_OK; j++) {
                int keep = ask->standard
                               ? 1
                               : rows[r] <= 4 && ((cols[i] == 64 && slices[j] <= 8) ||
                                                  (cols[i] == 128 && slices[j] == 4));
                if (keep) /* og_params_check drops too few or too many invocations */
                    st = og_space_add_word_loads(c, (og_params){.variant = OG_VARIANT_INT8_SKINNY,
                                                       .rows = rows[r],
                                                       .cols = cols[i],
                                                       .slices = slices[j],
                                                       .vec = 4});
            }
    return st;
}

const og_family og_family_int8_skinny = {
    .variant = OG_VARIANT_INT8_SKINNY,
    .name = "int8skinny",
    .template_name = OG_TEMPLATE_INT8_SKINNY,
    .can = OG_FAMILY_INT8 | OG_FAMILY_ADDRESS,
    .keys = OG_KEY_ROWS | OG_KEY_COLS | OG_KEY_SLICES | OG_KEY_DOT,
    .extra = OG_KEY_VEC,
    .optional = OG_KEY_SRC,
    .keys_text = "rows, cols, slices and dot (and vec) for variant=int8skinny",
    .format = skinny_format,
    .check = skinny_check,
    .check_key = skinny_check_key,
    .shared_bytes = skinny_shared_bytes,
    .local_size = skinny_local_size,
    .loop_iterations = skinny_loops,
    .space = skinny_space,
};
