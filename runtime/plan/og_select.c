/* Kernel selection: exact tuned record, nearest tuned shape, or the default
 * (docs/reference-design.md, "Selection order"). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_plan.h"

/* The pre-tuned databases shipped with the library: every *.db of
 * og_pretuned_dir, in name order, each preceded by ':'; appended to buf of
 * size len. */
static void append_pretuned(char *buf, size_t len)
{
    char dir[4096];
    og_pretuned_dir(dir, sizeof dir);
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        size_t used = strlen(buf), name_len = strlen(names[i]->d_name);
        if (name_len > 3 && strcmp(names[i]->d_name + name_len - 3, ".db") == 0)
            snprintf(buf + used, len - used, ":%s/%s", dir, names[i]->d_name);
        free(names[i]);
    }
    if (n >= 0)
        free(names);
}

/* The databases to search, ':'-separated: the context's, else OG_TUNING_DB,
 * else the user's cache followed by the pre-tuned databases installed with
 * the library (*implicit set: a missing file there is no news). */
static char *search_path(const og_context *ctx, int *implicit)
{
    const char *env = getenv("OG_TUNING_DB");
    *implicit = 0;
    if (ctx->db_paths)
        return og_mem_strdup(&ctx->allocator, ctx->db_paths);
    if (env && *env)
        return og_mem_strdup(&ctx->allocator, env);
    *implicit = 1;
    char buf[8192];
    const char *cache = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (cache && *cache)
        snprintf(buf, sizeof buf, "%s/onegpu/tuning.db", cache);
    else
        snprintf(buf, sizeof buf, "%s/.cache/onegpu/tuning.db", home ? home : ".");
    append_pretuned(buf, sizeof buf);
    return og_mem_strdup(&ctx->allocator, buf);
}

/* Opens every database on the search path once; a missing, empty, corrupt
 * or newer-version file is skipped with a warning (none for a user cache
 * that was never tuned) and never fails a GEMM. */
static void load_databases(og_context *ctx)
{
    ctx->dbs_loaded = 1;
    int implicit;
    char *paths = search_path(ctx, &implicit);
    if (!paths)
        return;
    size_t n = 1;
    for (const char *s = paths; *s; s++)
        n += *s == ':';
    ctx->dbs = og_mem_alloc(&ctx->allocator, n * sizeof *ctx->dbs);
    char *save = NULL;
    for (char *path = strtok_r(paths, ":", &save); path && ctx->dbs;
         path = strtok_r(NULL, ":", &save)) {
        og_db *db;
        char err[1024];
        og_status st = og_db_open(path, 0, &db, err, sizeof err);
        if (st != OG_OK) {
            if (!(implicit && st == OG_ERROR_NOT_FOUND))
                fprintf(stderr, "onegpu: warning: %s; using the built-in defaults\n", err);
            continue;
        }
        ctx->dbs[ctx->n_dbs].db = db;
        snprintf(ctx->dbs[ctx->n_dbs++].path, sizeof ctx->dbs[0].path, "%s", path);
    }
    og_mem_free(&ctx->allocator, paths);
}

/* The best record for key and the template of out->params: exact shape,
 * else the nearest tuned shape; out keeps its default when none is usable.
 * recover: the residual shift of recovered float32 records (each must run
 * recovered, og_params_recover_check), 0 for native ones. */
static void search_databases(og_context *ctx, const og_record_key *key, int recover, int64_t m,
                             int64_t n, int64_t k, int64_t batch, og_choice *out)
{
    const char *template_name = og_params_template(&out->params);
    if (!ctx->dbs_loaded)
        load_databases(ctx);
    uint64_t hash = og_template_hash(template_name);
    int have_nearest = 0;
    for (size_t i = 0; i < ctx->n_dbs; i++) {
        og_record rec;
        og_device_info rec_dev;
        int found = 0, other_driver = 0;
        char err[1024];
        if (og_db_select(ctx->dbs[i].db, &ctx->info, key, template_name, hash, m, n, k, batch, &rec,
                         &rec_dev, &found, &other_driver, err, sizeof err) != OG_OK) {
            fprintf(stderr, "onegpu: warning: %s; using the built-in defaults\n", err);
            continue;
        }
        if (found == 0 || (found == 2 && have_nearest))
            continue;
        og_params p;
        int usable = og_params_parse(rec.params, &p, err, sizeof err) == 0 &&
                     og_params_check(&p, &ctx->limits, err, sizeof err) == 0;
        /* A record must name the variant the shape runs: a hostile or
         * hand-edited database cannot swap the kernel family. */
        if (usable && og_family_of(&p) != og_family_of(&out->params)) {
            snprintf(err, sizeof err, "not the variant of template %s", template_name);
            usable = 0;
        }
        if (usable && og_params_matrix(&p) && p.mat == OG_MATRIX_EMU) {
            snprintf(err, sizeof err, "mat=emu is the tests' emulation, never selected");
            usable = 0;
        }
        if (usable && recover)
            usable = og_params_recover_check(&p, &ctx->limits, ctx->dialect, recover, err,
                                             sizeof err) == 0;
        if (!usable) {
            fprintf(stderr, "onegpu: warning: tuning record '%s' is unusable here (%s)\n",
                    rec.params, err);
            continue;
        }
        /* Once per context: every shape of an application may select such records. */
        if (other_driver && !ctx->warned_other_driver) {
            ctx->warned_other_driver = 1;
            fprintf(stderr,
                    "onegpu: warning: using a tuning record of another driver build of %s"
                    " (measured on driver version %u, info '%s'; this is %u, '%s')\n",
                    ctx->info.name, rec_dev.driver_version,
                    rec_dev.driver_info[0] ? rec_dev.driver_info : "unknown",
                    ctx->info.driver_version, ctx->info.driver_info);
        }
        out->params = p;
        out->source = found == 1 ? OG_SOURCE_DB : OG_SOURCE_DB_NEAREST;
        snprintf(out->op, sizeof out->op, "%s", key->op);
        out->m = rec.m;
        out->n = rec.n;
        out->k = rec.k;
        out->batch = rec.batch;
        out->gflops = rec.gflops;
        snprintf(out->db_path, sizeof out->db_path, "%s", ctx->dbs[i].path);
        out->driver_version = rec_dev.driver_version;
        snprintf(out->driver_info, sizeof out->driver_info, "%s", rec_dev.driver_info);
        snprintf(out->pipeline_cache_uuid, sizeof out->pipeline_cache_uuid, "%s",
                 rec_dev.pipeline_cache_uuid);
        out->other_driver = other_driver;
        if (found == 1)
            return;
        have_nearest = 1;
    }
}

/* Where matrix variant `matrix` is the default (out->params), records of it
 * and of the portable tile (tile->params) compete: an exact match before a
 * nearest one, then the higher GFLOP/s; the winner is left in out, whose
 * notes say why the matrix variant lost. */
static void search_competing(og_context *ctx, const og_record_key *key, int recover, int64_t m,
                             int64_t n, int64_t k, int64_t batch, int matrix, og_choice *tile,
                             og_choice *out)
{
    search_databases(ctx, key, recover, m, n, k, batch, out);
    search_databases(ctx, key, recover, m, n, k, batch, tile);
    int tile_found = tile->source != OG_SOURCE_DEFAULT;
    int better = out->source == OG_SOURCE_DEFAULT ||
                 (tile->source == OG_SOURCE_DB && out->source == OG_SOURCE_DB_NEAREST) ||
                 (tile->source == out->source && tile->gflops > out->gflops);
    if (tile_found && better) {
        og_matrix_note notes[OG_MATRIX_VARIANTS];
        memcpy(notes, out->matrix, sizeof notes);
        *out = *tile;
        memcpy(out->matrix, notes, sizeof notes);
        out->matrix[matrix].chosen = 0;
        snprintf(out->matrix[matrix].why, sizeof out->matrix[matrix].why,
                 "a tuned portable tile measured faster here");
    }
}

/* A decode kernel's record of another M (the nearest tuned shape) keeps its
 * columns, slices and loads, but its rows follow this M: fewer would read
 * the weights once more per tile of rows. */
static void rows_follow_m(const og_context *ctx, int64_t m, int rows, og_choice *out)
{
    og_params p = out->params;
    p.rows = rows;
    char why[256];
    if (out->source == OG_SOURCE_DB_NEAREST && out->m != m &&
        og_params_check(&p, &ctx->limits, why, sizeof why) == 0)
        out->params = p;
}

/* Whether one dense matrix of A or B of the shape already passes
 * maxStorageBufferRange: then no call of it can run the decode kernel,
 * which reads through bindings only (og_gemm_bindings_reach gives way to
 * the tile for the calls whose layout passes it otherwise). */
static int dense_past_binding(const og_limits *lim, og_dtype t, int64_t m, int64_t n, int64_t k)
{
    uint64_t e = og_dtype_bytes(t);
    return (uint64_t)m * (uint64_t)k * e > lim->max_storage_range ||
           (uint64_t)n * (uint64_t)k * e > lim->max_storage_range;
}

/* Why a matrix kernel stands aside for a decode-shaped product. */
#define DECODE_WHY "a decode-shaped product (M <= 16 rows) runs the decode kernel"

/* The coopmat2 note once the choice is made: chosen where a record of it
 * won, else why not (the decode kernel's and HLSL's reasons before the
 * family's own). */
static void coopmat2_outcome(og_context *ctx, int decode, og_choice *out)
{
    og_matrix_note *n = &out->coopmat2;
    n->chosen = og_family_of(&out->params) == og_family_of(&n->params);
    if (n->chosen)
        n->why[0] = '\0';
    else if (decode || ctx->dialect != OG_GLSL)
        snprintf(n->why, sizeof n->why, "%s",
                 decode ? DECODE_WHY
                        : "this context generates HLSL; the coopmat2 kernel is GLSL only");
}

/* og_select, and the convolution's implicit GEMM (decode 0: a convolution
 * never runs the decode kernel, so its float16 products keep the matrix
 * tile where the device has one). */
static og_status select_gemm(og_context *ctx, og_dtype dtype, og_mode mode, int trans_a,
                             int trans_b, int64_t m, int64_t n, int64_t k, int64_t batch,
                             int decode, og_choice *out)
{
    memset(out, 0, sizeof *out);
    /* Few rows and the decode kernel are chosen from the shape; the
     * database may only tune their shapes. */
    int fewrows = og_fewrows_eligible(dtype, m, trans_a);
    decode = decode && og_decode_eligible(dtype, m, trans_a, ctx->dialect) &&
             !dense_past_binding(&ctx->limits, dtype, m, n, k);
    int matrix = og_matrix_choose(&ctx->limits, dtype, mode, out->matrix);
    og_coopmat2_note(&ctx->limits, dtype, mode, &out->coopmat2);
    if (matrix >= 0 && (ctx->dialect != OG_GLSL || decode)) {
        /* The tests' HLSL contexts: the matrix kernel is GLSL only. A
         * decode-shaped product streams B: a matrix tile would compute
         * rows it does not have. */
        out->matrix[matrix].chosen = 0;
        snprintf(out->matrix[matrix].why, sizeof out->matrix[matrix].why, "%s",
                 decode ? DECODE_WHY
                        : "this context generates HLSL; the cooperative-matrix kernel is GLSL only");
        matrix = -1;
    }
    out->params = decode    ? og_params_decode(m, trans_b)
                  : fewrows ? og_params_fewrows(trans_b, n)
                            : og_params_default();
    out->source = OG_SOURCE_DEFAULT;
    /* Invariant 1: Deterministic mode never depends on the database. */
    if (mode == OG_MODE_DETERMINISTIC)
        return OG_OK;
    og_record_key key = {.dtype = dtype, .mode = mode, .trans_a = trans_a, .trans_b = trans_b};
    snprintf(key.op, sizeof key.op, "gemm");
    if (matrix < 0) {
        search_databases(ctx, &key, 0, m, n, k, batch, out);
        if (decode)
            rows_follow_m(ctx, m, og_params_decode(m, trans_b).rows, out);
    } else {
        og_choice tile = *out;
        out->params = out->matrix[matrix].params;
        search_competing(ctx, &key, 0, m, n, k, batch, matrix, &tile, out);
    }
    coopmat2_outcome(ctx, decode, out);
    return OG_OK;
}

og_status og_select(og_context *ctx, og_dtype dtype, og_mode mode, int trans_a, int trans_b,
                    int64_t m, int64_t n, int64_t k, int64_t batch, og_choice *out)
{
    return select_gemm(ctx, dtype, mode, trans_a, trans_b, m, n, k, batch, 1, out);
}

og_status og_select_conv(og_context *ctx, og_dtype dtype, og_mode mode, const og_conv_args *args,
                         const og_conv_shape *s, og_choice *out)
{
    memset(out, 0, sizeof *out);
    int depthwise = og_conv_depthwise_eligible(s);
    out->params = depthwise ? og_params_depthwise() : og_params_default();
    out->source = OG_SOURCE_DEFAULT;
    if (mode == OG_MODE_DETERMINISTIC)
        return OG_OK;
    og_record_key key = {.dtype = dtype,
                         .mode = mode,
                         .trans_a = args->layout == OG_CONV_NCHW,
                         .trans_b = args->weights == OG_CONV_KCRS};
    og_conv_op(args, key.op, sizeof key.op);
    /* Records of the default's template only: a depthwise record never
     * reaches a dense layer, nor a tile's a depthwise one. */
    search_databases(ctx, &key, 0, s->m, s->n, s->k, s->batch, out);
    if (out->source != OG_SOURCE_DEFAULT || depthwise)
        return OG_OK;
    /* The implicit GEMM's choice: its tile, or its cooperative-matrix tile
     * (float16 in Fast mode, where the device lists the fragments). */
    og_status st = select_gemm(ctx, dtype, mode, 0, 1, s->m, s->n, s->k, s->batch, 0, out);
    if (st == OG_OK && !og_family_can(&out->params, OG_FAMILY_CONV)) {
        memset(out, 0, sizeof *out);
        out->params = og_params_default();
        out->source = OG_SOURCE_DEFAULT;
    }
    return st;
}

og_status og_select_recovered(og_context *ctx, og_mode mode, int trans_a, int trans_b, int64_t m,
                              int64_t n, int64_t k, int64_t batch, og_choice *out)
{
    memset(out, 0, sizeof *out);
    out->params = og_params_recovered(&ctx->limits, ctx->dialect, mode);
    out->source = OG_SOURCE_DEFAULT;
    /* The notes: whether float16 matrices qualify, and whether recovered runs them. */
    int matrix = og_matrix_choose(&ctx->limits, OG_F16, mode, out->matrix);
    if (matrix >= 0 && memcmp(&out->matrix[matrix].params, &out->params, sizeof out->params) != 0) {
        out->matrix[matrix].chosen = 0;
        snprintf(out->matrix[matrix].why, sizeof out->matrix[matrix].why,
                 "recovered float32 runs %s here (HLSL, or no workgroup memory for the "
                 "residual tiles)",
                 og_params_template(&out->params));
        matrix = -1;
    }
    /* Invariant 1: Deterministic mode never depends on the database. */
    if (mode == OG_MODE_DETERMINISTIC)
        return OG_OK;
    og_record_key key = {.dtype = OG_F32, .mode = mode, .trans_a = trans_a, .trans_b = trans_b};
    snprintf(key.op, sizeof key.op, OG_OP_GEMM_RECOVERED);
    if (matrix < 0) {
        search_databases(ctx, &key, OG_RECOVER_SHIFT, m, n, k, batch, out);
        return OG_OK;
    }
    og_choice tile = *out;
    tile.params = og_params_recovered_tile();
    search_competing(ctx, &key, OG_RECOVER_SHIFT, m, n, k, batch, matrix, &tile, out);
    return OG_OK;
}

og_status og_select_int8(og_context *ctx, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                         int64_t batch, og_choice *out)
{
    memset(out, 0, sizeof *out);
    int skinny = og_int8_skinny_eligible(m, trans_b);
    out->params = skinny ? og_params_int8_skinny() : og_params_int8_tile();
    out->source = OG_SOURCE_DEFAULT;
    int matrix = og_matrix_int8_choose(&ctx->limits, ctx->dialect, out->matrix);
    if (matrix >= 0 && skinny) {
        out->matrix[matrix].chosen = 0;
        snprintf(out->matrix[matrix].why, sizeof out->matrix[matrix].why,
                 "M <= 16 with B not transposed takes the skinny kernel");
        matrix = -1;
    }
    /* One record serves every signedness: the kernels differ only in how a byte widens. */
    og_record_key key = {
        .dtype = OG_INT8, .mode = OG_MODE_FAST, .trans_a = trans_a, .trans_b = trans_b};
    snprintf(key.op, sizeof key.op, "int8gemm");
    if (matrix < 0) {
        search_databases(ctx, &key, 0, m, n, k, batch, out);
        return OG_OK;
    }
    og_choice tile = *out;
    out->params = out->matrix[matrix].params;
    search_competing(ctx, &key, 0, m, n, k, batch, matrix, &tile, out);
    return OG_OK;
}

og_status og_select_qgemm(og_context *ctx, og_dtype dtype, const og_qweights_format *f,
                          og_mode mode, int64_t m, int64_t n, int64_t k, int64_t batch,
                          og_choice *out)
{
    memset(out, 0, sizeof *out);
    out->params = og_qgemm_default(m);
    out->source = OG_SOURCE_DEFAULT;
    if (mode == OG_MODE_DETERMINISTIC)
        return OG_OK;
    og_record_key key = {.dtype = dtype, .mode = mode, .trans_a = 0, .trans_b = 1};
    og_qgemm_op(f, key.op, sizeof key.op);
    search_databases(ctx, &key, 0, m, n, k, batch, out);
    if (m > 16) {
        /* Above 16 rows the decode kernel over tiles of 16 rows (a CPU
         * driver runs it faster, a GPU rarely) and, on matrix hardware, the
         * recovered cooperative-matrix tile compete with the prefill tile:
         * an exact record before a nearest one, then the higher rate. */
        og_params others[2] = {og_params_qdecode(m), og_params_recovered(&ctx->limits, OG_GLSL, mode)};
        for (int i = 0; i < 2; i++) {
            if (i == 1 && !og_params_matrix(&others[i]))
                continue;
            og_choice other = *out;
            other.params = others[i];
            other.source = OG_SOURCE_DEFAULT;
            search_databases(ctx, &key, i == 1 ? OG_RECOVER_SHIFT : 0, m, n, k, batch, &other);
            int found = other.source != OG_SOURCE_DEFAULT;
            if (found && (out->source == OG_SOURCE_DEFAULT ||
                          (other.source == OG_SOURCE_DB && out->source == OG_SOURCE_DB_NEAREST) ||
                          (other.source == out->source && other.gflops > out->gflops)))
                *out = other;
        }
    }
    /* The prefill decodes one weight at a time: a tile record (say, one
     * edited by hand) runs with element loads from storage, unsplit. */
    if (og_family_can(&out->params, OG_FAMILY_PREFILL) && !og_params_matrix(&out->params)) {
        out->params.vec = 1;
        out->params.src = OG_SRC_STORAGE;
        out->params.split = 1;
    }
    if (og_family_can(&out->params, OG_FAMILY_WEIGHTS))
        rows_follow_m(ctx, m, og_params_qdecode(m).rows, out);
    return OG_OK;
}
