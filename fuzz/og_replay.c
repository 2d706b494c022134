/*
 * Replays a fuzz target's corpus in the normal build (no libFuzzer): every
 * file of each directory given, in name order, goes through the target's
 * LLVMFuzzerTestOneInput, which aborts when a property fails. Prints how
 * many inputs ran, and fails when a directory holds none (a corpus that
 * went missing must not pass).
 *
 *     replay_<target> DIR...
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_fuzz.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the whole of path into a fresh buffer; NULL on failure. */
static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    uint8_t *data = NULL;
    size_t len = 0, cap = 0;
    int bad = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            uint8_t *grown = realloc(data, cap);
            if (grown == NULL) {
                bad = 1;
                break;
            }
            data = grown;
        }
        size_t got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    bad |= ferror(f);
    fclose(f);
    if (bad) {
        free(data);
        return NULL;
    }
    *size = len;
    return data;
}

/* Runs every file of dir through the target; returns how many, or -1. */
static long replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (grown == NULL)
                abort();
            names = grown;
        }
        if ((names[n++] = strdup(e->d_name)) == NULL)
            abort();
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, by_name);
    long ran = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t size = 0;
        uint8_t *data = read_file(path, &size);
        if (data == NULL) {
            fprintf(stderr, "replay: cannot read %s\n", path);
            ran = -1;
        } else if (ran >= 0) {
            LLVMFuzzerTestOneInput(data, size);
            ran++;
        }
        free(data);
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR...\n", argv[0]);
        return 2;
    }
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        long ran = replay_dir(argv[i]);
        printf("replay: %ld inputs of %s\n", ran < 0 ? 0 : ran, argv[i]);
        failed |= ran <= 0;
    }
    return failed;
}
