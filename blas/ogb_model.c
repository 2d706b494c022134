/* The cost model and its file (ogb_model.h). */
#include "ogb_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ogb_env.h"

void ogb_model_predict(const ogb_model *m, const ogb_call *c, double *t_gpu, double *t_cpu)
{
    double flops = 2.0 * c->m * (double)c->n * c->k;
    double elems = (double)ogb_span(ogb_a_rows(c), ogb_a_cols(c), c->lda) +
                   (double)ogb_span(ogb_b_rows(c), ogb_b_cols(c), c->ldb) +
                   (double)c->m * c->n * (c->beta != 0.0f ? 2 : 1);
    *t_gpu = m->fixed_s + 4.0 * elems / m->transfer_bytes_per_s + flops / m->gpu_flops_per_s;
    *t_cpu = flops / m->cpu_flops_per_s;
}

void ogb_model_path(char *out, size_t len)
{
    const char *model = ogb_env_get()->model, *db = getenv("OG_TUNING_DB");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    out[0] = '\0';
    if (model)
        snprintf(out, len, "%s", model);
    else if (db && *db) {
        int dir = (int)strcspn(db, ":"); /* the first database's directory */
        while (dir > 0 && db[dir - 1] != '/')
            dir--;
        snprintf(out, len, "%.*sblas-model.txt", dir, db);
    } else if (xdg && *xdg)
        snprintf(out, len, "%s/onegpu/blas-model.txt", xdg);
    else if (home && *home)
        snprintf(out, len, "%s/.cache/onegpu/blas-model.txt", home);
}

/* Copies the rest of a "key value" line (without its newline). */
static void text_value(const char *v, char *out, size_t len)
{
    snprintf(out, len, "%.*s", (int)strcspn(v, "\n"), v);
}

int ogb_model_read(const char *path, ogb_model *m)
{
    FILE *f = *path ? fopen(path, "r") : NULL;
    if (!f)
        return -1;
    char line[1024];
    int seen = 0;
    *m = (ogb_model){0};
    while (fgets(line, sizeof line, f)) {
        char *v = strchr(line, ' ');
        if (line[0] == '#' || !v)
            continue;
        *v++ = '\0';
        if (!strcmp(line, "device"))
            text_value(v, m->device, sizeof m->device), seen |= 1;
        else if (!strcmp(line, "cpu_blas"))
            text_value(v, m->cpu_blas, sizeof m->cpu_blas), seen |= 2;
        else if (!strcmp(line, "fixed_s"))
            m->fixed_s = strtod(v, NULL), seen |= 4;
        else if (!strcmp(line, "transfer_bytes_per_s"))
            m->transfer_bytes_per_s = strtod(v, NULL), seen |= 8;
        else if (!strcmp(line, "gpu_flops_per_s"))
            m->gpu_flops_per_s = strtod(v, NULL), seen |= 16;
        else if (!strcmp(line, "cpu_flops_per_s"))
            m->cpu_flops_per_s = strtod(v, NULL), seen |= 32;
    }
    fclose(f);
    int positive = m->fixed_s >= 0 && m->transfer_bytes_per_s > 0 && m->gpu_flops_per_s > 0 && m->cpu_flops_per_s > 0;
    return seen == 63 && positive ? 0 : -1;
}

/* mkdir -p of the directory part of path. */
static void make_dirs(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(dir, 0755) != 0 && errno != EEXIST)
                return;
            *p = '/';
        }
}

int ogb_model_write(const char *path, const ogb_model *m)
{
    char tmp[1100];
    if (!*path)
        return -1;
    make_dirs(path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f,
            "# onegpu drop-in BLAS cost model, measured by libonegpu_blas on its first call\n"
            "# (docs/blas.md); delete this file to measure again.\n"
            "device %s\ncpu_blas %s\nfixed_s %.6g\ntransfer_bytes_per_s %.6g\n"
            "gpu_flops_per_s %.6g\ncpu_flops_per_s %.6g\n",
            m->device, m->cpu_blas, m->fixed_s, m->transfer_bytes_per_s, m->gpu_flops_per_s, m->cpu_flops_per_s);
    int bad = ferror(f);
    bad |= fclose(f);
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
