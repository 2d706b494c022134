/* The kernel families' table (gen/og_family.h): one entry per variant, each
 * owning its name, template, defaults and parameter text, and saying what
 * its family can do in a way that agrees with its parameters. No Vulkan. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "og_family.h"

#define VARIANTS OG_VARIANT_COUNT

Test(families, every_variant_has_one_entry)
{
    for (int v = 0; v < VARIANTS; v++) {
        const og_family *f = og_family_find((og_variant)v);
        cr_assert(f != NULL, "variant %d has no entry", v);
        cr_expect_eq(f->variant, (og_variant)v, "%s", f->name);
        cr_expect(f->name && *f->name && f->template_name && f->keys_text, "variant %d", v);
        cr_expect(f->format && f->check && f->shared_bytes && f->local_size && f->loop_iterations,
                  "%s lacks a function", f->name);
        cr_expect_eq(og_family_named(f->name), f, "%s is not found by its name", f->name);
        og_params p = {.variant = (og_variant)v};
        cr_expect_eq(og_family_of(&p), f, "%s", f->name);
        char path[512];
        snprintf(path, sizeof path, "%s/%s.tmpl", OG_TEMPLATES, f->template_name);
        cr_expect(access(path, R_OK) == 0, "%s's template %s is not in templates/", f->name, path);
        for (int w = 0; w < v; w++)
            cr_expect(strcmp(og_family_find((og_variant)w)->name, f->name) != 0,
                      "two entries named %s", f->name);
    }
    cr_expect_null(og_family_find((og_variant)VARIANTS));
    cr_expect_null(og_family_named("nosuchfamily"));
    og_params unknown = {.variant = (og_variant)VARIANTS};
    char why[256] = "";
    cr_expect_neq(og_params_check(&unknown, NULL, why, sizeof why), 0);
    cr_expect(strstr(why, "unknown variant") != NULL, "%s", why);
}

/* Every family's defaults print, parse back to the same parameters and
 * pass their own checks. */
Test(families, defaults_round_trip)
{
    og_params defaults[] = {og_params_default(), og_params_qprefill(),
                            og_params_fewrows(0, 1024), og_params_fewrows(0, 8192),
                            og_params_fewrows(1, 1024), og_params_int8_tile(),
                            og_params_int8_skinny(), og_params_qdecode(1),
                            og_params_qdecode(3), og_params_qdecode(16),
                            og_params_coopmat(8), og_params_coopmat(4),
                            og_params_int8_coopmat(8), og_params_int8_coopmat(4),
                            og_params_decode(1, 1), og_params_decode(5, 0),
                            og_params_decode(16, 1), og_params_coopmat2(8),
                            og_params_coopmat2(32), og_params_depthwise()};
    int seen[VARIANTS] = {0};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        char text[OG_PARAMS_MAX], again[OG_PARAMS_MAX], why[256];
        og_params p;
        og_params_format(&defaults[i], text, sizeof text);
        cr_assert_eq(og_params_parse(text, &p, why, sizeof why), 0, "%s: %s", text, why);
        cr_expect_eq(memcmp(&p, &defaults[i], sizeof p), 0, "%s does not parse back", text);
        og_params_format(&p, again, sizeof again);
        cr_expect_str_eq(again, text);
        cr_expect_eq(og_params_check(&p, NULL, why, sizeof why), 0, "%s: %s", text, why);
        seen[p.variant] = 1;
    }
    for (int v = 0; v < VARIANTS; v++)
        cr_expect(seen[v], "no default of %s", og_family_find((og_variant)v)->name);
}

/* What a family says it can do agrees with the keys it takes: tiled
 * families name a tile, the depthwise convolution its rows of pixels, the
 * others columns; matrix families their subgroups; only families that
 * split k take split. */
Test(families, abilities_agree_with_keys)
{
    for (int v = 0; v < VARIANTS; v++) {
        const og_family *f = og_family_find((og_variant)v);
        int tiled = (f->can & OG_FAMILY_TILED) != 0, matrix = (f->can & OG_FAMILY_MATRIX) != 0;
        cr_expect_eq(!!(f->keys & OG_KEY_BM), tiled, "%s", f->name);
        int depthwise = (f->can & OG_FAMILY_DEPTHWISE) != 0;
        cr_expect_eq(!!(f->keys & OG_KEY_COLS), !tiled && !depthwise, "%s", f->name);
        cr_expect(!depthwise || (f->keys == OG_KEY_ROWS && (f->can & OG_FAMILY_CONV)), "%s",
                  f->name);
        cr_expect_eq(!!(f->keys & OG_KEY_SGX), matrix, "%s", f->name);
        og_params p = {.variant = (og_variant)v};
        cr_expect_eq(og_params_matrix(&p), matrix, "%s", f->name);
        cr_expect(!f->takes == !f->takes_text, "%s", f->name);
        cr_expect(!((f->can & OG_FAMILY_INT8) && (f->can & (OG_FAMILY_FP8 | OG_FAMILY_CONV))),
                  "%s takes int8 and float inputs", f->name);
    }
    /* A family that does not split k refuses split in its string. */
    char why[256] = "";
    og_params p;
    cr_expect_neq(og_params_parse("variant=fewrows,cols=16,slices=16,split=2", &p, why, sizeof why),
                  0);
    cr_expect(strstr(why, og_family_fewrows.keys_text) != NULL, "%s", why);
    cr_expect_eq(og_params_parse("variant=qdecode,rows=4,cols=4,slices=32,split=4", &p, why,
                                 sizeof why),
                 0, "%s", why);
    cr_expect_eq(p.split, 4);
}
