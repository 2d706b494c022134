/* The cooperative-matrix kernels (reference design, "Matrix-hardware
 * kernels" and "Which devices take the matrix kernel"): every variant and
 * parameter combination generates, compiles and validates; eligibility from
 * a device's capabilities (synthetic records of devices this machine lacks);
 * lavapipe falls back to the portable kernel with the stated reason, and a
 * matrix variant forced on it fails cleanly. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "og_matrix_device.h"
#include "og_ogtune.h"
#include "og_spirv_val.h"
#include "og_test.h"

/* A device that qualifies (og_matrix_device.h): 8x8x8 and 16x16x16 float16
 * shapes with float32 sums at subgroup scope. */
static og_limits qualified(void)
{
    og_limits lim = matrix_device();
    og_matrix_caps *m = &lim.matrix;
    m->shapes[m->n_shapes++] = f16_shape(8, 8, 8);
    m->shapes[m->n_shapes++] = f16_shape(16, 16, 16);
    return lim;
}

/* ---- every combination: source -> SPIR-V -> spirv-val -> reflection ---- */

ParameterizedTestParameters(matrix, module)
{
    og_limits lim = qualified();
    og_params *space = NULL;
    size_t n = 0, count = 0;
    og_shape cube = {1024, 1024, 1024, 1};
    if (og_space(&lim, OG_PRESET_STANDARD, OG_F16, 0, 0, &cube, &space, &n) != OG_OK)
        n = 0;
    og_kernel_key *keys = cr_malloc((n + 12) * sizeof *keys);
    size_t stride = matrix_space_stride(), seen = 0;
    for (size_t i = 0; i < n; i++)
        if (space[i].variant == OG_VARIANT_COOPMAT && seen++ % stride == 0)
            keys[count++] = (og_kernel_key){.p = space[i],
                                            .dtype = OG_F16,
                                            .trans_a = (int)(count % 2),
                                            .trans_b = (int)(count / 2 % 2),
                                            .dialect = OG_GLSL};
    free(space);
    /* Recovered float32 (float32 inputs split into float16 tiles), both
     * subgroup counts, with and without row and column scaling. */
    for (int v = 0; v < 8; v++)
        keys[count++] = (og_kernel_key){.p = og_params_coopmat(v < 4 ? 8 : 4),
                                        .dtype = OG_F32,
                                        .trans_a = v & 1,
                                        .trans_b = (v >> 1) & 1,
                                        .dialect = OG_GLSL,
                                        .recover = OG_RECOVER_SHIFT,
                                        .scaled = (v >> 1) & 1};
    /* ... and on the large double-buffered tiles (64x64 a subgroup). */
    for (int v = 0; v < 4; v++) {
        og_params p = og_params_coopmat(v < 2 ? 4 : 8);
        p.bm = v < 2 ? 128 : 256;
        p.bn = 128;
        p.bk = v < 2 ? 32 : 16;
        p.sgx = 2;
        p.sgy = v < 2 ? 2 : 4;
        p.buf = 2;
        keys[count++] = (og_kernel_key){.p = p,
                                        .dtype = OG_F32,
                                        .trans_a = v & 1,
                                        .trans_b = !(v & 1),
                                        .dialect = OG_GLSL,
                                        .recover = OG_RECOVER_SHIFT,
                                        .scaled = v >> 1};
    }
    return cr_make_param_array(og_kernel_key, keys, count);
}

ParameterizedTest(og_kernel_key *key, matrix, module)
{
    char what[OG_PARAMS_MAX + 16], err[8192] = "";
    og_params_format(&key->p, what, sizeof what);
    snprintf(what + strlen(what), sizeof what - strlen(what), " %c%c%s%s", key->trans_a ? 'T' : 'N',
             key->trans_b ? 'T' : 'N', key->recover ? " recovered" : "",
             key->scaled ? " scaled" : "");
    og_limits lim = qualified();
    uint32_t *words = NULL;
    size_t count = 0;
    og_reflection r;
    og_status st = og_build_kernel(key, &lim, &words, &count, &r, err, sizeof err);
    cr_assert_eq(st, OG_OK, "%s: %s", what, err);
    cr_expect_eq(spirv_val(words, count), 0, "%s: spirv-val rejects the module", what);
    free(words);
    cr_expect_eq(r.local_size[0], 32u * (uint32_t)(key->p.sgx * key->p.sgy), "%s", what);
    cr_expect_eq(r.shared_bytes, og_kernel_shared_bytes(key),
                 "%s: reflection gives %u shared bytes, the template's formula %u", what,
                 r.shared_bytes, og_kernel_shared_bytes(key));
}

/* The tile parameters' limits: tiles of 32 to 256, k steps of 16 to 64, one
 * or two buffers, at most 16 accumulators a subgroup; buf and mat=emu go
 * through the text form, which keeps the old text for one buffer. */
Test(matrix, tile_parameters_are_checked)
{
    static const struct {
        const char *params;
        const char *why; /* NULL: accepted */
    } cases[] = {
        {"variant=coopmat,bm=256,bn=128,bk=64,sgx=2,sgy=4,pad=8,load=direct,buf=2", NULL},
        {"variant=coopmat,bm=128,bn=256,bk=16,sgx=4,sgy=2,pad=0,load=staged,mat=emu", NULL},
        {"variant=coopmat,bm=512,bn=128,bk=16,sgx=2,sgy=4,pad=8,load=staged", "tiles of 32"},
        {"variant=coopmat,bm=128,bn=128,bk=128,sgx=2,sgy=2,pad=8,load=staged", "k step 16, 32"},
        {"variant=coopmat,bm=128,bn=128,bk=32,sgx=2,sgy=2,pad=8,load=staged,buf=3", "buf 1 or 2"},
        {"variant=coopmat,bm=256,bn=128,bk=32,sgx=2,sgy=2,pad=8,load=staged",
         "at most 16 accumulators"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        og_params p;
        char why[256] = "", again[OG_PARAMS_MAX];
        cr_assert_eq(og_params_parse(cases[i].params, &p, why, sizeof why), 0, "%s: %s",
                     cases[i].params, why);
        og_params_format(&p, again, sizeof again);
        cr_expect_str_eq(again, cases[i].params);
        int st = og_params_check(&p, NULL, why, sizeof why);
        if (!cases[i].why)
            cr_expect_eq(st, 0, "%s: %s", cases[i].params, why);
        else
            cr_expect(st != 0 && strstr(why, cases[i].why), "%s: '%s' lacks '%s'", cases[i].params,
                      why, cases[i].why);
    }
    /* Workgroup memory and invocations against the device's limits. */
    og_limits lim = qualified();
    og_params big;
    char why[256] = "";
    cr_assert_eq(og_params_parse("variant=coopmat,bm=256,bn=128,bk=64,sgx=2,sgy=4,pad=8,"
                                 "load=staged,buf=2",
                                 &big, why, sizeof why),
                 0);
    lim.max_shared_bytes = 64 * 1024;
    cr_expect_eq(og_params_check(&big, &lim, why, sizeof why), -1);
    cr_expect_not_null(strstr(why, "bytes of workgroup memory exceed"), "%s", why);
    lim = qualified();
    lim.max_invocations = 128;
    cr_expect_eq(og_params_check(&big, &lim, why, sizeof why), -1);
    cr_expect_not_null(strstr(why, "invocations"), "%s", why);
}

/* The standard space holds what the hardware is worth: tiles of 256, k
 * steps of 64, 64x64 a subgroup, two buffers, staged and direct. */
Test(matrix, standard_space_holds_the_large_tiles)
{
    og_limits lim = qualified();
    lim.max_shared_bytes = 48 * 1024; /* NVIDIA's limit for Vulkan compute */
    og_params *space = NULL;
    size_t n = 0, wide = 0, deep = 0, blocks = 0, buffered = 0, direct_buffered = 0;
    og_shape cube = {1024, 1024, 1024, 1};
    cr_assert_eq(og_space(&lim, OG_PRESET_STANDARD, OG_F16, 0, 0, &cube, &space, &n), OG_OK);
    for (size_t i = 0; i < n; i++) {
        const og_params *p = &space[i];
        if (p->variant != OG_VARIANT_COOPMAT)
            continue;
        cr_expect_leq(og_params_shared_bytes(p), lim.max_shared_bytes);
        wide += p->bm == 256 || p->bn == 256;
        deep += p->bk == 64;
        blocks += p->bm / p->sgy == 64 && p->bn / p->sgx == 64;
        buffered += p->buf == 2;
        direct_buffered += p->buf == 2 && p->load == OG_LOAD_DIRECT;
    }
    free(space);
    cr_expect_gt(wide, 0);
    cr_expect_gt(deep, 0);
    cr_expect_gt(blocks, 0);
    cr_expect_gt(buffered, 0);
    cr_expect_gt(direct_buffered, 0);
}

Test(matrix, space_covers_both_subgroup_counts)
{
    og_limits lim = qualified();
    og_params *space = NULL;
    size_t n = 0, eight = 0, four = 0, direct = 0, large = 0;
    og_shape cube = {1024, 1024, 1024, 1};
    cr_assert_eq(og_space(&lim, OG_PRESET_QUICK, OG_F16, 0, 0, &cube, &space, &n), OG_OK);
    og_params def = og_params_default();
    cr_expect(memcmp(&space[0], &def, sizeof def) == 0, "the portable default comes first");
    for (size_t i = 0; i < n; i++)
        if (space[i].variant == OG_VARIANT_COOPMAT) {
            eight += space[i].sgx * space[i].sgy == 8;
            four += space[i].sgx * space[i].sgy == 4;
            direct += space[i].load == OG_LOAD_DIRECT;
            /* 128x128x32, 64x64 a subgroup, double buffered */
            large +=
                space[i].bm == 128 && space[i].bn == 128 && space[i].bk == 32 && space[i].buf == 2;
        }
    free(space);
    cr_expect_eq(eight, 2);
    cr_expect_eq(four, 4);
    cr_expect_eq(direct, 3);
    cr_expect_eq(large, 2);
    /* Not for float32 or bfloat16, and not where the device does not qualify. */
    og_limits none = qualified();
    none.matrix.n_shapes = 0;
    const struct {
        og_dtype t;
        const og_limits *lim;
    } others[] = {{OG_F32, &lim}, {OG_BF16, &lim}, {OG_F16, &none}};
    for (size_t o = 0; o < 3; o++) {
        cr_assert_eq(
            og_space(others[o].lim, OG_PRESET_STANDARD, others[o].t, 0, 0, &cube, &space, &n),
            OG_OK);
        for (size_t i = 0; i < n; i++)
            cr_expect_neq(space[i].variant, OG_VARIANT_COOPMAT, "case %zu", o);
        free(space);
    }
}

/* ---- eligibility from capabilities ---- */

static void expect_choice(const og_limits *lim, og_dtype t, og_mode mode, int want,
                          const char *why8, const char *why4)
{
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    int got = og_matrix_choose(lim, t, mode, notes);
    cr_expect_eq(got, want, "chose %d, not %d (8: '%s'; 4: '%s')", got, want, notes[0].why,
                 notes[1].why);
    /* The NV variants; the KHR ones (2 and 3) are test_matrix_khr's. */
    const char *why[OG_MATRIX_VARIANTS] = {why8, why4, NULL, NULL};
    for (int i = 0; i < OG_MATRIX_VARIANTS; i++) {
        cr_expect_eq(notes[i].chosen, i == want);
        cr_expect_eq(notes[i].params.sgx * notes[i].params.sgy, i % 2 == 0 ? 8 : 4);
        cr_expect_eq(notes[i].params.mat, i < 2 ? OG_MATRIX_NV : OG_MATRIX_KHR);
        if (why[i])
            cr_expect_not_null(strstr(notes[i].why, why[i]), "variant %d: '%s' lacks '%s'", i,
                               notes[i].why, why[i]);
    }
}

Test(matrix, eligibility_from_capabilities)
{
    og_limits lim = qualified();
    expect_choice(&lim, OG_F16, OG_MODE_FAST, 0, NULL, "the NV 8-subgroup variant qualifies first");
    expect_choice(&lim, OG_F16, OG_MODE_DETERMINISTIC, -1, "Deterministic mode",
                  "Deterministic mode");
    expect_choice(&lim, OG_BF16, OG_MODE_FAST, -1, "bfloat16", "bfloat16");
    expect_choice(&lim, OG_F32, OG_MODE_FAST, -1, "f32 takes the portable kernel", NULL);

    /* Subgroups of 64 only (wave64 with no wave32 option): the tile is
     * divided among subgroups of 64. */
    og_limits wave64 = qualified();
    wave64.subgroup_size = 64;
    wave64.matrix.size_control = 0;
    wave64.matrix.subgroup_min = wave64.matrix.subgroup_max = 64;
    expect_choice(&wave64, OG_F16, OG_MODE_FAST, 0, NULL, "qualifies first");
    cr_expect_eq(og_matrix_variant(&wave64, 0).sub, 64);
    og_limits range = qualified();
    range.matrix.subgroup_min = range.matrix.subgroup_max = 64;
    range.matrix.subgroup_max = 128;
    expect_choice(&range, OG_F16, OG_MODE_FAST, 0, NULL, NULL);
    cr_expect_eq(og_matrix_variant(&range, 0).sub, 64);
    /* Subgroups of 16 only (Intel's size): the tile divided among 16-wide
     * subgroups; of 128 only, no size the kernel divides its tile by. */
    og_limits sixteen = qualified();
    sixteen.subgroup_size = 16;
    sixteen.matrix.size_control = 0;
    expect_choice(&sixteen, OG_F16, OG_MODE_FAST, 0, NULL, "qualifies first");
    cr_expect_eq(og_matrix_variant(&sixteen, 0).sub, 16);
    og_limits wide = qualified();
    wide.subgroup_size = 128;
    wide.matrix.size_control = 0;
    expect_choice(&wide, OG_F16, OG_MODE_FAST, -1, "subgroups of 128 only, the kernel needs 32",
                  "subgroups of 128 only");

    /* Fewer than 256 invocations: the four-subgroup shape. */
    og_limits small = qualified();
    small.max_invocations = 128;
    expect_choice(&small, OG_F16, OG_MODE_FAST, 1, "invocations per workgroup exceed", NULL);
    /* Too little workgroup memory for eight subgroups' fragments: four. */
    og_params eight = og_params_coopmat(8), four = og_params_coopmat(4);
    cr_assert_gt(og_params_shared_bytes(&eight), og_params_shared_bytes(&four));
    og_limits tight = qualified();
    tight.max_shared_bytes = og_params_shared_bytes(&eight) - 1;
    expect_choice(&tight, OG_F16, OG_MODE_FAST, 1, "bytes of workgroup memory exceed", NULL);
    tight.max_shared_bytes = og_params_shared_bytes(&four) - 1;
    expect_choice(&tight, OG_F16, OG_MODE_FAST, -1, "bytes of workgroup memory exceed",
                  "bytes of workgroup memory exceed");

    /* 16x16x16 and 8x8x8 listed: 16x16x16 (the most products); only 8x8x8
     * (Mesa 26's lavapipe): 8x8x8 fragments in the same tile; float16 with
     * float16 accumulators only, or none at all (Mesa 22's lavapipe): the
     * reason names the fragment missing. */
    cr_expect_eq(og_matrix_variant(&lim, 0).fm * og_matrix_variant(&lim, 0).fk, 256);
    og_limits eights = qualified();
    eights.matrix.n_shapes = 1;
    expect_choice(&eights, OG_F16, OG_MODE_FAST, 0, NULL, "qualifies first");
    og_params e8 = og_matrix_variant(&eights, 0);
    cr_expect(e8.fm == 8 && e8.fn == 8 && e8.fk == 8, "fragment %dx%dx%d", e8.fm, e8.fn, e8.fk);
    char text[OG_PARAMS_MAX];
    og_params_format(&e8, text, sizeof text);
    cr_expect_not_null(strstr(text, ",frag=8x8x8"), "%s", text);
    og_limits f16_acc = qualified();
    f16_acc.matrix.shapes[0].c = f16_acc.matrix.shapes[0].result = OG_COMPONENT_F16;
    f16_acc.matrix.shapes[1].c = f16_acc.matrix.shapes[1].result = OG_COMPONENT_F16;
    expect_choice(&f16_acc, OG_F16, OG_MODE_FAST, -1,
                  "the device lists no 16x16x16 float16 combination for VK_NV_cooperative_matrix",
                  NULL);
    og_limits none = qualified();
    none.matrix.n_shapes = 0;
    expect_choice(&none, OG_F16, OG_MODE_FAST, -1, "(it lists no NV shapes)", NULL);

    /* Features the kernel needs, from its SPIR-V (Float16, VulkanMemoryModel,
     * StorageBuffer16BitAccess for direct loads) and its pipeline. */
    og_limits no_full = qualified();
    no_full.matrix.full_subgroups = 0;
    expect_choice(&no_full, OG_F16, OG_MODE_FAST, -1, "full subgroups", NULL);
    og_limits no_model = qualified();
    no_model.matrix.memory_model = 0;
    expect_choice(&no_model, OG_F16, OG_MODE_FAST, -1, "memory model", NULL);
    og_limits no16 = qualified();
    no16.matrix.storage16 = 0;
    expect_choice(&no16, OG_F16, OG_MODE_FAST, 0, NULL, NULL); /* staged loads need none */
    og_params direct = og_params_coopmat(8);
    direct.load = OG_LOAD_DIRECT;
    char why[256] = "";
    cr_expect_eq(og_params_check(&direct, &no16, why, sizeof why), -1);
    cr_expect_not_null(strstr(why, "storageBuffer16BitAccess"), "%s", why);
}

/* Int8Gemm on a device whose int8 fragments are 16x16x32 (NVIDIA's
 * VK_KHR_cooperative_matrix list): the variant takes a k step of 32 and
 * qualifies, where a k step of 16 (the tile's default) holds no whole
 * fragment (an H200 run, 2026-12-04, named that reason for every variant). */
Test(matrix, int8_fragment_deeper_than_the_k_step)
{
    og_limits lim = matrix_device();
    og_matrix_caps *m = &lim.matrix;
    m->int8 = m->khr_compute = 1;
    og_matrix_shape deep = {16, 16, 32, OG_COMPONENT_S8, OG_COMPONENT_S8, OG_COMPONENT_S32,
                            OG_COMPONENT_S32, 1};
    m->shapes[m->n_shapes++] = deep;
    m->khr_shapes[m->n_khr_shapes++] = deep;
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    int i = og_matrix_int8_choose(&lim, OG_GLSL, notes);
    cr_assert_eq(i, 0, "no variant qualifies: %s", notes[0].why);
    for (int v = 0; v < OG_MATRIX_VARIANTS; v++) {
        og_params p = og_matrix_int8_variant(&lim, v);
        cr_expect(p.fk == 32 && p.bk == 32, "variant %d: fragment k %d, k step %d", v, p.fk, p.bk);
        char why[256] = "";
        cr_expect_eq(og_params_check(&p, &lim, why, sizeof why), 0, "variant %d: %s", v, why);
    }
}

/* The SPIR-V of the kernel declares what the capability check asks for. */
Test(matrix, module_declares_what_is_checked)
{
    og_kernel_key key = {.p = og_params_coopmat(8), .dtype = OG_F16, .dialect = OG_GLSL};
    key.p.load = OG_LOAD_DIRECT;
    char *src = NULL, err[8192] = "";
    cr_assert_eq(og_gen_source(&key, &src, err, sizeof err), OG_OK, "%s", err);
    char *text = NULL;
    size_t count;
    og_status st = og_compile(src, OG_GLSL, 1, (uint32_t **)&text, &count, err, sizeof err);
    free(src);
    cr_assert_eq(st, OG_OK, "%s", err);
    const char *needs[] = {"OpCapability CooperativeMatrixNV", "OpCapability Float16",
                           "OpCapability VulkanMemoryModel",
                           "OpCapability StorageBuffer16BitAccess", "OpCooperativeMatrixMulAddNV"};
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++)
        cr_expect_not_null(strstr(text, needs[i]), "no %s", needs[i]);
    free(text);
    /* HLSL, float32, bfloat16 and split-k planes are refused. */
    og_kernel_key bad = key;
    bad.dialect = OG_HLSL;
    cr_expect_eq(og_kernel_check(&bad, NULL, err, sizeof err), -1);
    bad = key;
    bad.dtype = OG_BF16;
    cr_expect_eq(og_kernel_check(&bad, NULL, err, sizeof err), -1);
    bad = key;
    bad.kernel = OG_KERNEL_PLANES;
    cr_expect_eq(og_kernel_check(&bad, NULL, err, sizeof err), -1);
}

/* ---- on this device ---- */

Test(matrix, lavapipe_falls_back_with_the_reason)
{
    og_context *ctx = open_context();
    if (ctx->limits.matrix.n_shapes > 0) {
        close_context(ctx);
        cr_skip_test("this device lists cooperative-matrix shapes");
    }
    og_choice c;
    cr_assert_eq(og_select(ctx, OG_F16, OG_MODE_FAST, 0, 0, 256, 256, 256, 1, &c), OG_OK);
    cr_expect_eq(c.params.variant, OG_VARIANT_TILE);
    for (int i = 0; i < OG_MATRIX_VARIANTS; i++) {
        cr_expect_eq(c.matrix[i].chosen, 0);
        cr_expect_not_null(
            strstr(c.matrix[i].why, "the device lists no 16x16x16 float16 combination for VK_"),
            "%s", c.matrix[i].why);
    }
    /* Forced: an unsupported error naming the reason, nothing written. */
    og_problem *pr;
    cr_assert_eq(og_problem_create(ctx, OG_F16, 0, 0, 64, 64, 64, 1, 5, &pr), OG_OK);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F16, OG_MODE_FAST, &g), OG_OK);
    cr_assert_eq(og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * sizeof(float)), OG_OK);
    for (int sg = 8; sg >= 4; sg /= 2) {
        og_params p = og_params_coopmat(sg);
        cr_expect_eq(run_params(g, ctx, &pr->args, &p), OG_ERROR_UNSUPPORTED);
        cr_expect_not_null(strstr(og_context_last_error(ctx), "16x16x16 float16"), "%s",
                           og_context_last_error(ctx));
    }
    cr_assert_eq(og_buffer_read(pr->args.c, 0, pr->c, pr->nc * sizeof(float)), OG_OK);
    cr_expect(memcmp(pr->c, pr->c0, pr->nc * sizeof(float)) == 0, "C changed");
    og_gemm_destroy(g);
    og_problem_destroy(pr);
    close_context(ctx);
}

Test(matrix, ogtune_select_explains)
{
    char *out;
    cr_expect_eq(
        ogtune("select --dtype f16 --shape 512x512x512 --json --db /nonexistent 2>/dev/null", &out),
        0);
    og_context *ctx = open_context();
    int lavapipe = ctx->limits.matrix.n_shapes == 0;
    close_context(ctx);
    cr_expect_not_null(strstr(out, "\"matrix_variants\":[{\"variant\":\"gemm_coopmat\","
                                   "\"extension\":\"VK_NV_cooperative_matrix\",\"subgroups\":8"),
                       "%s", out);
    if (lavapipe)
        cr_expect_not_null(strstr(out, "\"reason\":\"the device lists no 16x16x16 float16 "
                                       "combination for VK_NV_cooperative_matrix"),
                           "%s", out);
    free(out);
}

/* The words-only reflection of cooperative-matrix modules agrees with
 * SPIRV-Cross on the kernels SPIRV-Cross can read. */
Test(matrix, raw_reflection_agrees_with_spirv_cross)
{
    og_params skinny = og_params_int8_skinny(), rows = og_params_fewrows(0, 64);
    og_params texel = og_params_default();
    texel.load = OG_LOAD_DIRECT;
    texel.src = OG_SRC_TEXEL;
    texel.vec = 4;
    texel.tm = texel.tn = 8;
    texel.wgx = texel.wgy = 8;
    const og_kernel_key keys[] = {
        {.p = og_params_default(), .dtype = OG_F16, .dialect = OG_GLSL},
        {.p = og_params_default(), .dtype = OG_BF16, .trans_a = 1, .dialect = OG_HLSL},
        {.p = texel, .dtype = OG_F32, .dialect = OG_GLSL},
        {.p = rows, .dtype = OG_F32, .dialect = OG_GLSL},
        {.p = og_params_int8_tile(), .dtype = OG_INT8, .dtype_b = OG_UINT8, .dialect = OG_GLSL},
        {.p = skinny, .dtype = OG_UINT8, .dtype_b = OG_INT8, .dialect = OG_HLSL},
        {.kernel = OG_KERNEL_REDUCE, .dtype = OG_F32, .dialect = OG_GLSL},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        uint32_t *words = NULL;
        size_t count = 0;
        og_reflection cross, raw;
        char err[8192] = "";
        cr_assert_eq(og_build_kernel(&keys[i], NULL, &words, &count, &cross, err, sizeof err),
                     OG_OK, "kernel %zu: %s", i, err);
        og_reflect_raw(words, count, &raw);
        free(words);
        for (int d = 0; d < 3; d++)
            cr_expect_eq(raw.local_size[d], cross.local_size[d], "kernel %zu", i);
        cr_expect_eq(raw.shared_bytes, cross.shared_bytes, "kernel %zu", i);
        cr_expect_eq(raw.bindings, cross.bindings, "kernel %zu: %u bindings, SPIRV-Cross %u", i,
                     raw.bindings, cross.bindings);
        cr_expect_eq(raw.push_bytes, cross.push_bytes, "kernel %zu: %u push bytes, SPIRV-Cross %u",
                     i, raw.push_bytes, cross.push_bytes);
    }
}

/* Where the device qualifies (a GPU with cooperative matrices; skipped on
 * lavapipe): every matrix variant of the quick space against the float64
 * reference on ragged, transposed and batched shapes, and on aligned interior
 * tiles (the direct fragment loads), with alpha and beta. */
Test(matrix, kernels_are_right_where_the_device_qualifies, .timeout = 600)
{
    og_context *ctx = open_context();
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    if (og_matrix_choose(&ctx->limits, OG_F16, OG_MODE_FAST, notes) < 0) {
        close_context(ctx);
        cr_skip_test("no matrix variant qualifies here: %s", notes[0].why);
    }
    og_params *space = NULL;
    size_t n = 0;
    og_shape cube = {256, 256, 256, 1};
    cr_assert_eq(og_space(&ctx->limits, OG_PRESET_QUICK, OG_F16, 0, 0, &cube, &space, &n), OG_OK);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F16, OG_MODE_FAST, &g), OG_OK);
    static const int64_t shapes[][4] = {
        {256, 256, 256, 1}, {100, 70, 50, 2}, {64, 64, 16, 1}, {130, 200, 333, 1}, {1, 300, 64, 3}};
    size_t tested = 0;
    for (size_t i = 0; i < n; i++) {
        if (space[i].variant != OG_VARIANT_COOPMAT)
            continue;
        char params[OG_PARAMS_MAX];
        og_params_format(&space[i], params, sizeof params);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < 4; t++) {
                og_problem *pr;
                cr_assert_eq(og_problem_create(ctx, OG_F16, t & 1, t >> 1, shapes[s][0],
                                               shapes[s][1], shapes[s][2], shapes[s][3], 100 + s,
                                               &pr),
                             OG_OK);
                problem_scalars(pr, 0.75f, s % 2 ? 0.5f : 0.0f);
                int accepted;
                double metric;
                char why[256] = "";
                cr_assert_eq(
                    og_problem_verify(g, pr, &space[i], &accepted, &metric, why, sizeof why), OG_OK,
                    "%s: %s", params, og_context_last_error(ctx));
                cr_expect(accepted, "%s at %lldx%lldx%lld (op %d): %s", params,
                          (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2],
                          t, why);
                og_problem_destroy(pr);
                tested++;
            }
    }
    cr_expect_gt(tested, 0);
    free(space);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* What a kernel needs of the device comes from its own SPIR-V too: the
 * capabilities it declares, each held against what the device enabled. */
Test(matrix, needs_from_the_module)
{
    og_limits lim = qualified();
    og_params direct = og_params_coopmat(4), dot = og_params_int8_tile();
    direct.load = OG_LOAD_DIRECT;
    dot.dot = 1;
    const struct {
        og_kernel_key key;
        uint32_t needs;
    } cases[] = {
        {{.p = og_params_coopmat(8), .dtype = OG_F16, .dialect = OG_GLSL},
         OG_NEEDS_FLOAT16 | OG_NEEDS_MEMORY_MODEL | OG_NEEDS_COOPMAT},
        {{.p = direct, .dtype = OG_F16, .trans_a = 1, .dialect = OG_GLSL},
         OG_NEEDS_FLOAT16 | OG_NEEDS_MEMORY_MODEL | OG_NEEDS_COOPMAT | OG_NEEDS_STORAGE16},
        {{.p = dot, .dtype = OG_INT8, .dtype_b = OG_UINT8, .dialect = OG_GLSL},
         OG_NEEDS_INTEGER_DOT},
        {{.p = og_params_default(), .dtype = OG_F16, .dialect = OG_HLSL}, 0},
        {{.p = og_params_default(), .dtype = OG_BF16, .dialect = OG_GLSL}, 0},
    };
    lim.integer_dot = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t *words = NULL;
        size_t count = 0;
        og_reflection r;
        char err[8192] = "";
        cr_assert_eq(og_build_kernel(&cases[i].key, &lim, &words, &count, &r, err, sizeof err),
                     OG_OK, "case %zu: %s", i, err);
        cr_expect_eq(r.needs, cases[i].needs, "case %zu needs %#x, not %#x", i, r.needs,
                     cases[i].needs);
        cr_expect_eq(og_spirv_needs(words, count), r.needs, "case %zu", i);
        free(words);
        char why[256] = "";
        cr_expect_eq(og_limits_lack(&lim, r.needs, why, sizeof why), 0, "case %zu: %s", i, why);
    }
    og_limits bare;
    memset(&bare, 0, sizeof bare);
    char why[256] = "";
    cr_expect_eq(og_limits_lack(&bare, OG_NEEDS_INTEGER_DOT | OG_NEEDS_FLOAT16, why, sizeof why),
                 OG_NEEDS_INTEGER_DOT | OG_NEEDS_FLOAT16);
    cr_expect_not_null(strstr(why, "shaderFloat16"), "%s", why);
    cr_expect_not_null(strstr(why, "shaderIntegerDotProduct"), "%s", why);
}
