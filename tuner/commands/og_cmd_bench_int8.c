/* ogtune bench --op int8gemm: Int8Gemm's GOP/s (and the GB/s of B it
 * streams) next to the float32 GEMM's GFLOP/s on the same shapes, in one run
 * (reference design, "8-bit products"); --params times the given Int8Gemm
 * kernel instead of the selected one. */
#include <stdlib.h>
#include <string.h>

#include "og_commands.h"

/* The reference design's decoder steps (M = 1: projection, feed-forward up
 * and down, the Whisper vocabulary), then 512 and 1024 cubed. */
static const char int8_shapes[] =
    "1x768x768,1x3072x768,1x768x3072,1x51865x768,512x512x512,1024x1024x1024";

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The float32 GEMM's selected kernel on the same shape, verified before it
 * is timed; *why says why not when it cannot run here. */
static og_status verify_float(og_context *ctx, og_gemm *g, og_problem *pr, og_params *p, char *why,
                              size_t len)
{
    int accepted = 0;
    double metric;
    og_status st = og_gemm_choose(g, &pr->args, p);
    if (st == OG_OK)
        st = og_problem_verify(g, pr, p, &accepted, &metric, why, len);
    if (st != OG_OK) {
        snprintf(why, len, "%s", og_context_last_error(ctx));
        return st;
    }
    return accepted ? OG_OK : OG_ERROR_COMPILE;
}

/* One shape: Int8Gemm (int8 x int8, zero points away from 0, rows in whole
 * words) with the given kernel or the selected one and float32, alternated
 * for five rounds so both see the same machine load. Returns 0,
 * or 1 when Int8Gemm failed (the float32 GEMM may be out of reach, e.g. a B
 * beyond maxStorageBufferRange, and is then reported as such). */
static int bench_shape(const og_cli *o, og_context *ctx, og_int8gemm *ig, og_gemm *fg,
                       const og_shape *s, const og_params *given, int first)
{
    enum { rounds = 5 };
    og_timing_plan plan = OG_TIMING_BENCH;
    og_int8_problem *ipr = NULL;
    og_problem *fpr = NULL;
    og_params ip;
    int accepted = 0;
    char why[256] = "", fwhy[256] = "";
    double ti[rounds], tf[rounds];
    og_status st = og_int8_problem_create_words(ctx, OG_INT8, OG_INT8, o->trans_a, o->trans_b, s->m,
                                                s->n, s->k, s->batch, 99, &ipr);
    if (st == OG_OK && given)
        ip = *given;
    else if (st == OG_OK)
        st = og_int8gemm_choose(ig, &ipr->args, &ip);
    if (st == OG_OK) /* the selected kernel must be right before it is timed */
        st = og_int8_problem_verify(ig, ipr, &ip, &accepted, why, sizeof why);
    og_params fp;
    og_status fst = og_problem_create(ctx, OG_F32, o->trans_a, o->trans_b, s->m, s->n, s->k,
                                      s->batch, 99, &fpr);
    if (fst != OG_OK)
        snprintf(fwhy, sizeof fwhy, "%s", og_context_last_error(ctx));
    else
        fst = verify_float(ctx, fg, fpr, &fp, fwhy, sizeof fwhy);
    for (int r = 0; r < rounds && st == OG_OK && accepted; r++) {
        og_timing t;
        st = og_int8gemm_time(ig, &ipr->args, &ip, &plan, &t);
        ti[r] = t.median_us;
        if (fst == OG_OK)
            fst = og_gemm_time(fg, &fpr->args, &fp, &plan, &t);
        tf[r] = t.median_us;
        if (fst != OG_OK && !fwhy[0])
            snprintf(fwhy, sizeof fwhy, "%s", og_context_last_error(ctx));
    }
    int rc = 0;
    if (st != OG_OK || !accepted) {
        og_cli_fail("ogtune bench: int8gemm %lldx%lldx%lld: %s\n", (long long)s->m, (long long)s->n,
                    (long long)s->k, st != OG_OK ? og_context_last_error(ctx) : why);
        rc = 1;
    } else {
        qsort(ti, rounds, sizeof ti[0], cmp_double);
        qsort(tf, rounds, sizeof tf[0], cmp_double);
        og_gemm_args shape = {.m = s->m, .n = s->n, .k = s->k, .batch = s->batch};
        double gops = og_gflops(&shape, ti[rounds / 2]);
        /* B is read once per call at least: N x K bytes a batch element. */
        double b_gbs = (double)s->n * (double)s->k * (double)s->batch / (ti[rounds / 2] * 1e3);
        double gflops = fst == OG_OK ? og_gflops(&shape, tf[rounds / 2]) : 0;
        char kernel[OG_PARAMS_MAX + 64], shape_text[64];
        if (given) {
            char text[OG_PARAMS_MAX];
            og_params_format(given, text, sizeof text);
            snprintf(kernel, sizeof kernel, "%s %s (given)", og_params_template(given), text);
        } else {
            og_int8gemm_describe(ig, &ipr->args, kernel, sizeof kernel);
        }
        snprintf(shape_text, sizeof shape_text, "%lldx%lldx%lldx%lld", (long long)s->m,
                 (long long)s->n, (long long)s->k, (long long)s->batch);
        if (o->json) {
            printf("%s{\"shape\":[%lld,%lld,%lld,%lld],\"int8_gops\":%.3f,\"b_gbs\":%.3f,"
                   "\"int8_kernel\":",
                   first ? "" : ",", (long long)s->m, (long long)s->n, (long long)s->k,
                   (long long)s->batch, gops, b_gbs);
            og_json_string(stdout, kernel);
            if (fst == OG_OK) {
                printf(",\"f32_gflops\":%.3f,\"ratio\":%.3f}", gflops, gops / gflops);
            } else {
                printf(",\"f32_gflops\":null,\"f32_error\":");
                og_json_string(stdout, fwhy);
                putchar('}');
            }
        } else if (fst == OG_OK) {
            printf("%-22s %9.2f GOP/s %7.2f GB/s %9.2f GF/s %7.2fx  %s\n", shape_text, gops, b_gbs,
                   gflops, gops / gflops, kernel);
        } else {
            printf("%-22s %9.2f GOP/s %7.2f GB/s %14s %8s  %s\n  float32: %s\n", shape_text, gops,
                   b_gbs, "n/a", "", kernel, fwhy);
        }
        fflush(stdout);
    }
    og_int8_problem_destroy(ipr);
    og_problem_destroy(fpr);
    return rc;
}

int og_cmd_bench_int8(const og_cli *o, og_context *ctx)
{
    og_shape *shapes;
    size_t ns;
    og_params given;
    if (og_cli_bench_inputs(o, int8_shapes, &shapes, &ns, &given, NULL) != 0)
        return 2;
    og_int8gemm *ig = NULL;
    og_gemm *fg = NULL;
    if (og_int8gemm_create(ctx, &ig) != OG_OK ||
        og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &fg) != OG_OK) {
        og_cli_fail("ogtune bench: %s\n", og_context_last_error(ctx));
        og_int8gemm_destroy(ig);
        free(shapes);
        return 1;
    }
    if (o->json) {
        printf("{\"device\":");
        og_json_string(stdout, og_context_device_name(ctx));
        printf(",\"op\":\"int8gemm\",\"memory\":\"%s\",\"results\":[",
               og_context_memory_placement(ctx));
    } else {
        printf("# %s, operands in %s memory\n", og_context_device_name(ctx),
               og_context_memory_placement(ctx));
        printf("%-22s %15s %12s %14s %8s  %s\n", "shape (MxNxKxbatch)", "Int8Gemm", "B read",
               "float32", "ratio", "Int8Gemm kernel (source)");
    }
    int rc = 0;
    for (size_t i = 0; i < ns; i++)
        rc |= bench_shape(o, ctx, ig, fg, &shapes[i], o->params ? &given : NULL, i == 0);
    if (o->json)
        printf("]}\n");
    og_gemm_destroy(fg);
    og_int8gemm_destroy(ig);
    free(shapes);
    return rc;
}
