/* What goes wrong inside a tuner worker reaches the tuner and the tests:
 * the validation layer's errors (counted, the candidate rejected, ogtune's
 * exit status OG_EXIT_VALIDATION); a crash (a rejection); a sanitizer's
 * report, mid-candidate or at the worker's normal end (an error of the run,
 * in the sanitizer build, OG_SANITIZE). Each fault is planted in the
 * worker's measurement of one candidate (OG_TUNE_FAULT=KIND:PARAMS) of a
 * short run: the first three candidates of the quick space at 64 cubed. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_ogtune.h"
#include "og_test.h"
#include "og_text.h"
#include "og_tmpdir.h"

TestSuite(workers, .init = make_tmpdir, .fini = remove_tmpdir);

enum { N_CANDIDATES = 3 };

/* The second candidate of the run: not the default, which comes first. */
static void planted_params(char *out)
{
    og_context *ctx = open_context();
    og_params *space;
    size_t n;
    og_shape shape = {64, 64, 64, 1};
    cr_assert_eq(og_space(&ctx->limits, OG_PRESET_QUICK, OG_F32, 0, 0, &shape, &space, &n), OG_OK);
    cr_assert_geq(n, (size_t)N_CANDIDATES);
    og_params_format(&space[1], out, OG_PARAMS_MAX);
    free(space);
    close_context(ctx);
}

/* `ogtune tune --json` of the run into a new database name, with kind
 * planted at params (NULL: nothing); standard error in *out too. Returns
 * the exit status. */
static int tune(const char *name, const char *kind, const char *params, char **out)
{
    char db[512], fault[600], args[1200];
    tmp_path(db, sizeof db, name);
    if (kind) {
        snprintf(fault, sizeof fault, "%s:%s", kind, params);
        cr_assert_eq(setenv("OG_TUNE_FAULT", fault, 1), 0);
    } else {
        cr_assert_eq(unsetenv("OG_TUNE_FAULT"), 0);
    }
    snprintf(args, sizeof args,
             "tune --json --shapes 64x64x64 --dtype f32 --preset quick --strategy exhaustive "
             "--budget %dc --db '%s' 2>&1",
             N_CANDIDATES, db);
    return ogtune_status(args, out);
}

/* Under the layer, a run without faults counts no error in the tuner or its
 * workers; a rule broken in the worker while one candidate is measured is
 * counted there, rejects that candidate (the others are accepted), and
 * makes the command's exit status OG_EXIT_VALIDATION. */
Test(workers, validation_errors_reject_the_candidate_and_fail_the_command, .timeout = 300)
{
    char params[OG_PARAMS_MAX], line[4096], *out;
    planted_params(params);
    cr_assert_eq(setenv("OG_VALIDATION", "1", 1), 0);

    cr_expect_eq(tune("clean.db", NULL, NULL, &out), 0, "%s", out);
    cr_expect_eq(count(out, "\"accepted\":true"), (size_t)N_CANDIDATES, "%s", out);
    cr_expect_eq(count(out, "validation error"), 0, "%s", out);
    free(out);

    cr_expect_eq(tune("planted.db", "validation", params, &out), OG_EXIT_VALIDATION, "%s", out);
    cr_assert_not_null(line_of(out, params, line, sizeof line), "%s not measured:\n%s", params,
                       out);
    cr_expect(strstr(line, "\"accepted\":false") &&
                  strstr(line, "\"reason\":\"" OG_REJECT_VALIDATION ": the validation layer "
                               "reported "),
              "%s", line);
    cr_expect_eq(count(out, "\"accepted\":true"), (size_t)N_CANDIDATES - 1, "%s", out);
    /* The layer's message, from the worker's standard error. */
    cr_expect_not_null(strstr(out, "VUID-VkBufferCreateInfo-size-00912"), "%s", out);
    cr_expect_not_null(strstr(out, "ogtune: the Vulkan validation layer reported "), "%s", out);
    free(out);
}

/* A crash the test plants stays a rejection, in every build (the worker
 * kills itself with SIGKILL, which no sanitizer intercepts), and the run
 * goes on in a new worker. */
Test(workers, a_crash_is_a_rejection, .timeout = 300)
{
    char params[OG_PARAMS_MAX], line[4096], *out;
    planted_params(params);
    cr_expect_eq(tune("crash.db", "crash", params, &out), 0, "%s", out);
    cr_assert_not_null(line_of(out, params, line, sizeof line), "%s not measured:\n%s", params,
                       out);
    cr_expect(strstr(line, "\"accepted\":false") &&
                  strstr(line, "\"reason\":\"" OG_REJECT_CRASH
                               ": the worker process died from signal 9 "),
              "%s", line);
    cr_expect_eq(count(out, "\"accepted\":true"), (size_t)N_CANDIDATES - 1, "%s", out);
    free(out);
}

/* A block the worker never frees: LeakSanitizer reports it when the worker
 * exits at the end of the run, which it can only do because the worker
 * leaves on its own; the report fails the run (every candidate was
 * measured and stored first). Without the sanitizers nothing sees it. */
Test(workers, a_leak_in_a_worker_fails_the_run_under_the_sanitizers, .timeout = 300)
{
    char params[OG_PARAMS_MAX], *out;
    planted_params(params);
    int rc = tune("leak.db", "leak", params, &out);
    cr_expect_eq(count(out, "\"accepted\":true"), (size_t)N_CANDIDATES, "%s", out);
#ifdef OG_SANITIZE
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect_not_null(strstr(out, "LeakSanitizer"), "%s", out);
    cr_expect_not_null(strstr(out, "ogtune tune: tune: a sanitizer reported an error in the "
                                   "worker as it ended (exit status 86;"),
                       "%s", out);
#else
    cr_expect_eq(rc, 0, "%s", out);
#endif
    free(out);
}

/* AddressSanitizer's report while a candidate is measured ends the worker:
 * the run fails naming the candidate, which is not recorded as a crash.
 * Without the sanitizers the read is a legal one and the run goes on. */
Test(workers, a_memory_error_in_a_worker_fails_the_run_under_the_sanitizers, .timeout = 300)
{
    char params[OG_PARAMS_MAX], *out;
    planted_params(params);
    int rc = tune("poison.db", "poison", params, &out);
#ifdef OG_SANITIZE
    char want[OG_PARAMS_MAX + 100];
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect_not_null(strstr(out, "AddressSanitizer: use-after-poison"), "%s", out);
    snprintf(want, sizeof want, "a sanitizer reported an error in the worker measuring %s (exit",
             params);
    cr_expect_not_null(strstr(out, want), "%s", out);
    cr_expect_eq(count(out, "\"event\":\"candidate\""), 1, "only the default measured:\n%s", out);
    cr_expect_eq(count(out, OG_REJECT_CRASH), 0, "%s", out);
#else
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect_eq(count(out, "\"accepted\":true"), (size_t)N_CANDIDATES, "%s", out);
#endif
    free(out);
}
