/* The planning layer without a device: split-k ranges, the few-rows choice,
 * pieces under lowered limits and the memory choice, against the rules of
 * the reference design ("Small grids and few rows") and of onegpu.h, with
 * the expected numbers worked out by hand in each case. No Vulkan call is
 * made: the buffers are plain structures and the limits are made up. */
#include <criterion/criterion.h>
#include <string.h>

#include "og_internal.h" /* the plan layer under test */
#include "og_tuner.h"

/* A lavapipe-like device, with its grid counts lowered where a test says. */
static og_limits limits(uint32_t count_y, uint32_t count_z)
{
    og_limits l = {.max_invocations = 1024,
                   .max_size = {1024, 1024, 64},
                   .max_count = {65535, count_y, count_z},
                   .max_shared_bytes = 32768,
                   .max_storage_range = 1u << 27,
                   .max_push_bytes = 256,
                   .subgroup_size = 8,
                   .max_texel_elements = 1u << 27};
    return l;
}

/* A buffer as the plan sees it: a size, no Vulkan object. */
static og_buffer fake_buffer(uint64_t bytes)
{
    og_buffer b = {.size = bytes,
                   .allocated = bytes < 4 ? 4 : (bytes + 3) & ~3ull,
                   .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                            VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT};
    return b;
}

typedef struct call {
    og_buffer a, b, c;
    og_gemm_args args;
} call;

/* A float32 call M x N x K, batch, packed operands, alpha 1 beta 0. */
static void make_call(call *c, int64_t m, int64_t n, int64_t k, int64_t batch)
{
    c->a = fake_buffer((uint64_t)(m * k * batch) * 4);
    c->b = fake_buffer((uint64_t)(k * n * batch) * 4);
    c->c = fake_buffer((uint64_t)(m * n * batch) * 4);
    c->args = (og_gemm_args){.m = m,
                             .n = n,
                             .k = k,
                             .batch = batch,
                             .alpha = 1,
                             .a = &c->a,
                             .b = &c->b,
                             .c = &c->c,
                             .lda = k,
                             .ldb = n,
                             .ldc = n,
                             .stride_a = m * k,
                             .stride_b = k * n,
                             .stride_c = m * n};
}

static og_gemm_config config(void)
{
    return (og_gemm_config){.a_type = OG_F32, .b_type = OG_F32, .scratch_bytes = OG_SCRATCH_BYTES};
}

/* Checks and plans c with parameters p; returns the status, err holds the message. */
static og_status plan_call(const og_gemm_config *cfg, const og_limits *lim, call *c,
                           const og_params *p, og_plan *pl, char *err)
{
    og_push push;
    og_status st = og_gemm_check(cfg, lim, err, &c->args, &push);
    cr_assert_eq(st, OG_OK, "check: %s", err);
    return og_gemm_plan(cfg, lim, err, &c->args, p, &push, pl);
}

/* The rule by hand: wgs = ceil(M/64) * ceil(N/64) * batch workgroups; below
 * 384 with K >= 128, want = min(16, ceil(384 / wgs)) ranges of
 * max(64, roundup32(ceil(K / want))) terms. */
static const struct {
    int64_t m, n, k, batch;
    uint32_t ranges, len;
} split_cases[] = {
    {128, 768, 768, 1, 12, 64},     /* BERT projection: 24 wgs, want 16, 48 -> 64 */
    {128, 2304, 768, 1, 6, 128},    /* 72 wgs, want 6 */
    {128, 3072, 768, 1, 4, 192},    /* 96 wgs, want 4 */
    {128, 768, 3072, 1, 16, 192},   /* 24 wgs, want 16 */
    {1024, 768, 3072, 1, 2, 1536},  /* 192 wgs, want 2 */
    {1024, 1024, 1024, 1, 2, 512},  /* 256 wgs, want 2 */
    {2048, 2048, 2048, 1, 1, 2048}, /* 1024 wgs: not split */
    {64, 64, 127, 1, 1, 127},       /* K < 128: not split */
    {64, 64, 130, 1, 3, 64},        /* 1 wg, want 16, 9 -> 32 -> 64: 64, 64, 2 */
    {64, 64, 4096, 8, 16, 256},     /* 8 wgs, want 16 */
    {130, 130, 1000, 1, 16, 64},    /* 9 wgs, want 16, 63 -> 64 */
};

Test(plan, split_ranges_follow_the_design_rule)
{
    og_limits lim = limits(65535, 65535);
    og_gemm_config cfg = config();
    og_params p = og_params_default();
    for (size_t i = 0; i < sizeof split_cases / sizeof split_cases[0]; i++) {
        call c;
        make_call(&c, split_cases[i].m, split_cases[i].n, split_cases[i].k, split_cases[i].batch);
        og_plan pl;
        char err[OG_ERROR_MAX];
        cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
        cr_expect_eq(pl.ranges, split_cases[i].ranges, "case %zu: %u ranges, expected %u", i,
                     pl.ranges, split_cases[i].ranges);
        cr_expect_eq(pl.range_len, split_cases[i].len, "case %zu: ranges of %u, expected %u", i,
                     pl.range_len, split_cases[i].len);
        og_piece piece;
        og_plan_piece(&pl, 0, &piece);
        if (pl.ranges > 1) {
            /* Planes of raw range sums into the scratch, then their reduction into C. */
            cr_expect_eq(piece.n_steps, 2, "case %zu", i);
            cr_expect_eq(piece.step[0].key.kernel, OG_KERNEL_PLANES);
            cr_expect_eq(piece.step[0].grid[2], split_cases[i].batch * split_cases[i].ranges);
            cr_expect_eq(piece.step[0].bind[2], OG_OPERAND_SCRATCH);
            cr_expect_eq(piece.step[1].key.kernel, OG_KERNEL_REDUCE);
            cr_expect_eq(piece.step[1].bind[0], OG_OPERAND_SCRATCH);
            cr_expect_eq(piece.step[1].bind[2], OG_OPERAND_C);
            cr_expect_eq(pl.scratch_bytes, OG_SCRATCH_BYTES);
        } else {
            cr_expect_eq(piece.n_steps, 1, "case %zu", i);
            cr_expect_eq(piece.step[0].key.kernel, OG_KERNEL_GEMM);
            cr_expect_eq(pl.scratch_bytes, 0);
        }
    }
}

/* Fewer ranges when the planes would not fit the scratch: room for three
 * planes of 128 x 768 turns 12 ranges of 64 into 3 of 256. Split 1 never
 * splits; split 5 cuts 768 into ranges of 154. */
Test(plan, split_ranges_shrink_to_the_scratch_and_follow_the_tuned_count)
{
    og_limits lim = limits(65535, 65535);
    og_gemm_config cfg = config();
    cfg.scratch_bytes = 3 * 128 * 768 * 4 + 100;
    og_params p = og_params_default();
    call c;
    make_call(&c, 128, 768, 768, 1);
    og_plan pl;
    char err[OG_ERROR_MAX];
    cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
    cr_expect_eq(pl.ranges, 3);
    cr_expect_eq(pl.range_len, 256);
    cfg = config();
    p.split = 1;
    cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
    cr_expect_eq(pl.ranges, 1);
    p.split = 5;
    cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
    cr_expect_eq(pl.ranges, 5);
    cr_expect_eq(pl.range_len, 154);
}

/* Few rows: float32 (and FP8) with 1 <= M <= 4 and A not transposed; 16
 * columns a workgroup below N = 8192, 32 from it; B stored N x K takes 8. */
Test(plan, few_rows_is_chosen_from_the_shape)
{
    for (int64_t m = 1; m <= 4; m++)
        cr_expect(og_fewrows_eligible(OG_F32, m, 0), "M = %ld", (long)m);
    cr_expect(!og_fewrows_eligible(OG_F32, 0, 0));
    cr_expect(!og_fewrows_eligible(OG_F32, 5, 0));
    cr_expect(!og_fewrows_eligible(OG_F32, 1, 1));
    cr_expect(!og_fewrows_eligible(OG_F16, 1, 0));
    cr_expect(!og_fewrows_eligible(OG_BF16, 2, 0));
    cr_expect(og_fewrows_eligible(OG_FP8_E4M3, 3, 0));
    cr_expect_eq(og_params_fewrows(0, 768).cols, 16);
    cr_expect_eq(og_params_fewrows(0, 8192).cols, 32);
    cr_expect_eq(og_params_fewrows(1, 768).cols, 8);
    cr_expect(og_int8_skinny_eligible(16, 0));
    cr_expect(!og_int8_skinny_eligible(17, 0));
    cr_expect(!og_int8_skinny_eligible(1, 1));

    og_limits lim = limits(65535, 65535);
    og_gemm_config cfg = config();
    og_params p = og_params_fewrows(0, 3072);
    call c;
    make_call(&c, 1, 3072, 768, 1);
    og_plan pl;
    char err[OG_ERROR_MAX];
    cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
    cr_expect_eq(pl.key.p.variant, OG_VARIANT_FEWROWS);
    cr_expect_eq(pl.ranges, 1, "few rows never splits k");
    cr_expect_eq(pl.gx, 3072 / 16);
    cr_expect_eq(pl.pieces, 1);
    /* M = 5 cannot take it. */
    make_call(&c, 5, 3072, 768, 1);
    cr_expect_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_ERROR_UNSUPPORTED);
    cr_expect(strstr(err, "M = 5") != NULL, "%s", err);
}

/* Every piece of pl has piece 0's steps but for push constants and grids:
 * what og_record_plan relies on to make pipelines and sets once. */
static void expect_pieces_share_steps(const og_plan *pl)
{
    og_piece p0, piece;
    og_plan_piece(pl, 0, &p0);
    for (uint64_t i = 1; i < pl->pieces; i++) {
        og_plan_piece(pl, i, &piece);
        cr_assert_eq(piece.n_steps, p0.n_steps, "piece %lu", (unsigned long)i);
        for (int j = 0; j < p0.n_steps; j++) {
            const og_step *a = &p0.step[j], *b = &piece.step[j];
            cr_expect(memcmp(&a->key, &b->key, sizeof a->key) == 0, "piece %lu step %d: kernel",
                      (unsigned long)i, j);
            cr_expect_eq(a->src, b->src, "piece %lu step %d", (unsigned long)i, j);
            cr_expect_eq(a->vec_words, b->vec_words, "piece %lu step %d", (unsigned long)i, j);
            cr_expect(memcmp(a->bind, b->bind, sizeof a->bind) == 0, "piece %lu step %d: bindings",
                      (unsigned long)i, j);
        }
    }
}

/* Pieces: with maxComputeWorkGroupCount y = 2 and z = 3, M = 300 runs as
 * rows 0-127, 128-255, 256-299 (two 64-row tiles each) and a batch of 7 as
 * products 0-2, 3-5, 6: nine pieces, each offset into A and C. */
Test(plan, pieces_cover_the_grid_under_lowered_limits)
{
    og_limits lim = limits(2, 3);
    og_gemm_config cfg = config();
    og_params p = og_params_default();
    call c;
    make_call(&c, 300, 64, 64, 7);
    og_plan pl;
    char err[OG_ERROR_MAX];
    cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
    cr_assert_eq(pl.ranges, 1);
    cr_assert_eq(pl.pieces, 9);
    expect_pieces_share_steps(&pl);
    static const uint32_t rows[3] = {128, 128, 44}, products[3] = {3, 3, 1};
    for (uint64_t i = 0; i < 9; i++) {
        og_piece piece;
        og_plan_piece(&pl, i, &piece);
        cr_assert_eq(piece.n_steps, 1);
        const og_step *s = &piece.step[0];
        uint32_t r0 = (uint32_t)(i % 3) * 128, b0 = (uint32_t)(i / 3) * 3;
        cr_expect_eq(s->push.m, rows[i % 3], "piece %lu: %u rows", (unsigned long)i, s->push.m);
        cr_expect_eq(s->push.batch, products[i / 3], "piece %lu", (unsigned long)i);
        cr_expect_eq(s->push.off_a, r0 * 64 + b0 * 300 * 64, "piece %lu", (unsigned long)i);
        cr_expect_eq(s->push.off_b, b0 * 64 * 64, "piece %lu", (unsigned long)i);
        cr_expect_eq(s->push.off_c, r0 * 64 + b0 * 300 * 64, "piece %lu", (unsigned long)i);
        cr_expect_eq(s->grid[1], (rows[i % 3] + 63) / 64);
        cr_expect_eq(s->grid[2], products[i / 3]);
        cr_expect_eq(s->push.n, 64);
        cr_expect_eq(s->push.k, 64, "every piece keeps the whole k");
    }
    /* Split-k: 16 ranges and z = 20 leave one product a piece. */
    lim = limits(65535, 20);
    make_call(&c, 64, 64, 4096, 2);
    cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
    cr_expect_eq(pl.ranges, 16);
    cr_expect_eq(pl.pieces, 2);
    expect_pieces_share_steps(&pl);
    og_piece piece;
    og_plan_piece(&pl, 1, &piece);
    cr_expect_eq(piece.step[0].grid[2], 16);
    cr_expect_eq(piece.step[0].push.off_a, 64 * 4096);
    /* 16 ranges beyond z = 8: refused, naming the limit. */
    lim = limits(65535, 8);
    cr_expect_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_ERROR_UNSUPPORTED);
    cr_expect(strstr(err, "maxComputeWorkGroupCount[2]") != NULL, "%s", err);
    /* N beyond the x count: refused, naming N. */
    lim = limits(65535, 65535);
    lim.max_count[0] = 4;
    make_call(&c, 64, 320, 64, 1);
    cr_expect_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_ERROR_UNSUPPORTED);
    cr_expect(strstr(err, "N = 320") != NULL, "%s", err);
}

/* Operands in a pool past 2^32 elements (a 40 GiB buffer, as the plan sees
 * it): each binding starts at its operand's first byte aligned down to 64
 * (the device's binding alignment), the push constants carry the rest, and
 * the pieces' offsets count from there; an A past maxStorageBufferRange is
 * read by address from the same start. Worked out by hand: A at element
 * 2^33 + 5 starts at byte 2^35 with 5 left; C at 2^32 + 7 at 2^34 with 7. */
Test(plan, offsets_past_2_32_elements_start_the_bindings)
{
    og_limits lim = limits(2, 65535);
    lim.bind_align = 64;
    og_gemm_config cfg = config();
    og_params p = og_params_default();
    p.split = 1;
    call c;
    make_call(&c, 300, 64, 64, 1);
    c.a = c.b = c.c = fake_buffer(40ull << 30);
    c.args.a_offset = (1ll << 33) + 5;
    c.args.b_offset = (1ll << 33) + 300 * 64 + 64; /* byte 2^35 + 77056: a multiple of 64 */
    c.args.c_offset = (1ll << 32) + 7;
    og_plan pl;
    char err[OG_ERROR_MAX];
    cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
    cr_expect_eq(pl.start[OG_OPERAND_A], 1ull << 35);
    cr_expect_eq(pl.start[OG_OPERAND_B], (1ull << 35) + 77056);
    cr_expect_eq(pl.start[OG_OPERAND_C], 1ull << 34);
    cr_expect_eq(pl.key.p.src, OG_SRC_STORAGE, "each operand's own extent fits its binding");
    cr_expect_eq(pl.pieces, 3, "128 rows a piece (y count 2 of 64-row tiles)");
    for (uint64_t i = 0; i < pl.pieces; i++) {
        og_piece piece;
        og_plan_piece(&pl, i, &piece);
        uint32_t r0 = (uint32_t)i * 128;
        cr_expect_eq(piece.step[0].push.off_a, 5 + r0 * 64, "piece %lu", (unsigned long)i);
        cr_expect_eq(piece.step[0].push.off_b, 0, "piece %lu", (unsigned long)i);
        cr_expect_eq(piece.step[0].push.off_c, 7 + r0 * 64, "piece %lu", (unsigned long)i);
    }
    /* A of 300 x 2^19 floats (600 MiB, past the 128 MiB range): by address. */
    lim.buffer_address = 1;
    c.a.address = 1ull << 40;
    c.args.k = c.args.lda = 1 << 19;
    c.args.ldb = 64;
    c.args.b_offset = 0;
    c.b = fake_buffer((uint64_t)(1 << 19) * 64 * 4);
    cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
    cr_expect_eq(pl.key.p.src, OG_SRC_ADDR);
    cr_expect_eq(pl.start[OG_OPERAND_A], 1ull << 35);
    /* An operand spanning more than 2^32 elements from its start: refused. */
    og_push push;
    c.args.k = 64;
    c.args.lda = 1ll << 24; /* 299 rows of 2^24: past 2^32 elements */
    cr_expect_eq(og_gemm_check(&cfg, &lim, err, &c.args, &push), OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(err, "gemm: A spans more than 2^32 elements"), "%s", err);
}

/* Nothing to record: M = 0, or K = 0 (or alpha = 0) with beta = 1 and no
 * epilogue. */
Test(plan, empty_calls_plan_no_piece)
{
    og_limits lim = limits(65535, 65535);
    og_gemm_config cfg = config();
    og_params p = og_params_default();
    call c;
    make_call(&c, 8, 8, 0, 1);
    c.args.lda = 1; /* at least 1, as BLAS asks */
    c.args.beta = 1;
    og_plan pl;
    char err[OG_ERROR_MAX];
    cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
    cr_expect_eq(pl.pieces, 0);
    /* K = 0, or alpha = 0, still scales C: one elementwise piece that binds
     * no A or B, whatever kernel was selected (a tuned texel kernel with
     * vector loads would find no vector texel in the placeholder). */
    p.src = OG_SRC_TEXEL;
    p.vec = 4;
    for (int alpha0 = 0; alpha0 < 2; alpha0++) {
        make_call(&c, 8, 8, alpha0 ? 8 : 0, 1);
        c.args.lda = alpha0 ? 8 : 1;
        c.args.alpha = alpha0 ? 0.0f : 1.0f;
        c.args.beta = 0.5f;
        cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
        cr_expect_eq(pl.pieces, 1);
        cr_expect_eq(pl.key.kernel, OG_KERNEL_SCALE);
        og_piece piece;
        og_plan_piece(&pl, 0, &piece);
        cr_expect_eq(piece.n_steps, 1);
        cr_expect_eq(piece.step[0].src, OG_SRC_STORAGE);
        cr_expect_eq(piece.step[0].bind[0], OG_OPERAND_NONE);
        cr_expect_eq(piece.step[0].bind[1], OG_OPERAND_NONE);
        cr_expect_eq(piece.step[0].bind[2], OG_OPERAND_C);
        /* beta = 1 without an epilogue leaves C: nothing recorded. */
        c.args.beta = 1.0f;
        cr_assert_eq(plan_call(&cfg, &lim, &c, &p, &pl, err), OG_OK, "%s", err);
        cr_expect_eq(pl.pieces, 0);
    }
}

/* A wrapped buffer's skew joins the element offsets, and a skew that breaks
 * 16-byte groups turns vector loads off. */
Test(plan, wrapped_buffer_skew_moves_the_offsets)
{
    og_limits lim = limits(65535, 65535);
    og_gemm_config cfg = config();
    call c;
    make_call(&c, 64, 64, 64, 1);
    c.a.skew = 8;
    c.a.allocated += 8;
    c.c.skew = 12;
    c.c.allocated += 12;
    og_push push;
    char err[OG_ERROR_MAX];
    cr_assert_eq(og_gemm_check(&cfg, &lim, err, &c.args, &push), OG_OK, "%s", err);
    cr_expect_eq(push.off_a, 2);
    cr_expect_eq(push.off_b, 0);
    cr_expect_eq(push.off_c, 3);
    og_params p = og_params_default();
    p.vec = 4;
    cr_expect_eq(og_params_for_call(&cfg, &lim, &c.args, &p, 0).vec, 1);
    c.a.skew = 16;
    cr_expect_eq(og_params_for_call(&cfg, &lim, &c.args, &p, 0).vec, 4);
    /* A buffer without texel usage reads A and B as storage buffers. */
    p.src = OG_SRC_TEXEL;
    c.b.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    cr_expect_eq(og_params_for_call(&cfg, &lim, &c.args, &p, 0).src, OG_SRC_STORAGE);
}

/* Few rows read four elements at a time only where every offset, leading
 * dimension and batch stride is a multiple of four (K = 0 reads nothing:
 * empty_calls_plan_no_piece). */
Test(plan, few_rows_vector_loads_need_fours)
{
    og_limits lim = limits(65535, 65535);
    og_gemm_config cfg = config();
    call c;
    make_call(&c, 1, 64, 64, 1);
    og_params p = og_params_fewrows(0, 64);
    cr_assert_eq(p.vec, 4);
    cr_expect_eq(og_params_for_call(&cfg, &lim, &c.args, &p, 0).vec, 4);
    for (int field = 0; field < 5; field++) {
        og_gemm_args g = c.args;
        int64_t *v[] = {&g.lda, &g.ldb, &g.a_offset, &g.b_offset, &g.stride_b};
        *v[field] += 2;
        cr_expect_eq(og_params_for_call(&cfg, &lim, &g, &p, 0).vec, 1, "field %d", field);
    }
    c.b.skew = 8;
    cr_expect_eq(og_params_for_call(&cfg, &lim, &c.args, &p, 0).vec, 1);
}

/* ---- the memory choice (og_memory_choose), on made-up devices ---- */

enum {
    DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
    HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
    HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
    CACHED = VK_MEMORY_PROPERTY_HOST_CACHED_BIT
};
#define GIB (1ull << 30)

static VkPhysicalDeviceMemoryProperties memory(const VkDeviceSize *heaps, const int *heap_local,
                                               uint32_t n_heaps, const VkMemoryPropertyFlags *flags,
                                               const uint32_t *heap_of, uint32_t n_types)
{
    VkPhysicalDeviceMemoryProperties mp = {.memoryTypeCount = n_types, .memoryHeapCount = n_heaps};
    for (uint32_t h = 0; h < n_heaps; h++)
        mp.memoryHeaps[h] =
            (VkMemoryHeap){heaps[h], heap_local[h] ? VK_MEMORY_HEAP_DEVICE_LOCAL_BIT : 0};
    for (uint32_t t = 0; t < n_types; t++)
        mp.memoryTypes[t] = (VkMemoryType){flags[t], heap_of[t]};
    return mp;
}

/* A discrete GPU without resizable BAR (an H200 as its driver lists it:
 * HBM, system memory, and a 256 MiB BAR window): operands in HBM, copies
 * through cached system memory, the window left alone. */
Test(plan, memory_discrete_without_resizable_bar_stages)
{
    VkDeviceSize heaps[] = {141 * GIB, 128 * GIB, 256ull << 20};
    int local[] = {1, 0, 1};
    VkMemoryPropertyFlags flags[] = {DL, HV | HC, HV | HC | CACHED, DL | HV | HC};
    uint32_t heap_of[] = {0, 1, 1, 2};
    VkPhysicalDeviceMemoryProperties mp = memory(heaps, local, 3, flags, heap_of, 4);
    og_memory_choice mc;
    og_memory_choose(&mp, ~0u, 0, &mc);
    cr_expect_eq(mc.operand_type, 0);
    cr_expect_eq(mc.staging_type, 2);
    cr_expect(!mc.map_writes && !mc.map_reads);
    cr_expect_eq(mc.placement, OG_PLACEMENT_DEVICE_LOCAL);
    cr_expect_str_eq(og_placement_name(mc.placement), "device-local");
    /* A buffer that may not use type 0 still gets device-local memory, unmapped. */
    og_memory_choose(&mp, ~1u, 0, &mc);
    cr_expect_eq(mc.operand_type, 3);
    cr_expect(!mc.map_writes);
}

/* Resizable BAR (an RDNA3 card with it on): all of VRAM is host-visible,
 * so operands are written in place, but read back through cached staging
 * memory (the BAR type is uncached). */
Test(plan, memory_resizable_bar_maps_writes_and_stages_reads)
{
    VkDeviceSize heaps[] = {16 * GIB, 32 * GIB};
    int local[] = {1, 0};
    VkMemoryPropertyFlags flags[] = {DL, DL | HV | HC, HV | HC, HV | HC | CACHED};
    uint32_t heap_of[] = {0, 0, 1, 1};
    VkPhysicalDeviceMemoryProperties mp = memory(heaps, local, 2, flags, heap_of, 4);
    og_memory_choice mc;
    og_memory_choose(&mp, ~0u, 0, &mc);
    cr_expect_eq(mc.operand_type, 1);
    cr_expect(mc.map_writes && !mc.map_reads);
    cr_expect_eq(mc.staging_type, 3);
    cr_expect_str_eq(og_placement_name(mc.placement), "device-local-mapped");
    og_memory_choose(&mp, ~0u, 1, &mc); /* forced staging */
    cr_expect_eq(mc.operand_type, 0);
    cr_expect(!mc.map_writes && !mc.map_reads);
}

/* An integrated GPU: one heap, cached and uncached host-visible types:
 * the cached one is mapped both ways. Lavapipe's one type is all flags. */
Test(plan, memory_integrated_and_lavapipe_map_cached_memory)
{
    VkDeviceSize heaps[] = {16 * GIB};
    int local[] = {1};
    VkMemoryPropertyFlags flags[] = {DL, DL | HV | HC, DL | HV | HC | CACHED};
    uint32_t heap_of[] = {0, 0, 0};
    VkPhysicalDeviceMemoryProperties mp = memory(heaps, local, 1, flags, heap_of, 3);
    og_memory_choice mc;
    og_memory_choose(&mp, ~0u, 0, &mc);
    cr_expect_eq(mc.operand_type, 2);
    cr_expect(mc.map_writes && mc.map_reads);

    VkMemoryPropertyFlags lvp[] = {DL | HV | HC | CACHED};
    uint32_t lvp_heap[] = {0};
    mp = memory(heaps, local, 1, lvp, lvp_heap, 1);
    og_memory_choose(&mp, ~0u, 0, &mc);
    cr_expect_eq(mc.operand_type, 0);
    cr_expect(mc.map_writes && mc.map_reads);
    cr_expect_eq(mc.placement, OG_PLACEMENT_DEVICE_MAPPED);
    og_memory_choose(&mp, ~0u, 1, &mc);
    cr_expect_eq(mc.operand_type, 0);
    cr_expect_eq(mc.staging_type, 0);
    cr_expect(!mc.map_writes && !mc.map_reads, "forced staging runs the copies on lavapipe");
    cr_expect_eq(mc.placement, OG_PLACEMENT_DEVICE_LOCAL);
}

/* No device-local memory at all: host-visible memory, mapped. */
Test(plan, memory_without_device_local_heap_is_host_visible)
{
    VkDeviceSize heaps[] = {8 * GIB};
    int local[] = {0};
    VkMemoryPropertyFlags flags[] = {HV | HC};
    uint32_t heap_of[] = {0};
    VkPhysicalDeviceMemoryProperties mp = memory(heaps, local, 1, flags, heap_of, 1);
    og_memory_choice mc;
    og_memory_choose(&mp, ~0u, 0, &mc);
    cr_expect_eq(mc.operand_type, 0);
    cr_expect(mc.map_writes && mc.map_reads);
    cr_expect_str_eq(og_placement_name(mc.placement), "host-visible");
}

/* Timestamps: only timestampValidBits count, and the counter wraps. */
Test(plan, timestamp_differences_use_the_valid_bits)
{
    cr_expect_eq(og_timestamp_ns(100, 350, 64, 1.0f), 250.0);
    cr_expect_eq(og_timestamp_ns(100, 350, 36, 2.5f), 625.0);
    /* A 36-bit counter wrapped between the two: 0xFFFFFFFF0 -> 0x10 is 32 ticks. */
    cr_expect_eq(og_timestamp_ns(0xffffffff0ull, 0x10ull, 36, 1.0f), 32.0);
    /* Garbage above the valid bits does not count. */
    cr_expect_eq(og_timestamp_ns(0xabc0000000000005ull, 0x1230000000000009ull, 40, 1.0f), 4.0);
}
