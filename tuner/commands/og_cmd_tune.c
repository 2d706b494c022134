/* ogtune tune: run the tuner, then show what selection now chooses. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "og_commands.h"

/* A candidate's default time-out: compiling one on a CPU driver takes up to
 * half a minute, so this leaves room for a loaded machine. */
#define OG_DEFAULT_TIMEOUT_S 300.0

/* The quick preset's shapes: square float32 products from 256 to 1024. */
static const char default_shapes[] = "256x256x256,512x512x512,1024x1024x1024";

int og_cmd_tune(const og_cli *o)
{
    og_tune_opts t = {.out = stdout,
                      .json = o->json,
                      .trans_a = o->trans_a,
                      .trans_b = o->trans_b,
                      .budget_s = o->budget,
                      .budget_candidates = o->budget_candidates,
                      .timeout_s = o->timeout > 0 ? o->timeout : OG_DEFAULT_TIMEOUT_S};
    /* The workers are this binary. */
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        og_cli_fail("ogtune tune: cannot find its own binary (/proc/self/exe) to start "
                    "workers\n");
        return 1;
    }
    exe[len] = '\0';
    t.worker_exe = exe;
    char path[1024];
    if (o->db)
        snprintf(path, sizeof path, "%s", o->db);
    else
        og_default_db_path(path, sizeof path);
    t.db_path = path;
    if (o->preset && strcmp(o->preset, "quick") != 0 && strcmp(o->preset, "standard") != 0) {
        og_cli_fail("ogtune tune: --preset takes quick or standard\n");
        return 2;
    }
    t.preset =
        o->preset && strcmp(o->preset, "standard") == 0 ? OG_PRESET_STANDARD : OG_PRESET_QUICK;
    if (o->mode && strcmp(o->mode, "fast") != 0 && strcmp(o->mode, "deterministic") != 0) {
        og_cli_fail("ogtune tune: --mode takes fast or deterministic\n");
        return 2;
    }
    t.mode =
        o->mode && strcmp(o->mode, "deterministic") == 0 ? OG_MODE_DETERMINISTIC : OG_MODE_FAST;
    if (o->strategy && og_strategy_parse(o->strategy, &t.strategy) != 0) {
        og_cli_fail("ogtune tune: --strategy takes exhaustive, random or smart\n");
        return 2;
    }
    if (og_cli_dtypes(o, t.dtypes, &t.n_dtypes) != 0)
        return 2;
    if ((t.recovered = og_cli_recovered(o, "tune", t.dtypes, t.n_dtypes)) < 0)
        return 2;
    if (og_cli_conv(o))
        return t.recovered ? 2 : og_cmd_tune_conv(o, &t);
    if (og_cli_qgemm(o))
        return t.recovered ? 2 : og_cmd_tune_qgemm(o, &t);
    if (og_parse_shapes(o->shapes ? o->shapes : default_shapes, &t.shapes, &t.n_shapes) != 0) {
        og_cli_fail("ogtune tune: --shapes takes MxNxK[xBATCH],... (got %s)\n", o->shapes);
        return 2;
    }
    og_cli selection = *o;
    selection.db = path; /* select from what was just tuned */
    og_context *ctx = og_cli_context(&selection);
    int rc = 1;
    if (ctx) {
        if (!o->json)
            printf("tuning %s into %s\n", og_context_device_name(ctx), path);
        og_status st = og_tune(ctx, &t);
        if (st != OG_OK) {
            og_cli_fail("ogtune tune: %s\n", og_context_last_error(ctx));
        } else {
            og_cli_print_choice_table(ctx, o, t.dtypes, t.n_dtypes, t.recovered, t.shapes,
                                      t.n_shapes);
            if (!o->json)
                printf("database: %s\n", path);
            rc = 0;
        }
    }
    og_context_destroy(ctx);
    free(t.shapes);
    return rc;
}

int og_cmd_worker(const og_cli *o)
{
    (void)o;
    return og_worker_serve();
}
