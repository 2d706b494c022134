/* The cooperative-matrix tiles: float16 (templates/gemm_coopmat.tmpl; also
 * recovered float32 and the low-bit prefill) and Int8Gemm's
 * (templates/int8gemm_coopmat.tmpl), on VK_NV_cooperative_matrix or
 * VK_KHR_cooperative_matrix, Fast mode only (reference design, "The
 * cooperative-matrix kernel"; docs/matrix-kernels.md). */
#include <stdio.h>

#include "og_family.h"

og_params og_params_coopmat(int subgroups)
{
    og_params p = {.variant = OG_VARIANT_COOPMAT,
                   .bm = 64,
                   .bn = 64,
                   .bk = 16,
                   .sgx = subgroups == 4 ? 2 : 4,
                   .sgy = 2,
                   .pad = 8,
                   .load = OG_LOAD_STAGED,
                   .mat = OG_MATRIX_NV,
                   .sub = OG_COOPMAT_SUBGROUP,
                   .fm = 16,
                   .fn = 16,
                   .fk = 16,
                   .buf = 1};
    return p;
}

og_params og_params_int8_coopmat(int subgroups)
{
    og_params p = og_params_coopmat(subgroups);
    p.variant = OG_VARIANT_INT8_COOPMAT;
    p.pad = 16; /* int8 rows of 32 bytes: fragments start on 16 bytes */
    return p;
}

/* Whether a fragment shape is one the matrix templates take. */
static int fragment_taken(uint32_t m, uint32_t n, uint32_t k)
{
    return (m == 8 || m == 16) && (n == 8 || n == 16) && (k == 8 || k == 16 || k == 32);
}

/* The shapes the device lists for extension mat. */
static const og_matrix_shape *listed(const og_matrix_caps *m, og_matrix_ext mat, uint32_t *n)
{
    *n = mat == OG_MATRIX_KHR ? m->n_khr_shapes : m->n_shapes;
    if (*n > OG_MATRIX_SHAPES_MAX)
        *n = OG_MATRIX_SHAPES_MAX;
    return mat == OG_MATRIX_KHR ? m->khr_shapes : m->shapes;
}

/* Whether s multiplies a of type a by b into accumulators (and results) of acc. */
static int shape_types(const og_matrix_shape *s, int a, int b, int acc)
{
    return s->subgroup && s->a == a && s->b == b && s->c == acc && s->result == acc;
}

int og_matrix_fragment(const og_matrix_caps *m, og_matrix_ext mat, int a, int b, int acc, int *fm,
                       int *fn, int *fk)
{
    uint32_t n;
    const og_matrix_shape *shapes = listed(m, mat, &n), *best = NULL;
    for (uint32_t i = 0; i < n; i++) {
        const og_matrix_shape *s = &shapes[i];
        if (!shape_types(s, a, b, acc) || !fragment_taken(s->m, s->n, s->k))
            continue;
        /* The most products; of as many, the squarer (16x16x16 before 16x8x32). */
        uint32_t size = s->m * s->n * s->k, best_size = best ? best->m * best->n * best->k : 0;
        if (!best || size > best_size || (size == best_size && s->m * s->n > best->m * best->n))
            best = s;
    }
    if (!best)
        return -1;
    *fm = (int)best->m;
    *fn = (int)best->n;
    *fk = (int)best->k;
    return 0;
}

int og_matrix_subgroup(const og_limits *lim)
{
    const og_matrix_caps *m = &lim->matrix;
    static const int sizes[] = {32, 64, 16, 8};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t s = (uint32_t)sizes[i];
        if (m->size_control ? m->subgroup_min <= s && s <= m->subgroup_max
                            : lim->subgroup_size == s)
            return sizes[i];
    }
    return 0;
}

/* What the extension a matrix kernel speaks needs of the device: its
 * fragment listed with float16 A and B and float32 accumulators, or (the
 * Int8Gemm tile) int8 A and B and int32 accumulators. */
static int matrix_ext_check(const og_params *p, const og_matrix_caps *m, char *why, size_t len)
{
    const char *ext =
        p->mat == OG_MATRIX_KHR ? "VK_KHR_cooperative_matrix" : "VK_NV_cooperative_matrix";
    int int8 = og_family_can(p, OG_FAMILY_INT8);
    int in = int8 ? OG_COMPONENT_S8 : OG_COMPONENT_F16,
        acc = int8 ? OG_COMPONENT_S32 : OG_COMPONENT_F32;
    uint32_t n;
    const og_matrix_shape *shapes = listed(m, p->mat, &n);
    int found = 0;
    for (uint32_t i = 0; i < n && !found; i++)
        found = shapes[i].m == (uint32_t)p->fm && shapes[i].n == (uint32_t)p->fn &&
                shapes[i].k == (uint32_t)p->fk && shape_types(&shapes[i], in, in, acc);
    if (!found) {
        snprintf(why, len, "the device lists no %dx%dx%d %s combination for %s%s", p->fm, p->fn,
                 p->fk, int8 ? "int8 x int8 -> int32" : "float16", ext,
                 n                         ? ""
                 : p->mat == OG_MATRIX_KHR ? " (it lists no KHR shapes)"
                                           : " (it lists no NV shapes)");
        return -1;
    }
    if (p->mat == OG_MATRIX_KHR && !m->khr_compute) {
        snprintf(why, len,
                 "VK_KHR_cooperative_matrix's cooperativeMatrixSupportedStages lack compute");
        return -1;
    }
    return 0;
}

/* The emulated fragments (mat=emu, a test's kernel) need of the device
 * what the rest of the template needs: float16 in workgroup memory, and
 * 16-bit storage for direct loads; Int8Gemm's, int8 in workgroup memory. */
static int emulation_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    const og_matrix_caps *m = &lim->matrix;
    if ((p->fm * p->fn) % p->sub != 0) {
        snprintf(why, len,
                 "the emulated matrix kernel gives each of its %d lanes as many elements of a "
                 "%dx%d accumulator",
                 p->sub, p->fm, p->fn);
        return -1;
    }
    if (og_family_can(p, OG_FAMILY_INT8) && !m->int8) {
        snprintf(why, len, "the emulated Int8Gemm matrix kernel needs shaderInt8");
        return -1;
    }
    if (!og_family_can(p, OG_FAMILY_INT8) &&
        (!m->float16 || (p->load == OG_LOAD_DIRECT && !m->storage16))) {
        snprintf(why, len, "the emulated matrix kernel needs shaderFloat16%s",
                 p->load == OG_LOAD_DIRECT ? " and storageBuffer16BitAccess" : "");
        return -1;
    }
    return og_limits_check(p, lim, (uint32_t)(p->sub * p->sgx * p->sgy), 1, why, len);
}

/* The cooperative-matrix tile's own rules: tiles of 32 to 256, k steps of
 * 16 to 64, fragments the templates take, 2 to 16 subgroups of 8 to 64
 * each owning whole fragments, at most 16 accumulators and 128 of their
 * elements a lane, one or two buffers. */
static int coopmat_shape_check(const og_params *p, char *why, size_t len)
{
    static const int tiles[] = {32, 64, 128, 256}, steps[] = {16, 32, 64}, splits[] = {1, 2, 4, 8},
                     pads[] = {0, 8}, bufs[] = {1, 2}, subs[] = {8, 16, 32, 64};
    int sg = p->sgx * p->sgy;
    /* Int8Gemm's rows are bytes: pad 0 or 16 keeps them on 16 bytes. */
    int int8 = og_family_can(p, OG_FAMILY_INT8);
    if (!og_one_of(p->bm, tiles, 4) || !og_one_of(p->bn, tiles, 4) || !og_one_of(p->bk, steps, 3) ||
        !og_one_of(int8 ? p->pad / 2 : p->pad, pads, 2) || (int8 && p->pad % 2) ||
        !og_one_of(p->buf, bufs, 2)) {
        snprintf(why, len,
                 "params: cooperative-matrix tile %dx%dx%d, pad=%d, buf=%d: tiles of 32, 64, 128 "
                 "or 256, k step 16, 32 or 64, pad %s, buf 1 or 2",
                 p->bm, p->bn, p->bk, p->pad, p->buf, int8 ? "0 or 16 (bytes)" : "0 or 8");
        return -1;
    }
    if (int8 && p->load != OG_LOAD_STAGED) {
        snprintf(why, len,
                 "params: int8coopmat loads staged only (uint8 operands are shifted into int8 "
                 "as they are staged)");
        return -1;
    }
    if (!fragment_taken((uint32_t)p->fm, (uint32_t)p->fn, (uint32_t)p->fk) || p->bk % p->fk != 0) {
        snprintf(why, len,
                 "params: fragment %dx%dx%d: M and N 8 or 16, K 8, 16 or 32 dividing the k step %d",
                 p->fm, p->fn, p->fk, p->bk);
        return -1;
    }
    if ((p->mat != OG_MATRIX_NV && p->mat != OG_MATRIX_KHR && p->mat != OG_MATRIX_EMU) ||
        !og_one_of(p->sub, subs, 4)) {
        snprintf(why, len,
                 "params: cooperative-matrix mat=%d sub=%d: NV, KHR or emu, subgroups of 8, 16, "
                 "32 or 64",
                 (int)p->mat, p->sub);
        return -1;
    }
    /* The split counts are checked before they divide the tile. */
    int splits_ok = og_one_of(p->sgx, splits, 4) && og_one_of(p->sgy, splits, 4);
    int wm = splits_ok ? p->bm / p->sgy : 0, wn = splits_ok ? p->bn / p->sgx : 0;
    int accs = splits_ok && wm % p->fm == 0 && wn % p->fn == 0 ? (wm / p->fm) * (wn / p->fn) : 0;
    if (!splits_ok || sg < 2 || sg > 16 || accs < 1 || accs > 16 ||
        accs * p->fm * p->fn > 128 * p->sub) {
        snprintf(why, len,
                 "params: %dx%d subgroups of %d must number 2 to 16 and each own whole %dx%d "
                 "fragments of the %dx%d tile, at most 16 accumulators and 128 of their elements "
                 "a lane",
                 p->sgx, p->sgy, p->sub, p->fm, p->fn, p->bn, p->bm);
        return -1;
    }
    return 0;
}

int og_matrix_device_check(const og_params *p, const og_limits *lim, int int8, char *why,
                           size_t len)
{
    const og_matrix_caps *m = &lim->matrix;
    uint32_t s = (uint32_t)p->sub;
    int can =
        m->size_control ? m->subgroup_min <= s && s <= m->subgroup_max : lim->subgroup_size == s;
    if (!can) {
        if (m->size_control && m->subgroup_min != m->subgroup_max)
            snprintf(why, len, "the device runs subgroups of %u to %u, none of %u", m->subgroup_min,
                     m->subgroup_max, s);
        else
            snprintf(why, len, "the device runs subgroups of %u only, the kernel needs %u",
                     m->size_control ? m->subgroup_min : lim->subgroup_size, s);
        return -1;
    }
    if (!m->full_subgroups) {
        snprintf(why, len, "the device cannot require full subgroups (computeFullSubgroups)");
        return -1;
    }
    /* Int8Gemm's fragments and tiles are int8 (the Int8 capability). */
    if (!(int8 ? m->int8 : m->float16) || !m->memory_model) {
        snprintf(why, len, "the device lacks %s",
                 !m->memory_model ? "the Vulkan memory model"
                 : int8           ? "shaderInt8"
                                  : "shaderFloat16");
        return -1;
    }
    return 0;
}

/* The cooperative-matrix tile: its own rules, then what it needs of the
 * device (reference design, "Which devices take the matrix kernel"). */
static int coopmat_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    if (coopmat_shape_check(p, why, len) != 0)
        return -1;
    if (!lim)
        return 0;
    if (p->mat == OG_MATRIX_EMU)
        return emulation_check(p, lim, why, len);
    int sg = p->sgx * p->sgy, int8 = og_family_can(p, OG_FAMILY_INT8);
    const og_matrix_caps *m = &lim->matrix;
    if (matrix_ext_check(p, m, why, len) != 0)
        return -1;
    if (og_matrix_device_check(p, lim, int8, why, len) != 0)
        return -1;
    if (p->load == OG_LOAD_DIRECT && !m->storage16) {
        snprintf(why, len, "direct fragment loads need storageBuffer16BitAccess");
        return -1;
    }
    return og_limits_check(p, lim, (uint32_t)(p->sub * sg), 1, why, len);
}

/* NV matrices, subgroups of 32, one buffer and 16x16x16 fragments unless
 * the string names others. */
static void coopmat_finish(og_params *p, unsigned seen)
{
    if (!(seen & OG_KEY_SUB))
        p->sub = OG_COOPMAT_SUBGROUP;
    if (!(seen & OG_KEY_BUF))
        p->buf = 1;
    if (!(seen & OG_KEY_FRAG))
        p->fm = p->fn = p->fk = 16;
}

static void coopmat_format(const og_params *p, char *buf, size_t len)
{
    /* NV matrices in subgroups of 32 with one buffer keep the text they
     * had before KHR matrices and double buffering existed, so the
     * records measured then keep their keys. */
    int used = snprintf(buf, len, "variant=%s,bm=%d,bn=%d,bk=%d,sgx=%d,sgy=%d,pad=%d,load=%s",
                        og_family_of(p)->name, p->bm, p->bn, p->bk, p->sgx, p->sgy, p->pad,
                        p->load == OG_LOAD_DIRECT ? "direct" : "staged");
    if (p->mat != OG_MATRIX_NV && used >= 0 && (size_t)used < len)
        used += snprintf(buf + used, len - (size_t)used, ",mat=%s",
                         p->mat == OG_MATRIX_KHR ? "khr" : "emu");
    if (p->sub != OG_COOPMAT_SUBGROUP && used >= 0 && (size_t)used < len)
        used += snprintf(buf + used, len - (size_t)used, ",sub=%d", p->sub);
    if (p->buf != 1 && used >= 0 && (size_t)used < len)
        used += snprintf(buf + used, len - (size_t)used, ",buf=%d", p->buf);
    if ((p->fm != 16 || p->fn != 16 || p->fk != 16) && used >= 0 && (size_t)used < len)
        snprintf(buf + used, len - (size_t)used, ",frag=%dx%dx%d", p->fm, p->fn, p->fk);
}

/* Float16 inputs (no bfloat16 cooperative matrices in this toolchain), or
 * float32 split into float16 parts (recovered), GLSL
 * (GL_NV_cooperative_matrix; glslang's HLSL has none); a low-bit prefill's
 * types are og_kernel_check's qformat rules'. */
static int coopmat_check_key(const og_kernel_key *key, char *why, size_t len)
{
    if (!key->qformat && (key->dtype != (key->recover ? OG_F32 : OG_F16) || key->dialect != OG_GLSL)) {
        snprintf(why, len,
                 "gen: the cooperative-matrix kernel takes float16 inputs (float32 when "
                 "recovered), in GLSL");
        return -1;
    }
    return 0;
}

/* Int8Gemm's matrix tile: GLSL (GL_NV_integer_cooperative_matrix). */
static int int8_coopmat_check_key(const og_kernel_key *key, char *why, size_t len)
{
    if (key->dialect != OG_GLSL) {
        snprintf(why, len, "gen: the Int8Gemm cooperative-matrix kernel is written in GLSL only");
        return -1;
    }
    return 0;
}

/* The float16 A and B tiles, padded, once or twice (buf), and a float32
 * fm x fn fragment per subgroup that the accumulators leave through. */
static uint32_t coopmat_shared_bytes(const og_params *p)
{
    return (uint32_t)(2 * p->buf * (p->bm * (p->bk + p->pad) + p->bk * (p->bn + p->pad)) +
                      4 * p->fm * p->fn * p->sgx * p->sgy);
}

/* The same with int8 tiles, and three int32 fragments per subgroup (the
 * sums, their row terms and their column terms). */
static uint32_t int8_coopmat_shared_bytes(const og_params *p)
{
    return (uint32_t)(p->buf * (p->bm * (p->bk + p->pad) + p->bk * (p->bn + p->pad)) +
                      12 * p->fm * p->fn * p->sgx * p->sgy);
}

static void coopmat_local_size(const og_params *p, uint32_t size[3])
{
    size[0] = (uint32_t)(p->sub * p->sgx * p->sgy);
}

/* Each accumulator's epilogue loop. */
static uint64_t epilogue_loops(const og_params *p)
{
    uint64_t accs = (uint64_t)((p->bm / p->sgy / p->fm) * (p->bn / p->sgx / p->fn));
    uint64_t elements = (uint64_t)(p->fm * p->fn);
    return accs * ((elements + (uint64_t)p->sub - 1u) / (uint64_t)p->sub + 1u);
}

/* k steps: the staging loops and the fk-deep products (the direct steps'
 * loops counted as staged ones; double buffering stages one step more,
 * before the loop); then each accumulator's epilogue loop. */
static uint64_t coopmat_loops(const og_params *p, uint64_t k_len)
{
    uint64_t threads = (uint64_t)p->sub * (uint64_t)(p->sgx * p->sgy);
    uint64_t loads = og_steps((uint64_t)(p->bm * p->bk), (int)threads) +
                     og_steps((uint64_t)(p->bk * p->bn), (int)threads);
    return (og_steps(k_len, p->bk) + (uint64_t)(p->buf - 1)) *
               (1u + 2u * ((uint64_t)(p->bk / p->fk) + 1u) + loads + 2u) +
           2u + epilogue_loops(p);
}

/* k steps (the staging unrolled): the fk-deep products; then each
 * accumulator's epilogue loop. */
static uint64_t int8_coopmat_loops(const og_params *p, uint64_t k_len)
{
    return og_steps(k_len, p->bk) * (2u + (uint64_t)(p->bk / p->fk)) + 1u + epilogue_loops(p);
}

#define MATRIX_KEYS                                                                                \
    (OG_KEY_BM | OG_KEY_BN | OG_KEY_BK | OG_KEY_SGX | OG_KEY_SGY | OG_KEY_PAD | OG_KEY_LOAD)

/* A cooperative-matrix tile (the extension and subgroup size: add_matrix). */
static og_params matrix_tile(int bm, int bn, int bk, int sgx, int sgy, int pad, int direct, int buf)
{
    return (og_params){.variant = OG_VARIANT_COOPMAT,
                       .bm = bm,
                       .bn = bn,
                       .bk = bk,
                       .sgx = sgx,
                       .sgy = sgy,
                       .pad = pad,
                       .load = direct ? OG_LOAD_DIRECT : OG_LOAD_STAGED,
                       .buf = buf};
}

/* The cooperative-matrix tiles: the reference design's 8- and 4-subgroup
 * 64x64x16 tiles staged and with direct fragment loads, and a 128x128x32
 * tile of four subgroups owning 64x64 each (16 accumulators), double
 * buffered. The standard preset adds 128-wide tiles, the 32 k step, other
 * subgroup arrangements and no padding (one buffer); two buffers for those
 * tiles with 8 or 4 subgroups; and the large tiles, 128x128, 256x128 and
 * 128x256, with k steps of 32 and 64, one or two buffers. Each with the NV
 * and the KHR extension where the device has it; og_space_add() drops what the
 * device's workgroup memory or invocations do not allow and arrangements
 * of more than 16 accumulators a subgroup. */
static og_status coopmat_space(og_space_list *c, const og_space_ask *ask)
{
    static const int tiles[][2] = {{64, 64}, {128, 64}, {64, 128}, {128, 128}},
                     large[][2] = {{128, 128}, {256, 128}, {128, 256}},
                     groups[][2] = {{4, 2}, {2, 2}, {2, 4}, {4, 1}}, pads[] = {8, 0};
    og_status st = OG_OK;
    for (int d = 0; d < 2 && st == OG_OK; d++)
        for (int sg = 8; sg >= 4 && st == OG_OK; sg /= 2) {
            og_params p = og_params_coopmat(sg);
            p.load = d ? OG_LOAD_DIRECT : OG_LOAD_STAGED;
            st = og_space_add_matrix(c, p);
        }
    for (int d = 0; d < 2 && st == OG_OK; d++)
        st = og_space_add_matrix(c, matrix_tile(128, 128, 32, 2, 2, 8, d, 2));
    for (int t = 0; ask->standard && t < 4; t++)
        for (int k = 16; k <= 32; k += 16)
            for (int g = 0; g < 4; g++)
                for (int v = 0; v < 6 && st == OG_OK; v++) {
                    /* pad 8 and 0 with one buffer, pad 8 with two (8 or 4 subgroups) */
                    int buf = v < 4 ? 1 : 2;
                    if (buf == 1 || g < 2)
                        st = og_space_add_matrix(c, matrix_tile(tiles[t][0], tiles[t][1], k, groups[g][0],
                                                       groups[g][1], pads[v < 4 ? v / 2 : 0], v % 2,
                                                       buf));
                }
    for (int t = 0; ask->standard && t < 3; t++)
        for (int k = 32; k <= 64; k *= 2)
            for (int g = 0; g < 3; g++)
                for (int v = 0; v < 4 && st == OG_OK; v++)
                    st = og_space_add_matrix(c, matrix_tile(large[t][0], large[t][1], k, groups[g][0],
                                                   groups[g][1], 8, v % 2, 1 + v / 2));
    return st;
}

const og_family og_family_coopmat = {
    .variant = OG_VARIANT_COOPMAT,
    .name = "coopmat",
    .template_name = OG_TEMPLATE_COOPMAT,
    .can = OG_FAMILY_TILED | OG_FAMILY_MATRIX | OG_FAMILY_CONV | OG_FAMILY_RECOVER |
           OG_FAMILY_PREFILL,
    .keys = MATRIX_KEYS,
    .optional = OG_KEY_FRAG | OG_KEY_MAT | OG_KEY_SUB | OG_KEY_BUF,
    .keys_text = "bm,bn,bk,sgx,sgy,pad,load for variant=coopmat",
    .finish = coopmat_finish,
    .format = coopmat_format,
    .check = coopmat_check,
    .check_key = coopmat_check_key,
    .shared_bytes = coopmat_shared_bytes,
    .local_size = coopmat_local_size,
    .loop_iterations = coopmat_loops,
    .space = coopmat_space,
};

/* Int8Gemm's matrix tiles beside the portable ones: the 8- and 4-subgroup
 * 64x64x16 tiles (one and two buffers) and a double-buffered 128x128x32
 * tile of four subgroups; the standard preset adds 128-wide tiles, the 32
 * k step, other subgroup arrangements and no padding. Each with the NV and
 * the KHR extension where the device lists int8 x int8 -> int32 fragments
 * (og_space_add() drops the others). */
static og_status int8_matrix_space(og_space_list *c, const og_space_ask *ask)
{
    static const int tiles[][2] = {{64, 64}, {128, 64}, {64, 128}, {128, 128}},
                     groups[][2] = {{4, 2}, {2, 2}, {2, 4}, {4, 1}};
    og_status st = OG_OK;
    for (int sg = 8; sg >= 4 && st == OG_OK; sg /= 2)
        for (int buf = 1; buf <= 2 && st == OG_OK; buf++) {
            og_params p = og_params_int8_coopmat(sg);
            p.buf = buf;
            st = og_space_add_matrix(c, p);
        }
    og_params big = og_params_int8_coopmat(4);
    big.bm = big.bn = 128;
    big.bk = 32;
    big.buf = 2;
    if (st == OG_OK)
        st = og_space_add_matrix(c, big);
    for (int t = 0; ask->standard && t < 4; t++)
        for (int k = 16; k <= 32; k += 16)
            for (int g = 0; g < 4; g++)
                for (int v = 0; v < 4 && st == OG_OK; v++) {
                    og_params p = og_params_int8_coopmat(8);
                    p.bm = tiles[t][0];
                    p.bn = tiles[t][1];
                    p.bk = k;
                    p.sgx = groups[g][0];
                    p.sgy = groups[g][1];
                    p.pad = v & 1 ? 0 : 16;
                    p.buf = 1 + (v >> 1);
                    st = og_space_add_matrix(c, p);
                }
    return st;
}

const og_family og_family_int8_coopmat = {
    .variant = OG_VARIANT_INT8_COOPMAT,
    .name = "int8coopmat",
    .template_name = OG_TEMPLATE_INT8_COOPMAT,
    .can = OG_FAMILY_TILED | OG_FAMILY_MATRIX | OG_FAMILY_INT8,
    .keys = MATRIX_KEYS,
    .optional = OG_KEY_FRAG | OG_KEY_MAT | OG_KEY_SUB | OG_KEY_BUF,
    .keys_text = "bm,bn,bk,sgx,sgy,pad,load for variant=int8coopmat",
    .finish = coopmat_finish,
    .format = coopmat_format,
    .check = coopmat_check,
    .check_key = int8_coopmat_check_key,
    .shared_bytes = int8_coopmat_shared_bytes,
    .local_size = coopmat_local_size,
    .loop_iterations = int8_coopmat_loops,
    .space = int8_matrix_space,
};
