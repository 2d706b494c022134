/* The coopmat2 kernel (gen/families/og_family_coopmat2.c) off the lane: its
 * parameters (print, parse back, the rules and their messages), what it
 * needs of a device on synthetic capability records of devices this machine
 * lacks (an NVIDIA GPU with VK_NV_cooperative_matrix2's flexible
 * dimensions; the same without them, with a coarser granularity, a smaller
 * maximum dimension, float16 sums only), its tuning space, its kernel-key
 * rules and the selection note ogtune select prints. Its results are
 * test_matrix_lane's (Mesa 26's lavapipe executes it) and its KHR modules
 * test_matrix_khr's rewrite test's. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_matrix_device.h"
#include "og_test.h"

/* KHR 16x16x16 float16 shapes in compute, and flexible dimensions of
 * granularity 16 up to 256 (og_matrix_device.h: subgroups of 32 to 64). */
static og_limits flexible_device(void)
{
    og_limits lim = matrix_device();
    og_matrix_caps *m = &lim.matrix;
    m->khr_shapes[m->n_khr_shapes++] = f16_shape(16, 16, 16);
    m->khr_compute = 1;
    m->flexible = 1;
    m->flex_max = 256;
    m->flex_shapes[m->n_flex_shapes++] = f16_shape(16, 16, 16);
    return lim;
}

static og_params parsed(const char *text)
{
    og_params p;
    char why[256] = "";
    cr_assert_eq(og_params_parse(text, &p, why, sizeof why), 0, "%s: %s", text, why);
    return p;
}

/* og_params_check's refusal of text on lim (NULL: its own rules), which
 * must name want. */
static void expect_refused(const char *text, const og_limits *lim, const char *want)
{
    og_params p = parsed(text);
    char why[256] = "";
    cr_expect_neq(og_params_check(&p, lim, why, sizeof why), 0, "%s was accepted", text);
    cr_expect_not_null(strstr(why, want), "%s: '%s' lacks '%s'", text, why, want);
}

Test(coopmat2, default_prints_and_parses_back)
{
    og_params p = og_params_coopmat2(32);
    char text[OG_PARAMS_MAX];
    og_params_format(&p, text, sizeof text);
    cr_expect_str_eq(text, "variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8,sub=32");
    og_params back = parsed(text);
    cr_expect_eq(memcmp(&back, &p, sizeof p), 0, "%s does not parse back to itself", text);
    /* One matrix a subgroup: 32x32 accumulators, 32x16 of A, 16x32 of B. */
    cr_expect(p.fm == 32 && p.fn == 32 && p.fk == 16 && p.mat == OG_MATRIX_KHR && p.buf == 2);
    cr_expect_str_eq(og_params_template(&p), "gemm_coopmat2");
    og_params one = parsed("variant=coopmat2,bm=128,bn=64,bk=32,sgx=4,sgy=2,pad=0,sub=16,buf=1");
    og_params_format(&one, text, sizeof text);
    cr_expect_str_eq(text, "variant=coopmat2,bm=128,bn=64,bk=32,sgx=4,sgy=2,pad=0,sub=16,buf=1");
    cr_expect(one.fm == 64 && one.fn == 16 && one.fk == 32 && one.buf == 1);
}

Test(coopmat2, parameters_are_checked)
{
    og_params p;
    char why[256] = "";
    /* The extension and the fragment follow from the tile: not keys of its. */
    cr_expect_neq(og_params_parse("variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8,sub=32,"
                                  "mat=nv",
                                  &p, why, sizeof why),
                  0);
    cr_expect_not_null(strstr(why, "bm,bn,bk,sgx,sgy,pad,sub (and buf) for variant=coopmat2"), "%s",
                       why);
    cr_expect_neq(og_params_parse("variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8", &p, why,
                                  sizeof why),
                  0, "sub omitted was accepted");
    expect_refused("variant=coopmat2,bm=48,bn=64,bk=16,sgx=2,sgy=2,pad=8,sub=32", NULL,
                   "tiles of 32, 64, 128 or 256");
    expect_refused("variant=coopmat2,bm=64,bn=64,bk=8,sgx=2,sgy=2,pad=8,sub=32", NULL,
                   "k step 16, 32 or 64");
    expect_refused("variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=4,sub=32", NULL,
                   "pad 0 or 8");
    expect_refused("variant=coopmat2,bm=256,bn=256,bk=16,sgx=8,sgy=4,pad=8,sub=32", NULL,
                   "at most 16");
    /* A 4-row matrix: not a multiple of 8. */
    expect_refused("variant=coopmat2,bm=32,bn=64,bk=16,sgx=1,sgy=8,pad=8,sub=32", NULL,
                   "4x64 matrix of C in multiples of 8");
    /* 64x64 accumulators in subgroups of 8: 512 elements a lane. */
    expect_refused("variant=coopmat2,bm=64,bn=64,bk=16,sgx=1,sgy=1,pad=8,sub=8", NULL,
                   "at most 128 elements a lane");
    /* A hand-built record whose fragment disagrees with its tile. */
    p = og_params_coopmat2(32);
    p.fm = 16;
    cr_expect_neq(og_params_check(&p, NULL, why, sizeof why), 0);
    cr_expect_not_null(strstr(why, "KHR matrices of 32x32x16"), "%s", why);
}

Test(coopmat2, what_it_needs_of_the_device)
{
    og_limits lim = flexible_device();
    const char *def = "variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8,sub=32";
    og_params p = parsed(def);
    char why[256] = "";
    cr_expect_eq(og_params_check(&p, &lim, why, sizeof why), 0, "%s", why);
    og_limits no = lim;
    no.matrix.flexible = 0;
    expect_refused(def, &no, "no VK_NV_cooperative_matrix2 flexible dimensions");
    /* Granularity 16: an 8-column matrix is refused, 16 and 32 taken. */
    expect_refused("variant=coopmat2,bm=64,bn=64,bk=16,sgx=8,sgy=1,pad=8,sub=32", &lim,
                   "granularity divides 64x8x16");
    og_limits coarse = lim;
    coarse.matrix.flex_shapes[0] = f16_shape(32, 32, 32);
    expect_refused(def, &coarse, "granularity divides 32x32x16");
    og_limits small = lim;
    small.matrix.flex_max = 16;
    expect_refused(def, &small, "(16 at most)");
    og_limits half_sums = lim;
    half_sums.matrix.flex_shapes[0].c = half_sums.matrix.flex_shapes[0].result = OG_COMPONENT_F16;
    expect_refused(def, &half_sums, "no float16 flexible-dimensions shape");
    og_limits graphics = lim;
    graphics.matrix.khr_compute = 0;
    expect_refused(def, &graphics, "lack compute");
    og_limits old = lim;
    old.matrix.memory_model = 0;
    expect_refused(def, &old, "the Vulkan memory model");
    /* Subgroups of 8 on a device of 32 to 64. */
    expect_refused("variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8,sub=8", &lim,
                   "subgroups of 32 to 64, none of 8");
    og_limits tight = lim;
    tight.max_shared_bytes = 16383; /* the tile of C: 64 x 64 floats */
    expect_refused(def, &tight, "bytes of workgroup memory");
}

/* The candidates a space holds of the family, each of which passes the checks. */
static size_t coopmat2_candidates(const og_limits *lim, og_preset preset, og_dtype t,
                                  og_shape shape)
{
    og_params *space = NULL;
    size_t n = 0, found = 0;
    cr_assert_eq(og_space(lim, preset, t, 0, 0, &shape, &space, &n), OG_OK);
    for (size_t i = 0; i < n; i++) {
        if (space[i].variant != OG_VARIANT_COOPMAT2)
            continue;
        found++;
        char why[256] = "", text[OG_PARAMS_MAX];
        og_params_format(&space[i], text, sizeof text);
        cr_expect_eq(og_params_check(&space[i], lim, why, sizeof why), 0, "%s: %s", text, why);
        cr_expect_eq(space[i].sub, 32, "%s: not the device's subgroup size", text);
    }
    free(space);
    return found;
}

Test(coopmat2, tuning_space)
{
    og_limits lim = flexible_device(), no = lim;
    no.matrix.flexible = 0;
    og_shape cube = {1024, 1024, 1024, 1}, decode = {8, 4096, 4096, 1};
    size_t quick = coopmat2_candidates(&lim, OG_PRESET_QUICK, OG_F16, cube);
    size_t standard = coopmat2_candidates(&lim, OG_PRESET_STANDARD, OG_F16, cube);
    cr_expect_eq(quick, 2, "the quick preset holds %zu coopmat2 candidates", quick);
    cr_expect_gt(standard, quick);
    cr_expect_eq(coopmat2_candidates(&no, OG_PRESET_STANDARD, OG_F16, cube), 0);
    cr_expect_eq(coopmat2_candidates(&lim, OG_PRESET_STANDARD, OG_F32, cube), 0);
    cr_expect_eq(coopmat2_candidates(&lim, OG_PRESET_STANDARD, OG_F16, decode), 0,
                 "a decode-shaped product runs the decode kernel");
}

Test(coopmat2, kernel_key_rules)
{
    og_limits lim = flexible_device();
    og_kernel_key key = {.p = og_params_coopmat2(32), .dtype = OG_F16, .dialect = OG_GLSL};
    char why[256] = "";
    cr_expect_eq(og_kernel_check(&key, &lim, why, sizeof why), 0, "%s", why);
    og_kernel_key wrong[] = {key, key, key};
    wrong[0].dtype = OG_BF16;
    wrong[1].dialect = OG_HLSL;
    wrong[2].dtype = OG_F32;
    wrong[2].recover = OG_RECOVER_SHIFT;
    /* Recovered float32's own rule refuses it first. */
    static const char *const want[] = {"coopmat2 kernel takes float16",
                                       "coopmat2 kernel takes float16",
                                       "recovered float32 runs the staged tile"};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        cr_expect_neq(og_kernel_check(&wrong[i], &lim, why, sizeof why), 0, "key %zu accepted", i);
        cr_expect_not_null(strstr(why, want[i]), "key %zu: %s", i, why);
    }
}

/* The note `ogtune select` prints: the reason it is not chosen. */
Test(coopmat2, selection_note)
{
    og_limits lim = flexible_device(), no = lim;
    no.matrix.flexible = 0;
    og_matrix_note n;
    og_coopmat2_note(&lim, OG_F16, OG_MODE_FAST, &n);
    cr_expect(!n.chosen);
    cr_expect_not_null(strstr(n.why, "a tuner candidate"), "%s", n.why);
    cr_expect_eq(n.params.sub, 32);
    og_coopmat2_note(&no, OG_F16, OG_MODE_FAST, &n);
    cr_expect_not_null(strstr(n.why, "flexible dimensions"), "%s", n.why);
    og_coopmat2_note(&lim, OG_F16, OG_MODE_DETERMINISTIC, &n);
    cr_expect_not_null(strstr(n.why, "Deterministic mode"), "%s", n.why);
    og_coopmat2_note(&lim, OG_BF16, OG_MODE_FAST, &n);
    cr_expect_not_null(strstr(n.why, "bf16 takes the portable kernel"), "%s", n.why);
}
