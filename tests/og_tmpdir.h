/* A temporary directory per test (Criterion suite .init/.fini), for tests
 * that write database files. */
#ifndef OG_TMPDIR_H
#define OG_TMPDIR_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char og_tmpdir[256];

static inline void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(og_tmpdir, sizeof og_tmpdir, "%s/og_test_XXXXXX", base != NULL ? base : "/tmp");
    cr_assert_not_null(mkdtemp(og_tmpdir), "mkdtemp failed");
}

/* Removes every file the test left (databases, -wal, -shm) and the directory. */
static inline void remove_tmpdir(void)
{
    DIR *dir = opendir(og_tmpdir);
    if (dir == NULL)
        return;
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", og_tmpdir, ent->d_name);
        unlink(path);
    }
    closedir(dir);
    rmdir(og_tmpdir);
}

/* out = the temporary directory / name. */
static inline void tmp_path(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", og_tmpdir, name);
}

#endif /* OG_TMPDIR_H */
