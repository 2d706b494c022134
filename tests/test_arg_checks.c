/* The argument checks of the C runtime against tests/data/arg_checks.txt,
 * the cases web/test/checks.test.js runs through web/onegpu/check.js: each
 * case's call goes to the check its op records nothing before
 * (og_gemm_check, og_elementwise_check, og_conv_check, og_qgemm_check)
 * with buffers of the case's sizes and no device, and the outcome must be
 * the case's (success, or the status and the exact message). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_internal.h" /* og_buffer and the checks of runtime/plan/og_plan.h */
#include "onegpu_formats.h"

/* WebGPU's defaults, which the JS suite uses too: a 256-byte binding
 * alignment and a 2^27-byte binding; no device addresses. */
static const og_limits limits = {.max_storage_range = 1u << 27, .bind_align = 256};

enum { F_I64, F_INT, F_FLOAT, F_BUF };

typedef struct field {
    const char *name;
    size_t at;
    int type;
} field;

#define G(f, t) {#f, offsetof(og_gemm_args, f), t}
static const field gemm_fields[] = {
    G(trans_a, F_INT),     G(trans_b, F_INT),     G(m, F_I64),        G(n, F_I64),
    G(k, F_I64),           G(batch, F_I64),       G(alpha, F_FLOAT),  G(beta, F_FLOAT),
    G(a, F_BUF),           G(b, F_BUF),           G(c, F_BUF),        G(lda, F_I64),
    G(ldb, F_I64),         G(ldc, F_I64),         G(a_offset, F_I64), G(b_offset, F_I64),
    G(c_offset, F_I64),    G(stride_a, F_I64),    G(stride_b, F_I64), G(stride_c, F_I64),
    G(bias, F_BUF),        G(bias_offset, F_I64), G(activation, F_INT), G(scale_a, F_FLOAT),
    G(scale_b, F_FLOAT),   {NULL, 0, 0}};
#define V(f, t) {#f, offsetof(og_conv_args, f), t}
static const field conv_fields[] = {
    V(layout, F_INT),      V(weights, F_INT),      V(n, F_I64),          V(c, F_I64),
    V(h, F_I64),           V(w, F_I64),            V(k, F_I64),          V(r, F_I64),
    V(s, F_I64),           V(groups, F_I64),       V(stride_h, F_I64),   V(stride_w, F_I64),
    V(dilation_h, F_I64),  V(dilation_w, F_I64),   V(pad_top, F_I64),    V(pad_bottom, F_I64),
    V(pad_left, F_I64),    V(pad_right, F_I64),    V(beta, F_FLOAT),     V(x, F_BUF),
    V(wt, F_BUF),          V(y, F_BUF),            V(x_offset, F_I64),   V(w_offset, F_I64),
    V(y_offset, F_I64),    V(bias, F_BUF),         V(bias_offset, F_I64), V(activation, F_INT),
    {NULL, 0, 0}};
#define Q(f, t) {#f, offsetof(og_qgemm_args, f), t}
static const field qgemm_fields[] = {
    Q(m, F_I64),          Q(n, F_I64),           Q(k, F_I64),        Q(batch, F_I64),
    Q(a, F_BUF),          Q(lda, F_I64),         Q(a_offset, F_I64), Q(stride_a, F_I64),
    Q(w, F_BUF),          Q(w_offset, F_I64),    Q(stride_w, F_I64), Q(tensor_scale, F_FLOAT),
    Q(c, F_BUF),          Q(ldc, F_I64),         Q(c_offset, F_I64), Q(stride_c, F_I64),
    Q(beta, F_FLOAT),     Q(bias, F_BUF),        Q(bias_offset, F_I64), Q(activation, F_INT),
    {NULL, 0, 0}};

/* One case's call: the op's args and the buffers they point at. */
typedef struct call {
    union {
        og_gemm_args gemm;
        og_conv_args conv;
        og_qgemm_args qgemm;
    } args;
    og_buffer bufs[8];
    const char *buf_names[8];
    int n_bufs;
    og_dtype dtype;
    og_qweights_format format;
} call;

static int64_t integer(const char *name, const char *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    cr_assert(*v && !*end && errno == 0, "%s: %s is not a 64-bit integer", name, v);
    return x;
}

/* The buffer named name (a, b, c, bias, w, x, wt, y), made from its value:
 * BYTES, nostorage:BYTES or another buffer's name (that buffer, named earlier). */
static og_buffer *buffer(call *c, const char *name, const char *v)
{
    for (int i = 0; i < c->n_bufs; i++)
        if (strcmp(c->buf_names[i], v) == 0)
            return &c->bufs[i];
    cr_assert_lt(c->n_bufs, 8, "too many buffers");
    int host = strncmp(v, "nostorage:", 10) == 0;
    uint64_t bytes = (uint64_t)integer(name, host ? v + 10 : v);
    og_buffer *b = &c->bufs[c->n_bufs];
    c->buf_names[c->n_bufs] = name;
    /* A handle of its own, so that og_conv_check's overlap test tells
     * buffers apart; a host buffer's usage has no STORAGE_BUFFER. */
    *b = (og_buffer){.buffer = (VkBuffer)(uintptr_t)(0x1000 + 0x100 * ++c->n_bufs),
                     .size = bytes,
                     .allocated = bytes < 4 ? 4 : (bytes + 3) & ~3ull,
                     .usage = host ? VK_BUFFER_USAGE_TRANSFER_SRC_BIT
                                   : VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    return b;
}

static void set(call *c, const field *fields, const char *key, const char *v)
{
    if (strcmp(key, "dtype") == 0) {
        const char *names[] = {"f32", "f16", "bf16", "e4m3"};
        const og_dtype types[] = {OG_F32, OG_F16, OG_BF16, OG_FP8_E4M3};
        for (int i = 0; i < 4; i++)
            if (strcmp(v, names[i]) == 0) {
                c->dtype = types[i];
                return;
            }
        cr_assert_fail("dtype %s is not f32, f16, bf16 or e4m3", v);
    }
    if (strcmp(key, "format") == 0) {
        cr_assert_eq(og_qweights_format_parse(v, &c->format), 0, "format %s", v);
        return;
    }
    char *base = (char *)&c->args;
    for (const field *f = fields; f->name; f++) {
        if (strcmp(f->name, key) != 0)
            continue;
        if (f->type == F_I64)
            *(int64_t *)(base + f->at) = integer(key, v);
        else if (f->type == F_INT)
            *(int *)(base + f->at) = (int)integer(key, v);
        else if (f->type == F_FLOAT) {
            char *end;
            *(float *)(base + f->at) = strtof(v, &end);
            cr_assert(*v && !*end, "%s: %s is not a number", key, v);
        } else
            *(og_buffer **)(base + f->at) = buffer(c, key, v);
        return;
    }
    cr_assert_fail("no field %s", key);
}

/* Runs the check of op on inputs (KEY=VALUE ...); err gets the message. */
static og_status run(const char *op, char *inputs, char *err)
{
    static call c;
    memset(&c, 0, sizeof c);
    const field *fields = strcmp(op, "gemm") == 0 || strcmp(op, "elementwise") == 0 ? gemm_fields
                          : strcmp(op, "conv") == 0                                 ? conv_fields
                          : strcmp(op, "qgemm") == 0                                ? qgemm_fields
                                                                                    : NULL;
    cr_assert(fields, "op %s is not gemm, elementwise, conv or qgemm", op);
    for (char *save, *t = strtok_r(inputs, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(t, '=');
        cr_assert(eq, "%s is not KEY=VALUE", t);
        *eq = '\0';
        set(&c, fields, t, eq + 1);
    }
    og_push push;
    og_conv_shape shape;
    og_gemm_args as_gemm;
    err[0] = '\0';
    if (strcmp(op, "gemm") == 0) {
        og_gemm_config cfg = {.a_type = c.dtype, .b_type = c.dtype};
        return og_gemm_check(&cfg, &limits, err, &c.args.gemm, &push);
    }
    if (strcmp(op, "elementwise") == 0)
        return og_elementwise_check(&limits, err, &c.args.gemm, &push);
    if (strcmp(op, "conv") == 0)
        return og_conv_check(&limits, err, og_dtype_bytes(c.dtype), &c.args.conv, &shape, &push);
    return og_qgemm_check(&limits, err, c.dtype, &c.format, &c.args.qgemm, &as_gemm, &push);
}

/* The expectation's status: "ok", "[unsupported] ..." or a message. */
static og_status expected_status(const char *want, const char **message)
{
    *message = want;
    if (strcmp(want, "ok") == 0)
        return OG_OK;
    if (strncmp(want, "[unsupported] ", 14) == 0) {
        *message = want + 14;
        return OG_ERROR_UNSUPPORTED;
    }
    return OG_ERROR_INVALID_ARGUMENT;
}

Test(arg_checks, every_case_of_the_shared_file)
{
    FILE *f = fopen(OG_ARG_CHECKS, "r");
    cr_assert(f, "cannot open %s", OG_ARG_CHECKS);
    char line[2048];
    int cases = 0, ran = 0, js_only = 0, failed = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        cases++;
        /* NAME OP INPUTS -> EXPECTED [-> EXPECTED IN JS] */
        char *arrow = strstr(line, " -> ");
        cr_assert(arrow, "no ' -> ' in: %s", line);
        *arrow = '\0';
        char *want = arrow + 4, *js = strstr(want, " -> ");
        if (js)
            *js = '\0';
        char *name = line, *op = strchr(name, ' '), *inputs = op ? strchr(op + 1, ' ') : NULL;
        cr_assert(inputs, "case %d has no name, op and inputs: %s", cases, line);
        *op++ = '\0';
        *inputs++ = '\0';
        if (strcmp(want, "-") == 0) {
            js_only++;
            continue;
        }
        const char *message;
        og_status st_want = expected_status(want, &message);
        char err[OG_ERROR_MAX];
        og_status st = run(op, inputs, err);
        ran++;
        if (st != st_want || (st != OG_OK && strcmp(err, message) != 0)) {
            failed++;
            cr_log_error("%s: status %d, expected %d\n  got:      %s\n  expected: %s", name,
                         (int)st, (int)st_want, st == OG_OK ? "ok" : err, want);
        }
    }
    fclose(f);
    printf("arg_checks (C): %d cases in %s, %d run, %d for the JS runtime only\n", cases,
           OG_ARG_CHECKS, ran, js_only);
    cr_expect_eq(failed, 0, "%d of %d cases failed", failed, ran);
    /* Every case line read and run or marked; the file is not empty. */
    cr_expect_eq(ran + js_only, cases);
    cr_expect_geq(ran, 40, "only %d cases run", ran);
}
