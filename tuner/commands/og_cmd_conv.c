/* ogtune tune, select and bench with --op conv: convolutions, given as
 * shape strings (og_parse_conv_shapes). */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "og_commands.h"

/* A candidate's default time-out, as og_cmd_tune's. */
#define OG_DEFAULT_TIMEOUT_S 300.0

/* Convolutions of the models issue 27 names, small enough for a CPU
 * driver: a ResNet 3x3 layer, Whisper's first encoder convolution, a first
 * 7x7 layer, a depthwise 3x3. bench prints, for each, the default tile and
 * the selected one, the GEMM of the same M, N, K and batch (random
 * data, its own selected kernel, or with --params the same tile), and for
 * float32 the explicit
 * im2col + GEMM baseline (time_im2col_gemm). */
static const char default_convs[] = "1x64x56x56/64x3x3/p1,"
                                    "1x80x1x3000/384x1x3/p0x0x1x1/nchw/kcrs,"
                                    "1x3x224x224/64x7x7/s2/p3/nchw/kcrs,"
                                    "1x128x28x28/128x3x3/p1/g128";

/* Numbers separated by 'x' into v (at most max), all of them; the count. */
static int numbers(const char *s, int64_t *v, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        if (n == max || *s < '0' || *s > '9')
            return -1;
        unsigned long long x = strtoull(s, &end, 10);
        if (x > UINT32_MAX)
            return -1;
        v[n++] = (int64_t)x;
        s = end;
        if (*s == 'x')
            s++;
        else if (*s)
            return -1;
    }
    return n;
}

/* One convolution: "NxCxHxW/KxRxS" then, in any order, "sH[xW]"
 * (strides), "dH[xW]" (dilations), "pA" (every side), "pHxW" (top and
 * bottom, left and right) or "pTxBxLxR", "gG" (groups), "nhwc" or "nchw"
 * (the layout), "krsc" or "kcrs" (the weights'). */
static int parse_conv(char *text, og_conv_args *a)
{
    memset(a, 0, sizeof *a);
    char *save = NULL;
    int part = 0;
    for (char *t = strtok_r(text, "/", &save); t; t = strtok_r(NULL, "/", &save), part++) {
        int64_t v[4];
        int n;
        if (part == 0) {
            if (numbers(t, v, 4) != 4)
                return -1;
            a->n = v[0], a->c = v[1], a->h = v[2], a->w = v[3];
        } else if (part == 1) {
            if (numbers(t, v, 3) != 3)
                return -1;
            a->k = v[0], a->r = v[1], a->s = v[2];
        } else if (strcmp(t, "nhwc") == 0 || strcmp(t, "nchw") == 0) {
            a->layout = t[1] == 'c' ? OG_CONV_NCHW : OG_CONV_NHWC;
        } else if (strcmp(t, "krsc") == 0 || strcmp(t, "kcrs") == 0) {
            a->weights = t[1] == 'c' ? OG_CONV_KCRS : OG_CONV_KRSC;
        } else if ((n = numbers(t + 1, v, 4)) < 1) {
            return -1;
        } else if (t[0] == 's' && n <= 2) {
            a->stride_h = v[0], a->stride_w = v[n - 1];
        } else if (t[0] == 'd' && n <= 2) {
            a->dilation_h = v[0], a->dilation_w = v[n - 1];
        } else if (t[0] == 'g' && n == 1) {
            a->groups = v[0];
        } else if (t[0] == 'p' && n != 3) {
            a->pad_top = v[0], a->pad_bottom = v[n == 4 ? 1 : 0];
            a->pad_left = v[n == 4 ? 2 : n - 1], a->pad_right = v[n - 1];
        } else {
            return -1;
        }
    }
    return part >= 2 ? 0 : -1;
}

int og_parse_conv_shapes(const char *text, og_conv_args **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char *copy = strdup(text), *save = NULL;
    size_t cap = 1;
    for (const char *c = text; *c; c++)
        cap += *c == ',';
    og_conv_args *list = calloc(cap, sizeof *list);
    int bad = !copy || !list;
    for (char *t = bad ? NULL : strtok_r(copy, ",", &save); t && !bad;
         t = strtok_r(NULL, ",", &save))
        bad = parse_conv(t, &list[(*n)++]) != 0;
    free(copy);
    if (bad || *n == 0) {
        free(list);
        *n = 0;
        return -1;
    }
    *out = list;
    return 0;
}

/* The shape strings of --shapes (or the defaults), or an error message. */
static int conv_shapes(const og_cli *o, const char *cmd, og_conv_args **convs, size_t *n)
{
    if (og_parse_conv_shapes(o->shapes ? o->shapes : default_convs, convs, n) == 0)
        return 0;
    og_cli_fail("ogtune %s: --op conv takes shapes NxCxHxW/KxRxS[/sH[xW]][/dH[xW]]"
                "[/pA|/pHxW|/pTxBxLxR][/gG][/nhwc|/nchw][/krsc|/kcrs], comma-separated (got %s)\n",
                cmd, o->shapes);
    return -1;
}

/* The convolution's text form, as it was given (for output). */
/* og_conv_geometry_check, its message on ctx. */
static og_status geometry_check(og_context *ctx, const og_conv_args *a, og_conv_shape *s)
{
    char err[OG_ERROR_MAX];
    og_status st = og_conv_geometry_check(err, a, s);
    return st == OG_OK ? st : og_fail(ctx, st, "%s", err);
}

static void conv_name(const og_conv_args *a, char *buf, size_t len)
{
    snprintf(buf, len,
             "%lldx%lldx%lldx%lld/%lldx%lldx%lld/s%lldx%lld/d%lldx%lld/p%lldx%lldx%lldx%lld/g%lld/"
             "%s/%s",
             (long long)a->n, (long long)a->c, (long long)a->h, (long long)a->w, (long long)a->k,
             (long long)a->r, (long long)a->s, (long long)(a->stride_h ? a->stride_h : 1),
             (long long)(a->stride_w ? a->stride_w : 1),
             (long long)(a->dilation_h ? a->dilation_h : 1),
             (long long)(a->dilation_w ? a->dilation_w : 1), (long long)a->pad_top,
             (long long)a->pad_bottom, (long long)a->pad_left, (long long)a->pad_right,
             (long long)(a->groups ? a->groups : 1), a->layout == OG_CONV_NCHW ? "nchw" : "nhwc",
             a->weights == OG_CONV_KCRS ? "kcrs" : "krsc");
}

int og_cmd_tune_conv(const og_cli *o, og_tune_opts *t)
{
    og_conv_args *convs;
    size_t n;
    if (conv_shapes(o, "tune", &convs, &n) != 0)
        return 2;
    t->convs = convs;
    t->n_convs = n;
    og_cli selection = *o;
    selection.db = t->db_path;
    og_context *ctx = og_cli_context(&selection);
    int rc = 1;
    if (ctx) {
        if (!o->json)
            printf("tuning %s into %s\n", og_context_device_name(ctx), t->db_path);
        og_status st = og_tune(ctx, t);
        if (st != OG_OK)
            og_cli_fail("ogtune tune: %s\n", og_context_last_error(ctx));
        else
            rc = 0;
    }
    og_context_destroy(ctx);
    free(convs);
    return rc;
}

static const char *source_text(const og_choice *c)
{
    if (c->source == OG_SOURCE_DEFAULT)
        return "default";
    return c->source == OG_SOURCE_DB ? "db" : "db-nearest";
}

int og_cmd_select_conv(const og_cli *o, og_dtype dtype, og_mode mode)
{
    og_conv_args *convs;
    size_t n;
    if (conv_shapes(o, "select", &convs, &n) != 0)
        return 2;
    if (n != 1) {
        og_cli_fail("ogtune select: --shape takes one convolution\n");
        free(convs);
        return 2;
    }
    og_context *ctx = og_cli_context(o);
    int rc = 1;
    og_conv_shape s;
    og_choice c;
    char name[256], op[32], params[OG_PARAMS_MAX];
    if (ctx && geometry_check(ctx, convs, &s) != OG_OK)
        og_cli_fail("ogtune select: %s\n", og_context_last_error(ctx));
    else if (ctx && og_select_conv(ctx, dtype, mode, convs, &s, &c) == OG_OK) {
        og_params p = og_conv_params(&c.params);
        int64_t P, Q;
        og_conv_output_size(convs, &P, &Q);
        og_params_format(&p, params, sizeof params);
        og_conv_op(convs, op, sizeof op);
        conv_name(convs, name, sizeof name);
        int conv_record = strncmp(c.op, OG_OP_CONV_PREFIX, strlen(OG_OP_CONV_PREFIX)) == 0;
        const char *why =
            s.gemm ? "a 1x1, stride 1, unpadded, ungrouped NHWC convolution runs the GEMM itself"
            : og_family_can(&p, OG_FAMILY_DEPTHWISE) && c.source == OG_SOURCE_DEFAULT
                ? "few channels a group: the depthwise kernel, the default tile's bits (no "
                  "record of it for this op; ogtune tune --op conv --shapes S measures it)"
            : mode == OG_MODE_DETERMINISTIC ? "Deterministic mode runs the default tile"
            : c.source == OG_SOURCE_DEFAULT && og_params_matrix(&p)
                ? "no record of this convolution's op nor of its implicit GEMM: the GEMM's "
                  "default cooperative-matrix tile (float16 in Fast mode on a device that lists "
                  "the fragments), with staged loads"
            : c.source == OG_SOURCE_DEFAULT ? "no record of this convolution's op nor of its "
                                              "implicit GEMM: the default tile (ogtune tune --op "
                                              "conv --shapes S measures this one)"
            : conv_record                   ? "a record of this convolution's op"
            : og_params_matrix(&p)
                ? "no record of this convolution's op: the GEMM's record for its implicit GEMM (B "
                  "transposed), its cooperative-matrix tile run with staged loads"
                : "no record of this convolution's op: the GEMM's record for its implicit GEMM (B "
                  "transposed), run with element loads";
        if (o->json) {
            /* The keys of the GEMM's select --json where they mean the same. */
            printf("{\"op\":\"%s\",\"device\":", op);
            og_json_string(stdout, og_context_device_name(ctx));
            printf(",\"conv\":\"%s\",\"dtype\":\"%s\",\"mode\":\"%s\",\"output\":[%lld,%lld],"
                   "\"implicit_gemm\":[%lld,%lld,%lld,%lld],\"gemm\":%s,\"variant\":\"%s\","
                   "\"params\":\"%s\",\"source\":\"%s\",\"record\":\"%s\"",
                   name, og_dtype_name(dtype),
                   mode == OG_MODE_DETERMINISTIC ? "deterministic" : "fast", (long long)P,
                   (long long)Q, (long long)s.m, (long long)s.n, (long long)s.k, (long long)s.batch,
                   s.gemm ? "true" : "false", og_params_template(&p), params, source_text(&c),
                   c.source == OG_SOURCE_DEFAULT ? "none"
                   : conv_record                 ? "conv"
                                                 : "gemm");
            if (c.source != OG_SOURCE_DEFAULT) {
                printf(",\"match\":\"%s\",\"tuned_shape\":[%lld,%lld,%lld,%lld],"
                       "\"tuned_gflops\":%.3f,\"database\":",
                       c.source == OG_SOURCE_DB ? "exact" : "nearest", (long long)c.m,
                       (long long)c.n, (long long)c.k, (long long)c.batch, c.gflops);
                og_json_string(stdout, c.db_path);
                printf(",\"driver\":{\"rule\":\"%s\",\"version\":%u,\"info\":",
                       c.other_driver ? "other" : "same", c.driver_version);
                og_json_string(stdout, c.driver_info);
                printf("}");
            }
            printf(",\"why\":");
            og_json_string(stdout, why);
            printf("}\n");
        } else {
            printf("conv %s (%s): output %lldx%lld, implicit GEMM %lldx%lldx%lld x %lld\n", name,
                   op, (long long)P, (long long)Q, (long long)s.m, (long long)s.n, (long long)s.k,
                   (long long)s.batch);
            printf("%s %s (%s): %s\n", og_params_template(&p), params, source_text(&c), why);
        }
        rc = 0;
    }
    og_context_destroy(ctx);
    free(convs);
    return rc;
}

/* Times the default tile and the selected one in alternation (5 rounds,
 * medians), so both see the same load. */
static og_status time_pair(og_conv *cv, const og_conv_args *a, const og_params *x,
                           const og_params *y, double *us_x, double *us_y)
{
    enum { rounds = 5 };
    double tx[rounds], ty[rounds];
    og_timing_plan plan = OG_TIMING_BENCH;
    og_status st = OG_OK;
    for (int r = 0; r < rounds && st == OG_OK; r++) {
        og_timing t;
        st = og_conv_time(cv, a, x, &plan, &t);
        tx[r] = t.median_us;
        if (st == OG_OK)
            st = og_conv_time(cv, a, y, &plan, &t);
        ty[r] = t.median_us;
    }
    *us_x = og_cli_median(tx, rounds);
    *us_y = og_cli_median(ty, rounds);
    return st;
}

/* A copy of a convolution's input and output bytes (x and y into buffers
 * of their own): what a memory-bound kernel is held to. */
typedef struct copy_job {
    og_buffer *x, *y, *to_x, *to_y;
    uint64_t x_bytes, y_bytes;
} copy_job;

static og_status record_copies(void *user, VkCommandBuffer cmd)
{
    copy_job *j = user;
    og_record_copy(cmd, j->x, j->to_x, j->x_bytes);
    og_record_copy(cmd, j->y, j->to_y, j->y_bytes);
    return OG_OK;
}

/* Median microseconds of the copy of a's x and y (bytes: their sum). */
static og_status time_copy(og_context *ctx, og_dtype dtype, const og_conv_args *a, double *us,
                           uint64_t *bytes)
{
    int64_t P, Q;
    og_conv_output_size(a, &P, &Q);
    copy_job j = {.x = a->x,
                  .y = a->y,
                  .x_bytes = (uint64_t)(a->n * a->c * a->h * a->w) * og_dtype_bytes(dtype),
                  .y_bytes = (uint64_t)(a->n * a->k * P * Q) * 4u};
    *bytes = j.x_bytes + j.y_bytes;
    og_timing_plan plan = OG_TIMING_BENCH;
    og_timing t = {0};
    og_status st = og_buffer_create(ctx, j.x_bytes, &j.to_x);
    if (st == OG_OK)
        st = og_buffer_create(ctx, j.y_bytes, &j.to_y);
    if (st == OG_OK)
        st = og_time_encoder(ctx, record_copies, &j, &plan, &t);
    og_buffer_destroy(j.to_x);
    og_buffer_destroy(j.to_y);
    *us = t.median_us;
    return st;
}

/* The GEMM of the implicit GEMM's shape (B transposed) with the kernel
 * Fast mode selects for it, or with the tile given (NULL: none): median
 * microseconds of 5 rounds. */
static og_status time_gemm(og_context *ctx, og_dtype dtype, const og_conv_shape *s,
                           const og_params *given, double *us)
{
    og_gemm *g = NULL;
    og_problem *pr = NULL;
    og_params p;
    double t[5];
    og_timing_plan plan = OG_TIMING_BENCH;
    og_status st = og_gemm_create(ctx, dtype, OG_MODE_FAST, &g);
    if (st == OG_OK)
        st = og_problem_create(ctx, dtype, 0, 1, s->m, s->n, s->k, s->batch, 5, &pr);
    if (st == OG_OK)
        st = og_gemm_choose(g, &pr->args, &p);
    if (given)
        p = *given;
    for (int r = 0; r < 5 && st == OG_OK; r++) {
        og_timing timing;
        st = og_gemm_time(g, &pr->args, &p, &plan, &timing);
        t[r] = timing.median_us;
    }
    *us = st == OG_OK ? og_cli_median(t, 5) : 0;
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    return st;
}

/* The explicit im2col + GEMM baseline (float32): the im2col kernel into a
 * matrix of its own, then the GEMM of image 0's group 0 on it with the
 * kernel Fast mode selects, counted once per image and group (the products
 * are alike): median microseconds of 5 rounds of each, summed. */
static og_status time_im2col_gemm(og_context *ctx, og_conv *cv, const og_conv_args *a,
                                  const og_conv_shape *s, double *us)
{
    og_buffer *cols = NULL;
    og_gemm *g = NULL;
    og_params p;
    double t_cols[5], t_gemm[5];
    og_timing_plan plan = OG_TIMING_BENCH;
    og_status st = og_buffer_create(ctx, og_conv_im2col_bytes(s), &cols);
    og_gemm_args ga = og_conv_im2col_gemm(a, s, cols, 0, 0);
    if (st == OG_OK)
        st = og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g);
    if (st == OG_OK)
        st = og_gemm_choose(g, &ga, &p);
    for (int r = 0; r < 5 && st == OG_OK; r++) {
        og_timing timing;
        st = og_conv_im2col_time(cv, a, cols, &plan, &timing);
        t_cols[r] = timing.median_us;
        if (st == OG_OK)
            st = og_gemm_time(g, &ga, &p, &plan, &timing);
        t_gemm[r] = timing.median_us;
    }
    *us = st == OG_OK ? og_cli_median(t_cols, 5) + (double)s->batch * og_cli_median(t_gemm, 5) : 0;
    og_gemm_destroy(g);
    og_buffer_destroy(cols);
    return st;
}

int og_cmd_bench_conv(const og_cli *o, og_dtype dtype)
{
    og_conv_args *convs;
    size_t n;
    og_params given;
    char why[256];
    if (o->params && og_params_parse(o->params, &given, why, sizeof why) != 0) {
        og_cli_fail("ogtune bench: --params: %s\n", why);
        return 2;
    }
    if (conv_shapes(o, "bench", &convs, &n) != 0)
        return 2;
    og_context *ctx = og_cli_context(o);
    og_conv *cv = NULL;
    if (!ctx || og_conv_create(ctx, dtype, OG_MODE_FAST, &cv) != OG_OK) {
        if (ctx)
            og_cli_fail("ogtune bench: %s\n", og_context_last_error(ctx));
        og_context_destroy(ctx);
        free(convs);
        return 1;
    }
    char load[64];
    og_cli_load_average(load, sizeof load);
    printf("# %s, %s inputs, load average %s\n", og_context_device_name(ctx), og_dtype_name(dtype),
           load);
    printf("%-52s %12s %12s %7s %12s %7s %12s %7s %10s %7s  %s\n", "convolution", "default",
           "selected", "ratio", "GEMM", "conv/GEMM", "im2col+GEMM", "conv/im2col", "x+y GB/s",
           "of copy", "selected tile (source)");
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        og_conv_problem *pr = NULL;
        og_conv_shape s;
        og_params chosen, def = og_params_default();
        og_choice c;
        double us_def = 0, us_sel = 0, us_gemm = 0, us_cols = 0, us_copy = 0;
        uint64_t bytes = 0;
        char name[256], params[OG_PARAMS_MAX];
        og_status st = og_conv_problem_create(ctx, dtype, &convs[i], 99, &pr);
        if (st == OG_OK)
            st = geometry_check(ctx, &pr->args, &s);
        if (st == OG_OK)
            st = og_select_conv(ctx, dtype, OG_MODE_FAST, &pr->args, &s, &c);
        if (st == OG_OK) {
            /* A given tile instead of the selected one. */
            if (o->params) {
                c.params = given;
                c.source = OG_SOURCE_DEFAULT;
            }
            chosen = og_conv_params(&c.params);
            st = time_pair(cv, &pr->args, &def, &chosen, &us_def, &us_sel);
        }
        /* The GEMM runs a given tile, not a convolution's own kernel. */
        if (st == OG_OK)
            st = time_gemm(ctx, dtype, &s,
                           o->params && !og_family_can(&given, OG_FAMILY_DEPTHWISE) ? &given : NULL,
                           &us_gemm);
        /* Not where the matrix would exceed one binding (the call is refused). */
        if (st == OG_OK && dtype == OG_F32 &&
            og_conv_im2col_bytes(&s) <= og_context_limits(ctx)->max_storage_range)
            st = time_im2col_gemm(ctx, cv, &pr->args, &s, &us_cols);
        if (st == OG_OK)
            st = time_copy(ctx, dtype, &pr->args, &us_copy, &bytes);
        conv_name(&convs[i], name, sizeof name);
        if (st != OG_OK) {
            og_cli_fail("ogtune bench: %s: %s\n", name, og_context_last_error(ctx));
            rc = 1;
        } else {
            og_params_format(&chosen, params, sizeof params);
            /* The GEMM's and the baseline's rates count the same
             * 2*M*N*K*batch operations. */
            char cols[32] = "-", cols_ratio[16] = "-";
            if (us_cols > 0) {
                snprintf(cols, sizeof cols, "%7.2f GF/s", og_conv_gflops(&pr->args, us_cols));
                snprintf(cols_ratio, sizeof cols_ratio, "%6.2fx", us_cols / us_sel);
            }
            /* The input's and output's bytes over the selected kernel's
             * time, and its share of the copy rate of the same bytes. */
            printf("%-52s %7.2f GF/s %7.2f GF/s %6.2fx %7.2f GF/s %6.2fx %12s %7s %10.2f %6.1f%%  "
                   "%s (%s)\n",
                   name, og_conv_gflops(&pr->args, us_def), og_conv_gflops(&pr->args, us_sel),
                   us_sel > 0 ? us_def / us_sel : 0.0, og_conv_gflops(&pr->args, us_gemm),
                   us_sel > 0 ? us_gemm / us_sel : 0.0, cols, cols_ratio,
                   us_sel > 0 ? (double)bytes / us_sel * 1e-3 : 0.0,
                   us_sel > 0 ? 100.0 * us_copy / us_sel : 0.0, params,
                   o->params ? "given" : source_text(&c));
        }
        og_conv_problem_destroy(pr);
    }
    og_cli_load_average(load, sizeof load);
    printf("# load average after: %s\n", load);
    og_conv_destroy(cv);
    og_context_destroy(ctx);
    free(convs);
    return rc;
}
