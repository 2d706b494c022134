/* The fuzz targets' shared helpers (og_fuzz.h). */
#include "og_fuzz.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void og_fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    fprintf(stderr, "%s:%d: property failed: %s: ", file, line, cond);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

uint64_t og_fuzz_bits(og_fuzz_input *in, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes && i < 8; i++) {
        uint64_t b = 0;
        if (in->n > 0) {
            b = *in->p++;
            in->n--;
        }
        v |= b << (8 * i);
    }
    return v;
}

int64_t og_fuzz_value(og_fuzz_input *in)
{
    static const int64_t edges[] = {
        0, 1, -1, INT32_MAX, UINT32_MAX, (int64_t)1 << 32, INT64_MAX, INT64_MIN};
    unsigned c = (unsigned)og_fuzz_bits(in, 1);
    switch (c % 8) {
    case 0:
    case 1:
    case 2:
        return (int64_t)og_fuzz_bits(in, 1); /* small values, the most useful */
    case 3:
        return (int64_t)og_fuzz_bits(in, 2);
    case 4:
        return (int64_t)og_fuzz_bits(in, 3);
    case 5:
        return (int64_t)og_fuzz_bits(in, 4);
    case 6:
        return (int64_t)og_fuzz_bits(in, 8);
    default:
        return edges[(c / 8) % 8];
    }
}

float og_fuzz_float(og_fuzz_input *in)
{
    static const float values[] = {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, NAN, INFINITY};
    unsigned c = (unsigned)og_fuzz_bits(in, 1) % 8;
    if (c < 7)
        return values[c];
    uint32_t bits = (uint32_t)og_fuzz_bits(in, 4);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static char scratch_dir[256];

/* Removes the scratch directory and what lies in it (atexit). */
static void remove_scratch(void)
{
    DIR *d = opendir(scratch_dir);
    if (d != NULL) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", scratch_dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(scratch_dir);
}

const char *og_fuzz_dir(void)
{
    if (scratch_dir[0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(scratch_dir, sizeof scratch_dir, "%s/og-fuzz-XXXXXX",
                 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
        if (mkdtemp(scratch_dir) == NULL)
            og_fuzz_fail(__FILE__, __LINE__, "mkdtemp", "cannot make %s", scratch_dir);
        atexit(remove_scratch);
    }
    return scratch_dir;
}

void og_fuzz_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", og_fuzz_dir(), name);
}

void og_fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || (size > 0 && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        og_fuzz_fail(__FILE__, __LINE__, "write", "cannot write %s", path);
}

void og_fuzz_remove_db(const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char name[600];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(name, sizeof name, "%s%s", path, suffixes[i]);
        unlink(name);
    }
}
