/* ogtune select, show and gen, and the table of chosen kernels (ogtune tune's
 * too); what every command shares is og_cmd_shared.c. */
#include <stdlib.h>
#include <string.h>

#include "og_commands.h"
#include "og_travel.h"

static const char *source_name(og_source s)
{
    return s == OG_SOURCE_DEFAULT ? "default" : "db";
}

static void print_choice_json(FILE *f, og_context *ctx, og_dtype t, og_mode mode, int ta, int tb,
                              int recovered, const og_shape *s, const og_choice *c)
{
    char params[OG_PARAMS_MAX];
    og_params_format(&c->params, params, sizeof params);
    uint32_t ranges = 1, range_len = (uint32_t)s->k;
    if (og_family_can(&c->params, OG_FAMILY_SPLIT))
        og_split_ranges(c->params.split, s->m, s->n, s->k, s->batch, OG_SCRATCH_BYTES / 4, &ranges,
                        &range_len);
    fprintf(f, "{\"op\":\"%s\",\"device\":",
            og_dtype_is_int8(t) ? "int8gemm"
            : recovered         ? OG_OP_GEMM_RECOVERED
                                : "gemm");
    og_json_string(f, og_context_device_name(ctx));
    fprintf(f,
            ",\"dtype\":\"%s\",\"mode\":\"%s\",\"trans_a\":%s,\"trans_b\":%s,"
            "\"shape\":[%lld,%lld,%lld,%lld],\"variant\":\"%s\",\"params\":\"%s\","
            "\"k_ranges\":%u,\"range_len\":%u,\"source\":\"%s\"",
            og_dtype_name(t), mode == OG_MODE_DETERMINISTIC ? "deterministic" : "fast",
            ta ? "true" : "false", tb ? "true" : "false", (long long)s->m, (long long)s->n,
            (long long)s->k, (long long)s->batch, og_params_template(&c->params), params, ranges,
            range_len, source_name(c->source));
    if (c->source != OG_SOURCE_DEFAULT) {
        fprintf(f,
                ",\"match\":\"%s\",\"tuned_shape\":[%lld,%lld,%lld,%lld],\"tuned_gflops\":%.3f,"
                "\"database\":",
                c->source == OG_SOURCE_DB ? "exact" : "nearest", (long long)c->m, (long long)c->n,
                (long long)c->k, (long long)c->batch, c->gflops);
        og_json_string(f, c->db_path);
        /* The driver the record was measured on, and the rule that let it in
         * (og_db_select): "same" driver build, or "other" build of this
         * device's driver (used, with a warning). */
        fprintf(f, ",\"driver\":{\"rule\":\"%s\",\"version\":%u,\"info\":",
                c->other_driver ? "other" : "same", c->driver_version);
        og_json_string(f, c->driver_info);
        fputs(",\"pipeline_cache_uuid\":", f);
        og_json_string(f, c->pipeline_cache_uuid);
        fputc('}', f);
    }
    /* The matrix variants (float16's, or Int8Gemm's): which ran, and why
     * the others did not. */
    for (int i = 0; i < OG_MATRIX_VARIANTS; i++) {
        const og_matrix_note *n = &c->matrix[i];
        char mp[OG_PARAMS_MAX];
        og_params_format(&n->params, mp, sizeof mp);
        fprintf(f,
                "%s{\"variant\":\"%s\",\"extension\":\"%s\",\"subgroups\":%d,"
                "\"subgroup_size\":%d,\"fragment\":\"%dx%dx%d\",\"params\":\"%s\","
                "\"chosen\":%s",
                i == 0 ? ",\"matrix_variants\":[" : ",", og_params_template(&n->params),
                n->params.mat == OG_MATRIX_KHR ? "VK_KHR_cooperative_matrix"
                                               : "VK_NV_cooperative_matrix",
                n->params.sgx * n->params.sgy, n->params.sub, n->params.fm, n->params.fn,
                n->params.fk, mp, n->chosen ? "true" : "false");
        if (!n->chosen) {
            fputs(",\"reason\":", f);
            og_json_string(f, n->why);
        }
        fputs(i == OG_MATRIX_VARIANTS - 1 ? "}]" : "}", f);
    }
    /* The coopmat2 note, where the selection wrote one (the GEMM's does;
     * Int8Gemm's and recovered float32's leave it zero). */
    if (c->coopmat2.params.sub) {
        char cp[OG_PARAMS_MAX];
        og_params_format(&c->coopmat2.params, cp, sizeof cp);
        fprintf(f, ",\"coopmat2\":{\"extension\":\"VK_NV_cooperative_matrix2\",\"params\":\"%s\","
                   "\"chosen\":%s",
                cp, c->coopmat2.chosen ? "true" : "false");
        if (!c->coopmat2.chosen) {
            fputs(",\"reason\":", f);
            og_json_string(f, c->coopmat2.why);
        }
        fputc('}', f);
    }
    fputs("}", f);
}

void og_cli_print_choice_table(og_context *ctx, const og_cli *o, const og_dtype *dtypes, size_t nd,
                               int recovered, const og_shape *shapes, size_t ns)
{
    if (!o->json)
        /* The kernel last: its parameter text has no fixed width. */
        printf("\n%-5s %-22s %-8s %13s  %s\n", "dtype", "shape (MxNxKxbatch)", "source",
               og_dtype_is_int8(dtypes[0]) ? "tuned GOP/s" : "tuned GFLOP/s", "kernel");
    else
        printf("{\"chosen\":[");
    for (size_t d = 0; d < nd; d++)
        for (size_t i = 0; i < ns; i++) {
            og_choice c;
            const og_shape *s = &shapes[i];
            if (og_cli_select(ctx, dtypes[d], OG_MODE_FAST, o->trans_a, o->trans_b, recovered, s,
                              &c) != OG_OK)
                continue;
            if (o->json) {
                if (d + i > 0)
                    putchar(',');
                print_choice_json(stdout, ctx, dtypes[d], OG_MODE_FAST, o->trans_a, o->trans_b,
                                  recovered, s, &c);
                continue;
            }
            char shape[64], params[OG_PARAMS_MAX + 16];
            og_params_format(&c.params, params, sizeof params);
            snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld", (long long)s->m, (long long)s->n,
                     (long long)s->k, (long long)s->batch);
            printf("%-5s %-22s %-8s %13.2f  %s\n", recovered ? "f32r" : og_dtype_name(dtypes[d]),
                   shape, c.source == OG_SOURCE_DB_NEAREST ? "nearest" : source_name(c.source),
                   c.gflops, params);
        }
    if (o->json)
        printf("]}\n");
}

int og_cmd_select(const og_cli *o)
{
    og_shape *shapes = NULL;
    size_t ns = 0, nd;
    og_dtype dtypes[3];
    if (og_cli_conv(o)) {
        og_mode mode = o->mode && strcmp(o->mode, "deterministic") == 0 ? OG_MODE_DETERMINISTIC
                                                                         : OG_MODE_FAST;
        if (og_cli_dtypes(o, dtypes, &nd) != 0 || nd != 1) {
            og_cli_fail("ogtune select: takes one --dtype\n");
            return 2;
        }
        return og_cmd_select_conv(o, dtypes[0], mode);
    }
    if (og_cli_qgemm(o)) {
        og_mode mode = o->mode && strcmp(o->mode, "deterministic") == 0 ? OG_MODE_DETERMINISTIC
                                                                         : OG_MODE_FAST;
        if (og_cli_dtypes(o, dtypes, &nd) != 0 || nd != 1) {
            og_cli_fail("ogtune select: takes one --dtype\n");
            return 2;
        }
        return og_cmd_select_qgemm(o, dtypes[0], mode);
    }
    if (!o->shapes || og_parse_shapes(o->shapes, &shapes, &ns) != 0 || ns != 1) {
        og_cli_fail(
            "ogtune select: --shape takes one MxNxK[xBATCH] of numbers below 2^32 (got %s)\n",
            o->shapes ? o->shapes : "none");
        free(shapes);
        return 2;
    }
    og_mode mode =
        o->mode && strcmp(o->mode, "deterministic") == 0 ? OG_MODE_DETERMINISTIC : OG_MODE_FAST;
    if (og_cli_dtypes(o, dtypes, &nd) != 0 || nd != 1 ||
        (o->mode && mode == OG_MODE_FAST && strcmp(o->mode, "fast") != 0)) {
        if (nd > 1 || o->mode)
            og_cli_fail("ogtune select: takes one --dtype and --mode fast|deterministic\n");
        free(shapes);
        return 2;
    }
    int recovered = og_cli_recovered(o, "select", dtypes, nd);
    if (recovered < 0) {
        free(shapes);
        return 2;
    }
    og_context *ctx = og_cli_context(o);
    og_choice c;
    int rc = 1;
    if (ctx && og_cli_select(ctx, dtypes[0], mode, o->trans_a, o->trans_b, recovered, &shapes[0],
                             &c) == OG_OK) {
        if (o->json) {
            print_choice_json(stdout, ctx, dtypes[0], mode, o->trans_a, o->trans_b, recovered,
                              &shapes[0], &c);
            putchar('\n');
        } else {
            char params[OG_PARAMS_MAX];
            uint32_t ranges = 1, range_len = 0;
            og_params_format(&c.params, params, sizeof params);
            if (og_family_can(&c.params, OG_FAMILY_SPLIT))
                og_split_ranges(c.params.split, shapes[0].m, shapes[0].n, shapes[0].k,
                                shapes[0].batch, OG_SCRATCH_BYTES / 4, &ranges, &range_len);
            /* A record of another driver build is announced once, by the
             * selection's warning on standard error. */
            printf("%s%s %s (%s%s)", recovered ? "recovered float32: " : "",
                   og_params_template(&c.params), params, source_name(c.source),
                   c.source == OG_SOURCE_DB_NEAREST ? ", nearest tuned shape" : "");
            if (ranges > 1)
                printf("; split-k: %u k ranges of %u", ranges, range_len);
            putchar('\n');
            /* The reasons matter for float16, the type the matrix kernels
             * take, and for recovered float32, which runs them on float16 parts. */
            for (int i = 0; (dtypes[0] == OG_F16 || recovered) && i < OG_MATRIX_VARIANTS; i++)
                if (!c.matrix[i].chosen)
                    printf("  not the %s %d-subgroup cooperative-matrix kernel: %s\n",
                           c.matrix[i].params.mat == OG_MATRIX_KHR ? "KHR" : "NV",
                           c.matrix[i].params.sgx * c.matrix[i].params.sgy, c.matrix[i].why);
            if (dtypes[0] == OG_F16 && !recovered && c.coopmat2.params.sub && !c.coopmat2.chosen)
                printf("  not the coopmat2 kernel (VK_NV_cooperative_matrix2): %s\n",
                       c.coopmat2.why);
        }
        rc = 0;
    }
    og_context_destroy(ctx);
    free(shapes);
    return rc;
}

/* One record of ogtune show. Stale: measured with another version of its
 * template, so never selected. */
static int show_record(void *user, const og_record *r, const char *device)
{
    int *first = user;
    int stale = og_record_stale(r);
    if (*first < 0) {
        printf("%s{\"device\":", *first == -1 ? "" : ",");
        og_json_string(stdout, device);
        printf(",\"op\":\"%s\",\"dtype\":\"%s\",\"mode\":\"%s\",\"trans_a\":%d,\"trans_b\":%d,"
               "\"shape\":[%lld,%lld,%lld,%lld],\"template\":\"%s\",\"template_hash\":\"%016llx\","
               "\"params\":\"%s\",\"median_us\":%.3f,\"gflops\":%.3f,\"samples\":%d,"
               "\"spread\":%.4g,\"memory\":\"%s\",\"max_error\":%.3g,\"accepted\":%s,"
               "\"reason\":",
               r->key.op, og_dtype_name(r->key.dtype),
               r->key.mode == OG_MODE_DETERMINISTIC ? "deterministic" : "fast", r->key.trans_a,
               r->key.trans_b, (long long)r->m, (long long)r->n, (long long)r->k,
               (long long)r->batch, r->template_name, (unsigned long long)r->template_hash,
               r->params, r->median_us, r->gflops, r->samples, r->spread, r->memory, r->max_error,
               r->accepted ? "true" : "false");
        og_json_string(stdout, r->reason);
        printf(",\"created\":%lld,\"stale\":%s,\"source\":", (long long)r->created,
               stale ? "true" : "false");
        og_json_string(stdout, r->source);
        putchar('}');
        *first = -2;
        return 0;
    }
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld", (long long)r->m, (long long)r->n,
             (long long)r->k, (long long)r->batch);
    char marks[32];
    snprintf(marks, sizeof marks, "%s%s%s", r->accepted ? "" : "rejected",
             !r->accepted && stale ? ", " : "", stale ? "stale" : "");
    /* Parameters padded to a column only when marks follow (no trailing blanks). */
    printf("%-4s %-4s %s%s %-20s %-*s%s%s\n", r->key.op, og_dtype_name(r->key.dtype),
           r->key.trans_a ? "T" : "N", r->key.trans_b ? "T" : "N", shape, marks[0] ? 70 : 0,
           r->params, marks[0] ? " " : "", marks);
    /* The timed calls: how many, how far apart, and in which memory (unknown
     * for records before schema version 4, whose spread is not known either). */
    char timing[96];
    if (r->memory[0])
        snprintf(timing, sizeof timing, "x%d, spread %.1f%%, %s", r->samples, 100 * r->spread,
                 r->memory);
    else
        snprintf(timing, sizeof timing, "x%d, memory unknown", r->samples);
    if (r->accepted)
        printf("%*s %.2f %s, %.1f us (%s), error %.2g, %s", 10, "", r->gflops,
               og_rate_unit(r->key.op), r->median_us, timing, r->max_error, device);
    else
        printf("%*s %s", 10, "", r->reason);
    if (r->source[0])
        printf(" (from %s)", r->source);
    putchar('\n');
    return 0;
}

int og_cmd_show(const og_cli *o)
{
    char path[1024], err[1024];
    og_db *db;
    og_cli_db_path(o, path, sizeof path);
    if (og_db_open(path, 0, &db, err, sizeof err) != OG_OK) {
        og_cli_fail("ogtune show: %s\n", err);
        return 1;
    }
    int state = o->json ? -1 : 0;
    if (o->json)
        printf("[");
    og_status st = og_db_each(db, show_record, &state, err, sizeof err);
    if (o->json)
        printf("]\n");
    else
        printf("database: %s\n", path);
    og_db_close(db);
    if (st != OG_OK)
        og_cli_fail("ogtune show: %s\n", err);
    return st == OG_OK ? 0 : 1;
}

/* Writes a module's binary words to standard output (--emit spv). */
static og_status write_words(const uint32_t *words, size_t count, char *err, size_t len)
{
    if (fwrite(words, sizeof *words, count, stdout) != count || fflush(stdout) != 0) {
        snprintf(err, len, "writing the module to standard output failed");
        return OG_ERROR_INVALID_ARGUMENT;
    }
    return OG_OK;
}

int og_cmd_gen(const og_cli *o)
{
    if (o->preset)
        return og_cmd_gen_space(o);
    og_kernel_key key = {.p = og_params_default(), .trans_a = o->trans_a, .trans_b = o->trans_b};
    char err[4096];
    og_dtype dtypes[3];
    size_t nd;
    const char *emit = o->emit ? o->emit : "glsl";
    int spv = strcmp(emit, "spv") == 0;
    int asm_out = strcmp(emit, "spirv") == 0, msl = strcmp(emit, "msl") == 0;
    int wgsl = strcmp(emit, "wgsl") == 0;
    if (!asm_out && !msl && !spv && !wgsl && strcmp(emit, "glsl") != 0 &&
        strcmp(emit, "hlsl") != 0) {
        og_cli_fail("ogtune gen: --emit takes glsl, hlsl, wgsl, spirv, spv or msl\n");
        return 2;
    }
    static const struct {
        const char *name;
        og_kernel kernel;
    } kernels[] = {{"gemm", OG_KERNEL_GEMM},   {"planes", OG_KERNEL_PLANES},
                   {"reduce", OG_KERNEL_REDUCE}, {"bias", OG_KERNEL_BIAS},
                   {"activate", OG_KERNEL_ACTIVATE}, {"scale", OG_KERNEL_SCALE}};
    size_t ki = 0;
    while (o->kernel && ki < sizeof kernels / sizeof kernels[0] &&
           strcmp(o->kernel, kernels[ki].name) != 0)
        ki++;
    if (ki == sizeof kernels / sizeof kernels[0]) {
        og_cli_fail("ogtune gen: --kernel takes gemm, planes, reduce, bias, activate or scale\n");
        return 2;
    }
    key.kernel = kernels[ki].kernel;
    if (o->conv) {
        static const char *const convs[] = {"nhwc,krsc", "nchw,krsc", "nhwc,kcrs", "nchw,kcrs"};
        for (int i = 0; i < 4 && !key.conv; i++)
            if (strcmp(o->conv, convs[i]) == 0)
                key.conv = OG_CONV_KEY(i % 2, i / 2);
        if (!key.conv) {
            og_cli_fail("ogtune gen: --conv takes the input layout and the weights' layout: "
                        "nhwc,krsc, nhwc,kcrs, nchw,krsc or nchw,kcrs\n");
            return 2;
        }
        /* The weights are B stored N x K (conv_gather.tmpl). */
        key.trans_b = 1;
    }
    if (o->matrix && strcmp(o->matrix, "nv") != 0 && strcmp(o->matrix, "khr") != 0) {
        og_cli_fail("ogtune gen: --matrix takes nv or khr\n");
        return 2;
    }
    if (og_cli_dtypes(o, dtypes, &nd) != 0 || nd != 1)
        return 2;
    key.dtype = dtypes[0];
    if (og_dtype_is_int8(key.dtype)) { /* --op int8gemm: int8 x int8 */
        key.dtype_b = OG_INT8;
        key.p = og_params_int8_tile();
    }
    key.dialect = wgsl ? OG_WGSL : strcmp(emit, "hlsl") == 0 ? OG_HLSL : OG_GLSL;
    if (o->params && og_params_parse(o->params, &key.p, err, sizeof err) != 0) {
        og_cli_fail("ogtune gen: %s\n", err);
        return 2;
    }
    if (o->matrix && !og_params_matrix(&key.p)) {
        og_cli_fail("ogtune gen: --matrix needs a cooperative-matrix kernel (--params "
                    "variant=coopmat,... or variant=int8coopmat,...)\n");
        return 2;
    }
    if (o->matrix)
        key.p.mat = strcmp(o->matrix, "khr") == 0 ? OG_MATRIX_KHR : OG_MATRIX_NV;
    if (og_cli_qgemm(o)) { /* the low-bit decode kernel for --weights (default mxfp4) */
        og_qweights_format f;
        if (og_cli_weights(o, "gen", &f) != 0)
            return 2;
        key.qformat = OG_QFORMAT_KEY((int)f.format, (int)f.scale, (int)f.zero);
        /* WGSL's decode kernel reads words (og_wgsl_check). */
        if (!o->params) {
            key.p = og_params_qdecode(1);
            if (wgsl)
                key.p.vec = 1;
        }
    }
    int khr = og_params_matrix(&key.p) && key.p.mat == OG_MATRIX_KHR;
    if (khr && msl) {
        og_cli_fail("ogtune gen: cooperative matrices have no MSL form\n");
        return 2;
    }
    char *src = NULL, *text = NULL, *printed = NULL;
    uint32_t *words = NULL;
    size_t count, printed_len = 0;
    og_status st = og_gen_source(&key, &src, err, sizeof err);
    /* The KHR form is the compiled NV module rewritten (og_build_kernel's
     * route), printed by ogtune. */
    if (st == OG_OK && (asm_out || msl || spv))
        st = og_compile(src, key.dialect, asm_out && !khr, &words, &count, err, sizeof err);
    if (st == OG_OK && khr && (asm_out || spv)) {
        uint32_t *nv = words;
        st = og_spirv_khr(nv, count, &words, &count, err, sizeof err);
        free(nv);
    }
    if (st == OG_OK && msl)
        st = og_export_msl(words, count, &text, err, sizeof err);
    if (st == OG_OK && khr && asm_out) {
        FILE *mem = open_memstream(&printed, &printed_len);
        if (!mem) {
            snprintf(err, sizeof err, "out of memory");
            st = OG_ERROR_OUT_OF_MEMORY;
        } else {
            og_spirv_print(mem, words, count);
            fclose(mem);
        }
    }
    if (st == OG_OK && spv) {
        st = write_words(words, count, err, sizeof err);
    } else if (st == OG_OK) {
        const char *out = msl ? text : printed ? printed : asm_out ? (const char *)words : src;
        if (o->json) {
            printf("{\"emit\":\"%s\",\"template\":\"%s\",\"text\":", emit,
                   og_kernel_template(&key));
            og_json_string(stdout, out);
            printf("}\n");
        } else {
            fputs(out, stdout);
        }
    }
    if (st != OG_OK)
        og_cli_fail("ogtune gen: %s\n", err);
    free(src);
    free(words);
    free(text);
    free(printed);
    return st == OG_OK ? 0 : 1;
}
