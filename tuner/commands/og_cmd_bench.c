/* ogtune bench: the 64x64 tile alone against the selected kernels, in one run. */
#include <stdlib.h>
#include <string.h>

#include "og_commands.h"

/* Alternates the two kernels for `rounds` rounds so both see the same
 * machine load; each round's time is a median of timestamps. */
static og_status bench_pair(og_gemm *g, og_problem *pr, const og_params *a, const og_params *b,
                            double *us_a, double *us_b)
{
    enum { rounds = 5 };
    double ta[rounds], tb[rounds];
    og_timing_plan plan = OG_TIMING_BENCH;
    og_status st = OG_OK;
    for (int r = 0; r < rounds && st == OG_OK; r++) {
        og_timing t;
        st = og_gemm_time(g, &pr->args, a, &plan, &t);
        ta[r] = t.median_us;
        if (st == OG_OK)
            st = og_gemm_time(g, &pr->args, b, &plan, &t);
        tb[r] = t.median_us;
    }
    *us_a = og_cli_median(ta, rounds);
    *us_b = og_cli_median(tb, rounds);
    return st;
}

/* The products of the reference design's table ("Small grids and few rows"):
 * BERT-base projections and feed-forward layers, and decoder steps. */
static const char table_shapes[] = "128x768x768,128x2304x768,128x3072x768,128x768x3072,"
                                   "1024x768x3072,1x768x768,1x3072x768,1x768x3072,4x3072x768";

int og_cmd_bench(const og_cli *o)
{
    og_shape *shapes;
    size_t ns, nd;
    og_dtype dtypes[3];
    if (o->first_call)
        return og_cmd_bench_first_call(o);
    if (og_cli_dtypes(o, dtypes, &nd) != 0)
        return 2;
    if (og_cli_conv(o))
        return nd == 1 ? og_cmd_bench_conv(o, dtypes[0]) : 2;
    if (og_cli_qgemm(o))
        return nd == 1 ? og_cmd_bench_qgemm(o, dtypes[0]) : 2;
    if (og_dtype_is_int8(dtypes[0])) {
        og_context *ctx = og_cli_context(o);
        int rc = ctx ? og_cmd_bench_int8(o, ctx) : 1;
        og_context_destroy(ctx);
        return rc;
    }
    if (o->precision && strcmp(o->precision, "native") != 0 &&
        strcmp(o->precision, "recovered") != 0) {
        og_cli_fail("ogtune bench: --precision takes native or recovered\n");
        return 2;
    }
    og_params given, against;
    if (og_cli_bench_inputs(o, table_shapes, &shapes, &ns, &given, &against) != 0)
        return 2;
    og_context *ctx = og_cli_context(o);
    if (!ctx) {
        free(shapes);
        return 1;
    }
    int rc = 0;
    /* The operands live where an application's would (og_buffer_create). */
    const char *memory = og_context_memory_placement(ctx);
    if (o->json) {
        printf("{\"device\":");
        og_json_string(stdout, og_context_device_name(ctx));
        printf(",\"memory\":\"%s\",\"results\":[", memory);
    } else {
        printf("# %s, operands in %s memory\n", og_context_device_name(ctx), memory);
        printf("%-5s %-22s %12s %12s %8s  %s\n", "dtype", "shape",
               o->against ? "against" : "64x64 tile", "selected", "ratio",
               "selected kernels (source)");
    }
    /* --precision recovered: float32 recovered from float16 products, its
     * kernel (the selected or given one) against the recovered 64x64 tile. */
    int recovered = o->precision && strcmp(o->precision, "recovered") == 0;
    for (size_t d = 0; d < nd && rc == 0; d++) {
        og_gemm *g;
        og_gemm_desc desc = {.a_type = dtypes[d],
                             .b_type = dtypes[d],
                             .mode = OG_MODE_FAST,
                             .precision = recovered ? OG_PRECISION_RECOVERED : OG_PRECISION_NATIVE};
        if (og_gemm_create_desc(ctx, &desc, &g) != OG_OK) {
            og_cli_fail("ogtune bench: %s\n", og_context_last_error(ctx));
            rc = 1;
            break;
        }
        for (size_t i = 0; i < ns && rc == 0; i++) {
            const og_shape *s = &shapes[i];
            og_problem *pr;
            og_choice c;
            og_params def = og_params_default();
            def.split = 1; /* the tile alone: no split-k, no few-rows kernel */
            if (o->against)
                def = against;
            double us_def = 0, us_sel = 0, metric;
            int accepted = 0;
            char why[256] = "";
            og_status st = og_problem_create(ctx, dtypes[d], o->trans_a, o->trans_b, s->m, s->n,
                                             s->k, s->batch, 99, &pr);
            if (st != OG_OK) {
                rc = 1;
                break;
            }
            st = og_select(ctx, dtypes[d], OG_MODE_FAST, o->trans_a, o->trans_b, s->m, s->n, s->k,
                           s->batch, &c);
            if (st == OG_OK && recovered)
                c.params = og_params_recovered(og_context_limits(ctx), og_context_dialect(ctx),
                                               OG_MODE_FAST);
            if (st == OG_OK && o->params) /* a given kernel instead of the selected one */
                c.params = given;
            if (st == OG_OK) /* the kernels must be right before they are timed */
                st = og_problem_verify(g, pr, &c.params, &accepted, &metric, why, sizeof why);
            if (st == OG_OK && accepted && o->against)
                st = og_problem_verify(g, pr, &def, &accepted, &metric, why, sizeof why);
            if (st == OG_OK && accepted)
                st = bench_pair(g, pr, &def, &c.params, &us_def, &us_sel);
            if (st != OG_OK || !accepted) {
                og_cli_fail("ogtune bench: %s\n", st != OG_OK ? og_context_last_error(ctx) : why);
                rc = 1;
            } else {
                double gd = og_gflops(&pr->args, us_def), gs = og_gflops(&pr->args, us_sel);
                char params[OG_PARAMS_MAX + 64];
                if (o->params)
                    snprintf(params, sizeof params, "%s %s (given)", og_params_template(&c.params),
                             o->params);
                else
                    og_gemm_describe(g, &pr->args, params, sizeof params);
                if (o->json) {
                    printf("%s{\"dtype\":\"%s\",\"shape\":[%lld,%lld,%lld,%lld],"
                           "\"%s_gflops\":%.3f,\"selected_gflops\":%.3f,\"ratio\":%.3f,"
                           "\"source\":\"%s\",\"selected\":",
                           d + i ? "," : "", og_dtype_name(dtypes[d]), (long long)s->m,
                           (long long)s->n, (long long)s->k, (long long)s->batch,
                           o->against ? "against" : "tile", gd, gs, gs / gd,
                           o->params                       ? "given"
                           : c.source == OG_SOURCE_DEFAULT ? "default"
                                                           : "db");
                    og_json_string(stdout, params);
                    putchar('}');
                } else {
                    char shape[64];
                    snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld", (long long)s->m,
                             (long long)s->n, (long long)s->k, (long long)s->batch);
                    printf("%-5s %-22s %7.2f GF/s %7.2f GF/s %7.2fx  %s\n",
                           recovered ? "f32r" : og_dtype_name(dtypes[d]), shape, gd, gs, gs / gd,
                           params);
                }
                fflush(stdout);
            }
            og_problem_destroy(pr);
        }
        og_gemm_destroy(g);
    }
    if (o->json)
        printf("]}\n");
    og_context_destroy(ctx);
    free(shapes);
    return rc;
}
