/* ogtune bench --op qgemm: low-bit weight products (og_qgemm_*) against the
 * device's copy bandwidth and against the float16 GEMM of the same shape,
 * measured in one run with the load average. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "og_commands.h"

/* Decoding a language model (issue 28): a 4096 x 4096 projection and a
 * 14336 x 4096 feed-forward layer for one and eight rows, and a 512-row
 * prefill. */
static const char default_shapes[] = "1x4096x4096,1x14336x4096,8x4096x4096,512x4096x4096";

int og_parse_qformat(const char *text, og_qweights_format *out)
{
    memset(out, 0, sizeof *out);
    char buf[64];
    if (!text || strlen(text) >= sizeof buf)
        return -1;
    strcpy(buf, text);
    char *save = NULL, *name = strtok_r(buf, ":", &save);
    if (!name)
        return -1;
    if (strcmp(name, "mxfp4") == 0)
        out->format = OG_QFORMAT_MXFP4;
    else if (strcmp(name, "nvfp4") == 0)
        out->format = OG_QFORMAT_NVFP4;
    else if (strcmp(name, "q8_0") == 0)
        out->format = OG_QFORMAT_Q8_0;
    else if (strcmp(name, "int4") == 0) {
        out->format = OG_QFORMAT_INT4;
        out->group = 32;
    } else
        return -1;
    for (char *t = strtok_r(NULL, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
        if (out->format != OG_QFORMAT_INT4)
            return -1;
        if (strcmp(t, "gc") == 0)
            out->group = 0;
        else if (t[0] == 'g' && t[1] >= '1' && t[1] <= '9')
            out->group = atoi(t + 1);
        else if (strcmp(t, "bf16") == 0)
            out->scale = OG_QSCALE_BF16;
        else if (strcmp(t, "f16") == 0)
            out->scale = OG_QSCALE_F16;
        else if (strcmp(t, "uint4") == 0)
            out->zero = OG_QZERO_UINT4;
        else if (strcmp(t, "float") == 0)
            out->zero = OG_QZERO_FLOAT;
        else
            return -1;
    }
    return 0;
}

/* The buffers of one benchmark shape: A, the weights, C; and the float16
 * GEMM's A, B (N x K, transposed) and C. */
typedef struct bench_bufs {
    og_buffer *a, *w, *c, *copy, *ha, *hb, *hc;
    uint64_t w_bytes;
} bench_bufs;

static void bufs_free(bench_bufs *b)
{
    og_buffer *all[] = {b->a, b->w, b->c, b->copy, b->ha, b->hb, b->hc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        og_buffer_destroy(all[i]);
}

/* Random bytes of n bytes (scales included: a benchmark reads, it does not check). */
static og_status random_buffer(og_context *ctx, uint64_t n, uint32_t seed, int halves,
                               og_buffer **out)
{
    uint8_t *host = malloc(n + 4);
    if (!host)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "bench: out of memory");
    for (uint64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        host[i] = (uint8_t)(seed >> 24);
        /* float16 values in [-2, 2): a sign, exponents up to 15, any fraction. */
        if (halves && i % 2 == 1)
            host[i] = (uint8_t)((host[i] & 0x83u) | 0x30u);
    }
    og_status st = og_buffer_create(ctx, n, out);
    if (st == OG_OK)
        st = og_buffer_write(*out, 0, host, n);
    free(host);
    return st;
}

static og_status bufs_make(og_context *ctx, const og_qweights_format *f, int64_t m, int64_t n,
                           int64_t k, og_dtype dtype, bench_bufs *b)
{
    memset(b, 0, sizeof *b);
    og_qweights_layout lay;
    char why[256];
    if (og_qweights_layout_of(f, n, k, &lay, why, sizeof why) != 0)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "bench: %s", why);
    b->w_bytes = lay.bytes;
    uint64_t a_bytes = (uint64_t)(m * k) * og_dtype_bytes(dtype);
    og_status st = random_buffer(ctx, a_bytes, 1, dtype != OG_F32, &b->a);
    /* Random scale bytes may be NaN or huge: the time of a product does not
     * depend on its values on any device onegpu knows. */
    if (st == OG_OK)
        st = random_buffer(ctx, lay.bytes, 2, 0, &b->w);
    if (st == OG_OK)
        st = og_buffer_create(ctx, (uint64_t)(m * n) * 4, &b->c);
    if (st == OG_OK)
        st = og_buffer_create(ctx, lay.bytes, &b->copy);
    if (st == OG_OK)
        st = random_buffer(ctx, (uint64_t)(m * k) * 2, 3, 1, &b->ha);
    if (st == OG_OK)
        st = random_buffer(ctx, (uint64_t)(n * k) * 2, 4, 1, &b->hb);
    if (st == OG_OK)
        st = og_buffer_create(ctx, (uint64_t)(m * n) * 4, &b->hc);
    return st;
}

static og_status record_copy(void *user, VkCommandBuffer cmd)
{
    bench_bufs *b = user;
    og_context *ctx = b->w->ctx;
    VkBufferCopy region = {.srcOffset = og_buffer_vk_offset(b->w),
                           .dstOffset = og_buffer_vk_offset(b->copy),
                           .size = b->w_bytes};
    ctx->vk.vkCmdCopyBuffer(cmd, og_buffer_vk_buffer(b->w), og_buffer_vk_buffer(b->copy), 1,
                            &region);
    return OG_OK;
}

typedef struct gemm_call {
    og_gemm *g;
    const og_gemm_args *args;
    og_params p;
} gemm_call;

/* Median microseconds of the low-bit product (the selected kernel, or
 * given), the copy of its weights and the float16 GEMM, timed in
 * alternation (5 rounds) so all see one load. */
static og_status time_three(og_context *ctx, og_qgemm *q, const og_qgemm_args *qa,
                            const og_params *given, og_gemm *g, const og_gemm_args *ga,
                            bench_bufs *b, double us[3])
{
    enum { rounds = 5 };
    double t[3][rounds];
    og_timing_plan plan = OG_TIMING_BENCH;
    og_params qp = given ? *given : og_qgemm_choose(q, qa), gp;
    og_status st = og_gemm_choose(g, ga, &gp);
    for (int r = 0; r < rounds && st == OG_OK; r++) {
        og_timing x;
        st = og_qgemm_time(q, qa, &qp, &plan, &x);
        t[0][r] = x.median_us;
        if (st == OG_OK)
            st = og_time_encoder(ctx, record_copy, b, &plan, &x);
        t[1][r] = x.median_us;
        if (st == OG_OK)
            st = og_gemm_time(g, ga, &gp, &plan, &x);
        t[2][r] = x.median_us;
    }
    for (int i = 0; i < 3; i++)
        us[i] = st == OG_OK ? og_cli_median(t[i], rounds) : 0;
    return st;
}

int og_cmd_bench_qgemm(const og_cli *o, og_dtype dtype)
{
    og_qweights_format f;
    if (og_parse_qformat(o->weights ? o->weights : "mxfp4", &f) != 0) {
        og_cli_fail("ogtune bench: --weights takes mxfp4, nvfp4, q8_0 or "
                    "int4[:gN|:gc][:f16|:bf16][:uint4|:float] (got %s)\n",
                    o->weights);
        return 2;
    }
    og_shape *shapes;
    size_t ns;
    og_params given;
    if (og_cli_bench_inputs(o, default_shapes, &shapes, &ns, &given) != 0)
        return 2;
    og_context *ctx = og_cli_context(o);
    og_qgemm *q = NULL;
    og_gemm *g = NULL;
    if (!ctx || og_qgemm_create(ctx, dtype, &f, OG_MODE_FAST, &q) != OG_OK ||
        og_gemm_create(ctx, OG_F16, OG_MODE_FAST, &g) != OG_OK) {
        if (ctx)
            og_cli_fail("ogtune bench: %s\n", og_context_last_error(ctx));
        og_context_destroy(ctx);
        free(shapes);
        return 1;
    }
    char load[64];
    og_cli_load_average(load, sizeof load);
    printf("# %s, %s weights, A %s, load average %s\n", og_context_device_name(ctx),
           o->weights ? o->weights : "mxfp4", og_dtype_name(dtype), load);
    printf("# weights GB/s: bytes of codes, scales and zero points read per second; copy GB/s:\n"
           "# vkCmdCopyBuffer of the same bytes (read once, written once) per second; f16 GEMM:\n"
           "# the same M x N x K with float16 weights (B transposed), Fast mode's kernel\n");
    printf("%-16s %11s %11s %11s %7s %12s %11s %8s\n", "M x N x K", "qgemm us", "weights GB/s",
           "copy GB/s", "of copy", "f16 GEMM us", "f16 GF/s", "speed-up");
    int rc = 0;
    for (size_t i = 0; i < ns && rc == 0; i++) {
        og_shape *s = &shapes[i];
        bench_bufs b;
        double us[3] = {0};
        og_status st = bufs_make(ctx, &f, s->m, s->n, s->k, dtype, &b);
        og_qgemm_args qa = {.m = s->m, .n = s->n, .k = s->k, .a = b.a, .lda = s->k, .w = b.w,
                            .tensor_scale = 1.0f, .c = b.c, .ldc = s->n};
        og_gemm_args ga = {.trans_b = 1, .m = s->m, .n = s->n, .k = s->k, .alpha = 1.0f,
                           .a = b.ha, .b = b.hb, .c = b.hc, .lda = s->k, .ldb = s->k,
                           .ldc = s->n};
        if (st == OG_OK)
            st = time_three(ctx, q, &qa, o->params ? &given : NULL, g, &ga, &b, us);
        if (st != OG_OK) {
            og_cli_fail("ogtune bench: %" PRId64 "x%" PRId64 "x%" PRId64 ": %s\n", s->m, s->n,
                        s->k, og_context_last_error(ctx));
            rc = 1;
        } else {
            char name[48];
            snprintf(name, sizeof name, "%" PRId64 "x%" PRId64 "x%" PRId64, s->m, s->n, s->k);
            double wgbs = (double)b.w_bytes / (us[0] * 1e3), cgbs = (double)b.w_bytes / (us[1] * 1e3);
            double gf = 2.0 * (double)s->m * (double)s->n * (double)s->k / (us[2] * 1e3);
            printf("%-16s %11.1f %11.2f %11.2f %6.0f%% %12.1f %11.2f %7.2fx\n", name, us[0], wgbs,
                   cgbs, 100.0 * wgbs / cgbs, us[2], gf, us[2] / us[0]);
        }
        bufs_free(&b);
    }
    og_cli_load_average(load, sizeof load);
    printf("# load average after: %s\n", load);
    og_qgemm_destroy(q);
    og_gemm_destroy(g);
    og_context_destroy(ctx);
    free(shapes);
    return rc;
}
