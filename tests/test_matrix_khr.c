/* KHR cooperative matrices (VK_KHR_cooperative_matrix): the rewrite of
 * every matrix kernel of the standard space from its NV module (which
 * Debian's spirv-val checks) into the KHR form (which a structural checker
 * of our own checks: Debian's spirv-val predates the extension), its
 * determinism, the route through og_build_kernel (reflection, feature
 * checks), eligibility on synthetic capability records of devices this
 * machine lacks, and ogtune gen printing the KHR form. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_khr_check.h"
#include "og_matrix_device.h"
#include "og_ogtune.h"
#include "og_spirv_val.h"
#include "og_test.h"

/* A device with both extensions' 16x16x16 float16 shapes (an NVIDIA GPU;
 * the rest og_matrix_device.h). */
static og_limits both(void)
{
    og_limits lim = matrix_device();
    og_matrix_caps *m = &lim.matrix;
    m->shapes[m->n_shapes++] = f16_shape(16, 16, 16);
    m->khr_shapes[m->n_khr_shapes++] = f16_shape(16, 16, 16);
    m->khr_compute = 1;
    return lim;
}

/* KHR only (RADV on RDNA3): no NV shapes, subgroups of 64 only. */
static og_limits radv_wave64(void)
{
    og_limits lim = both();
    lim.matrix.n_shapes = 0;
    lim.subgroup_size = 64;
    lim.matrix.size_control = 0;
    lim.matrix.subgroup_min = lim.matrix.subgroup_max = 64;
    return lim;
}

/* ---- the rewrite of every matrix kernel of the standard space ---- */

ParameterizedTestParameters(matrix_khr, rewrite)
{
    /* With flexible dimensions (granularity 16, up to 256): the coopmat2
     * kernels of the space too. */
    og_limits lim = both();
    lim.matrix.flexible = 1;
    lim.matrix.flex_max = 256;
    lim.matrix.flex_shapes[lim.matrix.n_flex_shapes++] = f16_shape(16, 16, 16);
    og_params *space = NULL;
    size_t n = 0, count = 0;
    og_shape cube = {1024, 1024, 1024, 1};
    if (og_space(&lim, OG_PRESET_STANDARD, OG_F16, 0, 0, &cube, &space, &n) != OG_OK)
        n = 0;
    og_kernel_key *keys = cr_malloc((n + 30) * sizeof *keys);
    size_t stride = matrix_space_stride(), seen = 0;
    for (size_t i = 0; i < n; i++)
        if ((space[i].variant == OG_VARIANT_COOPMAT || space[i].variant == OG_VARIANT_COOPMAT2) &&
            space[i].mat == OG_MATRIX_KHR && seen++ % stride == 0)
            keys[count++] = (og_kernel_key){.p = space[i],
                                            .dtype = OG_F16,
                                            .trans_a = (int)(count % 2),
                                            .trans_b = (int)(count / 2 % 2),
                                            .dialect = OG_GLSL};
    free(space);
    /* Recovered float32, both subgroup counts, scaled or not, transposes;
     * and the default tiles divided among subgroups of 64. */
    for (int v = 0; v < 8; v++) {
        og_params p = og_params_coopmat(v < 4 ? 8 : 4);
        p.mat = OG_MATRIX_KHR;
        keys[count++] = (og_kernel_key){.p = p,
                                        .dtype = OG_F32,
                                        .trans_a = v & 1,
                                        .trans_b = (v >> 1) & 1,
                                        .dialect = OG_GLSL,
                                        .recover = OG_RECOVER_SHIFT,
                                        .scaled = (v >> 1) & 1};
    }
    /* Recovered on the large double-buffered tiles (64x64 a subgroup). */
    for (int v = 0; v < 2; v++) {
        og_params p = og_params_coopmat(v ? 8 : 4);
        p.mat = OG_MATRIX_KHR;
        p.bm = v ? 256 : 128;
        p.bn = 128;
        p.bk = v ? 16 : 32;
        p.sgy = v ? 4 : 2;
        p.sgx = 2;
        p.buf = 2;
        keys[count++] = (og_kernel_key){.p = p,
                                        .dtype = OG_F32,
                                        .trans_a = v,
                                        .trans_b = !v,
                                        .dialect = OG_GLSL,
                                        .recover = OG_RECOVER_SHIFT,
                                        .scaled = v};
    }
    /* Fragments other than 16x16x16, in the subgroups that list them:
     * 8x8x8 in subgroups of 8 (lavapipe), 8x16x16 in 16 (Intel), 16x8x16 in
     * 32 (NVIDIA), float16 and recovered. */
    static const int frags[][4] = {{8, 8, 8, 8}, {8, 16, 16, 16}, {16, 8, 16, 32}};
    for (int f = 0; f < 3; f++)
        for (int v = 0; v < 4; v++) {
            og_params p = og_params_coopmat(v % 2 ? 4 : 8);
            p.mat = OG_MATRIX_KHR;
            p.fm = frags[f][0];
            p.fn = frags[f][1];
            p.fk = frags[f][2];
            p.sub = frags[f][3];
            p.load = v == 1 ? OG_LOAD_DIRECT : OG_LOAD_STAGED;
            keys[count++] = (og_kernel_key){.p = p,
                                            .dtype = v == 3 ? OG_F32 : OG_F16,
                                            .trans_a = v % 2,
                                            .trans_b = v / 2 % 2,
                                            .dialect = OG_GLSL,
                                            .recover = v == 3 ? OG_RECOVER_SHIFT : 0};
        }
    for (int v = 0; v < 4; v++) {
        og_params p = og_params_coopmat(v < 2 ? 8 : 4);
        p.mat = OG_MATRIX_KHR;
        p.sub = 64;
        p.load = v % 2 ? OG_LOAD_DIRECT : OG_LOAD_STAGED;
        keys[count++] =
            (og_kernel_key){.p = p, .dtype = OG_F16, .trans_a = v % 2, .dialect = OG_GLSL};
    }
    return cr_make_param_array(og_kernel_key, keys, count);
}

ParameterizedTest(og_kernel_key *key, matrix_khr, rewrite)
{
    char what[OG_PARAMS_MAX + 16], err[8192] = "";
    og_params_format(&key->p, what, sizeof what);
    snprintf(what + strlen(what), sizeof what - strlen(what), " %c%c%s%s", key->trans_a ? 'T' : 'N',
             key->trans_b ? 'T' : 'N', key->recover ? " recovered" : "",
             key->scaled ? " scaled" : "");
    /* The NV module the rewrite starts from, the KHR key's source compiled
     * as og_build_kernel compiles it (the recovered kernel's KHR source
     * differs from its NV one): Debian's spirv-val accepts it. */
    uint32_t *nv = NULL, *khr = NULL, *again = NULL;
    size_t n_nv = 0, n_khr = 0, n_again = 0;
    og_reflection r;
    char *src = NULL;
    cr_assert_eq(og_gen_source(key, &src, err, sizeof err), OG_OK, "%s: %s", what, err);
    og_status compiled = og_compile(src, OG_GLSL, 0, &nv, &n_nv, err, sizeof err);
    free(src);
    cr_assert_eq(compiled, OG_OK, "%s: %s", what, err);
    cr_assert_eq(og_reflect(nv, n_nv, &r, err, sizeof err), OG_OK, "%s: %s", what, err);
    cr_expect_eq(spirv_val(nv, n_nv), 0, "%s: spirv-val rejects the NV module", what);
    cr_assert_eq(og_spirv_khr(nv, n_nv, &khr, &n_khr, err, sizeof err), OG_OK, "%s: %s", what, err);
    cr_expect_eq(og_khr_check(khr, n_khr, err, sizeof err), 0, "%s: %s", what, err);
    /* In the second driver lane (OG_MESA26), a current spirv-val accepts
     * the KHR module too. */
    if (getenv("OG_MESA26"))
        cr_expect_eq(lane_spirv_val(khr, n_khr), 0, "%s: the lane's spirv-val rejects it", what);
    /* Deterministic: the same words again. */
    cr_assert_eq(og_spirv_khr(nv, n_nv, &again, &n_again, err, sizeof err), OG_OK);
    cr_expect(n_again == n_khr && memcmp(again, khr, n_khr * sizeof *khr) == 0,
              "%s: a second rewrite differs", what);
    /* Reflection reads the KHR module as it reads the NV one. */
    og_reflection rk;
    cr_assert_eq(og_reflect(khr, n_khr, &rk, err, sizeof err), OG_OK, "%s: %s", what, err);
    cr_expect_eq(rk.local_size[0], (uint32_t)(key->p.sub * key->p.sgx * key->p.sgy), "%s", what);
    cr_expect_eq(rk.shared_bytes, r.shared_bytes, "%s", what);
    cr_expect_eq(rk.needs, (r.needs & ~(uint32_t)OG_NEEDS_COOPMAT) | OG_NEEDS_COOPMAT_KHR, "%s",
                 what);
    free(nv);
    free(khr);
    free(again);
}

/* The checker can fail: it refuses the NV module, a MulAdd whose A is typed
 * as B, and a layout operand that is not a constant. */
Test(matrix_khr, checker_refuses_what_is_wrong)
{
    og_kernel_key key = {.p = og_params_coopmat(8), .dtype = OG_F16, .dialect = OG_GLSL};
    uint32_t *nv = NULL, *khr = NULL;
    size_t n_nv = 0, n_khr = 0;
    og_reflection r;
    char err[1024] = "";
    cr_assert_eq(og_build_kernel(&key, NULL, &nv, &n_nv, &r, err, sizeof err), OG_OK, "%s", err);
    cr_expect_neq(og_khr_check(nv, n_nv, err, sizeof err), 0, "the NV module passes");
    cr_assert_eq(og_spirv_khr(nv, n_nv, &khr, &n_khr, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(og_khr_check(khr, n_khr, err, sizeof err), 0, "%s", err);
    /* Swap A and B of the first MulAdd; point the first load's layout at its stride. */
    uint32_t *bad = malloc(n_khr * sizeof *bad);
    cr_assert_not_null(bad);
    memcpy(bad, khr, n_khr * sizeof *bad);
    for (size_t i = 5; i < n_khr; i += bad[i] >> 16)
        if ((bad[i] & 0xffffu) == 4459) {
            uint32_t a = bad[i + 3];
            bad[i + 3] = bad[i + 4];
            bad[i + 4] = a;
            break;
        }
    cr_expect_neq(og_khr_check(bad, n_khr, err, sizeof err), 0, "swapped A and B pass");
    cr_expect_not_null(strstr(err, "MulAdd"), "%s", err);
    memcpy(bad, khr, n_khr * sizeof *bad);
    for (size_t i = 5; i < n_khr; i += bad[i] >> 16)
        if ((bad[i] & 0xffffu) == 4457) {
            bad[i + 4] = bad[i + 3]; /* the pointer, not a constant */
            break;
        }
    cr_expect_neq(og_khr_check(bad, n_khr, err, sizeof err), 0, "a pointer as layout passes");
    /* The rewrite refuses a module without NV matrices. */
    uint32_t *out = NULL;
    size_t n_out = 0;
    cr_expect_eq(og_spirv_khr(khr, n_khr, &out, &n_out, err, sizeof err), OG_ERROR_COMPILE);
    cr_expect_not_null(strstr(err, "spirv khr: the module declares no CooperativeMatrixNV"), "%s",
                       err);
    cr_expect_null(out);
    free(bad);
    free(nv);
    free(khr);
}

/* og_build_kernel's route: the KHR key compiles, rewrites, reflects, and is
 * held against the device's features from its own capabilities. */
Test(matrix_khr, build_checks_features_from_the_module)
{
    og_limits lim = both();
    og_kernel_key key = {.p = og_matrix_variant(&lim, 2), .dtype = OG_F16, .dialect = OG_GLSL};
    cr_assert_eq(key.p.mat, OG_MATRIX_KHR);
    uint32_t *words = NULL;
    size_t count = 0;
    og_reflection r;
    char err[1024] = "";
    cr_assert_eq(og_build_kernel(&key, &lim, &words, &count, &r, err, sizeof err), OG_OK, "%s",
                 err);
    cr_expect_eq(og_khr_check(words, count, err, sizeof err), 0, "%s", err);
    cr_expect(r.needs & OG_NEEDS_COOPMAT_KHR);
    cr_expect(!(r.needs & OG_NEEDS_COOPMAT));
    free(words);
    /* Only NV enabled: the KHR module's capability is refused by name. */
    og_limits nv_only = both();
    nv_only.matrix.n_khr_shapes = 0;
    cr_expect_neq(og_limits_lack(&nv_only, r.needs, err, sizeof err), 0u);
    cr_expect_not_null(strstr(err, "VK_KHR_cooperative_matrix"), "%s", err);
    /* The key tells the extension apart (the SPIR-V and pipeline caches
     * hash the whole key). */
    og_kernel_key nv = key;
    nv.p.mat = OG_MATRIX_NV;
    cr_expect(memcmp(&nv, &key, sizeof key) != 0);
    char a[OG_PARAMS_MAX], b[OG_PARAMS_MAX];
    og_params_format(&nv.p, a, sizeof a);
    og_params_format(&key.p, b, sizeof b);
    cr_expect_str_neq(a, b);
    og_params back;
    cr_assert_eq(og_params_parse(b, &back, err, sizeof err), 0, "%s", err);
    cr_expect(memcmp(&back, &key.p, sizeof back) == 0, "'%s' does not parse back", b);
}

/* ---- eligibility on synthetic capability records ---- */

static int choose(const og_limits *lim, og_matrix_note notes[OG_MATRIX_VARIANTS])
{
    return og_matrix_choose(lim, OG_F16, OG_MODE_FAST, notes);
}

Test(matrix_khr, khr_only_wave64)
{
    og_limits lim = radv_wave64();
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    cr_assert_eq(choose(&lim, notes), 2, "NV 8: %s; KHR 8: %s", notes[0].why, notes[2].why);
    cr_expect_eq(notes[2].params.mat, OG_MATRIX_KHR);
    cr_expect_eq(notes[2].params.sub, 64);
    for (int i = 0; i < 2; i++)
        cr_expect_not_null(strstr(notes[i].why, "VK_NV_cooperative_matrix (it lists no NV shapes)"),
                           "%s", notes[i].why);
    cr_expect_not_null(strstr(notes[3].why, "KHR 8-subgroup variant qualifies first"), "%s",
                       notes[3].why);
    og_kernel_key key = {.p = notes[2].params, .dtype = OG_F16, .dialect = OG_GLSL};
    uint32_t size[3];
    og_kernel_local_size(&key, size);
    cr_expect_eq(size[0], 512u, "8 subgroups of 64");
    /* The recovered float32 kernel follows. */
    og_params rec = og_params_recovered(&lim, OG_GLSL, OG_MODE_FAST);
    cr_expect_eq(rec.variant, OG_VARIANT_COOPMAT);
    cr_expect_eq(rec.mat, OG_MATRIX_KHR);
    cr_expect_eq(rec.sub, 64);
}

Test(matrix_khr, khr_only_32_to_64_selectable)
{
    og_limits lim = radv_wave64();
    lim.subgroup_size = 64;
    lim.matrix.size_control = 1;
    lim.matrix.subgroup_min = 32;
    lim.matrix.subgroup_max = 64;
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    cr_assert_eq(choose(&lim, notes), 2, "%s", notes[2].why);
    cr_expect_eq(notes[2].params.sub, 32, "the design's subgroups of 32, pinned");
    /* The tuner's candidates: KHR only. */
    og_params *space = NULL;
    size_t n = 0, khr = 0, nv = 0;
    og_shape cube = {1024, 1024, 1024, 1};
    cr_assert_eq(og_space(&lim, OG_PRESET_QUICK, OG_F16, 0, 0, &cube, &space, &n), OG_OK);
    for (size_t i = 0; i < n; i++) {
        khr += space[i].variant == OG_VARIANT_COOPMAT && space[i].mat == OG_MATRIX_KHR;
        nv += space[i].variant == OG_VARIANT_COOPMAT && space[i].mat == OG_MATRIX_NV;
    }
    free(space);
    cr_expect_eq(khr, 6);
    cr_expect_eq(nv, 0);
}

/* Intel's shape, M 8 with N and K 16: the tile takes 8x16x16 fragments. */
Test(matrix_khr, khr_with_m8_only)
{
    og_limits lim = radv_wave64();
    lim.matrix.khr_shapes[0] = f16_shape(8, 16, 16);
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    cr_assert_eq(choose(&lim, notes), 2, "%s", notes[2].why);
    cr_expect(notes[2].params.fm == 8 && notes[2].params.fn == 16 && notes[2].params.fk == 16);
}

Test(matrix_khr, nv_and_khr_both)
{
    og_limits lim = both();
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    cr_assert_eq(choose(&lim, notes), 0, "%s", notes[0].why);
    cr_expect_eq(notes[0].params.mat, OG_MATRIX_NV);
    cr_expect_not_null(strstr(notes[2].why, "NV 8-subgroup variant qualifies first (both are "
                                            "tuner candidates)"),
                       "%s", notes[2].why);
    og_params *space = NULL;
    size_t n = 0, khr = 0, nv = 0;
    og_shape cube = {1024, 1024, 1024, 1};
    cr_assert_eq(og_space(&lim, OG_PRESET_QUICK, OG_F16, 0, 0, &cube, &space, &n), OG_OK);
    for (size_t i = 0; i < n; i++) {
        khr += space[i].variant == OG_VARIANT_COOPMAT && space[i].mat == OG_MATRIX_KHR;
        nv += space[i].variant == OG_VARIANT_COOPMAT && space[i].mat == OG_MATRIX_NV;
    }
    free(space);
    cr_expect_eq(khr, 6, "KHR candidates");
    cr_expect_eq(nv, 6, "NV candidates");
}

Test(matrix_khr, khr_without_float16_components)
{
    og_limits lim = radv_wave64();
    lim.matrix.khr_shapes[0].a = lim.matrix.khr_shapes[0].b = OG_COMPONENT_S8;
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    cr_expect_eq(choose(&lim, notes), -1);
    cr_expect_not_null(strstr(notes[2].why, "no 16x16x16 float16 combination for VK_KHR"), "%s",
                       notes[2].why);
    /* Listed, but not for compute shaders. */
    og_limits graphics = radv_wave64();
    graphics.matrix.khr_compute = 0;
    cr_expect_eq(choose(&graphics, notes), -1);
    cr_expect_not_null(strstr(notes[2].why, "cooperativeMatrixSupportedStages lack compute"), "%s",
                       notes[2].why);
}

Test(matrix_khr, khr_without_the_memory_model)
{
    og_limits lim = radv_wave64();
    lim.matrix.memory_model = 0;
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    cr_expect_eq(choose(&lim, notes), -1);
    cr_expect_not_null(strstr(notes[2].why, "the Vulkan memory model"), "%s", notes[2].why);
    cr_expect_not_null(strstr(notes[3].why, "the Vulkan memory model"), "%s", notes[3].why);
    /* And the module's own capability says so, whatever the formulas do. */
    og_limits full = radv_wave64();
    og_kernel_key key = {.p = og_matrix_variant(&full, 2), .dtype = OG_F16, .dialect = OG_GLSL};
    uint32_t *words = NULL;
    size_t count = 0;
    og_reflection r;
    char err[1024] = "";
    cr_assert_eq(og_build_kernel(&key, &full, &words, &count, &r, err, sizeof err), OG_OK, "%s",
                 err);
    free(words);
    cr_expect_eq(og_limits_lack(&lim, r.needs, err, sizeof err), (uint32_t)OG_NEEDS_MEMORY_MODEL);
    cr_expect_not_null(strstr(err, "vulkanMemoryModel"), "%s", err);
}

/* ---- ogtune gen prints the KHR form ---- */

Test(matrix_khr, ogtune_gen_prints_khr)
{
    char *out;
    const char *p = "--params variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,load=direct";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "gen --emit spirv --dtype f16 --matrix khr %s", p);
    cr_assert_eq(ogtune(cmd, &out), 0);
    cr_expect_not_null(strstr(out, "OpCapability CooperativeMatrixKHR\n"), "%s", out);
    cr_expect_not_null(strstr(out, "OpExtension \"SPV_KHR_cooperative_matrix\"\n"), "%s", out);
    cr_expect_not_null(strstr(out, "= OpTypeCooperativeMatrixKHR"), "%s", out);
    cr_expect_not_null(strstr(out, "= OpCooperativeMatrixMulAddKHR"), "%s", out);
    cr_expect_null(strstr(out, "NV"), "an NV instruction is left");
    free(out);
    /* mat=khr in the parameters says the same. */
    snprintf(cmd, sizeof cmd, "gen --emit spirv --dtype f16 %s,mat=khr", p);
    cr_assert_eq(ogtune(cmd, &out), 0);
    cr_expect_not_null(strstr(out, "OpCapability CooperativeMatrixKHR\n"), "%s", out);
    free(out);
    /* Without --matrix the NV module, disassembled by SPIRV-Tools. */
    snprintf(cmd, sizeof cmd, "gen --emit spirv --dtype f16 %s", p);
    cr_assert_eq(ogtune(cmd, &out), 0);
    cr_expect_not_null(strstr(out, "OpCapability CooperativeMatrixNV"), "%s", out);
    free(out);
    /* --matrix needs a matrix kernel. */
    cr_expect_eq(ogtune_status("gen --emit spirv --dtype f16 --matrix khr 2>/dev/null", &out), 2);
    free(out);
}
