/*
 * The WGSL dialect (docs/wgsl.md): every candidate of the standard tile
 * space at 256 cubed (a seventh of it, a third of that with the fma chain
 * instead of blocks), for each input type, op(A) x op(B) and the GEMM and
 * split-k planes kernels, either generates WGSL of the right structure (one
 * compute entry point with the parameters' workgroup size, the bindings,
 * 32-bit words only with no `f16` and no `enable`, no GLSL left over, the
 * workgroup memory the parameters promise within WebGPU's 16 KiB and 256
 * invocations) or is refused with a "wgsl:" message; what WGSL does not
 * cover is refused by name. Dawn validates the WGSL itself in web/
 * (CTest test_wgsl_webgpu).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

/* Limits that admit the whole standard space, so that only WGSL refuses. */
static og_limits generous_limits(void)
{
    og_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_invocations = 1024;
    lim.max_size[0] = lim.max_size[1] = 1024;
    lim.max_size[2] = 64;
    for (int i = 0; i < 3; i++)
        lim.max_count[i] = 65535;
    lim.max_shared_bytes = 48 * 1024;
    lim.max_storage_range = 1u << 30;
    lim.bind_align = 16;
    lim.max_push_bytes = 128;
    lim.subgroup_size = 32;
    lim.max_texel_elements = 1u << 27;
    lim.buffer_address = 1;
    return lim;
}

/* Occurrences of needle in text. */
static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Bytes of the var<workgroup> arrays of 32-bit elements a kernel declares. */
static uint32_t workgroup_bytes(const char *text)
{
    uint32_t bytes = 0;
    for (const char *p = strstr(text, "var<workgroup>"); p; p = strstr(p + 1, "var<workgroup>")) {
        const char *n = strstr(p, ", ");
        cr_assert_not_null(n);
        bytes += 4u * (uint32_t)strtoul(n + 2, NULL, 10);
    }
    return bytes;
}

/* Generates key's WGSL and checks its structure; the elementwise kernels
 * bind C, the bias and the push constants only. */
static void check_structure(const og_kernel_key *key)
{
    int operands = key->kernel == OG_KERNEL_GEMM || key->kernel == OG_KERNEL_PLANES;
    char *src = NULL, err[1024], params[512];
    og_params_format(&key->p, params, sizeof params);
    cr_assert_eq(og_gen_source(key, &src, err, sizeof err), OG_OK, "%s: %s", params, err);
    uint32_t size[3];
    og_kernel_local_size(key, size);
    char entry[96];
    snprintf(entry, sizeof entry, "@compute @workgroup_size(%u, %u, 1)\nfn main(", size[0], size[1]);
    cr_expect_eq(count(src, "@compute"), 1, "%s", params);
    cr_expect_eq(count(src, entry), 1, "%s: no entry point %s", params, entry);
    cr_expect_leq(size[0] * size[1], OG_WGSL_MAX_INVOCATIONS, "%s", params);
    const char *bindings[] = {
        "@group(0) @binding(0) var<storage, read> a_words: array<u32>;",
        "@group(0) @binding(1) var<storage, read> b_words: array<u32>;",
        "@group(0) @binding(2) var<storage, read_write> c_data: array<f32>;",
        "@group(0) @binding(5) var<storage, read> bias_data: array<f32>;",
        "@group(0) @binding(6) var<uniform> pc: Push;",
    };
    for (size_t i = operands ? 0 : 2; i < sizeof bindings / sizeof bindings[0]; i++)
        cr_expect_eq(count(src, bindings[i]), 1, "%s: %s", params, bindings[i]);
    cr_expect_eq(count(src, "@binding("), operands ? 5 : 3, "%s", params);
    /* Halves are pairs in u32 words: no shader-f16. */
    cr_expect_eq(count(src, "f16"), 0, "%s", params);
    cr_expect_eq(count(src, "enable"), 0, "%s", params);
    const char *glsl[] = {"precise", "#define", "layout(", "uint ", "float ", "SHARED", "ENTRY", "? "};
    for (size_t i = 0; i < sizeof glsl / sizeof glsl[0]; i++)
        cr_expect_eq(count(src, glsl[i]), 0, "%s: GLSL left over: '%s'", params, glsl[i]);
    uint32_t shared = workgroup_bytes(src);
    cr_expect_eq(shared, og_kernel_shared_bytes(key), "%s", params);
    cr_expect_leq(shared, OG_WGSL_MAX_SHARED_BYTES, "%s", params);
    free(src);
}

Test(wgsl, standard_space)
{
    og_limits lim = generous_limits();
    const og_dtype dtypes[] = {OG_F32, OG_F16, OG_BF16};
    og_shape shape = {256, 256, 256, 1};
    size_t generated = 0, refused = 0, staged = 0, direct = 0, chain = 0;
    for (int c = 0; c < 12; c++) {
        og_params *space = NULL;
        size_t n = 0;
        int trans_a = c & 1, trans_b = (c >> 1) & 1;
        cr_assert_eq(og_space(&lim, OG_PRESET_STANDARD, dtypes[c / 4], trans_a, trans_b, &shape,
                              &space, &n),
                     OG_OK);
        /* Every 7th candidate, rotating with the combination, both kernels. */
        for (size_t i = (size_t)c % 7; i < n; i += 7) {
            if (space[i].variant != OG_VARIANT_TILE)
                continue;
            og_kernel_key key = {.kernel = i % 2 ? OG_KERNEL_PLANES : OG_KERNEL_GEMM,
                                 .dtype = dtypes[c / 4], .trans_a = trans_a, .trans_b = trans_b,
                                 .dialect = OG_WGSL, .p = space[i]};
            /* The space sums in blocks; every third candidate takes the chain. */
            if (i % 3 == 0)
                key.p.acc = OG_ACC_CHAIN;
            char why[512];
            if (og_kernel_check(&key, NULL, why, sizeof why) != 0) {
                cr_expect_eq(strncmp(why, "wgsl: ", 6), 0, "%s", why);
                refused++;
                continue;
            }
            check_structure(&key);
            generated++;
            staged += key.p.load == OG_LOAD_STAGED;
            direct += key.p.load == OG_LOAD_DIRECT;
            chain += key.p.acc == OG_ACC_CHAIN;
        }
        free(space);
    }
    cr_expect_gt(staged, 10);
    cr_expect_gt(direct, 10);
    cr_expect_gt(chain, 0, "%zu chain of %zu", chain, generated);
    cr_expect_gt(generated, 100, "%zu generated, %zu refused", generated, refused);
    cr_expect_gt(refused, 10, "vec=4, texel and too large workgroups are refused");
}

/* Few rows: float32, vec=1, both layouts of B, a spread of columns x slices. */
Test(wgsl, fewrows)
{
    const int shapes[][2] = {{8, 32}, {16, 16}, {32, 8}, {4, 64}, {128, 2}, {2, 128}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int trans_b = 0; trans_b < 2; trans_b++) {
            og_kernel_key key = {.dtype = OG_F32, .trans_b = trans_b, .dialect = OG_WGSL,
                                 .p = {.variant = OG_VARIANT_FEWROWS, .cols = shapes[i][0],
                                       .slices = shapes[i][1], .vec = 1}};
            char why[512];
            cr_assert_eq(og_kernel_check(&key, NULL, why, sizeof why), 0, "%s", why);
            check_structure(&key);
        }
    }
}

/* The dense decode kernel: float32, float16 and bfloat16, both layouts of B,
 * every rows of og_params_decode with word loads (vec=1) and a spread of
 * columns x slices x columns an invocation. */
Test(wgsl, decode)
{
    const og_dtype types[] = {OG_F32, OG_F16, OG_BF16};
    const int shapes[][3] = {{4, 32, 1}, {64, 4, 8}, {16, 8, 4}, {8, 16, 1}};
    for (int rows = 1; rows <= 16; rows *= 2)
        for (size_t t = 0; t < 3; t++)
            for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
                for (int trans_b = 0; trans_b < 2; trans_b++) {
                    og_kernel_key key = {.dtype = types[t], .trans_b = trans_b, .dialect = OG_WGSL,
                                         .p = og_params_decode(rows, trans_b)};
                    key.p.cols = shapes[i][0], key.p.slices = shapes[i][1], key.p.tn = shapes[i][2];
                    key.p.vec = 1;
                    char why[512];
                    cr_assert_eq(og_kernel_check(&key, NULL, why, sizeof why), 0, "%s", why);
                    check_structure(&key);
                }
    /* GLSL's 16-byte loads, texel buffers and FP8 are refused by name. */
    og_kernel_key key = {.dtype = OG_F16, .trans_b = 1, .dialect = OG_WGSL, .p = og_params_decode(8, 1)};
    char why[512] = "";
    cr_expect_neq(og_kernel_check(&key, NULL, why, sizeof why), 0);
    cr_expect_not_null(strstr(why, "vec=4"), "%s", why);
    key.p.vec = 1, key.p.src = OG_SRC_TEXEL;
    cr_expect_neq(og_kernel_check(&key, NULL, why, sizeof why), 0);
    cr_expect_not_null(strstr(why, "src=texel"), "%s", why);
    key.p.src = OG_SRC_STORAGE, key.dtype = OG_FP8_E4M3;
    cr_expect_neq(og_kernel_check(&key, NULL, why, sizeof why), 0);
    cr_expect_not_null(strstr(why, "float32, float16 or bfloat16"), "%s", why);
    key.dtype = OG_F16, key.dialect = OG_HLSL;
    cr_expect_neq(og_kernel_check(&key, NULL, why, sizeof why), 0);
    cr_expect_not_null(strstr(why, "GLSL or WGSL"), "%s", why);
}

/* The standalone bias and activation, and alpha = 0 or K = 0's scale kernel. */
Test(wgsl, elementwise)
{
    const og_kernel kernels[] = {OG_KERNEL_BIAS, OG_KERNEL_ACTIVATE, OG_KERNEL_SCALE};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        og_kernel_key key = {.kernel = kernels[i], .dtype = OG_F32, .dialect = OG_WGSL};
        check_structure(&key);
    }
}

Test(wgsl, reduce)
{
    og_kernel_key key = {.kernel = OG_KERNEL_REDUCE, .dtype = OG_F32, .dialect = OG_WGSL};
    char *src = NULL, err[512];
    cr_assert_eq(og_gen_source(&key, &src, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(count(src, "@compute @workgroup_size(64, 1, 1)\nfn main("), 1);
    cr_expect_eq(count(src, "@group(0) @binding(0) var<storage, read> planes: array<f32>;"), 1);
    cr_expect_eq(count(src, "precise"), 0);
    free(src);
}

/* The convolution's kernels (conv_gather.tmpl): every input and weight
 * layout and type, the tile and its planes with staged loads in blocks and
 * direct loads in one chain, the gather's functions once each and the
 * groups read as the bits of the signed word; the reduction by layout. */
Test(wgsl, conv)
{
    og_params direct = og_params_default();
    direct.load = OG_LOAD_DIRECT, direct.pad = 0, direct.acc = OG_ACC_CHAIN;
    const og_params tiles[] = {og_params_default(), direct};
    const og_dtype dtypes[] = {OG_F32, OG_F16, OG_BF16};
    for (int c = 0; c < 4 * 3 * 2 * 2; c++) {
        og_kernel_key key = {.kernel = c % 2 ? OG_KERNEL_PLANES : OG_KERNEL_GEMM,
                             .dtype = dtypes[c / 2 % 3], .trans_b = 1, .dialect = OG_WGSL,
                             .p = tiles[c / 6 % 2], .conv = OG_CONV_KEY(c / 12 % 2, c / 24)};
        char why[512], *src = NULL;
        cr_assert_eq(og_kernel_check(&key, NULL, why, sizeof why), 0, "%s", why);
        check_structure(&key);
        cr_assert_eq(og_gen_source(&key, &src, why, sizeof why), OG_OK, "%s", why);
        cr_expect_eq(count(src, "fn og_conv_a(a_base: u32, i: u32, kk: u32) -> f32 {"), 1);
        cr_expect_eq(count(src, "fn og_conv_groups() -> u32 { return bitcast<u32>(pc.zero_a); }"), 1);
        cr_expect_eq(count(src, "let grp = batch % og_conv_groups();"), 1);
        free(src);
    }
    for (int layout = 0; layout < 2; layout++) {
        og_kernel_key key = {.kernel = OG_KERNEL_REDUCE, .dtype = OG_F32, .dialect = OG_WGSL,
                             .conv = OG_CONV_KEY(layout, 0)};
        char why[512], *src = NULL;
        cr_assert_eq(og_gen_source(&key, &src, why, sizeof why), OG_OK, "%s", why);
        cr_expect_eq(count(src, "og_conv_c(pc.off_c + (b / og_conv_groups()) * pc.stride_c, grp, i, j)"), 1);
        cr_expect_eq(count(src, layout ? "(g * pc.N + j) * pc.ldc" : "(og_conv_pix0() + i) * pc.ldc"), 1);
        free(src);
    }
}

/* The low-bit decode kernel (qgemm_decode.tmpl, docs/wgsl.md): every weight
 * format kind (the group changes no kernel) x A's type x the rows of
 * og_params_qdecode, with word loads and unsplit; the decodes' functions
 * once each and Q8_0's arithmetic shift of a signed word. */
Test(wgsl, qdecode)
{
    const int formats[] = {OG_QFORMAT_KEY(0, 0, 0), OG_QFORMAT_KEY(1, 0, 0), OG_QFORMAT_KEY(3, 0, 0),
                           OG_QFORMAT_KEY(2, 0, 0), OG_QFORMAT_KEY(2, 1, 0), OG_QFORMAT_KEY(2, 0, 1),
                           OG_QFORMAT_KEY(2, 1, 1), OG_QFORMAT_KEY(2, 0, 2), OG_QFORMAT_KEY(2, 1, 2),
                           OG_QFORMAT_KEY(4, 0, 0), OG_QFORMAT_KEY(5, 0, 0)};
    const og_dtype dtypes[] = {OG_F32, OG_F16, OG_BF16};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        for (int d = 0; d < 3; d++) {
            for (int rows = 1; rows <= 16; rows *= 2) {
                og_params p = og_params_qdecode(rows);
                p.vec = 1;
                og_kernel_key key = {.dtype = dtypes[d], .dialect = OG_WGSL, .p = p,
                                     .qformat = formats[f]};
                char why[512], *src = NULL;
                cr_assert_eq(og_kernel_check(&key, NULL, why, sizeof why), 0, "%s", why);
                check_structure(&key);
                cr_assert_eq(og_gen_source(&key, &src, why, sizeof why), OG_OK, "%s", why);
                int format = OG_QFORMAT_KEY_FORMAT(formats[f]);
                cr_expect_eq(count(src, "fn og_e2m1x2(c: u32) -> f32 {"), format < 2, "%d", f);
                cr_expect_eq(count(src, "fn og_block_scale(s: u32) -> f32 {"), format < 2);
                cr_expect_eq(count(src, "var w31 = "), 1);
                cr_expect_eq(count(src, "var acc"), rows);
                if (format == 3)
                    cr_expect_eq(count(src, "var w0 = f32(U2I(q0 << 24u) >> 24u);"), 1);
                cr_expect_eq(count(src, "fn og_q4k_scale_min(w0: u32, w1: u32, w2: u32, s: u32) -> u32 {"),
                             format == 4);
                free(src);
            }
        }
    }
}

/* The low-bit prefill tile (gemm_tile with qweights_element.tmpl): every
 * weight format kind x A's type, the weights transposed (N x K), one pass;
 * the decode of W(j, k) once, and Q8_0's arithmetic shift of a signed word. */
Test(wgsl, qprefill)
{
    const int formats[] = {OG_QFORMAT_KEY(0, 0, 0), OG_QFORMAT_KEY(1, 0, 0), OG_QFORMAT_KEY(3, 0, 0),
                           OG_QFORMAT_KEY(2, 0, 0), OG_QFORMAT_KEY(2, 1, 1), OG_QFORMAT_KEY(2, 0, 2),
                           OG_QFORMAT_KEY(4, 0, 0), OG_QFORMAT_KEY(5, 0, 0)};
    const og_dtype dtypes[] = {OG_F32, OG_F16, OG_BF16};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        for (int d = 0; d < 3; d++) {
            og_kernel_key key = {.dtype = dtypes[d], .dialect = OG_WGSL, .p = og_params_qprefill(),
                                 .qformat = formats[f], .trans_b = 1};
            char why[512], *src = NULL;
            cr_assert_eq(og_kernel_check(&key, NULL, why, sizeof why), 0, "%s", why);
            check_structure(&key);
            cr_assert_eq(og_gen_source(&key, &src, why, sizeof why), OG_OK, "%s", why);
            int format = OG_QFORMAT_KEY_FORMAT(formats[f]);
            cr_expect_eq(count(src, "fn og_qweight(w_base: u32, j: u32, k: u32) -> f32 {"), 1);
            cr_expect_eq(count(src, "fn og_qe2m1x2(c: u32) -> f32 {"), format < 2, "%zu", f);
            if (format == 3)
                cr_expect_eq(count(src, "f32(bitcast<i32>(q << 24u) >> 24u)"), 1);
            cr_expect_eq(count(src, "fn og_q4k_scale_min(w0: u32, w1: u32, w2: u32, s: u32) -> u32 {"),
                         format == 4);
            free(src);
            /* No split-k pass: the prefill is one pass. */
            key.kernel = OG_KERNEL_PLANES;
            cr_expect_neq(og_kernel_check(&key, NULL, why, sizeof why), 0);
        }
    }
}

/* Refused kernels, each with the words that name why. */
Test(wgsl, refusals)
{
    og_params tile = og_params_default();
    struct {
        og_kernel_key key;
        const char *why;
    } cases[] = {
        {{.kernel = OG_KERNEL_EXPONENTS}, "range-scaling exponents"},
        {{.p = {.variant = OG_VARIANT_INT8_SKINNY, .rows = 4, .cols = 4, .slices = 8},
          .dtype = OG_INT8, .dtype_b = OG_INT8},
         "int8gemm_skinny kernel is not written in WGSL"},
        {{.p = {.variant = OG_VARIANT_FEWROWS, .cols = 16, .slices = 16, .vec = 4}}, "vec=4"},
        {{.p = tile, .dtype = OG_FP8_E4M3}, "float32, float16 or bfloat16"},
        {{.p = tile, .recover = 11}, "recovered float32"},
        {{.p = tile}, "vec=4"},
        {{.p = tile}, "src=texel"},
        {{.p = tile}, "src=addr"},
        {{.p = tile}, "1024 invocations per workgroup exceed WebGPU's default"},
        {{.p = tile}, "32768 bytes of workgroup memory exceed WebGPU's default"},
        {{.p = og_params_qdecode(1), .qformat = OG_QFORMAT_KEY(0, 0, 0)},
         "vec=4: the WGSL decode kernel reads A and the weights as 32-bit words"},
        {{.p = og_params_qdecode(1), .qformat = OG_QFORMAT_KEY(1, 0, 0)},
         "split=4: the decode kernel's split-k ranges are GLSL only"},
        {{.kernel = OG_KERNEL_PLANES, .p = og_params_qdecode(1), .qformat = OG_QFORMAT_KEY(3, 0, 0)},
         "split-k pass (--kernel planes) is GLSL only"},
    };
    cases[11].key.p.vec = 1, cases[11].key.p.split = 4;
    cases[12].key.p.vec = 1;
    og_params *vec4 = &cases[5].key.p, *large = &cases[9].key.p;
    vec4->load = OG_LOAD_DIRECT, vec4->pad = 0, vec4->vec = 4;
    cases[6].key.p.src = OG_SRC_TEXEL;
    cases[7].key.p.src = OG_SRC_ADDR;
    cases[8].key.p.bm = cases[8].key.p.bn = 128, cases[8].key.p.wgx = cases[8].key.p.wgy = 32;
    large->bm = large->bn = 128, large->bk = 32, large->pad = 0, large->tm = large->tn = 8;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        og_kernel_key key = cases[i].key;
        key.dialect = OG_WGSL;
        char why[512] = "", *src = NULL;
        cr_expect_neq(og_kernel_check(&key, NULL, why, sizeof why), 0, "case %zu", i);
        cr_expect_not_null(strstr(why, cases[i].why), "case %zu: %s", i, why);
        cr_expect_eq(og_gen_source(&key, &src, why, sizeof why), OG_ERROR_INVALID_ARGUMENT);
        cr_expect_null(src);
        /* The same key in GLSL is not refused for WebGPU's reasons. */
        key.dialect = OG_GLSL;
        why[0] = '\0';
        og_kernel_check(&key, NULL, why, sizeof why);
        cr_expect_null(strstr(why, "wgsl"), "case %zu: %s", i, why);
    }
}

Test(wgsl, no_spirv)
{
    uint32_t *words = NULL;
    size_t n = 0;
    char err[256];
    cr_expect_eq(og_compile("fn main() {}", OG_WGSL, 0, &words, &n, err, sizeof err),
                 OG_ERROR_INVALID_ARGUMENT);
    cr_expect_null(words);
}
