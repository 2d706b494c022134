/* Staleness and the checks of a record from elsewhere (og_travel.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "og_family.h"
#include "og_travel.h"
#include "onegpu_formats.h"

int og_record_stale(const og_record *rec)
{
    char name[sizeof rec->template_name + 1];
    size_t len = strnlen(rec->template_name, sizeof rec->template_name);
    memcpy(name, rec->template_name, len);
    name[len] = '\0';
    return rec->template_hash != og_template_hash(name);
}

/* Whether the text of a fixed-size field is terminated, not empty, and of
 * the characters og_params_format and the template names use. */
static int plain_text(const char *s, size_t size)
{
    size_t len = strnlen(s, size);
    if (len == 0 || len == size)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '=' || c == ','))
            return 0;
    }
    return 1;
}

/* Whether op is a convolution's, as og_conv_op writes it:
 * OG_OP_CONV_PREFIX "RxS:sHxW:dHxW". */
static int conv_op(const char *op, size_t size)
{
    size_t prefix = strlen(OG_OP_CONV_PREFIX), len = strnlen(op, size);
    long long v[6];
    char tail;
    return len < size && strncmp(op, OG_OP_CONV_PREFIX, prefix) == 0 &&
           sscanf(op + prefix, "%llux%llu:s%llux%llu:d%llux%llu%c", &v[0], &v[1], &v[2], &v[3],
                  &v[4], &v[5], &tail) == 6;
}

/* Whether op is a low-bit weight product's, as og_qgemm_op writes it:
 * OG_OP_QGEMM_PREFIX and a format's canonical text. */
static int qgemm_op(const char *op, size_t size)
{
    size_t prefix = strlen(OG_OP_QGEMM_PREFIX), len = strnlen(op, size);
    char text[64], again[64];
    og_qweights_format f;
    if (len == size || strncmp(op, OG_OP_QGEMM_PREFIX, prefix) != 0 || len - prefix >= sizeof text)
        return 0;
    memcpy(text, op + prefix, len - prefix);
    text[len - prefix] = '\0';
    return og_qweights_format_parse(text, &f) == 0 &&
           og_qweights_format_name(&f, again, sizeof again) == 0 && strcmp(again, text) == 0;
}

int og_record_check(const og_record *rec, char *why, size_t len)
{
    const og_record_key *key = &rec->key;
    int op_len = (int)strnlen(key->op, sizeof key->op);
    int recovered = strncmp(key->op, OG_OP_GEMM_RECOVERED, sizeof key->op) == 0;
    int conv = conv_op(key->op, sizeof key->op), qgemm = qgemm_op(key->op, sizeof key->op);
    if (strncmp(key->op, "gemm", sizeof key->op) != 0 && !recovered && !conv && !qgemm &&
        strncmp(key->op, "int8gemm", sizeof key->op) != 0) {
        snprintf(why, len,
                 "op '%.*s' is not gemm, " OG_OP_GEMM_RECOVERED ", int8gemm, a convolution's "
                 "(" OG_OP_CONV_PREFIX "RxS:sHxW:dHxW) or a low-bit weight product's "
                 "(" OG_OP_QGEMM_PREFIX "FORMAT)",
                 op_len, key->op);
        return -1;
    }
    if (qgemm && (og_dtype_is_int8(key->dtype) || key->trans_a != 0 || key->trans_b != 1 ||
                  (strcmp(rec->template_name, "qgemm_decode") != 0 &&
                   strcmp(rec->template_name, "gemm_tile") != 0))) {
        snprintf(why, len,
                 "a low-bit weight product's record takes a float dtype, trans_a 0, trans_b 1 "
                 "and template qgemm_decode or gemm_tile (the prefill)");
        return -1;
    }
    if (conv &&
        (og_dtype_is_int8(key->dtype) ||
         (strcmp(rec->template_name, "gemm_tile") != 0 &&
          strcmp(rec->template_name, OG_TEMPLATE_DEPTHWISE) != 0 &&
          (key->dtype != OG_F16 || strcmp(rec->template_name, OG_TEMPLATE_COOPMAT) != 0)))) {
        snprintf(why, len,
                 "a convolution's record takes a float dtype and template gemm_tile or "
                 "conv_depthwise (float16 gemm_coopmat too)");
        return -1;
    }
    if (recovered && key->dtype != OG_F32) {
        snprintf(why, len, "op " OG_OP_GEMM_RECOVERED " takes dtype f32");
        return -1;
    }
    if ((unsigned)key->dtype > OG_UINT8 || (unsigned)key->mode > OG_MODE_DETERMINISTIC ||
        (key->trans_a != 0 && key->trans_a != 1) || (key->trans_b != 0 && key->trans_b != 1) ||
        (rec->accepted != 0 && rec->accepted != 1)) {
        snprintf(why, len, "dtype, mode, trans_a, trans_b or accepted out of range");
        return -1;
    }
    if (rec->m < 0 || rec->n < 0 || rec->k < 0 || rec->batch < 1 || rec->m > UINT32_MAX ||
        rec->n > UINT32_MAX || rec->k > UINT32_MAX || rec->batch > UINT32_MAX) {
        snprintf(why, len, "shape %lldx%lldx%lldx%lld out of range", (long long)rec->m,
                 (long long)rec->n, (long long)rec->k, (long long)rec->batch);
        return -1;
    }
    if (!plain_text(rec->template_name, sizeof rec->template_name) ||
        !plain_text(rec->params, sizeof rec->params)) {
        snprintf(why, len,
                 "template name or params empty or not of a-z, 0-9, '_', '=' and ',' alone");
        return -1;
    }
    if (!og_record_stale(rec)) {
        og_params p;
        if (og_params_parse(rec->params, &p, why, len) != 0)
            return -1;
        if (strcmp(og_params_template(&p), rec->template_name) != 0) {
            snprintf(why, len, "params '%s' are of template %s, not %s", rec->params,
                     og_params_template(&p), rec->template_name);
            return -1;
        }
        int gathers = og_family_can(&p, OG_FAMILY_CONV), matrix = og_params_matrix(&p);
        int conv_tile = gathers && !matrix && p.src != OG_SRC_ADDR;
        int conv_matrix = gathers && matrix && p.load == OG_LOAD_STAGED && key->dtype == OG_F16;
        if (conv && !conv_tile && !conv_matrix) {
            snprintf(why, len,
                     "params '%s' are not a convolution's (the tile or the depthwise kernel from "
                     "storage or texel buffers, or the float16 matrix tile with load=staged)",
                     rec->params);
            return -1;
        }
        if (!conv && og_family_can(&p, OG_FAMILY_DEPTHWISE)) {
            snprintf(why, len, "params '%s' are a convolution's own kernel, not op '%.*s''s",
                     rec->params, op_len, key->op);
            return -1;
        }
        int prefill = og_family_can(&p, OG_FAMILY_PREFILL) &&
                      (matrix ? p.load == OG_LOAD_STAGED
                              : p.vec == 1 && p.src == OG_SRC_STORAGE && p.split == 1);
        int decode = og_family_can(&p, OG_FAMILY_WEIGHTS);
        if (qgemm ? !decode && !prefill : decode) {
            snprintf(why, len, "params '%s' %s", rec->params,
                     qgemm ? "are neither the decode kernel's (variant=qdecode), the prefill "
                             "tile's (vec=1, src=ssbo, split=1) nor the staged matrix tile's"
                           : "are the low-bit decode kernel's: its op starts " OG_OP_QGEMM_PREFIX);
            return -1;
        }
        if (og_params_matrix(&p) && p.mat == OG_MATRIX_EMU) {
            snprintf(why, len, "params '%s' name the tests' emulated matrices (mat=emu)",
                     rec->params);
            return -1;
        }
    }
    if (!isfinite(rec->median_us) || rec->median_us < 0 || !isfinite(rec->gflops) ||
        rec->gflops < 0 || isnan(rec->max_error) || rec->max_error < 0 || rec->samples < 0) {
        snprintf(why, len, "negative or not finite measurements (%g us, %g GFLOP/s, error %g)",
                 rec->median_us, rec->gflops, rec->max_error);
        return -1;
    }
    if (!isfinite(rec->spread) || rec->spread < 0) {
        snprintf(why, len, "spread %g is negative or not finite", rec->spread);
        return -1;
    }
    char memory[sizeof rec->memory + 1];
    snprintf(memory, sizeof memory, "%.*s", (int)sizeof rec->memory, rec->memory);
    if (!og_db_memory_known(memory)) {
        snprintf(why, len, "memory '%s' is not %s, %s, %s or ''", memory, OG_DB_MEMORY_DEVICE_LOCAL,
                 OG_DB_MEMORY_DEVICE_LOCAL_MAPPED, OG_DB_MEMORY_HOST_VISIBLE);
        return -1;
    }
    if (rec->created <= 0) {
        snprintf(why, len, "created %lld is not a time after 1970", (long long)rec->created);
        return -1;
    }
    return 0;
}
