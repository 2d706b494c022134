/* Candidates planted to fail in each way a real one can: a template that
 * does not compile, gives a wrong result, needs more shared memory than the
 * device has, or never finishes; and a device lost in the middle of a run.
 * Each is recorded as rejected with its class of reason, never selected,
 * and the run goes on (a new worker process, a new device, after a time-out
 * or a lost device). The plants live in a copy of the Int8Gemm skinny
 * template read through OG_TEMPLATE_DIR; its 36 quick candidates at
 * 1x768x768 (18 loading bytes, 9 words from storage and 9 through texels)
 * take seconds on lavapipe. A word candidate is verified on odd leading
 * dimensions too, where it runs the byte-loading kernel of its rows,
 * columns and slices: the plants stay off those (64 and 128 columns). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_ogtune.h"
#include "og_text.h"
#include "og_tmpdir.h"
#include "og_tuner.h"

TestSuite(faults, .init = make_tmpdir, .fini = remove_tmpdir);

/* Seconds a planted hang is given; every honest candidate needs far less. */
#define TIMEOUT "20"

static const struct {
    const char *params;
    const char *reason; /* the class its reason starts with */
} planted[] = {
    {"variant=int8skinny,rows=1,cols=16,slices=32,dot=0", OG_REJECT_COMPILE},
    {"variant=int8skinny,rows=1,cols=32,slices=16,dot=0", OG_REJECT_TIMEOUT},
    {"variant=int8skinny,rows=2,cols=16,slices=32,dot=0", OG_REJECT_LIMIT},
    {"variant=int8skinny,rows=1,cols=16,slices=32,dot=1", OG_REJECT_WRONG},
    {"variant=int8skinny,rows=1,cols=32,slices=16,dot=1", OG_REJECT_WRONG},
    {"variant=int8skinny,rows=1,cols=64,slices=8,dot=1", OG_REJECT_WRONG},
    {"variant=int8skinny,rows=2,cols=32,slices=16,dot=1", OG_REJECT_DEVICE_LOST},
};
enum { N_PLANTED = sizeof planted / sizeof planted[0], N_CANDIDATES = 36 };

/* dir/int8gemm_skinny.tmpl: the built-in template with the plants of the
 * table (the device loss is planted in the worker, by OG_TUNE_FAULT). */
static void write_planted_template(const char *dir)
{
    char *text = read_text(OG_TEMPLATES "/int8gemm_skinny.tmpl");
    /* Over the limit: 64 KiB more workgroup memory, used so it stays. */
    const char *big = "@ if DOT == 0 and ROWS == 2 and COLS == 16 then\n"
                      "SHARED uint planted_big[16384];\n"
                      "@ end\n"
                      "SHARED uint partial[";
    /* Compile error; hang: 65535 rounds of 200 atomic adds on C per
     * invocation, many minutes on a CPU. (Lavapipe ends a shader's loops
     * after 65535 iterations in all, so a hang there is long straight code
     * inside a loop, not an endless loop.) */
    const char *entry = "ENTRY {\n"
                        "@ if DOT == 0 and ROWS == 1 and COLS == 16 then\n"
                        "    this line is not GLSL;\n"
                        "@ elseif DOT == 0 and ROWS == 1 and COLS == 32 then\n"
                        "    for (uint i = 0u; i < 65535u; i++) {\n"
                        "@   for u = 1, 200 do\n"
                        "        atomicAdd(c_data[pc.off_c], 1u);\n"
                        "@   end\n"
                        "    }\n"
                        "@ elseif DOT == 0 and ROWS == 2 and COLS == 16 then\n"
                        "    planted_big[LID.x] = LID.x;\n"
                        "    BARRIER();\n"
                        "    partial[LID.x] = planted_big[16383u - LID.x];\n"
                        "@ end\n";
    /* Wrong result: every sum one too large. */
    const char *sum = "@ if DOT == 1 and ROWS == 1 then\n"
                      "                uint tot = 1u;\n"
                      "@ else\n"
                      "                uint tot = 0u;\n"
                      "@ end\n";
    text = replaced(text, "SHARED uint partial[", big);
    text = replaced(text, "ENTRY {\n", entry);
    text = replaced(text, "                uint tot = 0u;\n", sum);
    char path[512];
    snprintf(path, sizeof path, "%s/int8gemm_skinny.tmpl", dir);
    write_text(path, text);
    free(text);
}

Test(faults, planted_failures_are_rejected_with_their_reason_and_never_selected, .timeout = 600)
{
    char dir[512], db[512], args[2048], line[4096], reason[128];
    tmp_path(dir, sizeof dir, "templates");
    tmp_path(db, sizeof db, "faults.db");
    cr_assert_eq(mkdir(dir, 0700), 0);
    write_planted_template(dir);
    cr_assert_eq(setenv("OG_TEMPLATE_DIR", dir, 1), 0);
    snprintf(args, sizeof args, "device-lost:%s", planted[N_PLANTED - 1].params);
    cr_assert_eq(setenv("OG_TUNE_FAULT", args, 1), 0);

    char *out;
    snprintf(args, sizeof args,
             "tune --json --op int8gemm --shapes 1x768x768 --preset quick --strategy exhaustive "
             "--timeout " TIMEOUT " --db '%s'",
             db);
    cr_assert_eq(ogtune(args, &out), 0, "ogtune %s:\n%s", args, out);
    for (size_t i = 0; i < N_PLANTED; i++) {
        cr_assert_not_null(line_of(out, planted[i].params, line, sizeof line), "%s not measured",
                           planted[i].params);
        snprintf(reason, sizeof reason, "\"reason\":\"%s: ", planted[i].reason);
        cr_expect(strstr(line, "\"accepted\":false") && strstr(line, reason),
                  "%s should be rejected with %s...; got\n%s", planted[i].params, reason, line);
    }
    /* Everything else is measured and accepted, after the hang and after
     * the lost device too (by new workers). */
    cr_expect_eq(count(out, "\"event\":\"candidate\""), (size_t)N_CANDIDATES, "%s", out);
    cr_expect_eq(count(out, "\"accepted\":true"), (size_t)(N_CANDIDATES - N_PLANTED), "%s", out);
    cr_expect(strstr(out, "\"index\":18,") &&
                  strstr(line_of(out, "variant=int8skinny,rows=4,cols=64,slices=8,dot=1", line,
                                 sizeof line),
                         "\"accepted\":true"),
              "the candidates after the lost device are measured");
    free(out);

    /* Selection (with the planted template, whose records these are) takes
     * an accepted candidate, never a planted one. */
    snprintf(args, sizeof args, "select --json --op int8gemm --shape 1x768x768 --db '%s'", db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_assert(strstr(out, "\"source\":\"db\""), "%s", out);
    for (size_t i = 0; i < N_PLANTED; i++)
        cr_expect_null(strstr(out, planted[i].params), "selected planted %s", planted[i].params);
    free(out);

    /* Running again measures nothing, so no hang waits a second time. */
    unsetenv("OG_TUNE_FAULT");
    snprintf(args, sizeof args,
             "tune --json --op int8gemm --shapes 1x768x768 --preset quick --strategy exhaustive "
             "--timeout " TIMEOUT " --db '%s'",
             db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect_eq(count(out, "\"resumed\":true"), (size_t)N_CANDIDATES, "%s", out);
    free(out);
    unsetenv("OG_TEMPLATE_DIR");
}

Test(faults, records_of_a_template_directory_are_stale_without_it, .timeout = 600)
{
    char dir[512], db[512], args[1024];
    tmp_path(dir, sizeof dir, "templates");
    tmp_path(db, sizeof db, "dir.db");
    cr_assert_eq(mkdir(dir, 0700), 0);
    write_planted_template(dir);
    cr_assert_eq(setenv("OG_TEMPLATE_DIR", dir, 1), 0);
    char *out;
    /* Two accepted candidates of the planted template's space. */
    snprintf(args, sizeof args,
             "tune --op int8gemm --shapes 1x768x768 --preset quick --budget 2c --db '%s'", db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "select --json --op int8gemm --shape 1x768x768 --db '%s'", db);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "\"source\":\"db\""), "with the directory: %s", out);
    free(out);
    unsetenv("OG_TEMPLATE_DIR");
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "\"source\":\"default\""), "without it: %s", out);
    free(out);
}
