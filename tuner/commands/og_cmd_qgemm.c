/* ogtune tune, select and bench with --op qgemm: low-bit weight products
 * (og_qgemm_*) of the format --weights names (og_qweights_format_parse).
 * bench times the default decode kernel and the selected one, the copy of
 * the weights' bytes and the float16 GEMM of the same shape in one run,
 * with the load average; with --parts also the selected decode kernel's
 * parts (templates/qgemm_decode.tmpl's PART): where its time goes. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "og_commands.h"

/* Decoding a language model (issue 28): a 4096 x 4096 projection and a
 * 14336 x 4096 feed-forward layer for one and eight rows, and a 512-row
 * prefill. */
static const char default_shapes[] = "1x4096x4096,1x14336x4096,8x4096x4096,512x4096x4096";
/* What tune measures by default: the decode steps (one and eight rows). */
static const char default_tune_shapes[] = "1x4096x4096,8x4096x4096";

int og_cli_weights(const og_cli *o, const char *cmd, og_qweights_format *f)
{
    if (og_qweights_format_parse(o->weights ? o->weights : "mxfp4", f) == 0)
        return 0;
    og_cli_fail("ogtune %s: --weights takes mxfp4, nvfp4, q8_0, q4_k, q6_k or "
                "int4[:g32|:g64|:g128|:gc][:f16|:bf16][:none|:uint4|:float] (got %s)\n",
                cmd, o->weights);
    return -1;
}

/* One line (or one JSON object) saying what selection chooses for a shape. */
static void print_choice(og_context *ctx, const og_cli *o, og_dtype dtype,
                         const og_qweights_format *f, og_mode mode, const og_shape *s,
                         const og_choice *c)
{
    char params[OG_PARAMS_MAX], op[32];
    og_params_format(&c->params, params, sizeof params);
    og_qgemm_op(f, op, sizeof op);
    const char *source = c->source == OG_SOURCE_DEFAULT ? "default"
                         : c->source == OG_SOURCE_DB    ? "db"
                                                        : "db-nearest";
    const char *why = mode == OG_MODE_DETERMINISTIC ? "Deterministic mode runs the default kernel"
                      : c->source == OG_SOURCE_DEFAULT
                          ? "no record of this format and input type: the default for M "
                            "(ogtune tune --op qgemm --weights F measures this one)"
                      : c->source == OG_SOURCE_DB ? "the fastest record of this shape"
                                                  : "the fastest record of the nearest tuned shape";
    if (!o->json) {
        printf("%s, A %s, %" PRId64 "x%" PRId64 "x%" PRId64 " x %" PRId64 ": %s %s (%s): %s\n", op,
               og_dtype_name(dtype), s->m, s->n, s->k, s->batch, og_params_template(&c->params),
               params, source, why);
        return;
    }
    printf("{\"op\":\"%s\",\"device\":", op);
    og_json_string(stdout, og_context_device_name(ctx));
    printf(",\"dtype\":\"%s\",\"mode\":\"%s\",\"shape\":[%" PRId64 ",%" PRId64 ",%" PRId64
           ",%" PRId64 "],\"variant\":\"%s\",\"params\":\"%s\",\"source\":\"%s\"",
           og_dtype_name(dtype), mode == OG_MODE_DETERMINISTIC ? "deterministic" : "fast", s->m,
           s->n, s->k, s->batch, og_params_template(&c->params), params, source);
    if (c->source != OG_SOURCE_DEFAULT) {
        printf(",\"match\":\"%s\",\"tuned_shape\":[%lld,%lld,%lld,%lld],\"tuned_gflops\":%.3f,"
               "\"database\":",
               c->source == OG_SOURCE_DB ? "exact" : "nearest", (long long)c->m, (long long)c->n,
               (long long)c->k, (long long)c->batch, c->gflops);
        og_json_string(stdout, c->db_path);
    }
    printf(",\"why\":");
    og_json_string(stdout, why);
    printf("}\n");
}

int og_cmd_tune_qgemm(const og_cli *o, og_tune_opts *t)
{
    og_qweights_format f;
    if (og_cli_weights(o, "tune", &f) != 0)
        return 2;
    if (og_parse_shapes(o->shapes ? o->shapes : default_tune_shapes, &t->shapes, &t->n_shapes) !=
        0) {
        og_cli_fail("ogtune tune: --shapes takes MxNxK[xBATCH],... (got %s)\n", o->shapes);
        return 2;
    }
    t->qformat = &f;
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
        rc = st == OG_OK ? 0 : 1;
        /* What selection now chooses, from the database just written. */
        for (size_t d = 0; d < t->n_dtypes && rc == 0; d++)
            for (size_t i = 0; i < t->n_shapes && rc == 0; i++) {
                og_shape *s = &t->shapes[i];
                og_choice c;
                if (og_select_qgemm(ctx, t->dtypes[d], &f, t->mode, s->m, s->n, s->k, s->batch,
                                    &c) != OG_OK)
                    rc = 1;
                else
                    print_choice(ctx, o, t->dtypes[d], &f, t->mode, s, &c);
            }
        if (rc == 0 && !o->json)
            printf("database: %s\n", t->db_path);
    }
    og_context_destroy(ctx);
    free(t->shapes);
    t->shapes = NULL;
    return rc;
}

int og_cmd_select_qgemm(const og_cli *o, og_dtype dtype, og_mode mode)
{
    og_qweights_format f;
    og_shape *shapes = NULL;
    size_t ns = 0;
    if (og_cli_weights(o, "select", &f) != 0)
        return 2;
    if (!o->shapes || og_parse_shapes(o->shapes, &shapes, &ns) != 0 || ns != 1) {
        og_cli_fail("ogtune select: --shape takes one MxNxK[xBATCH] (got %s)\n",
                    o->shapes ? o->shapes : "none");
        free(shapes);
        return 2;
    }
    og_qweights_layout lay;
    char why[256];
    if (og_qweights_layout_of(&f, shapes[0].n, shapes[0].k, &lay, why, sizeof why) != 0) {
        og_cli_fail("ogtune select: %s\n", why);
        free(shapes);
        return 2;
    }
    og_context *ctx = og_cli_context(o);
    og_choice c;
    int rc = 1;
    if (ctx && og_select_qgemm(ctx, dtype, &f, mode, shapes[0].m, shapes[0].n, shapes[0].k,
                               shapes[0].batch, &c) == OG_OK) {
        print_choice(ctx, o, dtype, &f, mode, &shapes[0], &c);
        rc = 0;
    }
    og_context_destroy(ctx);
    free(shapes);
    return rc;
}

/* The float16 GEMM of a benchmark shape (B N x K, transposed) and a copy
 * destination for the weights' bytes. */
typedef struct bench_bufs {
    og_buffer *copy, *ha, *hb, *hc;
    og_buffer *w;
    uint64_t w_bytes;
} bench_bufs;

static void bufs_free(bench_bufs *b)
{
    og_buffer *all[] = {b->copy, b->ha, b->hb, b->hc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        og_buffer_destroy(all[i]);
}

/* A buffer of n random float16 values in [-1, 1). */
static og_status random_halves(og_context *ctx, size_t n, uint64_t seed, og_buffer **out)
{
    uint16_t *host = malloc(n * 2 + 4);
    if (!host)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "bench: out of memory");
    og_fill_random(OG_F16, host, n, &seed);
    og_status st = og_buffer_create(ctx, n * 2, out);
    if (st == OG_OK)
        st = og_buffer_write(*out, 0, host, n * 2);
    free(host);
    return st;
}

static og_status bufs_make(og_context *ctx, const og_qgemm_problem *pr, bench_bufs *b)
{
    memset(b, 0, sizeof *b);
    const og_qgemm_args *a = &pr->args;
    b->w = a->w;
    b->w_bytes = pr->image_bytes * (uint64_t)a->batch;
    og_status st = og_buffer_create(ctx, b->w_bytes, &b->copy);
    if (st == OG_OK)
        st = random_halves(ctx, (size_t)(a->m * a->k * a->batch), 3, &b->ha);
    if (st == OG_OK)
        st = random_halves(ctx, (size_t)(a->n * a->k * a->batch), 4, &b->hb);
    if (st == OG_OK)
        st = og_buffer_create(ctx, (uint64_t)(a->m * a->n * a->batch) * 4, &b->hc);
    return st;
}

static og_status record_copy(void *user, VkCommandBuffer cmd)
{
    bench_bufs *b = user;
    og_record_copy(cmd, b->w, b->copy, b->w_bytes);
    return OG_OK;
}

/* The timings of one benchmark line, in the order they are measured. */
enum { T_DEFAULT, T_SELECTED, T_COPY, T_GEMM, T_LOAD, T_CONVERT, T_COUNT };

/* Median microseconds of the default decode kernel (or the --against
 * baseline), the selected (or given) one, the copy of the weights and the
 * float16 GEMM, and with parts the selected kernel's load and convert
 * parts, timed in alternation (5 rounds) so all see one load. */
static og_status time_all(og_context *ctx, og_qgemm *q, const og_qgemm_args *qa,
                          const og_params *against, const og_params *sel, og_gemm *g,
                          const og_gemm_args *ga, bench_bufs *b, int parts, double us[T_COUNT])
{
    enum { rounds = 5 };
    double t[T_COUNT][rounds];
    int n = parts ? T_COUNT : T_LOAD;
    og_timing_plan plan = OG_TIMING_BENCH;
    og_params def = against ? *against : og_qgemm_default(qa->m), gp;
    og_status st = og_gemm_choose(g, ga, &gp);
    for (int r = 0; r < rounds && st == OG_OK; r++) {
        og_timing x[T_COUNT] = {{0}};
        st = og_qgemm_time(q, qa, &def, &plan, &x[T_DEFAULT]);
        if (st == OG_OK)
            st = og_qgemm_time(q, qa, sel, &plan, &x[T_SELECTED]);
        if (st == OG_OK)
            st = og_time_encoder(ctx, record_copy, b, &plan, &x[T_COPY]);
        if (st == OG_OK)
            st = og_gemm_time(g, ga, &gp, &plan, &x[T_GEMM]);
        if (st == OG_OK && parts)
            st = og_qgemm_time_part(q, qa, sel, OG_PART_LOAD, &plan, &x[T_LOAD]);
        if (st == OG_OK && parts)
            st = og_qgemm_time_part(q, qa, sel, OG_PART_CONVERT, &plan, &x[T_CONVERT]);
        for (int i = 0; i < n; i++)
            t[i][r] = x[i].median_us;
    }
    for (int i = 0; i < n; i++)
        us[i] = st == OG_OK ? og_cli_median(t[i], rounds) : 0;
    return st;
}

/* One benchmark shape: its problem, buffers and line. */
static og_status bench_shape(og_context *ctx, og_qgemm *q, og_gemm *g, og_dtype dtype,
                             const og_qweights_format *f, const og_shape *s,
                             const og_params *against, const og_params *given, int parts)
{
    og_qgemm_problem *pr = NULL;
    bench_bufs b = {0};
    double us[T_COUNT] = {0};
    og_params sel;
    og_status st = og_qgemm_problem_create(ctx, dtype, f, s->m, s->n, s->k, s->batch, 5, &pr);
    if (st == OG_OK)
        st = bufs_make(ctx, pr, &b);
    if (st == OG_OK && given)
        sel = *given;
    else if (st == OG_OK)
        st = og_qgemm_choose(q, &pr->args, &sel);
    og_gemm_args ga = {.trans_b = 1,
                       .m = s->m,
                       .n = s->n,
                       .k = s->k,
                       .batch = s->batch,
                       .alpha = 1.0f,
                       .a = b.ha,
                       .b = b.hb,
                       .c = b.hc,
                       .lda = s->k,
                       .ldb = s->k,
                       .ldc = s->n,
                       .stride_a = s->m * s->k,
                       .stride_b = s->n * s->k,
                       .stride_c = s->m * s->n};
    /* Parts are the decode kernel's (M <= 16), not the prefill's. */
    parts = parts && og_family_can(&sel, OG_FAMILY_WEIGHTS);
    if (st == OG_OK)
        st = time_all(ctx, q, &pr->args, against, &sel, g, &ga, &b, parts, us);
    if (st == OG_OK) {
        char name[64], params[OG_PARAMS_MAX];
        snprintf(name, sizeof name, "%" PRId64 "x%" PRId64 "x%" PRId64 "%s", s->m, s->n, s->k,
                 s->batch > 1 ? "xB" : "");
        og_params_format(&sel, params, sizeof params);
        double gbs = og_qgemm_weight_gbs(pr, us[T_SELECTED]),
               copy = og_qgemm_weight_gbs(pr, us[T_COPY]);
        double gf = 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)s->batch /
                    (us[T_GEMM] * 1e3);
        char part_us[48] = "";
        if (parts)
            snprintf(part_us, sizeof part_us, " %9.1f %9.1f", us[T_LOAD], us[T_CONVERT]);
        printf("%-16s %10.1f %10.1f %7.2fx %11.2f %10.2f %6.0f%% %11.1f %9.2f %7.2fx%s  %s\n",
               name, us[T_DEFAULT], us[T_SELECTED], us[T_DEFAULT] / us[T_SELECTED], gbs, copy,
               100.0 * gbs / copy, us[T_GEMM], gf, us[T_GEMM] / us[T_SELECTED], part_us, params);
    }
    bufs_free(&b);
    og_qgemm_problem_destroy(pr);
    return st;
}

int og_cmd_bench_qgemm(const og_cli *o, og_dtype dtype)
{
    og_qweights_format f;
    if (og_cli_weights(o, "bench", &f) != 0)
        return 2;
    og_shape *shapes;
    size_t ns;
    og_params given, against;
    if (og_cli_bench_inputs(o, default_shapes, &shapes, &ns, &given, &against) != 0)
        return 2;
    og_context *ctx = og_cli_context(o);
    og_qgemm *q = NULL;
    og_gemm *g = NULL;
    if (!ctx || og_qgemm_create(ctx, dtype, &f, OG_MODE_FAST, &q) != OG_OK ||
        og_gemm_create(ctx, OG_F16, OG_MODE_FAST, &g) != OG_OK) {
        if (ctx)
            og_cli_fail("ogtune bench: %s\n", og_context_last_error(ctx));
        og_qgemm_destroy(q);
        og_context_destroy(ctx);
        free(shapes);
        return 1;
    }
    char load[64], op[32];
    og_cli_load_average(load, sizeof load);
    og_qgemm_op(&f, op, sizeof op);
    printf("# %s, %s, A %s, load average %s\n", og_context_device_name(ctx), op,
           og_dtype_name(dtype), load);
    printf(
        "# default/selected: the default kernel for M (or --against's) and the selected (tuned,\n"
        "# or --params) one, def/sel the ratio of their times;\n"
        "# weights GB/s: bytes of codes, scales and zero points the selected kernel reads per\n"
        "# second; copy GB/s: vkCmdCopyBuffer of the same bytes (read once, written once);\n"
        "# f16 GEMM: the same M x N x K with float16 weights (B transposed), Fast mode's kernel\n");
    if (o->against) {
        char text[OG_PARAMS_MAX];
        og_params_format(&against, text, sizeof text);
        printf("# default: --against %s\n", text);
    }
    if (o->parts)
        printf("# load us: the selected decode kernel loading its codes alone (xor-folded, no\n"
               "# scales, A or products); convert us: its decode and scales of codes made from\n"
               "# the unit's number (no loads of codes or A), each weight summed\n");
    printf("%-16s %10s %10s %8s %11s %10s %7s %11s %9s %8s%s  %s\n", "M x N x K", "default us",
           "selected", "def/sel", "weights GB/s", "copy GB/s", "of copy", "f16 GEMM us", "f16 GF/s",
           "vs f16", o->parts ? "   load us convert us" : "", "selected kernel");
    int rc = 0;
    for (size_t i = 0; i < ns && rc == 0; i++) {
        if (bench_shape(ctx, q, g, dtype, &f, &shapes[i], o->against ? &against : NULL,
                        o->params ? &given : NULL, o->parts) != OG_OK) {
            og_cli_fail("ogtune bench: %" PRId64 "x%" PRId64 "x%" PRId64 ": %s\n", shapes[i].m,
                        shapes[i].n, shapes[i].k, og_context_last_error(ctx));
            rc = 1;
        }
    }
    og_cli_load_average(load, sizeof load);
    printf("# load average after: %s\n", load);
    og_qgemm_destroy(q);
    og_gemm_destroy(g);
    og_context_destroy(ctx);
    free(shapes);
    return rc;
}
