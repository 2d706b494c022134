/*
 * Tests of the tuner and of selection: og_tune -> database -> og_select,
 * the fallbacks to the default kernel when the database is unusable, and
 * the ogtune binary. Runs on the default Vulkan device (lavapipe without a
 * GPU), so shapes are small and the quick preset is used.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "og_ogtune.h"
#include "og_records.h"
#include "og_test.h"
#include "og_tmpdir.h"

#include "og_tuner.h"

TestSuite(tuner, .init = make_tmpdir, .fini = remove_tmpdir);

static og_context *open_with_db(const char *db_path)
{
    og_context_desc desc = {.tuning_db = db_path};
    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(&desc, &ctx), OG_OK, "og_context_create: %s", og_last_error());
    return ctx;
}

static og_choice select_f32(og_context *ctx, og_mode mode, int64_t m, int64_t n, int64_t k,
                            int64_t batch)
{
    og_choice c;
    cr_assert_eq(og_select(ctx, OG_F32, mode, 0, 0, m, n, k, batch, &c), OG_OK, "og_select: %s",
                 og_context_last_error(ctx));
    return c;
}

static void format_params(const og_params *p, char *buf)
{
    og_params_format(p, buf, OG_PARAMS_MAX);
}

/* ---- records of a database (og_records.h) ---- */

static int same_shape(const og_record *r, const og_shape *s)
{
    return r->m == s->m && r->n == s->n && r->k == s->k && r->batch == s->batch;
}

/* The accepted Fast-mode record of shape s with the highest GFLOP/s. */
static const og_record *best_record(const records *rs, const og_shape *s)
{
    const og_record *best = NULL;
    for (size_t i = 0; i < rs->n; i++)
        if (rs->r[i].accepted && rs->r[i].key.mode == OG_MODE_FAST && same_shape(&rs->r[i], s) &&
            (!best || rs->r[i].gflops > best->gflops))
            best = &rs->r[i];
    cr_assert_not_null(best, "no accepted record for %lldx%lldx%lldx%lld", (long long)s->m,
                       (long long)s->n, (long long)s->k, (long long)s->batch);
    return best;
}

/* ---- tuner -> database -> selection ---- */

static og_shape tuned_shapes[] = {{64, 64, 64, 1}, {48, 40, 72, 2}};
#define N_TUNED (sizeof tuned_shapes / sizeof tuned_shapes[0])

/* Every candidate of the quick space is stored once per tuned shape, for
 * float32 without transposes, with the current template; the accepted ones
 * have a speed, and the only reason to reject one of the shipped kernels is
 * a limit of the device (a wrong result, a crash or a time-out is a bug). */
static void check_stored(og_context *ctx, const records *rs)
{
    size_t total = 0;
    for (size_t s = 0; s < N_TUNED; s++) {
        og_params *space;
        size_t n;
        cr_assert_eq(
            og_space(&ctx->limits, OG_PRESET_QUICK, OG_F32, 0, 0, &tuned_shapes[s], &space, &n),
            OG_OK);
        total += n;
        for (size_t i = 0; i < n; i++) {
            char params[OG_PARAMS_MAX];
            format_params(&space[i], params);
            size_t found = 0;
            for (size_t j = 0; j < rs->n; j++)
                found +=
                    same_shape(&rs->r[j], &tuned_shapes[s]) && strcmp(rs->r[j].params, params) == 0;
            cr_expect_eq(found, (size_t)1, "candidate %s stored %zu times for shape %zu", params,
                         found, s);
        }
        free(space);
    }
    cr_expect_eq(rs->n, total, "%zu records for %zu candidates of %zu shapes", rs->n, total,
                 N_TUNED);
    uint64_t hash = og_template_hash(OG_TEMPLATE_TILE);
    for (size_t j = 0; j < rs->n; j++) {
        const og_record *r = &rs->r[j];
        cr_expect_str_eq(r->key.op, "gemm");
        cr_expect(r->key.dtype == OG_F32 && r->key.mode == OG_MODE_FAST && !r->key.trans_a &&
                      !r->key.trans_b,
                  "record %zu has another key", j);
        cr_expect_str_eq(r->template_name, OG_TEMPLATE_TILE);
        cr_expect_eq(r->template_hash, hash, "record %zu: another template hash", j);
        if (r->accepted) {
            cr_expect_gt(r->gflops, 0, "%s accepted without a speed", r->params);
            /* Timed in the memory the context's buffers live in, at least
             * OG_TIMING_DEFAULT's 3 calls, with their spread. */
            cr_expect_geq(r->samples, 3, "%s accepted with %d timed calls", r->params, r->samples);
            cr_expect_leq(r->samples, 1000, "%s: %d timed calls", r->params, r->samples);
            cr_expect_geq(r->spread, 0, "%s: spread %g", r->params, r->spread);
            cr_expect_str_eq(r->memory, og_context_memory_placement(ctx), "%s measured in '%s'",
                             r->params, r->memory);
        } else {
            cr_expect(strncmp(r->reason, OG_REJECT_LIMIT ": ", strlen(OG_REJECT_LIMIT ": ")) == 0,
                      "%s rejected: %s", r->params, r->reason);
        }
    }
}

/* Selection at tuned shape s is the exact record with the best GFLOP/s. */
static void expect_exact(og_context *ctx, const records *rs, const og_shape *s, const char *db)
{
    const og_record *best = best_record(rs, s);
    og_choice c = select_f32(ctx, OG_MODE_FAST, s->m, s->n, s->k, s->batch);
    char params[OG_PARAMS_MAX];
    format_params(&c.params, params);
    cr_expect_eq(c.source, OG_SOURCE_DB, "%lldx%lldx%lld: source %d", (long long)s->m,
                 (long long)s->n, (long long)s->k, c.source);
    cr_expect_str_eq(params, best->params, "not the fastest record");
    cr_expect(c.m == s->m && c.n == s->n && c.k == s->k && c.batch == s->batch);
    cr_expect_eq(c.gflops, best->gflops);
    cr_expect_str_eq(c.db_path, db);
}

/* Ten kernels compiled with an empty kernel cache, on a loaded 2-core machine:
 * minutes, not seconds. */
Test(tuner, tune_store_select, .timeout = 600)
{
    char db[512], def_params[OG_PARAMS_MAX], params[OG_PARAMS_MAX];
    tmp_path(db, sizeof db, "tuned.db");
    og_context *ctx = open_with_db(db);
    FILE *out = fopen("/dev/null", "w");
    cr_assert_not_null(out);
    og_tune_opts opts = {
        .db_path = db,
        .dtypes = {OG_F32},
        .n_dtypes = 1,
        .shapes = tuned_shapes,
        .n_shapes = N_TUNED,
        .preset = OG_PRESET_QUICK,
        .budget_s = 0,
        .out = out,
    };
    og_status st = og_tune(ctx, &opts);
    fclose(out);
    cr_assert_eq(st, OG_OK, "og_tune: %s", og_context_last_error(ctx));

    records rs = read_records(db);
    check_stored(ctx, &rs);
    for (size_t s = 0; s < N_TUNED; s++)
        expect_exact(ctx, &rs, &tuned_shapes[s], db);

    /* An untuned shape near 64x64x64 takes that shape's best record. */
    og_choice c = select_f32(ctx, OG_MODE_FAST, 70, 60, 64, 1);
    format_params(&c.params, params);
    cr_expect_eq(c.source, OG_SOURCE_DB_NEAREST, "70x60x64: source %d", c.source);
    cr_expect(c.m == 64 && c.n == 64 && c.k == 64 && c.batch == 1,
              "nearest tuned shape %lldx%lldx%lldx%lld", (long long)c.m, (long long)c.n,
              (long long)c.k, (long long)c.batch);
    cr_expect_str_eq(params, best_record(&rs, &tuned_shapes[0])->params);

    /* Deterministic mode and an untuned dtype take the default. */
    og_params def = og_params_default();
    format_params(&def, def_params);
    c = select_f32(ctx, OG_MODE_DETERMINISTIC, 64, 64, 64, 1);
    format_params(&c.params, params);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "deterministic: source %d", c.source);
    cr_expect_str_eq(params, def_params);
    cr_expect_str_eq(c.db_path, "");
    cr_assert_eq(og_select(ctx, OG_F16, OG_MODE_FAST, 0, 0, 64, 64, 64, 1, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "f16 (untuned): source %d", c.source);

    free(rs.r);
    close_context(ctx);
}

/* Few rows and split-k in Fast mode: a decoder-step shape gets few-rows
 * candidates (template gemm_fewrows) and a small grid over a long k gets
 * split counts; Deterministic tuning records its one kernel under its own
 * key, which selection never reads. */
/* No .timeout here: with a third timed test, Criterion 2.4.1's runner leaks 48
 * bytes under --jobs 2 (LeakSanitizer reports it); CTest's limit applies. */
Test(tuner, fewrows_split_and_deterministic_keys)
{
    char db[512];
    tmp_path(db, sizeof db, "rows.db");
    og_context *ctx = open_with_db(db);
    FILE *out = fopen("/dev/null", "w");
    cr_assert_not_null(out);
    og_shape shapes[] = {{2, 96, 128, 1}, {32, 32, 128, 1}};
    og_tune_opts opts = {.db_path = db,
                         .dtypes = {OG_F32},
                         .n_dtypes = 1,
                         .shapes = shapes,
                         .n_shapes = 2,
                         .preset = OG_PRESET_QUICK,
                         .out = out};
    cr_assert_eq(og_tune(ctx, &opts), OG_OK, "og_tune: %s", og_context_last_error(ctx));
    opts.mode = OG_MODE_DETERMINISTIC;
    cr_assert_eq(og_tune(ctx, &opts), OG_OK, "og_tune: %s", og_context_last_error(ctx));
    fclose(out);

    records rs = read_records(db);
    size_t fewrows = 0, split = 0, deterministic = 0;
    for (size_t i = 0; i < rs.n; i++) {
        const og_record *r = &rs.r[i];
        og_params p;
        char why[256];
        cr_assert_eq(og_params_parse(r->params, &p, why, sizeof why), 0, "%s: %s", r->params, why);
        cr_expect_str_eq(r->template_name, og_params_template(&p));
        cr_expect_eq(r->template_hash, og_template_hash(og_params_template(&p)));
        if (r->key.mode == OG_MODE_DETERMINISTIC) {
            deterministic++;
            continue;
        }
        if (r->m == 2) {
            cr_expect_eq(p.variant, OG_VARIANT_FEWROWS, "2 rows tuned with %s", r->params);
            fewrows += r->accepted;
        } else {
            cr_expect_eq(p.variant, OG_VARIANT_TILE, "32 rows tuned with %s", r->params);
            split += p.split > 1 && r->accepted;
        }
    }
    cr_expect_geq(fewrows, 2, "%zu accepted few-rows candidates", fewrows);
    cr_expect_geq(split, 4, "%zu accepted candidates with split counts", split);
    cr_expect_eq(deterministic, 2, "%zu deterministic records for two shapes", deterministic);

    /* Fast takes the best few-rows record; Deterministic keeps the rule. */
    og_choice c = select_f32(ctx, OG_MODE_FAST, 2, 96, 128, 1);
    char params[OG_PARAMS_MAX];
    format_params(&c.params, params);
    cr_expect_eq(c.source, OG_SOURCE_DB);
    cr_expect_str_eq(params, best_record(&rs, &shapes[0])->params);
    c = select_f32(ctx, OG_MODE_DETERMINISTIC, 2, 96, 128, 1);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT);
    og_params rule = og_params_fewrows(0, 96);
    cr_expect(memcmp(&c.params, &rule, sizeof rule) == 0, "deterministic few rows: %d x %d",
              c.params.cols, c.params.slices);
    free(rs.r);
    close_context(ctx);
}

/* ---- an unusable database never fails a GEMM ---- */

/* With the database at path, selection takes the default (and does not
 * create the file), and a float32 GEMM through og_gemm_run is correct. */
static void expect_fallback(const char *path)
{
    int existed = access(path, F_OK) == 0;
    og_context *ctx = open_with_db(path);
    og_choice c = select_f32(ctx, OG_MODE_FAST, 64, 64, 64, 1);
    char params[OG_PARAMS_MAX], def_params[OG_PARAMS_MAX];
    og_params def = og_params_default();
    format_params(&c.params, params);
    format_params(&def, def_params);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "source %d", c.source);
    cr_expect_str_eq(params, def_params);
    cr_expect_str_eq(c.db_path, "");
    cr_expect_eq(access(path, F_OK) == 0, existed, "selection created or removed %s", path);

    og_gemm *g;
    og_problem *pr;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK, "%s",
                 og_context_last_error(ctx));
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, 64, 64, 64, 1, 42, &pr), OG_OK, "%s",
                 og_context_last_error(ctx));
    int accepted = 0;
    double metric = -1;
    char why[256] = "";
    cr_expect_eq(og_problem_verify(g, pr, NULL, &accepted, &metric, why, sizeof why), OG_OK,
                 "og_gemm_run: %s", og_context_last_error(ctx));
    cr_expect(accepted, "wrong result: %s", why);
    cr_expect_leq(metric, og_dtype_bound(OG_F32));
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    close_context(ctx);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

Test(tuner, fallback_missing_file)
{
    char db[512];
    tmp_path(db, sizeof db, "missing.db");
    expect_fallback(db);
}

Test(tuner, fallback_empty_file)
{
    char db[512];
    tmp_path(db, sizeof db, "empty.db");
    write_file(db, "", 0);
    expect_fallback(db);
}

Test(tuner, fallback_garbage_file)
{
    char db[512];
    unsigned char junk[8192];
    uint64_t seed = 7;
    for (size_t i = 0; i < sizeof junk; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        junk[i] = (unsigned char)(seed >> 56);
    }
    tmp_path(db, sizeof db, "garbage.db");
    write_file(db, junk, sizeof junk);
    expect_fallback(db);
}

/* A record for float32 64x64x64 with the quick space's second candidate
 * (not the default, so its selection is visible). Returns its params. */
static void insert_record(og_context *ctx, const char *path, char *params)
{
    og_params *space;
    size_t n;
    og_shape shape = {64, 64, 64, 1};
    cr_assert_eq(og_space(&ctx->limits, OG_PRESET_QUICK, OG_F32, 0, 0, &shape, &space, &n), OG_OK);
    cr_assert_gt(n, 1);
    og_record r;
    memset(&r, 0, sizeof r);
    r.key = (og_record_key){"gemm", OG_F32, OG_MODE_FAST, 0, 0};
    r.m = r.n = r.k = 64;
    r.batch = 1;
    snprintf(r.template_name, sizeof r.template_name, "%s", OG_TEMPLATE_TILE);
    r.template_hash = og_template_hash(OG_TEMPLATE_TILE);
    format_params(&space[1], r.params);
    free(space);
    r.median_us = 100;
    r.gflops = 5.24;
    r.samples = 3;
    r.accepted = 1;
    og_db *db;
    int64_t device;
    char err[1024] = "";
    cr_assert_eq(og_db_open(path, 1, &db, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(og_db_device(db, &ctx->info, &device, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(og_db_insert(db, device, &r, err, sizeof err), OG_OK, "%s", err);
    og_db_close(db);
    snprintf(params, OG_PARAMS_MAX, "%s", r.params);
}

static void set_user_version(const char *path, int version)
{
    sqlite3 *db;
    char sql[64], *msg = NULL;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", version);
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    cr_assert_eq(rc, SQLITE_OK, "%s", msg ? msg : "");
    sqlite3_close(db);
}

Test(tuner, fallback_newer_schema)
{
    char db[512], params[OG_PARAMS_MAX], chosen[OG_PARAMS_MAX];
    tmp_path(db, sizeof db, "newer.db");

    /* At the current version the record is selected... */
    og_context *ctx = open_with_db(db);
    insert_record(ctx, db, params);
    og_choice c = select_f32(ctx, OG_MODE_FAST, 64, 64, 64, 1);
    format_params(&c.params, chosen);
    cr_expect_eq(c.source, OG_SOURCE_DB, "source %d at the current version", c.source);
    cr_expect_str_eq(chosen, params);
    close_context(ctx);

    /* ...and a newer version is refused, by the database layer and selection. */
    set_user_version(db, OG_DB_SCHEMA_VERSION + 1);
    og_db *handle = NULL;
    char err[1024] = "";
    cr_expect_eq(og_db_open(db, 0, &handle, err, sizeof err), OG_ERROR_DATABASE,
                 "a newer schema opened");
    if (handle)
        og_db_close(handle);
    expect_fallback(db);
}

/* ---- the ogtune binary ---- */

Test(tuner, ogtune_tune_then_select, .timeout = 180)
{
    char db[512], missing[512], args[1200];
    char *out;
    tmp_path(db, sizeof db, "cli.db");
    tmp_path(missing, sizeof missing, "missing.db");

    /* A one-second budget: the default (always measured) and little more, so
     * the test stays short under the sanitizers; the library test above
     * covers the whole quick space. */
    snprintf(args, sizeof args,
             "tune --shapes 64x64x64 --dtype f32 --preset quick --budget 1 --db '%s'", db);
    cr_assert_eq(ogtune(args, &out), 0, "ogtune tune failed:\n%s", out);
    free(out);

    snprintf(args, sizeof args, "select --shape 64x64x64 --dtype f32 --json --db '%s'", db);
    cr_expect_eq(ogtune(args, &out), 0);
    cr_expect_not_null(strstr(out, "\"source\":\"db\""), "select on the tuned database:\n%s", out);
    cr_expect_not_null(strstr(out, "\"match\":\"exact\""), "select on the tuned database:\n%s",
                       out);
    free(out);

    snprintf(args, sizeof args, "select --shape 64x64x64 --dtype f32 --json --db '%s'", missing);
    cr_expect_eq(ogtune(args, &out), 0);
    cr_expect_not_null(strstr(out, "\"source\":\"default\""), "select without a database:\n%s",
                       out);
    free(out);
}

Test(tuner, ogtune_gen_emits)
{
    static const struct {
        const char *emit, *marker;
    } cases[] = {
        {"glsl", "#version"},
        {"hlsl", "[numthreads("},
        {"spirv", "OpEntryPoint GLCompute"},
        {"msl", "kernel void"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[64], *out;
        snprintf(args, sizeof args, "gen --emit %s", cases[i].emit);
        cr_expect_eq(ogtune(args, &out), 0, "ogtune %s failed", args);
        cr_expect_not_null(strstr(out, cases[i].marker), "ogtune %s: no '%s' in:\n%.2000s", args,
                           cases[i].marker, out);
        free(out);
    }
}

Test(tuner, ogtune_gen_bogus_emit)
{
    char *out;
    cr_expect_neq(ogtune("gen --emit bogus 2>/dev/null", &out), 0, "--emit bogus succeeded");
    cr_expect_str_eq(out, "", "--emit bogus printed:\n%s", out);
    free(out);
}

Test(tuner, ogtune_devices_json)
{
    char *out;
    cr_expect_eq(ogtune("devices --json", &out), 0);
    cr_expect_eq(out[0], '[', "not a JSON array:\n%s", out);
    cr_expect_not_null(strstr(out, "\"max_invocations\":"), "no limits in:\n%s", out);
    /* The memory choice, and a type used for the operands. */
    cr_expect_not_null(strstr(out, "\"memory_placement\":\"device-local"), "no memory in:\n%s",
                       out);
    cr_expect_not_null(strstr(out, "\"use\":\"operands and scratch"), "no operand type in:\n%s",
                       out);
    cr_expect_not_null(strstr(out, "\"heaps\":[{\"size\":"), "no heaps in:\n%s", out);
    free(out);
}
