/* What the commands share: the database path, the context, the dtype list,
 * the benches' inputs, --precision and the selection of a dtype
 * (og_commands.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_commands.h"

void og_cli_db_path(const og_cli *o, char *buf, size_t len)
{
    if (o->db)
        snprintf(buf, len, "%s", o->db);
    else
        og_default_db_path(buf, len);
}

og_context *og_cli_context(const og_cli *o)
{
    og_context_desc desc = {.tuning_db = o->db};
    og_context *ctx;
    if (og_context_create(&desc, &ctx) != OG_OK) {
        og_cli_fail("ogtune: %s\n", og_last_error());
        return NULL;
    }
    return ctx;
}

int og_cli_bench_inputs(const og_cli *o, const char *default_shapes, og_shape **shapes, size_t *ns,
                        og_params *given, og_params *against)
{
    if (og_parse_shapes(o->shapes ? o->shapes : default_shapes, shapes, ns) != 0) {
        og_cli_fail("ogtune bench: --shapes takes MxNxK[xBATCH],... (got %s)\n", o->shapes);
        return -1;
    }
    char why[256];
    if (o->params && og_params_parse(o->params, given, why, sizeof why) != 0) {
        og_cli_fail("ogtune bench: %s\n", why);
        free(*shapes);
        return -1;
    }
    if (against && o->against && og_params_parse(o->against, against, why, sizeof why) != 0) {
        og_cli_fail("ogtune bench: --against: %s\n", why);
        free(*shapes);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double og_cli_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

void og_cli_load_average(char *buf, size_t len)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double a = -1, b = -1, c = -1;
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &a, &b, &c) != 3)
            a = b = c = -1;
        fclose(f);
    }
    snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
}

int og_cli_qgemm(const og_cli *o)
{
    return o->op && strcmp(o->op, "qgemm") == 0;
}

int og_cli_conv(const og_cli *o)
{
    return o->op && strcmp(o->op, "conv") == 0;
}

int og_cli_dtypes(const og_cli *o, og_dtype *out, size_t *n)
{
    *n = 0;
    if (o->op && strcmp(o->op, "gemm") != 0 && strcmp(o->op, "int8gemm") != 0 && !og_cli_conv(o) &&
        !og_cli_qgemm(o)) {
        og_cli_fail("ogtune: --op takes gemm, int8gemm, conv or qgemm (got %s)\n", o->op);
        return -1;
    }
    if (o->op && strcmp(o->op, "int8gemm") == 0) {
        /* Int8Gemm is tuned and selected with int8 operands; one record serves
         * every signedness (og_select_int8). */
        if (o->dtypes) {
            og_cli_fail("ogtune: --dtype is for --op gemm; int8gemm takes 8-bit operands\n");
            return -1;
        }
        out[(*n)++] = OG_INT8;
        return 0;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%s", o->dtypes ? o->dtypes : "f32");
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == 3 || og_dtype_parse(t, &out[*n]) != 0) {
            og_cli_fail("ogtune: --dtype takes f32, f16 and bf16, comma-separated (got %s)\n", t);
            return -1;
        }
        (*n)++;
    }
    return *n ? 0 : -1;
}

int og_cli_recovered(const og_cli *o, const char *cmd, const og_dtype *dtypes, size_t nd)
{
    if (!o->precision || strcmp(o->precision, "native") == 0)
        return 0;
    if (strcmp(o->precision, "recovered") != 0) {
        og_cli_fail("ogtune %s: --precision takes native or recovered (got %s)\n", cmd,
                    o->precision);
        return -1;
    }
    if (nd != 1 || dtypes[0] != OG_F32) {
        og_cli_fail("ogtune %s: --precision recovered takes float32 inputs alone (--dtype f32, "
                    "--op gemm)\n",
                    cmd);
        return -1;
    }
    return 1;
}

og_status og_cli_select(og_context *ctx, og_dtype t, og_mode mode, int trans_a, int trans_b,
                        int recovered, const og_shape *s, og_choice *out)
{
    if (recovered)
        return og_select_recovered(ctx, mode, trans_a, trans_b, s->m, s->n, s->k, s->batch, out);
    if (og_dtype_is_int8(t))
        return og_select_int8(ctx, trans_a, trans_b, s->m, s->n, s->k, s->batch, out);
    return og_select(ctx, t, mode, trans_a, trans_b, s->m, s->n, s->k, s->batch, out);
}
