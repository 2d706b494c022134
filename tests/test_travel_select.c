/* What the selection reads from databases that travelled: stale records
 * (measured with another version of a template) shown, never selected; the
 * pre-tuned databases searched after the user's cache; and select --json
 * naming the driver a record was measured on. */
#include "og_travel_case.h"

TestSuite(travel, .init = make_tmpdir, .fini = remove_tmpdir);

/* ---- stale records ---- */

Test(travel, stale_records_are_shown_and_never_selected, .timeout = 120)
{
    char path[512], args[1200];
    tmp_path(path, sizeof path, "stale.db");
    og_context *ctx = NULL;
    og_context_desc desc = {.tuning_db = path};
    cr_assert_eq(og_context_create(&desc, &ctx), OG_OK, "%s", og_last_error());

    /* Exact shape, accepted, far faster, other parameters: but stale. */
    og_record stale = tile_record(256, 1e6, 1);
    stale.n = stale.k = 256;
    stale.template_hash ^= 1;
    og_params p = og_params_default();
    p.split = 2;
    og_params_format(&p, stale.params, sizeof stale.params);
    og_db *db = open_db(path, 1);
    insert(db, &ctx->info, &stale);
    og_db_close(db);
    cr_expect_eq(og_record_stale(&stale), 1);

    og_choice c;
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 0, 256, 256, 256, 1, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "a stale record was selected");

    /* A current record, slower, is selected over it. */
    og_record current = tile_record(256, 1.0, 1);
    current.n = current.k = 256;
    p.split = 1;
    og_params_format(&p, current.params, sizeof current.params);
    db = open_db(path, 1);
    insert(db, &ctx->info, &current);
    og_db_close(db);
    cr_expect_eq(og_record_stale(&current), 0);
    close_context(ctx);
    cr_assert_eq(og_context_create(&desc, &ctx), OG_OK, "%s", og_last_error());
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 0, 256, 256, 256, 1, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DB);
    cr_expect_eq(c.gflops, 1.0, "selected the record of %g GFLOP/s", c.gflops);
    cr_expect_eq(c.params.split, 1);
    close_context(ctx);

    char *out;
    snprintf(args, sizeof args, "show --json --db '%s'", path);
    cr_assert_eq(ogtune(args, &out), 0);
    const char *first = strstr(out, "\"stale\":true");
    cr_expect_not_null(first, "no stale record in:\n%s", out);
    cr_expect(first == NULL || strstr(first + 1, "\"stale\":true") == NULL,
              "two stale records in:\n%s", out);
    cr_expect_not_null(strstr(out, "\"stale\":false"), "no current record in:\n%s", out);
    cr_expect_not_null(strstr(out, "split=2\",\"median_us\""), "%s", out);
    free(out);
    snprintf(args, sizeof args, "show --db '%s'", path);
    cr_assert_eq(ogtune(args, &out), 0);
    const char *line = strstr(out, "split=2");
    cr_expect(line != NULL && strstr(line, "stale") != NULL &&
                  strstr(line, "stale") < strchr(line, '\n'),
              "the stale record is not marked:\n%s", out);
    line = strstr(out, "split=1");
    cr_expect(line != NULL &&
                  (strstr(line, "stale") == NULL || strstr(line, "stale") > strchr(line, '\n')),
              "the current record is marked stale:\n%s", out);
    free(out);
}

/* ---- pre-tuned databases ---- */

/* An accepted 256 cubed record for this device with split = ranges, in a
 * database at path (created). */
static void plant(const char *path, const og_device_info *dev, int ranges)
{
    og_record r = tile_record(256, 5.0, 1);
    r.n = r.k = 256;
    og_params p = og_params_default();
    p.split = ranges;
    og_params_format(&p, r.params, sizeof r.params);
    og_db *db = open_db(path, 1);
    insert(db, dev, &r);
    og_db_close(db);
}

static int selected_split(og_choice *c)
{
    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(NULL, &ctx), OG_OK, "%s", og_last_error());
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 0, 256, 256, 256, 1, c), OG_OK);
    close_context(ctx);
    return c->source == OG_SOURCE_DB ? c->params.split : -1;
}

/* Without OG_TUNING_DB, the runtime searches the user's cache, then the
 * pre-tuned databases (OG_PRETUNED_DIR standing for the install prefix's
 * share/onegpu); OG_TUNING_DB replaces both. */
Test(travel, pretuned_databases_after_the_user_cache, .timeout = 120)
{
    char cache[512], pretuned[512], user_db[600], shipped[600], other[512];
    tmp_path(cache, sizeof cache, "cache");
    tmp_path(pretuned, sizeof pretuned, "share");
    tmp_path(other, sizeof other, "other.db");
    cr_assert_eq(mkdir(cache, 0700), 0);
    cr_assert_eq(mkdir(pretuned, 0700), 0);
    snprintf(user_db, sizeof user_db, "%s/onegpu", cache);
    cr_assert_eq(mkdir(user_db, 0700), 0);
    snprintf(user_db, sizeof user_db, "%s/onegpu/tuning.db", cache);
    snprintf(shipped, sizeof shipped, "%s/llvmpipe.db", pretuned);
    char *saved_cache = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *saved_db = getenv("OG_TUNING_DB") ? strdup(getenv("OG_TUNING_DB")) : NULL;
    char *saved_dir = getenv("OG_PRETUNED_DIR") ? strdup(getenv("OG_PRETUNED_DIR")) : NULL;
    setenv("XDG_CACHE_HOME", cache, 1);
    setenv("OG_PRETUNED_DIR", pretuned, 1);
    unsetenv("OG_TUNING_DB");

    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(NULL, &ctx), OG_OK, "%s", og_last_error());
    og_device_info dev = ctx->info;
    close_context(ctx);
    og_choice c;
    cr_expect_eq(selected_split(&c), -1, "nothing tuned yet");
    plant(shipped, &dev, 3);
    cr_expect_eq(selected_split(&c), 3, "the pre-tuned database is searched");
    cr_expect_str_eq(c.db_path, shipped);
    plant(user_db, &dev, 5);
    cr_expect_eq(selected_split(&c), 5, "the user's cache comes first");
    plant(other, &dev, 7);
    setenv("OG_TUNING_DB", other, 1);
    cr_expect_eq(selected_split(&c), 7, "OG_TUNING_DB replaces both");

    if (saved_dir)
        setenv("OG_PRETUNED_DIR", saved_dir, 1);
    else
        unsetenv("OG_PRETUNED_DIR");
    if (saved_cache)
        setenv("XDG_CACHE_HOME", saved_cache, 1);
    if (saved_db)
        setenv("OG_TUNING_DB", saved_db, 1);
    else
        unsetenv("OG_TUNING_DB");
    free(saved_cache);
    free(saved_db);
    free(saved_dir);
}

/* ogtune select --json names the driver build a record was measured on and
 * the rule that let it in: "same" for this device's own build, "other" for
 * another build of its driver (here the Mesa upgrade: the same driver
 * version, another driver info); a record of another device is never used,
 * so the choice is the default and has no driver. */
Test(travel, select_json_reports_the_records_driver, .timeout = 120)
{
    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(NULL, &ctx), OG_OK, "%s", og_last_error());
    og_device_info mine = ctx->info;
    close_context(ctx);
    og_device_info upgraded = mine, other_device = mine;
    snprintf(upgraded.driver_info, sizeof upgraded.driver_info, "Mesa 99.0.0 (LLVM 42.0.0)");
    other_device.device_id += 1;

    static const struct {
        const char *name;
        int which; /* 0 mine, 1 upgraded, 2 other_device */
    } cases[] = {{"same.db", 0}, {"upgraded.db", 1}, {"other-device.db", 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const og_device_info *dev = cases[i].which == 0   ? &mine
                                    : cases[i].which == 1 ? &upgraded
                                                          : &other_device;
        char db[512], args[1024], want[1024];
        tmp_path(db, sizeof db, cases[i].name);
        plant(db, dev, 3);
        snprintf(args, sizeof args,
                 "select --shape 256x256x256 --dtype f32 --json --db '%s' 2>/dev/null", db);
        char *out = NULL;
        cr_assert_eq(ogtune(args, &out), 0, "%s", args);
        if (cases[i].which == 2) {
            cr_expect_not_null(strstr(out, "\"source\":\"default\""), "%s:\n%s", cases[i].name,
                               out);
            cr_expect_null(strstr(out, "\"driver\":"), "%s:\n%s", cases[i].name, out);
        } else {
            snprintf(want, sizeof want,
                     "\"driver\":{\"rule\":\"%s\",\"version\":%u,\"info\":\"%s\","
                     "\"pipeline_cache_uuid\":\"%s\"}",
                     cases[i].which == 0 ? "same" : "other", dev->driver_version, dev->driver_info,
                     dev->pipeline_cache_uuid);
            cr_expect_not_null(strstr(out, "\"source\":\"db\""), "%s:\n%s", cases[i].name, out);
            cr_expect_not_null(strstr(out, want), "%s: no %s in\n%s", cases[i].name, want, out);
        }
        free(out);
        /* In text too, once: the selection's warning, not a second note. */
        snprintf(args, sizeof args, "select --shape 256x256x256 --dtype f32 --db '%s' 2>&1", db);
        cr_assert_eq(ogtune(args, &out), 0, "%s", args);
        size_t said = count(out, "another driver build") + count(out, "another build");
        cr_expect_eq(said, cases[i].which == 1 ? 1u : 0u, "%s: said %zu times in\n%s",
                     cases[i].name, said, out);
        free(out);
        /* Another build's records are announced once per context, however many
         * shapes select them (here the tuned shape and its nearest). */
        snprintf(args, sizeof args,
                 "bench --shapes 256x256x256,192x192x192 --dtype f32 --db '%s' 2>&1", db);
        cr_assert_eq(ogtune(args, &out), 0, "%s", args);
        size_t warnings = count(out, "warning: using a tuning record of another driver build");
        cr_expect_eq(warnings, cases[i].which == 1 ? 1u : 0u, "%s: %zu warnings in\n%s",
                     cases[i].name, warnings, out);
        free(out);
    }
}
