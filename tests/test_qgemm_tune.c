/* Tuning low-bit weight products (issue 28 item 5): ogtune tune --op qgemm
 * stores verified records keyed by the weight format, A's type and the
 * shape; selection takes the exact one, else the nearest of the same key
 * (with the rows of its own M), never in Deterministic mode; the verifier
 * rejects a wrong result; the command line parses --weights, explains its
 * choice and benchmarks; the records travel through export and import, and
 * a record edited to another format or kernel is refused. */
#include "og_matrix_device.h"
#include "og_ogtune.h"
#include "og_records.h"
#include "og_test.h"
#include "og_tmpdir.h"

TestSuite(qgemm_tune, .init = make_tmpdir, .fini = remove_tmpdir);

/* INT4, groups of 64, bfloat16 scales, uint4 zero points: the format with
 * every plane. */
static const og_qweights_format int4 = {
    .format = OG_QFORMAT_INT4, .group = 64, .scale = OG_QSCALE_BF16, .zero = OG_QZERO_UINT4};

/* Tunes three candidates of the quick preset for one shape into db (in
 * this process) and returns a context that selects from it. */
static og_context *tune_into(const char *db, og_dtype t, const og_qweights_format *f,
                             og_shape shape)
{
    og_context *ctx;
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = db}, &ctx), OG_OK);
    FILE *out = fopen("/dev/null", "w");
    cr_assert_not_null(out);
    og_tune_opts opts = {.db_path = db,
                         .dtypes = {t},
                         .n_dtypes = 1,
                         .shapes = &shape,
                         .n_shapes = 1,
                         .qformat = f,
                         .preset = OG_PRESET_QUICK,
                         .budget_candidates = 3,
                         .out = out};
    og_status st = og_tune(ctx, &opts);
    fclose(out);
    cr_assert_eq(st, OG_OK, "og_tune: %s", og_context_last_error(ctx));
    return ctx;
}

Test(qgemm_tune, tune_store_select, .timeout = 900)
{
    char db[512];
    tmp_path(db, sizeof db, "qgemm.db");
    og_context *ctx = tune_into(db, OG_F16, &int4, (og_shape){3, 96, 256, 2});

    records rs = read_records(db);
    cr_assert_eq(rs.n, 3, "%zu records", rs.n);
    char op[32];
    og_qgemm_op(&int4, op, sizeof op);
    cr_expect_str_eq(op, "qgemm:int4:g64:bf16:uint4");
    const og_record *best = NULL;
    for (size_t i = 0; i < rs.n; i++) {
        const og_record *r = &rs.r[i];
        cr_expect_str_eq(r->key.op, op);
        cr_expect(r->key.dtype == OG_F16 && r->key.trans_a == 0 && r->key.trans_b == 1,
                  "dtype %d, transposes %d %d", r->key.dtype, r->key.trans_a, r->key.trans_b);
        cr_expect(r->m == 3 && r->n == 96 && r->k == 256 && r->batch == 2,
                  "shape %lldx%lldx%lldx%lld", (long long)r->m, (long long)r->n, (long long)r->k,
                  (long long)r->batch);
        cr_expect(r->accepted && r->gflops > 0 && r->max_error < 1e-5, "%s: %s", r->params,
                  r->reason);
        cr_expect_str_eq(r->template_name, "qgemm_decode");
        if (!best || r->gflops > best->gflops)
            best = r;
    }
    /* The default comes first, with the rows of M = 3. */
    cr_expect_str_eq(rs.r[0].params, "variant=qdecode,rows=4,cols=4,slices=32,vec=4");

    char params[OG_PARAMS_MAX];
    og_choice c;
    cr_assert_eq(og_select_qgemm(ctx, OG_F16, &int4, OG_MODE_FAST, 3, 96, 256, 2, &c), OG_OK);
    og_params_format(&c.params, params, sizeof params);
    cr_expect_eq(c.source, OG_SOURCE_DB);
    cr_expect_str_eq(params, best->params);
    og_params tuned = c.params;
    /* Another M: the nearest record, its columns and slices, this M's rows. */
    cr_assert_eq(og_select_qgemm(ctx, OG_F16, &int4, OG_MODE_FAST, 9, 96, 256, 2, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DB_NEAREST);
    cr_expect(c.params.rows == 16 && c.params.cols == tuned.cols &&
                  c.params.slices == tuned.slices && c.params.vec == tuned.vec,
              "rows %d cols %d slices %d vec %d", c.params.rows, c.params.cols, c.params.slices,
              c.params.vec);
    /* Another format, another group, another type, Deterministic mode: not these records. */
    og_qweights_format other = int4;
    other.group = 128;
    cr_assert_eq(og_select_qgemm(ctx, OG_F16, &other, OG_MODE_FAST, 3, 96, 256, 2, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT);
    other = (og_qweights_format){.format = OG_QFORMAT_MXFP4};
    cr_assert_eq(og_select_qgemm(ctx, OG_F16, &other, OG_MODE_FAST, 3, 96, 256, 2, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT);
    cr_assert_eq(og_select_qgemm(ctx, OG_F32, &int4, OG_MODE_FAST, 3, 96, 256, 2, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT);
    cr_assert_eq(og_select_qgemm(ctx, OG_F16, &int4, OG_MODE_DETERMINISTIC, 3, 96, 256, 2, &c),
                 OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT);

    /* A call of the tuned shape runs the record, describes it, and is right. */
    og_qgemm *q;
    cr_assert_eq(og_qgemm_create(ctx, OG_F16, &int4, OG_MODE_FAST, &q), OG_OK);
    og_qgemm_problem *pr;
    cr_assert_eq(og_qgemm_problem_create(ctx, OG_F16, &int4, 3, 96, 256, 2, 9, &pr), OG_OK);
    char desc[512];
    cr_assert_eq(og_qgemm_describe(q, &pr->args, desc, sizeof desc), OG_OK);
    cr_expect(strstr(desc, best->params) && strstr(desc, "(db, record of 3x96x256 x 2)") &&
                  strstr(desc, op),
              "%s", desc);
    og_params chosen;
    cr_assert_eq(og_qgemm_choose(q, &pr->args, &chosen), OG_OK);
    cr_expect_eq(memcmp(&chosen, &tuned, sizeof chosen), 0);
    int accepted;
    double metric;
    char why[256] = "";
    cr_assert_eq(og_qgemm_problem_verify(q, pr, &chosen, &accepted, &metric, why, sizeof why),
                 OG_OK);
    cr_expect(accepted, "%s", why);
    /* The verifier sees a wrong product: one weight off in the reference. */
    pr->w[5] += 0.5f;
    cr_assert_eq(og_qgemm_problem_verify(q, pr, &chosen, &accepted, &metric, why, sizeof why),
                 OG_OK);
    cr_expect(!accepted && strstr(why, "above the float32 bound"), "accepted %d: %s", accepted,
              why);
    og_qgemm_problem_destroy(pr);
    og_qgemm_destroy(q);
    free(rs.r);
    close_context(ctx);
}

/* Above 16 rows the candidates are the prefill's tiles (unsplit, element
 * loads): their records select, describe and run like the decode kernel's. */
Test(qgemm_tune, prefill_records, .timeout = 900)
{
    char db[512];
    tmp_path(db, sizeof db, "prefill.db");
    const og_qweights_format mx = {.format = OG_QFORMAT_MXFP4};
    og_context *ctx = tune_into(db, OG_F32, &mx, (og_shape){40, 70, 128, 1});
    records rs = read_records(db);
    cr_assert_eq(rs.n, 3, "%zu records", rs.n);
    const og_record *best = NULL;
    for (size_t i = 0; i < rs.n; i++) {
        const og_record *r = &rs.r[i];
        cr_expect_str_eq(r->template_name, "gemm_tile");
        cr_expect(strstr(r->params, "vec=1") && strstr(r->params, "src=ssbo") &&
                      strstr(r->params, "split=1"),
                  "%s", r->params);
        cr_expect(r->accepted && r->max_error < 1e-5, "%s: %s", r->params, r->reason);
        if (!best || r->gflops > best->gflops)
            best = r;
    }
    og_qgemm *q;
    og_qgemm_problem *pr;
    cr_assert_eq(og_qgemm_create(ctx, OG_F32, &mx, OG_MODE_FAST, &q), OG_OK);
    cr_assert_eq(og_qgemm_problem_create(ctx, OG_F32, &mx, 40, 70, 128, 1, 3, &pr), OG_OK);
    char desc[512];
    cr_assert_eq(og_qgemm_describe(q, &pr->args, desc, sizeof desc), OG_OK);
    cr_expect(strstr(desc, "gemm_tile") && strstr(desc, best->params) && strstr(desc, "(db,"), "%s",
              desc);
    /* M = 16 stays with the decode kernel's default: no record of its kind. */
    og_choice c;
    cr_assert_eq(og_select_qgemm(ctx, OG_F32, &mx, OG_MODE_FAST, 16, 70, 128, 1, &c), OG_OK);
    cr_expect(c.source == OG_SOURCE_DEFAULT && c.params.variant == OG_VARIANT_QDECODE);
    og_params chosen;
    int accepted;
    double metric;
    char why[256] = "";
    cr_assert_eq(og_qgemm_choose(q, &pr->args, &chosen), OG_OK);
    cr_assert_eq(og_qgemm_problem_verify(q, pr, &chosen, &accepted, &metric, why, sizeof why),
                 OG_OK);
    cr_expect(accepted, "%s", why);
    og_qgemm_problem_destroy(pr);
    og_qgemm_destroy(q);
    /* The decode kernel over tiles of 16 rows competes above 16 rows: a
     * record of it measured faster than the best tile is selected. */
    og_db *handle;
    int64_t device;
    char err[512];
    cr_assert_eq(og_db_open(db, 1, &handle, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(og_db_device(handle, &ctx->info, &device, err, sizeof err), OG_OK, "%s", err);
    og_record faster = *best;
    snprintf(faster.template_name, sizeof faster.template_name, "qgemm_decode");
    faster.template_hash = og_template_hash("qgemm_decode");
    snprintf(faster.params, sizeof faster.params, "variant=qdecode,rows=16,cols=8,slices=16,vec=4");
    faster.gflops = 2 * best->gflops;
    cr_assert_eq(og_db_insert(handle, device, &faster, err, sizeof err), OG_OK, "%s", err);
    og_db_close(handle);
    close_context(ctx);
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = db}, &ctx), OG_OK);
    cr_assert_eq(og_select_qgemm(ctx, OG_F32, &mx, OG_MODE_FAST, 40, 70, 128, 1, &c), OG_OK);
    char params[OG_PARAMS_MAX];
    og_params_format(&c.params, params, sizeof params);
    cr_expect(c.source == OG_SOURCE_DB && strcmp(params, faster.params) == 0, "%s", params);
    free(rs.r);
    close_context(ctx);
}

/* The quick space of the decode kernel (M <= 16) holds the default, its
 * neighbours in columns and slices from storage and texel buffers, 2 and 4
 * units a trip and 2 and 4 columns an invocation: each kind named by one
 * of its candidates, every candidate one the generator takes. */
Test(qgemm_tune, decode_quick_space)
{
    og_context *ctx = open_context();
    for (int64_t m = 1; m <= 8; m += 7) {
        og_params *list;
        size_t n;
        cr_assert_eq(og_space_qgemm(&ctx->limits, OG_PRESET_QUICK, &(og_shape){m, 4096, 4096, 1}, &list, &n),
                     OG_OK);
        const char *want[] = {"cols=4,slices=32,vec=4", "cols=2,slices=64,vec=4,src=texel",
                              "cols=8,slices=16,vec=4", "cols=4,slices=32,vec=4,unroll=4",
                              "cols=16,slices=32,vec=4,tn=4,src=texel", "cols=8,slices=16,vec=4,tn=2"};
        int seen[6] = {0};
        for (size_t i = 0; i < n; i++) {
            char text[OG_PARAMS_MAX], why[256] = "";
            og_params_format(&list[i], text, sizeof text);
            og_kernel_key key = {.p = list[i], .dtype = OG_F32, .dialect = OG_GLSL,
                                 .qformat = OG_QFORMAT_KEY(OG_QFORMAT_Q4_K, 0, 0)};
            cr_expect_eq(og_kernel_check(&key, &ctx->limits, why, sizeof why), 0, "%s: %s", text, why);
            const char *rest = strstr(text, ",cols=");
            for (int w = 0; w < 6; w++)
                seen[w] |= rest && strcmp(rest + 1, want[w]) == 0;
        }
        for (int w = 0; w < 6; w++)
            cr_expect(seen[w], "M = %lld: no candidate %s among %zu", (long long)m, want[w], n);
        cr_expect_geq(n, 28, "M = %lld: %zu candidates", (long long)m, n);
        free(list);
    }
    close_context(ctx);
}

/* Above 16 rows a device with float16 matrices adds to the candidates its
 * staged matrix tiles that run recovered with range scaling, each a kernel
 * the generator takes with a weight format; up to 16 rows, and on a device
 * without matrices (lavapipe 22), there are none. */
Test(qgemm_tune, matrix_candidates_above_16_rows)
{
    og_limits lim = matrix_device();
    lim.matrix.khr_shapes[lim.matrix.n_khr_shapes++] = f16_shape(16, 16, 16);
    lim.matrix.khr_compute = 1;
    og_context *ctx = open_context();
    const og_limits *limits[2] = {&lim, &ctx->limits};
    for (int d = 0; d < 2; d++)
        for (int64_t m = 16; m <= 64; m += 48) {
            og_params *list;
            size_t n, matrix = 0;
            cr_assert_eq(og_space_qgemm(limits[d], OG_PRESET_QUICK, &(og_shape){m, 256, 512, 1}, &list, &n), OG_OK);
            for (size_t i = 0; i < n; i++) {
                if (list[i].variant != OG_VARIANT_COOPMAT)
                    continue;
                matrix++;
                og_kernel_key key = {.p = list[i], .dtype = OG_F16, .dialect = OG_GLSL, .trans_b = 1,
                                     .qformat = OG_QFORMAT_KEY(OG_QFORMAT_MXFP4, 0, 0),
                                     .recover = OG_RECOVER_SHIFT, .scaled = 1};
                char why[256] = "", text[OG_PARAMS_MAX];
                og_params_format(&list[i], text, sizeof text);
                cr_expect(list[i].load == OG_LOAD_STAGED && list[i].mat != OG_MATRIX_EMU, "%s", text);
                cr_expect_eq(og_kernel_check(&key, limits[d], why, sizeof why), 0, "%s: %s", text, why);
            }
            if (d == 0 && m > 16)
                cr_expect_gt(matrix, 0, "no matrix candidate for M = 64 on a device with matrices");
            else
                cr_expect_eq(matrix, 0, "%zu matrix candidates for M = %lld, device %d", matrix, (long long)m, d);
            free(list);
        }
    close_context(ctx);
}

/* The command line: tune, select --json, bench, refusals, and the records
 * through export and import. */
Test(qgemm_tune, command_line, .timeout = 900)
{
    char db[512], db2[512], dump[512], args[2048], *out;
    tmp_path(db, sizeof db, "cli.db");
    tmp_path(db2, sizeof db2, "cli2.db");
    tmp_path(dump, sizeof dump, "cli.sql");
    snprintf(args, sizeof args,
             "tune --op qgemm --weights q8_0 --db '%s' --shapes 2x64x128 --budget 2c", db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "qgemm:q8_0, A f32, 2x64x128 batch 1: ") &&
                  strstr(out, "qgemm:q8_0, A f32, 2x64x128 x 1: qgemm_decode") &&
                  strstr(out, "(db): the fastest record of this shape"),
              "%s", out);
    free(out);
    snprintf(args, sizeof args,
             "select --op qgemm --weights q8_0 --db '%s' --shape 2x64x128 --json", db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "\"op\":\"qgemm:q8_0\"") && strstr(out, "\"source\":\"db\"") &&
                  strstr(out, "\"match\":\"exact\"") && strstr(out, "\"shape\":[2,64,128,1]"),
              "%s", out);
    free(out);
    /* A K-quant's ragged neighbours keep K on its super-block (256), so its
     * candidates verify and the tuned record is selected. */
    snprintf(args, sizeof args,
             "tune --op qgemm --weights q6_k --db '%s' --shapes 2x64x512 --budget 2c", db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "qgemm:q6_k, A f32, 2x64x512 x 1: qgemm_decode") &&
                  strstr(out, "(db): the fastest record of this shape"),
              "%s", out);
    free(out);
    /* INT4 options in any order name one canonical op; no record of it here. */
    snprintf(args, sizeof args,
             "select --op qgemm --weights int4:uint4:bf16:g128 --db '%s' --shape 1x64x256 --json",
             db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "\"op\":\"qgemm:int4:g128:bf16:uint4\"") &&
                  strstr(out, "\"source\":\"default\""),
              "%s", out);
    free(out);
    /* bench: the default and the selected kernel, GB/s against the copy. */
    snprintf(args, sizeof args, "bench --op qgemm --weights q8_0 --db '%s' --shapes 2x64x128", db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "load average") && strstr(out, "weights GB/s") &&
                  strstr(out, "2x64x128 ") && strstr(out, "variant=qdecode"),
              "%s", out);
    free(out);
    /* --against: the integer path timed against the float path in one run;
     * a bad baseline is refused before any device work. */
    snprintf(args, sizeof args,
             "bench --op qgemm --weights q8_0 --db '%s' --shapes 2x64x128 --params "
             "variant=qdecode,rows=2,cols=4,slices=32,vec=1,dot=2 --against "
             "variant=qdecode,rows=2,cols=4,slices=32,vec=1",
             db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "# default: --against variant=qdecode,rows=2,cols=4,slices=32,vec=1\n") &&
                  strstr(out, "slices=32,vec=1,dot=2\n"),
              "%s", out);
    free(out);
    snprintf(args, sizeof args,
             "bench --op qgemm --weights q8_0 --db '%s' --shapes 2x64x128 --against "
             "variant=qdecode,rows=2 2>&1",
             db);
    cr_expect_eq(ogtune(args, &out), 2, "%s", out);
    cr_expect(strstr(out, "--against"), "%s", out);
    free(out);
    const char *bad[] = {"int4:g100", "q4_0", "mxfp4:g32", "int4:f32", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args,
                 "select --op qgemm --weights '%s' --db '%s' --shape 1x64x128 2>&1", bad[i], db);
        cr_expect_eq(ogtune(args, &out), 2, "%s: %s", bad[i], out);
        cr_expect(strstr(out, "--weights takes mxfp4, nvfp4, q8_0, q4_k, q6_k"), "%s: %s", bad[i], out);
        free(out);
    }
    /* A shape the layout refuses names K. */
    snprintf(args, sizeof args, "select --op qgemm --db '%s' --shape 1x64x100 2>&1", db);
    cr_expect_eq(ogtune(args, &out), 2, "%s", out);
    cr_expect(strstr(out, "K (100)"), "%s", out);
    free(out);
    /* Export, import; then records edited to an unknown format, and to
     * the GEMM's op, are refused. */
    snprintf(args, sizeof args, "export --db '%s' --out '%s'", db, dump);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "import --db '%s' '%s'", db2, dump);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "imported 4 records"), "%s", out); /* 2 of Q8_0, 2 of Q6_K */
    free(out);
    const char *edits[][2] = {{"s/qgemm:q8_0/qgemm:q8_1/", "is not gemm"},
                              {"s/qgemm:q8_0/gemm/", "low-bit decode kernel"}};
    for (size_t i = 0; i < 2; i++) {
        char edited[512];
        tmp_path(edited, sizeof edited, i ? "edit1.sql" : "edit0.sql");
        snprintf(args, sizeof args, "sed '%s' '%s' > '%s'", edits[i][0], dump, edited);
        cr_assert_eq(system(args), 0);
        snprintf(args, sizeof args, "import --db '%s' '%s' 2>&1", db2, edited);
        cr_expect_neq(ogtune(args, &out), 0, "%s", out);
        cr_expect(strstr(out, edits[i][1]), "%s: %s", edits[i][0], out);
        free(out);
    }
}
