/* Tuning convolutions (issue 27 item 4): ogtune tune --op conv stores
 * verified records keyed by the convolution's op, layouts and implicit
 * GEMM; selection takes the exact one, else the nearest of the same key,
 * else the GEMM's choice, and never in Deterministic mode; the command
 * line parses shape strings, explains its choice and refuses what it
 * cannot tune; the records travel through export and import. */
#include "og_ogtune.h"
#include "og_records.h"
#include "og_test.h"
#include "og_tmpdir.h"

TestSuite(conv_tune, .init = make_tmpdir, .fini = remove_tmpdir);


/* A 3x3 NCHW convolution with KCRS weights, 2 groups of 12 output
 * channels (more than the depthwise kernel's 8: the tile): implicit GEMM
 * 81 x 12 x 36 x 4. */
static const og_conv_args tuned = {.layout = OG_CONV_NCHW,
                                   .weights = OG_CONV_KCRS,
                                   .n = 2,
                                   .c = 8,
                                   .h = 9,
                                   .w = 9,
                                   .k = 24,
                                   .r = 3,
                                   .s = 3,
                                   .groups = 2,
                                   .pad_top = 1,
                                   .pad_bottom = 1,
                                   .pad_left = 1,
                                   .pad_right = 1};

Test(conv_tune, tune_store_select, .timeout = 900)
{
    char db[512];
    tmp_path(db, sizeof db, "conv.db");
    og_context *ctx;
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = db}, &ctx), OG_OK);
    FILE *out = fopen("/dev/null", "w");
    cr_assert_not_null(out);
    og_tune_opts opts = {.db_path = db,
                         .dtypes = {OG_F32},
                         .n_dtypes = 1,
                         .convs = &tuned,
                         .n_convs = 1,
                         .preset = OG_PRESET_QUICK,
                         .budget_candidates = 3,
                         .out = out};
    og_status st = og_tune(ctx, &opts);
    fclose(out);
    cr_assert_eq(st, OG_OK, "og_tune: %s", og_context_last_error(ctx));

    records rs = read_records(db);
    cr_assert_eq(rs.n, 3, "%zu records", rs.n);
    char op[32];
    og_conv_op(&tuned, op, sizeof op);
    cr_expect_str_eq(op, "conv:3x3:s1x1:d1x1");
    const og_record *best = NULL;
    for (size_t i = 0; i < rs.n; i++) {
        const og_record *r = &rs.r[i];
        cr_expect_str_eq(r->key.op, op);
        cr_expect(r->key.trans_a == 1 && r->key.trans_b == 1, "layouts %d %d", r->key.trans_a,
                  r->key.trans_b);
        cr_expect(r->m == 81 && r->n == 12 && r->k == 36 && r->batch == 4,
                  "shape %lldx%lldx%lldx%lld", (long long)r->m, (long long)r->n, (long long)r->k,
                  (long long)r->batch);
        cr_expect(r->accepted && r->gflops > 0 && r->max_error < 1e-5, "%s: %s", r->params,
                  r->reason);
        cr_expect_str_eq(r->template_name, "gemm_tile");
        cr_expect(strstr(r->params, "vec=1") && strstr(r->params, "src=ssbo"), "%s", r->params);
        if (!best || r->gflops > best->gflops)
            best = r;
    }
    char params[OG_PARAMS_MAX];
    og_conv_shape s;
    og_choice c;
    /* The exact geometry: the best record. */
    cr_assert_eq(og_conv_geometry_check(ctx->error, &tuned, &s), OG_OK);
    cr_assert_eq(og_select_conv(ctx, OG_F32, OG_MODE_FAST, &tuned, &s, &c),
                 OG_OK);
    og_params_format(&c.params, params, sizeof params);
    cr_expect_eq(c.source, OG_SOURCE_DB);
    cr_expect_str_eq(params, best->params);
    cr_expect_str_eq(c.op, op);
    /* Another image size of the same key: the nearest record. */
    og_conv_args wider = tuned;
    wider.w = 15;
    cr_assert_eq(og_conv_geometry_check(ctx->error, &wider, &s), OG_OK);
    cr_assert_eq(og_select_conv(ctx, OG_F32, OG_MODE_FAST, &wider, &s, &c),
                 OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DB_NEAREST);
    /* Another layout, another filter, another type, Deterministic mode: not these records. */
    og_conv_args other = tuned;
    other.layout = OG_CONV_NHWC;
    cr_assert_eq(og_select_conv(ctx, OG_F32, OG_MODE_FAST, &other, &s, &c),
                 OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "NHWC took %s", c.op);
    other = tuned;
    other.r = other.s = 5;
    other.pad_top = other.pad_bottom = other.pad_left = other.pad_right = 2;
    cr_assert_eq(og_select_conv(ctx, OG_F32, OG_MODE_FAST, &other, &s, &c),
                 OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "5x5 took %s", c.op);
    cr_assert_eq(og_select_conv(ctx, OG_F16, OG_MODE_FAST, &tuned, &s, &c),
                 OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT);
    cr_assert_eq(
        og_select_conv(ctx, OG_F32, OG_MODE_DETERMINISTIC, &tuned, &s, &c),
        OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT);
    /* A call of the tuned geometry says it runs the record. */
    og_conv *cv;
    char desc[512];
    cr_assert_eq(og_conv_create(ctx, OG_F32, OG_MODE_FAST, &cv), OG_OK);
    og_conv_args call = tuned;
    og_buffer *x, *wt, *y;
    cr_assert_eq(og_buffer_create(ctx, 2 * 8 * 81 * 4, &x), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, 24 * 36 * 4, &wt), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, 2 * 24 * 81 * 4, &y), OG_OK);
    call.x = x, call.wt = wt, call.y = y;
    cr_assert_eq(og_conv_describe(cv, &call, desc, sizeof desc), OG_OK);
    cr_expect(strstr(desc, best->params) && strstr(desc, "(db, convolution record)"), "%s", desc);
    og_conv_destroy(cv);
    og_buffer_destroy(x);
    og_buffer_destroy(wt);
    og_buffer_destroy(y);
    free(rs.r);
    close_context(ctx);
}

/* The command line: shape strings, the JSON that explains the choice,
 * refusals, and the records through export and import (a hand-edited one
 * the convolution cannot run is refused). */
Test(conv_tune, command_line, .timeout = 900)
{
    char db[512], db2[512], dump[512], args[2048], *out;
    tmp_path(db, sizeof db, "cli.db");
    tmp_path(db2, sizeof db2, "cli2.db");
    tmp_path(dump, sizeof dump, "cli.sql");
    const char *shape = "2x8x9x9/24x3x3/p1/g2/nchw/kcrs";
    snprintf(args, sizeof args, "tune --op conv --db '%s' --shapes %s --budget 2c", db, shape);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "conv:3x3:s1x1:d1x1 NCHW KCRS, implicit GEMM 81x12x36 batch 4"), "%s",
              out);
    free(out);
    snprintf(args, sizeof args, "select --op conv --db '%s' --shape %s --json", db, shape);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "\"op\":\"conv:3x3:s1x1:d1x1\"") && strstr(out, "\"record\":\"conv\"") &&
                  strstr(out, "\"source\":\"db\"") && strstr(out, "\"output\":[9,9]") &&
                  strstr(out, "\"implicit_gemm\":[81,12,36,4]"),
              "%s", out);
    free(out);
    /* Strides, dilations and four paddings in the string. */
    snprintf(args, sizeof args,
             "select --op conv --db '%s' --shape 1x3x23x19/8x7x7/s2/d1x2/p3x2x1x0/kcrs --json", db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "\"op\":\"conv:7x7:s2x2:d1x2\"") && strstr(out, "\"output\":[11,4]") &&
                  strstr(out, "\"record\":\"none\""),
              "%s", out);
    free(out);
    /* A 1x1 NHWC convolution runs the GEMM; tuning it is refused. */
    snprintf(args, sizeof args, "select --op conv --db '%s' --shape 1x8x4x4/8x1x1 --json", db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "\"gemm\":true"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "tune --op conv --db '%s' --shapes 1x8x4x4/8x1x1 --json 2>&1", db);
    cr_expect_neq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "is a GEMM"), "%s", out);
    free(out);
    const char *bad[] = {"1x8x4/8x3x3", "1x8x4x4/8x3", "1x8x4x4/8x3x3/q1", "1x8x4x4/8x3x3/p1x2x3",
                         "1x8x4x4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "select --op conv --db '%s' --shape %s 2>&1", db, bad[i]);
        cr_expect_eq(ogtune(args, &out), 2, "%s: %s", bad[i], out);
        cr_expect(strstr(out, "NxCxHxW/KxRxS"), "%s: %s", bad[i], out);
        free(out);
    }
    /* An output size below 1 names it. */
    snprintf(args, sizeof args, "select --op conv --db '%s' --shape 1x8x2x2/8x5x5 2>&1", db);
    cr_expect_neq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "P (-2)"), "%s", out);
    free(out);
    /* Export, import; then a record edited to device addresses is refused. */
    snprintf(args, sizeof args, "export --db '%s' --out '%s'", db, dump);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "import --db '%s' '%s'", db2, dump);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "imported 2 records"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "sed -i -E 's/src=(ssbo|texel)/src=addr/' '%s'", dump);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "import --db '%s' '%s' 2>&1", db2, dump);
    cr_expect_neq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "not a convolution's"), "%s", out);
    free(out);
}
